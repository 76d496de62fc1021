"""Noise calibration: the smallest noise that meets a target (epsilon, delta).

Like dp_accounting's ``mechanism_calibration``: a root-find on the accountant, bracketed
and bisected on log(noise), and it never overshoots - the returned noise always satisfies
the target and noise * (1 - tol) does not.
"""
import math

from ._validation import count_int, delta_open, positive, probability
from .accountants import epsilon as _epsilon
from .events import GaussianEvent, PoissonSampledEvent, SelfComposedEvent

__all__ = ["calibrate_gaussian", "calibrate_laplace", "log_bisect"]

_Z_MIN, _Z_MAX = 1e-3, 1e6


def _gaussian_event(z, q, steps, discrete=False):
    ev = GaussianEvent(z, discrete=discrete)
    if q < 1.0:
        ev = PoissonSampledEvent(ev, q)
    return SelfComposedEvent(ev, steps) if steps > 1 else ev


def calibrate_gaussian(target_epsilon, target_delta, *, sampling_probability=1.0, steps=1,
                       method="rdp", tol=1e-4, discrete=False, **accountant_kwargs):
    """Smallest Gaussian noise multiplier meeting (target_epsilon, target_delta).

    The mechanism is ``steps`` compositions of the Gaussian mechanism (L2 sensitivity 1),
    each on a Poisson subsample at rate ``sampling_probability``.

    Parameters
    ----------
    target_epsilon : float > 0
    target_delta : float in (0, 1)
    sampling_probability : float in (0, 1]
    steps : int >= 1
    method : {"rdp", "zcdp", "pld", "auto"}
        Accountant used (zcdp only for sampling_probability = 1; pld needs dptm[pld]).
    tol : float in (0, 0.5)
        Relative precision: the returned z meets the target and z * (1 - tol) does not.
    discrete : bool
        Calibrate the (exact) discrete Gaussian, accounted as its event is: under Poisson
        subsampling only at integer RDP orders.

    Returns
    -------
    float, the noise multiplier sigma / sensitivity.

    Raises
    ------
    ValueError if the target cannot be met with noise multiplier <= 1e6 (e.g. a target
    epsilon too small for the RDP order grid).
    """
    eps_t = positive(target_epsilon, "target_epsilon")
    delta = delta_open(target_delta, "target_delta")
    q = probability(sampling_probability, "sampling_probability")
    steps = count_int(steps, "steps")
    tol = positive(tol, "tol")
    if not tol < 0.5:
        raise ValueError(f"tol must be in (0, 0.5), got {tol}")
    if method == "zcdp" and q < 1.0:
        raise ValueError("method='zcdp' cannot account for subsampling (sampling_probability < 1); "
                         "use 'rdp' or 'pld'")

    cache = {}

    def eps_of(z):
        if z not in cache:
            cache[z] = _epsilon(_gaussian_event(z, q, steps, discrete), delta, method,
                                **accountant_kwargs)
        return cache[z]

    def ok(z):
        return eps_of(z) <= eps_t

    hi = 1.0
    if ok(hi):
        lo = hi
        while ok(lo):
            hi = lo
            lo = hi / 2.0
            if lo < _Z_MIN:
                return hi  # essentially no noise needed down to the floor of the search
    else:
        lo = hi
        while not ok(hi):
            lo = hi
            hi = hi * 4.0
            if hi > _Z_MAX:
                raise ValueError(
                    f"target (epsilon={eps_t}, delta={delta}) is infeasible with noise multiplier "
                    f"<= {_Z_MAX:g} using method={method!r} (for RDP, a target epsilon far below "
                    f"log(1/delta)/max(order) needs larger orders)")
    return log_bisect(ok, good=hi, bad=lo, tol=tol)


def log_bisect(ok, good, bad, tol=1e-4):
    """Bisect in log space between a point where the monotone predicate ``ok`` holds
    (``good``) and one where it does not (``bad``) until they are within relative ``tol``;
    return the ``good`` end, so the result always satisfies ``ok`` (calibration never
    overshoots its target)."""
    while max(good, bad) > min(good, bad) * (1.0 + tol):
        mid = math.sqrt(good * bad)
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good


def calibrate_laplace(target_epsilon, *, steps=1, sensitivity=1.0):
    """Laplace scale so that ``steps`` releases with L1 ``sensitivity`` are
    target_epsilon-DP in total (basic composition of pure DP: scale = steps * Delta / eps).

    Exact: the composition of pure-DP Laplace releases is tight under basic composition
    for delta = 0."""
    eps_t = positive(target_epsilon, "target_epsilon")
    steps = count_int(steps, "steps")
    sensitivity = positive(sensitivity, "sensitivity")
    scale = steps * sensitivity / eps_t
    # guard against round-off: make sure steps * sensitivity / scale <= target
    while steps * sensitivity / scale > eps_t:
        scale = math.nextafter(scale, math.inf)
    return scale
