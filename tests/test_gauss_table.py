"""The alias-table exact discrete Gaussian (dptm._gauss_table + the kernel
``dptm._cgs.fill_discrete_gaussian_table``), which ``discrete_gaussian_noise`` uses from
sigma = 0.5 (every lattice mechanism: sigma / g is 4096 to 8192 there; the Gibbs snapshots).

The sampler is rejection from an alias-table proposal; its output must follow the discrete
Gaussian pmf exactly. Chi-square tests at false-alarm rate 1e-6 on fine cells (a pmf flat
within bins, a missed tail or a 2% wider sigma are rejected), the tail exercised by tables
that send a large share of proposals there, every acceptance forced down the exact rational
path, the alias table's exact integer masses, and the construction's refusals.
"""
from fractions import Fraction
import math
import textwrap

import numpy as np
import pytest
from scipy import stats

from dptm import _cgs, _gauss_table, mechanisms
from dptm._exact import exp_neg_bounds, uniform_below_exp
from _child import run_child

P_FLOOR = 1e-6


def draw_with(table, n, seed):
    out = np.empty(n, dtype=np.int64)
    _cgs.fill_discrete_gaussian_table(out, table, np.random.PCG64(seed))
    return out


def chisquare_vs(draws, sigma, min_expected=20):
    """p-value of the draws against N_Z(0, sigma^2), consecutive integers pooled into
    cells of >= ``min_expected`` expected counts."""
    m = int(10 * sigma) + 3
    support = np.arange(-m, m + 1)
    pmf = mechanisms.discrete_gaussian_pmf(support, sigma, support=support)
    obs = np.bincount(np.clip(draws, -m, m) + m, minlength=support.size).astype(float)
    exp = pmf * draws.size
    cell = np.floor(np.cumsum(exp) / min_expected).astype(np.int64)
    cell = np.minimum(cell, cell[-1] - 1)      # the last partial cell joins the one before
    o, e = np.bincount(cell, obs), np.bincount(cell, exp)
    keep = e > 0
    return stats.chisquare(o[keep], e[keep] * o.sum() / e[keep].sum()).pvalue


@pytest.mark.parametrize("sigma", [0.5, 2.3, 17.9, 32.0, 301.7, 6000.0])
def test_table_sampler_follows_the_discrete_gaussian(sigma):
    p, q, _, eff = mechanisms.discrete_gaussian_parameters(sigma)
    draws = mechanisms.discrete_gaussian_noise(400_000, sigma, np.random.default_rng(31))
    assert chisquare_vs(draws, eff) > P_FLOOR                         # fine cells
    assert chisquare_vs(draws, eff, min_expected=2000) > P_FLOOR      # coarse cells
    assert chisquare_vs(draws, 1.02 * eff, min_expected=2000) < P_FLOOR
    # symmetric, and 0 not doubled by the sign (the -0 rejection)
    assert abs(np.mean(draws > 0) - np.mean(draws < 0)) < 6 * math.sqrt(0.5 / draws.size)


