#ifndef DPTM_SVI_E_STEP_H
#define DPTM_SVI_E_STEP_H

#include <Python.h>   /* Py_ssize_t; the generated module includes it first */

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__)
#define DPTM_SVI_CLONES __attribute__((target_clones("avx512f", "avx2", "default"), optimize("fp-contract=off")))
#else
#define DPTM_SVI_CLONES
#endif
/* pj[j] = init + sum_k et[k] * bdt[k * nnz + j]   (k ascending) */
static DPTM_SVI_CLONES void dptm_svi_norm_phi(const double *__restrict bdt,
        const double *__restrict et, double *__restrict pj, Py_ssize_t K,
        Py_ssize_t nnz, double init) {
    Py_ssize_t j, k;
    for (j = 0; j < nnz; j++) pj[j] = init;
    for (k = 0; k < K; k++) {
        const double e = et[k];
        const double *__restrict row = bdt + k * nnz;
        for (j = 0; j < nnz; j++) pj[j] += e * row[j];
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

#endif  /* DPTM_SVI_E_STEP_H */
