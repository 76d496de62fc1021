"""The exact discrete Gaussian by table inversion (dptm._gauss_inversion + the kernel
``dptm._cgs.fill_discrete_gaussian_inversion``), SubsampledGibbsLDA's snapshot noise.

Its output must follow P(x) = exp(-x^2 q / (2 p)) / Z on the integers exactly. Checked here:
the table's integers and guide against survival probabilities computed independently with
mpmath (80 digits, Jacobi theta normaliser); the guaranteed bounds bracket them; chi-square
tests (false-alarm rate 1e-6) at several sigma with the default table and with coarse tables
that send most draws through stages 2 and 3 and the far tail (the rational resolver), with
power against a 1% wider sigma; the kernel against a Python reference of the definition
(M = #{m : U < S_m}, U read lane by lane, then word by word) on random and crafted words;
consecutive draws independent; the resolver at grid points; corrupted tables refused; the
fail-closed path; the snapshot kernel and SubsampledGibbsLDA.
"""
from fractions import Fraction
import math
import textwrap

import mpmath
import numpy as np
import pytest
from randomgen import UserBitGenerator
from scipy import stats

from dptm import SubsampledGibbsLDA, _cgs
from dptm.noise import gauss_inversion as _gauss_inversion
from dptm.noise.mechanisms import discrete_gaussian_table
from dptm.mechanisms import discrete_gaussian_parameters
from dptm.models import private_gibbs
from _tables import corrupted_tables
from _child import run_child

ALARM = 1e-6
SIGMAS = [0.3, 0.5, 2.0, 7.07, 40.0]


def params(sigma):
    p, q, _, _ = discrete_gaussian_parameters(sigma)
    return p, q


def draw(p, q, n, seed, table=None):
    out = np.empty(n, dtype=np.int64)
    _cgs.fill_discrete_gaussian_inversion(out, p, q, np.random.default_rng(seed).bit_generator,
                                          table)
    return out


def pmf(p, q, xs):
    s2 = p / q
    m = int(40 * math.sqrt(s2)) + 40
    norm = np.exp(-np.arange(-m, m + 1, dtype=float) ** 2 / (2 * s2)).sum()
    return np.exp(-np.asarray(xs, dtype=float) ** 2 / (2 * s2)) / norm


def chi_square(x, p, q, min_expected=20):
    """p-value of integer draws against the pmf of variance p / q: consecutive integers
    pooled into cells of >= ``min_expected`` expected counts, the tails into the end cells."""
    m = int(12 * math.sqrt(p / q)) + 5                  # P(|x| > m) < e^-70
    if np.any(np.abs(x) > m):
        return 0.0
    support = np.arange(-m, m + 1)
    obs = np.bincount(x + m, minlength=support.size).astype(float)
    exp = pmf(p, q, support) * x.size
    cell = np.floor(np.cumsum(exp) / min_expected).astype(np.int64)
    cell = np.minimum(cell, cell[-1] - 1)
    o, e = np.bincount(cell, obs), np.bincount(cell, exp)
    keep = e > 0
    return stats.chisquare(o[keep], e[keep] * o.sum() / e[keep].sum()).pvalue


# ------------------------------------------------------------------ exact survival function
_S_CACHE = {}


def survival(p, q, n):
    """S_m = P(|X| >= m), m < n (S_0 = 1), with mpmath at 80 digits, independently of the
    module: Z = theta_3(0, exp(-q / (2p))), tails summed until negligible."""
    key = (p, q, n)
    if key not in _S_CACHE:
        with mpmath.workdps(80):
            nome = mpmath.exp(-mpmath.mpf(q) / (2 * p))
            Z = mpmath.jtheta(3, 0, nome)
            sigma = math.sqrt(p / q)
            top = n + int(30 * sigma) + 30             # f beyond: below 1e-190
            f = [mpmath.exp(-mpmath.mpf(j * j * q) / (2 * p)) for j in range(top)]
            S, tail = [mpmath.mpf(0)] * top, mpmath.mpf(0)
            for j in range(top - 1, 0, -1):
                tail += f[j]
                S[j] = 2 * tail / Z
            S[0] = mpmath.mpf(1)
            _S_CACHE[key] = S[:n]
    return _S_CACHE[key]


