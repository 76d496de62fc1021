"""Local DP topic models on KOS: LP-LDA (papers/zhao2021 Fig. 6) and OLP-LDA (Figs. 8-9).

Setup as in the paper (Section VII-A): the 1,000 most frequent words of KOS, 3,000
training and 430 test documents (random split), K = 50, alpha = 1, beta = 0.01; OLP-LDA
with lambda = 0.5, omega = 0.4, mini-batches of 160 and a prior data set of 500. The
clients' randomization is simulated with ``dptm.local.randomize_matrix``. Held-out
perplexity (natural log, per token, theta by fold-in with the topics fixed) is computed
on the test documents' counts. The "epsilon" of every curve is the paper's per-word local
epsilon; the document-level guarantee is 1,000 times it (Theorem 4, V = 1,000).

Fig. 6 : LP-LDA perplexity against epsilon, with the non-private Gibbs LDA on the clean
         counts and on the clean presence bits (the limit f -> 0 of LP-LDA), and CDP-LDA
         (dptm.NoisyGibbsLDA(noise_schedule="first")) when that estimator is available.
         ``eps_report`` = privacy_.epsilon(0) of each fitted model: LP-LDA's whole-document
         local epsilon (V x eps), CDP-LDA's central word-level epsilon including the
         sampling steps (clip=None).
         Times: LP-LDA fit (server: estimation + reconstruction + sweeps) against Gibbs LDA
         on the clean presence bits, same sweeps, same run (ratio).
Fig. 8 : OLP-LDA perplexity after each mini-batch for several epsilons, and O-LDA (the same
         online sampler on clean batches).
Fig. 9 : OLP-LDA (epsilon = 3) final perplexity against the prior data set size, O-LDA, and
         batch Gibbs LDA on all clean training presence bits.

    python bench/bench_local.py [--quick] [--repeats 3]
"""
import os
import sys
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import Case, add_ratios, data_path, parser, report, run_cases  # noqa: E402

from dptm import GibbsLDA, LocalDPLDA, OnlineLocalDPLDA  # noqa: E402
from dptm.datasets import load_uci_bow  # noqa: E402
from dptm.local import f_from_epsilon, randomize_matrix  # noqa: E402


def load_kos(n_vocab=1000, n_train=3000, seed=0):
    X, vocab = load_uci_bow(data_path("kos", "docword.kos.txt.gz"), data_path("kos", "vocab.kos.txt"))
    top = np.sort(np.argsort(-np.asarray(X.sum(axis=0)).ravel(), kind="stable")[:n_vocab])
    X = sp.csr_matrix(X[:, top])
    X = X[np.diff(X.indptr) > 0]
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    return X[perm[:n_train]], X[perm[n_train:]]


def bits(X):
    B = sp.csr_matrix(X, copy=True)
    B.data[:] = 1
    return B


def cdp_lda(eps, args):
    """CDP-LDA (Laplace noise on the topic-word counts in the first iteration only, no
    clipping), dptm.NoisyGibbsLDA(noise_schedule="first"); ``eps`` is its snapshot's
    epsilon_per_iter (word-level, central), as the paper's x-axis."""
    try:
        from dptm import NoisyGibbsLDA
    except (ImportError, AttributeError):
        return None, "dptm.NoisyGibbsLDA not available"
    model = NoisyGibbsLDA(args.K, epsilon_per_iter=eps, clip=None, noise_schedule="first",
                          doc_topic_prior=1.0, topic_word_prior=0.01, max_iter=args.iters,
                          random_state=0)
    return model, "NoisyGibbsLDA(noise_schedule='first', epsilon_per_iter=eps, clip=None)"


def fig6(Xtr, Xte, args):
    Btr = bits(Xtr)
    common = dict(doc_topic_prior=1.0, topic_word_prior=0.01, max_iter=args.iters)
    cases = []
    cases.append(Case("non-private", "gibbs-counts", lambda: {
        "perplexity": GibbsLDA(args.K, random_state=0, **common).fit(Xtr).perplexity(Xte)},
        work=Xtr.sum(), unit="tokens"))
    cases.append(Case("non-private", "gibbs-bits", lambda: {
        "perplexity": GibbsLDA(args.K, random_state=0, **common).fit(Btr).perplexity(Xte)},
        work=Btr.nnz, unit="tokens"))
    cdp_note = None
    for eps in args.eps:
        f = f_from_epsilon(eps)
        noisy = randomize_matrix(Xtr, f)          # the clients' secret randomness
        group = f"eps={eps:g}"

        def lp(noisy=noisy, f=f):
            m = LocalDPLDA(args.K, flip_probability=f, random_state=0, **common).fit(noisy)
            return {"perplexity": m.perplexity(Xte), "f": f,
                    "recon_tokens": m.n_reconstructed_tokens_,
                    "noisy_ones": int(noisy.nnz), "eps_report": m.privacy_.epsilon(0.0)}
        cases.append(Case(group, "LP-LDA", lp, work=Btr.nnz, unit="tokens"))
        cases.append(Case(group, "gibbs-bits", lambda: {
            "perplexity": GibbsLDA(args.K, random_state=0, **common).fit(Btr).perplexity(Xte)},
            work=Btr.nnz, unit="tokens"))
        model, cdp_note = cdp_lda(eps, args)
        if model is not None:
            def cdp(model=model):
                model.fit(Xtr)
                return {"perplexity": model.perplexity(Xte), "eps_report": model.privacy_.epsilon(0.0)}
            cases.append(Case(group, "CDP-LDA", cdp, work=Xtr.sum(), unit="tokens"))
    # the clean-bits Gibbs fit is the same in every eps group: time it once per group anyway
    # so that each ratio compares runs made next to each other on this shared machine
    rows = run_cases(cases, repeats=args.repeats)
    add_ratios(rows, "gibbs-bits")
    print("\nFig. 6 - LP-LDA perplexity vs per-word local epsilon (KOS, V=1000)")
    report("bench_local_fig6", rows, [
        ("group", None), ("name", None), ("perplexity", ".1f"), ("f", ".4f"), ("eps_report", ".0f"),
        ("noisy_ones", "d"), ("recon_tokens", "d"), ("median_s", ".2f"), ("speed_vs_gibbs-bits", ".2f")],
        meta={"K": args.K, "iters": args.iters, "cdp": cdp_note or "included"})
    if cdp_note and not any(r["name"] == "CDP-LDA" for r in rows):
        print(f"CDP-LDA baseline skipped: {cdp_note}")
    return rows


