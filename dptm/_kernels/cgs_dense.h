#ifndef DPTM_CGS_DENSE_H
#define DPTM_CGS_DENSE_H

#include <Python.h>   /* Py_ssize_t; the generated module includes it first */
#include <stdint.h>

#include <Python.h>   /* Py_ssize_t; the generated module includes it first */
#include <stdint.h>
#if defined(__GNUC__) && !defined(__clang__)
#define DPTM_CGS_FP __attribute__((optimize("fp-contract=off")))
#define DPTM_CGS_SCALAR __attribute__((optimize("fp-contract=off", "no-tree-vectorize", "no-tree-slp-vectorize")))
#else
#define DPTM_CGS_FP
#define DPTM_CGS_SCALAR
#endif
#define DPTM_CGS_NB 8
/* An AVX2 clone of the block prefix, chosen when the module loads (GCC target_clones,
   a glibc ifunc): 4 doubles an instruction instead of the baseline's 2, the same
   operations in the same order (no contraction), so the same bits on every CPU. Keep
   fp-contract=off on it and no "fma" target in the list: with both, the clone's sums
   differ in the last bits. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
#define DPTM_CGS_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define DPTM_CGS_CLONES
#endif
/* Bring a topic-word row into cache ahead of its token (rows are read in word order,
   not memory order, and n_wk outgrows L2 at large V K). */
static inline void dptm_cgs_prefetch_row(const int32_t *row, Py_ssize_t K) {
    Py_ssize_t t;
    for (t = 0; t < K; t += 16) __builtin_prefetch(row + t);
    __builtin_prefetch(row + K - 1);                 /* rows need not start a line */
}
/* P[j NB + b] = x[b] + x[b + NB] + ... + x[b + j NB] (left to right) with
   x[t] = (wrow[t] + beta) * c[t], for j < K / NB; row K / NB holds the block totals
   (the partial last row added). P has K + NB entries. */
static DPTM_CGS_CLONES DPTM_CGS_FP void dptm_cgs_block_prefix(const int32_t *__restrict wrow,
        const double *__restrict c, double *__restrict P, Py_ssize_t K, double beta) {
    double acc[DPTM_CGS_NB];
    Py_ssize_t j, b, rows = K / DPTM_CGS_NB, rem = K % DPTM_CGS_NB;
    for (b = 0; b < DPTM_CGS_NB; b++) acc[b] = 0.0;
    for (j = 0; j < rows; j++) {
        for (b = 0; b < DPTM_CGS_NB; b++) {
            acc[b] += ((double) wrow[j * DPTM_CGS_NB + b] + beta) * c[j * DPTM_CGS_NB + b];
            P[j * DPTM_CGS_NB + b] = acc[b];
        }
    }
    for (b = 0; b < rem; b++)
        acc[b] += ((double) wrow[rows * DPTM_CGS_NB + b] + beta) * c[rows * DPTM_CGS_NB + b];
    for (b = 0; b < DPTM_CGS_NB; b++) P[rows * DPTM_CGS_NB + b] = acc[b];
}
/* The topic for u = uniform * total, given P from dptm_cgs_block_prefix (K >= NB). */
static inline DPTM_CGS_SCALAR Py_ssize_t dptm_cgs_block_search(const double *__restrict P,
        Py_ssize_t K, double uniform) {
    Py_ssize_t j, b, nb = 0, n = 0, rows = K / DPTM_CGS_NB, last;
    const double *__restrict s = P + rows * DPTM_CGS_NB;
    double cum[DPTM_CGS_NB], u, r;
    /* cumulative block sums as two groups of 4: the second group's prefix is offset
       by the first group's total, so cum is non-decreasing and its serial chain has 5
       additions instead of 7 */
    cum[0] = s[0];
    cum[1] = cum[0] + s[1];
    cum[2] = cum[1] + s[2];
    cum[3] = cum[2] + s[3];
    cum[4] = s[4];
    cum[5] = cum[4] + s[5];
    cum[6] = cum[5] + s[6];
    cum[7] = cum[6] + s[7];
    cum[4] = cum[3] + cum[4];
    cum[5] = cum[3] + cum[5];
    cum[6] = cum[3] + cum[6];
    cum[7] = cum[3] + cum[7];
    u = uniform * cum[7];
    for (b = 0; b < DPTM_CGS_NB; b++) nb += cum[b] <= u;
    nb = nb < DPTM_CGS_NB - 1 ? nb : DPTM_CGS_NB - 1;
    r = nb > 0 ? u - cum[nb - 1] : u;
    /* when block nb has no topic in row `rows`, P repeats its total there; the clamp
       to the block's last topic absorbs it */
    for (j = 0; j <= rows; j++) n += P[j * DPTM_CGS_NB + nb] <= r;
    last = (K - 1 - nb) / DPTM_CGS_NB;
    n = n < last ? n : last;
    return nb + n * DPTM_CGS_NB;
}

#endif  /* DPTM_CGS_DENSE_H */
