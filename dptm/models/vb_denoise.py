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
# The batched EB fit (_eb_fit_rows): Newton stops when its decrement g' H^-1 g is below this
# share of the negative log-likelihood (then within ~1e-7 of its local maximum), on the
# shortened rows of its first phase below the second ...
_EB_NEWTON_TOL = 1e-7
_EB_COMPRESSED_TOL = 1e-5
# ... topics gaining less than this many nats over the all-spike model are also fitted from
# a second start (near-empty topics have a second maximum; a margin over where it was seen,
# docs/records/2026-12-03-eb-fit-speed.md) ...
_EB_WEAK_GAIN = 10.0
# ... and rows go through numpy in blocks of this many (the temporaries stay in the cache).
_EB_BLOCK = 8
# With public word counts, a word whose estimated mass is below this many noise sd (and
# whose topics the release does not tell apart) is read from the background.
_BACKGROUND_SD = 4.0


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


def _row_scaled(start):
    """The rows of non-negative ``start`` (each with a positive entry) scaled by powers of
    two to a largest entry in [0.5, 1): exact, the same shape, and a row sum that neither
    overflows (entries near 1e308 summed to inf, the shape to 0 and the topics to NaN) nor
    divides into inf (subnormal entries: 1e3 / their sum was inf, times 0 NaN)."""
    start = np.asarray(start, dtype=np.float64)
    with np.errstate(under="ignore"):     # entries 2^-1074 below their row's largest: 0
        return np.ldexp(start, -np.frexp(start.max(axis=1, keepdims=True))[1])


def _shrink_to_start(est, sd, eta, start):
    """The final estimate ``est`` (noise sd ``sd``) of a fit whose one E-step read the PUBLIC
    starting topics ``start`` (K x V, rows aligned with ``est``'s), shrunk towards them:
    entry (k, w) has the normal prior of mean m = c_k start_kw / sum_w start_kw (c_k the
    topic's released mass, at least one noise sd of it) and variance a_k m (a_k >= 0 fitted
    per topic by moments, E (est - m)^2 = sd^2 + a_k m); its posterior mean
    m + a_k m / (a_k m + sd^2) (est - m), clipped at 0, plus ``eta``. Post-processing."""
    est = np.asarray(est, dtype=np.float64)
    V = est.shape[1]
    start = _row_scaled(start)
    shape = start / start.sum(axis=1, keepdims=True)
    mass = np.maximum(est.sum(axis=1, keepdims=True), sd * math.sqrt(V))
    # in noise sd units (sd^2 overflows for sd > 1e154)
    m, r = mass / sd * shape, est / sd - mass / sd * shape
    a = np.maximum((r * r - 1.0).sum(axis=1, keepdims=True), 0.0) / m.sum(axis=1, keepdims=True)
    keep = a * m / (a * m + 1.0)
    return eta + sd * np.maximum(m + keep * r, 0.0)


def _post_process(post, est, sd, eta, threshold=None, start=None):
    """The topics (pseudo-counts) from an estimate ``est`` of noise sd ``sd``, by the
    plan's ``post`` step (``start``: the public starting topics, for "final-to-start"); a
    deterministic function of the releases (free in privacy)."""
    est = np.asarray(est, dtype=np.float64)
    if post == "shrink":
        return _shrink_to_word_means(est, sd, eta)
    if post == "shrunk-threshold" and est.shape[0] >= 2:
        # the cut decides which topics use a word, the shrinkage how much of its noisy
        # spread over them to trust
        return eta + np.where(est > _SHRUNK_SEARCH_THRESHOLD * sd, _word_shrunk(est, sd)[0], 0.0)
    if post == "posterior-mean":
        return np.where(est > _SHRUNK_SEARCH_THRESHOLD * sd, _eb_denoise(est, sd, eta), eta)
    if post in ("final", "final-to-start"):
        if threshold is not None:       # the hard threshold asked for, after any start
            return _denoise(est, sd, eta, threshold) + max(0.0, _NOISE_SMOOTHING * sd - eta)
        if post == "final-to-start":
            return _shrink_to_start(est, sd, eta, start)
        return _eb_denoise(est, sd, eta)
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


