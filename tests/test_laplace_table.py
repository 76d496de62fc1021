"""The exact dyadic discrete Laplace by table inversion (dptm._laplace_table + the kernel
``dptm._cgs.fill_discrete_laplace_dyadic``), the default noise of NoisyGibbsLDA's snapshots.

Its output must follow P(x) = (1 - r) / (1 + r) r^|x|, r = a / 2^21, exactly. Chi-square tests
(false-alarm rate 1e-6) against that pmf at several scales, with the default table and with
coarse tables (few index and low bits) that send most draws through stages 2 and 3 (the
rational resolver); a 2% wider scale is rejected; the table's integers against thresholds
computed here with fractions; the resolver against a direct count; refusals of corrupted
tables; and the fail-closed behaviour of the exact path. The resolver at the thresholds
themselves, the kernel on every bit pattern of coarse tables, and independence of
consecutive draws (every bit used once).
"""
from fractions import Fraction
import math
import textwrap

import numpy as np
import pytest
from scipy import stats

from dptm import _cgs
from dptm.noise import laplace_table as _laplace_table
from dptm.noise.laplace_table import dyadic_laplace_parameter
from _tables import corrupted_tables
from _child import run_child

ALARM = 1e-6
DEN = 2 ** 21


def pmf(a, xs):
    r = a / DEN
    return (1 - r) / (1 + r) * r ** np.abs(xs)


def draw(a, n, seed, table=None):
    out = np.empty(n, dtype=np.int64)
    _cgs.fill_discrete_laplace_dyadic(out, a, np.random.default_rng(seed).bit_generator, table)
    return out


def chi_square(x, a, min_expected=20):
    """p-value of integer draws against the pmf of parameter a / 2^21: consecutive integers
    pooled into cells of >= ``min_expected`` expected counts, the tails into the end cells."""
    r = a / DEN
    m = int(60 / -math.log(r)) + 5                  # P(|x| > m) < e^-60
    support = np.arange(-m, m + 1)
    obs = np.bincount(np.clip(x, -m, m) + m, minlength=support.size).astype(float)
    if np.any(np.abs(x) > m):
        return 0.0
    exp = pmf(a, support) * x.size
    cell = np.floor(np.cumsum(exp) / min_expected).astype(np.int64)
    cell = np.minimum(cell, cell[-1] - 1)          # the last partial cell joins the one before
    o, e = np.bincount(cell, obs), np.bincount(cell, exp)
    keep = e > 0
    return stats.chisquare(o[keep], e[keep] * o.sum() / e[keep].sum()).pvalue


@pytest.mark.parametrize("scale", [0.3, 1.0, 2.0, 2.0 / 0.7, 8.0, 40.0])
def test_default_table_follows_the_pmf(scale):
    a, _ = dyadic_laplace_parameter(scale) if scale <= 8 else (
        math.ceil(math.exp(-1 / scale) * DEN), None)
    x = draw(a, 1_000_000, 1)
    assert chi_square(x, a) > ALARM
    assert chi_square(x, a, min_expected=5000) > ALARM
    # a 2% wider scale is rejected (the test has power against a slightly wrong table)
    a_wide = math.ceil(math.exp(-1 / (1.02 * -1 / math.log(a / DEN))) * DEN)
    assert chi_square(x, a_wide, min_expected=5000) < ALARM
    # symmetric: the sign bit is fair and independent of the magnitude
    pos, neg = int(np.sum(x > 0)), int(np.sum(x < 0))
    assert stats.binomtest(pos, pos + neg).pvalue > ALARM
    for m in (1, 2):
        assert stats.binomtest(int(np.sum(x == m)), int(np.sum(np.abs(x) == m))).pvalue > ALARM


