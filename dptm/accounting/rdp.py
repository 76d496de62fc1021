"""Renyi-DP (Mironov 2017) of the mechanisms dptm uses, as functions of arrays of orders.

All functions return, for each order alpha > 1, an upper bound on the Renyi divergence
D_alpha(M(X) || M(X')) over neighbouring X, X' (finite or +inf, never NaN). Closed forms
are exact; the Poisson-subsampled Gaussian is exact at integer orders and computed by a
convergent two-sided series, summed with signs, at fractional orders.
"""
import math

import numpy as np
from scipy.special import gammaln, gammasgn, log_ndtr

from ._validation import orders_array, positive, probability

__all__ = [
    "DEFAULT_ORDERS", "rdp_gaussian", "rdp_laplace", "rdp_pure_dp", "rdp_zcdp", "rdp_gated",
    "rdp_subsampled_gaussian", "rdp_subsampled_bound",
]

#: Orders used by every RDP computation unless told otherwise: a dense fractional grid on
#: (1, 11) where moderate-epsilon optima lie, every integer to 63, then a few large orders
#: for tiny-epsilon / huge-noise regimes (the grid of dp_accounting 0.6, so results agree).
DEFAULT_ORDERS = tuple([1.0 + x / 10.0 for x in range(1, 100)] + [float(a) for a in range(11, 64)]
                       + [128.0, 256.0, 512.0, 1024.0])


def _half_sq_ratio(sensitivity, sigma):
    """Delta^2 / (2 sigma^2) without OverflowError / ZeroDivisionError: +inf when sigma is
    so small the ratio overflows (no effective noise), a tiny value or 0 when it is huge."""
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        r = np.float64(sensitivity) / np.float64(sigma)
        return float(r * r / 2.0)


def rdp_gaussian(sigma, orders, sensitivity=1.0):
    """RDP of the Gaussian mechanism: alpha * Delta^2 / (2 sigma^2) (Mironov 2017, Prop. 7).

    Also the bound for the discrete Gaussian (Canonne, Kamath & Steinke 2020).
    """
    sigma = positive(sigma, "sigma")
    sensitivity = positive(sensitivity, "sensitivity")
    a = orders_array(orders)
    return a * _half_sq_ratio(sensitivity, sigma)


def rdp_laplace(scale, orders, sensitivity=1.0):
    """RDP of the Laplace mechanism (Mironov 2017, Prop. 6, closed form), lambda = b / Delta:

        1/(alpha-1) log( alpha/(2 alpha - 1) e^{(alpha-1)/lambda}
                         + (alpha-1)/(2 alpha - 1) e^{-alpha/lambda} ),

    evaluated in log space; capped by the pure epsilon Delta / b.
    """
    scale = positive(scale, "scale")
    sensitivity = positive(sensitivity, "sensitivity")
    a = orders_array(orders)
    eps = sensitivity / scale
    t1 = np.log(a) - np.log(2 * a - 1) + (a - 1) * eps
    t2 = np.log(a - 1) - np.log(2 * a - 1) - a * eps
    out = np.logaddexp(t1, t2) / (a - 1)
    return np.clip(out, 0.0, eps)


def rdp_pure_dp(epsilon, orders):
    """Tight RDP bound of an arbitrary epsilon-DP mechanism.

    D_alpha <= 1/(alpha-1) log( (sinh(alpha eps) - sinh((alpha-1) eps)) / sinh(eps) ),
    Bun & Steinke 2016, Prop. 3.3 (proof); it equals the Renyi divergence of binary
    randomized response with e^eps odds, which is eps-DP, so no smaller bound is valid.
    It is <= min(eps, alpha eps^2 / 2): the alpha eps^2/2 bound (the zCDP route) is valid
    but loose; we compute the exact expression
    log((e^{alpha eps} + e^{(1-alpha) eps}) / (1 + e^eps)) / (alpha - 1) in log space.
    """
    epsilon = positive(epsilon, "epsilon", allow_inf=True)
    a = orders_array(orders)
    if math.isinf(epsilon):
        return np.full(a.shape, np.inf)
    with np.errstate(over="ignore"):
        val = (np.logaddexp(a * epsilon, (1 - a) * epsilon) - np.logaddexp(0.0, epsilon)) / (a - 1)
        return np.clip(np.minimum(val, np.minimum(epsilon, a * (epsilon * epsilon) / 2.0)), 0.0, None)


