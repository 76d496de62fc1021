"""TopicDP's noise calibration: per-entry Gaussian, Laplace and matrix-variate Gaussian
scales for (epsilon, delta) at a given sensitivity, and the lattice versions' rounding
slack (Wang et al. 2022 Sec. 3.4)."""
import functools
import math

import numpy as np

from .._utils import check_positive
from ..accounting import calibrate_gaussian, dp_to_rdp
from ..noise.mechanisms import (  # noqa: F401  (_lattice_laplace_granularity: topicdp.py's name)
    _lattice_laplace_granularity, finest_lattice_granularity, lattice_rounding_slack)

_CALIBRATIONS = ("renyi", "gaussian")

# --------------------------------------------------------------------------------------
# Noise calibration
# --------------------------------------------------------------------------------------
def gaussian_sigma(sensitivity, epsilon, delta, calibration="renyi", renyi_order=2.0):
    """Per-entry Gaussian noise for (epsilon, delta)-DP at L2 ``sensitivity``.

    ``calibration="renyi"`` (Wang et al. 2022 Sec. 3.4): convert (epsilon, delta) to an RDP
    budget eps_R at order alpha = ``renyi_order`` with :func:`dptm.accounting.dp_to_rdp`
    (Asoodeh et al.; Prop. 2), then ``sigma = sqrt(alpha Delta^2 / (2 eps_R))`` (Theorem 2).
    Sound, but a single order is loose: at alpha = 2 and delta = 1e-4 it needs about 15x
    the noise of the tight calibration for epsilon = 1.

    ``calibration="gaussian"``: the smallest sigma whose RDP curve (all orders) gives
    (epsilon, delta) (:func:`dptm.accounting.calibrate_gaussian`).

    Returns
    -------
    sigma : float
    eps_r : float or None
        The RDP budget at ``renyi_order`` (None for ``"gaussian"``).
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    if calibration == "renyi":
        alpha = check_positive(renyi_order, "renyi_order")
        if not alpha > 1:
            raise ValueError(f"renyi_order must be > 1, got {alpha}")
        eps_r = dp_to_rdp(epsilon, delta, alpha)
        if not eps_r > 0:
            raise ValueError(
                f"(target_epsilon={epsilon}, target_delta={delta}) cannot be reached through "
                f"a Renyi order-{alpha} bound (eps_R = 0); use a larger target_delta or "
                "target_epsilon, another renyi_order, or calibration='gaussian'")
        return math.sqrt(alpha * sensitivity ** 2 / (2.0 * eps_r)), eps_r
    if calibration == "gaussian":
        return _noise_multiplier(float(epsilon), float(delta)) * sensitivity, None
    raise ValueError(f"calibration must be one of {_CALIBRATIONS}, got {calibration!r}")


@functools.lru_cache(maxsize=256)
def _noise_multiplier(epsilon, delta):
    """sigma / sensitivity of the tight Gaussian calibration (a function of public
    parameters only; cached: the root-find costs ~30 ms)."""
    return calibrate_gaussian(epsilon, delta)


def laplace_scale(n_rows, epsilon):
    """Laplace scale of the Wang et al. 2022 Sec. 4.2 baseline: global L1 sensitivity
    ``2 n_rows`` (each released row is a probability vector, and two probability vectors
    differ by at most 2 in L1), so scale = 2 m / epsilon for pure epsilon-DP."""
    return 2.0 * n_rows / check_positive(epsilon, "epsilon")


def _harmonic(r, power):
    return float(np.sum(1.0 / np.arange(1, r + 1) ** power))


def mvg_sigma(shape, sensitivity, epsilon, delta, sup_norm=None):
    """Per-entry noise std of the MVG mechanism (Chanyaswad et al. 2018, Theorem 3) with
    isotropic row and column covariances (Sigma = a I_m, Psi = b I_n).

    Theorem 3 asks ``||sigma(Sigma^-1)||_2 ||sigma(Psi^-1)||_2 <= (-beta + sqrt(beta^2 +
    8 alpha epsilon))^2 / (4 alpha^2)`` with ``alpha = (H_r + H_{r,1/2}) gamma^2 + 2 H_r
    gamma s_2``, ``beta = 2 (m n)^{1/4} zeta(delta) H_r s_2``, ``zeta(delta) = sqrt(2
    sqrt(-m n log delta) - 2 log delta + m n)``, r = min(m, n), H generalized harmonic
    numbers, s_2 the L2 sensitivity and gamma = sup ||f(X)||_F. For isotropic covariances the
    left side is sqrt(m n) / (a b) and the per-entry variance is a b, so the smallest
    per-entry std is ``(sqrt(m n) / bound)^(1/2)``. ``sup_norm`` defaults to sqrt(m) (m
    probability rows). Taken as stated in that paper; the baseline of Wang et al. 2022.
    """
    m, n = int(shape[0]), int(shape[1])
    s2 = check_positive(sensitivity, "sensitivity")
    epsilon = check_positive(epsilon, "epsilon")
    gam = math.sqrt(m) if sup_norm is None else check_positive(sup_norm, "sup_norm")
    r = min(m, n)
    h1, hh = _harmonic(r, 1.0), _harmonic(r, 0.5)
    zeta = math.sqrt(2.0 * math.sqrt(-m * n * math.log(delta)) - 2.0 * math.log(delta) + m * n)
    a = (h1 + hh) * gam ** 2 + 2.0 * h1 * gam * s2
    b = 2.0 * (m * n) ** 0.25 * zeta * h1 * s2
    bound = (-b + math.sqrt(b * b + 8.0 * a * epsilon)) ** 2 / (4.0 * a * a)
    return math.sqrt(math.sqrt(m * n) / bound)


def rounding_slack(granularity, n_coords, norm=2):
    """How far rounding to the lattice g Z can move a sensitivity: each coordinate of two
    neighbouring statistics is rounded separately, so their difference can grow by up to
    g on each of ``n_coords`` coordinates (:func:`dptm.noise.mechanisms.lattice_rounding_slack`
    with ``rounded="statistic"``): ``g sqrt(n_coords)`` in L2, ``g n_coords`` in L1."""
    return lattice_rounding_slack(granularity, int(n_coords), norm=norm, rounded="statistic")


def _lattice_gaussian_calibration(sensitivity, sigma_of, n_coords):
    """(sigma, g, total_sensitivity): the smallest fixed point of sigma >= sigma_of(Delta +
    slack(g)) with the recorded sensitivity covering the rounding of all ``n_coords``
    released coordinates.

    g is the finest grid the exact sampler supports (sigma / g in [8192, 16384)) and sigma
    is rounded up to a whole number of steps, so the variance in lattice units is an exact
    integer (the sampler then needs no rational approximation)."""
    total = sensitivity
    for _ in range(200):
        sigma = sigma_of(total)
        g = finest_lattice_granularity(sigma)
        sigma = g * math.ceil(sigma / g)
        need = sensitivity + rounding_slack(g, n_coords)
        if need <= total:
            return sigma, g, total
        total = need
    raise ValueError(
        f"the lattice rounding of {n_coords} released values needs more noise than the "
        "calibration can absorb at this epsilon; release fewer values (output='keywords') or "
        "raise target_epsilon")