@pytest.mark.parametrize("index_bits,low_bits", [(1, 1), (2, 2), (3, 1), (4, 3)])
@pytest.mark.parametrize("scale", [0.5, 2.0, 6.0])
def test_coarse_tables_exercise_the_exact_stages(index_bits, low_bits, scale, monkeypatch):
    """Few index bits: most intervals hold thresholds (stage 2); few low bits: stage 2
    often cannot decide (stage 3, the rational resolver). The pmf stays exact."""
    a, _ = dyadic_laplace_parameter(scale)
    table = _laplace_table.dyadic_table(a, index_bits, low_bits)
    calls = []
    resolve = _laplace_table.resolve

    def counting(*args):
        calls.append(1)
        return resolve(*args)
    monkeypatch.setattr(_laplace_table, "resolve", counting)
    x = draw(a, 200_000, 2, table)
    assert len(calls) > 1000                          # stage 3 really ran
    assert chi_square(x, a) > ALARM
    pos, neg = int(np.sum(x > 0)), int(np.sum(x < 0))
    assert stats.binomtest(pos, pos + neg).pvalue > ALARM


def test_coarse_table_has_power():
    # the same coarse path against a 2% wider scale: rejected
    a, _ = dyadic_laplace_parameter(2.0)
    x = draw(a, 1_000_000, 3, _laplace_table.dyadic_table(a, 2, 2))
    a_wide, _ = dyadic_laplace_parameter(2.04)
    assert chi_square(x, a) > ALARM and chi_square(x, a_wide, min_expected=5000) < ALARM


def thresholds(a, n):
    """T_m = 2 r^m / (1 + r), m < n, computed independently with fractions."""
    r = Fraction(a, DEN)
    out, t = [Fraction(1)], 2 * r / (1 + r)
    for _ in range(1, n):
        out.append(t)
        t *= r
    return out


@pytest.mark.parametrize("a", [1, 74814, 1271987, DEN - 200000])
@pytest.mark.parametrize("index_bits,low_bits", [(12, 64), (3, 5)])
def test_table_integers_are_the_exact_thresholds(a, index_bits, low_bits):
    tab = _laplace_table.dyadic_table(a, index_bits, low_bits)
    hi, lo, guide = tab["hi"], tab["lo"], tab["guide"]
    G, L = index_bits, low_bits
    T = thresholds(a, hi.size)
    for m in range(1, hi.size):
        t = math.floor(T[m] * 2 ** (G + L))
        assert int(hi[m]) == t >> L and int(lo[m]) == t & ((1 << L) - 1)
    # the last row is the first threshold below 2^-(G + L)
    assert hi[-1] == 0 and lo[-1] == 0 and (hi.size == 2 or (hi[-2], lo[-2]) != (0, 0))
    # interval g of the index bits: the thresholds at or above its end, and whether one
    # lies strictly inside it
    h = np.array([math.floor(T[m] * 2 ** G) for m in range(1, hi.size)])
    assert all(T[m] * 2 ** G != h[m - 1] for m in range(1, hi.size))    # never dyadic
    g = np.arange(2 ** G)
    above = (h[None, :] >= g[:, None] + 1).sum(axis=1)
    inside = (h[None, :] == g[:, None]).any(axis=1)
    np.testing.assert_array_equal(guide, np.where(inside, -(above + 1), above))
    assert not guide.flags.writeable and not hi.flags.writeable and not lo.flags.writeable


def test_resolver_counts_the_thresholds_above_the_uniform():
    """resolve(a, big, nbits, 1): for U in [big, big + 1) / 2^nbits, M = #{m : U < T_m}
    when those bits decide every threshold, else None (more bits needed)."""
    a = 1271987
    T = thresholds(a, 200)
    rng = np.random.default_rng(4)
    n_none = 0
    for _ in range(400):
        nbits = int(rng.integers(1, 30))
        big = int(rng.integers(0, 2 ** nbits))
        lo_u, hi_u = Fraction(big, 2 ** nbits), Fraction(big + 1, 2 ** nbits)
        m = next(m for m in range(1, 200) if T[m] < hi_u)      # the first not surely above U
        expected = m - 1 if T[m] <= lo_u else None
        assert _laplace_table.resolve(a, big, nbits, 1) == expected
        n_none += expected is None
    assert 0 < n_none < 400