def _eb_start(y, s, lam_scale):
    """The EB fit's start (logit p, log slab mean) for one row ``y`` and its box (lo, hi):
    p the share of entries above 3 noise sd (in [1e-3, 0.5]), the slab mean theirs."""
    big = y > 3 * s
    p0 = min(0.5, max(1e-3, float(big.mean())))
    mu0 = float((y[big] / lam_scale[big]).mean()) if big.any() else s
    lo = np.array([-20.0, math.log(1e-3 * s)])
    hi = np.array([20.0, math.log(1e6 * s)])
    return np.clip([math.log(p0 / (1 - p0)), math.log(max(mu0, 1e-3 * s))], lo, hi), lo, hi


def _eb_fit_row(y, s, lam_scale):
    """Maximum-likelihood (p, lam) of the spike-and-slab prior of one topic's entries:
    t = 0 with probability 1 - p, else t ~ Exponential(rate lam / lam_scale) (lam_scale: a
    per-entry public or released scale, 1 for none), observed as y = t + N(0, s^2).

    BFGS on the analytic gradient of the negative log-likelihood in (logit p, log of the
    slab mean), each clipped to its range."""
    from scipy.optimize import minimize
    from scipy.special import log_ndtr
    x0, lo, hi = _eb_start(y, s, lam_scale)
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

    res = minimize(nll, x0, jac=True, method="BFGS", options={"gtol": 1e-3, "maxiter": 200})
    ok = np.all(np.isfinite(res.x)) and res.fun <= nll(x0)[0]
    par = np.clip(res.x if ok else x0, lo, hi)
    return 1.0 / (1.0 + math.exp(-par[0])), math.exp(-par[1]) / lam_scale


def _eb_terms(a, b, z, l0, s, scale, wt=None):
    """The EB fit's negative log-likelihood of rows ``z`` (observations in noise sd; ``l0``
    their spike log densities) at (logit p, log slab mean) = (a, b), one pair a row, with
    its gradient and Hessian in (a, b): arrays (R,), (R, 2), (R, 2, 2). ``scale``: the
    slab mean's per-entry scale, shape (1, 1) or (1, V). The operations of
    ``_eb_fit_row``'s objective, in blocks of rows (their temporaries stay in the cache)."""
    from scipy.special import log_ndtr, ndtr
    R, V = z.shape
    if wt is not None:
        V = wt[0].sum()
    log_p, log_q = -np.logaddexp(0.0, -a), -np.logaddexp(0.0, a)      # log p, log(1 - p)
    p = np.exp(log_p)
    f, g, H = np.empty(R), np.empty((R, 2)), np.empty((R, 2, 2))
    for i in range(0, R, _EB_BLOCK):
        j = min(R, i + _EB_BLOCK)
        zz, ll0 = z[i:j], l0[i:j]
        if wt is None:
            S = lambda A: A.sum(1)  # noqa: E731
            E = lambda A, B: np.einsum("ij,ij->i", A, B)  # noqa: E731
        else:
            ww = wt[i:j]
            S = lambda A: np.einsum("ij,ij->i", A, ww)  # noqa: E731
            E = lambda A, B: np.einsum("ij,ij,ij->i", A, B, ww)  # noqa: E731
        lam = np.exp(-b[i:j])[:, None] / scale
        ls = lam * s
        ls2 = ls * ls
        u = zz - ls
        if u.min() > -20.0:
            # log_ndtr's own formula there (log of ndtr; -ndtr(-u) above 6) in numpy's log
            cdf = ndtr(u)
            log_cdf = np.log(cdf)
            if u.max() > 6.0:
                up = u > 6.0
                log_cdf[up] = -ndtr(-u[up])
            mills = np.exp(-0.5 * u * u)
            mills *= 1.0 / math.sqrt(2 * math.pi)
            mills /= cdf
        else:
            log_cdf = log_ndtr(u)
            mills = np.exp(-0.5 * u * u - 0.5 * math.log(2 * math.pi) - log_cdf)
        # d: log odds of slab against spike per entry; mix = log(1-p) + l0 + softplus(d)
        d = (log_p[i:j] - log_q[i:j])[:, None] + np.log(lam) + 0.5 * ls2 - ls * zz
        d += log_cdf
        d -= ll0
        d_neg = np.exp(np.minimum(d, 0.0))
        np.maximum(d, 0.0, out=d)
        e = np.exp(-d)
        e *= d_neg                                   # exp(-|d|)
        inv = 1.0 / (1.0 + e)
        r1 = d_neg * inv                             # the posterior slab weight expit(d)
        w = r1 * (1.0 - r1)
        f[i:j] = -(S(ll0) + V * log_q[i:j] + S(d) + S(np.log1p(e)))
        q = zz + mills
        g1 = (1.0 + ls2) - ls * q                    # -d l1 / d b
        # d g1 / d b = -2 (lam s)^2 + lam s q - (lam s)^2 M'(u), M' = -M (u + M)
        dg1 = ls2 * mills * (u + mills) + ls * q - 2.0 * ls2
        wg1 = w * g1
        g[i:j, 0] = V * p[i:j] - S(r1)
        g[i:j, 1] = E(r1, g1)
        H[i:j, 0, 0] = V * p[i:j] * (1.0 - p[i:j]) - S(w)
        H[i:j, 0, 1] = H[i:j, 1, 0] = S(wg1)
        H[i:j, 1, 1] = E(r1, dg1) - E(wg1, g1)
    return f, g, H


