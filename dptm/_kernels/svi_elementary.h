#ifndef DPTM_SVI_ELEMENTARY_H
#define DPTM_SVI_ELEMENTARY_H
/* log and exp from IEEE +, -, *, / and integer bit operations only, for the E-step's
 * vectorised digamma (svi_e_step.h): libm's scalar calls were half of its time. Every
 * operation is correctly rounded, so every SIMD clone gives bitwise the same result; both
 * are within 2 ulp of libm (tests/test_svi_kernel.py). Each select picks between
 * values computed on both paths and every comparison is unconditional: a floating-point
 * operation or comparison inside a branch blocks GCC's if-conversion (it may trap). */
#include <math.h>
#include <stdint.h>
#include <string.h>

/* the options of svi_e_step.h's clones: GCC does not inline a function with other options */
#if defined(__GNUC__) && !defined(__clang__)
#define DPTM_SVI_MATH static inline __attribute__((optimize("fp-contract=off", "no-trapping-math")))
#else
#define DPTM_SVI_MATH static inline
#endif

DPTM_SVI_MATH uint64_t dptm_bits(double x) { uint64_t u; memcpy(&u, &x, 8); return u; }
DPTM_SVI_MATH double dptm_from_bits(uint64_t u) { double x; memcpy(&x, &u, 8); return x; }

/* ln 2 = LN2_HI + LN2_LO with LN2_HI's low 32 bits zero: n * LN2_HI is exact for |n| < 2^11 */
#define DPTM_LN2_HI 6.93147180369123816490e-01
#define DPTM_LN2_LO 1.90821492927058770002e-10

/* log(x) for x >= 1 (digamma's argument after its recurrence; inf gives inf): x = 2^e m,
 * m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, by
 * its series through s^23 (the next term is below 2^-60 of the sum). */
DPTM_SVI_MATH double dptm_log_ge1(double x) {
    const uint64_t u = dptm_bits(x);
    /* the biased exponent as a double without an int64 -> double conversion (none in AVX2) */
    double e = dptm_from_bits((u >> 52) | 0x4330000000000000ULL) - 4503599627371519.0;
    double m = dptm_from_bits((u & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);
    const int big = m > 1.4142135623730951, inf = x == INFINITY;
    const double m_half = 0.5 * m, e_next = e + 1.0;
    m = big ? m_half : m;
    e = big ? e_next : e;
    const double f = m - 1.0, s = f / (2.0 + f), z = s * s;
    double p = 1.0 / 23.0;
    p = 1.0 / 21.0 + z * p; p = 1.0 / 19.0 + z * p; p = 1.0 / 17.0 + z * p;
    p = 1.0 / 15.0 + z * p; p = 1.0 / 13.0 + z * p; p = 1.0 / 11.0 + z * p;
    p = 1.0 / 9.0 + z * p;  p = 1.0 / 7.0 + z * p;  p = 1.0 / 5.0 + z * p;
    p = 1.0 / 3.0 + z * p;
    const double res = e * DPTM_LN2_HI + ((2.0 * s + (2.0 * s) * (z * p)) + e * DPTM_LN2_LO);
    return inf ? x : res;
}

/* exp(x): x = n ln2 + r, |r| <= ln2 / 2, exp r by its Taylor series through r^13 (the next
 * term is below 2^-57 of the sum), times 2^n as two powers of two so that subnormal
 * results need no out-of-range exponent. NaN gives NaN, -inf 0, +inf inf. */
DPTM_SVI_MATH double dptm_exp(double x) {
    const double shift = 6755399441055744.0;       /* 1.5 * 2^52: adding it rounds to an integer */
    const int lo = x < -746.0, hi = x > 710.0, nan = x != x;
    const double xc = lo ? -746.0 : (hi ? 710.0 : x);
    const double t = xc * 1.4426950408889634 + shift;
    const double n = t - shift;
    const double r = (xc - n * DPTM_LN2_HI) - n * DPTM_LN2_LO;
    double p = 1.0 / 6227020800.0;
    p = 1.0 / 479001600.0 + r * p; p = 1.0 / 39916800.0 + r * p; p = 1.0 / 3628800.0 + r * p;
    p = 1.0 / 362880.0 + r * p;    p = 1.0 / 40320.0 + r * p;    p = 1.0 / 5040.0 + r * p;
    p = 1.0 / 720.0 + r * p;       p = 1.0 / 120.0 + r * p;      p = 1.0 / 24.0 + r * p;
    p = 1.0 / 6.0 + r * p;         p = 0.5 + r * p;              p = 1.0 + r * p;
    p = 1.0 + r * p;
    const int64_t ni = (int64_t) (dptm_bits(t) - dptm_bits(shift));   /* n, |n| <= 1077 */
    const int64_t n1 = ni >> 1, n2 = ni - n1;
    const double res = (p * dptm_from_bits((uint64_t) (n1 + 1023) << 52))
                       * dptm_from_bits((uint64_t) (n2 + 1023) << 52);
    return nan ? x : (lo ? 0.0 : (hi ? INFINITY : res));
}

#endif  /* DPTM_SVI_ELEMENTARY_H */