def test_corrupted_tables_are_refused():
    a = 1271987
    good = _laplace_table.dyadic_table(a, 4, 8)
    out = np.empty(10, dtype=np.int64)
    gen = np.random.default_rng(0).bit_generator

    bad = corrupted_tables(good)
    for t in bad:
        with pytest.raises(ValueError, match="inconsistent"):
            _cgs.fill_discrete_laplace_dyadic(out, a, gen, t)
    with pytest.raises(ValueError, match="another parameter"):
        _cgs.fill_discrete_laplace_dyadic(out, a + 1, gen, good)
    with pytest.raises(ValueError, match="a must be"):
        _laplace_table.dyadic_table(0)
    with pytest.raises(ValueError, match="index_bits"):
        _laplace_table.dyadic_table(a, 16)
    with pytest.raises(ValueError, match="low_bits"):
        _laplace_table.dyadic_table(a, 12, 65)
    with pytest.raises(ValueError, match="too close"):
        _laplace_table.dyadic_table(DEN - 1)
    # the cached table is shared read-only: a caller cannot corrupt it
    with pytest.raises(ValueError):
        _laplace_table.dyadic_table(a)["guide"][0] = 0


def test_snapshot_uses_the_given_table_and_refuses_another():
    V, K, a = 9, 4, 1271987
    n_wk = np.random.default_rng(0).integers(0, 5, (V, K)).astype(np.int32)
    outs = []
    for table in (None, _laplace_table.dyadic_table(a), _laplace_table.dyadic_table(a, 2, 2)):
        s = np.empty((V, K))
        _cgs.noisy_snapshot(n_wk, 5, 2.0, a, 0, 0, 6.0, 0.1, s, np.empty((V, K), np.float32),
                            np.empty(V), np.random.default_rng(1).bit_generator,
                            laplace_table=table)
        outs.append(s)
    np.testing.assert_array_equal(outs[0], outs[1])        # the default is dyadic_table(a)
    with pytest.raises(ValueError, match="another parameter"):
        _cgs.noisy_snapshot(n_wk, 5, 2.0, a, 0, 0, 6.0, 0.1, np.empty((V, K)),
                            np.empty((V, K), np.float32), np.empty(V),
                            np.random.default_rng(1).bit_generator,
                            laplace_table=_laplace_table.dyadic_table(a - 1))


def test_an_error_on_the_exact_path_fails_closed():
    # A failing exact decision must not turn into a value the pmf does not justify: the
    # process aborts. Run in a child process with the rational resolver broken and a
    # coarse table that reaches it on most draws.
    code = textwrap.dedent("""
        import numpy as np
        from dptm import _cgs
        from dptm.noise import laplace_table as _laplace_table
        def broken(*args):
            raise MemoryError("simulated")
        table = _laplace_table.dyadic_table(1271987, 1, 1)
        _laplace_table.resolve = broken
        out = np.empty(1000, dtype=np.int64)
        gen = np.random.default_rng(0).bit_generator
        _cgs.fill_discrete_laplace_dyadic(out, 1271987, gen, table)
        print("NOT ABORTED")
    """)
    res = run_child(code)
    assert res.returncode != 0 and "NOT ABORTED" not in res.stdout
    assert "MemoryError" in res.stderr


# ---------------------------------------------- the resolver's thresholds, every bit pattern
@pytest.mark.parametrize("a", [1, 74814, 1271987, DEN - 200000])
def test_resolver_is_exact_at_every_threshold(a):
    # For each T_m (independent fractions) and 80 / 200 bits of U: the interval just below
    # floor(T_m 2^n) / 2^n lies under T_m, the one containing T_m is undecided, the one just
    # above lies over it. Any error in the resolver's thresholds larger than 2^-n (a wrong
    # denominator, a wrong ratio in the tail) flips one of these answers.
    r = Fraction(a, DEN)
    T = [None] + [2 * r ** m / (1 + r) for m in range(1, 60)]
    for n in (80, 200):
        for m in range(1, 60):
            k = math.floor(T[m] * 2 ** n)
            if k < 2:
                break
            # U just below T_m (and far above T_(m+1) = r T_m at these n): M = m
            assert _laplace_table.resolve(a, k - 1, n, 1) == m
            assert _laplace_table.resolve(a, k - 1, n, m) == m
            assert _laplace_table.resolve(a, k, n, m) is None          # straddles T_m
            assert _laplace_table.resolve(a, k + 1, n, m) == m - 1     # U >= T_m


