"""Mechanism primitives and conversions against golden values; each test names its source."""
import math

import numpy as np
import pytest
from scipy import integrate, optimize

from dptm.accounting import (DEFAULT_ORDERS, advanced_composition, amplify_dp_by_subsampling,
                             dp_to_rdp, epsilon_from_flip, flip_from_epsilon,
                             linear_composition, rdp_gaussian, rdp_laplace, rdp_pure_dp,
                             rdp_subsampled_bound, rdp_subsampled_gaussian, rdp_to_dp,
                             zcdp_from_pure, zcdp_gaussian, zcdp_to_dp)

try:
    from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp
    import dp_accounting
    HAVE_DPA = True
except ImportError:  # pragma: no cover
    HAVE_DPA = False
needs_dpa = pytest.mark.skipif(not HAVE_DPA, reason="dp-accounting (test-only dependency) not installed")

mp = pytest.importorskip("mpmath")

GRID = [(1e-3, 0.5), (1e-3, 5.0), (0.01, 1.0), (0.05, 0.8), (0.1, 2.0), (0.3, 0.5), (0.5, 0.5), (0.5, 5.0)]
INT_ORDERS = np.array([2.0, 3, 4, 5, 8, 16, 32, 63, 128, 256])


# --------------------------------------------------------------- subsampled Gaussian
@needs_dpa
@pytest.mark.parametrize("q,sigma", GRID)
def test_subsampled_gaussian_integer_orders_match_dp_accounting(q, sigma):
    """Source: dp-accounting 0.6.0 _compute_rdp_poisson_subsampled_gaussian (exact at
    integer orders); relative difference < 1e-6 in RDP and in epsilon after 1..10^4 steps."""
    ours = rdp_subsampled_gaussian(q, sigma, INT_ORDERS)
    ref = dpa_rdp._compute_rdp_poisson_subsampled_gaussian(q, sigma, INT_ORDERS)
    assert np.all(np.isfinite(ours))
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=0)
    for steps in (1, 100, 10_000):
        e1, o1 = rdp_to_dp(steps * ours, INT_ORDERS, 1e-5)
        e2, o2 = dpa_rdp.compute_epsilon(INT_ORDERS, steps * ref, 1e-5)
        assert e1 == pytest.approx(e2, rel=1e-6, abs=1e-12)


@needs_dpa
def test_accountant_matches_dp_accounting_rdp_accountant_integer_orders():
    """Source: dp-accounting 0.6.0 RdpAccountant on the same event and integer orders."""
    from dptm.accounting import (GaussianEvent, PoissonSampledEvent, RDPAccountant,
                                 SelfComposedEvent)
    orders = [float(a) for a in range(2, 64)] + [128.0, 256.0]
    for q, sigma, steps in [(1e-3, 0.5, 1), (0.01, 1.1, 1000), (0.5, 5.0, 10_000), (0.02, 0.7, 300)]:
        ours = RDPAccountant(orders).compose(
            SelfComposedEvent(PoissonSampledEvent(GaussianEvent(sigma), q), steps)).get_epsilon(1e-5)
        acc = dpa_rdp.RdpAccountant(orders)
        acc.compose(dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps))
        assert ours == pytest.approx(acc.get_epsilon(1e-5), rel=1e-6)


def _mp_rdp(q, sigma, alpha, dps=30):
    """Exact RDP by mpmath quadrature of E_{N(0,s^2)}[(1 - q + q e^{(2z-1)/(2 s^2)})^alpha]."""
    with mp.workdps(dps):
        q, s, a = mp.mpf(q), mp.mpf(sigma), mp.mpf(alpha)
        f = lambda z: mp.npdf(z, 0, s) * (1 - q + q * mp.exp((2 * z - 1) / (2 * s * s))) ** a
        z0 = s * s * mp.log(1 / q - 1) + mp.mpf(1) / 2
        pts = sorted({-mp.inf, -20 * s, mp.mpf(0), mp.mpf(1), z0, a, 20 * s + a, mp.inf})
        return float(mp.log(mp.quad(f, pts)) / (a - 1))


