"""Inversion tables of the exact discrete Gaussian (SubsampledGibbsLDA's snapshot noise).

``dptm._cgs.fill_discrete_gaussian_inversion`` and ``noisy_snapshot`` (kind 4 with a table
of this module) draw the discrete Gaussian N_Z(0, sigma^2), sigma^2 = p / q rational,

    P(X = x) = f(x) / Z,    f(x) = exp(-x^2 / (2 sigma^2)),    Z = 1 + 2 sum_{j >= 1} f(j),

with the kernel of the dyadic discrete Laplace (``dptm.noise.laplace_table``): the magnitude
M = |X| by inverting its survival function with one uniform U in [0, 1), read bit by bit,
and the sign from one more bit. For m >= 1 let

    S_m = P(M >= m) = 2 F_m / Z,    F_m = sum_{j >= m} f(j)    (1 > S_1 > S_2 > ... > 0),

and M = #{m >= 1 : U < S_m}, so that P(M >= m) = P(U < S_m) = S_m exactly. With a fair
sign bit independent of U and X = (-1)^sign M (so -0 = 0):

    P(X = 0) = 1 - S_1 = 1 / Z,    P(X = +-m) = (S_m - S_{m+1}) / 2 = f(m) / Z    (m >= 1),

the pmf above, exactly. The stages are those of ``dptm.noise.laplace_table`` (same kernel, same
table layout, same proof), with t_m = floor(S_m 2^(G + L)) = ``hi[m]`` 2^L + ``lo[m]``:

1. G = ``index_bits`` bits of U index ``guide``: the interval g of the index bits holds no
   threshold (M decided, one table read), or ``guide[g] = -(first[g] + 1)``;
2. L = ``low_bits`` more bits v decide every threshold with hi[m] = g and lo[m] != v (U below
   S_m for sure if v < lo[m] since U < t_m 2^-(G+L) <= S_m; above it if v > lo[m] since
   U >= (t_m + 1) 2^-(G+L) > S_m); the last row is the first m with t_m = 0;
3. v = lo[m] (probability at most 2^-L per draw reaching stage 2, so about 2^-76 per draw
   with the defaults), and the far tail beyond the last row (reached only from that
   stage): :func:`resolve` decides S_m, S_{m+1}, ... one by one against guaranteed
   rational bounds, reading more 64-bit words of U and tightening the bounds until each is
   decided. The kernel calls it with the GIL held and aborts the process if it raises
   (fail closed).

The S_m are irrational in general, so the table's integers come from guaranteed bounds.
At precision P (bits), for every j < J (J the first j with j^2 q >= 2 p P) integers
fl_j <= 2^P f(j) <= fh_j are taken from ``decimal``'s correctly rounded exp with a certified
relative error (:func:`_exp_fixed`), and the rest is bounded by

    sum_{j >= J} f(j) <= f(J) sum_{i >= 0} exp(-J i / sigma^2) = f(J) / (1 - e^-x)
                      <= e^-P (1 + x) / x <= 2^-P (p + J q) / (J q),    x = J q / p,

(f(J + i) / f(J) = exp(-(2 J i + i^2) / (2 sigma^2)) <= e^(-x i); 1 - e^-x >= x / (1 + x);
J^2 q / (2 p) >= P and e > 2), whose ceiling is ``tail``. Then with the integer sums
Flo_m = sum_{m <= j < J} fl_j, Fhi_m = sum_{m <= j < J} fh_j + tail (Flo_m = 0, Fhi_m = tail
for m >= J, since F_m <= F_J) and Zlo = 2^P + 2 Flo_1, Zhi = 2^P + 2 Fhi_1:

    2 Flo_m / Zhi <= S_m <= 2 Fhi_m / Zlo.

The table takes t_m as the common floor of both bounds times 2^(G + L), raising P until
they agree (a threshold exactly on a multiple of 2^-(G+L) would never agree: the build
would fail, never give a wrong table). :func:`resolve` compares the interval of U's known
bits with these bounds at P = nbits + 64 or more; no decision is taken that the bounds do
not prove. (We do not prove the S_m irrational: were one dyadic, U's bits on it could
never be decided; after ``MAX_RESOLVE_BITS`` bits, probability below 2^-900 otherwise,
the resolver raises and the kernel aborts, failing closed.)

All bits are used once, so consecutive draws are independent; only the noise values decide
which bits are read, never the counts. Tests build tables with small G and L so that
stages 2 and 3 and the far tail run on most draws.
"""
from decimal import (MAX_EMAX, MIN_EMIN, ROUND_HALF_EVEN, Context, Decimal, DivisionByZero,
                     InvalidOperation, Overflow)
