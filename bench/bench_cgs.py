"""Collapsed Gibbs sampling throughput and quality: dptm.GibbsLDA vs tomotopy (LDAModel,
one worker) and the `lda` package, same corpus, same priors, same number of sweeps.

Prints tokens per second per sweep (median of --repeats runs), the speed ratio of dptm
against each anchor, and the held-out perplexity each model reaches. Perplexity is
computed identically for all three: theta of the held-out documents by dptm's fold-in
Gibbs sampler with the model's topic-word matrix fixed, then dptm.metrics.perplexity.

    python bench/bench_cgs.py                    # KOS and NIPS, K = 20, 50, 100
    python bench/bench_cgs.py --quick            # KOS, K = 50, few sweeps
"""
import numpy as np

from _harness import Case, add_ratios, data_path, parser, report, run_cases
from dptm.datasets import load_uci_bow
from dptm.models.gibbs import GibbsLDA

CORPORA = {"kos": ("kos", "docword.kos.txt.gz", "vocab.kos.txt"),
           "nips": ("nips_uci", "docword.nips.txt.gz", "vocab.nips.txt")}


def heldout_perplexity(topic_word, X_test, alpha, seed=0):
    """Perplexity of X_test with theta folded in by dptm's sampler, topics fixed."""
    frozen = GibbsLDA(n_components=topic_word.shape[0], doc_topic_prior=alpha,
                      transform_max_iter=50)
    frozen._check_common_params()
    frozen._set_topics(topic_word)
    frozen.n_features_in_ = topic_word.shape[1]
    frozen.transform_seed_ = seed
    return frozen.perplexity(X_test)


def split(X, test_fraction=0.1, seed=0):
    order = np.random.default_rng(seed).permutation(X.shape[0])
    n_test = int(test_fraction * X.shape[0])
    return X[order[n_test:]], X[order[:n_test]]


def dptm_case(X, K, alpha, beta, sweeps):
    def run():
        model = GibbsLDA(n_components=K, doc_topic_prior=alpha, topic_word_prior=beta,
                         max_iter=sweeps, random_state=0).fit(X)
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


def tomotopy_case(X, K, alpha, beta, sweeps):
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
        model.train(sweeps, workers=1, parallel=tp.ParallelScheme.NONE)
        # map tomotopy's vocabulary (string ids in insertion order) back to columns
        cols = np.array([int(w) for w in model.used_vocabs])
        phi = np.full((K, X.shape[1]), 1e-12)
        for k in range(K):
            phi[k, cols] = model.get_topic_word_dist(k)
        return {"topic_word": phi / phi.sum(axis=1, keepdims=True)}
    return setup, run


def main():
    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--corpora", nargs="+", default=["kos", "nips"], choices=sorted(CORPORA))
    p.add_argument("--topics", nargs="+", type=int, default=[20, 50, 100])
    p.add_argument("--sweeps", type=int, default=50)
    p.add_argument("--alpha", type=float, default=0.1)
    p.add_argument("--beta", type=float, default=0.01)
    p.add_argument("--anchors", nargs="+", default=["tomotopy", "lda"])
    args = p.parse_args()
    if args.quick:
        args.corpora, args.topics, args.sweeps, args.repeats = ["kos"], [50], 10, 1
    rows = []
    for name in args.corpora:
        folder, docword, vocab = CORPORA[name]
        X, _ = load_uci_bow(data_path(folder, docword), data_path(folder, vocab))
        X_train, X_test = split(X)
        n_tokens = int(X_train.sum())
        print(f"{name}: {X_train.shape[0]} training documents, {n_tokens} tokens, "
              f"{X_test.shape[0]} held out; {args.sweeps} sweeps")
        for K in args.topics:
            group = f"{name} K={K}"
            cases = [Case(group, "dptm", dptm_case(X_train, K, args.alpha, args.beta, args.sweeps),
                          work=n_tokens * args.sweeps, unit="tokens")]
            if "tomotopy" in args.anchors:
                setup, run = tomotopy_case(X_train, K, args.alpha, args.beta, args.sweeps)
                cases.append(Case(group, "tomotopy", run, setup=setup,
                                  work=n_tokens * args.sweeps, unit="tokens"))
            if "lda" in args.anchors:
                cases.append(Case(group, "lda", lda_case(X_train, K, args.alpha, args.beta,
                                                         args.sweeps),
                                  work=n_tokens * args.sweeps, unit="tokens"))
            for row in run_cases(cases, repeats=args.repeats):
                row["heldout_perplexity"] = heldout_perplexity(row.pop("topic_word"), X_test,
                                                               args.alpha)
                row["Mtokens_per_s"] = row["throughput"] / 1e6
                rows.append(row)
    add_ratios(rows, "tomotopy")
    add_ratios(rows, "lda")
    columns = [("group", ""), ("name", ""), ("median_s", ".3f"), ("Mtokens_per_s", ".2f"),
               ("speed_vs_tomotopy", ".2f"), ("speed_vs_lda", ".2f"), ("heldout_perplexity", ".1f")]
    report("bench_cgs", rows, columns,
           meta={"sweeps": args.sweeps, "alpha": args.alpha, "beta": args.beta,
                 "note": "speed_vs_X = X's median time / this row's (>1: this row is faster)"})


if __name__ == "__main__":
    main()
