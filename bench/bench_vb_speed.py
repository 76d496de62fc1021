"""CPU time of a default PrivateBatchLDA fit against scikit-learn's batch LDA, same run.

For each corpus and K: scikit-learn's ``LatentDirichletAllocation(K,
learning_method="batch", n_jobs=1, random_state=0)`` (its other defaults: max_iter 10,
max_doc_update_iter 100, mean_change_tol 1e-3, priors 1 / K) and ``PrivateBatchLDA(K,
target_epsilon=eps, target_delta=1e-5, n_jobs=1)`` with its defaults (the secret generator),
alternated in every repeat on the same training matrix; the median over ``--repeats`` of
the CPU seconds (time.process_time: every thread of the process) and of the wall seconds,
and the ratio of the medians (issue 38's target: at most 0.5 at K = 20 and K = 100).
Training matrices as bench/bench_utility.py loads them (bench/corpora.py, V = 5,000, the
same seeded subsets).

    python bench/bench_vb_speed.py                               # kos nips pydoc wordnet, K 20 100
    python bench/bench_vb_speed.py --corpus kos --k 100 --epsilons 4 --phases

``--phases`` adds, for one PrivateBatchLDA fit per cell, the CPU seconds in the E-step
(``vb_statistic._estep``), the clipped statistic (``_clipped_sum``), the empirical-Bayes
denoising (``_eb_denoise``) and the rest.
"""
import argparse
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import bench_utility  # noqa: E402  (the same corpora and subsets as the utility bench)
from dptm.models import private_vb, vb_denoise, vb_statistic  # noqa: E402

CORPORA = ("kos", "nips", "pydoc", "wordnet")      # tuning: kos nips; evaluation: the others
TARGET = 0.5


def _timed(fit):
    t, w = time.process_time(), time.perf_counter()
    fit()
    return time.process_time() - t, time.perf_counter() - w


def _sklearn(K, X):
    from sklearn.decomposition import LatentDirichletAllocation
    return lambda: LatentDirichletAllocation(K, learning_method="batch", n_jobs=1,
                                             random_state=0).fit(X)


def _private(K, eps, X):
    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            private_vb.PrivateBatchLDA(K, target_epsilon=eps, target_delta=1e-5,
                                       n_jobs=1).fit(X)
    return fit


def phases(K, eps, X):
    """CPU seconds of one fit by phase (the functions wrapped where the fit looks them up)."""
    spent = {"E-step": 0.0, "clipped statistic": 0.0, "empirical Bayes": 0.0}
    patched = [(vb_statistic, "_estep", "E-step"),
               (vb_statistic, "_clipped_sum", "clipped statistic"),
               (vb_denoise, "_eb_denoise", "empirical Bayes")]
    saved = [(mod, name, getattr(mod, name)) for mod, name, _ in patched]

    def wrap(fn, key):
        def timed(*args, **kwargs):
            t = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[key] += time.process_time() - t
        return timed

    try:
        for (mod, name, key), (_, _, fn) in zip(patched, saved):
            setattr(mod, name, wrap(fn, key))
        total, _ = _timed(_private(K, eps, X))
    finally:
        for mod, name, fn in saved:
            setattr(mod, name, fn)
    spent["rest"] = total - sum(spent.values())
    return total, spent


def run(name, K, epsilons, repeats, with_phases):
    X, _ = bench_utility.load(name, False)
    ref, ours = [], {eps: [] for eps in epsilons}
    for _ in range(repeats):
        ref.append(_timed(_sklearn(K, X)))
        for eps in epsilons:
            ours[eps].append(_timed(_private(K, eps, X)))
    med = lambda runs, i: float(np.median([r[i] for r in runs]))  # noqa: E731
    print(f"{name} (D = {X.shape[0]}, V = {X.shape[1]}, {X.nnz} stored pairs) K = {K}: "
          f"sklearn batch {med(ref, 0):.1f} CPU s ({med(ref, 1):.1f} wall) "
          f"{[round(r[0], 1) for r in ref]}", flush=True)
    rows = []
    for eps, runs in ours.items():
        ratio = med(runs, 0) / med(ref, 0)
        print(f"  PrivateBatchLDA eps {eps:g}: {med(runs, 0):.1f} CPU s ({med(runs, 1):.1f} wall) "
              f"{[round(r[0], 1) for r in runs]}, ratio {ratio:.2f} CPU "
              f"({med(runs, 1) / med(ref, 1):.2f} wall), target <= {TARGET}: "
              + ("met" if ratio <= TARGET else "MISSED"), flush=True)
        rows.append(dict(corpus=name, K=K, epsilon=eps, ratio=ratio))
        if with_phases:
            total, spent = phases(K, eps, X)
            print("    one fit by phase (CPU s): " + ", ".join(
                f"{k} {v:.1f}" for k, v in spent.items()) + f" of {total:.1f}", flush=True)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", nargs="*", default=list(CORPORA))
    p.add_argument("--k", nargs="*", type=int, default=[20, 100])
    p.add_argument("--epsilons", nargs="*", type=float, default=[4.0, 1.0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--phases", action="store_true", help="CPU seconds per phase of one fit")
    a = p.parse_args()
    print(f"repeats {a.repeats}, n_jobs 1 for both, load {os.getloadavg()}", flush=True)
    rows = [r for c in a.corpus for k in a.k for r in run(c, k, a.epsilons, a.repeats, a.phases)]
    print(f"load {os.getloadavg()}; worst ratio {max(r['ratio'] for r in rows):.2f}")


if __name__ == "__main__":
    main()