def rdp_gated(rdp, probability_, orders):
    """RDP of a mechanism run with probability ``probability_`` (decided independently of
    the data) whose output is otherwise equal on neighbours, from the RDP curve ``rdp`` of
    the mechanism (aligned with ``orders``); see :class:`~dptm.accounting.GatedEvent`.

    exp((alpha - 1) D_alpha) is jointly convex (alpha > 1), and the equal component
    contributes 1, so D_alpha <= log(1 - p + p exp((alpha - 1) rdp)) / (alpha - 1),
    which lies between p rdp (Jensen) and rdp.
    """
    p = probability(probability_, "probability")
    a = orders_array(orders)
    rdp = np.asarray(rdp, dtype=float)
    if rdp.shape != a.shape or np.any(~(rdp >= 0)):
        raise ValueError("rdp must be non-negative and aligned with orders")
    if p == 1.0:
        return rdp.copy()
    with np.errstate(over="ignore"):
        val = np.logaddexp(math.log1p(-p), math.log(p) + (a - 1) * rdp) / (a - 1)
    return np.clip(val, 0.0, rdp)


def rdp_zcdp(rho, orders):
    """RDP of a rho-zCDP mechanism: alpha * rho (Bun & Steinke 2016, Definition 1.1)."""
    rho = positive(rho, "rho")
    return orders_array(orders) * rho


# --------------------------------------------------------------------------------------
# Poisson-subsampled Gaussian (Mironov, Talwar & Zhang 2019, "Renyi Differential Privacy
# of the Sampled Gaussian Mechanism", Sec. 3.3)
# --------------------------------------------------------------------------------------

def logsumexp(x):
    """log(sum(exp(x))) of a 1-D array (plain numpy: scipy's version has large overhead)."""
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        return -np.inf
    m = float(np.max(x))
    if not math.isfinite(m):
        return m
    return m + math.log(float(np.sum(np.exp(x - m))))


