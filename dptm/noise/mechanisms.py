"""Noise for differential privacy: Laplace, Gaussian and their exact discrete versions.

Every sampler takes a ``numpy.random.Generator`` and draws from its BitGenerator in C
(``dptm._cgs``, imported on the first draw), so one seed gives one stream and the same result
everywhere. The exact samplers' tables and proofs are beside this module in
:mod:`dptm.noise` (``laplace_table``, ``gauss_table``, ``gauss_inversion``, ``exact``);
:func:`discrete_gaussian_table` is the one choice between them.

The discrete samplers are the exact algorithms of Canonne, Kamath & Steinke (2020), "The
Discrete Gaussian for Differential Privacy" (Algorithms 1-3): they use integer arithmetic
only, so the output follows the stated pmf exactly. They need rational parameters: the
scale (discrete Laplace) or the variance (discrete Gaussian) is replaced by the nearest
fraction on a fine grid, rounded up (relative change below 1e-6 for moderate values);
:func:`discrete_laplace_parameters` / :func:`discrete_gaussian_parameters` return the exact
value actually used, which is what the accountant must be told.

Real-valued statistics get noise that is exact on a lattice: the statistic is rounded to a
power-of-two grid g Z and g times an exact integer noise is added (:func:`lattice_gaussian`,
:func:`lattice_laplace`), so every output is an exact multiple of g and no floating-point
bit pattern depends on the input beyond the mechanism. Rounding can add up to g per
coordinate to the difference of two neighbouring statistics (g/2 when each record's
contribution is rounded instead); :func:`lattice_rounding_slack` is what the sensitivity
must grow by (the grid is fine: g <= scale / 4096).

Distributions (all centred at 0)
--------------------------------
- Laplace(b): density ``exp(-|x|/b) / (2b)``; epsilon = Delta_1 / b.
- Gaussian(sigma): ``N(0, sigma^2)``; rho-zCDP with rho = Delta_2^2 / (2 sigma^2).
- discrete Laplace(t): ``P(x) = (1 - e^{-1/t}) / (1 + e^{-1/t}) e^{-|x|/t}`` on the integers;
  epsilon = Delta_1 / t for integer-valued queries.
- discrete Gaussian(sigma): ``P(x) ∝ exp(-x^2 / (2 sigma^2))`` on the integers; same
  zCDP bound as the continuous Gaussian (CKS20, Theorem 4).
"""
import math
from fractions import Fraction

import numpy as np

from .._utils import check_positive
from . import gauss_inversion, gauss_table

__all__ = [
    "laplace_noise", "gaussian_noise", "discrete_laplace_noise", "discrete_gaussian_noise",
    "discrete_laplace_parameters", "discrete_gaussian_parameters", "discrete_laplace_pmf",
    "discrete_gaussian_pmf", "lattice_granularity", "round_to_lattice", "lattice_gaussian",
    "lattice_laplace", "lattice_rounding_slack", "finest_lattice_granularity",
    "discrete_gaussian_table",
]

_MAX_DEN = 1 << 20
_U64 = 1 << 64


def _check_rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"shape must be non-negative, got {shape}")
    return shape


def laplace_noise(shape, scale, rng):
    """I.i.d. Laplace(0, ``scale``) noise as a float64 array of ``shape``."""
    from .. import _cgs
    scale = check_positive(scale, "scale")
    out = np.empty(_shape(shape), dtype=np.float64)
    _cgs.fill_noise(out.reshape(-1), 1, scale, _check_rng(rng).bit_generator)
    return out


def gaussian_noise(shape, sigma, rng):
    """I.i.d. N(0, ``sigma``^2) noise as a float64 array of ``shape``."""
    from .. import _cgs
    sigma = check_positive(sigma, "sigma")
    out = np.empty(_shape(shape), dtype=np.float64)
    _cgs.fill_noise(out.reshape(-1), 2, sigma, _check_rng(rng).bit_generator)
    return out


def _float_down(frac):
    """The largest float64 <= the rational ``frac`` (> 0)."""
    x = float(frac)
    while Fraction(x) > frac:
        x = math.nextafter(x, 0.0)
    return x


