"""Document-level private batch variational Bayes for LDA (issue #15).

Each iteration runs the variational E-step on every document with the current topics,
scales every document's expected topic-word counts (a K x V matrix) to a fixed L2 norm,
sums them and releases the sum once with the exact (lattice) discrete Gaussian; the
topics are post-processing of the releases. After the first release each word's entries
are weighted before the scaling, rarer words (in the first release) more
(``_word_weights``), and the estimates unweighted again.

The total budget is split across the releases (sequential composition: the Gaussian
releases compose to one Gaussian whose 1 / z^2 is the sum of theirs), in the shares of a
public *schedule*: a few early releases find the topics, a larger last one estimates them.
Every release uses every document: a release on a share f of the documents keeps f^2 of
the squared signal-to-noise ratio, a release with a share f of the budget keeps f, so
splitting the documents across iterations (parallel composition, this module's earlier
design) is never better for a sum of per-document contributions; on 17,000 documents (K = 20, bench/bench_utility.py's
17k corpora) the schedule's perplexity is 4-15% below the former stages' (README).
"""
import math
from fractions import Fraction

import numpy as np
import scipy.sparse as sp
from scipy.special import psi

from .. import _svi
from .._random import private_fit, private_generator, public_seed
from .._threads import effective_n_jobs
from .._utils import check_count_matrix, check_positive, check_real
from ..mechanisms import lattice_gaussian
from ._base import TopicModelMixin

#: Default schedule: (statistic, share of the budget) per release, every release on every
#: document. "presence" counts each distinct word of a document once (more signal per unit
#: of sensitivity: finds the topics), "counts" counts tokens (estimates them). Chosen on
#: 17,000-document corpora (synthetic, and drawn from LDA fits of KOS and C50) at eps 1 and
#: 4 among 4-8 presence releases and 1-4 count releases (the variants and their figures
#: are in the README; bench/bench_utility.py measures the default).
DEFAULT_SCHEDULE = (("presence", 0.15),) * 4 + (("counts", 0.4),)
# Below this PUBLIC target epsilon the default schedule searches with one release fewer
# (three presence releases of 0.2, the same 0.6 of the budget): each search release is
# less noisy, which matters more than a fourth topic update when the noise dominates.
# Paired seeded fits on the 17k stand-ins at eps 1 (mean of 2-3, ratio to batch VB):
# synthetic17k 2.45 -> 2.34, kos-lda17k 1.647 -> 1.627, c50-lda17k 1.685 -> 1.686; at
# eps 4 four search releases stay better (kos-lda17k 1.401 vs 1.410 with three).
_FEW_SEARCH_EPSILON = 2.0
# From this PUBLIC target epsilon on, the same 0.6 of the budget is spent on eight presence
# releases of 0.075 (each search release is averaged with the one before, below): on real
# corpora of 15,000+ documents the topics are far from converged after four passes (short
# documents: Debian's descriptions, 37 tokens, reach 1.163x without noise in five
# releases), and from eps 4 the signal affords twice the passes. Session 15, paired seeded
# fits, ratio to batch VB, four releases of 0.15 -> eight of 0.075 averaged: eps 4 Debian
# 17,000 docs 1.3005 -> 1.279 (4 seeds), 33,613 docs 1.231 -> 1.189 (2), KOS-like 17k
# 1.280 -> 1.271 (4), synthetic 50k 1.091 -> 1.021 (2); eps 8 Debian 17k 1.188 -> 1.162
# (4), C50 1.406 -> 1.398 (8); worse on the small real corpora KOS (2,916 docs) 1.413 ->
# 1.434 (8), C50 (4,250) 1.563 -> 1.568 (8), at eps 8 KOS 1.268 -> 1.277, and on the
# corpora drawn from LDA fits with long or model-exact documents (C50-like 17k 1.243 ->
# 1.251 (4), synthetic 17k 1.141 -> 1.172 (6)). At eps 2 more releases lose (Debian 17k
# 1.415 -> 1.425 with eight).
_MANY_SEARCH_EPSILON = 4.0
_MANY_SEARCH_RELEASES = 8
_STATISTICS = ("presence", "counts")
# The released topics combine the last two releases (independent noise; the earlier one
# is biased by older topics and its statistic, which _combine_releases measures).
_COMBINED_RELEASES = 2

