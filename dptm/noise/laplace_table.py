"""Inversion tables of the exact dyadic discrete Laplace (the Gibbs snapshots' default noise).

``dptm._cgs.fill_discrete_laplace_dyadic`` and ``noisy_snapshot`` (kind 5) draw the discrete
Laplace of parameter r = a / 2^21 (0 < a < 2^21),

    P(X = x) = (1 - r) / (1 + r) r^|x|      (x integer; scale -1 / log r),

by inverting the distribution of the magnitude M = |X| with one uniform U in [0, 1), read
bit by bit from the generator, and taking the sign from one more bit. For m >= 1 let

    T_m = P(M >= m) = 2 r^m / (1 + r)     (1 > T_1 > T_2 > ... > 0, exact rationals),

and M = #{m >= 1 : U < T_m}, so that P(M >= m) = P(U < T_m) = T_m exactly. With a fair
sign bit S independent of U and X = (-1)^S M (so -0 = 0):

    P(X = 0) = 1 - T_1 = (1 - r) / (1 + r),
    P(X = +-m) = (T_m - T_{m+1}) / 2 = (1 - r) / (1 + r) r^m      (m >= 1),

the pmf above. No T_m is a dyadic rational (T_m 2^k = 2^(k + 22) a^m / (2^(21 m) (2^21 + a))
and 2^21 + a, between 2^21 and 2^22, has an odd factor > 1 coprime to a), so U < T_m is
decided by finitely many bits of U with probability 1.

The kernel reads U's bits in three stages, each decision exact:

1. The first G = ``index_bits`` bits, g: U lies in the interval I_g = [g 2^-G, (g + 1) 2^-G).
   When no T_m falls inside I_g (most intervals), every U in I_g gives the same M, stored
   in ``guide[g]``: one table read. ``first[g]`` = #{m : T_m >= (g + 1) 2^-G} is a count
   that holds for the whole interval (those T_m are above every U in I_g).
2. Otherwise (``guide[g] = -(first[g] + 1)``) the next L = ``low_bits`` bits, v, from a fresh
   64-bit word: U lies in [(g 2^L + v) 2^-(G + L), (g 2^L + v + 1) 2^-(G + L)). With
   t_m = floor(T_m 2^(G + L)) = ``hi[m]`` 2^L + ``lo[m]``, the thresholds inside I_g are
   those with hi[m] = g, consecutive after first[g]: U < T_m for sure if v < lo[m]
   (U < t_m 2^-(G + L) <= T_m), U > T_m for sure if v > lo[m] (U >= (t_m + 1) 2^-(G + L) >
   T_m). The last row of the table is the first m with t_m = 0 (hi = lo = 0): for v > 0
   every later T_m is below U as well, so the scan stops there.
3. v = lo[m] (probability at most 2^-L per draw reaching stage 2; never in practice with
   L = 64): :func:`resolve` decides the remaining thresholds in exact integer arithmetic,
   reading more 64-bit words of U as needed. The kernel calls it with the GIL held and
   aborts the process if it raises (fail closed: an error must not become a decision).

All bits are used once (G + 1 per draw for the index and the sign, in lanes of a 64-bit
word; one more word in stage 2), so the draws are independent. Only the noise values decide
which bits are read; the counts never do. Tests build tables with small G and L so that
stages 2 and 3 run on most draws.
"""
import math
from functools import lru_cache

import numpy as np

INDEX_BITS = 12          # a 4096-entry guide (8 KB), 13-bit lanes: 4 draws per 64-bit word
LOW_BITS = 64
DENOMINATOR_BITS = 21    # r = a / 2^21
MAX_ROWS = 32767         # guide entries are int16
# Discrete Laplace noise of scale <= 64 (eps_L >= 1/32 at sensitivity 2) is drawn with the
# dyadic parameter r = a / 2^21 from this table (the scale drawn exceeds the one asked by a
# relative scale / 2^21 at most, below 4e-5); larger scales by CKS20's sampler of a rational
# scale (``dptm.noise.mechanisms.discrete_laplace_parameters``).
MAX_DYADIC_SCALE = 64.0


