"""Arbitrary-precision resolution of the exact samplers' rare undecided comparisons.

The discrete Laplace and Gaussian samplers of ``dptm._cgs`` decide each Bernoulli(exp(-g))
(g = num / den, a ratio of integers) by comparing a 64-bit uniform with a double-precision
value of exp(-g). When the uniform falls within the certified error margin of that value
(probability about 2^-35 per comparison) the kernel calls :func:`uniform_below_exp`
with the uniform's bits, extending them 64 at a time until this function decides: the
comparison "U < exp(-g)" of the real uniform U is then answered exactly, so the sampler's
output distribution is exactly the stated one, whatever the precision of the C library.
"""
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal
from fractions import Fraction

# Above this g the Decimal evaluation is skipped: exp(-g) <= 2^-floor(g) decides.
_DECIMAL_MAX_G = 2 ** 20


def uniform_below_exp(u, nbits, num, den):
    """Decide whether U < exp(-num / den) for U uniform on [u, u + 1) / 2^nbits.

    Parameters
    ----------
    u, nbits : int
        The first ``nbits`` bits of the uniform U, as an integer.
    num, den : int
        g = num / den >= 0.

    Returns
    -------
    True if the whole interval lies below exp(-g), False if it lies at or above it,
    None if more bits of U are needed.
    """
    if num == 0:
        return True                    # exp(0) = 1 > U
    lo, hi = Fraction(u, 1 << nbits), Fraction(u + 1, 1 << nbits)
    whole = num // den
    # exp(-g) <= exp(-whole) <= 2^-whole, exactly
    if whole >= 1 and (lo > 0 if whole >= nbits else lo >= Fraction(1, 1 << whole)):
        return False
    if whole > _DECIMAL_MAX_G:
        return None
    # Relative error of p below 10^(8 - prec): g is rounded once (relative 0.5e(1-prec),
    # g <= 2^20 makes |delta g| < 1e(7-prec), exp(|delta g|) - 1 < 2e(7-prec)) and exp is
    # correctly rounded by decimal (0.5e(1-prec)); the interval [lo, hi) is 2^-nbits wide,
    # so this precision resolves all but a 1e-22 fraction of it.
    prec = int(nbits * 0.30103) + 30
    ctx = Context(prec=prec, Emin=MIN_EMIN, Emax=MAX_EMAX)
    g = ctx.divide(Decimal(num), Decimal(den))
    p = Fraction(ctx.exp(ctx.minus(g)))   # (unary minus would round to the thread context)
    rel = Fraction(1, 10 ** (prec - 8))
    if hi <= p * (1 - rel):
        return True
    if lo >= p * (1 + rel):
        return False
    return None
