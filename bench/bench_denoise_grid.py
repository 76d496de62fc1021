"""Grid over the post-processing of PrivateBatchLDA's final release (issue #15).

One private fit per (epsilon, seed); the final estimate (the last two releases
combined) is captured and every variant
(threshold, soft shrink, smoothing; all in noise standard deviations) is applied to the same
release, so the variants are compared on identical noise. Prints perplexity / non-private
(sklearn batch VB) per variant. Seeded fits (test mode): for measurement only.

    python bench/bench_denoise_grid.py kos 1,4
    python bench/bench_denoise_grid.py syn17 1,4     # make_lda_corpus, 17,000 documents
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
if corpus == "syn17":
    Xtr, Xte = B.synthetic(17000)
elif corpus == "syn5":
    Xtr, Xte = B.synthetic(5000)
else:
    Xtr, Xte = B.CORPORA[corpus](False)
from sklearn.decomposition import LatentDirichletAllocation  # noqa: E402
lda = LatentDirichletAllocation(B.K, learning_method="batch", random_state=0).fit(Xtr)
base = B.evaluate(lda.components_, Xte)["perplexity"]
print(corpus, Xtr.shape, "nonpriv", round(base, 1), flush=True)
rec = {}
orig = P._denoise
final = P._final_topics


def spy(est, sigma, eta, threshold):   # the final estimate (fits go through _final_topics)
    rec["last"] = (est.copy(), sigma, eta)
    return final(est, sigma, eta, threshold)


P._final_topics = spy
# (threshold, shrink, smoothing), in noise standard deviations; the default is (3, 0, 0.05)
variants = [(3, 0, .05), (3, 1, .05), (3, 2, .05), (2, 1, .05), (2.5, 1.5, .05), (3, 3, .05),
            (4, 2, .05), (3, 1, 0.0), (3, 1, .1)]
for eps in eps_list:
    res = {v: [] for v in variants}
    for seed in range(2):
        m = P.PrivateBatchLDA(B.K, target_epsilon=eps, target_delta=B.DELTA, random_state=seed).fit(Xtr)
        est, sig, eta = rec["last"]
        for (t, sh, sm) in variants:
            beta = orig(est, sig, eta, t, sh)
            beta = beta + max(0.0, sm * sig - eta)
            res[(t, sh, sm)].append(B.evaluate(beta, Xte)["perplexity"] / base)
    for v in variants:
        print(corpus, eps, v, np.round(res[v], 3), round(float(np.mean(res[v])), 3), flush=True)
