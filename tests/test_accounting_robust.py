"""Accounting at the edges (issues 13, 14, 17): extreme noise scales never raise
ZeroDivisionError / OverflowError, nested Poisson sampling of a composition is amplified as
a whole (or refused), and the subsampled Gaussian uses sigma / sensitivity."""
import math

import numpy as np
import pytest

from dptm import accounting as A
from dptm.accounting import (ComposedEvent, GaussianEvent, LaplaceEvent, PoissonSampledEvent,
                             PureDPAccountant, RDPAccountant, SelfComposedEvent, epsilon)

TINY, HUGE = (1e-300, 5e-324), (1e300, 1.7e308)


# ------------------------------------------------------------------ extreme noise scales
@pytest.mark.parametrize("sigma", TINY)
def test_vanishing_gaussian_noise_gives_infinite_epsilon(sigma):
    ev = GaussianEvent(sigma=sigma)
    for method in ("rdp", "zcdp", "auto"):
        assert epsilon(ev, 1e-5, method=method) == math.inf
    sub = SelfComposedEvent(PoissonSampledEvent(ev, 0.01), 100)
    assert epsilon(sub, 1e-5) == math.inf
    assert np.all(A.rdp_gaussian(sigma, [2.0, 10.0]) == np.inf)
    assert A.zcdp_gaussian(sigma) == math.inf
    assert np.all(A.rdp_subsampled_gaussian(0.01, sigma, [1.5, 2.0, 10.0]) == np.inf)


@pytest.mark.parametrize("sigma", HUGE)
def test_huge_gaussian_noise_gives_a_vanishing_epsilon(sigma):
    ev = GaussianEvent(sigma=sigma)
    for method in ("rdp", "zcdp", "auto"):
        eps = epsilon(ev, 1e-5, method=method)
        assert 0.0 <= eps < 1e-100
    sub = SelfComposedEvent(PoissonSampledEvent(ev, 0.01), 100)
    assert 0.0 <= epsilon(sub, 1e-5) < 1e-100
    r = A.rdp_subsampled_gaussian(0.01, sigma, [1.5, 2.0, 10.0])
    assert np.all((r >= 0) & (r <= np.array([1.5, 2.0, 10.0]) / (2 * 1e300 ** 1)))


def test_extreme_laplace_scales():
    assert epsilon(LaplaceEvent(scale=5e-324), 1e-5) == math.inf
    assert epsilon(LaplaceEvent(scale=5e-324), 0.0) == math.inf
    assert epsilon(LaplaceEvent(scale=1e-300), 0.0) == pytest.approx(1e300)
    assert epsilon(LaplaceEvent(scale=1e300), 0.0) == pytest.approx(1e-300)
    sub = SelfComposedEvent(PoissonSampledEvent(LaplaceEvent(scale=5e-324), 0.01), 10)
    assert epsilon(sub, 1e-5) == math.inf
    # pure-DP events with huge epsilon: RDP / zCDP routes overflow to inf, not an error
    assert epsilon(A.PureDPEvent(epsilon=1e300), 1e-5) == pytest.approx(1e300)
    assert A.zcdp_from_pure(1e300) == math.inf
    assert np.all(A.rdp_pure_dp(1e300, [2.0]) == pytest.approx(1e300))


@pytest.mark.parametrize("rho", [5e-324, 1e-300])
def test_zcdp_conversion_of_a_vanishing_rho(rho):
    eps = A.zcdp_to_dp(rho, 1e-5)
    assert 0.0 < eps <= rho + 2 * math.sqrt(rho * math.log(1e5)) * (1 + 1e-12)


def test_invalid_noise_scales_name_the_parameter():
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="sigma"):
            GaussianEvent(sigma=bad)
        with pytest.raises(ValueError, match="sigma"):
            A.rdp_subsampled_gaussian(0.5, bad, [2.0])


# ------------------------------------------------------------------ nested sampling
def _nested():
    lap = LaplaceEvent(scale=0.2)  # epsilon 5
    assert lap.epsilon == 5.0
    return PoissonSampledEvent(PoissonSampledEvent(ComposedEvent((lap, lap)), 1.0), 0.01)