def _sqrt_down(frac):
    """The largest float64 whose square is <= the rational ``frac`` (> 0): the sampled
    standard deviation sqrt(frac) itself when it is a float64, else the float just below it,
    so a report never states more noise than was drawn (round-to-nearest would in about
    half of the cases, by one ulp)."""
    x = math.sqrt(frac.numerator / frac.denominator)
    while Fraction(x) ** 2 > frac:
        x = math.nextafter(x, 0.0)
    while Fraction(math.nextafter(x, math.inf)) ** 2 <= frac:
        x = math.nextafter(x, math.inf)
    return x


def discrete_laplace_parameters(scale):
    """Integers ``(t, s)``: the rational scale t/s actually sampled for ``scale``, rounded
    up (never less noise than asked) on a grid of 2^-20.

    Returns
    -------
    (t, s, effective_scale)
        ``effective_scale`` is t/s when it is a float64, else the float just below it
        (never more noise than drawn): what the accountant must be told.
    """
    scale = check_positive(scale, "scale")
    if scale > 2.0 ** 40:
        raise ValueError(f"scale must be <= 2^40 for the exact discrete Laplace, got {scale}")
    frac = Fraction(math.ceil(Fraction(scale) * _MAX_DEN), _MAX_DEN)
    return frac.numerator, frac.denominator, _float_down(frac)


def discrete_gaussian_parameters(sigma):
    """Integers ``(p, q, t)``: the variance parameter sigma^2 = p/q actually sampled (rounded
    up on a grid of 1/q, q a power of two, so never less noise than asked) and
    t = floor(sqrt(p/q)) + 1, with 2 p q t^2 < 2^64 (the kernel's integer range).

    Returns
    -------
    (p, q, t, effective_sigma)
        ``effective_sigma`` is the sampled standard deviation sqrt(p/q) when it is a
        float64, else the largest float64 below it (never more noise than drawn): what the
        accountant must be told.
    """
    sigma = check_positive(sigma, "sigma")
    if sigma > 2.0 ** 14:
        raise ValueError(f"sigma must be <= 16384 for the exact discrete Gaussian, got {sigma}")
    var = Fraction(sigma) ** 2
    q = _MAX_DEN
    while True:
        frac = Fraction(math.ceil(var * q), q)
        p, qq = frac.numerator, frac.denominator
        t = math.isqrt(p // qq) + 1
        while t ** 2 * qq <= p:       # exact floor(sqrt(p/q)) + 1
            t += 1
        while (t - 1) ** 2 * qq > p:
            t -= 1
        if 2 * p * qq * t * t < _U64:
            return p, qq, t, _sqrt_down(frac)
        if q == 1:  # pragma: no cover - excluded by the sigma bound above
            raise ValueError(f"sigma={sigma} too large for the exact discrete Gaussian")
        q //= 2


def discrete_laplace_noise(shape, scale, rng):
    """Exact discrete Laplace noise, P(x) ∝ exp(-|x|/scale) on the integers, as int64.

    ``scale`` is rounded to the rational :func:`discrete_laplace_parameters` (scale)."""
    from .. import _cgs
    t, s, _ = discrete_laplace_parameters(scale)
    out = np.empty(_shape(shape), dtype=np.int64)
    _cgs.fill_discrete_laplace(out.reshape(-1), t, s, _check_rng(rng).bit_generator)
    return out


def discrete_gaussian_noise(shape, sigma, rng):
    """Exact discrete Gaussian noise, P(x) ∝ exp(-x^2 / (2 sigma^2)) on the integers, as int64.

    ``sigma^2`` is rounded to the rational :func:`discrete_gaussian_parameters` (sigma)."""
    from .. import _cgs
    p, q, t, _ = discrete_gaussian_parameters(sigma)
    out = np.empty(_shape(shape), dtype=np.int64)
    bit_generator = _check_rng(rng).bit_generator
    table = discrete_gaussian_table(p, q, inversion=False)
    if table is not None:
        # the same pmf, about five times faster: rejection from an alias-table proposal
        _cgs.fill_discrete_gaussian_table(out.reshape(-1), table, bit_generator)
    else:
        _cgs.fill_discrete_gaussian(out.reshape(-1), p, q, t, bit_generator)
    return out


def discrete_gaussian_table(p, q, *, inversion=True):
    """The table-driven exact sampler of the discrete Gaussian of variance ``p / q`` (the
    same pmf whichever is chosen; the one sampler choice of the package).

    Exact inversion (:mod:`dptm.noise.gauss_inversion`, a few ns a draw) up to sigma = 1024,
    the alias-table proposal (:mod:`dptm.noise.gauss_table`) above, where the inversion table
    grows too big, and None (CKS20's sampler, ``_cgs.fill_discrete_gaussian``) outside the
    alias table's range. ``inversion=False`` skips the inversion table: the public
    :func:`discrete_gaussian_noise` keeps the alias-table stream its seeded draws were
    published with (the frozen-draws test pins them)."""
    if inversion:
        table = gauss_inversion.table_for(p, q)
        if table is not None:
            return table
    return gauss_table.table_for(p, q)


def discrete_laplace_pmf(x, scale):
    """pmf of the discrete Laplace of ``scale`` at integers ``x`` (closed form)."""
    x = np.asarray(x)
    r = math.exp(-1.0 / scale)
    return (1 - r) / (1 + r) * np.exp(-np.abs(x) / scale)


def discrete_gaussian_pmf(x, sigma, support=None):
    """pmf of the discrete Gaussian at integers ``x``; the normaliser is summed over
    ``support`` (default: |x| <= 40 sigma + 40, beyond which terms are below 1e-300)."""
    x = np.asarray(x)
    if support is None:
        m = int(40 * sigma + 40)
        support = np.arange(-m, m + 1)
    norm = np.exp(-np.asarray(support, dtype=float) ** 2 / (2 * sigma ** 2)).sum()
    return np.exp(-x.astype(float) ** 2 / (2 * sigma ** 2)) / norm


# The lattice is at most scale / 2^12 apart: the rounding is far below the noise and the
# integer samplers' parameters (at most 2^13) stay well inside their exact ranges.
_LATTICE_STEPS = 12


def lattice_granularity(scale):
    """The power of two g with ``scale / g`` in [4096, 8192): the lattice spacing used for
    noise of standard deviation (or scale) ``scale``."""
    scale = check_positive(scale, "scale")
    g = math.ldexp(1.0, math.frexp(scale)[1] - 1 - _LATTICE_STEPS)
    if g == 0.0:
        raise ValueError(f"scale={scale} is too small for a lattice mechanism")
    return g


def finest_lattice_granularity(scale):
    """The power of two g with ``scale / g`` in [8192, 16384): the finest lattice the exact
    discrete Gaussian sampler takes (sigma / g <= 2^14), half of
    :func:`lattice_granularity`."""
    return lattice_granularity(scale) / 2.0


def _check_granularity(granularity, scale):
    if granularity is None:
        return lattice_granularity(scale)
    g = check_positive(granularity, "granularity")
    if math.frexp(g)[0] != 0.5:
        raise ValueError(f"granularity must be a power of two, got {g}")
    return g


def round_to_lattice(x, granularity):
    """``x`` rounded to the nearest multiple of ``granularity`` (a power of two), float64.

    The result is exact (``k * granularity`` with integer k) while ``|x| / granularity``
    stays below 2^52; larger values raise ``ValueError``."""
    g = _check_granularity(granularity, 1.0)
    x = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(x)):
        raise ValueError("x must be finite to be rounded to a lattice")
    k = np.rint(x / g)
    if k.size and np.abs(k).max() >= 2.0 ** 52:
        raise ValueError(f"x is too large for a lattice of granularity {g} (|x| / g >= 2^52)")
    return k * g


