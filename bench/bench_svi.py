"""PrivateOnlineLDA (VIPS, papers/park2016) benchmarks.

1. Throughput: documents per second of one epoch of online LDA, ours (Cython E-step;
   non-private, and private as published: secret AES-CTR generator, Poisson minibatches,
   exact lattice Gaussian noise - and the floating-point Gaussian for comparison) vs
   scikit-learn's LatentDirichletAllocation(learning_method="online",
   n_jobs=1) with matched settings (K, batch size, learning rate, E-step tolerance, the
   same sequential minibatch order), on the same documents in the same run. scikit-learn
   is timed both as ``partial_fit`` over the corpus (exactly the same minibatch updates as
   ours) and as ``fit(max_iter=1)`` (which also computes a training-set bound at the end).
2. Privacy-utility (papers/park2016 Fig. 1): held-out perplexity bound against epsilon for
   the four ways of calibrating the noise at equal (epsilon, delta): the tight RDP
   accountant and the paper's zCDP, advanced and linear recipes. For each, the noise
   multiplier used and the tight (sound) epsilon of that noise are printed.

    python bench/bench_svi.py            # NIPS (the largest UCI corpus in ../shared/data)
    python bench/bench_svi.py --corpus kos --quick
    python bench/bench_svi.py --corpus kos --skip-privacy     # the issue-12 throughput figure
    python bench/bench_svi.py --corpus kos --scaling-only     # the issue-16 thread scaling

3. Thread scaling (issue 16): one epoch of PrivateOnlineLDA (non-private and private
   exact) at n_jobs = 1, 2 beside scikit-learn's online LatentDirichletAllocation at the
   same n_jobs (``partial_fit`` over the corpus: the same minibatch updates), K = 10 and
   50, same run, median of ``--repeats``. The load average (``os.getloadavg``) is printed
   before and after: thread scaling is meaningless on a loaded machine.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from _harness import Case, add_ratios, data_path, parser, report, run_cases  # noqa: E402

from dptm import PrivateOnlineLDA  # noqa: E402
from dptm.datasets import load_uci_bow  # noqa: E402

CORPORA = {"nips": ("nips_uci", "docword.nips.txt.gz", "vocab.nips.txt"),
           "kos": ("kos", "docword.kos.txt.gz", "vocab.kos.txt")}


def load(corpus):
    folder, docword, vocab = CORPORA[corpus]
    X, _ = load_uci_bow(data_path(folder, docword), data_path(folder, vocab))
    return X.tocsr()


def split(X, n_test, seed=0):
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    return X[np.sort(perm[n_test:])], X[np.sort(perm[:n_test])]


def throughput(Xtr, Xte, K, batch_size, repeats):
    from sklearn.decomposition import LatentDirichletAllocation
    D = Xtr.shape[0]
    Xf = Xtr.astype(np.float64)
    common = dict(n_components=K, batch_size=batch_size, learning_offset=10.0,
                  learning_decay=0.7, mean_change_tol=1e-3, max_doc_update_iter=100)
    evaluator = {}

    def ours():
        m = PrivateOnlineLDA(sampling="sequential", max_iter=1, random_state=0, **common).fit(Xtr)
        evaluator["m"] = m
        return {}

    # Private, as published: secret AES-CTR generator (no seed), Poisson minibatches of
    # expected size S, exact lattice Gaussian noise on the K x V statistic at every step.
    # N = the longest training document, so no document is truncated (same work).
    n_max = int(np.asarray(Xtr.sum(axis=1)).max())
    private = dict(max_iter=1, max_doc_length=n_max, noise_multiplier=1.0, total_samples=D,
                   **common)

    def ours_private():
        PrivateOnlineLDA(**private).fit(Xtr)
        return {}

    def ours_private_float():
        PrivateOnlineLDA(mechanism="gaussian", **private).fit(Xtr)
        return {}

    def sk_partial():
        sk = LatentDirichletAllocation(learning_method="online", total_samples=D, n_jobs=1,
                                       random_state=0, **common)
        sk.partial_fit(Xf)
        evaluator["sk"] = sk
        return {}

    def sk_fit():
        LatentDirichletAllocation(learning_method="online", max_iter=1, n_jobs=1,
                                  random_state=0, **common).fit(Xf)
        return {}

    group = f"K={K} one epoch"
    cases = [Case(group, "sklearn_partial_fit", sk_partial, work=D, unit="docs"),
             Case(group, "sklearn_fit", sk_fit, work=D, unit="docs"),
             Case(group, "dptm", ours, work=D, unit="docs"),
             Case(group, "dptm_private_exact", ours_private, work=D, unit="docs"),
             Case(group, "dptm_private_float_gaussian", ours_private_float, work=D, unit="docs")]
    rows = run_cases(cases, repeats=repeats)
    add_ratios(rows, "sklearn_partial_fit")
    # held-out perplexity (our bound) of both one-epoch models, same definition
    m = evaluator["m"]
    rows[2]["heldout_perplexity"] = m.perplexity(Xte)
    m2 = PrivateOnlineLDA(sampling="sequential", max_iter=1, random_state=0, **common).fit(Xtr)
    m2._set_lambda_t(evaluator["sk"].components_.T)
    m2._sync_public()
    rows[0]["heldout_perplexity"] = m2.perplexity(Xte)
    return rows


def scaling(Xtr, K, batch_size, repeats, threads):
    """docs/s of one epoch at every n_jobs in ``threads``: dptm (non-private, private exact)
    and scikit-learn's online LDA (partial_fit: the same sequential minibatch updates)."""
    from sklearn.decomposition import LatentDirichletAllocation
    D = Xtr.shape[0]
    Xf = Xtr.astype(np.float64)
    common = dict(n_components=K, batch_size=batch_size, learning_offset=10.0,
                  learning_decay=0.7, mean_change_tol=1e-3, max_doc_update_iter=100)
    n_max = int(np.asarray(Xtr.sum(axis=1)).max())
    group = f"K={K} scaling"
    cases = []
    for t in threads:
        def sk(t=t):
            LatentDirichletAllocation(learning_method="online", total_samples=D, n_jobs=t,
                                      random_state=0, **common).partial_fit(Xf)

        def ours(t=t):
            PrivateOnlineLDA(sampling="sequential", max_iter=1, random_state=0, n_jobs=t,
                             **common).fit(Xtr)

        def ours_private(t=t):
            PrivateOnlineLDA(max_iter=1, max_doc_length=n_max, noise_multiplier=1.0, n_jobs=t,
                             total_samples=D, **common).fit(Xtr)
        cases += [Case(group, f"sklearn_n_jobs={t}", sk, work=D, unit="docs"),
                  Case(group, f"dptm_n_jobs={t}", ours, work=D, unit="docs"),
                  Case(group, f"dptm_private_n_jobs={t}", ours_private, work=D, unit="docs")]
    rows = run_cases(cases, repeats=repeats)
    t1 = {r["name"].rsplit("=", 1)[0]: r["median_s"] for r in rows
          if r["name"].endswith(f"={threads[0]}")}
    sk = {r["name"]: r["median_s"] for r in rows if r["name"].startswith("sklearn")}
    for r in rows:
        base, t = r["name"].rsplit("=", 1)
        r["speedup_vs_own_1_thread"] = t1[base] / r["median_s"]
        r["speed_vs_sklearn_same_n_jobs"] = sk[f"sklearn_n_jobs={t}"] / r["median_s"]
    return rows