# sigma / g of the noise lattice in [2^13, 2^14): each contribution is rounded down to the
# lattice, which loses at most g per entry (a 1e-4 fraction of the noise) and cannot
# increase its norm; the exact discrete Gaussian sampler takes sigma / g <= 2^14.
_LATTICE_BITS = 13
_CHUNK_NNZ = 1 << 20   # E-step working set: about 1M (document, word) pairs at a time
# Threshold (in noise standard deviations) between releases, while the topics are searched
# for; a numeric ``threshold`` (e.g. 3) applies to the released topics. Measured on the 50,000-
# document synthetic corpus at eps = 1: 2 between releases beats 1 and 3 (644 / 648 / 753),
# 3 on the final release beats 2 (544 vs 589).
_SEARCH_THRESHOLD = 2.0
# Smoothing of the released topics, per entry, in noise standard deviations of the last
# release (at least ``topic_word_prior``): 0.05 gained 3% at eps = 1 and lost 1% at eps = 4
# on the 50,000-document corpus, and keeps small corpora from doing worse than uniform.
_NOISE_SMOOTHING = 0.05
# The released topics with ``threshold=None`` (the default): every entry by its
# empirical-Bayes posterior mean (spike at 0 and exponential slab per topic, fitted on the
# estimate itself), no threshold and no _NOISE_SMOOTHING (the posterior mean's small positive
# mass below the threshold already smooths, in proportion to each topic's fitted
# noise/signal), instead of the hard threshold at 3 sd + smoothing. bench/bench_denoise_eb.py,
# same noise, 2 seeds, perplexity / sklearn: kos-lda17k eps 1 1.650 -> 1.623, eps 4 1.401 ->
# 1.371; synthetic17k 2.446 -> 2.387, 1.346 -> 1.335; c50-lda17k 1.687 -> 1.633, 1.378 ->
# 1.370; KOS 2.221 -> 2.115, 1.543 -> 1.506; C50 2.095 -> 2.068, 1.777 -> 1.705; 50,000-
# document synthetic (1 seed) 1.433 -> 1.415, 1.110 -> 1.105.
_DEFAULT_THRESHOLD = 3.0    # the combination's bias-measuring entries when threshold=None
# From this PUBLIC target epsilon on, the first release (from the data-independent start)
# is post-processed by _shrink_to_word_means instead of the hard threshold. Paired seeded
# fits, ratio to batch VB, hard threshold -> shrunk: at eps 4 KOS 1.484 -> 1.430 (6 seeds),
# C50 1.699 -> 1.658 (4), 17k stand-ins (2 each) KOS-like 1.371 -> 1.329, C50-like
# 1.370 -> 1.328, synthetic 1.335 -> 1.187; at eps 2 KOS 1.680 -> 1.681; at eps 1 KOS
# 2.050 -> 2.148, C50 2.032 -> 2.060, KOS-like 1.532 -> 1.542, synthetic 1.80 -> 1.70: below
# 2 the first release is too noisy for its few percent of contrast to be found.
_SHRINK_FIRST_MIN_EPSILON = 2.0
# Words whose mean over the topics is at most this many of the mean's noise sd
# (sd / sqrt(K)) are dropped by _shrink_to_word_means (2, 3, none: 1.430, 1.438, 1.429 on KOS).
_FIRST_MEAN_THRESHOLD = 2.0
# From this PUBLIC target epsilon on, the search releases after the first keep the hard
# threshold's entries (above _SEARCH_THRESHOLD sd) but with their per-word shrunk values
# (_word_shrunk) instead of the raw ones. Paired seeded fits, ratio to batch VB, threshold ->
# shrunk kept entries, at eps 4 (two runs of different seeds where two are given): KOS
# 1.430 -> 1.421 (6 seeds) / 1.430 -> 1.432 (6), C50 1.658 -> 1.656 / 1.658 -> 1.642 (4),
# KOS-like 17k 1.326 -> 1.322 / 1.329 -> 1.320 (2), C50-like 1.298 -> 1.299 / 1.328 -> 1.297,
# synthetic 17k 1.254 -> 1.246 / 1.187 -> 1.187, synthetic 50k 1.124 -> 1.120; at eps 8 KOS
# 1.292 -> 1.283, C50 1.510 -> 1.508, KOS-like 1.278 -> 1.272; at eps 3 KOS 1.507 -> 1.497
# but C50 1.709 -> 1.715, KOS-like 1.355 -> 1.357; at eps 2 no gain.
_SHRINK_SEARCH_MIN_EPSILON = 4.0
# With that per-word shrinkage, the search releases keep the entries above this many noise
# sd (instead of _SEARCH_THRESHOLD): the shrinkage already discounts a word's noisy spread
# over its topics, so the hard cut can keep more of a word's topics. Session 13, paired
# seeded fits at eps 4, ratio to batch VB, 2 -> 1.25 (-> 1.0): Debian descriptions (a real
# corpus) 33,613 docs 1.284 -> 1.261 (1.254) (4 seeds), 17,000 docs 1.340 -> 1.320 (1.319)
# (4), KOS-like 17k 1.324 -> 1.291 (1.290) (4), C50-like 1.300 -> 1.263 (1.258) (4),
# synthetic 17k 1.220 -> 1.191 (1.190) (2), C50 1.600 -> 1.578 (1.579) (8); worse on KOS
# (2,916 docs) 1.422 -> 1.449 (1.463) (8) and synthetic 50k 1.120 -> 1.128 (1.145) (2). At
# eps 2 (hard threshold, no shrinkage) a lower threshold loses (Debian 17k 1.443 -> 1.481).
# Session 15, with the eight averaged search releases (less noise in each averaged
# estimate), 1.25 -> 1.0: eps 4 Debian 17k 1.279 -> 1.274 (4 seeds), 33k 1.189 -> 1.175
# (2), KOS-like 1.271 -> 1.267 (4), C50-like 1.251 -> 1.241 (4), synthetic 50k 1.0205 ->
# 1.0191 (2), C50 1.568 -> 1.559 (8); eps 8 Debian 17k 1.162 -> 1.151 (4); worse on KOS
# 1.434 -> 1.444 (8; eps 8 1.2766 -> 1.2779) and synthetic 17k 1.181 -> 1.188 (4).
_SHRUNK_SEARCH_THRESHOLD = 1.0
# From this PUBLIC target epsilon on (without public init_topics), the last
# _EB_SEARCH_RELEASES search releases keep the same entries (above _SHRUNK_SEARCH_THRESHOLD
# sd) but with their empirical-Bayes posterior means (_eb_denoise, per topic, as the
# released topics) instead of the per-word shrunk values: these are the topics the final
# count release's E-step reads. Session 16, paired seeded fits at eps 4, ratio to batch VB,
# shrunk -> posterior means: Debian 17,000 docs 1.274 -> 1.238 (4 seeds), KOS 1.444 ->
# 1.405 (8), but C50 1.559 -> 1.567 (8), KOS-like 17k 1.271 -> 1.277 (2); every entry its
# posterior mean (no cut): Debian 17k 1.235, KOS 1.416, but C50 1.583, KOS-like 1.291; the
# last four search releases 1.2415, every one after the first 1.297 (Debian 17k). With
# _FIT_DOC_TOPIC_PRIOR below, the two together in the README.
# At eps 2 (four search releases of 0.15, hard 2 sd threshold before), with the prior below,
# both changes: Debian 17k 1.415 -> 1.368 (4), KOS-like 1.383 -> 1.379, synthetic 17k 1.362
# -> 1.360 (2 each), KOS 1.625 -> 1.628, C50 1.731 -> 1.734 (8 each), C50-like 1.422 ->
# 1.436 (2); with the 2 sd cut instead of 1: Debian 17k 1.390.
_EB_SEARCH_MIN_EPSILON = 2.0
_EB_SEARCH_RELEASES = 2
# From this PUBLIC target epsilon on (without doc_topic_prior or init_topics), the fit's
# E-step uses the document-topic prior _FIT_DOC_TOPIC_PRIOR instead of 1 / K: spread
# responsibilities put more topic mass into a document's norm (a one-hot responsibility
# vector has norm 1, a spread one less) and keep early, noisy topics from locking a
# document onto one topic. ``transform`` keeps doc_topic_prior_. Session 16, paired seeded
# fits, ratio to batch VB, prior 0.05 -> 0.35 at eps 4, K = 20: Debian 17,000 docs 1.274 ->
# 1.253 (4 seeds), 33,613 docs 1.175 -> 1.157 (2), Debian cut to 12 tokens a document
# 1.201 -> 1.161 (4), C50-like 17k 1.250 -> 1.230 (2), synthetic 17k 1.225 -> 1.138 (2),
# KOS-like 17k 1.271 -> 1.268 (2); worse on synthetic 50k 1.019 -> 1.036 (2) and the small
# real corpora KOS (2,916 docs) 1.444 -> 1.455, C50 (4,250) 1.559 -> 1.565 (8 each); at eps
# 8 Debian 17k 1.151 -> 1.136, KOS-like 1.236 -> 1.220, KOS 1.278 -> 1.286, C50 1.378 ->
# 1.387. Debian 17k with 0.2 / 0.5 / 1.0: 1.265 / 1.301 / 1.703; a prior proportional to
# the document's length (0.19 n_d / K): 1.259, but C50-like 1.682. Per topic, not per K:
# Debian 17k perplexity with the posterior-mean searches above, default -> 0.35 (-> 7 / K):
# K = 5 1224 -> 1221 (4 seeds), K = 10 1072 -> 1055 (1142 with 0.7, 4), K = 50 797 -> 652
# (674 with 0.14, 2), K = 100 727 -> 490 (2). From eps 2 (the figures with both changes
# above); at eps 1 not adopted (Debian 17k 1.602 -> 1.576, synthetic 17k 2.235 -> 2.384, KOS
# 2.007 -> 2.013).
_FIT_PRIOR_MIN_EPSILON = 2.0
_FIT_DOC_TOPIC_PRIOR = 0.35
# Without public init_topics, each search release from the third on is averaged with the
# one before (_combine_releases: independent noise, the earlier one weighted by its noise
# variance plus its measured excess difference) before the threshold. Paired seeded fits,
# ratio to batch VB, threshold -> combined: at eps 2 KOS 1.680 -> 1.657 (4 seeds), C50
# 1.815 -> 1.801 (4), KOS-like 17k 1.396 -> 1.392 (2), C50-like 1.439 -> 1.438 (2),
# synthetic 17k 1.424 -> 1.422 (2), synthetic 50k 1.167 -> 1.169 (2); at eps 3 KOS 1.507
# -> 1.494 (6), C50 1.709 -> 1.707 (4); at eps 1 (session 12; the third of three search
# releases) KOS 2.048 -> 2.033 (16), C50 2.032 -> 2.011 (16), KOS-like 1.587 -> 1.583
# (12), C50-like 1.635 -> 1.642 (8), synthetic 17k 2.284 -> 2.294 (2), synthetic 50k 1.474
# -> 1.477 (2); at eps 0.5 KOS 2.420 -> 2.429 (16), C50 2.353 -> 2.325 (16), KOS-like
# 1.817 -> 1.790 (6), C50-like 1.767 -> 1.757 (6), synthetic 50k 1.858 -> 1.864 (2): real
# corpora gain 0.7-1.4% but for KOS at 0.5, model-drawn ones -1.5% to +0.4%. From eps 4
# (session 12, four search releases, with the shrunk kept entries) it gained on KOS (1.420
# -> 1.410, 16 seeds) but lost on C50 at eps 8 (1.507 -> 1.511, 16) and 0.1-0.2% on the
# 17k stand-ins; since session 15 it applies there too, where the eight search releases of
# 0.075 need it (Debian 17k at eps 4: eight releases 1.293 alone, 1.279 averaged; four
# releases of 0.15 averaged or not: KOS-like 1.288 / 1.285, C50-like 1.249 / 1.249, KOS
# 1.415 / 1.413).


