"""Zero-concentrated DP (Bun & Steinke 2016): rho-zCDP means RDP alpha * rho at every order."""
import math

from scipy.optimize import minimize_scalar

from ._validation import delta_open, positive

__all__ = ["zcdp_gaussian", "zcdp_from_pure", "zcdp_to_dp", "zcdp_from_dp_target"]


def zcdp_gaussian(sigma, sensitivity=1.0):
    """rho of the Gaussian mechanism: Delta^2 / (2 sigma^2) (Bun & Steinke 2016, Prop. 1.6).

    Also valid for the discrete Gaussian (Canonne, Kamath & Steinke 2020, Thm. 4)."""
    sigma = positive(sigma, "sigma")
    sensitivity = positive(sensitivity, "sensitivity")
    from .rdp import _half_sq_ratio  # inf / tiny instead of ZeroDivision- / OverflowError
    return _half_sq_ratio(sensitivity, sigma)


def zcdp_from_pure(epsilon):
    """epsilon-DP implies (epsilon^2 / 2)-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
    epsilon = positive(epsilon, "epsilon", allow_inf=True)
    return 0.5 * epsilon * epsilon  # float multiplication overflows to inf, ** raises


def _bun_steinke(rho, delta):
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def zcdp_to_dp(rho, delta, method="cks"):
    """(epsilon, delta)-DP implied by rho-zCDP.

    ``method="bun-steinke"``: epsilon = rho + 2 sqrt(rho log(1/delta)) (Bun & Steinke 2016,
    Prop. 1.3; the conversion Park et al. 2016 uses, its Proposition 1).
    ``method="cks"``: the tighter conversion of Canonne, Kamath & Steinke 2020 (Prop. 12,
    via Balle et al. 2020 Thm. 21), epsilon = inf_{alpha > 1} alpha rho
    + (log(1/delta) + (alpha - 1) log(1 - 1/alpha) - log(alpha)) / (alpha - 1), minimised
    numerically; never larger than the Bun-Steinke value (the minimum of both is returned).
    rho = +inf gives +inf.
    """
    delta = delta_open(delta)
    rho = positive(rho, "rho", allow_inf=True, strict=False)
    if rho == 0.0:
        return 0.0
    if math.isinf(rho):
        return math.inf
    bs = _bun_steinke(rho, delta)
    if method == "bun-steinke" or rho < 1e-250:
        # (for a vanishing rho the optimum alpha overflows; Bun-Steinke is sound and tight
        # to within 2 sqrt(rho log(1/delta)) < 1e-120 there)
        return bs
    if method != "cks":
        raise ValueError(f"method must be 'cks' or 'bun-steinke', got {method!r}")
    log_inv = math.log(1.0 / delta)

    def f(log_am1):
        am1 = math.exp(log_am1)
        a = am1 + 1.0
        return a * rho + (log_inv + am1 * math.log1p(-1.0 / a) - math.log(a)) / am1

    # the optimum is near alpha - 1 = sqrt(log(1/delta) / rho)
    guess = math.log(max(math.sqrt(log_inv / rho), 1e-8))
    res = minimize_scalar(f, bounds=(guess - 12.0, guess + 12.0), method="bounded",
                          options={"xatol": 1e-10})
    val = min(float(res.fun), f(guess), bs)
    return max(0.0, val)


def zcdp_from_dp_target(epsilon, delta):
    """Largest rho with rho + 2 sqrt(rho log(1/delta)) <= epsilon (inverse Bun-Steinke):
    rho = (sqrt(log(1/delta) + epsilon) - sqrt(log(1/delta)))^2 (Park et al. 2016 eq. (5))."""
    epsilon = positive(epsilon, "epsilon")
    delta = delta_open(delta)
    L = math.log(1.0 / delta)
    # stable form of (sqrt(L + e) - sqrt(L))^2 = e^2 / (sqrt(L + e) + sqrt(L))^2
    den = math.sqrt(L + epsilon) + math.sqrt(L)
    return (epsilon / den) * (epsilon / den)