def _eb_direction(g, H, x, lo, hi):
    """Projected Newton steps (R, 2) and decrements for rows at x: coordinates at a bound
    whose gradient points out of the box are held; the Hessian's eigenvalues taken in
    absolute value (floored) so every step descends; steps capped at 4 in each coordinate."""
    held = ((x <= lo) & (g > 0)) | ((x >= hi) & (g < 0))
    g = np.where(held, 0.0, g)
    H = H.copy()
    H[:, 0, 1] = H[:, 1, 0] = np.where(held.any(1), 0.0, H[:, 0, 1])
    ev, vec = np.linalg.eigh(H)
    ev = np.abs(ev)
    ev = np.maximum(ev, 1e-8 * np.maximum(ev.max(1, keepdims=True), 1e-300))
    d = -np.einsum("rij,rj->ri", vec, np.einsum("rij,ri->rj", vec, g) / ev)
    d = np.where(held, 0.0, d)
    d *= np.minimum(1.0, 4.0 / np.maximum(np.abs(d).max(1, keepdims=True), 1e-300))
    return d, -(g * d).sum(1)


def _eb_newton(x, z, l0, s, scale, lo, hi, max_rounds=100, wt=None, tol=None):
    """Projected Newton from starts x (R, 2), every row its own backtracking (Armijo) line
    search, all rows' trial points evaluated in one ``_eb_terms`` pass, converged rows
    frozen. Returns (x, nll, nll at the start, converged)."""
    R = len(x)
    x = np.clip(x, lo, hi)
    tol = _EB_NEWTON_TOL if tol is None else tol
    f, g, H = _eb_terms(x[:, 0], x[:, 1], z, l0, s, scale, wt)
    f_start = f.copy()
    d, dec = _eb_direction(g, H, x, lo, hi)
    conv = dec <= tol * np.maximum(1.0, np.abs(f))
    done = conv | ~np.isfinite(f)
    t = np.ones(R)
    for _ in range(max_rounds):
        act = np.flatnonzero(~done)
        if act.size == 0:
            break
        xt = np.clip(x[act] + t[act, None] * d[act], lo, hi)
        ft, gt, Ht = _eb_terms(xt[:, 0], xt[:, 1], z[act], l0[act], s, scale,
                               None if wt is None else wt[act])
        ok = np.isfinite(ft) & (ft <= f[act] + 1e-4 * (g[act] * (xt - x[act])).sum(1))
        acc, rej = act[ok], act[~ok]
        x[acc], f[acc], g[acc], H[acc], t[acc] = xt[ok], ft[ok], gt[ok], Ht[ok], 1.0
        t[rej] *= 0.5
        done[rej[t[rej] < 1e-10]] = True             # no descent left: not converged
        if acc.size:
            d[acc], dec = _eb_direction(g[acc], H[acc], x[acc], lo, hi)
            c = acc[dec <= tol * np.maximum(1.0, np.abs(f[acc]))]
            done[c] = conv[c] = True
    return x, f, f_start, conv


