"""Privacy-utility of PrivateBatchLDA on the benchmark corpora, same run, same data.

For every corpus of ``--set`` (``tuning`` or ``evaluation``, declared in bench/corpora.py;
a default may be chosen only on the tuning set): held-out perplexity (ONE definition for
every model: theta by Gibbs fold-in with the released topics fixed, ``dptm.release.fold_in``,
doc-topic prior 1/K, then ``dptm.metrics.perplexity``) and NPMI coherence of the top 10
words on the HELD-OUT documents, at delta = 1e-5, for

- the non-private reference: scikit-learn's batch variational LDA with its defaults,
- the noise-free floor: PrivateBatchLDA at target_epsilon 1e5 (its bias without noise),
- the unigram model (one word distribution for every document, from the training counts),
- ``PrivateBatchLDA`` with its defaults at each epsilon (``--models`` adds PrivateOnlineLDA,
  ``PrivateBatchLDA+counts``: ``word_counts`` counted on ``--public-counts`` training
  documents left out of the fitted subset, standing in for same-domain public text,
  ``PrivateBatchLDA+init``: ``init_topics`` fitted on them by scikit-learn's batch LDA,
  ``PrivateBatchLDA+init1``: the same with one model release at every epsilon, and
  ``PrivateBatchLDA+init+counts``: both; with ``+init`` the public topics alone are
  printed too),
- the expectation ``dptm.models.private_vb.expected_ratio`` (public inputs only).

Private fits use the secret generator (no seed); the median over ``--repeats`` fits is
printed with the range.

    python bench/bench_utility.py --set evaluation --repeats 3
    python bench/bench_utility.py --set tuning --corpus debian gcide --epsilons 1 4
    python bench/bench_utility.py --corpus synthetic --quick        # no corpus needed
    python bench/bench_utility.py --set evaluation --k 50 --vocabulary-size 10000 --epsilons 1 4
    python bench/bench_utility.py --set evaluation --corpus pydoc --timing --k 20 100 --epsilons 1 4
    python bench/bench_utility.py --corpus pydoc wordnet changelogs --models PrivateBatchLDA \
        PrivateBatchLDA+counts PrivateBatchLDA+init --public-counts 5000

``--timing`` prints instead the CPU seconds of a default PrivateBatchLDA fit at each of
``--epsilons`` and of scikit-learn's batch LDA, same K, same corpus, alternated in the same
run (median of ``--repeats``), and their ratio.
"""
import argparse
import json
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

from dptm import PrivateOnlineLDA  # noqa: E402
from dptm.datasets import make_lda_corpus  # noqa: E402
from dptm.metrics import npmi_coherence, perplexity  # noqa: E402
from dptm.models.private_vb import PrivateBatchLDA, expected_ratio  # noqa: E402
from dptm.release import fold_in  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpora  # noqa: E402  (bench/corpora.py: the tuning and evaluation sets)

EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
DELTA = 1e-5
K = 20
FLOOR_EPSILON = 1e5
TARGETS = {4.0: 1.25, 1.0: 1.6}          # on evaluation corpora of 15,000+ documents
# training documents kept per corpus (a seeded subset, corpora.load(max_docs=...)): the
# machine has 2 shared cores; every row of a corpus uses the same subset
MAX_DOCS = {"wordnet": 15000, "pydoc": 15000, "changelogs": 15000, "manpages": 1500,
            "gcide": 15000, "debian": 15000}


