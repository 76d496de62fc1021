# cython: language_level=3
"""Variational kernels: the per-document optimisation of theta behind the attack
statistic zeta, and (below) the E-step of (private) stochastic variational inference.

Documents come as CSR pieces (``indptr``, ``indices``, ``counts``); topic-word
probabilities are word-major ``phi_t[w, k]``.
"""
import numpy as np

from libc.math cimport log, fabs
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport malloc, free


def zeta_batch(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] counts,
               const double[:, ::1] phi_t, double tol=1e-10, int max_iter=10000,
               double floor=1e-300):
    """zeta(Phi, d) = max over theta in the simplex of sum_w c_w log(sum_k theta_k Phi[k, w]).

    Solved per document by the EM fixed point (papers/manzonelli2024, App. A)
    ``theta <- theta * (Phi[:, w] @ (c / (theta @ Phi[:, w]))) / N_d``, started at the
    uniform theta, until the objective's relative change is <= ``tol`` or ``max_iter``
    updates. Mixture probabilities below ``floor`` are floored (log of zero).

    Returns
    -------
    zeta : ndarray (n_docs,)
    theta : ndarray (n_docs, K)
    n_iter : ndarray of int32 (n_docs,)
    """
    cdef Py_ssize_t D = indptr.shape[0] - 1, K = phi_t.shape[1]
    cdef Py_ssize_t d, j, k, it
    cdef double n_d, obj, prev, p, ratio
    zeta_out = np.zeros(D, dtype=np.float64)
    theta_out = np.zeros((D, K), dtype=np.float64)
    iter_out = np.zeros(D, dtype=np.int32)
    cdef double[::1] zeta = zeta_out
    cdef double[:, ::1] theta = theta_out
    cdef int32_t[::1] n_iter = iter_out
    cdef double* acc = <double*> malloc(K * sizeof(double))
    if acc == NULL:
        raise MemoryError()
    try:
        with nogil:
            for d in range(D):
                n_d = 0.0
                for j in range(indptr[d], indptr[d + 1]):
                    n_d += counts[j]
                for k in range(K):
                    theta[d, k] = 1.0 / K
                if n_d <= 0.0:
                    continue
                prev = -1e308
                it = 0
                while True:
                    # E: objective at the current theta and the EM accumulator.
                    obj = 0.0
                    for k in range(K):
                        acc[k] = 0.0
                    for j in range(indptr[d], indptr[d + 1]):
                        p = 0.0
                        for k in range(K):
                            p += theta[d, k] * phi_t[indices[j], k]
                        if p < floor:
                            p = floor
                        obj += counts[j] * log(p)
                        ratio = counts[j] / p
                        for k in range(K):
                            acc[k] += ratio * phi_t[indices[j], k]
                    if fabs(obj - prev) <= tol * fabs(obj) or it >= max_iter:
                        break
                    prev = obj
                    # M: the fixed-point update keeps theta in the simplex.
                    for k in range(K):
                        theta[d, k] = theta[d, k] * acc[k] / n_d
                    it += 1
                zeta[d] = obj
                n_iter[d] = <int32_t> it
    finally:
        free(acc)
    return zeta_out, theta_out, iter_out