def _denoise(est, sigma, eta, threshold, shrink=0.0):
    """Post-processing of a released (rescaled) statistic ``est`` whose noise has standard
    deviation ``sigma``: entries at or below ``threshold * sigma`` set to zero, the others
    lowered by ``shrink * sigma`` (0 in fits: shrinking gained at most 1.5%,
    bench/bench_denoise_grid.py), plus the prior ``eta``. A deterministic function of the
    release and public parameters only (free in privacy)."""
    kept = est > threshold * sigma
    return eta + np.where(kept, np.maximum(est - shrink * sigma, 0.0), 0.0)


def _combine_releases(releases, threshold):
    """Weighted average of independent releases ``[(est, sd), ...]`` (each scaled to the
    corpus, noise sd ``sd``), the final release last; returns (estimate, its noise sd).

    Earlier releases estimate the statistic with a bias (older topics; distinct-word
    counts), so release i gets weight 1 / (sd_i^2 + b_i^2), the final one 1 / sd_f^2, where
    b_i^2 is the mean squared difference from the final release in excess of the noise,
    over the entries whose mean passes ``threshold`` noise sd. A deterministic function of
    the releases and their public noise scales (free in privacy)."""
    est_f, sd_f = releases[-1]
    # variances in units of sd_f^2: sd^2 itself overflows for sd > 1e154 (a clip_norm above
    # ~1e153), which made every weight 0 and the release NaN, then all-prior (review s8 F2)
    w = []
    for est, sd in releases[:-1]:
        r = sd / sd_f
        sel = 0.5 * (est + est_f) > threshold * 0.5 * math.hypot(sd, sd_f)
        b2 = 0.0
        if sel.any():
            b2 = max(0.0, float(np.mean(((est - est_f)[sel] / sd_f) ** 2)) - r * r - 1.0)
        w.append(1.0 / (r * r + b2))
    w.append(1.0)
    w = np.array(w) / sum(w)
    combined = sum(wi * est for wi, (est, _) in zip(w, releases))
    sd = sd_f * math.sqrt(sum(wi * wi * (s / sd_f) ** 2 for wi, (_, s) in zip(w, releases)))
    return combined, sd


def _eb_log_densities(y, s, lam):
    """log densities of observations y = t + N(0, s^2) under the spike (t = 0) and under
    the slab (t ~ Exponential(rate lam)): the normal, and the exponentially modified
    normal log(lam) + (lam s)^2 / 2 - lam y + log Phi(y / s - lam s)."""
    from scipy.special import log_ndtr
    z = y / s
    l0 = -0.5 * z * z - 0.5 * math.log(2 * math.pi) - math.log(s)
    l1 = np.log(lam) + 0.5 * (lam * s) ** 2 - lam * y + log_ndtr(z - lam * s)
    return l0, l1


def _eb_fit_row(y, s, lam_scale):
    """Maximum-likelihood (p, lam) of the spike-and-slab prior of one topic's entries:
    t = 0 with probability 1 - p, else t ~ Exponential(rate lam / lam_scale) (lam_scale: a
    per-entry public or released scale, 1 for none), observed as y = t + N(0, s^2)."""
    from scipy.optimize import minimize
    big = y > 3 * s
    p0 = min(0.5, max(1e-3, float(big.mean())))
    mu0 = float((y[big] / lam_scale[big]).mean()) if big.any() else s

    lo = np.array([-20.0, math.log(1e-3 * s)])
    hi = np.array([20.0, math.log(1e6 * s)])

    def nll(par):
        par = np.clip(par, lo, hi)     # p in (2e-9, 1 - 2e-9); slab mean in [1e-3, 1e6] s
        p = 1.0 / (1.0 + math.exp(-par[0]))
        l0, l1 = _eb_log_densities(y, s, math.exp(-par[1]) / lam_scale)
        return -float(np.logaddexp(math.log1p(-p) + l0, math.log(p) + l1).sum())

    x0 = np.clip([math.log(p0 / (1 - p0)), math.log(max(mu0, 1e-3 * s))], lo, hi)
    res = minimize(nll, x0, method="Nelder-Mead",
                   options={"xatol": 1e-4, "fatol": 1e-6, "maxiter": 400})
    par = np.clip(res.x if res.fun <= nll(x0) else x0, lo, hi)
    return 1.0 / (1.0 + math.exp(-par[0])), math.exp(-par[1]) / lam_scale