def privacy_utility(Xtr, Xte, K, batch_size, max_iter, N, epsilons, delta, seeds):
    rows = []
    base = dict(n_components=K, batch_size=batch_size, max_iter=max_iter, max_doc_length=N,
                total_samples=Xtr.shape[0])
    t0 = time.perf_counter()
    ppl = [PrivateOnlineLDA(random_state=s, **base).fit(Xtr).perplexity(Xte) for s in seeds]
    rows.append({"accounting": "non-private", "epsilon": float("inf"), "noise_multiplier": 0.0,
                 "sound_epsilon": float("inf"), "paper_epsilon": None,
                 "heldout_perplexity": float(np.median(ppl))})
    for eps in epsilons:
        for acc in ("rdp", "zcdp-paper", "advanced", "linear"):
            ppl, m = [], None
            for s in seeds:
                m = PrivateOnlineLDA(target_epsilon=eps, target_delta=delta, accounting=acc,
                                     random_state=s, **base).fit(Xtr)
                ppl.append(m.perplexity(Xte))
            try:
                paper = m.privacy_.paper_epsilon(delta)
            except (ArithmeticError, ValueError):
                paper = None
            rows.append({"accounting": acc, "epsilon": eps,
                         "noise_multiplier": m.noise_multiplier_,
                         "sound_epsilon": m.privacy_.epsilon(delta), "paper_epsilon": paper,
                         "heldout_perplexity": float(np.median(ppl))})
            print(f"  eps={eps:<5g} {acc:<11} z={m.noise_multiplier_:9.3f} "
                  f"perplexity={rows[-1]['heldout_perplexity']:10.2f} "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
    for r in rows:
        if r["accounting"] != "non-private":
            ref = [x for x in rows if x["epsilon"] == r["epsilon"] and x["accounting"] == "rdp"][0]
            r["perplexity_vs_rdp"] = r["heldout_perplexity"] / ref["heldout_perplexity"]
    return rows


def main():
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--corpus", choices=sorted(CORPORA), default="nips")
    p.add_argument("--skip-throughput", action="store_true")
    p.add_argument("--skip-privacy", action="store_true")
    p.add_argument("--skip-scaling", action="store_true")
    p.add_argument("--scaling-only", action="store_true",
                   help="only the thread-scaling section (issue 16)")
    p.add_argument("--threads", default="1,2", help="n_jobs values of the scaling section")
    p.add_argument("--n-topics", type=int, default=5, help="K of the privacy-utility runs")
    p.add_argument("--batch-size", type=int, default=650, help="S of the privacy-utility runs")
    p.add_argument("--epochs", type=int, default=10, help="max_iter of the privacy-utility runs")
    p.add_argument("--max-doc-length", type=int, default=200, help="N of the privacy-utility runs")
    args = p.parse_args()
    X = load(args.corpus)
    n_test = 200 if args.corpus == "nips" else 400
    Xtr, Xte = split(X, n_test)
    if args.quick:
        Xtr, Xte = Xtr[:300], Xte[:100]
    print(f"corpus {args.corpus}: train {Xtr.shape[0]} docs, test {Xte.shape[0]} docs, "
          f"V={X.shape[1]}, {int(Xtr.sum())} training tokens", flush=True)
    meta = {"corpus": args.corpus, "n_train": Xtr.shape[0], "n_test": Xte.shape[0],
            "n_words": X.shape[1], "quick": args.quick}
    if args.scaling_only:
        args.skip_throughput = args.skip_privacy = True
        args.skip_scaling = False
    if not args.skip_scaling:
        threads = tuple(int(t) for t in args.threads.split(","))
        load0 = os.getloadavg()
        print(f"thread scaling, n_jobs {threads}; load average before: "
              f"{' '.join(f'{x:.2f}' for x in load0)} on {os.cpu_count()} CPUs", flush=True)
        rows = []
        for K in ((10,) if args.quick else (10, 50)):
            rows += scaling(Xtr, K, 128, 1 if args.quick else args.repeats, threads)
        load1 = os.getloadavg()
        print(f"load average after: {' '.join(f'{x:.2f}' for x in load1)}\n")
        report(f"svi_scaling_{args.corpus}", rows,
               [("group", None), ("name", None), ("median_s", ".3f"), ("throughput", ".1f"),
                ("unit", None), ("speedup_vs_own_1_thread", ".2f"),
                ("speed_vs_sklearn_same_n_jobs", ".2f")],
               {**meta, "threads": list(threads), "loadavg_before": load0,
                "loadavg_after": load1})
    if not args.skip_throughput:
        rows = []
        for K in ((50,) if args.quick else (10, 50)):
            rows += throughput(Xtr, Xte, K, 128, 1 if args.quick else args.repeats)
        print()
        report(f"svi_throughput_{args.corpus}", rows,
               [("group", None), ("name", None), ("median_s", ".3f"), ("throughput", ".1f"),
                ("unit", None), ("speed_vs_sklearn_partial_fit", ".2f"),
                ("heldout_perplexity", ".2f")], meta)
    if not args.skip_privacy:
        epsilons = (4.0, 16.0) if args.quick else (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
        seeds = (0,) if args.quick else (0, 1, 2)
        # A corpus of ~1,300 documents needs large batches (q = S / D = 0.5 here) and few
        # topics for any signal to survive the noise; papers/park2016 had D = 400,000.
        S = min(args.batch_size, Xtr.shape[0])
        setting = dict(K=args.n_topics, batch_size=S, max_iter=args.epochs, N=args.max_doc_length,
                       delta=1e-5)
        print(f"\nprivacy-utility ({setting}, median of {len(seeds)} seeds)", flush=True)
        rows = privacy_utility(Xtr, Xte, setting["K"], setting["batch_size"], setting["max_iter"],
                               setting["N"], epsilons, setting["delta"], seeds)
        print()
        report(f"svi_privacy_{args.corpus}", rows,
               [("accounting", None), ("epsilon", "g"), ("noise_multiplier", ".3f"),
                ("sound_epsilon", ".3f"), ("paper_epsilon", ".3f"),
                ("heldout_perplexity", ".1f"), ("perplexity_vs_rdp", ".3f")],
               {**meta, **setting, "seeds": list(seeds)})


if __name__ == "__main__":
    main()