from fractions import Fraction
from functools import lru_cache
import math

import numpy as np

INDEX_BITS = 12          # as the dyadic Laplace: a 4096-entry guide, 4 draws per 64-bit word
LOW_BITS = 64
MAX_ROWS = 32767         # guide entries are int16
MAX_SIGMA = 1024.0       # above, the alias-table sampler (_gauss_table): this table's
                         # construction grows as sigma (about 17 sigma exps at 140 bits)
MAX_RESOLVE_BITS = 1024  # fail closed beyond (see the module docstring)


def table_for(p, q):
    """The default inversion table of the discrete Gaussian of variance p / q, or None
    when sigma = sqrt(p / q) exceeds ``MAX_SIGMA``."""
    return inversion_table(p, q) if p <= MAX_SIGMA ** 2 * q else None


def inversion_table(p, q, index_bits=INDEX_BITS, low_bits=LOW_BITS):
    """The inversion table of the discrete Gaussian N_Z(0, p / q).

    Parameters
    ----------
    p, q : int
        sigma^2 = p / q >= 0 (as from :func:`dptm.noise.mechanisms.discrete_gaussian_parameters`),
        p, q >= 1.
    index_bits : int, default=12
        G, 1 <= G <= 15: the guide has 2^G entries and each draw takes G + 1 bits.
    low_bits : int, default=64
        L, 1 <= L <= 64: bits of U read in stage 2. Values below 64 only serve tests of
        stages 2 and 3.

    Returns
    -------
    dict with ``p``, ``q``, ``index_bits``, ``low_bits`` and the read-only arrays ``guide``
    (int16, 2^G), ``hi`` (int32) and ``lo`` (uint64), row m for the threshold S_m (row 0
    unused, the last row the first m with floor(S_m 2^(G + L)) = 0): what
    ``dptm._cgs.fill_discrete_gaussian_inversion`` and ``noisy_snapshot`` take.

    Raises
    ------
    ValueError
        For parameters out of range, or a table beyond ``MAX_ROWS`` rows.
    """
    return dict(_inversion_table(int(p), int(q), int(index_bits), int(low_bits)))


def _exp_fixed(num, den, P):
    """Integers (lo, hi) with lo <= 2^P exp(-num / den) <= hi (num >= 0, den >= 1)."""
    if num == 0:
        return 1 << P, 1 << P
    if num >= P * den:                      # exp(-g) <= e^-P < 2^-P
        return 0, 1
    # g < P. decimal at prec digits: g = num / den rounded once (absolute error at most one
    # ulp of g, <= 10^(len(str(P)) - prec) <= P 10^(1 - prec), moving exp(-g) by a relative
    # e^ulp - 1 <= 2 P 10^(1 - prec)), exp correctly rounded (relative 0.5 10^(1 - prec)):
    # relative error below (2 P + 1) 10^(1 - prec). The context is complete (rounding and
    # traps explicit), so an application's decimal.DefaultContext cannot change it.
    prec = int(P * 0.30103) + len(str(P)) + 12
    ctx = Context(prec=prec, rounding=ROUND_HALF_EVEN, Emin=MIN_EMIN, Emax=MAX_EMAX,
                  traps=[InvalidOperation, DivisionByZero, Overflow], flags=[])
    g = ctx.divide(Decimal(num), Decimal(den))
    e = Fraction(ctx.exp(ctx.minus(g)))   # (unary minus would round to the thread context)
    rel = Fraction(2 * P + 1, 10 ** (prec - 1))
    lo = math.floor(e * (1 - rel) * (1 << P))
    hi = math.ceil(e * (1 + rel) * (1 << P))
    return max(lo, 0), hi