def _log_expm1(x):
    """log(e^x - 1) for x > 0 without overflow."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(x > 30.0, x + np.log1p(-np.exp(-np.minimum(x, 700.0))),
                        np.log(np.expm1(np.minimum(x, 30.0))))


def _log_a_int(q, sigma, alpha):
    """log A_alpha at integer alpha, A_alpha = E_{mu0}[(1 - q + q mu1/mu0)^alpha].

    A = sum_k C(a,k) (1-q)^{a-k} q^k e^{(k^2-k)/(2 sigma^2)}; since the binomial weights sum
    to 1, A - 1 = sum_{k>=2} C(a,k) (1-q)^{a-k} q^k expm1((k^2-k)/(2 sigma^2)), a sum of
    positive terms: log A = log1p(A - 1) keeps full relative precision when A ~ 1.
    """
    a = int(alpha)
    k = np.arange(2, a + 1, dtype=float)
    logc = gammaln(a + 1.0) - gammaln(k + 1.0) - gammaln(a - k + 1.0)
    log_terms = logc + (a - k) * math.log1p(-q) + k * math.log(q) + _log_expm1((k * k - k) / (2 * sigma * sigma))
    s = logsumexp(log_terms)
    return float(np.log1p(np.exp(s)) if s < 30 else s + np.log1p(np.exp(-s)))


def _signed_add(lp, ln, log_abs, sign):
    """Accumulate terms (log|t|, sign) into running log-sums of positive / negative parts."""
    pos = log_abs[sign > 0]
    neg = log_abs[sign < 0]
    if pos.size:
        lp = np.logaddexp(lp, logsumexp(pos))
    if neg.size:
        ln = np.logaddexp(ln, logsumexp(neg))
    return lp, ln


_FRAC_CHUNK = 512
_SIGMA_HUGE = 1e95     # above: alpha / (2 sigma^2) < 1e-187, returned as the bound
_FRAC_TAIL = 96        # terms handed to the alternating-series acceleration
_FRAC_LEVELS = 40      # levels of repeated averaging of partial sums


def _frac_terms(i, alpha, log_q, log_1mq, z0, sigma):
    """log|S0_i|, log|S1_i| and sign(C(alpha, i)) for an array of indices ``i``."""
    s2 = sigma * sigma
    j = alpha - i
    logc = gammaln(alpha + 1.0) - gammaln(i + 1.0) - gammaln(j + 1.0)
    sign = gammasgn(j + 1.0)
    l0 = logc + i * log_q + j * log_1mq + (i * i - i) / (2 * s2) + log_ndtr((z0 - i) / sigma)
    l1 = logc + j * log_q + i * log_1mq + (j * j - j) / (2 * s2) + log_ndtr((j - z0) / sigma)
    return l0, l1, sign


def _log_a_frac(q, sigma, alpha):
    """log A_alpha at fractional alpha by the two-sided series of MTZ19, Sec. 3.3.

    Split the integral E_{mu0}[(1 - q + q r(z))^alpha], r = mu1/mu0 = e^{(2z-1)/(2 sigma^2)},
    at z0 = sigma^2 log(1/q - 1) + 1/2 where q r = 1 - q. Below z0 expand in powers of
    q r / (1-q), above z0 in powers of (1-q)/(q r); both generalized binomial series
    converge. Term i of each:

        S0_i = C(a,i) (1-q)^{a-i} q^i     e^{(i^2-i)/(2s^2)} Phi((z0 - i)/s)
        S1_i = C(a,i) (1-q)^i   q^{a-i}   e^{(j^2-j)/(2s^2)} Phi((j - z0)/s),  j = a - i.

    C(a,i) has sign (-1)^(i - floor(a) - 1) for i > a: the terms are summed WITH their signs
    (dp_accounting 0.6 ``_compute_log_a_frac`` adds their absolute values, which
    overestimates A). Terms are accumulated in log space (positive and negative parts
    apart). Past i > a the series alternates and its magnitude decays only polynomially
    (~ i^-(a+2)) when z0 is small, so once the terms are smooth in i the remaining tail is
    summed by repeated averaging of partial sums (Euler / van Wijngaarden acceleration of
    an alternating series); the (tiny) difference between the last two averaging levels is
    added to the result, so the value stays an upper bound up to round-off.
    """
    log_q, log_1mq = math.log(q), math.log1p(-q)
    z0 = sigma * sigma * (log_1mq - log_q) + 0.5
    # beyond this index the terms alternate and are smooth functions of i
    smooth_from = int(math.ceil(max(alpha, z0, alpha - z0) + 10.0 * sigma + 16.0))
    lp, ln = -np.inf, -np.inf
    start = 0
    while True:
        stop = start + _FRAC_CHUNK
        if start < smooth_from:
            stop = min(stop, smooth_from)
        i = np.arange(start, stop, dtype=float)
        l0, l1, sign = _frac_terms(i, alpha, log_q, log_1mq, z0, sigma)
        lp, ln = _signed_add(lp, ln, np.concatenate([l0, l1]), np.concatenate([sign, sign]))
        start = stop
        tail = max(l0[-1], l1[-1])
        total = lp if ln == -np.inf else lp + math.log1p(-min(1.0, math.exp(ln - lp)))
        # precision target relative to A - 1 (A ~ 1 when q is small), not to A
        scale = total if total > 30 else math.log(max(math.expm1(total), 1e-300))
        if start > alpha + 2 and tail < scale - 40.0:
            return _signed_total(lp + 0.0, np.logaddexp(ln, -np.inf), tail)
        if start >= smooth_from:
            break
    # accelerate the alternating tail sum_{i >= start} S0_i + S1_i
    i = np.arange(start, start + _FRAC_TAIL, dtype=float)
    l0, l1, sign = _frac_terms(i, alpha, log_q, log_1mq, z0, sigma)
    ref = total
    u = sign * (np.exp(l0 - ref) + np.exp(l1 - ref))
    partial = np.cumsum(u)[-(_FRAC_LEVELS + 2):]
    prev = partial
    for _ in range(_FRAC_LEVELS):
        prev, partial = partial, 0.5 * (partial[1:] + partial[:-1])
    est = float(partial[-1])
    err = abs(float(partial[-1] - prev[-1])) + 1e-16 * abs(est)
    head = 1.0 if ln == -np.inf else -math.expm1(ln - lp)
    head *= math.exp(lp - ref)
    value = head + est + err
    if value <= 0.0:  # pragma: no cover - impossible in exact arithmetic (A >= 1)
        return float(lp)
    return float(ref + math.log(value))


def _signed_total(lp, ln, tail):
    """log(exp(lp) - exp(ln) + 2 exp(tail)): truncation bound added (sound)."""
    lp = np.logaddexp(lp, tail + math.log(2.0))
    if ln == -np.inf:
        return float(lp)
    ratio = math.exp(ln - lp)
    if ratio >= 1.0:  # pragma: no cover - impossible in exact arithmetic (A >= 1)
        return float(lp)
    return float(lp + math.log1p(-ratio))


def rdp_subsampled_gaussian(sampling_probability, sigma, orders):
    """RDP of the Poisson-subsampled Gaussian mechanism with noise multiplier ``sigma``.

    D_alpha((1-q) N(0, s^2) + q N(1, s^2) || N(0, s^2)), which dominates the other
    direction (Mironov, Talwar & Zhang 2019, Theorem 5), computed exactly at integer orders
    (finite binomial sum, Sec. 3.2) and by the signed two-sided series at fractional orders
    (Sec. 3.3). Stable in log space (no overflow for sigma >= 0.1 and orders up to 1024).
    q = 1 is the plain Gaussian alpha / (2 sigma^2).

    Parameters
    ----------
    sampling_probability : float in (0, 1]
    sigma : float > 0
        Noise multiplier (noise standard deviation / L2 sensitivity).
    orders : float or array of floats > 1

    Returns
    -------
    numpy.ndarray of RDP values, one per order.
    """
    q = probability(sampling_probability, "sampling_probability")
    sigma = positive(sigma, "sigma")
    a = orders_array(orders)
    full = a * _half_sq_ratio(1.0, sigma)
    if q == 1.0:
        return full
    out = full.copy()
    if sigma > _SIGMA_HUGE or not np.all(np.isfinite(full)):
        # Outside the series' range: the unsubsampled value is a sound upper bound (joint
        # convexity), +inf when sigma is so small that alpha / (2 sigma^2) overflows, and
        # below 1e-190 when sigma is huge.
        return out
    for n, alpha in enumerate(a):
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                if float(alpha).is_integer():
                    log_a = _log_a_int(q, sigma, alpha)
                else:
                    log_a = _log_a_frac(q, sigma, alpha)
        except (OverflowError, ValueError, FloatingPointError):
            continue  # tiny sigma: the series overflows; keep the sound full value
        if math.isfinite(log_a):
            out[n] = log_a / (alpha - 1.0)
    # round-off guards only: 0 <= subsampled <= full (joint convexity)
    return np.clip(out, 0.0, full)


def rdp_subsampled_bound(rdp_fn, sampling_probability, alpha):
    """Zhu & Wang (2019) Poisson-subsampling RDP bound at integer ``alpha`` >= 2, in the
    form stated as Theorem 3.1 / eq. (3) of Huang et al. 2022:

        1/(alpha-1) log{ (1-q)^{alpha-1} (alpha q - q + 1)
                         + sum_{l=2}^{alpha} C(alpha,l) (1-q)^{alpha-l} q^l e^{(l-1) eps(l)} },

    where ``rdp_fn(l)`` returns eps(l), the RDP of the base mechanism at integer order l.
    Huang et al. state it for base mechanisms whose randomness is Gaussian or Laplace noise;
    for the Gaussian it coincides with the exact integer-order value of
    :func:`rdp_subsampled_gaussian` (tested).
    """
    q = probability(sampling_probability, "sampling_probability")
    if isinstance(alpha, bool) or not float(alpha).is_integer() or alpha < 2:
        raise ValueError(f"alpha must be an integer >= 2 for the Zhu-Wang bound, got {alpha}")
    a = int(alpha)
    if q == 1.0:
        return float(rdp_fn(a))
    ls = np.arange(2, a + 1)
    eps = np.array([float(rdp_fn(int(l))) for l in ls])
    if np.any(np.isnan(eps)) or np.any(eps < 0):
        raise ValueError("rdp_fn must return non-negative RDP values (no NaN)")
    logc = gammaln(a + 1.0) - gammaln(ls + 1.0) - gammaln(a - ls + 1.0)
    terms = logc + (a - ls) * math.log1p(-q) + ls * math.log(q) + (ls - 1) * eps
    first = (a - 1) * math.log1p(-q) + math.log1p((a - 1) * q)
    return float(max(0.0, logsumexp(np.append(terms, first)) / (a - 1)))
