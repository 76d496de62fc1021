"""The exact samplers' lazy Bernoulli(exp(-g)) decisions (dptm._cgs, dptm._exact).

The kernels compare a 64-bit uniform with exp(-g) in double precision and hand the rare
comparisons inside a 2^-36 margin to ``dptm._exact.uniform_below_exp``, which extends the
uniform's bits and decides with exact rational arithmetic. These tests check that rational
path against bounds on exp(-g) computed independently (alternating Taylor series in
Fractions), and the samplers' pmf when every decision is forced down it.
"""
from fractions import Fraction
import math
import textwrap

import numpy as np
import pytest
from scipy import stats

from dptm import _cgs, mechanisms
from dptm._exact import uniform_below_exp
from _child import repo_root, run_child


def exp_neg_bounds(g, terms=60):
    """Rational bounds lo < exp(-g) < hi for 0 < g <= 1: consecutive partial sums of the
    alternating series sum (-g)^k / k! bracket the limit."""
    s, term, sums = Fraction(0), Fraction(1), []
    for k in range(terms):
        s += term
        sums.append(s)
        term *= -g / (k + 1)
    return min(sums[-2:]), max(sums[-2:])


@pytest.mark.parametrize("num,den", [(1, 1), (1, 3), (7, 10), (123456789, 987654321)])
def test_rational_path_decides_like_the_series_bounds(num, den):
    lo, hi = exp_neg_bounds(Fraction(num, den))
    for nbits in (64, 128, 192):
        # the nbits-bit intervals just below, straddling and just above exp(-g)
        u = math.floor(lo * (1 << nbits))
        assert uniform_below_exp(u - 1, nbits, num, den) is True
        assert uniform_below_exp(u + 2, nbits, num, den) is False
        # the interval that contains exp(-g) cannot be decided: more bits are needed
        assert uniform_below_exp(u, nbits, num, den) is None
        # two more bits decide it, consistently with the series
        p_bits = [uniform_below_exp(4 * u + j, nbits + 2, num, den) for j in range(4)]
        assert p_bits.count(None) == 1
        i = p_bits.index(None)
        assert all(r is True for r in p_bits[:i]) and all(r is False for r in p_bits[i + 1:])


def test_rational_path_edge_cases():
    assert uniform_below_exp(2 ** 64 - 1, 64, 0, 5) is True           # exp(0) = 1
    # huge g: exp(-g) < 2^-(2^30), any non-zero prefix is above it
    assert uniform_below_exp(1, 64, 2 ** 40, 1) is False
    assert uniform_below_exp(0, 64, 2 ** 40, 1) is None
    # g = 50: exp(-50) ~ 1.9e-22 ~ 2^-72.1
    assert uniform_below_exp(1, 64, 50, 1) is False
    assert uniform_below_exp(0, 128, 50, 1) is True                     # below 2^-128
    assert uniform_below_exp(2 ** 55, 128, 50, 1) is True               # 2^-73 < exp(-50)
    assert uniform_below_exp(2 ** 56, 128, 50, 1) is False              # 2^-72 > exp(-50)


@pytest.mark.parametrize("scale", [Fraction(2, 3), Fraction(5, 7), Fraction(9, 13), Fraction(3, 2)])
def test_rational_path_with_a_non_dyadic_scale(scale):
    # the table sampler's acceptance test scale * U < exp(-g): with a non-dyadic scale the
    # interval's bounds are not dyadic, so the 2^-whole shortcut must hold for any
    # rational (g = 1, 7/6: whole = 1, every prefix checked against the exact series)
    for num, den in ((1, 1), (7, 6)):
        lo_e, hi_e = exp_neg_bounds(Fraction(num, den), terms=80)
        for frac in (0.20, 0.26, 0.30, 0.31, 0.32, 0.34, 0.36, 0.3675, 0.3683, 0.38, 0.45):
            u = math.floor(Fraction(frac) / scale * (1 << 64))
            if not 0 <= u < 1 << 64:
                continue
            lo, hi = Fraction(u, 1 << 64) * scale, Fraction(u + 1, 1 << 64) * scale
            want = True if hi <= lo_e else (False if lo >= hi_e else None)
            assert uniform_below_exp(u, 64, num, den, scale) is want, (num, den, frac)