def lattice_rounding_slack(granularity, n_coords, norm=2, rounded="statistic"):
    """How much rounding to the lattice can add to a sensitivity.

    ``rounded="statistic"``: neighbouring statistics a, b that differ in ``n_coords``
    coordinates are each rounded; per coordinate ``|round(a) - round(b)| <= |a - b| + g``
    (0.49 g and 0.51 g round to 0 and g), so the slack is ``g * sqrt(n_coords)`` in L2
    (``norm=2``) and ``g * n_coords`` in L1 (``norm=1``).
    ``rounded="contribution"``: each record's contribution is rounded before summing (the
    sum is then exact on the lattice and neighbours differ by one rounded contribution):
    ``g/2`` per coordinate, ``g/2 * sqrt(n_coords)`` in L2, ``g/2 * n_coords`` in L1."""
    g = check_positive(granularity, "granularity")
    if isinstance(n_coords, bool) or not isinstance(n_coords, (int, np.integer)) or n_coords < 0:
        raise ValueError(f"n_coords must be a non-negative integer, got {n_coords!r}")
    if rounded not in ("statistic", "contribution"):
        raise ValueError(f"rounded must be 'statistic' or 'contribution', got {rounded!r}")
    per_coord = g if rounded == "statistic" else g / 2
    if norm == 2:
        return per_coord * math.sqrt(int(n_coords))
    if norm == 1:
        return per_coord * int(n_coords)
    raise ValueError(f"norm must be 1 or 2, got {norm!r}")