def olp_curve(X_stream, X_prior, Xte, f, args, prior_weight=0.4, every=True):
    model = OnlineLocalDPLDA(args.K, flip_probability=f, batch_size=160, correlation_factor=0.5,
                             prior_weight=prior_weight, doc_topic_prior=1.0, topic_word_prior=0.01,
                             max_iter=args.batch_iters, prior_max_iter=args.iters, random_state=0)
    noisy = randomize_matrix(X_stream, f)
    if X_prior is not None and X_prior.shape[0]:
        model.fit_prior(X_prior)
        curve = [model.perplexity(Xte)]
    else:
        curve = [np.nan]
    t0 = time.perf_counter()
    for s in range(0, noisy.shape[0], 160):
        model.partial_fit(noisy[s:s + 160])
        if every or s + 160 >= noisy.shape[0]:
            curve.append(model.perplexity(Xte))
    return curve, time.perf_counter() - t0


def fig8(Xtr, Xte, args):
    X_prior, X_stream = Xtr[:500], Xtr[1000:]
    rows = []
    print(f"\nFig. 8 - OLP-LDA perplexity after each mini-batch of 160 (prior 500, "
          f"{X_stream.shape[0]} streamed clients)")
    runs = [("O-LDA (clean)", 1e-12, 0.0)] + [(f"OLP eps={e:g}", f_from_epsilon(e), 0.4)
                                              for e in args.olp_eps]
    for name, f, w in runs:
        curve, secs = olp_curve(X_stream, X_prior, Xte, f, args, prior_weight=w)
        rows.append({"name": name, "curve": curve, "seconds": secs})
        print(f"  {name:<16} " + " ".join(f"{p:7.1f}" for p in curve) + f"   ({secs:.1f} s)", flush=True)
    return rows


def fig9(Xtr, Xte, args):
    X_stream = Xtr[1000:]
    f = f_from_epsilon(3.0)
    rows = []
    full = GibbsLDA(args.K, doc_topic_prior=1.0, topic_word_prior=0.01, max_iter=args.iters,
                    random_state=0).fit(bits(Xtr)).perplexity(Xte)
    for size in args.prior_sizes:
        X_prior = Xtr[:size]
        olp, _ = olp_curve(X_stream, X_prior, Xte, f, args, every=False)
        clean, _ = olp_curve(X_stream, X_prior, Xte, 1e-12, args, prior_weight=0.0, every=False)
        rows.append({"prior_docs": size, "OLP eps=3": olp[-1], "O-LDA (clean)": clean[-1],
                     "batch gibbs-bits (all train)": full})
        print(f"  prior {size:5d}: OLP {olp[-1]:.1f}  O-LDA {clean[-1]:.1f}", flush=True)
    print("\nFig. 9 - final perplexity vs prior data size (eps = 3)")
    report("bench_local_fig9", rows, [("prior_docs", "d"), ("OLP eps=3", ".1f"),
                                      ("O-LDA (clean)", ".1f"), ("batch gibbs-bits (all train)", ".1f")],
           meta={"K": args.K})
    return rows


def main():
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--skip", default="", help="comma list of figures to skip: 6,8,9")
    args = p.parse_args()
    if args.quick:
        args.K, args.iters, args.batch_iters = 20, 40, 20
        args.eps, args.olp_eps, args.prior_sizes = [1, 3, 6], [1, 3], [0, 100, 500]
        args.repeats = min(args.repeats, 1)
    else:
        args.K, args.iters, args.batch_iters = 50, 200, 50
        args.eps, args.olp_eps, args.prior_sizes = [1, 2, 3, 4, 5, 6, 8], [1, 3, 5], [0, 50, 100, 250, 500, 1000]
    Xtr, Xte = load_kos()
    print(f"KOS top-1000: {Xtr.shape[0]} train / {Xte.shape[0]} test documents, "
          f"{bits(Xtr).nnz} train (document, word) pairs, K={args.K}, {args.iters} sweeps")
    skip = set(args.skip.split(",")) if args.skip else set()
    if "6" not in skip:
        fig6(Xtr, Xte, args)
    if "8" not in skip:
        rows = fig8(Xtr, Xte, args)
        report("bench_local_fig8", [{"name": r["name"], "batch0 (prior)": r["curve"][0],
                                     "after 1": r["curve"][1], "after 4": r["curve"][min(4, len(r["curve"]) - 1)],
                                     "final": r["curve"][-1], "seconds": r["seconds"]} for r in rows],
               [("name", None), ("batch0 (prior)", ".1f"), ("after 1", ".1f"), ("after 4", ".1f"),
                ("final", ".1f"), ("seconds", ".1f")], meta={"curves": {r["name"]: r["curve"] for r in rows}})
    if "9" not in skip:
        fig9(Xtr, Xte, args)


if __name__ == "__main__":
    main()