@pytest.mark.parametrize("scale", [0.5, 2.0])
def test_consecutive_draws_are_independent(scale):
    # Chi-square independence of (x_i, x_(i+1)) clipped to [-2, 2] (pairs at lags 1 and 4,
    # within and across the 64-bit words the lanes come from); false alarm 1e-6 per lag.
    a, _ = dyadic_laplace_parameter(scale)
    x = np.empty(1_000_000, dtype=np.int64)
    _cgs.fill_discrete_laplace_dyadic(x, a, np.random.default_rng(9).bit_generator)
    c = np.clip(x, -2, 2) + 2
    for lag in (1, 2, 3, 4):
        tab = np.zeros((5, 5))
        np.add.at(tab, (c[:-lag], c[lag:]), 1)
        tab = tab[tab.sum(axis=1) > 0][:, tab.sum(axis=0) > 0]
        assert stats.chi2_contingency(tab)[1] > ALARM, lag


def _scripted(words):
    """A BitGenerator returning ``words`` in order (then zeros), and how many were read."""
    from randomgen import UserBitGenerator
    state = {"i": 0}

    def next_raw(_):
        i = state["i"]
        state["i"] += 1
        return int(words[i]) if i < len(words) else 0
    return UserBitGenerator(next_raw, 64), state


@pytest.mark.parametrize("index_bits,low_bits", [(1, 1), (2, 3), (3, 2), (4, 4)])
@pytest.mark.parametrize("scale", [0.4, 2.0, 6.0])
def test_kernel_is_the_exact_inversion_on_every_bit_pattern(index_bits, low_bits, scale):
    """Deterministic check of the kernel's decisions (stages 1-3, the tail row, the sign):
    for every value of the first G + 1 + L bits, the draw equals (-1)^S #{m : T_m > U} for
    U at both ends of its interval (stage 3 fed 64 zero / one bits), or, when the interval
    straddles no threshold, for every U in it. With U uniform this is the exact pmf."""
    pytest.importorskip("randomgen")
    a, _ = dyadic_laplace_parameter(scale)
    G, L = index_bits, low_bits
    table = _laplace_table.dyadic_table(a, G, L)
    r = Fraction(a, DEN)

    def count_above(u):                     # #{m >= 1 : T_m > u}, u a Fraction in (0, 1)
        m, t = 0, 2 * r / (1 + r)
        while t > u:
            m, t = m + 1, t * r
        return m
    n = G + L
    for lane in range(1 << (G + 1)):
        sign, g = lane & 1, lane >> 1
        for v in range(1 << L):
            k = (g << L) | v
            lo_u, hi_u = Fraction(k, 1 << n), Fraction(k + 1, 1 << n)
            left = count_above(lo_u + Fraction(1, 1 << (n + 300)))
            right = count_above(hi_u - Fraction(1, 1 << (n + 300)))
            eps = Fraction(1, 1 << (n + 128))   # U = an end of the interval, +- 2^-(n+128)
            for tail, u in (([0, 1], lo_u + eps), ([(1 << 64) - 1] * 2, hi_u - eps)):
                bg, st = _scripted([lane, v << (64 - L)] + tail)
                out = np.empty(1, dtype=np.int64)
                _cgs.fill_discrete_laplace_dyadic(out, a, bg, table)
                m = count_above(u) if left != right else left
                assert out[0] == (-m if sign else m), (lane, v, tail)
                # a decided interval never reads the stage-3 word; the guide's intervals
                # (no threshold in I_g) never read the stage-2 word either
                if left == right:
                    assert st["i"] <= 2
