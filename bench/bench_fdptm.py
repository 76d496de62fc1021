"""Fully DP topic modeling on TweetRumors (papers/manzonelli2024 Sec. 4.4-4.5, Figs. 3-5, 8).

k = 5 topics, delta = 1e-5 per stage, alpha = 3 for DP set union (Carvalho et al. 2022,
``DPVocabulary(method="frequency_laplace")``, Delta_0 = 20 distinct words per tweet: every
tweet has at most 16). Model stage: VIPS (``PrivateOnlineLDA``, document-level, sound RDP
accounting, documents capped at 20 tokens), since dptm's Zhu et al. 2016 model
(``NoisyGibbsLDA(noise_schedule="last")``) is accounted at word level only.

1. Coherence and vocabulary size vs eps1 with non-private LDA (Fig. 3, Fig. 8).
2. Coherence vs eps1 at eps2 = 3 and vs eps2 at eps1 = 3 (Fig. 4).
3. Online LiRA (zeta statistic) TPR at 0.1% / 1% FPR against FDPTM for eps1 in {1, 5, 10}
   at eps2 = 5 and eps2 in {1, 5, 10} at eps1 = 5, with the non-private baseline
   (scikit-learn LDA, default parameters, full vocabulary) (Fig. 5). The target is trained
   on a random half; the attacker knows the released vocabulary and trains shadow models
   with the model stage (same parameters) on halves of the corpus encoded in it.
4. Timing: FDPTM.fit vs the same model stage alone and scikit-learn's LDA, same data.

    PYTHONPATH=. python bench/bench_fdptm.py [--quick] [--shadows 64] [--n-jobs 2]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import Case, add_ratios, data_path, format_table, parser, report, run_cases  # noqa: E402

from dptm.attacks import LiRA, tpr_at_fpr  # noqa: E402
from dptm.attacks.lira import audit  # noqa: E402
from dptm.datasets import load_json_texts  # noqa: E402
from dptm.metrics import umass_coherence  # noqa: E402
from dptm.models.svi import PrivateOnlineLDA  # noqa: E402
from dptm.pipeline import FullyPrivateTopicModel  # noqa: E402
from dptm.text import tokens_to_matrix  # noqa: E402
from dptm.vocab import DPVocabulary  # noqa: E402

K, DELTA, ALPHA, D0, NCAP = 5, 1e-5, 3.0, 20, 20


def vocab(eps1):
    return DPVocabulary(eps1, DELTA, method="frequency_laplace", alpha=ALPHA, max_contribution=D0)


def model(eps2, max_iter, total_samples=None):
    """The model stage; ``total_samples``: the corpus' public size (a bound for any subset)."""
    if eps2 is None:
        from sklearn.decomposition import LatentDirichletAllocation
        return LatentDirichletAllocation(K)
    return PrivateOnlineLDA(K, max_doc_length=NCAP, target_epsilon=eps2, target_delta=DELTA,
                            max_iter=max_iter, total_samples=total_samples)


def fdptm_coherence(docs, eps1, eps2, seed, max_iter):
    """(coherence, vocabulary size) of one FDPTM run; eps2=None: non-private LDA stage."""
    v = vocab(eps1).fit(docs)                     # private stages: the secret generator
    X, _ = tokens_to_matrix(docs, vocabulary=v.vocabulary_)
    m = model(eps2, max_iter, len(docs))
    if eps2 is None:                               # the non-private baseline keeps its seed
        m.set_params(random_state=seed + 1)
    m = m.fit(X)
    tw = m.components_ / m.components_.sum(axis=1, keepdims=True)
    return umass_coherence(X, tw, top_n=10), v.vocabulary_.size


