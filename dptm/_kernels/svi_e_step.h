#ifndef DPTM_SVI_E_STEP_H
#define DPTM_SVI_E_STEP_H

#include <Python.h>   /* Py_ssize_t; the generated module includes it first */
#include <math.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__)
#define DPTM_SVI_CLONES __attribute__((target_clones("avx512f", "avx2", "default"), optimize("fp-contract=off")))
#else
#define DPTM_SVI_CLONES
#endif
/* B of pj's entries summed in registers over every k (each entry's own order kept) */
#define DPTM_NORM_PHI_BLOCK(B) \
    for (; j + (B) <= nnz; j += (B)) { \
        double a_[B]; Py_ssize_t t_; \
        for (t_ = 0; t_ < (B); t_++) a_[t_] = init; \
        for (k = 0; k < K; k++) { \
            const double e = et[k]; \
            const double *__restrict row = bdt + k * nnz + j; \
            for (t_ = 0; t_ < (B); t_++) a_[t_] += e * row[t_]; \
        } \
        for (t_ = 0; t_ < (B); t_++) pj[j + t_] = a_[t_]; \
    }

/* pj[j] = init + sum_k et[k] * bdt[k * nnz + j]   (k ascending) */
static DPTM_SVI_CLONES void dptm_svi_norm_phi(const double *__restrict bdt,
        const double *__restrict et, double *__restrict pj, Py_ssize_t K,
        Py_ssize_t nnz, double init) {
    Py_ssize_t j = 0, j0, k;
    DPTM_NORM_PHI_BLOCK(32)
    DPTM_NORM_PHI_BLOCK(8)
    j0 = j;
    for (j = j0; j < nnz; j++) pj[j] = init;
    for (k = 0; k < K; k++) {
        const double e = et[k];
        const double *__restrict row = bdt + k * nnz;
        for (j = j0; j < nnz; j++) pj[j] += e * row[j];
    }
}
/* acc[k] = sum_j r[j] * bd[j * K + k]   (j ascending) */
static DPTM_SVI_CLONES void dptm_svi_gradient(const double *__restrict bd,
        const double *__restrict r, double *__restrict acc, Py_ssize_t K, Py_ssize_t nnz) {
    Py_ssize_t j, k;
    for (k = 0; k < K; k++) acc[k] = 0.0;
    for (j = 0; j < nnz; j++) {
        const double rj = r[j];
        const double *__restrict row = bd + j * K;
        for (k = 0; k < K; k++) acc[k] += rj * row[k];
    }
}

/* One masked step of digamma's recurrence psi(x) = psi(x + 1) - 1/x while x < 6. */
#define DPTM_PSI_STEP(x, r) do { const int m_ = (x) < 6.0; \
        (r) = m_ ? (r) - 1.0 / (x) : (r); (x) = m_ ? (x) + 1.0 : (x); } while (0)

/* et[k] = exp(psi(g[k]) - psi_total), k < K, with psi bitwise the kernels' digamma
 * (svi_e_step.pxi): the same IEEE operations per element, its recurrence (at most six
 * steps for x > 0) as six masked steps so that the divisions vectorise; log and exp stay
 * libm's scalar calls. ``xs``: 2 K doubles of scratch. */
static DPTM_SVI_CLONES void dptm_svi_exp_digamma(const double *__restrict g,
        double *__restrict et, double *__restrict xs, Py_ssize_t K, double psi_total) {
    Py_ssize_t k;
    for (k = 0; k < K; k++) {
        double x = g[k], r = 0.0;
        DPTM_PSI_STEP(x, r); DPTM_PSI_STEP(x, r); DPTM_PSI_STEP(x, r);
        DPTM_PSI_STEP(x, r); DPTM_PSI_STEP(x, r); DPTM_PSI_STEP(x, r);
        xs[k] = x;
        et[k] = r;
    }
    for (k = 0; k < K; k++) xs[K + k] = log(xs[k]);
    for (k = 0; k < K; k++) {
        const double x = xs[k], r = 1.0 / x, r2 = r * r;
        /* the asymptotic series, innermost term first, as digamma() nests it */
        double t = (691.0 / 32760.0) - r2 * (1.0 / 12.0);
        t = (1.0 / 132.0) - r2 * t;
        t = (1.0 / 240.0) - r2 * t;
        t = (1.0 / 252.0) - r2 * t;
        t = (1.0 / 120.0) - r2 * t;
        t = (1.0 / 12.0) - r2 * t;
        const double res = et[k] + ((xs[K + k] - 0.5 * r) - r2 * t);
        et[k] = g[k] > 0.0 ? res : NAN;
    }
    for (k = 0; k < K; k++) et[k] = exp(et[k] - psi_total);
}

#endif  /* DPTM_SVI_E_STEP_H */