@pytest.mark.parametrize("q,sigma", [(1e-3, 0.5), (0.01, 1.0), (0.1, 5.0), (0.5, 0.5), (0.5, 5.0)])
def test_subsampled_gaussian_fractional_orders_match_mpmath(q, sigma):
    """Source: mpmath quadrature of the Renyi divergence (30 digits)."""
    orders = [1.1, 1.5, 2.5, 7.3]
    ours = rdp_subsampled_gaussian(q, sigma, orders)
    ref = np.array([_mp_rdp(q, sigma, a) for a in orders])
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-15)


@needs_dpa
def test_dp_accounting_fractional_orders_are_too_high_ours_are_right():
    """dp-accounting 0.6.0 adds the negative binomial-series terms as positive at fractional
    orders: its value is too high (here ~2x at alpha=1.5) and can even decrease with the
    order, which a Renyi divergence never does. Ours matches mpmath."""
    q, sigma = 0.1, 5.0
    orders = np.array([1.5, 2.0, 2.5])
    theirs = dpa_rdp._compute_rdp_poisson_subsampled_gaussian(q, sigma, orders)
    ours = rdp_subsampled_gaussian(q, sigma, orders)
    exact = _mp_rdp(q, sigma, 1.5)
    assert ours[0] == pytest.approx(exact, rel=1e-8)
    assert theirs[0] > 1.3 * exact
    assert theirs[0] > theirs[1]             # theirs decreases from alpha=1.5 to alpha=2 ...
    assert np.all(np.diff(ours) > 0)         # ... ours is increasing, as D_alpha must be


def test_subsampled_gaussian_monotone_in_order_and_stable():
    """Renyi divergence is non-decreasing in alpha; no overflow for sigma=0.3, alpha<=256."""
    for q, sigma in [(0.5, 0.3), (0.01, 0.3), (1e-3, 5.0), (0.999, 0.5)]:
        r = rdp_subsampled_gaussian(q, sigma, DEFAULT_ORDERS)
        assert np.all(np.isfinite(r)) and np.all(r >= 0)
        assert np.all(np.diff(r) >= -1e-12 * r[1:])
        assert np.all(r <= np.asarray(DEFAULT_ORDERS) / (2 * sigma ** 2) * (1 + 1e-12))


def test_subsampled_gaussian_q1_is_gaussian():
    """Closed form: q = 1 is the Gaussian mechanism alpha / (2 sigma^2)."""
    np.testing.assert_allclose(rdp_subsampled_gaussian(1.0, 1.3, [1.5, 2, 10]),
                               np.array([1.5, 2, 10]) / (2 * 1.3 ** 2))


# --------------------------------------------------------------- closed forms
def test_rdp_gaussian_closed_form():
    """Mironov 2017 Prop. 7: alpha Delta^2 / (2 sigma^2)."""
    np.testing.assert_allclose(rdp_gaussian(2.0, [2, 3.5], sensitivity=3.0), [2 * 9 / 8, 3.5 * 9 / 8])


def test_rdp_laplace_matches_quadrature():
    """Mironov 2017 Prop. 6 against scipy quadrature of the Renyi divergence."""
    b = 1.7
    for a in (1.5, 2.0, 7.0):
        f = lambda x: 0.5 / b * math.exp(-abs(x - 1) / b * a - abs(x) / b * (1 - a))
        val = sum(integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-12)[0]
                  for lo, hi in [(-np.inf, 0), (0, 1), (1, np.inf)])
        assert rdp_laplace(b, [a])[0] == pytest.approx(math.log(val) / (a - 1), rel=1e-9)
    assert rdp_laplace(1.0, [1e6])[0] <= 1.0 + 1e-12


