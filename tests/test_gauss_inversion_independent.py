"""The exact discrete Gaussian by table inversion (``dptm._gauss_inversion`` +
``dptm._cgs.fill_discrete_gaussian_inversion``) checked independently of the module's own
test helpers. Skipped where that sampler is not present.

The survival function S_m = P(|X| >= m) is
computed with mpmath (100 digits) from direct sums, its normaliser checked against the
dual (Poisson-summation) series; the draws are tested against exact moments and the exact
mass at 0 (z-tests, false-alarm rate below 1e-6 per test), with power against a sigma 1%
off; against the two older exact samplers (alias proposal, CKS20) by a two-sample test; and
the snapshot kernel's noise and bit consumption must not depend on the counts.
"""
import math

import numpy as np
import pytest
from scipy import stats

gi = pytest.importorskip("dptm._gauss_inversion")
mpmath = pytest.importorskip("mpmath")
from dptm import _cgs  # noqa: E402
from dptm.mechanisms import discrete_gaussian_parameters  # noqa: E402

if not hasattr(_cgs, "fill_discrete_gaussian_inversion"):      # pragma: no cover
    pytest.skip("no inversion kernel in this build", allow_module_level=True)

Z_ALARM = 5.3          # two-sided normal tail 1.2e-7 per statistic (4 per case: < 1e-6)
P_ALARM = 1e-7


def _pq(sigma):
    p, q, _, _ = discrete_gaussian_parameters(sigma)
    return p, q


def _draw(p, q, n, seed, table=None):
    out = np.empty(n, dtype=np.int64)
    _cgs.fill_discrete_gaussian_inversion(out, p, q, np.random.default_rng(seed).bit_generator,
                                          table)
    return out


_CACHE = {}


def _exact(p, q):
    """(Z, S, moments) at 100 digits: f(j) = exp(-j^2 q / 2p) summed directly to 1e-120;
    Z checked against sqrt(2 pi s2) (1 + 2 sum_k exp(-2 pi^2 s2 k^2))."""
    if (p, q) in _CACHE:
        return _CACHE[p, q]
    with mpmath.workdps(100):
        s2 = mpmath.mpf(p) / q
        top = int(math.sqrt(2 * 280 * p / q)) + 3          # f(top) < e^-280
        f = [mpmath.exp(-mpmath.mpf(j * j) / (2 * s2)) for j in range(top + 1)]
        F = [mpmath.mpf(0)] * (top + 2)
        for j in range(top, 0, -1):
            F[j] = F[j + 1] + f[j]
        Z = 1 + 2 * F[1]
        k_top = int(math.sqrt(280 / (2 * math.pi ** 2 * (p / q)))) + 3
        dual = mpmath.sqrt(2 * mpmath.pi * s2) * (1 + 2 * mpmath.fsum(
            mpmath.exp(-2 * mpmath.pi ** 2 * s2 * k * k) for k in range(1, k_top + 1)))
        assert abs(dual / Z - 1) < mpmath.mpf(10) ** -90
        S = [mpmath.mpf(1)] + [2 * F[m] / Z for m in range(1, top + 1)]
        mom = {r: float(2 * mpmath.fsum(mpmath.mpf(j) ** r * f[j] for j in range(1, top + 1)) / Z)
               for r in (1, 2, 4)}
        _CACHE[p, q] = (Z, S, mom)
    return _CACHE[p, q]