def test_nested_poisson_sampling_amplifies_the_composition_as_a_whole():
    """Two Laplace eps=5 releases on ONE subsample at q=0.01 form a 10-DP mechanism, so the
    amplified epsilon is log(1 + q (e^10 - 1)) = 5.3993; amplifying each leaf on its own
    (the old answer, 1.81) is unsound."""
    true = math.log1p(0.01 * math.expm1(10.0))
    assert true == pytest.approx(5.39931433653905, rel=1e-12)
    ev = _nested()
    assert epsilon(ev, 0.0) == pytest.approx(true, rel=1e-12)
    assert PureDPAccountant().compose(ev).get_epsilon(0.0) == pytest.approx(true, rel=1e-12)
    for method in ("auto", "rdp", "pure"):
        eps = epsilon(ev, 1e-6, method=method)
        assert eps >= true * (1 - 1e-12) - 1e-9 or method == "rdp"
        assert eps > 5.0  # never the per-leaf 1.81
    # RDP of the whole amplified 5.3993-DP mechanism, converted at delta: at most its pure eps
    assert epsilon(ev, 1e-6, method="rdp") <= 5.42
    assert epsilon(ev, 1e-6, method="rdp") > 5.0


@pytest.mark.parametrize("inner", [
    lambda g: ComposedEvent((g, g)),
    lambda g: SelfComposedEvent(g, 2),
    lambda g: PoissonSampledEvent(ComposedEvent((g, g)), 1.0),
    lambda g: PoissonSampledEvent(SelfComposedEvent(PoissonSampledEvent(g, 0.5), 3), 1.0),
])
def test_nested_sampling_of_a_gaussian_composition_is_refused(inner):
    """No built-in route amplifies a composite that is not pure DP as a whole: refuse."""
    ev = PoissonSampledEvent(inner(GaussianEvent(sigma=1.0)), 0.01)
    assert not RDPAccountant().supports(ev)
    with pytest.raises(ValueError, match="no accountant"):
        epsilon(ev, 1e-6)
    with pytest.raises(ValueError, match="composite"):
        RDPAccountant().compose(ev)


def test_sampling_outside_a_composition_is_unchanged():
    """The usual structure (composition of subsampled leaves) still amplifies each step."""
    g = GaussianEvent(sigma=1.0)
    a = epsilon(SelfComposedEvent(PoissonSampledEvent(g, 0.01), 100), 1e-5, method="rdp")
    b = epsilon(SelfComposedEvent(PoissonSampledEvent(PoissonSampledEvent(g, 0.1), 0.1), 100),
                1e-5, method="rdp")
    assert a == pytest.approx(b, rel=1e-12)
    assert a < 1.5  # vs 4.7 for one unsubsampled step: amplification applied


# ------------------------------------------------------------------ sigma / sensitivity
def test_subsampled_gaussian_rdp_uses_the_noise_multiplier():
    """GaussianEvent(sigma=3, sensitivity=2) is noise multiplier 1.5: its subsampled RDP
    equals Google's dp-accounting at noise multiplier 1.5 (exact at integer orders) and is
    far from the value at sigma=3 (the bug of computing with sigma)."""
    rdp_mod = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    orders = np.arange(2.0, 65.0)
    q = 0.02
    ours = RDPAccountant(orders=orders).compose(
        PoissonSampledEvent(GaussianEvent(sigma=3.0, sensitivity=2.0), q)).rdp
    # dp-accounting's own (private) function: the RdpAccountant's building block
    ref = rdp_mod._compute_rdp_poisson_subsampled_gaussian(q, 1.5, orders)
    np.testing.assert_allclose(ours, ref, rtol=1e-9)
    wrong = rdp_mod._compute_rdp_poisson_subsampled_gaussian(q, 3.0, orders)
    assert np.all(ours > 2 * wrong)
    # and the public accountant agrees on epsilon at the same orders (same conversion
    # family; ours may only be smaller)
    import dp_accounting
    acc = dp_accounting.rdp.RdpAccountant(orders=list(orders))
    acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(1.5)), 10)
    ours_eps = RDPAccountant(orders=orders).compose(
        PoissonSampledEvent(GaussianEvent(sigma=3.0, sensitivity=2.0), q), 10).get_epsilon(1e-5)
    assert ours_eps <= acc.get_epsilon(1e-5) * (1 + 1e-9)
    assert ours_eps >= 0.9 * acc.get_epsilon(1e-5)


def test_unsubsampled_gaussian_with_sensitivity_closed_form():
    """q = 1: alpha Delta^2 / (2 sigma^2) (Mironov 2017, Prop. 7)."""
    orders = np.array([1.5, 2.0, 7.0, 64.0])
    ours = RDPAccountant(orders=orders).compose(GaussianEvent(sigma=3.0, sensitivity=2.0)).rdp
    np.testing.assert_allclose(ours, orders * 4.0 / 18.0, rtol=1e-15)
