#ifndef DPTM_SVI_E_STEP_H
#define DPTM_SVI_E_STEP_H

#include <Python.h>   /* Py_ssize_t; the generated module includes it first */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "svi_elementary.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__)
#define DPTM_SVI_CLONES __attribute__((target_clones("avx512f", "avx2", "default"), optimize("fp-contract=off", "no-trapping-math")))
#elif defined(__GNUC__) && !defined(__clang__)
#define DPTM_SVI_CLONES __attribute__((optimize("fp-contract=off", "no-trapping-math")))
#else
#define DPTM_SVI_CLONES   /* setup.py builds with -ffp-contract=off where the compiler has it */
#endif
/* out[o .. o + B) = init + sum_i coef * row[0 .. B), i ascending, for every block of B
 * outputs that fits below O, summed in registers (each output's own order kept): ``coef``
 * and ``row`` are expressions in the inner index i. The normalisers block over words, the
 * gradient over topics. */
#define DPTM_REGISTER_BLOCK(B, o, O, i, I, coef, row, init, out) \
    for (; o + (B) <= O; o += (B)) { \
        double a_[B]; Py_ssize_t t_; \
        for (t_ = 0; t_ < (B); t_++) a_[t_] = init; \
        for (i = 0; i < I; i++) { \
            const double c_ = (coef); \
            const double *__restrict r_ = (row); \
            for (t_ = 0; t_ < (B); t_++) a_[t_] += c_ * r_[t_]; \
        } \
        for (t_ = 0; t_ < (B); t_++) out[o + t_] = a_[t_]; \
    }
#define DPTM_NORM_PHI_BLOCK(B) DPTM_REGISTER_BLOCK(B, j, n, k, K, et[k], bdt + k * n + j, init, pj)

/* pj[j] = init + sum_k et[k] * bdt[k * n + j]   (k ascending), j < n; ``n``, the row
 * stride of bdt, a multiple of 8 (rows padded): every entry is in a block whose sums run
 * side by side, since each sum over k is a chain of K dependent adds. */
static DPTM_SVI_CLONES void dptm_svi_norm_phi(const double *__restrict bdt,
        const double *__restrict et, double *__restrict pj, Py_ssize_t K,
        Py_ssize_t n, double init) {
    Py_ssize_t j = 0, k;
    DPTM_NORM_PHI_BLOCK(64)
    DPTM_NORM_PHI_BLOCK(32)
    DPTM_NORM_PHI_BLOCK(24)
    DPTM_NORM_PHI_BLOCK(16)
    DPTM_NORM_PHI_BLOCK(8)
    for (; j < n; j++) {      /* never with a padded n: a caller's unpadded n stays correct */
        double a = init;
        for (k = 0; k < K; k++) a += et[k] * bdt[k * n + j];
        pj[j] = a;
    }
}
/* with K above 32 the gradient's running sums would otherwise go through memory at every j */
#define DPTM_GRADIENT_BLOCK(B) DPTM_REGISTER_BLOCK(B, k, K, j, nnz, r[j], bd + j * K + k, 0.0, acc)

/* acc[k] = sum_j r[j] * bd[j * K + k]   (j ascending) */
static DPTM_SVI_CLONES void dptm_svi_gradient(const double *__restrict bd,
        const double *__restrict r, double *__restrict acc, Py_ssize_t K, Py_ssize_t nnz) {
    Py_ssize_t j, k = 0, k0;
    DPTM_GRADIENT_BLOCK(32)
    k0 = k;
    for (k = k0; k < K; k++) acc[k] = 0.0;
    for (j = 0; j < nnz; j++) {
        const double rj = r[j];
        const double *__restrict row = bd + j * K;
        for (k = k0; k < K; k++) acc[k] += rj * row[k];
    }
}

/* A document's rows of B (V x K, word-major) gathered twice: word-major,
 * bd[j * K + k] = B[ids[j], k], and topic-major, bdt[k * n + j], its rows padded with zeros
 * from nnz to n. The transpose runs over tiles of 8 words so that its stores are runs. */
static void dptm_svi_gather(const double *__restrict B, const int32_t *__restrict ids,
        Py_ssize_t nnz, Py_ssize_t K, Py_ssize_t n, double *__restrict bd,
        double *__restrict bdt) {
    Py_ssize_t j, j0, k, t;
    for (j = 0; j < nnz; j++) memcpy(bd + j * K, B + (Py_ssize_t) ids[j] * K, K * sizeof(double));
    for (j0 = 0; j0 < n; j0 += 8) {
        const Py_ssize_t m = nnz - j0 < 8 ? nnz - j0 : 8, end = n - j0 < 8 ? n - j0 : 8;
        for (k = 0; k < K; k++) {
            double *__restrict out = bdt + k * n + j0;
            for (t = 0; t < m; t++) out[t] = bd[(j0 + t) * K + k];
            for (; t < end; t++) out[t] = 0.0;
        }
    }
}

/* One step of digamma's recurrence psi(y) = psi(y + 1) - 1 / y while y < 6, summed as one
 * fraction a / b (one division instead of six); the selects pick operands, never results
 * (a * 1 + 0 is exact), so nothing is branched. */
#define DPTM_PSI_STEP(y, a, b) do { const int m_ = (y) < 6.0; \
        const double f_ = m_ ? (y) : 1.0, c_ = m_ ? (b) : 0.0, d_ = m_ ? 1.0 : 0.0; \
        (a) = (a) * f_ + c_; (b) = (b) * f_; (y) = (y) + d_; } while (0)

/* et[k] = exp(psi(g[k]) - psi_total), k < K (NaN where g[k] <= 0 or NaN): digamma's
 * recurrence (at most six steps for g > 0) as six masked steps, then its asymptotic series
 * as the kernels' digamma (svi_e_step.pxi) nests it, with svi_elementary.h's log and exp.
 * Four short loops rather than one: each element is a long chain of dependent operations,
 * and short loops let the core overlap elements. ``xs``: 2 K doubles of scratch. */
static DPTM_SVI_CLONES void dptm_svi_exp_digamma(const double *__restrict g,
        double *__restrict et, double *__restrict xs, Py_ssize_t K, double psi_total) {
    Py_ssize_t k;
    for (k = 0; k < K; k++) {
        double y = g[k], a = 0.0, b = 1.0;
        DPTM_PSI_STEP(y, a, b); DPTM_PSI_STEP(y, a, b); DPTM_PSI_STEP(y, a, b);
        DPTM_PSI_STEP(y, a, b); DPTM_PSI_STEP(y, a, b); DPTM_PSI_STEP(y, a, b);
        xs[k] = y;
        et[k] = a / b;
    }
    for (k = 0; k < K; k++) xs[K + k] = dptm_log_ge1(xs[k]);
    for (k = 0; k < K; k++) {
        const double r = 1.0 / xs[k], r2 = r * r;
        double t = (691.0 / 32760.0) - r2 * (1.0 / 12.0);
        t = (1.0 / 132.0) - r2 * t;
        t = (1.0 / 240.0) - r2 * t;
        t = (1.0 / 252.0) - r2 * t;
        t = (1.0 / 120.0) - r2 * t;
        t = (1.0 / 12.0) - r2 * t;
        et[k] = (((xs[K + k] - 0.5 * r) - r2 * t) - et[k]) - psi_total;
    }
    for (k = 0; k < K; k++) {
        const double v = dptm_exp(et[k]);
        const int positive = g[k] > 0.0;
        et[k] = positive ? v : NAN;
    }
}

#endif  /* DPTM_SVI_E_STEP_H */