def dyadic_laplace_parameter(scale):
    """``(a, effective_scale)``: the discrete Laplace of parameter r = a / 2^21 sampled for
    a requested ``scale`` <= 64. r is rounded up from exp(-1/scale) (never less noise), so
    the scale actually drawn, -1 / log r, is >= ``scale``; ``effective_scale`` is that value
    lowered by 1e-12 relative (a safe margin over the rounding of log), which is what the
    accountant is told (epsilon = sensitivity / effective_scale >= the true -2 log r)."""
    den = 1 << DENOMINATOR_BITS
    a = max(1, math.ceil(math.exp(-1.0 / scale) * den))
    while a < den and -1.0 / math.log(a / den) * (1 - 1e-12) < scale:
        a += 1
    if a >= den:
        raise ValueError(f"scale={scale} is too large for the dyadic discrete Laplace")
    return a, -1.0 / math.log(a / den) * (1 - 1e-12)


def dyadic_table(a, index_bits=INDEX_BITS, low_bits=LOW_BITS):
    """The inversion table of the discrete Laplace of parameter r = a / 2^21.

    Parameters
    ----------
    a : int
        0 < a < 2^21.
    index_bits : int, default=12
        G, 1 <= G <= 15: the guide has 2^G entries and each draw takes G + 1 bits.
    low_bits : int, default=64
        L, 1 <= L <= 64: bits of U read in stage 2 (the module docstring). Values below 64
        only serve tests of stages 2 and 3.

    Returns
    -------
    dict with ``a``, ``index_bits``, ``low_bits`` and the read-only arrays ``guide``
    (int16, 2^G), ``hi`` (int32) and ``lo`` (uint64), row m for threshold T_m (row 0 unused,
    the last row the first m with floor(T_m 2^(G + L)) = 0): what
    ``dptm._cgs.fill_discrete_laplace_dyadic`` and ``noisy_snapshot`` take.
    """
    return dict(_dyadic_table(int(a), int(index_bits), int(low_bits)))


@lru_cache(maxsize=16)
def _dyadic_table(a, G, L):
    if not 0 < a < 1 << DENOMINATOR_BITS:
        raise ValueError(f"a must be in [1, 2^21), got {a}")
    if not 1 <= G <= 15:
        raise ValueError(f"index_bits must be in [1, 15], got {G}")
    if not 1 <= L <= 64:
        raise ValueError(f"low_bits must be in [1, 64], got {L}")
    # t_m = floor(T_m 2^(G + L)) = floor(2^(G + L + 22) a^m / (2^(21 m) (2^21 + a))), exact
    den0 = (1 << DENOMINATOR_BITS) + a
    hi, lo = [0], [0]                       # row 0 unused
    num, shift = 1 << (G + L + 22), 0       # num / 2^shift = 2^(G + L + 22) r^0
    while True:
        num *= a
        shift += DENOMINATOR_BITS
        # floor(floor(x / 2^shift) / den0) = floor(x / (2^shift den0))
        t = (num >> shift) // den0
        hi.append(t >> L)
        lo.append(t & ((1 << L) - 1))
        if t == 0:
            break
        if len(hi) > MAX_ROWS:
            raise ValueError(f"a={a} is too close to 2^21 for a table (scale above about 600)")
    hi_arr = np.array(hi, dtype=np.int32)
    guide = np.empty(1 << G, dtype=np.int16)
    # first[g] = #{m >= 1 : hi[m] > g}; the interval is decided iff no hi[m] == g
    h = hi_arr[1:]
    first = np.searchsorted(-h, -np.arange(1 << G), side="left")   # h is non-increasing
    inside = np.searchsorted(-h, -np.arange(1 << G), side="right") - first
    guide[:] = np.where(inside == 0, first, -(first + 1))
    out = {"a": a, "index_bits": G, "low_bits": L, "guide": guide, "hi": hi_arr,
           "lo": np.array(lo, dtype=np.uint64)}
    for key in ("guide", "hi", "lo"):
        out[key].setflags(write=False)
    return out


def threshold(a, m):
    """T_m = P(M >= m) = 2 r^m / (1 + r), r = a / 2^21, as (numerator, denominator)."""
    num = (2 * a ** m) << DENOMINATOR_BITS
    return num, ((1 << DENOMINATOR_BITS) + a) << (DENOMINATOR_BITS * m)


def resolve(a, big, nbits, m):
    """Stage 3: M for the uniform U whose first ``nbits`` bits are ``big``, given that
    U < T_j for every j < m: counts the thresholds T_m, T_m+1, ... above U, or None when
    ``nbits`` bits do not decide one of them (the caller appends 64 bits and asks again)."""
    while True:
        num, den = threshold(a, m)
        # U in [big, big + 1) / 2^nbits against num / den
        if (big + 1) * den <= num << nbits:
            m += 1                                  # U < T_m
        elif big * den >= num << nbits:
            return m - 1                            # U >= T_m (then U >= every later one)
        else:
            return None
