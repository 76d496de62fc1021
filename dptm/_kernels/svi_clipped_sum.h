#ifndef DPTM_SVI_CLIPPED_SUM_H
#define DPTM_SVI_CLIPPED_SUM_H

#include <Python.h>   /* Py_ssize_t; the generated module includes it first */
#include <stdint.h>

/* The two reductions of the clipped statistic, each in the exact order of the numpy
 * expression it replaces, so that the kernel's statistic is bitwise the numpy one (the
 * lattice floor of an entry could otherwise move by one step). No FMA: the module is
 * built for baseline x86-64, and fp-contract is off where GCC could contract. */
/* The exact check refuses NaN and inf by comparisons that -ffast-math / -ffinite-math-only
 * would fold away (a NaN entry would then cast to INT64_MIN and pass): refuse such a build. */
#if defined(__FAST_MATH__) || (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__)
#error "dptm's kernels must not be built with -ffast-math or -ffinite-math-only"
#endif

#if defined(__GNUC__) && !defined(__clang__)
#define DPTM_NO_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define DPTM_NO_CONTRACT
#endif

/* np.einsum("k,k->", a, b): numpy's baseline (SSE2, two lanes) loop - lane l adds the
 * products of elements l, l + 2, ..., eight elements per step in the order 6, 4, 2, 0
 * (lane 0), then a zero-filled tail two at a time, then lane 0 + lane 1. */
static DPTM_NO_CONTRACT double dptm_einsum_dot(const double *__restrict a,
        const double *__restrict b, Py_ssize_t n) {
    double acc0 = 0.0, acc1 = 0.0, t0, t1;
    Py_ssize_t k = 0;
    for (; n - k >= 8; k += 8) {
        t0 = a[k + 6] * b[k + 6] + acc0;
        t1 = a[k + 7] * b[k + 7] + acc1;
        t0 = a[k + 4] * b[k + 4] + t0;
        t1 = a[k + 5] * b[k + 5] + t1;
        t0 = a[k + 2] * b[k + 2] + t0;
        t1 = a[k + 3] * b[k + 3] + t1;
        acc0 = a[k] * b[k] + t0;
        acc1 = a[k + 1] * b[k + 1] + t1;
    }
    for (; k < n; k += 2) {
        acc0 = a[k] * b[k] + acc0;
        if (k + 1 < n) acc1 = a[k + 1] * b[k + 1] + acc1;
    }
    return acc0 + acc1;
}

/* np.add.reduce of a contiguous row (numpy's pairwise summation): below 8 elements in
 * order, up to 128 with eight interleaved partial sums, above that halves (a multiple
 * of 8 first). */
