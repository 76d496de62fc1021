"""The papers' own privacy accounting, as named functions, for reproduction.

These are what the papers compute, including where that is loose or unsound; dptm's
default guarantees come from the accountants, never from here. Each docstring names the
equation it implements and says whether it is sound.
"""
import math

from scipy.optimize import brentq

from ._validation import count_int, delta_open, positive, probability
from .conversions import dp_to_rdp
from .events import epsilon_from_flip
from .rdp import rdp_gaussian, rdp_subsampled_bound
from .zcdp import zcdp_from_dp_target

__all__ = [
    "park2016_iterations", "park2016_per_iteration_budget", "park2016_noise_multiplier",
    "park2016_epsilon", "huang2022_eps_subsample", "huang2022_sigma",
    "huang2022_efficiency_privacy", "huang2022_total_rdp", "zhao2021_linear_epsilon",
    "zhao2021_inherent_epsilon", "zhao2021_local_epsilon", "wang2022_sigma",
]

COMPOSITIONS = ("zcdp", "advanced", "linear")


# ------------------------------------------------------------------ Park et al. 2016 (VIPS)
def park2016_iterations(n_seen, batch_size):
    """J = n_seen / S iterations (rounded up)."""
    n_seen = count_int(n_seen, "n_seen")
    batch_size = count_int(batch_size, "batch_size")
    return -(-n_seen // batch_size)


def _gaussian_classic_eps(delta, z):
    # sigma^2 >= 2 log(1.25/delta) Delta^2 / eps^2  <=>  eps = sqrt(2 log(1.25/delta)) / z
    return math.sqrt(2.0 * math.log(1.25 / delta)) / z


def park2016_per_iteration_budget(target_epsilon, target_delta, n_docs, batch_size, n_seen,
                                  composition="zcdp"):
    """Per-iteration (eps_iter, delta_iter) of Park et al. 2016 for a total budget.

    nu = S / D (sampling ratio), J = n_seen / S iterations. The total budget is first split
    into a per-iteration budget (eps', delta') of the *subsampled* step:

    * ``"zcdp"`` (eq. (5)): rho_tot solves eps_tot = rho + 2 sqrt(rho log(1/delta_tot)),
      rho' = rho_tot / J is treated as the zCDP of a Gaussian of variance
      tau = Delta^2 / (2 rho') (Lemma 1), and (eps', delta') is read off
      tau = 2 log(1.25/delta') Delta^2 / eps'^2. The paper does not say how delta' is
      chosen; we take delta' = delta_tot / J (so the per-step deltas add up to delta_tot,
      as in its linear baseline).
    * ``"linear"`` (Dwork & Roth Thm 3.16): eps' = eps_tot / J, delta' = delta_tot / J.
    * ``"advanced"`` (Dwork & Roth Thm 3.20): J eps'(e^eps' - 1) + sqrt(2 J log(1/delta''))
      eps' = eps_tot with delta'' = delta_tot / 2 and delta' = delta_tot / (2 J).

    Then eq. (6) inverts amplification by subsampling (Theorem 1):
    eps_iter = log(1 + (e^eps' - 1) / nu), delta_iter = delta' / nu.

    Soundness: the linear and advanced routes are sound *if* the per-iteration Gaussian
    calibration eq. (3) holds, which needs eps_iter < 1; eq. (3) is applied beyond that.
    The zCDP route is unsound as a derivation: it assigns the subsampled mechanism, which is
    (eps', delta')-DP, the zCDP of a Gaussian of variance tau, which it does not have.
    """
    eps = positive(target_epsilon, "target_epsilon")
    delta = delta_open(target_delta, "target_delta")
    n_docs = count_int(n_docs, "n_docs")
    batch_size = count_int(batch_size, "batch_size")
    if batch_size > n_docs:
        raise ValueError(f"batch_size must be <= n_docs, got {batch_size} > {n_docs}")
    J = park2016_iterations(n_seen, batch_size)
    nu = batch_size / n_docs
    if composition == "zcdp":
        rho_iter = zcdp_from_dp_target(eps, delta) / J
        delta_p = delta / J
        eps_p = math.sqrt(2.0 * math.log(1.25 / delta_p) * 2.0 * rho_iter)
    elif composition == "linear":
        eps_p, delta_p = eps / J, delta / J
    elif composition == "advanced":
        d2 = delta / 2.0
        delta_p = delta / (2.0 * J)
        f = lambda e: J * e * math.expm1(e) + math.sqrt(2.0 * J * math.log(1.0 / d2)) * e - eps
        eps_p = brentq(f, 0.0, min(eps, 50.0), xtol=1e-15, rtol=1e-13)
    else:
        raise ValueError(f"composition must be one of {COMPOSITIONS}, got {composition!r}")
    eps_iter = math.log1p(math.expm1(eps_p) / nu) if eps_p < 700 else eps_p - math.log(nu)
    delta_iter = delta_p / nu
    if not delta_iter < 1.0:
        raise ValueError(f"per-iteration delta {delta_iter:.3g} >= 1: target_delta too large for "
                         f"sampling ratio {nu:.3g} with {J} iterations")
    return eps_iter, delta_iter


def park2016_noise_multiplier(target_epsilon, target_delta, n_docs, batch_size, n_seen,
                              composition="zcdp"):
    """Noise multiplier sigma / Delta of Park et al. 2016 Algorithm 1 for a total budget:
    eq. (3) sigma = sqrt(2 log(1.25/delta_iter)) Delta / eps_iter with the per-iteration
    budget of :func:`park2016_per_iteration_budget` (eqs. (5)-(6))."""
    eps_iter, delta_iter = park2016_per_iteration_budget(
        target_epsilon, target_delta, n_docs, batch_size, n_seen, composition)
    return math.sqrt(2.0 * math.log(1.25 / delta_iter)) / eps_iter


def park2016_epsilon(noise_multiplier, delta, n_docs, batch_size, n_seen, composition="zcdp"):
    """Total epsilon Park et al. 2016 claims at ``delta`` for a given noise multiplier: the
    inverse of :func:`park2016_noise_multiplier` in ``target_epsilon``."""
    z = positive(noise_multiplier, "noise_multiplier")
    delta = delta_open(delta)

    def g(log_eps):
        return math.log(park2016_noise_multiplier(math.exp(log_eps), delta, n_docs, batch_size,
                                                  n_seen, composition)) - math.log(z)

    lo, hi = math.log(1e-6), math.log(50.0)
    if g(lo) < 0:
        return math.exp(lo)
    if g(hi) > 0:
        return math.inf
    return math.exp(brentq(g, lo, hi, xtol=1e-12))


# ------------------------------------------------------------------ Huang et al. 2022 (SUB-LDA)
def huang2022_sigma(alpha, eps_alpha):
    """Noise of SUB-LDA: sigma^2 = alpha / (2 eps(alpha)) (Huang et al. 2022 Sec. 4.1, unit
    sensitivity): the Gaussian whose RDP at order alpha is eps(alpha)."""
    alpha = positive(alpha, "alpha")
    eps_alpha = positive(eps_alpha, "eps_alpha")
    return math.sqrt(alpha / (2.0 * eps_alpha))


def huang2022_eps_subsample(alpha, gamma, sigma=None, *, eps_alpha=None, sensitivity=1.0):
    """Per-iteration RDP eps_subsample(alpha) of Huang et al. 2022, Theorem 3.1 / eq. (3):
    the Zhu-Wang bound (:func:`rdp_subsampled_bound`) of the Gaussian with RDP
    eps(l) = l Delta^2 / (2 sigma^2), Poisson-subsampled at rate ``gamma``.

    Give ``sigma`` or ``eps_alpha`` (then sigma = sqrt(alpha / (2 eps_alpha)), as the
    paper's Table 3 does with alpha = 14, eps(alpha) = 2).

    Not a sound guarantee for SUB-LDA: the noisy snapshot depends on every token, sampled
    or not, so the Gaussian release is not amplified by the token subsampling (DESIGN 3.2).
    """
    if (sigma is None) == (eps_alpha is None):
        raise ValueError("give exactly one of sigma or eps_alpha")
    if sigma is None:
        sigma = huang2022_sigma(alpha, eps_alpha)
    sigma = positive(sigma, "sigma")
    gamma = probability(gamma, "gamma")
    return rdp_subsampled_bound(lambda l: float(rdp_gaussian(sigma, [l], sensitivity)[0]), gamma, alpha)


def huang2022_total_rdp(alpha, gamma, iterations, sigma=None, *, eps_alpha=None):
    """Accumulated loss of Table 3, eps = Iter * eps_subsample(alpha) (an RDP value at
    order alpha; the paper reports it without converting to (epsilon, delta))."""
    iterations = count_int(iterations, "iterations")
    return iterations * huang2022_eps_subsample(alpha, gamma, sigma, eps_alpha=eps_alpha)


def huang2022_epsilon(alpha, gamma, iterations, sigma=None, *, eps_alpha=None, delta=1e-5):
    """The paper's total of Table 3 (:func:`huang2022_total_rdp`, RDP at order ``alpha``)
    converted to (epsilon, delta)-DP with Mironov's eps + log(1/delta) / (alpha - 1), the
    conversion of the paper's time, so that it can be read next to a sound epsilon at the
    same delta. Inherits the unsound amplification of :func:`huang2022_eps_subsample`."""
    delta = delta_open(delta, "delta")
    return (huang2022_total_rdp(alpha, gamma, iterations, sigma, eps_alpha=eps_alpha)
            + math.log(1.0 / delta) / (alpha - 1.0))


def huang2022_efficiency_privacy(alpha, gamma, sigma=None, *, eps_alpha=None):
    """Efficiency-privacy function I = gamma * exp((alpha - 1) eps_subsample(alpha))
    (Huang et al. 2022 eq. (6), the kernel of eq. (5) without the constant t sum_d N_d).
    Lemma 4.1: unimodal in gamma on (0, 1]."""
    e = huang2022_eps_subsample(alpha, gamma, sigma, eps_alpha=eps_alpha)
    return gamma * math.exp((alpha - 1) * e)


# ------------------------------------------------------------------ Zhao et al. 2021 (HDP-LDA)
def zhao2021_inherent_epsilon(clip, beta):
    """Inherent privacy of one sampling step of HDP-LDA: eps_I = 2 log(C / beta + 1)
    (Zhao et al. 2021 Theorem 3)."""
    clip = positive(clip, "clip")
    beta = positive(beta, "beta")
    return 2.0 * math.log1p(clip / beta)


def zhao2021_linear_epsilon(iterations, eps_laplace, clip, beta):
    """The paper's total for T iterations: T (eps_L + eps_I) (linear composition; sound
    for its word-level adjacency but loose - the accountants' zCDP/RDP route is tighter)."""
    iterations = count_int(iterations, "iterations")
    eps_laplace = positive(eps_laplace, "eps_laplace")
    return iterations * (eps_laplace + zhao2021_inherent_epsilon(clip, beta))


def zhao2021_local_epsilon(f):
    """Local epsilon per word of LP-LDA: log((1 - f/2) / (f/2)) (Zhao et al. 2021 Thm 4)."""
    return epsilon_from_flip(f)


# ------------------------------------------------------------------ Wang et al. 2022 (TopicDP)
def wang2022_sigma(epsilon, delta, sensitivity, alpha=2.0):
    """Noise of TopicDP: eps_R = dp_to_rdp(eps, delta, alpha) (Proposition 2) and
    sigma_R = sqrt(alpha Delta_s^2 / (2 eps_R)) (Algorithm 2 / Theorem 2); raises if the
    target admits no positive eps_R."""
    sensitivity = positive(sensitivity, "sensitivity")
    eps_r = dp_to_rdp(epsilon, delta, alpha)
    if eps_r <= 0:
        raise ValueError(f"(epsilon={epsilon}, delta={delta}) is not reachable at order alpha={alpha}")
    return math.sqrt(alpha * sensitivity ** 2 / (2.0 * eps_r))