def test_rdp_pure_dp_tight_and_below_min_bound():
    """Bun & Steinke 2016 Prop 3.3: the bound equals D_alpha of binary randomized response
    with e^eps odds and is <= min(eps, alpha eps^2 / 2)."""
    for eps in (0.1, 1.0, 3.0):
        p = math.exp(eps) / (1 + math.exp(eps))
        for a in (1.5, 2.0, 10.0, 100.0):
            rr = math.log(p ** a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)
            ours = rdp_pure_dp(eps, [a])[0]
            assert ours == pytest.approx(min(rr, eps), rel=1e-10)
            assert ours <= min(eps, a * eps ** 2 / 2) + 1e-15


def test_zcdp_closed_forms():
    """Bun & Steinke 2016 Prop. 1.6, 1.4, 1.3."""
    assert zcdp_gaussian(2.0, 3.0) == pytest.approx(9 / 8)
    assert zcdp_from_pure(0.4) == pytest.approx(0.08)
    rho, d = 0.3, 1e-6
    assert zcdp_to_dp(rho, d, "bun-steinke") == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / d)))
    assert zcdp_to_dp(rho, d) <= zcdp_to_dp(rho, d, "bun-steinke")
    assert zcdp_to_dp(rho, d) > 0.8 * zcdp_to_dp(rho, d, "bun-steinke")
    assert zcdp_to_dp(float("inf"), d) == math.inf


def test_zcdp_cks_conversion_matches_rdp_route_on_fine_grid():
    """CKS20 conversion of rho-zCDP == rdp_to_dp of RDP alpha*rho on a fine order grid."""
    rho, d = 0.05, 1e-5
    orders = np.linspace(1.01, 400, 200_000)
    e_rdp, _ = rdp_to_dp(orders * rho, orders, d)
    assert zcdp_to_dp(rho, d) == pytest.approx(e_rdp, rel=1e-5)


def test_rdp_to_dp_never_worse_than_classic_and_matches_dp_accounting():
    """Classic bound (Mironov 2017 Prop. 3) vs ours; dp-accounting 0.6.0 compute_epsilon."""
    rng = np.random.default_rng(0)
    orders = np.array(DEFAULT_ORDERS)
    for _ in range(50):
        rdp = orders * rng.uniform(1e-4, 2)
        d = 10 ** rng.uniform(-10, -2)
        eps, order = rdp_to_dp(rdp, orders, d)
        assert eps <= np.min(rdp + math.log(1 / d) / (orders - 1)) + 1e-12
        if HAVE_DPA:
            assert eps == pytest.approx(dpa_rdp.compute_epsilon(orders, rdp, d)[0], rel=1e-9, abs=1e-12)
    assert rdp_to_dp([np.inf, np.inf], [2, 3], 1e-5)[0] == math.inf


def _binary_worst_rdp(eps, delta, alpha):
    """inf D_alpha(Bern(e^eps q + delta) || Bern(q)): the smallest RDP any mechanism
    violating (eps, delta)-DP can have (data processing onto the violating event)."""
    hi = (1 - delta) / math.exp(eps)

    def f(lq):
        q = math.exp(lq)
        p = math.exp(eps) * q + delta
        return math.log(p ** alpha * q ** (1 - alpha) + (1 - p) ** alpha * (1 - q) ** (1 - alpha)) / (alpha - 1)

    grid = np.linspace(math.log(hi) - 60, math.log(hi) - 1e-12, 4000)
    vals = [f(x) for x in grid]
    k = int(np.argmin(vals))
    res = optimize.minimize_scalar(f, bounds=(grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]),
                                   method="bounded", options={"xatol": 1e-13})
    return min(res.fun, min(vals))


@pytest.mark.parametrize("eps,delta,alpha", [(1, 1e-4, 2), (0.5, 1e-5, 2), (2, 1e-3, 3), (1, 1e-5, 10), (5, 1e-6, 2)])
def test_dp_to_rdp_is_sound(eps, delta, alpha):
    """papers/wang2022 Prop. 2 (Asoodeh et al.): the returned eps_R must not exceed the exact
    worst case over binary mechanisms; it is positive for these targets."""
    er = dp_to_rdp(eps, delta, alpha)
    assert 0 < er <= _binary_worst_rdp(eps, delta, alpha) * (1 + 1e-9)


