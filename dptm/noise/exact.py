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


def uniform_below_exp(u, nbits, num, den, scale=1):
    """Decide whether scale * U < exp(-num / den) for U uniform on [u, u + 1) / 2^nbits.

    Parameters
    ----------
    u, nbits : int
        The first ``nbits`` bits of the uniform U, as an integer.
    num, den : int
        g = num / den >= 0.
    scale : int or Fraction, default=1
        A positive rational factor on U (the table sampler's acceptance test is
        U < exp(-g) / scale).

    Returns
    -------
    True if the whole interval lies below exp(-g), False if it lies at or above it,
    None if more bits of U are needed.
    """
    scale = Fraction(scale)
    lo, hi = Fraction(u, 1 << nbits) * scale, Fraction(u + 1, 1 << nbits) * scale
    if num == 0:
        return True if hi <= 1 else (False if lo >= 1 else None)    # exp(0) = 1
    whole = num // den
    # exp(-g) <= exp(-whole) <= 2^-whole, exactly; lo = a/b > 2^(len(a) - 1 - len(b))
    if whole >= 1 and lo > 0 and (
            whole >= lo.denominator.bit_length() - lo.numerator.bit_length() + 1
            or lo >= Fraction(1, 1 << whole)):
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


def exp_neg_bounds(num, den):
    """Rational bounds ``(lo, hi)`` with lo <= exp(-num / den) <= hi (num >= 0, den >= 1,
    num / den < 10^6), within a relative 1e-30 of it, from ``decimal``'s correctly rounded
    exp (for building sampler tables)."""
    if num == 0:
        return Fraction(1), Fraction(1)
    if num // den >= 10 ** 6:
        raise ValueError("exp_neg_bounds: num / den must be below 10^6")
    ctx = Context(prec=40, Emin=MIN_EMIN, Emax=MAX_EMAX)
    # g is rounded once (relative 0.5e-39, so absolute below 1e-33 for g < 10^6) and exp
    # is correctly rounded (relative 0.5e-39): the true value is within p * (1 +- 1e-30)
    g = ctx.divide(Decimal(num), Decimal(den))
    p = Fraction(ctx.exp(ctx.minus(g)))
    rel = Fraction(1, 10 ** 30)
    return p * (1 - rel), p * (1 + rel)
