# cython: language_level=3
"""Collapsed Gibbs sampling kernels for LDA.

Data layout, shared by every kernel: tokens are flat arrays, document ``d`` owning
``words[doc_ptr[d]:doc_ptr[d+1]]`` with current topics ``z``; topic-word counts are
word-major ``n_wk[w, k]`` (the K counts of one word are contiguous), document-topic counts
``n_dk[d, k]``, topic totals ``n_k[k]``. Kernels take numpy's BitGenerator and draw from it
through its C API; they know nothing of estimators, privacy or I/O.
"""
import numpy as np

from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport malloc, free
from numpy.random cimport bitgen_t

from dptm._bitgen cimport get_bitgen, next_uniform


cdef inline Py_ssize_t sample_cumulative(const double* cum, Py_ssize_t K, double u) noexcept nogil:
    """Smallest k with cum[k] > u (cum non-decreasing, u < cum[K-1])."""
    cdef Py_ssize_t k = 0
    while k < K - 1 and cum[k] <= u:
        k += 1
    return k


def gibbs_sweep(const int64_t[::1] doc_ptr, const int32_t[::1] words, int32_t[::1] z,
                int32_t[:, ::1] n_wk, int32_t[:, ::1] n_dk, int64_t[::1] n_k,
                double alpha, double beta, object bit_generator):
    """One sweep of collapsed Gibbs sampling over every token (Griffiths & Steyvers 2004).

    Each token ``i`` of document ``d`` with word ``w`` is removed from the counts and its
    topic redrawn from ``p_k ∝ (n_wk[w, k] + beta) * (n_dk[d, k] + alpha) / (n_k[k] + V beta)``,
    then the counts are updated in place. O(K) per token.
    """
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1, V = n_wk.shape[0], K = n_wk.shape[1]
    cdef Py_ssize_t d, i, k, w, t
    cdef double beta_sum = V * beta, total
    cdef int32_t* wrow
    cdef int32_t* drow
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    cdef double* inv_nk = <double*> malloc(K * sizeof(double))
    cdef double* cum = <double*> malloc(K * sizeof(double))
    if inv_nk == NULL or cum == NULL:
        free(inv_nk); free(cum)
        raise MemoryError()
    try:
        with bit_generator.lock, nogil:
            for t in range(K):
                inv_nk[t] = 1.0 / (n_k[t] + beta_sum)
            for d in range(D):
                drow = &n_dk[d, 0]
                for i in range(doc_ptr[d], doc_ptr[d + 1]):
                    w = words[i]
                    k = z[i]
                    wrow = &n_wk[w, 0]
                    wrow[k] -= 1
                    drow[k] -= 1
                    n_k[k] -= 1
                    inv_nk[k] = 1.0 / (n_k[k] + beta_sum)
                    total = 0.0
                    for t in range(K):
                        total += (wrow[t] + beta) * (drow[t] + alpha) * inv_nk[t]
                        cum[t] = total
                    k = sample_cumulative(cum, K, next_uniform(rng) * total)
                    z[i] = <int32_t> k
                    wrow[k] += 1
                    drow[k] += 1
                    n_k[k] += 1
                    inv_nk[k] = 1.0 / (n_k[k] + beta_sum)
    finally:
        free(inv_nk)
        free(cum)


def fold_in(const int64_t[::1] doc_ptr, const int32_t[::1] words,
            const double[:, ::1] word_factor, double alpha, int n_iter, int burn_in,
            list bit_generators):
    """Fold-in Gibbs sampling of held-out documents with the word factor held fixed.

    For each document ``d`` (with its own BitGenerator ``bit_generators[d]``), topics are
    initialised uniformly and each token with word ``w`` is redrawn ``n_iter`` times from
    ``p_k ∝ word_factor[w, k] * (n_dk[d, k] + alpha)`` (``word_factor = topic_word.T``).
    Each document has its own stream, so its result does not depend on the batch.

    Returns
    -------
    mean_counts : ndarray (n_docs, K)
        ``n_dk`` averaged over the sweeps after the first ``burn_in``.
    """
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1, K = word_factor.shape[1]
    cdef Py_ssize_t d, i, k, t, it, start, n
    cdef double total
    cdef const double* wrow
    cdef bitgen_t* rng
    out = np.zeros((D, K), dtype=np.float64)
    cdef double[:, ::1] mean_counts = out
    cdef Py_ssize_t max_len = 0
    for d in range(D):
        max_len = max(max_len, doc_ptr[d + 1] - doc_ptr[d])
    cdef double* cum = <double*> malloc(K * sizeof(double))
    cdef int32_t* n_dk = <int32_t*> malloc(K * sizeof(int32_t))
    cdef int32_t* z = <int32_t*> malloc((max_len + 1) * sizeof(int32_t))
    if cum == NULL or n_dk == NULL or z == NULL:
        free(cum); free(n_dk); free(z)
        raise MemoryError()
    if not 0 <= burn_in < n_iter:
        raise ValueError("need 0 <= burn_in < n_iter")
    cdef double kept = n_iter - burn_in
    try:
        for d in range(D):
            start = doc_ptr[d]
            n = doc_ptr[d + 1] - start
            if n == 0:
                continue
            bit_generator = bit_generators[d]
            rng = get_bitgen(bit_generator)
            with bit_generator.lock, nogil:
                for t in range(K):
                    n_dk[t] = 0
                for i in range(n):
                    k = <Py_ssize_t> (next_uniform(rng) * K)
                    if k >= K:
                        k = K - 1
                    z[i] = <int32_t> k
                    n_dk[k] += 1
                for it in range(n_iter):
                    for i in range(n):
                        k = z[i]
                        wrow = &word_factor[words[start + i], 0]
                        n_dk[k] -= 1
                        total = 0.0
                        for t in range(K):
                            total += wrow[t] * (n_dk[t] + alpha)
                            cum[t] = total
                        k = sample_cumulative(cum, K, next_uniform(rng) * total)
                        z[i] = <int32_t> k
                        n_dk[k] += 1
                    if it >= burn_in:
                        for t in range(K):
                            mean_counts[d, t] += n_dk[t]
                for t in range(K):
                    mean_counts[d, t] /= kept
    finally:
        free(cum)
        free(n_dk)
        free(z)
    return out