def synthetic(n_train):
    X, _, _ = make_lda_corpus(n_train + n_train // 10, 5000, 20, doc_length=80, random_state=0)
    return X[:n_train].tocsr(), X[n_train:].tocsr()


def load(name, quick, vocabulary_size=5000):
    if name == "synthetic":
        return synthetic(5000 if quick else 50000)
    c = corpora.load(name, vocabulary_size=vocabulary_size, max_docs=MAX_DOCS.get(name))
    return c.X_train.tocsr(), c.X_test.tocsr()


def evaluate(topic_word, Xte):
    tw = np.asarray(topic_word, dtype=np.float64)
    tw = tw / tw.sum(axis=1, keepdims=True)
    theta = fold_in(tw, Xte, 1.0 / tw.shape[0], 50, 0)
    return {"perplexity": float(perplexity(Xte, theta, tw)),
            "npmi": float(npmi_coherence(Xte, tw)) if tw.shape[0] > 1 else None}


def private_models(n_train, epochs, K, word_counts=None, init_topics=None):
    return {
        "PrivateBatchLDA": lambda eps: PrivateBatchLDA(K, target_epsilon=eps, target_delta=DELTA),
        # the rare words read from public counts (--public-counts)
        "PrivateBatchLDA+counts": lambda eps: PrivateBatchLDA(
            K, target_epsilon=eps, target_delta=DELTA, word_counts=word_counts),
        # public topics as the start (one release below epsilon 4, the searches from 4)
        "PrivateBatchLDA+init": lambda eps: PrivateBatchLDA(
            K, target_epsilon=eps, target_delta=DELTA, init_topics=init_topics),
        # the same with one release at every epsilon (the plan's choice below epsilon 4)
        "PrivateBatchLDA+init1": lambda eps: PrivateBatchLDA(
            K, target_epsilon=eps, target_delta=DELTA, init_topics=init_topics,
            schedule=[("counts", 1.0)]),
        "PrivateBatchLDA+init+counts": lambda eps: PrivateBatchLDA(
            K, target_epsilon=eps, target_delta=DELTA, init_topics=init_topics,
            word_counts=word_counts),
        # VIPS as its README example configures it, the corpus size declared public
        "PrivateOnlineLDA": lambda eps: PrivateOnlineLDA(
            K, target_epsilon=eps, target_delta=DELTA, batch_size=256, max_iter=epochs,
            max_doc_length=100, total_samples=n_train),
    }


def _repeat(make, Xtr, Xte, repeats):
    runs, t = [], time.process_time()
    for _ in range(repeats):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = make().fit(Xtr)
        runs.append(evaluate(m.components_, Xte))
    ppl = [r["perplexity"] for r in runs]
    return dict(perplexity=float(np.median(ppl)), perplexity_range=[min(ppl), max(ppl)],
                npmi=float(np.median([r["npmi"] for r in runs])),
                cpu_seconds=(time.process_time() - t) / repeats)


def run_corpus(name, quick, repeats, models, epsilons, vips_epochs, K=K, vocabulary_size=5000,
               floor=True, public_docs=None):
    from sklearn.decomposition import LatentDirichletAllocation
    try:
        Xtr, Xte = load(name, quick, vocabulary_size)
    except Exception as exc:       # corpora.Unavailable and a missing source
        print(f"\n== {name}: skipped: {exc}", flush=True)
        return None
    D, V = Xtr.shape
    sub = f" (seeded subset, max_docs={MAX_DOCS[name]})" if name in MAX_DOCS else ""
    print(f"\n== {name}: {D} training{sub} / {Xte.shape[0]} held-out documents, V = {V}, "
          f"{int(Xtr.sum())} training tokens, K = {K}", flush=True)
    rows = []
    t = time.process_time()
    ref = LatentDirichletAllocation(K, learning_method="batch", random_state=0).fit(Xtr)
    base = evaluate(ref.components_, Xte)
    rows.append(dict(model="non-private (sklearn batch VB)", epsilon=None, **base,
                     cpu_seconds=time.process_time() - t))
    print_row(rows[-1], flush=True)
    unigram = np.asarray(Xtr.sum(axis=0), dtype=np.float64) + 1.0 / K
    rows.append(dict(model="unigram", epsilon=None, **evaluate(unigram, Xte)))
    rows.append(dict(model="uniform", epsilon=None, perplexity=float(V), npmi=None))
    if floor:
        f = _repeat(lambda: PrivateBatchLDA(K, target_epsilon=FLOOR_EPSILON, target_delta=DELTA),
                    Xtr, Xte, 1)
        rows.append(dict(model="floor (PrivateBatchLDA, eps 1e5)", epsilon=None, **f,
                         ratio=f["perplexity"] / base["perplexity"]))
        print_row(rows[-1], flush=True)
    freq = init = None
    if any(m.startswith("PrivateBatchLDA+") for m in models):
        Xpub = corpora.public_documents(name, public_docs, vocabulary_size=vocabulary_size,
                                        max_docs=MAX_DOCS.get(name))
        freq = np.asarray(Xpub.sum(axis=0), dtype=np.float64).ravel()
        print(f"public text: {public_docs} training documents left out of the fitted subset",
              flush=True)
        if any("+init" in m for m in models):
            init = LatentDirichletAllocation(K, learning_method="batch",
                                             random_state=0).fit(Xpub).components_
            rows.append(dict(model=f"public topics alone ({public_docs} docs)", epsilon=None,
                             **evaluate(init, Xte)))
            print_row(rows[-1], flush=True)
    makers = private_models(D, vips_epochs, K, freq, init)
    for model in models:
        for eps in epsilons:
            r = _repeat(lambda: makers[model](eps), Xtr, Xte, repeats)
            rows.append(dict(model=model, epsilon=eps, **r,
                             ratio=r["perplexity"] / base["perplexity"],
                             expected=expected_ratio(D, eps, K, V) if model == "PrivateBatchLDA"
                             else None))
            print_row(rows[-1], flush=True)
    for r in rows:
        r["ratio"] = r["perplexity"] / base["perplexity"]
    unigram_ppl = rows[1]["perplexity"]
    print(f"\n{'model':34s} {'eps':>5s} {'perplexity':>11s} {'x non-private':>13s} "
          f"{'NPMI':>7s} {'expected':>8s}  target")
    for r in rows:
        print_row(r, unigram=unigram_ppl)
    return {"corpus": name, "n_train": D, "n_heldout": Xte.shape[0], "V": V, "K": K,
            "max_docs": MAX_DOCS.get(name), "rows": rows}


def run_timing(name, quick, repeats, K, vocabulary_size=5000, epsilons=(1.0,)):
    """CPU seconds of a default PrivateBatchLDA fit at each epsilon and of scikit-learn's
    batch LDA (its defaults), alternated in each repeat, same K and corpus; medians of
    ``repeats`` and their ratios."""
    from sklearn.decomposition import LatentDirichletAllocation
    Xtr, _ = load(name, quick, vocabulary_size)
    ours, ref = {eps: [] for eps in epsilons}, []
    for _ in range(repeats):
        t = time.process_time()
        LatentDirichletAllocation(K, learning_method="batch", random_state=0).fit(Xtr)
        ref.append(time.process_time() - t)
        for eps in epsilons:
            t = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                PrivateBatchLDA(K, target_epsilon=eps, target_delta=DELTA).fit(Xtr)
            ours[eps].append(time.process_time() - t)
    med = lambda v: float(np.median(v))  # noqa: E731
    print(f"{name} (D = {Xtr.shape[0]}, V = {Xtr.shape[1]}) K = {K}: sklearn batch "
          f"{med(ref):.1f} CPU s {[round(x, 1) for x in ref]}", flush=True)
    for eps, v in ours.items():
        print(f"  PrivateBatchLDA eps {eps:g}: {med(v):.1f} CPU s {[round(x, 1) for x in v]}, "
              f"ratio {med(v) / med(ref):.2f} (target <= 0.5)", flush=True)
    return {"corpus": name, "K": K, "sklearn_cpu": ref,
            "private_cpu": {str(e): v for e, v in ours.items()},
            "ratio": {str(e): med(v) / med(ref) for e, v in ours.items()}}


def print_row(r, flush=False, unigram=None):
    eps = "-" if r["epsilon"] is None else f"{r['epsilon']:g}"
    ratio = r.get("ratio")
    target = TARGETS.get(r["epsilon"]) if r["model"] == "PrivateBatchLDA" else None
    mark = "" if target is None else (f"<= {target}: " + ("met" if ratio <= target else "MISSED"))
    if unigram is not None and r["model"] == "PrivateBatchLDA":
        mark += (", " if mark else "") + ("better than unigram" if r["perplexity"] < unigram
                                          else "NOT better than unigram")
    fmt = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
    rng = r.get("perplexity_range")
    spread = f" [{rng[0]:.0f}-{rng[1]:.0f}]" if rng and rng[0] != rng[1] else ""
    print(f"{r['model']:34s} {eps:>5s} {r['perplexity']:11.1f} "
          f"{'-' if ratio is None else f'{ratio:.3f}':>13s} {fmt(r.get('npmi')):>7s} "
          f"{fmt(r.get('expected')):>8s}  {mark}{spread}", flush=flush)


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 4), squeeze=False)
    for ax, res in zip(axes[0], results):
        rows = res["rows"]
        for model in ("PrivateBatchLDA", "PrivateOnlineLDA"):
            pts = [(r["epsilon"], r["perplexity"]) for r in rows if r["model"] == model]
            if pts:
                ax.plot(*zip(*pts), marker="o", label=model)
        for r in rows:
            if r["epsilon"] is None:
                ax.axhline(r["perplexity"], ls="--" if r["model"] == "uniform" else ":",
                           color="grey" if r["model"] == "uniform" else "black", label=r["model"])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("total epsilon (document level, delta = 1e-5)")
        ax.set_ylabel("held-out perplexity")
        ax.set_title(f"{res['corpus']} (D = {res['n_train']}, V = {res['V']})")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot written to {path}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--set", choices=("tuning", "evaluation"), default="evaluation")
    p.add_argument("--corpus", nargs="*", default=None,
                   help="corpora (default: every corpus of --set; 'synthetic' needs none)")
    p.add_argument("--models", nargs="*", default=["PrivateBatchLDA"])
    p.add_argument("--epsilons", nargs="*", type=float, default=list(EPSILONS))
    p.add_argument("--repeats", type=int, default=3, help="private fits per cell (median)")
    p.add_argument("--vips-epochs", type=int, default=2)
    p.add_argument("--quick", action="store_true", help="5,000 synthetic documents only")
    p.add_argument("--k", nargs="*", type=int, default=[K], help="numbers of topics")
    p.add_argument("--vocabulary-size", type=int, default=5000)
    p.add_argument("--no-floor", action="store_true", help="skip the noise-free floor")
    p.add_argument("--public-counts", type=int, default=5000, metavar="N",
                   help="models PrivateBatchLDA+counts / +init: word_counts counted on, "
                        "init_topics fitted on N training documents the fitted subset "
                        "leaves out (same-domain public text)")
    p.add_argument("--timing", action="store_true",
                   help="CPU time of a default fit against sklearn's batch LDA instead")
    p.add_argument("--out", default=None, help="JSON results file")
    p.add_argument("--plot", default=None, help="PNG of perplexity against epsilon")
    a = p.parse_args()
    names = corpora.TUNING if a.set == "tuning" else corpora.EVALUATION
    chosen = ["synthetic"] if a.quick else (a.corpus or list(names))
    for c in chosen:
        if c != "synthetic" and c not in names:
            p.error(f"corpus {c!r} is not in the {a.set} set {names}")
    print(f"set: {a.set}; repeats: {a.repeats}; load: {os.getloadavg()}")
    if a.timing:
        results = [run_timing(c, a.quick, a.repeats, k, a.vocabulary_size, a.epsilons)
                   for c in chosen for k in a.k]
    else:
        results = [r for c in chosen for k in a.k
                   if (r := run_corpus(c, a.quick, a.repeats, a.models, a.epsilons,
                                       a.vips_epochs, k, a.vocabulary_size, not a.no_floor,
                                       a.public_counts))]
    print(f"load: {os.getloadavg()}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)
    if a.plot and not a.timing:
        plot(results, a.plot)


if __name__ == "__main__":
    main()