def mp_fraction(x):
    """An mpmath value as an exact Fraction (its binary value, not re-rounded)."""
    man, exp = x.man_exp
    return Fraction(int(man)) * Fraction(2) ** int(exp)


@pytest.mark.parametrize("sigma", SIGMAS + [300.0])
@pytest.mark.parametrize("index_bits,low_bits", [(12, 64), (3, 5), (1, 1)])
def test_table_integers_are_the_floors_of_the_survival_function(sigma, index_bits, low_bits):
    p, q = params(sigma)
    if sigma > 100 and index_bits != 12:
        pytest.skip("one large table is enough")
    tab = _gauss_inversion.inversion_table(p, q, index_bits, low_bits)
    hi, lo, guide = tab["hi"], tab["lo"], tab["guide"]
    G, L = index_bits, low_bits
    N = G + L
    S = survival(p, q, hi.size + 1)
    with mpmath.workdps(80):
        for m in range(1, hi.size):
            t = int(mpmath.floor(S[m] * mpmath.mpf(2) ** N))
            assert int(hi[m]) == t >> L and int(lo[m]) == t & ((1 << L) - 1), m
        # the last row is the first threshold below 2^-(G + L)
        assert hi[-1] == 0 and lo[-1] == 0 and (hi.size == 2 or (hi[-2], lo[-2]) != (0, 0))
        h = np.array([int(mpmath.floor(S[m] * 2 ** G)) for m in range(1, hi.size)])
    g = np.arange(2 ** G)
    above = (h[None, :] >= g[:, None] + 1).sum(axis=1)
    inside = (h[None, :] == g[:, None]).any(axis=1)
    np.testing.assert_array_equal(guide, np.where(inside, -(above + 1), above))
    assert not guide.flags.writeable and not hi.flags.writeable and not lo.flags.writeable
    # every guide entry that decides M is provably inside M's interval: with the module's
    # guaranteed rational bounds, S_(M+1) <= g / 2^G < (g + 1) / 2^G <= S_M for all of I_g
    for gg in np.flatnonzero(guide >= 0)[:: max(1, (1 << G) // 512)]:
        M = int(guide[gg])
        upper_next = _gauss_inversion.survival_bounds(p, q, M + 1)[1]
        lower = Fraction(1) if M == 0 else _gauss_inversion.survival_bounds(p, q, M)[0]
        assert upper_next <= Fraction(int(gg), 2 ** G) and Fraction(int(gg) + 1, 2 ** G) <= lower


@pytest.mark.parametrize("sigma", [0.3, 2.0, 7.07, 40.0])
@pytest.mark.parametrize("P", [140, 200])
def test_guaranteed_bounds_bracket_the_survival_function(sigma, P):
    """lo <= S_m <= hi for every m, including far past the table's last row (where only the
    tail bound remains) and the normaliser Z against Jacobi's theta function."""
    p, q = params(sigma)
    Flo, Fhi, Zlo, Zhi = _gauss_inversion._bounds(p, q, P)
    J = len(Flo) - 1
    S = survival(p, q, J + 12)
    for m in list(range(1, J + 12)):
        lo, hi = _gauss_inversion.survival_bounds(p, q, m, P)
        s = mp_fraction(S[m])
        # mpmath's S_m is itself within 1e-75 relative: compare with that slack
        slack = s / 10 ** 70 + Fraction(1, 2 ** (P + 200))
        assert lo <= s + slack and s - slack <= hi, m
        assert hi - lo <= Fraction(4 * J + 200, 2 ** P)      # and tight
    with mpmath.workdps(80):
        Z = mp_fraction(mpmath.jtheta(3, 0, mpmath.exp(-mpmath.mpf(q) / (2 * p))))
    assert Fraction(Zlo, 2 ** P) <= Z <= Fraction(Zhi, 2 ** P)
    # the fixed-point exp bounds bracket exp(-g)
    for num, den in [(1, 3), (7, 2), (139, 1), (12345, 100), (0, 1), (10 ** 6, 1)]:
        lo, hi = _gauss_inversion._exp_fixed(num, den, P)
        with mpmath.workdps(80):
            e = mp_fraction(mpmath.exp(-mpmath.mpf(num) / den) * 2 ** P)
        assert lo <= e * (1 + Fraction(1, 10 ** 70)) and e * (1 - Fraction(1, 10 ** 70)) <= hi
        assert hi - lo <= 2


# ---------------------------------------------------------------------------- pmf tests
@pytest.mark.parametrize("sigma", SIGMAS)
def test_default_table_follows_the_pmf(sigma):
    p, q = params(sigma)
    x = draw(p, q, 2_000_000, 1)
    assert chi_square(x, p, q) > ALARM
    assert chi_square(x, p, q, min_expected=5000) > ALARM
    pos, neg = int(np.sum(x > 0)), int(np.sum(x < 0))
    assert stats.binomtest(pos, pos + neg).pvalue > ALARM
    for m in (1, 2):
        if np.sum(np.abs(x) == m) > 100:
            assert stats.binomtest(int(np.sum(x == m)), int(np.sum(np.abs(x) == m))).pvalue > ALARM


@pytest.mark.parametrize("sigma", [2.0, 7.07, 40.0])
def test_a_one_percent_wider_sigma_is_rejected(sigma):
    p, q = params(sigma)
    x = draw(p, q, 2_000_000, 3)
    pw, qw = params(1.01 * sigma)
    assert chi_square(x, p, q, min_expected=5000) > ALARM
    assert chi_square(x, pw, qw, min_expected=5000) < ALARM


@pytest.mark.parametrize("index_bits,low_bits", [(1, 1), (2, 2), (3, 1), (4, 3)])
@pytest.mark.parametrize("sigma", [0.5, 2.0, 7.07])
def test_coarse_tables_exercise_the_exact_stages(index_bits, low_bits, sigma, monkeypatch):
    """Few index bits: most intervals hold thresholds (stage 2); few low bits: stage 2
    often cannot decide, and the table ends after a few rows, so the far tail runs through
    the resolver (stage 3). The pmf stays exact."""
    p, q = params(sigma)
    table = _gauss_inversion.inversion_table(p, q, index_bits, low_bits)
    last = table["hi"].size - 1
    calls, beyond = [], []
    resolve = _gauss_inversion.resolve

    def counting(p_, q_, big, nbits, m):
        r = resolve(p_, q_, big, nbits, m)
        calls.append(1)
        if r is not None and r >= last:
            beyond.append(r)
        return r
    monkeypatch.setattr(_gauss_inversion, "resolve", counting)
    x = draw(p, q, 150_000, 2, table)
    assert len(calls) > 1000                          # stage 3 really ran
    # the far tail: every |x| >= last (U < S_last < 2^-(G + L)) came from the resolver
    assert len(beyond) == np.sum(np.abs(x) >= last)
    assert len(beyond) > 50 or x.size * pmf(p, q, np.arange(last, last + 40)).sum() * 2 < 20
    assert chi_square(x, p, q) > ALARM
    pos, neg = int(np.sum(x > 0)), int(np.sum(x < 0))
    assert stats.binomtest(pos, pos + neg).pvalue > ALARM


def test_coarse_table_has_power():
    p, q = params(7.07)
    x = draw(p, q, 1_000_000, 4, _gauss_inversion.inversion_table(p, q, 2, 2))
    pw, qw = params(7.07 * 1.01)
    assert chi_square(x, p, q, min_expected=5000) > ALARM
    assert chi_square(x, pw, qw, min_expected=5000) < ALARM


@pytest.mark.parametrize("index_bits,low_bits", [(12, 64), (2, 2)])
def test_consecutive_draws_are_independent(index_bits, low_bits):
    """Pairs (x_i, x_i+1): a contingency test on 7 classes of each (a bit read twice, or a
    lane or word not consumed, makes neighbouring draws dependent)."""
    p, q = params(1.5)
    x = draw(p, q, 600_000, 5, _gauss_inversion.inversion_table(p, q, index_bits, low_bits))
    c = np.clip(x, -3, 3) + 3
    for lag in (1, 2, 3, 4):
        tab = np.zeros((7, 7))
        np.add.at(tab, (c[:-lag:lag], c[lag::lag]), 1)
        assert stats.chi2_contingency(tab).pvalue > ALARM


# ------------------------------------------------------------- kernel vs the definition
class Words:
    """A BitGenerator returning the given 64-bit words in order (then fails loudly)."""

    def __init__(self, words):
        self.words = [int(w) for w in words]
        self.pos = 0
        self.bit_generator = UserBitGenerator(self._next, 64)

    def _next(self, _):
        if self.pos >= len(self.words):
            raise IndexError("out of crafted words")
        self.pos += 1
        return self.words[self.pos - 1]


def reference(p, q, G, L, words, n):
    """The draws the definition gives: each draw's lane (G + 1 bits, low bit the sign, from
    the low end of a word, 64 // (G + 1) lanes per word) starts U with its G high bits;
    while some S_m lies strictly inside U's interval, L more bits (the top of the next word),
    then 64 at a time; M = #{m >= 1 : S_m >= the interval's end}."""
    # thresholds below 2^-320 never matter here (a draw reading 320 bits: p < 2^-200)
    S = [mp_fraction(s) for s in survival(p, q, 400) if s > mpmath.mpf(2) ** -320]
    it = iter(int(w) for w in words)
    lanes, lane_bits = 64 // (G + 1), G + 1
    word, left, out = 0, 0, []

    def undecided(u, nbits):
        lo, hi = Fraction(u, 2 ** nbits), Fraction(u + 1, 2 ** nbits)
        return any(lo < s < hi for s in S[1:])
    for _ in range(n):
        if left == 0:
            word, left = next(it), lanes
        lane = word & ((1 << lane_bits) - 1)
        word >>= lane_bits
        left -= 1
        u, nbits = lane >> 1, G
        if undecided(u, nbits):
            u, nbits = (u << L) | (next(it) >> (64 - L)), nbits + L
            while undecided(u, nbits):
                u, nbits = (u << 64) | next(it), nbits + 64
        end = Fraction(u + 1, 2 ** nbits)
        M = sum(1 for s in S[1:] if s >= end)
        out.append(-M if lane & 1 else M)
    return out


@pytest.mark.parametrize("sigma", [0.5, 2.0, 7.07])
@pytest.mark.parametrize("index_bits,low_bits", [(12, 64), (3, 2), (1, 1)])
def test_kernel_matches_the_definition_on_random_words(sigma, index_bits, low_bits):
    p, q = params(sigma)
    table = _gauss_inversion.inversion_table(p, q, index_bits, low_bits)
    words = np.random.default_rng(6).integers(0, 2 ** 64, 3000, dtype=np.uint64)
    n = 400
    src = Words(words)
    out = np.empty(n, dtype=np.int64)
    _cgs.fill_discrete_gaussian_inversion(out, p, q, src.bit_generator, table)
    assert out.tolist() == reference(p, q, index_bits, low_bits, words, n)


@pytest.mark.parametrize("index_bits,low_bits", [(12, 64), (4, 3)])
def test_kernel_matches_the_definition_in_the_far_tail(index_bits, low_bits):
    """Crafted words: U's first G + L bits zero, then a word with few leading zeros. U is
    below the table's last threshold, so only the resolver decides |x|; one word of
    leading zeros more takes it further out."""
    p, q = params(2.0)
    table = _gauss_inversion.inversion_table(p, q, index_bits, low_bits)
    G, L = index_bits, low_bits
    lanes = 64 // (G + 1)
    words = [1 << (G + 1)]                # lanes: (g 0, +), (g 0, -), (g 0, +), ...
    for i in range(lanes):
        words += [0, (1 << (63 - (1, 5, 17, 40)[i % 4])) | 12345]     # v = 0, then U's bits
    words += [0, 0, 0, 1 << 60]           # a new lane word; v = 0; 64 zeros more
    n = lanes + 1
    src = Words(words)
    out = np.empty(n, dtype=np.int64)
    _cgs.fill_discrete_gaussian_inversion(out, p, q, src.bit_generator, table)
    ref = reference(p, q, G, L, words, n)
    assert out.tolist() == ref
    last = table["hi"].size - 1
    # U < 2^-(G + L) <= S_(last - 1): all at the table's end or beyond, decided by resolve
    assert all(abs(x) >= last - 1 for x in ref) and sum(abs(x) > last for x in ref) >= 2
    assert abs(ref[-1]) > abs(ref[0])                  # further out with more zeros


# --------------------------------------------------------------------------- the resolver
def test_resolver_at_grid_points():
    """U's known bits as the grid cell holding S_m: undecided (None); the cells on either
    side decide, with the right count; a deeper cell inside the same one decides."""
    p, q = params(7.07)
    S = survival(p, q, 200)
    for m in (1, 2, 5, 20, 37, 60):
        for nbits in (3, 10, 40, 64, 100):
            with mpmath.workdps(80):
                t = int(mpmath.floor(S[m] * mpmath.mpf(2) ** nbits))
            count_above = lambda end: sum(1 for s in S[1:] if mp_fraction(s) >= end)  # noqa: E731
            r = _gauss_inversion.resolve(p, q, t, nbits, 1)
            # another threshold may share the cell at few bits: then still undecided
            assert r is None
            if t >= 1:
                r = _gauss_inversion.resolve(p, q, t - 1, nbits, 1)
                if not any(Fraction(t - 1, 2 ** nbits) < mp_fraction(s) < Fraction(t, 2 ** nbits)
                           for s in S[1:]):
                    assert r == count_above(Fraction(t, 2 ** nbits))
            r = _gauss_inversion.resolve(p, q, t + 1, nbits, 1)
            if not any(Fraction(t + 1, 2 ** nbits) < mp_fraction(s) < Fraction(t + 2, 2 ** nbits)
                       for s in S[1:]):
                assert r == count_above(Fraction(t + 2, 2 ** nbits))
    # random cells against the definition, started at later rows too
    rng = np.random.default_rng(7)
    Sf = [mp_fraction(s) for s in S]
    n_none = 0
    for _ in range(300):
        nbits = int(rng.integers(1, 40))
        big = int(rng.integers(0, 2 ** nbits))
        lo_u, hi_u = Fraction(big, 2 ** nbits), Fraction(big + 1, 2 ** nbits)
        start = 1 + int(rng.integers(0, 1 + sum(1 for s in Sf[1:] if s >= hi_u)))
        expected = None if any(lo_u < s < hi_u for s in Sf[start:]) else \
            sum(1 for s in Sf[1:] if s >= hi_u)
        assert _gauss_inversion.resolve(p, q, big, nbits, start) == expected
        n_none += expected is None
    assert 0 < n_none < 300
    with pytest.raises(RuntimeError, match="fail closed"):
        _gauss_inversion.resolve(p, q, 0, _gauss_inversion.MAX_RESOLVE_BITS + 1, 1)


def test_bad_parameters_and_corrupted_tables_are_refused():
    p, q = params(2.0)
    good = _gauss_inversion.inversion_table(p, q, 4, 8)
    out = np.empty(10, dtype=np.int64)
    gen = np.random.default_rng(0).bit_generator

    bad = corrupted_tables(good)
    for t in bad:
        with pytest.raises(ValueError, match="inconsistent inversion table"):
            _cgs.fill_discrete_gaussian_inversion(out, p, q, gen, t)
    with pytest.raises(ValueError, match="another variance"):
        _cgs.fill_discrete_gaussian_inversion(out, p + 1, q, gen, good)
    with pytest.raises(ValueError, match="p and q"):
        _cgs.fill_discrete_gaussian_inversion(out, 0, q, gen)
    with pytest.raises(ValueError, match="p and q"):
        _gauss_inversion.inversion_table(0, 1)
    with pytest.raises(ValueError, match="index_bits"):
        _gauss_inversion.inversion_table(p, q, 16)
    with pytest.raises(ValueError, match="low_bits"):
        _gauss_inversion.inversion_table(p, q, 12, 0)
    with pytest.raises(ValueError, match="too large"):
        _gauss_inversion.inversion_table(4000 ** 2, 1)
    assert _gauss_inversion.table_for(2000 ** 2, 1) is None      # beyond MAX_SIGMA
    with pytest.raises(ValueError):
        _gauss_inversion.inversion_table(p, q)["guide"][0] = 0     # cached: read-only


def test_an_error_on_the_exact_path_fails_closed():
    """A failing exact decision must not become a value: the process aborts. Broken
    resolver on a coarse table; and U = 0 exactly (all-zero words), which no finite number
    of bits decides: the resolver gives up after MAX_RESOLVE_BITS and the kernel aborts."""
    broken = textwrap.dedent("""
        import numpy as np
        from dptm import _cgs, _gauss_inversion
        def broken(*args):
            raise MemoryError("simulated")
        table = _gauss_inversion.inversion_table(4, 1, 1, 1)
        _gauss_inversion.resolve = broken
        out = np.empty(1000, dtype=np.int64)
        _cgs.fill_discrete_gaussian_inversion(out, 4, 1, np.random.default_rng(0).bit_generator, table)
        print("NOT ABORTED", out[:5])
    """)
    zeros = textwrap.dedent("""
        import numpy as np
        from randomgen import UserBitGenerator
        from dptm import _cgs
        gen = UserBitGenerator(lambda _: 0, 64)
        out = np.empty(3, dtype=np.int64)
        _cgs.fill_discrete_gaussian_inversion(out, 4, 1, gen)
        print("NOT ABORTED", out)
    """)
    for code, error in ((broken, "MemoryError"), (zeros, "fail closed")):
        res = run_child(code)
        assert res.returncode != 0 and "NOT ABORTED" not in res.stdout
        assert error in res.stderr


# ------------------------------------------------------------------------ the snapshot
def test_snapshot_draws_the_inversion_noise_in_lanes_per_block():
    """Kind 4 with an inversion table: one generator gives counts + the draws of
    fill_discrete_gaussian_inversion in row order; a list of generators gives each block
    its own stream, the same on any number of threads."""
    V, K = 23, 7
    p, q = params(7.07)
    table = _gauss_inversion.inversion_table(p, q)
    n_wk = np.random.default_rng(0).integers(0, 9, (V, K)).astype(np.int32)

    def snap(gens, n_threads=1, tab=table):
        s = np.empty((V, K))
        _cgs.noisy_snapshot(n_wk, 4, math.sqrt(p / q), p, q, 8, 6.0, 0.1, s,
                            np.empty((V, K), np.float32), np.empty(V), gens, n_threads, tab)
        return s
    noise = draw(p, q, V * K, 1).reshape(V, K)
    np.testing.assert_array_equal(snap(np.random.default_rng(1).bit_generator), n_wk + noise)
    blocks = 4
    rows = -(-V // blocks)
    gens = lambda: [np.random.default_rng(10 + j).bit_generator for j in range(blocks)]  # noqa: E731
    one, two = snap(gens(), 1), snap(gens(), 2)
    np.testing.assert_array_equal(one, two)
    for j in range(blocks):
        r = slice(j * rows, min(V, (j + 1) * rows))
        n = (r.stop - r.start) * K
        np.testing.assert_array_equal(one[r] - n_wk[r], draw(p, q, n, 10 + j).reshape(-1, K))
    with pytest.raises(ValueError, match="another variance"):
        snap(np.random.default_rng(1).bit_generator, 1,
             _gauss_inversion.inversion_table(p + 1, q))


def test_subsampled_lda_draws_its_snapshot_noise_by_inversion(monkeypatch):
    """SubsampledGibbsLDA's snapshots: the inversion table of the ledger event's sigma is
    the one used, and the drawn noise follows that event's discrete Gaussian."""
    used = []
    table_for = _gauss_inversion.table_for

    def spy(p, q):
        used.append((p, q))
        return table_for(p, q)
    monkeypatch.setattr(_gauss_inversion, "table_for", spy)
    V = 4000
    counts = np.arange(V) % 4
    m = SubsampledGibbsLDA(1, noise_multiplier=1.5, clip=1e6, max_iter=3, record_trace=True,
                           random_state=11).fit(counts[None, :])
    (leaf,) = [e for e, _, _, label in m.privacy_.events if label.startswith("noisy snapshot")]
    p, q, _, eff = discrete_gaussian_parameters(1.5 * math.sqrt(2))
    assert used and set(used) == {(p, q)} and leaf.sigma == m.noise_scale_ == eff
    noise = np.concatenate([s[:, 0] - counts for s in m.trace_["snapshots"]]).astype(np.int64)
    assert noise.size == 3 * V
    assert chi_square(noise, p, q) > ALARM
    assert discrete_gaussian_table(p, q) is not None
    # beyond the inversion table's range: the alias-table proposal
    assert "prob" in discrete_gaussian_table(2000 ** 2, 1)


@pytest.mark.parametrize("cls,kw", [
    (SubsampledGibbsLDA, dict(sample_rate=0.5, noise_multiplier=2.0)),
    (private_gibbs.NoisyGibbsLDA, dict(mechanism="discrete_gaussian", noise_multiplier=2.0))])
def test_gaussian_snapshot_fits_are_the_same_for_any_n_jobs(monkeypatch, cls, kw):
    """Several row blocks (one secret child stream each): the fit does not depend on the
    number of threads that draw the inversion noise."""
    monkeypatch.setattr(private_gibbs, "_SNAPSHOT_BLOCK_ENTRIES", 7 * 4)
    X = np.random.default_rng(3).poisson(1.0, (30, 25))
    fits = [cls(4, clip=20.0, max_iter=3, random_state=5, n_jobs=j, **kw).fit(X)
            for j in (1, 2)]
    np.testing.assert_array_equal(fits[0].snapshot_, fits[1].snapshot_)
    np.testing.assert_array_equal(fits[0].doc_topic_, fits[1].doc_topic_)
    assert isinstance(discrete_gaussian_table(
        *discrete_gaussian_parameters(2.0 * math.sqrt(2))[:2]), dict)


def test_tables_do_not_depend_on_the_applications_decimal_context():
    """An application that traps Inexact or rounds down in decimal.DefaultContext gets the
    same table (the bounds use a complete context of their own; review s8 G1)."""
    import decimal
    p, q = 50, 1                                       # sigma 7.07
    want = _gauss_inversion.inversion_table(p, q)
    default = decimal.DefaultContext
    saved = default.rounding, default.traps[decimal.Inexact]
    try:
        default.traps[decimal.Inexact] = True
        default.rounding = decimal.ROUND_FLOOR
        assert decimal.Context().rounding == decimal.ROUND_FLOOR     # the template took it
        _gauss_inversion._bounds.cache_clear()
        _gauss_inversion._inversion_table.cache_clear()
        got = _gauss_inversion.inversion_table(p, q)
    finally:
        default.rounding, default.traps[decimal.Inexact] = saved
        _gauss_inversion._bounds.cache_clear()
        _gauss_inversion._inversion_table.cache_clear()
    for key in ("guide", "hi", "lo"):
        np.testing.assert_array_equal(got[key], want[key])