# -------------------------------------------------------------- the table's integers
@pytest.mark.parametrize("sigma", [0.05, 0.2, 0.5, 1.0, 2.0, 7.07, 40.0, 1000.0])
@pytest.mark.parametrize("G,L", [(12, 64), (2, 3)])
def test_table_is_the_floor_of_the_survival_function_times_2_to_the_G_plus_L(sigma, G, L):
    if sigma == 1000.0 and (G, L) != (12, 64):
        pytest.skip("one large table")
    p, q = _pq(sigma)
    tab = gi.inversion_table(p, q, G, L)
    hi, lo, guide = tab["hi"], tab["lo"], tab["guide"]
    _, S, _ = _exact(p, q)
    N = G + L
    t = [0]
    with mpmath.workdps(100):
        for m in range(1, hi.size):
            x = S[m] * mpmath.mpf(2) ** N
            assert abs(x - mpmath.nint(x)) > x * mpmath.mpf(10) ** -80   # floor well defined
            t.append(int(mpmath.floor(x)))
        # the table ends at the FIRST m with S_m < 2^-N, and not earlier
        assert S[hi.size - 1] * mpmath.mpf(2) ** N < 1
        assert hi.size == 2 or S[hi.size - 2] * mpmath.mpf(2) ** N >= 1
    assert [int(h) << L | int(v) for h, v in zip(hi, lo)][1:] == t[1:]
    # the guide, rebuilt from the definition: interval g decided iff no S_m in it, then
    # M = #{m : S_m >= (g + 1) 2^-G}
    cells = [0] * (1 << G)                               # thresholds per G-bit cell
    for x in t[1:]:
        cells[x >> L] += 1
    want, above = [0] * (1 << G), 0
    for g in range((1 << G) - 1, -1, -1):
        want[g] = -(above + 1) if cells[g] else above
        above += cells[g]
    assert guide.tolist() == want


@pytest.mark.parametrize("sigma", [0.05, 0.2, 2.0, 40.0])
@pytest.mark.parametrize("P", [80, 140, 333])
def test_guaranteed_bounds_hold_including_the_tail_and_tiny_sigma(sigma, P):
    # J = 1 or 2 for the small sigmas: Z and every S_m rest on the tail bound alone
    p, q = _pq(sigma)
    _, S, _ = _exact(p, q)
    Flo, Fhi, Zlo, Zhi = gi._bounds(p, q, P)
    with mpmath.workdps(100):
        for m in range(1, min(len(S), len(Flo) + 30)):
            lo, hi = gi.survival_bounds(p, q, m, P)
            s = mpmath.mpf(S[m])
            assert mpmath.mpf(lo.numerator) / lo.denominator <= s * (1 + mpmath.mpf(10) ** -80)
            assert s * (1 - mpmath.mpf(10) ** -80) <= mpmath.mpf(hi.numerator) / hi.denominator


# --------------------------------------------------------------------- the draws
def _zscore(x, mean, var):
    return (x.mean() - mean) / math.sqrt(var / x.size)


def _moment_stats(x, p, q):
    """The four z / p statistics of draws ``x`` against N_Z(0, p/q): mean of X^2 and of
    |X| (exact moments), mass at 0 (exact 1/Z), sign balance at each magnitude."""
    Z, _, mom = _exact(p, q)
    x2 = x.astype(np.float64) ** 2
    z2 = _zscore(x2, mom[2], mom[4] - mom[2] ** 2)
    z1 = _zscore(np.abs(x).astype(np.float64), mom[1], mom[2] - mom[1] ** 2)
    zero = int(np.sum(x == 0))
    p0 = stats.binomtest(zero, x.size, float(1 / Z)).pvalue
    # sign given the magnitude: sum over m of (n_+m - n_-m)^2 / (n_+m + n_-m) ~ chi2(#m)
    # (a sign bit correlated with the magnitude's bits keeps the overall balance)
    mags = np.abs(x)
    top = int(min(mags.max(), 6 * math.sqrt(p / q) + 2)) if mags.max() else 0
    npos = np.bincount(mags[x > 0], minlength=top + 1)[1:top + 1].astype(float)
    nneg = np.bincount(mags[x < 0], minlength=top + 1)[1:top + 1].astype(float)
    keep = npos + nneg > 0
    if keep.any():
        chi = float(np.sum((npos - nneg)[keep] ** 2 / (npos + nneg)[keep]))
        psign = float(stats.chi2.sf(chi, int(keep.sum())))
    else:
        psign = 1.0
    return z2, z1, p0, psign


@pytest.mark.parametrize("sigma", [0.2, 0.5, 2.0, 7.07, 40.0, 1000.0])
def test_draws_have_the_exact_moments_and_mass_at_zero(sigma):
    p, q = _pq(sigma)
    x = _draw(p, q, 4_000_000, 101)
    z2, z1, p0, psign = _moment_stats(x, p, q)
    assert abs(z2) < Z_ALARM and abs(z1) < Z_ALARM, (z2, z1)
    assert p0 > P_ALARM and psign > P_ALARM, (p0, psign)