def _eb_posterior_mean(y, s, p, lam):
    """E[t | y] under t = 0 w.p. 1 - p, t ~ Exponential(lam) w.p. p, y = t + N(0, s^2):
    the slab's posterior is a normal of mean m = y - lam s^2 truncated to t >= 0, whose
    mean is m + s phi(m/s) / Phi(m/s), times the posterior probability of the slab."""
    from scipy.special import expit, log_ndtr
    l0, l1 = _eb_log_densities(y, s, lam)
    slab = expit(math.log(p) + l1 - math.log1p(-p) - l0)
    u = y / s - lam * s
    mills = np.exp(-0.5 * u * u - 0.5 * math.log(2 * math.pi) - log_ndtr(u))
    return slab * np.maximum(s * (u + mills), 0.0)


def _eb_denoise(est, sigma, eta, column_scale=False):
    """Empirical-Bayes posterior mean of every entry of a release ``est`` (noise sd
    ``sigma``), the spike-and-slab prior fitted by maximum likelihood per topic (row),
    plus the prior ``eta``. ``column_scale``: the slab mean of entry (k, w) proportional to
    word w's released column total (its K entries summed: noise sd sqrt(K) sigma), so
    rare words shrink harder. A deterministic function of the release and public
    parameters (free in privacy)."""
    est = np.asarray(est, dtype=np.float64)
    K, V = est.shape
    if column_scale:
        col = est.sum(axis=0) / K
        scale = np.maximum(col, math.sqrt(K) * sigma / K)
        scale = scale / scale.mean()
    else:
        scale = np.ones(V)
    out = np.empty_like(est)
    for k in range(K):
        p, lam = _eb_fit_row(est[k], sigma, scale)
        out[k] = _eb_posterior_mean(est[k], sigma, p, lam)
        if not np.all(np.isfinite(out[k])):     # never seen; fail safe to the hard threshold
            out[k] = np.where(est[k] > 3 * sigma, est[k], 0.0)
    return eta + out


def _word_shrunk(est, sd):
    """Every word's deviations from its mean over the K topics (rows of ``est``, noise sd
    ``sd``) shrunk by the positive-part James-Stein factor max(0, 1 - sd^2 / s_w^2), s_w^2
    their sample variance over the topics; clipped at 0. Needs K >= 2."""
    K = est.shape[0]
    mean = est.mean(axis=0)
    dev = est - mean
    z = dev / sd                   # in noise sd: sd^2 itself overflows for sd > 1e154
    ratio = np.einsum("kw,kw->w", z, z) / (K - 1)          # s_w^2 / sd^2
    keep = 1.0 - 1.0 / np.maximum(ratio, 1.0)
    return np.maximum(mean + keep * dev, 0.0), mean


def _shrink_to_word_means(est, sd, eta, mean_threshold=_FIRST_MEAN_THRESHOLD):
    """The topics after the first search release ``est`` (K x V, noise sd ``sd``), computed
    from the near-uniform, data-independent start.

    In that release a word's K entries are its mean over the topics plus a contrast of a
    few percent (one power-iteration step of the word co-occurrences), below the noise for
    most words; the hard threshold turns the noise into topic preferences (a word above
    2 sd in some topics and zeroed in others) that seed the next releases. Here every
    word's entries are ``_word_shrunk`` (James-Stein towards the word's mean over the
    topics), so a word whose entries differ by no more than the noise gets no topic
    preference; words whose mean is at most ``mean_threshold`` times its noise sd
    (sd / sqrt(K)) are set to 0, and the prior ``eta`` is added. A deterministic function
    of the release and public parameters (free in privacy)."""
    est = np.asarray(est, dtype=np.float64)
    K = est.shape[0]
    if K < 2:                       # one topic: no profile to shrink
        return _denoise(est, sd, eta, _SEARCH_THRESHOLD)
    out, mean = _word_shrunk(est, sd)
    out[:, mean <= mean_threshold * sd / math.sqrt(K)] = 0.0
    return eta + out


def _search_denoise(est, sd, eta, shrink=False):
    """The topics between releases from a search release ``est`` (noise sd ``sd``): the
    entries above ``_SEARCH_THRESHOLD`` sd, the others 0, plus the prior ``eta``. With
    ``shrink`` (and K >= 2) the entries above ``_SHRUNK_SEARCH_THRESHOLD`` sd are kept,
    with their ``_word_shrunk`` values instead of the raw ones: the threshold decides which
    topics use a word (the topics are sparse after the first release), the shrinkage how
    much of its noisy spread over them to trust. Free in privacy (post-processing)."""
    est = np.asarray(est, dtype=np.float64)
    if not shrink or est.shape[0] < 2:
        return _denoise(est, sd, eta, _SEARCH_THRESHOLD)
    return eta + np.where(est > _SHRUNK_SEARCH_THRESHOLD * sd, _word_shrunk(est, sd)[0], 0.0)


def _eb_search_denoise(est, sd, eta):
    """The topics after one of the last search releases ``est`` (noise sd ``sd``, from
    epsilon 2): the entries above ``_SHRUNK_SEARCH_THRESHOLD`` sd with their empirical-Bayes
    posterior means (``_eb_denoise``, the prior fitted per topic on the whole release), the
    others 0, plus the prior ``eta``. Free in privacy (post-processing)."""
    return np.where(est > _SHRUNK_SEARCH_THRESHOLD * sd, _eb_denoise(est, sd, eta), eta)


def _final_topics(est, sd, eta, threshold):
    """The released topics from the last estimate ``est`` (noise sd ``sd``).

    ``threshold`` None: every entry replaced by its empirical-Bayes posterior mean
    (``_eb_denoise``) plus the prior ``eta``; entries the noise dominates get a small
    positive mass (a data-adaptive smoothing: where the noise dominates, a small corpus or
    a small epsilon, the topics tend to the uniform model). A number: entries at or below
    ``threshold`` sd zeroed, plus ``eta``, then smoothed by ``_NOISE_SMOOTHING`` sd. A
    deterministic function of the estimate and public parameters (free in privacy)."""
    if threshold is None:
        return _eb_denoise(est, sd, eta)
    beta = _denoise(est, sd, eta, threshold)
    return beta + max(0.0, _NOISE_SMOOTHING * sd - eta)


def _word_weights(est, sd):
    """Per-word weights of the later releases from the first release ``est`` (K x V, noise
    sd ``sd``): f_w^-_WORD_WEIGHT_POWER, f_w the word's released total floored at
    _WORD_WEIGHT_FLOOR times its noise sd (sqrt(K) sd), scaled so that sum_w f_w w_w =
    sum_w f_w (the pseudo-counts keep their scale). Positive and finite; a deterministic
    function of the release and public parameters (free in privacy)."""
    K = est.shape[0]
    total = np.maximum(np.asarray(est, dtype=np.float64).sum(axis=0),
                       _WORD_WEIGHT_FLOOR * math.sqrt(K) * sd)
    weights = total ** -_WORD_WEIGHT_POWER
    return weights * (total.sum() / (total * weights).sum())