static DPTM_NO_CONTRACT double dptm_pairwise_sum(const double *a, Py_ssize_t n) {
    Py_ssize_t i, j;
    if (n < 8) {
        double res = 0.0;
        for (i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8], res;
        for (j = 0; j < 8; j++) r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (j = 0; j < 8; j++) r[j] += a[i + j];
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    i = n / 2;
    i -= i % 8;
    return dptm_pairwise_sum(a, i) + dptm_pairwise_sum(a + i, n - i);
}

/* c[k] = (et[rows[p]] * eb[words[p]])[k] * wt[p] (or c += that), K entries: pair p's
 * contribution, as numpy's et[rows] * eb_t[indices] * weight[:, None]. */
static DPTM_NO_CONTRACT void dptm_pair_contribution(Py_ssize_t p, const int64_t *rows,
        const int32_t *words, const double *wt, const double *et, const double *eb,
        Py_ssize_t K, double *__restrict c, int add) {
    const double *a = et + rows[p] * K, *b = eb + (Py_ssize_t) words[p] * K;
    const double w = wt[p];
    Py_ssize_t k;
    if (add) for (k = 0; k < K; k++) c[k] += (a[k] * b[k]) * w;
    else for (k = 0; k < K; k++) c[k] = (a[k] * b[k]) * w;
}

/* out = the pairwise sum (dptm_pairwise_sum's order) of the contributions of the pairs
 * slot[0 .. n), per topic: numpy's add-reduce along the rows of a strided column.
 * ``scratch`` holds 8 K + K per level of halving (K * (8 + 64) is enough for any n). */
static DPTM_NO_CONTRACT void dptm_pairwise_contributions(const int64_t *slot, Py_ssize_t n,
        const int64_t *rows, const int32_t *words, const double *wt, const double *et,
        const double *eb, Py_ssize_t K, double *__restrict out, double *scratch) {
    Py_ssize_t i, j, k;
    if (n < 8) {
        for (k = 0; k < K; k++) out[k] = -0.0;
        for (i = 0; i < n; i++) dptm_pair_contribution(slot[i], rows, words, wt, et, eb, K, out, 1);
        return;
    }
    if (n <= 128) {
        for (j = 0; j < 8; j++)
            dptm_pair_contribution(slot[j], rows, words, wt, et, eb, K, scratch + j * K, 0);
        for (i = 8; i < n - (n % 8); i += 8)
            for (j = 0; j < 8; j++)
                dptm_pair_contribution(slot[i + j], rows, words, wt, et, eb, K,
                                       scratch + j * K, 1);
        for (k = 0; k < K; k++) {
            const double *r = scratch + k;
            out[k] = ((r[0] + r[K]) + (r[2 * K] + r[3 * K]))
                     + ((r[4 * K] + r[5 * K]) + (r[6 * K] + r[7 * K]));
        }
        for (; i < n; i++) dptm_pair_contribution(slot[i], rows, words, wt, et, eb, K, out, 1);
        return;
    }
    i = n / 2;
    i -= i % 8;
    dptm_pairwise_contributions(slot, i, rows, words, wt, et, eb, K, out, scratch + K);
    dptm_pairwise_contributions(slot + i, n - i, rows, words, wt, et, eb, K, scratch,
                                scratch + K);
    for (k = 0; k < K; k++) out[k] = out[k] + scratch[k];
}

/* v = one group's summed contribution, as np.add.reduceat over its pairs: the first
 * pair's, plus the pairwise sum of the others. */
static DPTM_NO_CONTRACT void dptm_group_sum(const int64_t *slot, Py_ssize_t n,
        const int64_t *rows, const int32_t *words, const double *wt, const double *et,
        const double *eb, Py_ssize_t K, double *__restrict v, double *scratch) {
    Py_ssize_t k;
    dptm_pair_contribution(slot[0], rows, words, wt, et, eb, K, v, 0);
    if (n < 2) return;
    dptm_pairwise_contributions(slot + 1, n - 1, rows, words, wt, et, eb, K, scratch,
                                scratch + K);
    for (k = 0; k < K; k++) v[k] = v[k] + scratch[k];
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__)
#define DPTM_CLIP_CLONES __attribute__((target_clones("avx512f", "avx2", "default"), optimize("fp-contract=off")))
#else
#define DPTM_CLIP_CLONES DPTM_NO_CONTRACT
#endif

/* The largest of peak[0] and the K entries of ``row`` (compared by >, as the serial scan
 * does: a NaN start stays NaN), and nan[0] set if an entry is NaN. Eight running maxima:
 * the maximum of non-negative entries does not depend on the order. */
static DPTM_CLIP_CLONES void dptm_row_peak(const double *__restrict row, Py_ssize_t K,
        double *peak, int *nan) {
    double m[8];
    int bad = 0;
    Py_ssize_t k = 0, t;
    for (t = 0; t < 8; t++) m[t] = peak[0];
    for (; k + 8 <= K; k += 8)
        for (t = 0; t < 8; t++) {
            const double x = row[k + t];
            bad |= x != x;
            m[t] = x > m[t] ? x : m[t];
        }
    for (; k < K; k++) {
        bad |= row[k] != row[k];
        if (row[k] > m[0]) m[0] = row[k];
    }
    for (t = 0; t < 8; t++)
        if (m[t] > peak[0]) peak[0] = m[t];
    if (bad) nan[0] = 1;
}

/* sq[k] = (row[k] / pdiv)^2, and row[k] = row[k] / pdiv if ``store``: a unit's entries
 * divided by its peak (a division, as numpy's; vectorised, each entry the same). */
static DPTM_CLIP_CLONES void dptm_divided_squares(double *__restrict row,
        double *__restrict sq, Py_ssize_t K, double pdiv, int store) {
    Py_ssize_t k;
    if (store) {
        for (k = 0; k < K; k++) {
            const double x = row[k] / pdiv;
            sq[k] = x * x;
            row[k] = x;
        }
    } else {
        for (k = 0; k < K; k++) {
            const double x = row[k] / pdiv;
            sq[k] = x * x;
        }
    }
}

/* 1.5 * 2^52: (x + it) - it is x rounded to an integer for |x| < 2^51 */
#define DPTM_ROUND_SHIFT 6755399441055744.0

/* lat[k] = floor((row[k] * scale) * inv_g) for |x| < 2^51 (x the argument), exactly; a
 * larger, infinite or NaN x gives a value of magnitude >= 2^51 - 1 or NaN, which the
 * exact check refuses as it refuses the true floor (its bound is below 2^31). */
static DPTM_CLIP_CLONES void dptm_lattice_row(const double *row,
        double *lat, Py_ssize_t K, double scale, double inv_g) {
    Py_ssize_t k;
    for (k = 0; k < K; k++) {
        const double x = (row[k] * scale) * inv_g;
        const double r = (x + DPTM_ROUND_SHIFT) - DPTM_ROUND_SHIFT;
        lat[k] = r > x ? r - 1.0 : r;
    }
}

/* Fetches ``n`` int64 (a word's row of the output) into the cache ahead of its adds. */
static inline void dptm_prefetch_row(const int64_t *p, Py_ssize_t n) {
    Py_ssize_t i;
    for (i = 0; i < n; i += 8) __builtin_prefetch(p + i, 1, 3);
}

#endif  /* DPTM_SVI_CLIPPED_SUM_H */