def _eb_compressed(z, s, top=64, groups=192):
    """Rows ``z`` shortened for the first Newton iterations: each row sorted, its ``top``
    largest entries kept, the others averaged in ``groups`` runs of consecutive entries
    weighted by their length. Returns (z, l0, weights) or None for short rows."""
    K, V = z.shape
    if V <= 4 * (top + groups):
        return None
    zs = np.sort(z, axis=1)
    edges = np.linspace(0, V - top, groups + 1).round().astype(np.intp)
    counts = np.diff(edges).astype(np.float64)
    zc = np.concatenate([np.add.reduceat(zs[:, :V - top], edges[:-1], axis=1) / counts,
                         zs[:, V - top:]], axis=1)
    wt = np.concatenate([np.broadcast_to(counts, (K, groups)), np.ones((K, top))], axis=1)
    return zc, -0.5 * zc * zc - 0.5 * math.log(2 * math.pi) - math.log(s), wt


def _eb_fit_rows(est, s, lam_scale):
    """``_eb_fit_row`` of every row of ``est`` at once: (p (K,), lam (K, V)).

    The rows' likelihoods are maximised together by projected Newton (``_eb_newton``) from
    ``_eb_fit_row``'s start. A topic whose fit gains less than ``_EB_WEAK_GAIN`` nats over
    the all-spike model and whose entries have a positive mean is also fitted from the
    corner of a slab on every entry with a mean at that mean (a near-empty topic's
    likelihood has a second maximum there, where BFGS can stop), the better fit kept. A
    row that does not converge, or ends non-finite or above its start, gets
    ``_eb_fit_row``'s BFGS fit instead when that is better. A deterministic function of
    the release and public parameters."""
    est = np.asarray(est, dtype=np.float64)
    K, V = est.shape
    lam_scale = np.asarray(lam_scale, dtype=np.float64)
    uniform = bool(np.all(lam_scale == lam_scale[0]))
    scale = lam_scale[:1].reshape(1, 1) if uniform else lam_scale.reshape(1, V)
    z = est / s
    l0 = -0.5 * z * z - 0.5 * math.log(2 * math.pi) - math.log(s)
    starts = [_eb_start(y, s, lam_scale) for y in est]
    lo, hi = starts[0][1], starts[0][2]
    x0 = np.array([st[0] for st in starts])
    comp = _eb_compressed(z, s) if uniform else None

    def fit(x, rows):
        if comp is not None:          # most of the way on the compressed rows
            zc, l0c, wt = comp
            x = _eb_newton(x, zc[rows], l0c[rows], s, scale, lo, hi, wt=wt[rows],
                           tol=_EB_COMPRESSED_TOL)[0]
        return _eb_newton(x, z[rows], l0[rows], s, scale, lo, hi)

    every = np.arange(K)
    x, f, f_start, conv = fit(x0, every)
    if comp is not None:
        f_start = _eb_terms(x0[:, 0], x0[:, 1], z, l0, s, scale)[0]
    mean = est.mean(axis=1)
    weak = np.flatnonzero((-l0.sum(axis=1) - f < _EB_WEAK_GAIN) & (mean > 0))
    if weak.size:
        corner = np.stack([np.full(weak.size, 4.0), np.log(np.clip(mean[weak], 1e-3 * s, s))], 1)
        x2, f2, _, conv2 = fit(corner, weak)
        better = conv2 & (f2 < f[weak])
        x[weak[better]], f[weak[better]], conv[weak[better]] = x2[better], f2[better], True
    p = 1.0 / (1.0 + np.exp(-x[:, 0]))
    lam = np.exp(-x[:, 1])[:, None] / lam_scale
    for k in np.flatnonzero(~conv | ~np.isfinite(f) | ~(f <= f_start)):
        pk, lk = _eb_fit_row(est[k], s, lam_scale)
        par = np.array([math.log(pk / (1 - pk)), -math.log(lk[0] * lam_scale[0])])
        fk = _eb_terms(par[:1], par[1:], z[k:k + 1], l0[k:k + 1], s, scale)[0][0]
        if not fk >= f[k]:                          # also where the Newton fit is NaN
            p[k], lam[k] = pk, lk
    return p, lam


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
    p, lam = _eb_fit_rows(est, sigma, scale)
    for k in range(K):
        out[k] = _eb_posterior_mean(est[k], sigma, p[k], lam[k])
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


