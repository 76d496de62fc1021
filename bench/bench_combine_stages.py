"""Combining the stages' releases in PrivateBatchLDA's released topics (issue #15).

Every stage ends with a noisy release of (approximately) the same topic-word statistic on
a disjoint part of the documents; scaled to the whole corpus, they are independent
estimates with known noise variances (sigma_s / frac_s)^2. An inverse-variance weighted
average of them is post-processing (free in privacy). One seeded fit per (epsilon, seed);
every release is captured and each variant applied to the same releases (identical noise).

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


def combine(releases, weights_scale):
    """Weighted average (weights scale_i / sigma_i^2) and its noise sd."""
    w = np.array([c / sig ** 2 for (_, sig), c in zip(releases, weights_scale)])
    w = w / w.sum()
    est = sum(wi * e for wi, (e, _) in zip(w, releases))
    return est, float(np.sqrt(sum(wi ** 2 * sig ** 2 for wi, (_, sig) in zip(w, releases))))


def combine_adaptive(releases, tau=3.0):
    """Like ``combine``, but each earlier release's weight is 1 / (sigma_i^2 + b_i^2), b_i^2
    the mean squared difference from the final release beyond the noise, over the entries
    whose average passes the threshold (bias of the earlier estimate: older topics,
    distinct-word counts). Uses only the releases and their public sigmas."""
    ef, sf = releases[-1]
    w = []
    for e, sig in releases[:-1]:
        avg = 0.5 * (e + ef)
        sel = avg > tau * 0.5 * np.hypot(sig, sf)
        b2 = max(0.0, float(np.mean((e - ef)[sel] ** 2)) - sig ** 2 - sf ** 2) if sel.any() else 0.0
        w.append(1.0 / (sig ** 2 + b2))
    w.append(1.0 / sf ** 2)
    w = np.array(w) / sum(w)
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


variants = {"final only (default)": last_k(0)}
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
                            else combine_adaptive(rl))
                for tau in (2.0, 3.0):
                    key = (name, scale_name, tau)
                    res.setdefault(key, []).append(
                        B.evaluate(finish(est, sig, eta, tau), Xte)["perplexity"] / base)
    for k, v in res.items():
        print(corpus, eps, k, np.round(v, 3), round(float(np.mean(v)), 3), flush=True)
