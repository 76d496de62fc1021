"""Combining the stages' releases in PrivateBatchLDA's released topics (issue #15).

Every stage ends with a noisy release of (approximately) the same topic-word statistic on
a disjoint part of the documents; scaled to the whole corpus, they are independent
estimates with known noise variances (sigma_s / frac_s)^2. An inverse-variance weighted
average of them is post-processing (free in privacy); "adaptive" is the estimator's
``_combine_releases`` (earlier releases also weighted down by their measured bias). One
seeded fit per (epsilon, seed); every release is captured and each variant applied to the
same releases (identical noise).

    python bench/bench_combine_stages.py kos 1,4 [seeds]
    python bench/bench_combine_stages.py syn17 1,4       # make_lda_corpus, 17,000 documents
"""
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
warnings.simplefilter("ignore")
import bench_utility as B  # noqa: E402
import dptm.models.private_vb as P  # noqa: E402

corpus = sys.argv[1]
eps_list = [float(e) for e in sys.argv[2].split(",")]
seeds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
if corpus.startswith("syn"):
    Xtr, Xte = B.synthetic({"syn17": 17000, "syn5": 5000, "syn50": 50000}[corpus])
else:
    Xtr, Xte = B.CORPORA[corpus](False)
from sklearn.decomposition import LatentDirichletAllocation  # noqa: E402
lda = LatentDirichletAllocation(B.K, learning_method="batch", random_state=0).fit(Xtr)
base = B.evaluate(lda.components_, Xte)["perplexity"]
print(corpus, Xtr.shape, "nonpriv", round(base, 1), sys.argv[4:], flush=True)

rec = []
orig = P._denoise


def spy(est, sigma, eta, threshold, shrink=0.0):
    rec.append((est.copy(), sigma))
    return orig(est, sigma, eta, threshold, shrink)


P._denoise = spy
estimator_combination = P._combine_releases
# the fits themselves use the final release alone, so that every release is recorded raw
P._combine_releases = lambda releases, threshold: releases[-1]


def combine(releases, weights_scale):
    """Weighted average (weights scale_i / sigma_i^2) and its noise sd."""
    w = np.array([c / sig ** 2 for (_, sig), c in zip(releases, weights_scale)])
    w = w / w.sum()
    est = sum(wi * e for wi, (e, _) in zip(w, releases))
    return est, float(np.sqrt(sum(wi ** 2 * sig ** 2 for wi, (_, sig) in zip(w, releases))))


def finish(est, sig, eta, tau=3.0, sm=0.05):
    beta = orig(est, sig, eta, tau, 0.0)
    return beta + max(0.0, sm * sig - eta)


eta = 1.0 / B.K
stages = eval(sys.argv[4]) if len(sys.argv) > 4 else P.DEFAULT_STAGES
ends = np.cumsum([t for _, t in stages])


def last_k(k):
    # the last k releases of every earlier stage, and the final release
    return lambda r: tuple(r[j] for e in ends[:-1] for j in range(max(0, e - k), e)) + (r[-1],)


variants = {"final only": last_k(0)}   # the default is "last 1 ... + final", adaptive, tau 3
variants.update({f"last {k} of each earlier stage + final": last_k(k)
                 for k in range(1, max([t for _, t in stages[:-1]], default=0) + 1)})
for eps in eps_list:
    res = {}
    for seed in range(seeds):
        rec.clear()
        P.PrivateBatchLDA(B.K, target_epsilon=eps, target_delta=B.DELTA, stages=stages,
                          random_state=seed).fit(Xtr)
        assert len(rec) == ends[-1]
        for name, pick in variants.items():
            rl = pick(rec)
            for scale_name in ("ivw", "adaptive"):
                if len(rl) == 1 and scale_name != "ivw":
                    continue
                est, sig = (combine(rl, [1.0] * len(rl)) if scale_name == "ivw"
                            else estimator_combination(rl, 3.0))
                for tau in (2.0, 3.0):
                    key = (name, scale_name, tau)
                    res.setdefault(key, []).append(
                        B.evaluate(finish(est, sig, eta, tau), Xte)["perplexity"] / base)
    for k, v in res.items():
        print(corpus, eps, k, np.round(v, 3), round(float(np.mean(v)), 3), flush=True)
