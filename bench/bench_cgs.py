"""Collapsed Gibbs sampling throughput and quality: dptm.GibbsLDA vs tomotopy (LDAModel)
and the `lda` package, same corpus, same priors, same number of sweeps, for each thread
count of --jobs (dptm ``n_jobs`` beside tomotopy ``workers``; `lda` has one thread).

Prints tokens per second per sweep (median of --repeats runs), the speed ratio of dptm
against each anchor with the same number of threads (``speed_vs_tomotopy``), against
tomotopy's single worker (``speed_vs_tomotopy_1``), dptm's speed-up over its own single
thread (``speedup_vs_1``), and the held-out perplexity each model reaches. Perplexity is
computed identically for all: theta of the held-out documents by dptm's fold-in Gibbs
sampler with the model's topic-word matrix fixed, then dptm.metrics.perplexity. Prints
the load average: thread scaling is only meaningful on an idle machine.

    python bench/bench_cgs.py                    # KOS, K = 50, 100, 500, 1000, 1/2/all threads
    python bench/bench_cgs.py --corpora kos nips --anchors tomotopy lda
    python bench/bench_cgs.py --quick            # KOS, K = 50, few sweeps
"""
import os

import numpy as np

from _harness import Case, add_ratios, data_path, parser, report, run_cases
from dptm.datasets import load_uci_bow
from dptm.models import gibbs as gibbs_mod
from dptm.models.gibbs import GibbsLDA

CORPORA = {"kos": ("kos", "docword.kos.txt.gz", "vocab.kos.txt"),
           "nips": ("nips_uci", "docword.nips.txt.gz", "vocab.nips.txt")}


def heldout_perplexity(topic_word, X_test, alpha, seed=0):
    """Perplexity of X_test with theta folded in by dptm's sampler, topics fixed."""
    frozen = GibbsLDA(n_components=topic_word.shape[0], doc_topic_prior=alpha,
                      transform_max_iter=50, n_jobs=-1)   # fold-in: same result any n_jobs
    frozen._check_common_params()
    frozen._set_topics(topic_word)
    frozen.n_features_in_ = topic_word.shape[1]
    frozen.transform_seed_ = seed
    return frozen.perplexity(X_test)


def split(X, test_fraction=0.1, seed=0):
    order = np.random.default_rng(seed).permutation(X.shape[0])
    n_test = int(test_fraction * X.shape[0])
    return X[order[n_test:]], X[order[:n_test]]


def dptm_case(X, K, alpha, beta, sweeps, n_jobs=None):
    def run():
        model = GibbsLDA(n_components=K, doc_topic_prior=alpha, topic_word_prior=beta,
                         max_iter=sweeps, random_state=0, n_jobs=n_jobs).fit(X)
        return {"topic_word": model.topic_word_}
    return run


def lda_case(X, K, alpha, beta, sweeps):
    import lda
    import logging
    logging.getLogger("lda").setLevel(logging.WARNING)

    def run():
        model = lda.LDA(n_topics=K, n_iter=sweeps, alpha=alpha, eta=beta, random_state=0,
                        refresh=10**9).fit(X)
        return {"topic_word": model.topic_word_}
    return run


def tomotopy_case(X, K, alpha, beta, sweeps, workers=1):
    import tomotopy as tp

    def setup():
        model = tp.LDAModel(k=K, alpha=alpha, eta=beta, seed=0)
        model.optim_interval = 0  # matched settings: no hyper-parameter optimisation
        for d in range(X.shape[0]):
            lo, hi = X.indptr[d], X.indptr[d + 1]
            words = np.repeat(X.indices[lo:hi], X.data[lo:hi])
            if words.size:
                model.add_doc([str(w) for w in words])
        return model

    def run(model):
        model.train(sweeps, workers=workers,
                    parallel=tp.ParallelScheme.NONE if workers == 1 else tp.ParallelScheme.DEFAULT)
        # map tomotopy's vocabulary (string ids in insertion order) back to columns
        cols = np.array([int(w) for w in model.used_vocabs])
        phi = np.full((K, X.shape[1]), 1e-12)
        for k in range(K):
            phi[k, cols] = model.get_topic_word_dist(k)
        return {"topic_word": phi / phi.sum(axis=1, keepdims=True)}
    return setup, run


def thread_counts(jobs):
    """--jobs values as thread counts (-1: all cores), duplicates dropped."""
    from dptm.models.gibbs import effective_n_jobs
    out = []
    for j in jobs:
        n = effective_n_jobs(j)
        if n not in out:
            out.append(n)
    return out