def _unweighted(beta, eta, weights):
    """Topics ``beta`` = eta + x post-processed from weighted releases (``_word_weights``;
    None: unweighted, returned as is) back in pseudo-counts: eta + x / weights."""
    return beta if weights is None else eta + (beta - eta) / weights


def _granularity(sigma):
    return math.ldexp(1.0, math.frexp(sigma)[1] - 1 - _LATTICE_BITS)


def _exp_dirichlet(x):
    return np.exp(psi(x) - psi(x.sum(axis=-1, keepdims=True)))


def _estep(X, exp_elog_beta_t, alpha, max_iter=50, tol=1e-3, n_threads=1):
    """Variational E-step of the documents of CSR ``X`` (Cython kernel ``lda_e_step``).

    Returns ``(exp_elog_theta, phinorm, rows)``: exp(E[log theta]) per document (D x K),
    per stored (document, word) pair the normaliser sum_k exp(E log theta_dk) exp(E log
    beta_kw), and the pair's document index. Each document starts from gamma = alpha +
    N_d / K and stops when the mean absolute change of its gamma is below ``tol``."""
    D = X.shape[0]
    K = exp_elog_beta_t.shape[1]
    lengths = np.asarray(X.sum(axis=1), dtype=np.float64).reshape(-1, 1)
    gamma = np.ascontiguousarray(np.full((D, K), alpha) + lengths / K)
    _svi.lda_e_step(X.indptr.astype(np.int64), X.indices.astype(np.int32),
                    X.data.astype(np.float64), np.arange(D, dtype=np.int64),
                    exp_elog_beta_t, gamma, float(alpha), tol=tol, max_iter=max_iter,
                    n_threads=n_threads)
    rows = np.repeat(np.arange(D), np.diff(X.indptr))
    et = _exp_dirichlet(gamma)
    phinorm = np.einsum("ik,ik->i", et[rows], exp_elog_beta_t[X.indices]) + 1e-100
    return et, phinorm, rows


def _expected_counts(X, beta, alpha, norm, granularity=None, presence=False, n_threads=1,
                      word_weight=None):
    """Sum over the documents of CSR ``X`` of their expected K x V topic-word counts, each
    document's contribution scaled to L2 norm ``norm`` (empty documents contribute 0).

    ``presence=True`` counts each distinct word of a document once (its topic
    responsibilities, summing to one) instead of its count: repeated words then weigh
    less in the norm, so a document carries more signal per unit of sensitivity; the
    early releases use it to find the topics, the last one estimates them from counts.

    ``word_weight`` (V positive weights, optional) multiplies each word's entries before
    the contribution is scaled: the norm is still ``norm``, and the sum estimates the
    weighted statistic (see ``_word_weights``).

    With ``granularity`` g, every entry of every contribution is rounded DOWN to a
    multiple of g before summing: the rounded contribution's norm is at most ``norm``
    (entries are non-negative) and the sum is an exact multiple of g, so the lattice
    release needs no rounding slack. This is the per-block statistic of a distributed fit:
    the sum over blocks equals the statistic of their union.
    """
    X = sp.csr_matrix(X)
    if not X.has_canonical_format:
        # a word stored twice in a row would add its contributions in one cell after the
        # norm was taken over them apart: sqrt(2) times the sensitivity (review finding R3)
        X = X.copy()
        X.sum_duplicates()
    K, V = beta.shape
    if word_weight is not None:
        # public (post-processing of a release): refusing bad weights reveals nothing, while
        # an inf weight would make a NaN contribution in exactly the documents holding
        # that word (review s14)
        word_weight = np.asarray(word_weight, dtype=np.float64)
        if word_weight.shape != (V,) or not np.all(np.isfinite(word_weight) & (word_weight > 0)):
            raise ValueError("word_weight must hold V finite positive weights")
    eb_t = np.ascontiguousarray(_exp_dirichlet(beta).T)      # V x K
    stat = np.zeros((K, V))
    D = X.shape[0]
    start = 0
    while start < D:   # documents in chunks of about _CHUNK_NNZ stored pairs
        stop = int(np.searchsorted(X.indptr, X.indptr[start] + _CHUNK_NNZ, side="right"))
        stop = min(D, max(stop - 1, start + 1))
        Xc = X[start:stop]
        et, phinorm, rows = _estep(Xc, eb_t, alpha, n_threads=n_threads)
        # contribution of pair (d, w) to topic k: n_dw et[d, k] eb[w, k] / phinorm_dw
        weight = (1.0 if presence else Xc.data) / phinorm
        if word_weight is not None:
            weight = weight * word_weight[Xc.indices]
        contrib = et[rows] * eb_t[Xc.indices] * weight[:, None]
        # Each document divided by its largest entry first: when every pair's normaliser
        # sits at its 1e-100 floor (K >~ 250, words outside every live topic) the entries
        # are ~1e-160 and the sum of their squares is subnormal, so its square root - and
        # the scaled norm - would be off by up to 1e-10 relative (review finding R2).
        starts = np.flatnonzero(np.diff(Xc.indptr))         # non-empty documents
        peak = np.zeros(Xc.shape[0])
        if starts.size:
            peak[starts] = np.maximum.reduceat(contrib.max(axis=1), Xc.indptr[starts])
        contrib /= np.where(peak > 0, peak, 1.0)[rows][:, None]
        sq = np.bincount(rows, (contrib * contrib).sum(axis=1), minlength=Xc.shape[0])
        length = np.sqrt(sq)
        # a hair below ``norm``: the floating-point scaling can never end above the bound
        scale = np.divide(norm * (1 - 2.0 ** -40), length, out=np.zeros_like(length),
                          where=length > 0)
        contrib *= scale[rows][:, None]
        if granularity is not None:
            contrib = np.floor(contrib / granularity)
            # np.where, not a product: a failed document's NaN times 0 is still NaN
            ok = _within_norm(contrib, Xc.indptr, norm / granularity)[rows] > 0
            contrib = np.where(ok[:, None], contrib, 0.0)
            contrib *= granularity
        for k in range(K):
            stat[k] += np.bincount(Xc.indices, contrib[:, k], minlength=V)
        start = stop
    return stat