def _binned_chisquare(draws, pmf, support):
    obs = np.bincount(np.clip(draws, support[0], support[-1]) - support[0],
                      minlength=support.size).astype(float)
    exp = pmf(support) * draws.size
    cells_o, cells_e, acc_o, acc_e = [], [], 0.0, 0.0
    for o, e in zip(obs, exp):
        acc_o, acc_e = acc_o + o, acc_e + e
        if acc_e >= 20:
            cells_o.append(acc_o)
            cells_e.append(acc_e)
            acc_o, acc_e = 0.0, 0.0
    cells_o[-1] += acc_o
    cells_e[-1] += acc_e
    return stats.chisquare(cells_o, np.asarray(cells_e) * sum(cells_o) / sum(cells_e)).pvalue


@pytest.fixture
def exact_path_only():
    old = _cgs._set_lazy_margin(2.0)
    try:
        yield
    finally:
        _cgs._set_lazy_margin(old)


@pytest.mark.parametrize("sigma", [0.8, 2.7, 40.3])
def test_discrete_gaussian_pmf_through_the_exact_path(exact_path_only, sigma):
    # every acceptance decision by rational arithmetic: chi-square against the closed-form
    # pmf, false-alarm rate 1e-6; a 10% wider pmf is rejected
    _, _, _, eff = mechanisms.discrete_gaussian_parameters(sigma)
    draws = mechanisms.discrete_gaussian_noise(20000, sigma, np.random.default_rng(21))
    m = int(8 * eff) + 3
    support = np.arange(-m, m + 1)
    pmf = lambda x, s=eff: mechanisms.discrete_gaussian_pmf(x, s, support=support)  # noqa: E731
    assert _binned_chisquare(draws, pmf, support) > 1e-6
    assert _binned_chisquare(draws, lambda x: mechanisms.discrete_gaussian_pmf(
        x, 1.1 * eff, support=support), support) < 1e-6


@pytest.mark.parametrize("scale", [0.6, 3.0])
def test_discrete_laplace_pmf_through_the_exact_path(exact_path_only, scale):
    _, _, eff = mechanisms.discrete_laplace_parameters(scale)
    draws = mechanisms.discrete_laplace_noise(20000, scale, np.random.default_rng(22))
    m = int(25 * eff) + 3
    support = np.arange(-m, m + 1)
    assert _binned_chisquare(draws, lambda x: mechanisms.discrete_laplace_pmf(x, eff),
                             support) > 1e-6
    assert _binned_chisquare(draws, lambda x: mechanisms.discrete_laplace_pmf(x, 1.15 * eff),
                             support) < 1e-6


def test_margin_hook_restores():
    old = _cgs._set_lazy_margin(0.5)
    assert _cgs._set_lazy_margin(old) == 0.5
    assert old == 2.0 ** -36


# ------------------------------------------------------- a failing exact path
def test_exact_path_failure_is_not_a_silent_reject():
    # Every Bernoulli(exp) decision is sent down the exact path (test hook) and that path
    # raises: the sampler must fail loudly (exception or abort), never return a sample.
    # Before the fix each failed decision was a silent "0": u != 0 always rejected, the
    # geometric count always 0, so the discrete Laplace of scale 10 returned 0 every time.
    code = textwrap.dedent("""
        import numpy as np
        from dptm import _cgs, _exact
        def boom(*a, **k):
            raise MemoryError("simulated failure in the exact path")
        _exact.uniform_below_exp = boom
        _cgs._set_lazy_margin(2.0)
        out = np.empty(20, dtype=np.int64)
        _cgs.fill_discrete_laplace(out, 10, 1, np.random.PCG64(1))
        print("SAMPLES", out.tolist())
    """)
    proc = run_child(code, cwd=repo_root())
    assert "SAMPLES" not in proc.stdout, (
        "a failing exact path still produced noise samples: " + proc.stdout.strip())