def test_classical_composition_and_amplification():
    """Closed forms: Dwork & Roth 2014 Thm 3.16/3.20; Li, Qardaji & Su 2012."""
    assert linear_composition(0.1, 1e-6, 10) == pytest.approx((1.0, 1e-5))
    e, d = advanced_composition(0.01, 1e-7, 1000, 1e-5)
    assert e == pytest.approx(math.sqrt(2000 * math.log(1e5)) * 0.01 + 1000 * 0.01 * math.expm1(0.01))
    assert d == pytest.approx(1000 * 1e-7 + 1e-5)
    e, d = amplify_dp_by_subsampling(1.0, 1e-5, 0.01)
    assert e == pytest.approx(math.log(1 + 0.01 * (math.e - 1))) and d == pytest.approx(1e-7)


def test_randomized_response_epsilon():
    """papers/zhao2021 Thm 4: eps = log((1 - f/2) / (f/2)); inverse round trip."""
    assert epsilon_from_flip(0.5) == pytest.approx(math.log(3))
    for eps in (0.1, 1.0, 5.0):
        assert epsilon_from_flip(flip_from_epsilon(eps)) == pytest.approx(eps)


def test_zhu_wang_bound_equals_exact_gaussian_integer():
    """For the Gaussian, the Zhu-Wang bound (huang2022 eq. 3) equals the exact MTZ value."""
    sigma = 1.3
    for q in (0.01, 0.3, 0.9):
        for a in (2, 5, 14):
            zw = rdp_subsampled_bound(lambda l: l / (2 * sigma ** 2), q, a)
            assert zw == pytest.approx(rdp_subsampled_gaussian(q, sigma, [a])[0], rel=1e-10)


@pytest.mark.parametrize("call,match", [
    (lambda: rdp_gaussian(0, [2]), "sigma"),
    (lambda: rdp_gaussian(-1, [2]), "sigma"),
    (lambda: rdp_gaussian(float("nan"), [2]), "sigma"),
    (lambda: rdp_gaussian(1, [1.0]), "orders"),
    (lambda: rdp_gaussian(1, [np.inf]), "orders"),
    (lambda: rdp_subsampled_gaussian(0, 1, [2]), "sampling_probability"),
    (lambda: rdp_subsampled_gaussian(1.5, 1, [2]), "sampling_probability"),
    (lambda: rdp_to_dp([1.0], [2.0], 0), "delta"),
    (lambda: rdp_to_dp([1.0], [2.0], 1), "delta"),
    (lambda: zcdp_to_dp(1.0, 1e-5, "nope"), "method"),
    (lambda: rdp_pure_dp(0, [2]), "epsilon"),
    (lambda: rdp_laplace(float("inf"), [2]), "scale"),
    (lambda: rdp_subsampled_bound(lambda l: 1.0, 0.1, 2.5), "alpha"),
    (lambda: epsilon_from_flip(0), "f"),
    (lambda: dp_to_rdp(1.0, 1e-5, 1.0), "alpha"),
    (lambda: advanced_composition(1.0, 0.0, 3, 0.0), "delta_slack"),
])
def test_invalid_arguments_raise_clear_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_zcdp_from_dp_target_inverts_bun_steinke_exactly():
    # rho = (sqrt(L + eps) - sqrt(L))^2 is the largest rho with rho + 2 sqrt(rho L) <= eps
    # (L = log(1/delta)); a larger rho calibrates too little noise for the target.
    import math

    from dptm.accounting import zcdp_from_dp_target, zcdp_to_dp
    for eps, delta in [(0.1, 1e-5), (1.0, 1e-5), (4.0, 1e-8), (20.0, 1e-3)]:
        L = math.log(1.0 / delta)
        rho = zcdp_from_dp_target(eps, delta)
        assert rho == pytest.approx((math.sqrt(L + eps) - math.sqrt(L)) ** 2, rel=1e-12)
        assert zcdp_to_dp(rho, delta, method="bun-steinke") == pytest.approx(eps, rel=1e-12)
        assert zcdp_to_dp(rho * (1 + 1e-6), delta, method="bun-steinke") > eps