# sigma / g of a lattice whose rounding slack is charged to the sensitivity stays below this
# (the exact discrete Gaussian sampler takes sigma <= 2^14 in lattice units; the rational
# rounding of sigma^2 adds a little).
_MAX_LATTICE_SIGMA = 12000.0


def _granularity_with_slack(sigma_c, z, n_coords):
    """Lattice spacing g (a power of two) for noise sigma_c = z * base sensitivity when the
    rounding slack of a rounded statistic is added to the recorded sensitivity.

    After rounding, the recorded sensitivity is base + g sqrt(n) and sigma = z (base +
    g sqrt(n)), so sigma / g = sigma_c / g + z sqrt(n): g is the smallest power of two
    (default: ``lattice_granularity(sigma_c)``, coarser only when needed) keeping that
    within the exact sampler's range. Raises when z sqrt(n) alone is too large."""
    room = _MAX_LATTICE_SIGMA - z * math.sqrt(n_coords)
    if room < _MAX_LATTICE_SIGMA / 3:
        raise ValueError(
            f"noise multiplier {z:.4g} is too large for the lattice mechanism with "
            f"{n_coords} coordinates per document (the rounding slack would dominate the "
            "sensitivity); use a smaller noise_multiplier or mechanism='gaussian'")
    g = lattice_granularity(sigma_c)
    while sigma_c / g > room:
        g *= 2.0
    return g


def _lattice_laplace_granularity(l1_sensitivity, n_coords, scale):
    """A power of two g with rounding slack g * n_coords <= 1e-3 x the L1 sensitivity and at
    most scale / 4096 (the noise is resolved finely), as coarse as the exact discrete
    Laplace allows (scale / g <= 2^40)."""
    g = 2.0 ** math.floor(math.log2(min(1e-3 * l1_sensitivity / max(n_coords, 1),
                                        scale / 4096.0)))
    if scale / g > 2.0 ** 40:
        raise ValueError(f"{n_coords} released values are too many for the exact Laplace "
                         "baseline at this epsilon")
    return g


def lattice_gaussian(x, sigma, rng, granularity=None):
    """Exact Gaussian-type noise for a real-valued statistic: ``x`` rounded to the lattice
    g Z plus g times discrete Gaussian(sigma / g) noise.

    Parameters
    ----------
    x : array-like of float
        The statistic (its sensitivity must account for :func:`lattice_rounding_slack`).
    sigma : float
        Standard deviation parameter of the noise, in the units of ``x``.
    rng : numpy.random.Generator
    granularity : float, optional
        Lattice spacing (a power of two); default :func:`lattice_granularity` (sigma).

    Returns
    -------
    out : ndarray of float64, the shape of ``x``; every entry an exact multiple of g.
    granularity : float
        g.
    effective_sigma : float
        The sigma actually sampled (g times the rational discrete sigma, >= ``sigma``);
        tell the accountant this value. The discrete Gaussian on g Z has the same zCDP
        bound as the continuous one for L2 sensitivity measured on the lattice (CKS20).
    """
    sigma = check_positive(sigma, "sigma")
    g = _check_granularity(granularity, sigma)
    base = round_to_lattice(x, g)
    noise = discrete_gaussian_noise(base.shape, sigma / g, rng)
    return base + noise * g, g, g * discrete_gaussian_parameters(sigma / g)[3]


def lattice_laplace(x, scale, rng, granularity=None):
    """Exact Laplace-type noise for a real-valued statistic: ``x`` rounded to the lattice
    g Z plus g times discrete Laplace(scale / g) noise.

    Returns ``(out, granularity, effective_scale)`` as :func:`lattice_gaussian`; pure
    epsilon = (L1 sensitivity + rounding slack) / effective_scale.
    """
    scale = check_positive(scale, "scale")
    g = _check_granularity(granularity, scale)
    base = round_to_lattice(x, g)
    noise = discrete_laplace_noise(base.shape, scale / g, rng)
    return base + noise * g, g, g * discrete_laplace_parameters(scale / g)[2]
