"""Post-processing of noisy topic-word releases: free in privacy.

Every function here is a deterministic function of a release (already noised) and of public
parameters (its noise sd, the prior, the plan's step), so none of them spends budget:
thresholds, per-word James-Stein shrinkage, the weighted combination of two releases and the
empirical-Bayes (spike-and-slab) posterior mean that ``PrivateBatchLDA`` releases.
"""
import math

import numpy as np

# Between search releases, entries below this many noise sd are zeroed (topics are sparse;
# pure noise would otherwise spread mass over every word).
_SEARCH_THRESHOLD = 2.0
# With per-word shrinkage (from eps 4) the kept entries are those above this many sd.
_SHRUNK_SEARCH_THRESHOLD = 1.0
# Words whose mean over the topics is at most this many of its noise sd are dropped after
# the first release (it shows the topics only as a small contrast around each word's mean).
_FIRST_MEAN_THRESHOLD = 2.0
# Smoothing (in noise sd) of the released topics with a numeric ``threshold``.
_NOISE_SMOOTHING = 0.05


def _denoise(est, sigma, eta, threshold):
    """Entries of a release ``est`` (noise sd ``sigma``) at or below ``threshold * sigma``
    set to zero, plus the prior ``eta`` (post-processing)."""
    return eta + np.where(est > threshold * sigma, est, 0.0)


def _shrink_to_word_means(est, sd, eta):
    """The topics after the first search release (from the near-uniform start): every
    word's entries shrunk towards its mean over the topics (``_word_shrunk``), so a word
    whose entries differ by no more than the noise gets no topic preference; words whose
    mean is at most ``_FIRST_MEAN_THRESHOLD`` times its noise sd (sd / sqrt(K)) dropped."""
    est = np.asarray(est, dtype=np.float64)
    K = est.shape[0]
    if K < 2:                       # one topic: no profile to shrink
        return _denoise(est, sd, eta, _SEARCH_THRESHOLD)
    out, mean = _word_shrunk(est, sd)
    out[:, mean <= _FIRST_MEAN_THRESHOLD * sd / math.sqrt(K)] = 0.0
    return eta + out


def _post_process(post, est, sd, eta, threshold=None):
    """The topics (pseudo-counts) from an estimate ``est`` of noise sd ``sd``, by the
    plan's ``post`` step; a deterministic function of the releases (free in privacy)."""
    est = np.asarray(est, dtype=np.float64)
    if post == "shrink":
        return _shrink_to_word_means(est, sd, eta)
    if post == "shrunk-threshold" and est.shape[0] >= 2:
        # the cut decides which topics use a word, the shrinkage how much of its noisy
        # spread over them to trust
        return eta + np.where(est > _SHRUNK_SEARCH_THRESHOLD * sd, _word_shrunk(est, sd)[0], 0.0)
    if post == "posterior-mean":
        return np.where(est > _SHRUNK_SEARCH_THRESHOLD * sd, _eb_denoise(est, sd, eta), eta)
    if post == "final":
        if threshold is None:
            return _eb_denoise(est, sd, eta)
        return _denoise(est, sd, eta, threshold) + max(0.0, _NOISE_SMOOTHING * sd - eta)
    return _denoise(est, sd, eta, _SEARCH_THRESHOLD)


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
    # ~1e153), which made every weight 0 and the release NaN, then all-prior
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
    per-entry public or released scale, 1 for none), observed as y = t + N(0, s^2).

    BFGS on the analytic gradient of the negative log-likelihood in (logit p, log of the
    slab mean), each clipped to its range."""
    from scipy.optimize import minimize
    from scipy.special import log_ndtr
    big = y > 3 * s
    p0 = min(0.5, max(1e-3, float(big.mean())))
    mu0 = float((y[big] / lam_scale[big]).mean()) if big.any() else s

    lo = np.array([-20.0, math.log(1e-3 * s)])
    hi = np.array([20.0, math.log(1e6 * s)])
    z = y / s
    l0 = -0.5 * z * z - 0.5 * math.log(2 * math.pi) - math.log(s)    # the spike's

    lam_scale = np.asarray(lam_scale, dtype=np.float64)
    # one scale for every entry (no column scale): the rate is one number, broadcast (the
    # same operations on every entry, one log instead of V)
    scale = lam_scale[:1] if np.all(lam_scale == lam_scale[0]) else lam_scale

    def nll(par):
        par = np.clip(par, lo, hi)     # p in (2e-9, 1 - 2e-9); slab mean in [1e-3, 1e6] s
        p = 1.0 / (1.0 + math.exp(-par[0]))
        lam = math.exp(-par[1]) / scale
        u = z - lam * s
        log_cdf = log_ndtr(u)
        slab = math.log(p) + np.log(lam) + 0.5 * (lam * s) ** 2 - lam * y + log_cdf
        mix = np.logaddexp(math.log1p(-p) + l0, slab)
        r1 = np.exp(slab - mix)                      # each entry's posterior slab weight
        mills = np.exp(-0.5 * u * u - 0.5 * math.log(2 * math.pi) - log_cdf)
        # d/d logit p, and d/d log(slab mean) = -lam d/d lam
        grad = np.array([-float((r1 - p).sum()),
                         float((r1 * (1.0 + (lam * s) ** 2 - lam * y - lam * s * mills)).sum())])
        return -float(mix.sum()), grad

    x0 = np.clip([math.log(p0 / (1 - p0)), math.log(max(mu0, 1e-3 * s))], lo, hi)
    res = minimize(nll, x0, jac=True, method="BFGS", options={"gtol": 1e-3, "maxiter": 200})
    ok = np.all(np.isfinite(res.x)) and res.fun <= nll(x0)[0]
    par = np.clip(res.x if ok else x0, lo, hi)
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