@pytest.mark.parametrize("sigma", [0.5, 2.0, 40.0])
def test_the_moment_test_rejects_a_sigma_one_percent_off(sigma):
    # power: the same test on a sampler of 1.01 sigma (and 0.99 sigma) fails
    p, q = _pq(sigma)
    for f in (1.01, 0.99):
        pw, qw = _pq(f * sigma)
        x = _draw(pw, qw, 4_000_000, 102)
        z2, _, _, _ = _moment_stats(x, p, q)
        assert abs(z2) > Z_ALARM, (f, z2)


@pytest.mark.parametrize("G,L", [(1, 1), (2, 3)])
@pytest.mark.parametrize("sigma", [0.5, 2.0])
def test_coarse_tables_keep_the_exact_moments(G, L, sigma):
    # few rows: most draws end in stage 2 / the rational resolver and the far tail
    p, q = _pq(sigma)
    x = _draw(p, q, 60_000, 103, gi.inversion_table(p, q, G, L))
    z2, z1, p0, psign = _moment_stats(x, p, q)
    assert abs(z2) < Z_ALARM and abs(z1) < Z_ALARM, (z2, z1)
    assert p0 > P_ALARM and psign > P_ALARM, (p0, psign)
    # the far tail (|x| >= the table's last row: the resolver only) at its exact rate
    last = gi.inversion_table(p, q, G, L)["hi"].size - 1
    _, S, _ = _exact(p, q)
    far = int(np.sum(np.abs(x) >= last))
    assert x.size * float(S[last]) > 20 and far > 0
    assert stats.binomtest(far, x.size, float(S[last])).pvalue > P_ALARM


def test_same_distribution_as_the_older_exact_samplers():
    # two-sample chi-square (cells of |x| and sign pooled to >= 50 expected) between the
    # inversion sampler and both the alias-table proposal and CKS20 (reviewed, exact)
    from dptm import _gauss_table
    p, q, t, _ = discrete_gaussian_parameters(7.07)
    n = 1_000_000
    a = _draw(p, q, n, 104)
    b = np.empty(n, dtype=np.int64)
    _cgs.fill_discrete_gaussian_table(b, _gauss_table.gauss_table(p, q),
                                      np.random.default_rng(105).bit_generator)
    c = np.empty(200_000, dtype=np.int64)
    _cgs.fill_discrete_gaussian(c, p, q, t, np.random.default_rng(106).bit_generator)
    for other in (b, c):
        lo, hi = -30, 30
        ca = np.bincount(np.clip(a, lo, hi) - lo, minlength=hi - lo + 1)
        cb = np.bincount(np.clip(other, lo, hi) - lo, minlength=hi - lo + 1)
        table = np.array([ca, cb])
        table = table[:, table.sum(axis=0) >= 100]
        assert stats.chi2_contingency(table).pvalue > P_ALARM


# ----------------------------------------------------------------- the snapshot kernel
def test_counts_never_decide_the_noise_or_the_bits_read():
    # kind 4 with an inversion table, per-block generators: neighbouring count matrices
    # (one token moved, as under word replacement) and unrelated ones get bit-identical
    # noise, and every generator ends in the same state (the same bits were read)
    V, K = 37, 9
    p, q = _pq(7.07)
    table = gi.inversion_table(p, q)
    rng = np.random.default_rng(0)
    base = rng.integers(0, 50, (V, K)).astype(np.int32)
    moved = base.copy()
    moved[3, 2] += 1
    moved[30, 2] -= 1 if moved[30, 2] > 0 else -1
    other = rng.integers(0, 10 ** 6, (V, K)).astype(np.int32)
    noises, states = [], []
    for n_wk in (base, moved, other, np.zeros((V, K), np.int32)):
        gens = [np.random.default_rng(200 + j).bit_generator for j in range(4)]
        s = np.empty((V, K))
        _cgs.noisy_snapshot(n_wk, 4, math.sqrt(p / q), p, q, 8, 1e9, 0.1, s,
                            np.empty((V, K), np.float32), np.empty(V), gens, 2, table)
        noises.append(s - n_wk)
        states.append([g.state for g in gens])
    for nz, st in zip(noises[1:], states[1:]):
        np.testing.assert_array_equal(nz, noises[0])
        assert st == states[0]
    assert np.unique(noises[0]).size > 10                 # noise was drawn
