"""Review (session 6) additions to tests/test_laplace_table.py: the resolver at the
thresholds themselves, the kernel on every bit pattern of coarse tables, and independence
of consecutive draws (every bit used once)."""
from fractions import Fraction
import math

import numpy as np
import pytest
from scipy import stats

from dptm import _cgs, _laplace_table
from dptm.models.private_gibbs import dyadic_laplace_parameter

ALARM = 1e-6
DEN = 2 ** 21


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