def main():
    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--corpora", nargs="+", default=["kos"], choices=sorted(CORPORA))
    p.add_argument("--topics", nargs="+", type=int, default=[50, 100, 500, 1000])
    p.add_argument("--jobs", nargs="+", type=int, default=[1, 2, -1])
    p.add_argument("--sweeps", type=int, default=20)
    p.add_argument("--alpha", type=float, default=0.1)
    p.add_argument("--beta", type=float, default=0.01)
    p.add_argument("--anchors", nargs="+", default=["tomotopy"])
    p.add_argument("--sync-rounds", type=int, default=None,
                   help="GibbsLDA n_jobs > 1: move exchanges per sweep (default: the "
                        "estimator's, dptm.models.gibbs._SYNC_ROUNDS)")
    p.add_argument("--sync-lag", type=int, default=None,
                   help="GibbsLDA n_jobs > 1: rounds a part lags the others by (default: the "
                        "estimator's, dptm.models.gibbs._SYNC_LAG)")
    args = p.parse_args()
    if args.sync_rounds is not None:
        gibbs_mod._SYNC_ROUNDS = args.sync_rounds
    if args.sync_lag is not None:
        gibbs_mod._SYNC_LAG = args.sync_lag
    if args.quick:
        args.corpora, args.topics, args.sweeps, args.repeats = ["kos"], [50], 10, 1
    threads = thread_counts(args.jobs)
    load_before = os.getloadavg()
    print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} "
          f"{load_before[2]:.2f} on {os.cpu_count()} cores")
    # OpenMP waiting: spinning (libgomp's default) suits an idle machine; on a shared one
    # OMP_WAIT_POLICY=passive keeps waiting threads off the cores the others need
    omp_env = {k: os.environ[k] for k in ("OMP_WAIT_POLICY", "OMP_PROC_BIND", "OMP_PLACES",
                                          "GOMP_SPINCOUNT") if k in os.environ}
    print(f"OpenMP environment: {omp_env or 'defaults'}")
    rows = []
    for name in args.corpora:
        folder, docword, vocab = CORPORA[name]
        X, _ = load_uci_bow(data_path(folder, docword), data_path(folder, vocab))
        X_train, X_test = split(X)
        n_tokens = int(X_train.sum())
        print(f"{name}: {X_train.shape[0]} training documents, {n_tokens} tokens, "
              f"{X_test.shape[0]} held out; {args.sweeps} sweeps")
        for K in args.topics:
            for n in threads:
                group = f"{name} K={K} threads={n}"
                work = n_tokens * args.sweeps
                cases = [Case(group, "dptm", dptm_case(X_train, K, args.alpha, args.beta,
                                                       args.sweeps, n),
                              work=work, unit="tokens", extra={"K": K, "threads": n})]
                if "tomotopy" in args.anchors:
                    setup, run = tomotopy_case(X_train, K, args.alpha, args.beta, args.sweeps, n)
                    cases.append(Case(group, "tomotopy", run, setup=setup, work=work,
                                      unit="tokens", extra={"K": K, "threads": n}))
                if "lda" in args.anchors and n == 1:
                    cases.append(Case(group, "lda", lda_case(X_train, K, args.alpha, args.beta,
                                                             args.sweeps),
                                      work=work, unit="tokens", extra={"K": K, "threads": n}))
                for row in run_cases(cases, repeats=args.repeats):
                    row["heldout_perplexity"] = heldout_perplexity(row.pop("topic_word"), X_test,
                                                                   args.alpha)
                    row["Mtokens_per_s"] = row["throughput"] / 1e6
                    row["corpus"] = name
                    rows.append(row)
    add_ratios(rows, "tomotopy")
    add_ratios(rows, "lda")
    single = {(r["corpus"], r["K"], r["name"]): r["median_s"] for r in rows if r["threads"] == 1}
    for r in rows:
        one = single.get((r["corpus"], r["K"], r["name"]))
        r["speedup_vs_1"] = one / r["median_s"] if one else None
        tomo1 = single.get((r["corpus"], r["K"], "tomotopy"))
        r["speed_vs_tomotopy_1"] = tomo1 / r["median_s"] if tomo1 and r["name"] == "dptm" else None
    load_after = os.getloadavg()
    columns = [("group", ""), ("name", ""), ("median_s", ".3f"), ("Mtokens_per_s", ".2f"),
               ("speedup_vs_1", ".2f"), ("speed_vs_tomotopy", ".2f"),
               ("speed_vs_tomotopy_1", ".2f"), ("speed_vs_lda", ".2f"),
               ("heldout_perplexity", ".1f")]
    report("bench_cgs", rows, columns,
           meta={"sweeps": args.sweeps, "alpha": args.alpha, "beta": args.beta,
                 "repeats": args.repeats, "load_before": load_before, "load_after": load_after,
                 "omp_env": omp_env, "sync_rounds": gibbs_mod._SYNC_ROUNDS,
                 "sync_lag": gibbs_mod._SYNC_LAG,
                 "note": "speed_vs_X = X's median time / this row's (>1: this row is faster), "
                         "X with the same number of threads; speed_vs_tomotopy_1: against "
                         "tomotopy's single worker; dptm n_jobs > 1 is AD-LDA"})
    print(f"load average after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")


if __name__ == "__main__":
    main()