@lru_cache(maxsize=64)
def _bounds(p, q, P):
    """(Flo, Fhi, Zlo, Zhi) at precision P (module docstring): Flo[m], Fhi[m] for
    m < len(Flo) (index 0 unused), beyond that Flo = 0 and Fhi = Fhi[-1] (= tail)."""
    J = 1
    while J * J * q < 2 * p * P:
        J += 1
    fl, fh = [0] * J, [0] * J
    for j in range(1, J):
        fl[j], fh[j] = _exp_fixed(j * j * q, 2 * p, P)
    tail = -(-(p + J * q) // (J * q))        # ceil((p + J q) / (J q))
    Flo, Fhi = [0] * (J + 1), [0] * (J + 1)
    Fhi[J] = tail
    for j in range(J - 1, 0, -1):
        Flo[j] = Flo[j + 1] + fl[j]
        Fhi[j] = Fhi[j + 1] + fh[j]
    Zlo, Zhi = (1 << P) + 2 * Flo[1], (1 << P) + 2 * Fhi[1]
    return tuple(Flo), tuple(Fhi), Zlo, Zhi


def survival_bounds(p, q, m, P=140):
    """Rational bounds ``(lo, hi)`` of S_m = P(|X| >= m) (m >= 1) at precision P bits."""
    Flo, Fhi, Zlo, Zhi = _bounds(int(p), int(q), int(P))
    fl, fh = (Flo[m], Fhi[m]) if m < len(Flo) else (0, Fhi[-1])
    return Fraction(2 * fl, Zhi), Fraction(2 * fh, Zlo)


def _check_pq(p, q):
    if p < 1 or q < 1:
        raise ValueError(f"p and q must be positive integers, got p={p}, q={q}")


@lru_cache(maxsize=16)
def _inversion_table(p, q, G, L):
    _check_pq(p, q)
    if not 1 <= G <= 15:
        raise ValueError(f"index_bits must be in [1, 15], got {G}")
    if not 1 <= L <= 64:
        raise ValueError(f"low_bits must be in [1, 64], got {L}")
    N = G + L
    # about sigma sqrt(2 N ln 2) rows (S_m < 2^-N): refuse hopeless sizes before building
    if p > q * (MAX_ROWS * 1.2) ** 2 / (2 * N * math.log(2)):
        raise ValueError(f"sigma^2 = {p}/{q} is too large for an inversion table")
    P = N + 64
    while True:
        Flo, Fhi, Zlo, Zhi = _bounds(p, q, P)
        ts, ok = [0], True                           # row 0 unused
        m = 1
        while True:
            fl, fh = (Flo[m], Fhi[m]) if m < len(Flo) else (0, Fhi[-1])
            t_lo, t_hi = (2 * fl << N) // Zhi, (2 * fh << N) // Zlo
            if t_lo != t_hi:
                ok = False                           # the bounds straddle a grid point
                break
            ts.append(t_lo)
            if t_lo == 0:
                break
            if len(ts) > MAX_ROWS:
                raise ValueError(f"sigma^2 = {p}/{q} is too large for an inversion table")
            m += 1
        if ok:
            break
        P += 64
        if P > N + 64 * 16:                          # pragma: no cover - probability ~2^-900
            raise ValueError("the bounds of a threshold do not settle its table entry")
    hi_arr = np.array([t >> L for t in ts], dtype=np.int32)
    lo_arr = np.array([t & ((1 << L) - 1) for t in ts], dtype=np.uint64)
    guide = np.empty(1 << G, dtype=np.int16)
    # first[g] = #{m >= 1 : hi[m] > g}; the interval is decided iff no hi[m] == g
    h = hi_arr[1:]
    first = np.searchsorted(-h, -np.arange(1 << G), side="left")   # h is non-increasing
    inside = np.searchsorted(-h, -np.arange(1 << G), side="right") - first
    guide[:] = np.where(inside == 0, first, -(first + 1))
    out = {"p": p, "q": q, "index_bits": G, "low_bits": L, "guide": guide, "hi": hi_arr,
           "lo": lo_arr}
    for key in ("guide", "hi", "lo"):
        out[key].setflags(write=False)
    return out


def resolve(p, q, big, nbits, m):
    """Stage 3: M for the uniform U whose first ``nbits`` bits are ``big``, given that
    U < S_j for every j < m: counts the thresholds S_m, S_m+1, ... above U, or None when
    ``nbits`` bits do not decide one of them against its bounds (the caller appends 64
    bits and asks again; the bounds tighten with ``nbits``)."""
    if nbits > MAX_RESOLVE_BITS:
        raise RuntimeError("resolve: no decision after MAX_RESOLVE_BITS bits (fail closed)")
    P = 64 * (-(-(nbits + 64) // 64)) + 64
    Flo, Fhi, Zlo, Zhi = _bounds(p, q, P)
    n = len(Flo)
    while True:
        fl, fh = (Flo[m], Fhi[m]) if m < n else (0, Fhi[-1])
        # U in [big, big + 1) / 2^nbits against 2 fl / Zhi <= S_m <= 2 fh / Zlo
        if (big + 1) * Zhi <= 2 * fl << nbits:
            m += 1                                    # U < S_m
        elif big * Zlo >= 2 * fh << nbits:
            return m - 1                              # U >= S_m (then U >= every later one)
        else:
            return None