def _background_words(beta, est, sd, eta, counts):
    """The released topics ``beta`` (pseudo-counts, from the estimate ``est`` of noise sd
    ``sd``) with the words the estimate cannot resolve read from PUBLIC word ``counts`` (V
    non-negative numbers with a positive total N). Post-processing (free in privacy).

    Each word's mass m_w is estimated from both sources, weighted by their precision: the
    estimate's column total (variance K sd^2) and M c_w / N (M the estimate's total; the
    counts' Poisson variance M^2 (c_w + 1) / N^2). A word is background when m_w is below
    ``_BACKGROUND_SD`` sd and its entries vary over the topics no more than the noise (their
    sample variance under 1 + 3 sqrt(2 / (K - 1)) sd^2: 3 sd of that variance under pure
    noise). Topic k's estimated mass on the background words (clamped at 0) is spread over
    them in proportion to c_w + 1/2 (a Jeffreys prior: a word the public text misses keeps
    some mass), plus the prior ``eta``. Returns (topics, boolean mask of the background
    words).
    """
    est = np.asarray(est, dtype=np.float64)
    K = est.shape[0]
    # in units of sd (the rule is scale-free): sd^2 underflowed to 0 for sd < 1e-162
    # (ZeroDivisionError after every release was drawn) and total^2 over- or underflowed
    # to NaN masses for clip bounds beyond 1e+-154, which silently turned the rule off
    z = est / sd
    total, n = max(float(z.sum()), 0.0), float(counts.sum())
    # share of the release's column total in each word's mass: precision K^-1 against the
    # counts' (n / total)^2 / (c + 1); no public weight when the release's total is <= 0
    r = n / total if total > 0 else 0.0
    share = 1.0 / (1.0 + K * (r * r) / (counts + 1.0))
    mass = share * z.sum(axis=0) + (1.0 - share) * (total * (counts / n))
    background = mass < _BACKGROUND_SD
    if K >= 2:
        dev = z - z.mean(axis=0)
        spread = np.einsum("kw,kw->w", dev, dev) / (K - 1)
        background &= spread < 1.0 + 3.0 * math.sqrt(2.0 / (K - 1))
    out = np.array(beta, dtype=np.float64)
    out[:, background] = eta
    q = counts[background] + 0.5
    topic_mass = np.maximum(est[:, background].sum(axis=1), 0.0)
    out[:, background] += topic_mass[:, None] * (q / max(q.sum(), 1e-300))[None, :]
    return out, background
