"""Noise samplers of dptm.mechanisms: goodness of fit against their exact distributions.

All tests use fixed seeds, so they are deterministic; the thresholds are chosen so that a
correct sampler fails with probability about 1e-4 per test (the p-value floor), while a
wrong scale, a wrong support or a biased sign fails by orders of magnitude.
"""
import math
import pickle

import numpy as np
import pytest
from scipy import stats

from dptm import _cgs, mechanisms as mech

P_FLOOR = 1e-4   # false-alarm rate of each goodness-of-fit test


def chi_square_integer(samples, pmf, min_expected=20):
    """Chi-square p-value of integer samples against ``pmf`` (a callable on integer arrays
    whose support lies well inside |x| <= 10^4): one cell per integer with expected count
    >= min_expected, the two tails pooled into one cell each."""
    n = samples.size
    xs = np.arange(-10000, 10001)
    p = pmf(xs)
    inner = np.flatnonzero(p * n >= min_expected)
    a, b = xs[inner[0]], xs[inner[-1]]
    exp = np.concatenate([[p[xs < a].sum()], p[(xs >= a) & (xs <= b)], [p[xs > b].sum()]]) * n
    counts = np.bincount(np.clip(samples, a - 1, b + 1) - (a - 1), minlength=b - a + 3)
    obs = counts.astype(float)
    keep = exp > 0
    if not np.all(obs[~keep] == 0):   # a sample outside the support
        return 0.0
    return stats.chisquare(obs[keep], exp[keep] * obs.sum() / exp[keep].sum()).pvalue


@pytest.mark.parametrize("scale", [0.5, 2.0, 7.3])
def test_laplace_matches_distribution(scale):
    x = mech.laplace_noise(40000, scale, np.random.default_rng(1))
    assert x.dtype == np.float64 and x.shape == (40000,)
    assert stats.kstest(x, stats.laplace(scale=scale).cdf).pvalue > P_FLOOR
    # a 10% wrong scale is rejected at this sample size
    assert stats.kstest(x, stats.laplace(scale=1.1 * scale).cdf).pvalue < P_FLOOR


@pytest.mark.parametrize("sigma", [0.3, 1.0, 12.5])
def test_gaussian_matches_distribution(sigma):
    x = mech.gaussian_noise((200, 200), sigma, np.random.default_rng(2))
    assert x.shape == (200, 200)
    assert stats.kstest(x.ravel(), stats.norm(scale=sigma).cdf).pvalue > P_FLOOR
    assert stats.kstest(x.ravel(), stats.norm(scale=1.1 * sigma).cdf).pvalue < P_FLOOR


@pytest.mark.parametrize("scale", [0.4, 1.0, 2.0, 20.0 / 3.0])
def test_discrete_laplace_exact_pmf(scale):
    x = mech.discrete_laplace_noise(100000, scale, np.random.default_rng(3))
    assert x.dtype == np.int64
    _, _, eff = mech.discrete_laplace_parameters(scale)
    assert chi_square_integer(x, lambda k: mech.discrete_laplace_pmf(k, eff)) > P_FLOOR
    # closed-form moments: mean 0, variance 2 r / (1 - r)^2 with r = exp(-1/t)
    r = math.exp(-1.0 / eff)
    var = 2 * r / (1 - r) ** 2
    assert abs(x.mean()) < 5 * math.sqrt(var / x.size)
    assert abs(x.var() - var) < 0.05 * var
    # wrong scale rejected
    assert chi_square_integer(x, lambda k: mech.discrete_laplace_pmf(k, 1.15 * eff)) < P_FLOOR


@pytest.mark.parametrize("sigma", [0.3, 1.0, 3.3, 10.0])
def test_discrete_gaussian_exact_pmf(sigma):
    x = mech.discrete_gaussian_noise(100000, sigma, np.random.default_rng(4))
    assert x.dtype == np.int64
    _, _, _, eff = mech.discrete_gaussian_parameters(sigma)
    assert chi_square_integer(x, lambda k: mech.discrete_gaussian_pmf(k, eff)) > P_FLOOR
    assert chi_square_integer(x, lambda k: mech.discrete_gaussian_pmf(k, 1.1 * eff)) < P_FLOOR
    # symmetric: P(x > 0) = P(x < 0) (binomial test)
    pos, neg = np.sum(x > 0), np.sum(x < 0)
    assert stats.binomtest(int(pos), int(pos + neg)).pvalue > P_FLOOR


