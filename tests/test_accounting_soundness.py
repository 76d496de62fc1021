"""Soundness against the exact (epsilon, delta) curve, and monotonicity properties."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import brentq
from scipy.stats import norm

from dptm.accounting import (ComposedEvent, GaussianEvent, PoissonSampledEvent, RDPAccountant,
                             SelfComposedEvent, epsilon, pld_available)

ORDERS = tuple([1.25, 1.5, 1.75] + [float(a) for a in range(2, 33)] + [48.0, 64.0, 128.0, 256.0])


def exact_delta(eps, q, sigma):
    """Exact hockey-stick divergence of one Poisson-subsampled Gaussian step (closed form).

    P = (1-q) N(0,s^2) + q N(1,s^2), Q = N(0,s^2); the likelihood ratio
    L(z) = 1 - q + q exp((2z - 1)/(2 s^2)) is increasing, so the optimal sets are half-lines.
    delta(eps) = max(sup_S P(S) - e^eps Q(S), sup_S Q(S) - e^eps P(S)).
    """
    e = math.exp(eps)
    t = sigma ** 2 * math.log((e - 1 + q) / q) + 0.5
    d1 = (1 - q) * norm.sf(t / sigma) + q * norm.sf((t - 1) / sigma) - e * norm.sf(t / sigma)
    d2 = 0.0
    if math.expm1(-eps) + q > 0:
        t2 = sigma ** 2 * math.log((math.expm1(-eps) + q) / q) + 0.5
        d2 = norm.cdf(t2 / sigma) - e * ((1 - q) * norm.cdf(t2 / sigma) + q * norm.cdf((t2 - 1) / sigma))
    return max(d1, d2, 0.0)


def exact_epsilon(delta, q, sigma):
    if exact_delta(0.0, q, sigma) <= delta:
        return 0.0
    return brentq(lambda e: exact_delta(e, q, sigma) - delta, 0.0, 60.0, xtol=1e-12)


def test_exact_curve_matches_gaussian_closed_form():
    """Sanity of the reference: q = 1 is the Gaussian mechanism, whose exact delta(eps) is
    Phi(1/(2s) - eps s) - e^eps Phi(-1/(2s) - eps s) (Balle & Wang 2018)."""
    s, eps = 1.3, 0.7
    ref = norm.cdf(1 / (2 * s) - eps * s) - math.exp(eps) * norm.cdf(-1 / (2 * s) - eps * s)
    assert exact_delta(eps, 1.0, s) == pytest.approx(ref, rel=1e-10)


@pytest.mark.parametrize("q", [1e-3, 0.01, 0.1, 0.5, 1.0])
@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0, 5.0])
def test_one_step_epsilon_never_below_exact(q, sigma):
    """After one subsampled-Gaussian step, epsilon(delta) >= the exact epsilon."""
    ev = PoissonSampledEvent(GaussianEvent(sigma), q) if q < 1 else GaussianEvent(sigma)
    for delta in (1e-6, 1e-3):
        exact = exact_epsilon(delta, q, sigma)
        ours = epsilon(ev, delta)
        assert ours >= exact - 1e-9, (q, sigma, delta, ours, exact)
        assert math.isfinite(ours)


@pytest.mark.skipif(not pld_available(), reason="dp-accounting (optional extra dptm[pld]) not installed")
@pytest.mark.parametrize("q,sigma", [(0.01, 1.0), (0.5, 2.0), (1.0, 1.0)])
def test_pld_one_step_sound_and_tighter_than_rdp(q, sigma):
    ev = PoissonSampledEvent(GaussianEvent(sigma), q) if q < 1 else GaussianEvent(sigma)
    exact = exact_epsilon(1e-5, q, sigma)
    pld = epsilon(ev, 1e-5, method="pld")
    assert exact - 1e-6 <= pld <= epsilon(ev, 1e-5, method="rdp") + 1e-9
    assert pld == pytest.approx(exact, abs=5e-3)


def _eps(sigma, q, steps, delta=1e-5):
    acc = RDPAccountant(ORDERS)
    return acc.compose(PoissonSampledEvent(GaussianEvent(sigma), q), steps).get_epsilon(delta)


settings_ = settings(max_examples=25, deadline=None)


@settings_
@given(sigma=st.floats(0.5, 5.0), ratio=st.floats(1.01, 2.0), q=st.floats(1e-3, 0.5),
       steps=st.integers(1, 10_000))
def test_epsilon_decreases_with_sigma(sigma, ratio, q, steps):
    assert _eps(sigma * ratio, q, steps) <= _eps(sigma, q, steps) + 1e-12


@settings_
@given(sigma=st.floats(0.5, 5.0), q=st.floats(1e-3, 0.5), ratio=st.floats(1.01, 2.0),
       steps=st.integers(1, 10_000))
def test_epsilon_increases_with_q(sigma, q, ratio, steps):
    assert _eps(sigma, min(1.0, q * ratio), steps) >= _eps(sigma, q, steps) - 1e-12


@settings_
@given(sigma=st.floats(0.5, 5.0), q=st.floats(1e-3, 0.5), steps=st.integers(1, 5_000),
       extra=st.integers(1, 5_000))
def test_epsilon_increases_with_steps(sigma, q, steps, extra):
    assert _eps(sigma, q, steps + extra) >= _eps(sigma, q, steps) - 1e-12


@settings(max_examples=15, deadline=None)
@given(sigma=st.floats(0.5, 5.0), q=st.floats(1e-3, 1.0), n=st.integers(1, 12))
def test_composition_of_n_equals_n_times_one(sigma, q, n):
    step = PoissonSampledEvent(GaussianEvent(sigma), q)
    a = RDPAccountant(ORDERS).compose(step, n)
    b = RDPAccountant(ORDERS)
    for _ in range(n):
        b.compose(step)
    c = RDPAccountant(ORDERS).compose(ComposedEvent((step,) * n))
    d = RDPAccountant(ORDERS).compose(SelfComposedEvent(step, n))
    one = RDPAccountant(ORDERS).compose(step)
    for acc in (b, c, d):
        np.testing.assert_allclose(acc.rdp, a.rdp, rtol=1e-12)
    np.testing.assert_allclose(a.rdp, n * one.rdp, rtol=1e-12)
    assert a.get_epsilon(1e-5) == pytest.approx(d.get_epsilon(1e-5), rel=1e-12)