def main():
    p = parser(__doc__)
    p.add_argument("--shadows", type=int, default=None)
    p.add_argument("--n-jobs", type=int, default=2)
    p.add_argument("--seeds", type=int, default=None)
    args = p.parse_args()
    texts = load_json_texts(data_path("tweetrumors", "tweetrumors_clean.json"))
    docs = [t.split() for t in texts]
    X_full, _ = tokens_to_matrix(docs)
    n_shadows = args.shadows or (16 if args.quick else 64)
    seeds = range(args.seeds or (2 if args.quick else 5))
    max_iter = 5 if args.quick else 10
    print(f"TweetRumors: {len(docs)} tweets, V={X_full.shape[1]}; k={K}, delta={DELTA}, "
          f"alpha={ALPHA}; {n_shadows} shadow models", flush=True)
    rows = []

    # ---- 4. timing (same data, same run)
    cases = [
        Case("fit", "sklearn LDA (full vocab)", lambda: model(None, 0).set_params(
            random_state=0).fit(X_full) and None, work=len(docs), unit="docs"),
        Case("fit", "PrivateOnlineLDA (full vocab)",
             lambda: model(3.0, max_iter, len(docs)).fit(X_full) and None, work=len(docs),
             unit="docs"),
        Case("fit", "FDPTM eps1=3 eps2=3", lambda: FullyPrivateTopicModel(
            vocab(3.0), model(3.0, max_iter, len(docs))).fit(docs) and None,
            work=len(docs), unit="docs"),
    ]
    timing = add_ratios(run_cases(cases, repeats=1 if args.quick else args.repeats),
                        "sklearn LDA (full vocab)")

    # ---- 1. coherence and vocabulary size vs eps1, non-private LDA (Figs. 3, 8)
    base = []
    for s in seeds:
        m = model(None, 0).set_params(random_state=s).fit(X_full)
        base.append(umass_coherence(X_full, m.components_, top_n=10))
    rows.append({"experiment": "Fig3 non-private LDA", "eps1": "-", "eps2": "-",
                 "vocab": X_full.shape[1], "coherence": np.mean(base), "coh_sd": np.std(base)})
    eps1_grid = [1, 3, 5, 10] if args.quick else [0.5, 1, 2, 3, 4, 5, 6, 8, 10]
    for e1 in eps1_grid:
        r = np.array([fdptm_coherence(docs, e1, None, 10 * s, max_iter) for s in seeds])
        rows.append({"experiment": "Fig3 DPSU + non-private LDA", "eps1": e1, "eps2": "-",
                     "vocab": r[:, 1].mean(), "coherence": r[:, 0].mean(), "coh_sd": r[:, 0].std()})
        print(rows[-1], flush=True)

    # ---- 2. coherence vs eps1 (eps2 = 3) and vs eps2 (eps1 = 3) (Fig. 4)
    grid = [1, 3, 5, 10] if args.quick else [1, 2, 3, 4, 5, 6, 8, 10]
    for e1 in grid:
        r = np.array([fdptm_coherence(docs, e1, 3.0, 10 * s, max_iter) for s in seeds])
        rows.append({"experiment": "Fig4 vary eps1", "eps1": e1, "eps2": 3, "vocab": r[:, 1].mean(),
                     "coherence": r[:, 0].mean(), "coh_sd": r[:, 0].std()})
        print(rows[-1], flush=True)
    for e2 in grid:
        r = np.array([fdptm_coherence(docs, 3.0, e2, 10 * s, max_iter) for s in seeds])
        rows.append({"experiment": "Fig4 vary eps2", "eps1": 3, "eps2": e2, "vocab": r[:, 1].mean(),
                     "coherence": r[:, 0].mean(), "coh_sd": r[:, 0].std()})
        print(rows[-1], flush=True)

    # ---- 3. LiRA against FDPTM (Fig. 5)
    rng = np.random.default_rng(5)
    members = np.zeros(len(docs), dtype=bool)
    members[rng.permutation(len(docs))[: len(docs) // 2]] = True
    labels = members.astype(int)
    attack_rows = []
    res = audit(model(None, 0), X_full, n_shadows=n_shadows, baselines=False,
                n_jobs=args.n_jobs, random_state=6)
    sc = res.scores[[k for k in res.scores if "online" in k][0]]
    t1, t2 = tpr_at_fpr(res.labels, sc, (0.001, 0.01))
    attack_rows.append({"experiment": "Fig5 non-private LDA", "eps1": "-", "eps2": "-",
                        "vocab": int(res.vocabulary_mask.sum()), "TPR@0.1%": t1, "TPR@1%": t2})
    print(attack_rows[-1], flush=True)
    settings = [(e1, 5.0) for e1 in (1.0, 5.0, 10.0)] + [(5.0, e2) for e2 in (1.0, 10.0)]
    for e1, e2 in settings:
        target = FullyPrivateTopicModel(vocab(e1), model(e2, max_iter, len(docs))).fit(
            [d for d, m in zip(docs, members) if m])
        Xs = target.sanitize(docs)
        lira = LiRA(model(e2, max_iter, len(docs)), n_shadows=n_shadows, n_jobs=args.n_jobs,
                    random_state=8).fit(Xs, target.topic_word_)
        t1, t2 = tpr_at_fpr(labels, lira.online_scores(), (0.001, 0.01))
        attack_rows.append({"experiment": "Fig5 FDPTM", "eps1": e1, "eps2": e2,
                            "vocab": target.vocabulary_.size, "TPR@0.1%": t1, "TPR@1%": t2})
        print(attack_rows[-1], flush=True)

    print("\ntiming (same run; speed > 1 means faster than scikit-learn's LDA):")
    print(format_table(timing, [("group", ""), ("name", ""), ("median_s", ".2f"),
                                ("speed_vs_sklearn LDA (full vocab)", ".3f")]))
    print("\nLiRA (online, zeta) against FDPTM, target on a random half:")
    print(format_table(attack_rows, [("experiment", ""), ("eps1", ""), ("eps2", ""),
                                     ("vocab", ""), ("TPR@0.1%", ".4f"), ("TPR@1%", ".4f")]))
    print()
    report("bench_fdptm", rows, [("experiment", ""), ("eps1", ""), ("eps2", ""), ("vocab", ".0f"),
                                 ("coherence", ".2f"), ("coh_sd", ".2f")],
           meta={"n_docs": len(docs), "k": K, "delta": DELTA, "alpha": ALPHA,
                 "n_shadows": n_shadows, "attack": attack_rows, "timing": timing})


if __name__ == "__main__":
    main()