def test_discrete_gaussian_small_sigma_exact_probabilities():
    # sigma = 0.3: P(0) = 1 / (1 + 2 e^{-1/(2*0.09)} + ...), exact support check
    x = mech.discrete_gaussian_noise(200000, 0.3, np.random.default_rng(5))
    _, _, _, eff = mech.discrete_gaussian_parameters(0.3)
    p1 = mech.discrete_gaussian_pmf(np.array([1]), eff)[0]
    k = np.sum(np.abs(x) == 1)
    assert stats.binomtest(int(k), x.size, 2 * p1).pvalue > P_FLOOR
    assert np.all(np.abs(x) <= 3)


def test_rational_parameters_round_up_and_are_exact():
    for scale in [0.1, 0.7, 2.0, 20 / 3, 1234.5]:
        t, s, eff = mech.discrete_laplace_parameters(scale)
        assert eff >= scale and eff - scale < 1e-6 * max(1, scale)
        assert t / s == eff          # exact here (t < 2^53)
    for sigma in [0.3, 1.0, math.sqrt(2), 3.3, 100.0, 5000.0]:
        p, q, t, eff = mech.discrete_gaussian_parameters(sigma)
        assert p * 1.0 / q >= sigma ** 2 * (1 - 1e-15)
        assert eff - sigma < 1e-5 * sigma
        assert (t - 1) ** 2 * q <= p < t ** 2 * q          # t = floor(sqrt(p/q)) + 1
        assert 2 * p * q * t * t < 2 ** 64


def test_reported_scale_is_the_drawn_one_rounded_down_never_up():
    # the sampled variance is the rational p/q; its square root is reported as the largest
    # float64 not above it (exactly it when it is a float64): round-to-nearest would state
    # one ulp more noise than drawn in about half of the cases
    from fractions import Fraction
    rng = np.random.default_rng(0)
    sigmas = np.concatenate([[0.2, 1.0, 2.0, 3.0, 16384.0],
                             np.exp(rng.uniform(math.log(0.2), math.log(16000), 2000))])
    for sigma in sigmas:
        p, q, _, eff = mech.discrete_gaussian_parameters(float(sigma))
        assert Fraction(eff) ** 2 <= Fraction(p, q) < Fraction(math.nextafter(eff, math.inf)) ** 2
        assert eff >= sigma                    # still at least the calibrated sigma
    for sigma in sigmas[:30]:
        out, g, eff = mech.lattice_gaussian(np.zeros(2), float(sigma), np.random.default_rng(1))
        p, q, _, _ = mech.discrete_gaussian_parameters(float(sigma) / g)
        assert Fraction(eff) ** 2 <= Fraction(p, q) * Fraction(g) ** 2
    for scale in np.concatenate([sigmas[:200], [2.0 ** 35 / 3, 2.0 ** 39 + 0.1]]):
        t, s, eff = mech.discrete_laplace_parameters(float(scale))
        assert Fraction(eff) <= Fraction(t, s) < Fraction(math.nextafter(eff, math.inf))


def test_same_seed_same_noise_and_streams_differ():
    for fn in (mech.laplace_noise, mech.gaussian_noise, mech.discrete_laplace_noise,
               mech.discrete_gaussian_noise):
        a = fn(1000, 1.5, np.random.default_rng(7))
        b = fn(1000, 1.5, np.random.default_rng(7))
        c = fn(1000, 1.5, np.random.default_rng(8))
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)


def test_draws_come_from_the_generator_stream():
    # the generator is advanced (its BitGenerator is the only source of randomness)
    rng = np.random.default_rng(11)
    state = pickle.dumps(rng.bit_generator.state)
    mech.discrete_gaussian_noise(10, 2.0, rng)
    assert pickle.dumps(rng.bit_generator.state) != state


@pytest.mark.parametrize("fn", [mech.laplace_noise, mech.gaussian_noise,
                                mech.discrete_laplace_noise, mech.discrete_gaussian_noise])
def test_bad_input(fn):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="> 0"):
        fn(3, 0.0, rng)
    with pytest.raises(ValueError, match="finite"):
        fn(3, float("nan"), rng)
    with pytest.raises(TypeError, match="rng"):
        fn(3, 1.0, 42)
    with pytest.raises(ValueError, match="shape"):
        fn((-1, 2), 1.0, rng)
    assert fn((0,), 1.0, rng).shape == (0,)


def test_parameter_range_errors():
    with pytest.raises(ValueError, match="sigma"):
        mech.discrete_gaussian_parameters(1e5)
    with pytest.raises(ValueError, match="scale"):
        mech.discrete_laplace_parameters(1e13)
    with pytest.raises(ValueError):
        _cgs.fill_discrete_laplace(np.zeros(2, dtype=np.int64), 0, 1, np.random.default_rng(0).bit_generator)
