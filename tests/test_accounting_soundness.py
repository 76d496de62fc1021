"""Soundness against the exact (epsilon, delta) curve, and monotonicity properties."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import brentq
from scipy.stats import norm

from dptm.accounting import (ComposedEvent, GatedEvent, GaussianEvent, PoissonSampledEvent,
                             PureDPAccountant, PureDPEvent, RDPAccountant, SelfComposedEvent,
                             ZCDPAccountant, amplify_dp_by_subsampling, epsilon,
                             epsilon_and_method, pld_available, rdp_gated, rdp_pure_dp)

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


# ------------------------------------------------------------------- gated mechanisms
def _renyi(p, q, alpha):
    """D_alpha(p || q) of two finite distributions (exact, log space)."""
    m = p > 0
    return float(np.log(np.sum(np.exp(alpha * np.log(p[m]) + (1 - alpha) * np.log(q[m]))))
                 / (alpha - 1))


def test_gated_rdp_is_exact_for_randomized_response():
    """A resampled token whose kept topic is unreachable by the fresh draw, with the fresh
    draw the eps-DP worst case (randomized response): the mixtures' Renyi divergence equals
    rdp_gated(rdp_pure_dp(eps)) at every order, so the bound is sound and tight."""
    orders = np.array([1.5, 2.0, 3.0, 8.0, 32.0])
    for eps in (0.3, 2.0, 7.0):
        for gamma in (0.01, 0.3, 0.9):
            rr = np.array([math.exp(eps), 1.0]) / (1 + math.exp(eps))
            m1 = np.concatenate([[1 - gamma], gamma * rr])            # keep, or draw
            m2 = np.concatenate([[1 - gamma], gamma * rr[::-1]])
            exact = [_renyi(m1, m2, a) for a in orders]
            np.testing.assert_allclose(rdp_gated(rdp_pure_dp(eps, orders), gamma, orders),
                                       exact, rtol=1e-9)


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 6), st.floats(0.05, 5.0), st.floats(0.01, 0.99), st.integers(0, 2 ** 31),
       st.sampled_from([1.5, 2.0, 4.0, 16.0]))
def test_gated_rdp_sound_for_random_instances(K, eps, gamma, seed, alpha):
    """Random eps-DP pairs over K topics, the kept topic anywhere (possibly reachable by the
    draw): the exact divergence never exceeds the bound."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(K))
    q = p * np.exp(rng.uniform(-eps, eps, K))      # ratio within e^{+-eps} before renormalising
    q /= q.sum()
    ratio = np.max(np.abs(np.log(p / q)))          # the pair's actual pure epsilon
    keep = np.zeros(K)
    keep[rng.integers(K)] = 1.0
    m1, m2 = (1 - gamma) * keep + gamma * p, (1 - gamma) * keep + gamma * q
    bound = rdp_gated(rdp_pure_dp(ratio, [alpha]), gamma, [alpha])[0]
    assert _renyi(m1, m2, alpha) <= bound * (1 + 1e-9) + 1e-12


def test_gated_event_routes():
    """Pure DP is not amplified (a moved topic is reachable only through the draw, so the
    likelihood ratio e^eps is attained); Renyi DP is; zCDP keeps the inner rho."""
    eps, gamma, T = 3.0, 0.2, 50
    gated = GatedEvent(PureDPEvent(eps), gamma)
    # the gated randomized-response pair (keep, or draw one of two topics): its exact
    # privacy loss is eps, above the add/remove amplification log(1 + gamma (e^eps - 1)),
    # and the pure route reports exactly that loss
    rr = np.array([math.exp(eps), 1.0]) / (1 + math.exp(eps))
    m1 = np.concatenate([[1 - gamma], gamma * rr])
    m2 = np.concatenate([[1 - gamma], gamma * rr[::-1]])
    loss = float(np.max(np.abs(np.log(m1 / m2))))
    assert loss > amplify_dp_by_subsampling(eps, 0.0, gamma)[0] + 1.0
    assert PureDPAccountant().compose(gated).get_epsilon(0.0) == pytest.approx(loss)
    assert ZCDPAccountant().compose(gated).rho == pytest.approx(eps ** 2 / 2)
    acc = RDPAccountant().compose(gated, T)
    np.testing.assert_allclose(acc.rdp, T * rdp_gated(rdp_pure_dp(eps, acc.orders), gamma,
                                                      acc.orders))
    e_gated, route = epsilon_and_method(SelfComposedEvent(gated, T), 1e-5)
    assert route == "rdp"
    assert e_gated < 0.5 * epsilon(SelfComposedEvent(PureDPEvent(eps), T), 1e-5)
    # gamma = 1 is the inner event
    assert epsilon(SelfComposedEvent(GatedEvent(PureDPEvent(eps), 1.0), T), 1e-5) == \
        pytest.approx(epsilon(SelfComposedEvent(PureDPEvent(eps), T), 1e-5))
    with pytest.raises(ValueError, match="probability"):
        GatedEvent(PureDPEvent(eps), 0.0)
    with pytest.raises(TypeError, match="event"):
        GatedEvent(3.0, 0.5)
    with pytest.raises(ValueError, match="rdp"):
        rdp_gated([1.0, 2.0], 0.5, [2.0])