def _within_norm(m, indptr, bound):
    """1.0 for each document whose lattice contribution ``m`` (integers, as floats) has
    L2 norm at most ``bound`` (= norm / g), checked in exact integer arithmetic, else 0.0:
    such a document (never seen: floating-point error far below the 2^-40 margin) is
    dropped rather than allowed to exceed its sensitivity."""
    if not bound < 2.0 ** 31:
        # entries <= bound and sums of squares <= bound^2 (1 + tiny) must fit in int64;
        # bound depends only on public parameters (norm / sigma), so raising leaks nothing
        raise ValueError(f"noise too small for the clip norm (norm / lattice step = {bound:.3g} "
                         ">= 2^31): lower target_epsilon")
    ok = np.ones(len(indptr) - 1)
    starts = np.flatnonzero(np.diff(indptr))
    if not starts.size:
        return ok
    # NaN, inf or an entry above the bound would cast to garbage or square past 2^63 and
    # wrap (2^40 squared is 0 in int64), passing the check (review s8 F1): such a pair is
    # zeroed for the integer sum and its document failed. A float pre-screen of the sum
    # (relative error << 2^-10) keeps the integer sums below 2^63 (limit < 2^62).
    sane = np.isfinite(m).all(axis=1) & (np.abs(m) <= bound).all(axis=1)
    m = np.where(sane[:, None], m, 0.0)
    fsq = np.add.reduceat((m * m).sum(axis=1), indptr[starts])
    bad = (np.add.reduceat((~sane).astype(np.int64), indptr[starts]) > 0) \
        | ~(fsq <= bound * bound * (1 + 2.0 ** -10))
    m[np.repeat(bad, np.diff(indptr)[starts])] = 0.0
    mi = m.astype(np.int64)
    sq = np.add.reduceat((mi * mi).sum(axis=1), indptr[starts])
    sq[bad] = np.iinfo(np.int64).max
    limit = math.floor(Fraction(bound) ** 2)     # sum m^2 <= bound^2, exactly
    ok[starts] = (sq <= limit).astype(np.float64)
    return ok


def _release(stat, sigma, gen, granularity):
    """Lattice Gaussian release of ``stat``; returns (noisy, granularity, effective sigma)."""
    return lattice_gaussian(stat, sigma, gen, granularity=granularity)


# Word weights of the releases after the first (schedules of 3+ releases): each word's
# entries in a document's contribution are multiplied by f_w^-_WORD_WEIGHT_POWER before
# the contribution is scaled to ``clip_norm``, f_w the word's total in the first release
# (its K entries summed; noise sd sqrt(K) sd), floored at _WORD_WEIGHT_FLOOR of that sd;
# the estimates are divided by the weights again. A document then spends more of its norm
# on its rarer words, whose few occurrences the noise otherwise drowns, and less on the
# frequent ones, which have signal to spare: with noise of the same sd on every entry, the
# weights w_w ∝ f_w^-1/2 minimise the summed squared relative error of the entries for a
# given norm (the power trades that against the frequent words' share of the tokens).
# Session 14, paired seeded fits, ratio to batch VB, unweighted -> power 0.35 (-> 0.5), 2
# seeds (Debian 17,000 4, synthetic 50k 1): at eps 4 Debian 33,613 1.264 -> 1.231, Debian
# 17,000 1.326 -> 1.301, synthetic 50k 1.087 -> 1.044, KOS-like 17k 1.294 -> 1.285
# (1.290), C50-like 1.267 -> 1.249 (1.263), synthetic 17k 1.191 -> 1.139 (1.133), KOS
# 1.451 -> 1.418 (1.415), C50 1.594 -> 1.574 (1.583); at eps 1 Debian 33,613 1.527 ->
# 1.499, 17,000 1.636 -> 1.602 (1.595), synthetic 50k 1.430 -> 1.400, KOS-like 1.585 ->
# 1.580 (1.608), C50-like 1.667 -> 1.680 (1.703),
# synthetic 17k 2.294 -> 2.235 (2.225), KOS 2.032 -> 1.997 (1.986), C50 1.951 -> 1.951
# (1.963); eps 0.5, 2 and 8 in the README.
_WORD_WEIGHT_POWER = 0.35
_WORD_WEIGHT_FLOOR = 2.0


def default_schedule(target_epsilon):
    """The schedule ``PrivateBatchLDA`` uses when none is given: a function of the
    PUBLIC target epsilon only (so it costs no privacy).

    Below epsilon 2, three presence releases of 0.2 of the budget and one count release
    of 0.4; from 2, ``DEFAULT_SCHEDULE`` (four presence releases of 0.15, one count
    release of 0.4); from 4, eight presence releases of 0.075 and one count release of
    0.4.

    Parameters
    ----------
    target_epsilon : float
        The fit's total epsilon (> 0).

    Returns
    -------
    tuple of (statistic, share)
    """
    eps = check_positive(target_epsilon, "target_epsilon")
    if eps < _FEW_SEARCH_EPSILON:
        return (("presence", 0.2),) * 3 + (("counts", 0.4),)
    if eps < _MANY_SEARCH_EPSILON:
        return DEFAULT_SCHEDULE
    return ((("presence", 0.6 / _MANY_SEARCH_RELEASES),) * _MANY_SEARCH_RELEASES
            + (("counts", 0.4),))


def _check_schedule(schedule, target_epsilon=None):
    """Validated schedule as a list of (presence: bool, share), shares summing to one;
    None: ``default_schedule(target_epsilon)`` (``DEFAULT_SCHEDULE`` without one)."""
    if schedule is None:
        schedule = (DEFAULT_SCHEDULE if target_epsilon is None
                    else default_schedule(target_epsilon))
    try:
        out = []
        for item in schedule:
            statistic, share = item
            if statistic not in _STATISTICS:
                raise ValueError(f"statistic must be one of {_STATISTICS}, got {statistic!r}")
            out.append((statistic == "presence", check_positive(share, "share")))
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"schedule must be a non-empty sequence of (statistic, share > 0) "
                        f"pairs, got {schedule!r}: {exc}") from None
    if not out:
        raise ValueError("schedule must hold at least one (statistic, share) release")
    total = sum(w for _, w in out)
    return [(pres, w / total) for pres, w in out]


def _schedule_event(sigmas, clip_norm):
    """The fit's privacy event: one discrete Gaussian release per sigma (runs of equal
    ones as a SelfComposedEvent), composed sequentially."""
    from ..accounting import ComposedEvent, GaussianEvent, SelfComposedEvent
    parts, i = [], 0
    while i < len(sigmas):
        j = i
        while j + 1 < len(sigmas) and sigmas[j + 1] == sigmas[i]:
            j += 1
        ev = GaussianEvent(float(sigmas[i]), sensitivity=float(clip_norm), discrete=True)
        parts.append(SelfComposedEvent(ev, j - i + 1) if j > i else ev)
        i = j + 1
    return ComposedEvent(tuple(parts), label="fit") if len(parts) > 1 else parts[0]


def _calibrate_schedule(eps, delta, shares, clip_norm):
    """Noise standard deviation of each release: the total calibrated as one discrete
    Gaussian release (noise multiplier z), release i at z / sqrt(share_i) (Gaussian
    releases compose to exactly the one release: the sum of 1 / z_i^2 is 1 / z^2).
    Checked against the accountant, raised by 1e-6 steps if rounding left the
    composition a hair above the target."""
    from ..accounting import calibrate_gaussian, epsilon
    z = calibrate_gaussian(eps, delta, steps=1, discrete=True)
    for _ in range(100):
        sigmas = [z * clip_norm / math.sqrt(w) for w in shares]
        if epsilon(_schedule_event(sigmas, clip_norm), delta, method="rdp") <= eps:
            return sigmas
        z *= 1 + 1e-6
    raise RuntimeError("schedule calibration did not converge")   # pragma: no cover


