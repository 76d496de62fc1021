"""Conversions between privacy notions and classical (epsilon, delta) composition rules."""
import math

import numpy as np

from ._validation import count_int, delta_open, orders_array, positive, probability, real

__all__ = [
    "rdp_to_dp", "dp_to_rdp", "amplify_dp_by_subsampling", "linear_composition",
    "advanced_composition",
]


def rdp_to_dp(rdp, orders, delta):
    """(epsilon, delta)-DP from RDP values at several orders: returns ``(epsilon, order)``.

    For each order alpha with RDP r, the smallest of
      * r + log(1/delta) / (alpha - 1)                          (Mironov 2017, Prop. 3),
      * r + log(1 - 1/alpha) - (log(delta) + log(alpha)) / (alpha - 1)
        (Balle et al. 2020, Thm. 21; Canonne, Kamath & Steinke 2020, Prop. 12),
      * 0 when delta >= sqrt(1 - exp(-r)): total variation <= sqrt(1 - e^{-KL})
        (Bretagnolle-Huber) and KL <= D_alpha,

    minimised over the orders (so never worse than the classical conversion), floored at 0.
    An order with infinite RDP gives +inf; the result is never NaN.
    """
    a = orders_array(orders)
    r = np.atleast_1d(np.asarray(rdp, dtype=float))
    if r.shape != a.shape:
        raise ValueError(f"rdp and orders must have the same length, got {r.shape} and {a.shape}")
    if np.any(np.isnan(r)):
        raise ValueError("rdp contains NaN")
    if np.any(r < 0):
        raise ValueError("rdp values must be >= 0")
    delta = delta_open(delta)
    log_d = math.log(delta)
    with np.errstate(invalid="ignore", over="ignore"):
        classic = r - log_d / (a - 1)
        improved = r + np.log1p(-1.0 / a) - (log_d + np.log(a)) / (a - 1)
        eps = np.minimum(classic, improved)
        tv_ok = delta ** 2 + np.expm1(-r) >= 0
    eps = np.where(tv_ok, 0.0, eps)
    eps = np.where(np.isinf(r), np.inf, eps)
    eps = np.maximum(eps, 0.0)
    k = int(np.argmin(eps))
    return float(eps[k]), float(a[k])


def dp_to_rdp(epsilon, delta, alpha):
    """Largest RDP value eps_R at order ``alpha`` for which (alpha, eps_R)-RDP implies
    (epsilon, delta)-DP, as stated in Wang et al. 2022 Proposition 2 (Asoodeh et al. 2021)::

        eps_R = max{ epsilon - log(zeta_alpha / delta) / (alpha - 1),
                     epsilon + log((e^eps - alpha delta) ((delta - 1)/(delta - e^eps))^alpha
                                   + alpha delta) / (alpha - 1) },
        zeta_alpha = (1/alpha) (1 - 1/alpha)^(alpha - 1).

    The first term is the inverse of the Balle et al. 2020 conversion. Requires
    0 < alpha * delta < 1 for the second term (otherwise only the first is used). Returns
    max(eps_R, 0). The tests check it against the exact worst case (binary mechanisms).
    """
    epsilon = positive(epsilon, "epsilon", strict=False)
    delta = delta_open(delta)
    alpha = real(alpha, "alpha")
    if not alpha > 1 or math.isinf(alpha):
        raise ValueError(f"alpha must be a finite order > 1, got {alpha}")
    log_zeta = -math.log(alpha) + (alpha - 1) * math.log1p(-1.0 / alpha)
    t1 = epsilon - (log_zeta - math.log(delta)) / (alpha - 1)
    best = t1
    e = math.exp(epsilon) if epsilon < 700 else math.inf
    if alpha * delta < 1 and e - alpha * delta > 0 and math.isfinite(e):
        ratio = (1.0 - delta) / (e - delta)
        inner = (e - alpha * delta) * ratio ** alpha + alpha * delta
        if inner > 0:
            best = max(best, epsilon + math.log(inner) / (alpha - 1))
    return max(0.0, best)


def amplify_dp_by_subsampling(epsilon, delta, sampling_probability):
    """(epsilon, delta)-DP run on a Poisson (or uniform) subsample at rate q is
    (log(1 + q (e^epsilon - 1)), q delta)-DP (Li, Qardaji & Su 2012, Thm. 1; the
    amplification Park et al. 2016 uses, its Theorem 1 / eq. (6))."""
    epsilon = positive(epsilon, "epsilon", strict=False)
    delta = real(delta, "delta")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    q = probability(sampling_probability, "sampling_probability")
    return math.log1p(q * math.expm1(epsilon)) if epsilon < 700 else epsilon + math.log(q), q * delta


def linear_composition(epsilon, delta, k):
    """k-fold basic composition: (k epsilon, k delta) (Dwork & Roth 2014, Thm. 3.16)."""
    epsilon = positive(epsilon, "epsilon", strict=False)
    delta = real(delta, "delta")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    k = count_int(k, "k")
    return k * epsilon, min(1.0, k * delta)


def advanced_composition(epsilon, delta, k, delta_slack):
    """k-fold advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014,
    Thm. 3.20): (sqrt(2 k log(1/delta')) epsilon + k epsilon (e^epsilon - 1), k delta + delta').
    The result is also capped by the linear bound k epsilon (both hold)."""
    epsilon = positive(epsilon, "epsilon", strict=False)
    delta = real(delta, "delta")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    k = count_int(k, "k")
    delta_slack = delta_open(delta_slack, "delta_slack")
    adv = math.sqrt(2.0 * k * math.log(1.0 / delta_slack)) * epsilon + k * epsilon * math.expm1(epsilon)
    return min(adv, k * epsilon), min(1.0, k * delta + delta_slack)
