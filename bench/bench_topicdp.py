"""TopicDP vs the Laplace and MVG baselines on Reuters C50 with authors as users
(papers/wang2022 Figs. 3-8): L1, RMSE and Kendall tau distance of the released m x n
keyword block against the non-private one, as functions of epsilon, gamma and m = n.

One model is fitted on the data; the sensitivity is sampled once for every block size from
h(gamma_min) refits on the data minus one random author (the refits are i.i.d., so the
first h(gamma) of them are a valid sample for every larger gamma); each mechanism's noise is
then drawn ``--draws`` times per setting (the metrics are averaged). "TopicDP (paper)" is the
paper's calibration ((alpha = 2, eps_R) conversion); "TopicDP (default, tight)" the same Gaussian
mechanism calibrated with the full RDP curve (same (epsilon, delta), less noise). The figures use
the paper's setting, sensitivity sampled on the private data (``sensitivity="sample-private"``:
not DP, reproduction only); "TopicDP (reference)" rows use the default, Delta_s sampled on a
public reference corpus (here the C50 test split, disjoint articles by the same authors). The
timing table compares TopicDP.fit (h + 1 model fits, in parallel) with one plain fit.

    python bench/bench_topicdp.py [--quick] [--n-jobs 2]
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import Case, add_ratios, data_path, parser, report, run_cases  # noqa: E402

from dptm.datasets import load_reuters_c50  # noqa: E402
from dptm.metrics import aligned_l1, aligned_rmse, kendall_tau_distance  # noqa: E402
from dptm.models.topicdp import (TopicDP, block_distance, gaussian_sigma, keyword_block,  # noqa: E402
                                laplace_scale, mvg_sigma, sample_sensitivities,
                                sensitivity_sample_size, topic_weights, topic_word_matrix)


class MultiBlockDistance:
    """Distances of the keyword blocks of several sizes at once (picklable)."""

    def __init__(self, blocks):
        self.blocks = blocks

    def __call__(self, ref, W):
        return np.array([block_distance(ref, t, ids, W) for t, ids in self.blocks])


def _metrics(values, noisy):
    return (aligned_l1(values, noisy, align=False), aligned_rmse(values, noisy, align=False),
            kendall_tau_distance(values, noisy, top_n=values.shape[1], align=False)
            if values.shape[1] >= 2 else 0.0)


def _release(values, mech, eps, delta, sens, rng):
    m, n = values.shape
    if mech == "Laplace (2m)":
        noise = rng.laplace(0.0, laplace_scale(m, eps), size=values.shape)
    elif mech == "MVG":
        noise = rng.normal(0.0, mvg_sigma((m, n), sens, eps, delta), size=values.shape)
    elif mech in ("TopicDP (default, tight)", "TopicDP (reference)"):
        noise = rng.normal(0.0, gaussian_sigma(sens, eps, delta, "gaussian")[0], size=values.shape)
    else:
        noise = rng.normal(0.0, gaussian_sigma(sens, eps, delta, "renyi")[0], size=values.shape)
    return np.maximum(values + noise, 0.0)


def main():
    p = parser(__doc__)
    p.add_argument("--n-jobs", type=int, default=2)
    p.add_argument("--draws", type=int, default=20)
    args = p.parse_args()
    from sklearn.decomposition import NMF
    from sklearn.feature_extraction.text import CountVectorizer

    texts, authors = load_reuters_c50(data_path("reuters_c50", "C50.tar.gz"), subset="train")
    ref_texts, ref_authors = load_reuters_c50(data_path("reuters_c50", "C50.tar.gz"), subset="test")
    n_feat = 500 if args.quick else 1000
    cv = CountVectorizer(max_features=n_feat, stop_words="english", min_df=5)
    X = cv.fit_transform(texts)
    X_ref = cv.transform(ref_texts)
    K = 10
    est = NMF(K, init="nndsvda", max_iter=60 if args.quick else 100)
    gammas = [0.3, 0.4, 0.5] if args.quick else [0.2, 0.25, 0.3, 0.4]
    epsilons = [1, 3, 5, 10] if args.quick else [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    sizes = [2, 5, 10] if args.quick else list(range(2, 11))
    delta, gamma0, eps0 = 1e-4, 0.3 if args.quick else 0.2, 3.0
    print(f"C50 train: {X.shape[0]} articles, {len(set(authors))} authors, V={X.shape[1]}; "
          f"NMF K={K}; delta={delta}", flush=True)

    # ---- timing: TopicDP.fit vs one plain fit (same data, same run)
    cases = [
        Case("fit", "NMF alone", lambda: est.fit(X) and None, work=X.shape[0], unit="docs"),
        Case("fit", f"TopicDP gamma={gammas[-1]} (paper: sample-private)",
             lambda: {"h": TopicDP(est, target_epsilon=3.0, gamma=gammas[-1], output="keywords",
                                   sensitivity="sample-private", n_jobs=args.n_jobs, verbose=0).fit(
                 X, groups=authors).n_samples_}, work=X.shape[0], unit="docs"),
        Case("fit", f"TopicDP gamma={gammas[-1]} (reference_X)",
             lambda: {"h": TopicDP(est, target_epsilon=3.0, gamma=gammas[-1], output="keywords",
                                   reference_X=X_ref, reference_groups=ref_authors,
                                   n_jobs=args.n_jobs, verbose=0).fit(
                 X, groups=authors).n_samples_}, work=X.shape[0], unit="docs"),
    ]
    rows_t = add_ratios(run_cases(cases, repeats=1 if args.quick else args.repeats), "NMF alone")

    # ---- one fit, one pool of sensitivity samples for every block size
    t0 = time.perf_counter()
    W = topic_word_matrix(est.set_params(random_state=0).fit(X))
    weights = topic_weights(est)
    blocks = [keyword_block(W, weights, s, s) for s in sizes]
    h_pool = max(sensitivity_sample_size(g)[0] for g in gammas)
    d, _ = sample_sensitivities(est, X, W, h_pool, groups=authors,
                                distance=MultiBlockDistance([(t, i) for t, i, _ in blocks]),
                                random_state=1, n_jobs=args.n_jobs)
    # the default: the same sampling on the public reference corpus (its own fit and blocks)
    W_r = topic_word_matrix(est.set_params(random_state=0).fit(X_ref))
    blocks_r = [keyword_block(W_r, topic_weights(est), s, s) for s in sizes]
    d_ref, _ = sample_sensitivities(est, X_ref, W_r, h_pool, groups=ref_authors,
                                    distance=MultiBlockDistance([(t, i) for t, i, _ in blocks_r]),
                                    random_state=3, n_jobs=args.n_jobs)
    print(f"{h_pool} refits without one author (private + reference): "
          f"{time.perf_counter() - t0:.1f} s", flush=True)

    def sens(gamma, j, pool=d):
        h, k, _ = sensitivity_sample_size(gamma)
        return float(np.sort(pool[:h, j])[k - 1])

    rng = np.random.default_rng(2)
    mechs = ["TopicDP (paper)", "TopicDP (default, tight)", "TopicDP (reference)", "MVG",
             "Laplace (2m)"]
    rows = []

    def run(group, setting, eps, gamma, j):
        values = blocks[j][2]
        for mech in mechs:
            s = sens(gamma, j, d_ref if mech == "TopicDP (reference)" else d)
            m = np.array([_metrics(values, _release(values, mech, eps, delta, s, rng))
                          for _ in range(args.draws)]).mean(axis=0)
            rows.append({"group": group, "setting": setting, "mechanism": mech,
                         "Delta_s": s if mech != "Laplace (2m)" else 2.0 * values.shape[0],
                         "L1": m[0], "RMSE": m[1], "kendall": m[2]})

    j10 = sizes.index(10)
    for eps in epsilons:                                       # Fig. 3 / 7(a)
        run("vs epsilon (10x10)", f"eps={eps}", eps, gamma0, j10)
    for g in gammas:                                           # Fig. 4 / 7(b)
        run(f"vs gamma (eps={eps0:g})", f"gamma={g}", eps0, g, j10)
    for j, s in enumerate(sizes):                              # Figs. 5-6 / 7(c-d)
        run(f"vs size (eps={eps0:g})", f"{s}x{s}", eps0, gamma0, j)

    cols = [("group", ""), ("setting", ""), ("mechanism", ""), ("Delta_s", ".4g"), ("L1", ".4g"),
            ("RMSE", ".4g"), ("kendall", ".3f")]
    from _harness import format_table
    print("\n(the utility rows draw floating-point noise for speed; TopicDP itself draws the exact "
          "lattice Gaussian of the same sigma)")
    print("\ntiming (same run; speed < 1 means slower than one plain NMF fit):")
    print(format_table(rows_t, [("group", ""), ("name", ""), ("median_s", ".2f"),
                                ("speed_vs_NMF alone", ".4f")]))
    print()
    report("bench_topicdp", rows, cols,
           meta={"n_docs": X.shape[0], "V": X.shape[1], "K": K, "h_pool": int(h_pool),
                 "delta": delta, "draws": args.draws, "timing": rows_t})

if __name__ == "__main__":
    main()