def test_a_pmf_flat_within_bins_is_caught():
    # The test's power against the likeliest construction bug: accepting every proposal
    # of a bin (pmf f(jB) across the bin) instead of f(m).
    sigma = 301.7
    p, q, _, eff = mechanisms.discrete_gaussian_parameters(sigma)
    T = _gauss_table.gauss_table(p, q)
    B = 1 << T["bin_bits"]
    rng = np.random.default_rng(3)
    m = mechanisms.discrete_gaussian_noise(400_000, sigma, rng)
    flat = np.sign(m) * ((np.abs(m) // B) * B + rng.integers(0, B, m.size))
    assert chisquare_vs(flat, eff) < P_FLOOR


@pytest.mark.parametrize("bin_bits,n_bins,tail_weight", [(6, 4, 2 ** 49), (5, 7, 2 ** 50)])
def test_tail_component_follows_the_pmf(bin_bits, n_bins, tail_weight):
    # sigma = 100 with bins covering only 2.6 or 2.2 sigma: a large share of the proposals
    # (and every acceptance decision there, by exact arithmetic) goes through the tail
    p, q = 10_000, 1
    T = _gauss_table.gauss_table(p, q, bin_bits=bin_bits, n_bins=n_bins,
                                 tail_weight=tail_weight)
    draws = draw_with(T, 60_000, seed=5)
    # the tail's share against its exact probability (two-sided binomial, 1e-6)
    M = n_bins << bin_bits
    support = np.arange(-3000, 3001)
    p_tail = mechanisms.discrete_gaussian_pmf(support, 100.0, support=support)[
        np.abs(support) >= M].sum()
    assert p_tail > 0.01
    assert stats.binomtest(int(np.sum(np.abs(draws) >= M)), draws.size, p_tail).pvalue > P_FLOOR
    assert chisquare_vs(draws, 100.0) > P_FLOOR
    assert chisquare_vs(draws, 104.0, min_expected=1000) < P_FLOOR


def test_every_acceptance_through_the_exact_path():
    old = _cgs._set_lazy_margin(2.0)      # no squeeze, no double-precision decision
    try:
        draws = mechanisms.discrete_gaussian_noise(30_000, 40.3, np.random.default_rng(8))
    finally:
        _cgs._set_lazy_margin(old)
    _, _, _, eff = mechanisms.discrete_gaussian_parameters(40.3)
    assert chisquare_vs(draws, eff) > P_FLOOR
    assert chisquare_vs(draws, 1.05 * eff, min_expected=1000) < P_FLOOR


@pytest.mark.parametrize("sigma", [0.5, 9.9, 32.0, 777.7, 16000.0])
def test_alias_table_gives_each_component_its_integer_mass(sigma):
    p, q, _, _ = mechanisms.discrete_gaussian_parameters(sigma)
    T = _gauss_table.gauss_table(p, q)
    total = 1 << _gauss_table.COLUMN_BITS
    n = T["ratio"].size
    units = np.zeros(n + 2, dtype=object)
    for col in range(_gauss_table.COLUMNS):
        keep = int(T["prob"][col])
        if keep:
            units[col] += keep
        units[int(T["alias"][col])] += total - keep
    weights = [int(w) for w in T["weight"]]
    slack = total - sum(weights)
    assert list(units) == [_gauss_table.COLUMNS * w for w in weights + [slack]]
    # the envelope dominates: W_j / c >= exp(-(jB)^2 / (2 sigma^2)) exactly
    B = 1 << T["bin_bits"]
    for j in range(n):
        assert Fraction(weights[j], T["c"]) >= exp_neg_bounds((j * B) ** 2 * q, 2 * p)[1]
    assert 0 <= slack < n + 2           # the slack (propose again) is a few units of 2^52


def test_construction_refuses_unsound_parameters():
    with pytest.raises(ValueError, match="tail_weight"):
        _gauss_table.gauss_table(10_000, 1, bin_bits=6, n_bins=4, tail_weight=1)
    with pytest.raises(ValueError, match="too narrow"):
        _gauss_table.gauss_table(10_000, 1, bin_bits=2, n_bins=20)
    with pytest.raises(ValueError, match="n_bins"):
        _gauss_table.gauss_table(10_000, 1, bin_bits=0, n_bins=300)


def test_kernel_refuses_an_inconsistent_table():
    p, q, _, _ = mechanisms.discrete_gaussian_parameters(100.0)
    T = _gauss_table.gauss_table(p, q)
    out = np.empty(3, dtype=np.int64)
    bad_alias = T["alias"].copy()
    bad_alias[0] = 255
    with pytest.raises(ValueError, match="inconsistent"):
        _cgs.fill_discrete_gaussian_table(out, {**T, "alias": bad_alias}, np.random.PCG64(0))
    with pytest.raises(ValueError, match="inconsistent"):
        _cgs.fill_discrete_gaussian_table(out, {**T, "squeeze": T["squeeze"][:-1]},
                                          np.random.PCG64(0))
    # a snapshot refuses a table built for another variance (its draws would not follow
    # the recorded noise)
    n_wk = np.zeros((2, 3), dtype=np.int32)
    snap = (np.empty((2, 3)), np.empty((2, 3), dtype=np.float32), np.empty(2))
    with pytest.raises(ValueError, match="another variance"):
        _cgs.noisy_snapshot(n_wk, 4, 0.0, p + 1, q, 11, 1e9, 0.1, *snap, np.random.PCG64(0),
                            1, T)
    # callers get their own dict; the cached arrays cannot be written
    assert _gauss_table.gauss_table(p, q) is not T and not T["prob"].flags.writeable


@pytest.mark.parametrize("scale", [Fraction(3, 7), Fraction(5, 2), Fraction(2 ** 60 + 1, 2 ** 61)])
def test_scaled_rational_decision_matches_exact_bounds(scale):
    # U * scale < exp(-g), decided against independent bounds on exp(-g)
    num, den = 7, 10
    lo, hi = exp_neg_bounds(num, den)
    for nbits in (64, 80):             # intervals far wider than the bounds' 1e-30
        u = math.floor(lo / scale * (1 << nbits))
        assert uniform_below_exp(u - 2, nbits, num, den, scale) is True
        assert uniform_below_exp(u + 2, nbits, num, den, scale) is False
    assert uniform_below_exp(1, 64, 0, 1, Fraction(1, 2)) is True     # exp(0) = 1
    assert uniform_below_exp(2 ** 63, 64, 0, 1, 2) is False           # U * 2 >= 1


def test_exp_bounds_bracket_the_series():
    g = Fraction(123456789, 987654321)
    s, term, sums = Fraction(0), Fraction(1), []
    for k in range(60):
        s += term
        sums.append(s)
        term *= -g / (k + 1)
    lo, hi = exp_neg_bounds(g.numerator, g.denominator)
    assert lo <= max(sums[-2:]) and min(sums[-2:]) <= hi and hi - lo < Fraction(1, 10 ** 29)


def test_an_error_on_the_exact_path_fails_closed():
    # A failing exact decision must not turn into a silent reject (a wrong pmf): the process
    # aborts. Run in a child process with the rational resolver broken.
    code = textwrap.dedent("""
        import numpy as np
        from dptm import _cgs, _exact, mechanisms
        def broken(*args):
            raise MemoryError("simulated")
        _exact.uniform_below_exp = broken
        _cgs._set_lazy_margin(2.0)
        mechanisms.discrete_gaussian_noise(10, 100.0, np.random.default_rng(0))
        print("NOT ABORTED")
    """)
    res = run_child(code)
    assert res.returncode != 0 and "NOT ABORTED" not in res.stdout
    assert "MemoryError" in res.stderr


def test_unsound_margins_and_parameters_are_refused():
    with pytest.raises(ValueError, match="margin"):
        _cgs._set_lazy_margin(2.0 ** -40)
    assert _cgs._set_lazy_margin(2.0 ** -36) == 2.0 ** -36
    out = np.empty(3, dtype=np.int64)
    p, q, t, _ = mechanisms.discrete_gaussian_parameters(5.0)
    with pytest.raises(ValueError, match="floor"):
        _cgs.fill_discrete_gaussian(out, p, q, t + 1, np.random.PCG64(0))
    with pytest.raises(ValueError, match="2\\^64"):
        _cgs.fill_discrete_gaussian(out, 2 ** 62, 1, 2 ** 31 + 1, np.random.PCG64(0))