class PrivateBatchLDA(TopicModelMixin):
    """Document-level differentially private LDA by batch variational Bayes.

    Each iteration is one release: the sum over all documents of each document's
    expected topic-word counts under the current topics, scaled to L2 norm ``clip_norm``
    and rounded down to the noise lattice, plus exact discrete Gaussian noise. The
    (``target_epsilon``, ``target_delta``) budget is split across the releases in the
    shares of ``schedule`` (sequential composition, accounted by RDP). The early releases
    count each distinct word of a document once (more signal per unit of sensitivity, to
    find the topics), the last one counts tokens (to estimate them). The first release,
    computed from the data-independent start, shows the topics only as a small contrast
    around each word's mean over the topics: from target epsilon 2 on (without
    ``init_topics``, as the shrinkage of the later releases below), each word's entries
    are shrunk towards that mean (positive-part James-Stein; a word whose entries vary no
    more than the noise gets no topic preference, the others keep their deviations in
    proportion to how far their variance exceeds the noise). Between the later releases
    (and after the first below epsilon 2) entries below 2 noise standard deviations are
    set to zero (topics are sparse; pure noise would otherwise spread mass over every
    word); from target epsilon 4 on, the entries above 1 noise standard deviation are
    kept, with their per-word shrunk values. From target epsilon 2 on, the last two search
    releases keep the entries above 1 noise standard deviation with their empirical-Bayes
    posterior means (the prior fitted per topic as for the released topics below; the
    other entries zero), and the E-step reads the documents with the document-topic prior
    0.35 (``doc_topic_prior`` not given; more spread responsibilities carry more mass per
    unit of norm and keep early, noisy topics from locking a document onto one). Each
    search release from the third on is first averaged with the one before (as the final
    estimate below; without ``init_topics``). With three releases or more, the releases
    after the first weigh each word's entries by f_w^-0.35 (f_w: the word's total over the
    topics in the first release, floored at twice its noise sd) before a document is scaled to
    ``clip_norm``: a document spends more of its norm on its rarer words, which the noise
    otherwise drowns, and less on frequent ones; every estimate is divided by the weights
    again (post-processing of the first release; the sensitivity is still ``clip_norm``).
    The final estimate averages the last two releases, the earlier one weighted
    by its noise variance plus its measured excess difference from the last; the released
    topics are the empirical-Bayes posterior mean of each of its entries (a spike at zero
    and an exponential slab per topic, fitted on the estimate itself), or with a numeric
    ``threshold`` the entries above ``threshold`` noise sd (post-processing of the
    releases only).

    Parameters
    ----------
    n_components : int
        Number of topics K.
    target_epsilon, target_delta : float
        Total document-level (add/remove one document) guarantee of the fit.
    schedule : sequence of (statistic, share), optional
        One pair per release, in order: ``statistic`` is ``"presence"`` or ``"counts"``,
        ``share`` (> 0) its part of the budget (normalised to sum to one). Default
        ``default_schedule(target_epsilon)`` (public): below epsilon 2, three presence
        releases of 0.2 and one count release of 0.4; from 2, ``DEFAULT_SCHEDULE``,
        four presence releases of 0.15 and one count release of 0.4; from 4, eight
        presence releases of 0.075 and one count release of 0.4.
    clip_norm : float, default=1.0
        L2 norm of every document's contribution (its sensitivity); the noise is
        ``clip_norm`` times the calibrated multiplier, so the guarantee depends only on
        their ratio. It is also the scale of the pseudo-counts: the E-step's digamma and
        ``topic_word_prior`` see the releases in these units. A document scaled to norm C
        carries a mass of about C sqrt(n) for n distinct words. With 1, a rare word's
        pseudo-count sits below 1, where exp(E[log beta]) nearly zeroes it: without noise
        that costs 1.22x against 1.11x non-private perplexity with 10 (17,000 documents
        drawn from an LDA fit of KOS), but under the noise of epsilon <= 8 the same damping
        of small, noisy entries helps about as much as it hurts (KOS, 2,916 documents,
        median of 3: 1.72x / 1.49x at eps 2 / 4 with 1, 1.84x / 1.53x with 10), so 1 stays
        the default.
    threshold : float or None, default=None
        None: every entry of the released topics is its empirical-Bayes posterior mean
        given the final estimate (post-processing). A number >= 0: entries of the final
        estimate below ``threshold`` times its noise standard deviation are zeroed instead,
        and the topics smoothed by 0.05 noise sd (between the later search releases 2 is
        used either way).
    init_topics : array of shape (K, V), optional
        PUBLIC initial topic-word weights (e.g. from a public corpus); accounted as
        public, so they must not be derived from the private documents. Default: a
        data-independent random start. With them every search release is hard-thresholded
        (the per-word shrinkage is measured only from the random start).
    doc_topic_prior, topic_word_prior : float, optional
        Default (None) 1 / K for ``transform`` and the release; the fit's E-step uses 0.35
        instead from target epsilon 2 on (with the random start). A given value, 1 / K
        included, is used by both.
    transform_max_iter : int, default=50
        Gibbs fold-in sweeps of ``transform``.
    n_jobs : int, optional
        Threads of the E-step and of ``transform`` (scikit-learn semantics; -1: all
        cores). The fit is the same for every value.
    random_state : None, int, SeedSequence or Generator
        None (default): all randomness (start, noise) from the secret generator. Anything else is a labelled test mode.
    verbose : int

    Attributes
    ----------
    components_, topic_word_ : ndarray (K, V)
        Released pseudo-counts and topics.
    privacy_ : PrivacyReport
    release_sigmas_ : list of float
        Noise standard deviation of each release (public: set by the budget).

    Privacy contract
    ----------------
    ``components_`` is post-processing of the lattice-Gaussian releases recorded in
    ``privacy_`` (their sequential composition). The vocabulary and ``init_topics`` are
    assumed public; the number of documents is neither used by the mechanism nor
    published. A corpus without any token is refused with a ``ValueError`` (as every
    estimator refuses it), which tells it apart from its one-document neighbours: the
    guarantee is for corpora holding at least one token.
    """

    def __init__(self, n_components=10, *, target_epsilon=1.0, target_delta=1e-5,
                 schedule=None, clip_norm=1.0, threshold=None, init_topics=None,
                 doc_topic_prior=None, topic_word_prior=None, transform_max_iter=50,
                 n_jobs=None, random_state=None, verbose=0):
        self.n_components = n_components
        self.target_epsilon = target_epsilon
        self.target_delta = target_delta
        self.schedule = schedule
        self.clip_norm = clip_norm
        self.threshold = threshold
        self.init_topics = init_topics
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.transform_max_iter = transform_max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @property
    def max_iter(self):
        """Releases (each one a pass over every document)."""
        return len(_check_schedule(self.schedule, self._public_epsilon()))

    def _public_epsilon(self):
        """target_epsilon if it is a valid one, else None (validated by the fit)."""
        try:
            return check_positive(self.target_epsilon, "target_epsilon")
        except (TypeError, ValueError):
            return None

    def _check_init(self, V):
        if self.init_topics is None:
            return None
        init = np.array(self.init_topics, dtype=np.float64)
        if init.shape != (self.n_components, V):
            raise ValueError(f"init_topics must have shape (n_components, n_features) = "
                             f"({self.n_components}, {V}), got {init.shape}")
        if not np.all(np.isfinite(init)) or np.any(init < 0) or np.any(init.sum(axis=1) <= 0):
            raise ValueError("init_topics must be finite, non-negative, with positive rows")
        return init

    @private_fit
    def fit(self, X, y=None):
        X = check_count_matrix(X, estimator=self, reset=True).tocsr()
        threads = effective_n_jobs(self.n_jobs)
        return self._fit_releases(X.shape[1], lambda beta, alpha, C, g, presence, weights: (
            _expected_counts(X, beta, alpha, C, granularity=g, presence=presence,
                             n_threads=threads, word_weight=weights)))

    def _fit_releases(self, V, statistic):
        """The fit given where the documents are: ``statistic(beta, alpha, norm,
        granularity, presence, word_weight)`` is the lattice sum of ``_expected_counts`` over every
        document (one process: ``fit``; a cluster: ``dptm.distributed``). Fitted
        attributes are set only once every release is done."""
        from ..accounting import PrivacyReport
        self._check_common_params()
        eps = check_positive(self.target_epsilon, "target_epsilon")
        schedule = _check_schedule(self.schedule, eps)
        delta = check_real(self.target_delta, "target_delta")
        if not 0.0 < delta < 1.0:
            raise ValueError(f"target_delta must be in (0, 1), got {self.target_delta!r}")
        C = check_positive(self.clip_norm, "clip_norm")
        tau = (_DEFAULT_THRESHOLD if self.threshold is None
               else check_real(self.threshold, "threshold"))
        if not tau >= 0:
            raise ValueError(f"threshold must be >= 0, got {self.threshold!r}")
        K = self.n_components
        init = self._check_init(V)
        alpha, eta = self.doc_topic_prior_, self.topic_word_prior_
        random_start = init is None
        if self.doc_topic_prior is None and random_start and eps >= _FIT_PRIOR_MIN_EPSILON:
            alpha = _FIT_DOC_TOPIC_PRIOR         # the fit's E-step only (public: eps)
        sigmas = _calibrate_schedule(eps, delta, [w for _, w in schedule], C)
        if not math.isfinite(max(sigmas) * 2.0 ** 64):
            # sums of up to 2^64 contributions and their noise must stay finite; decided
            # from public parameters only (an inf in a release would be post-processing,
            # but useless)
            raise ValueError(f"clip_norm={self.clip_norm!r} is too large: the noise "
                             f"(sigma up to {max(sigmas):.3g}) overflows double precision")
        if not min(sigmas) >= 2.0 ** -900:
            # the EB fit's exp(-log slab mean) overflows below sd ~ 1e-305 (after every
            # release was drawn; review s8 F7): refused first, from public parameters only
            raise ValueError(f"clip_norm={self.clip_norm!r} is too small: the noise "
                             f"(sigma down to {min(sigmas):.3g}) underflows double precision")
        gen, seeded = private_generator(self.random_state, "PrivateBatchLDA")

        if init is None:
            beta = 1.0 + 0.1 * gen.random((K, V))    # data-independent start
        else:
            beta = eta + init * (1e3 / init.sum(axis=1, keepdims=True))
        # post-processing between releases, by PUBLIC epsilon (measured from the random
        # start only, so a public init_topics keeps the hard threshold throughout)
        shrink_first = random_start and eps >= _SHRINK_FIRST_MIN_EPSILON
        shrink_search = random_start and eps >= _SHRINK_SEARCH_MIN_EPSILON
        combine_search = random_start
        # the search releases whose kept entries take their posterior means
        eb_from = (len(schedule) - 1 - _EB_SEARCH_RELEASES
                   if random_start and eps >= _EB_SEARCH_MIN_EPSILON else len(schedule))
        releases, drawn = [], []
        weights = None          # the word weights of the releases after the first
        for i, ((presence, _), sigma) in enumerate(zip(schedule, sigmas)):
            g = _granularity(sigma)
            stat = statistic(beta, alpha, C, g, presence, weights)
            noisy, _, sd = _release(stat, sigma, gen, g)
            releases.append((noisy, sd))
            drawn.append(sd)                     # >= sigma: the sampled variance rounds up
            last = i == len(schedule) - 1
            est = noisy
            if last and len(releases) > 1:
                est, sd = _combine_releases(releases[-_COMBINED_RELEASES:], tau)
            elif combine_search and i >= 2:
                est, sd = _combine_releases(releases[-2:], _DEFAULT_THRESHOLD)
            if not last:           # the released topics: _final_topics, after the loop
                beta = _unweighted(_shrink_to_word_means(est, sd, eta) if i == 0 and shrink_first
                                   else _eb_search_denoise(est, sd, eta) if i >= eb_from
                                   else _search_denoise(est, sd, eta, shrink=shrink_search),
                                   eta, weights)
                if i == 0 and len(schedule) >= 3:
                    # from the first release only, so the combined releases (the last two,
                    # and consecutive search releases) share one set
                    weights = _word_weights(est, sd)
            self._progress(i + 1, total=len(schedule), unit="release")
        # the released topics from the last estimate (``est``, noise sd ``sd``; replaces
        # the loop's last hard-thresholded ``beta``)
        beta = _unweighted(_final_topics(est, sd, eta, None if self.threshold is None else tau),
                           eta, weights)
        privacy = PrivacyReport(
            _schedule_event(drawn, C), "document",
            description=("batch VB LDA: per-document L2-normalised expected counts, lattice "
                         "(exact discrete) Gaussian releases on every document, the budget "
                         "split across them (sequential composition)"),
            default_delta=delta, seeded=seeded,
            assumed_public=[f"vocabulary (V = {V} words)"]
            + (["init_topics (given as public)"] if init is not None else []))
        transform_seed = public_seed(gen, seeded)
        self.release_sigmas_ = [float(x) for x in drawn]
        self.sigma_, self.sensitivity_ = float(drawn[-1]), float(C)
        self.privacy_ = privacy
        self._set_topics(beta)
        self.transform_seed_ = transform_seed
        self.n_iter_ = len(schedule)
        return self
