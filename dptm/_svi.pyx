# cython: language_level=3
"""Variational kernels: the per-document optimisation of theta behind the attack
statistic zeta, and (below) the E-step of (private) stochastic variational inference.

Documents come as CSR pieces (``indptr``, ``indices``, ``counts``); topic-word
probabilities are word-major ``phi_t[w, k]``.
"""
import numpy as np

from libc.math cimport log, fabs, sqrt
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport malloc, free


cdef double SQUAREM_SHRINK = 1e-3


cdef inline double _zeta_eval(const int64_t start, const int64_t stop, const int32_t[::1] indices,
                              const double[::1] counts, const double[:, ::1] phi_t,
                              const double* theta, double* acc, Py_ssize_t K,
                              double floor, bint with_obj=True) noexcept nogil:
    """Objective sum_j c_j log(p_j), p_j = theta @ phi_t[w_j], at ``theta`` (0 unless
    ``with_obj``); fills ``acc[k] = sum_j c_j phi_t[w_j, k] / p_j`` (the gradient, also the
    EM accumulator)."""
    cdef Py_ssize_t j, k
    cdef double obj = 0.0, p, ratio
    cdef const double* row
    for k in range(K):
        acc[k] = 0.0
    for j in range(start, stop):
        row = &phi_t[indices[j], 0]
        p = 0.0
        for k in range(K):
            p += theta[k] * row[k]
        if p < floor:
            p = floor
        if with_obj:
            obj += counts[j] * log(p)
        ratio = counts[j] / p
        for k in range(K):
            acc[k] += ratio * row[k]
    return obj


cdef inline double _zeta_gap(const double* acc, Py_ssize_t K, double n_d) noexcept nogil:
    """Frank-Wolfe duality gap max_k acc[k] - N_d: an upper bound on zeta - objective
    (concavity; sum_k theta_k acc[k] = N_d for every theta in the simplex)."""
    cdef Py_ssize_t k
    cdef double g = acc[0]
    for k in range(1, K):
        if acc[k] > g:
            g = acc[k]
    return g - n_d


cdef inline void _zeta_em(const double* theta, const double* acc, double* out, Py_ssize_t K,
                          double n_d) noexcept nogil:
    """The EM fixed-point map out_k = theta_k * acc_k / N_d (stays in the simplex)."""
    cdef Py_ssize_t k
    cdef double s = 0.0
    for k in range(K):
        out[k] = theta[k] * acc[k] / n_d
        s += out[k]
    for k in range(K):  # renormalise away rounding drift
        out[k] /= s


def zeta_batch(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] counts,
               const double[:, ::1] phi_t, double tol=1e-10, int max_iter=10000,
               double floor=1e-300, bint accelerate=True):
    """zeta(Phi, d) = max over theta in the simplex of sum_w c_w log(sum_k theta_k Phi[k, w]).

    Solved per document by the EM fixed point (papers/manzonelli2024, App. A)
    ``theta <- theta * (Phi[:, w] @ (c / (theta @ Phi[:, w]))) / N_d``, started at the
    uniform theta. Stops when the Frank-Wolfe duality gap ``max_k g_k - N_d`` (``g`` the
    gradient, which is the EM accumulator) is <= ``tol * |objective|``: by concavity this
    certifies that the returned objective is within a relative ``tol`` of the maximum. At
    most ``max_iter`` EM updates. Mixture probabilities below ``floor`` are floored.

    ``accelerate`` wraps the EM map in SQUAREM (Varadhan & Roland 2008, scheme S3): an
    extrapolation theta' = theta0 - 2 a r + a^2 v from two EM steps, followed by one EM step;
    the step ``a`` is halved towards -1 (plain double EM step) until the objective does not
    decrease (coordinates extrapolated below 0 are kept at 1e-3 of their current value), so the scheme stays a monotone EM fixed-point
    iteration with the same fixed points. Each accelerated cycle counts as 3 updates.

    Returns
    -------
    zeta : ndarray (n_docs,)
    theta : ndarray (n_docs, K)
    n_iter : ndarray of int32 (n_docs,)
        EM-map evaluations used; ``max_iter`` or more means the tolerance was not certified.
    """
    cdef Py_ssize_t D = indptr.shape[0] - 1, K = phi_t.shape[1]
    cdef Py_ssize_t d, j, k, it
    cdef int64_t start, stop
    cdef double n_d, obj = 0.0, obj_new, rr, vv, a, s
    zeta_out = np.zeros(D, dtype=np.float64)
    theta_out = np.zeros((D, K), dtype=np.float64)
    iter_out = np.zeros(D, dtype=np.int32)
    cdef double[::1] zeta = zeta_out
    cdef double[:, ::1] theta_mv = theta_out
    cdef int32_t[::1] n_iter = iter_out
    cdef double* buf = <double*> malloc(8 * K * sizeof(double))
    if buf == NULL:
        raise MemoryError()
    cdef double* th = buf            # current iterate
    cdef double* acc = buf + K       # gradient at th
    cdef double* t1 = buf + 2 * K    # F(th)
    cdef double* t2 = buf + 3 * K    # F(t1)
    cdef double* acc1 = buf + 4 * K
    cdef double* tx = buf + 5 * K    # extrapolated point
    cdef double* tn = buf + 6 * K    # F(tx): the new iterate
    cdef double* accn = buf + 7 * K
    try:
        with nogil:
            for d in range(D):
                start = indptr[d]
                stop = indptr[d + 1]
                n_d = 0.0
                for j in range(start, stop):
                    n_d += counts[j]
                for k in range(K):
                    th[k] = 1.0 / K
                it = 0
                if n_d > 0.0:
                    obj = _zeta_eval(start, stop, indices, counts, phi_t, th, acc, K, floor)
                    while it < max_iter and _zeta_gap(acc, K, n_d) > tol * fabs(obj):
                        if not accelerate or K == 1:
                            _zeta_em(th, acc, t1, K, n_d)
                            for k in range(K):
                                th[k] = t1[k]
                            obj = _zeta_eval(start, stop, indices, counts, phi_t, th, acc, K,
                                             floor)
                            it += 1
                            continue
                        # SQUAREM cycle: two EM steps, extrapolate, one stabilising EM step.
                        _zeta_em(th, acc, t1, K, n_d)
                        _zeta_eval(start, stop, indices, counts, phi_t, t1, acc1, K, floor, False)
                        _zeta_em(t1, acc1, t2, K, n_d)
                        rr = 0.0
                        vv = 0.0
                        for k in range(K):
                            rr += (t1[k] - th[k]) * (t1[k] - th[k])
                            vv += (t2[k] - 2.0 * t1[k] + th[k]) * (t2[k] - 2.0 * t1[k] + th[k])
                        a = -1.0
                        if vv > 0.0 and rr > 0.0:
                            a = -sqrt(rr / vv)
                            if a > -1.0:
                                a = -1.0
                        it += 2
                        while True:
                            if a == -1.0:
                                # theta' = t2 exactly: a plain double EM step, always valid.
                                for k in range(K):
                                    tx[k] = t2[k]
                            else:
                                # Extrapolate; a coordinate pushed below 0 is kept at a small
                                # fraction of its current value (the boundary is approached
                                # geometrically but never reached, so it can still recover).
                                s = 0.0
                                for k in range(K):
                                    tx[k] = th[k] - 2.0 * a * (t1[k] - th[k]) \
                                        + a * a * (t2[k] - 2.0 * t1[k] + th[k])
                                    if tx[k] < SQUAREM_SHRINK * th[k]:
                                        tx[k] = SQUAREM_SHRINK * th[k]
                                    s += tx[k]
                                for k in range(K):
                                    tx[k] /= s
                            _zeta_eval(start, stop, indices, counts, phi_t, tx, accn, K, floor,
                                       False)
                            _zeta_em(tx, accn, tn, K, n_d)
                            obj_new = _zeta_eval(start, stop, indices, counts, phi_t, tn,
                                                 accn, K, floor)
                            if obj_new >= obj or a == -1.0:
                                break
                            a = (a - 1.0) / 2.0
                            if a > -1.001:
                                a = -1.0
                        it += 1
                        for k in range(K):
                            th[k] = tn[k]
                            acc[k] = accn[k]
                        obj = obj_new
                for k in range(K):
                    theta_mv[d, k] = th[k]
                zeta[d] = obj if n_d > 0.0 else 0.0
                n_iter[d] = <int32_t> it
    finally:
        free(buf)
    return zeta_out, theta_out, iter_out


# ---------------------------------------------------------------------------------------
# E-step of (private) stochastic variational inference: online LDA (Hoffman, Blei & Bach
# 2010), as scikit-learn's ``_update_doc_distribution`` computes it, in one nogil loop.
# Owner: issue 5 (PrivateOnlineLDA).
# ---------------------------------------------------------------------------------------
from libc.math cimport exp as _c_exp, log as _c_log, fabs as _c_fabs, NAN as _C_NAN

# The two O(nnz_d * K) passes of the E-step, in C so that GCC can build AVX2 / AVX-512
# clones of them (chosen at load time; "default" is the baseline SSE2 build). Both are
# element-wise multiply-adds in a fixed order - no reductions are reordered and no FMA is
# enabled - so every clone gives bitwise the same result.
cdef extern from *:
    """
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
    """
    void dptm_svi_norm_phi(const double* bdt, const double* et, double* pj, Py_ssize_t K,
                           Py_ssize_t nnz, double init) noexcept nogil
    void dptm_svi_gradient(const double* bd, const double* r, double* acc, Py_ssize_t K,
                           Py_ssize_t nnz) noexcept nogil

# Machine epsilon added to every phi normaliser, as scikit-learn does.
cdef double _SVI_EPS = 2.220446049250313e-16


cdef inline double digamma(double x) noexcept nogil:
    """Digamma psi(x) for x > 0 (NaN for x <= 0 or NaN).

    Recurrence psi(x) = psi(x + 1) - 1/x up to x >= 6, then the asymptotic series
    psi(x) = log x - 1/(2x) - sum_n B_2n / (2n x^2n) through the x^-14 term; the first
    omitted term is below 2e-13 at x = 6.
    """
    cdef double result = 0.0, r, r2
    if not (x > 0.0):
        return _C_NAN
    while x < 6.0:
        result -= 1.0 / x
        x += 1.0
    r = 1.0 / x
    r2 = r * r
    result += _c_log(x) - 0.5 * r - r2 * (
        1.0 / 12.0 - r2 * (1.0 / 120.0 - r2 * (1.0 / 252.0 - r2 * (
            1.0 / 240.0 - r2 * (1.0 / 132.0 - r2 * (691.0 / 32760.0 - r2 * (1.0 / 12.0)))))))
    return result


def digamma_array(const double[::1] x):
    """``scipy.special.psi(x)`` computed by the kernels' C digamma (for tests)."""
    cdef Py_ssize_t i, n = x.shape[0]
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        for i in range(n):
            o[i] = digamma(x[i])
    return out


def exp_dirichlet_expectation_t(const double[:, ::1] lam_t, double[:, ::1] out):
    """exp(E[log beta]) for beta_k ~ Dirichlet(lambda_k), word-major.

    ``lam_t`` is lambda transposed (V x K). Fills ``out`` (V x K) with
    ``np.exp(psi(lam_t) - psi(lam_t.sum(axis=0)))`` and returns it.
    """
    cdef Py_ssize_t V = lam_t.shape[0], K = lam_t.shape[1], w, k
    if out.shape[0] != V or out.shape[1] != K:
        raise ValueError("out must have the shape of lam_t")
    cdef double* psi_tot = <double*> malloc(K * sizeof(double))
    if psi_tot == NULL:
        raise MemoryError()
    try:
        with nogil:
            for k in range(K):
                psi_tot[k] = 0.0
            for w in range(V):
                for k in range(K):
                    psi_tot[k] += lam_t[w, k]
            for k in range(K):
                psi_tot[k] = digamma(psi_tot[k])
            for w in range(V):
                for k in range(K):
                    out[w, k] = _c_exp(digamma(lam_t[w, k]) - psi_tot[k])
    finally:
        free(psi_tot)
    return np.asarray(out)


def lda_e_step(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] counts,
               const int64_t[::1] rows, const double[:, ::1] exp_elog_beta_t,
               double[:, ::1] gamma, double alpha, double tol=1e-3, int max_iter=100,
               double[:, ::1] sstats=None, double[::1] word_bound=None):
    """Variational E-step of LDA for the documents ``rows`` of a CSR matrix.

    For document ``d = rows[i]`` with word ids ``ids`` and counts ``c`` (its CSR slice),
    starting from ``gamma[i]`` (overwritten with the result), iterate as scikit-learn's
    ``_update_doc_distribution`` does::

        et = exp(psi(gamma[i]) - psi(gamma[i].sum()))          # exp(E[log theta])
        repeat up to max_iter times:
            norm_phi = et @ B[ids].T + eps                       # B = exp_elog_beta_t (V x K)
            new = et * ((c / norm_phi) @ B[ids]) + alpha
            et = exp(psi(new) - psi(new.sum()))
            stop after this update if mean(|new - gamma[i]|) < tol;  gamma[i] = new

    then, with the final ``et`` and ``norm_phi = et @ B[ids].T + eps``,
    ``sstats[ids] += np.outer(c / norm_phi, et) * B[ids]`` (the document's expected topic
    counts phi * c, word-major V x K: each document adds at most its length in L1 norm),
    and ``word_bound[i] = c @ log(et @ B[ids].T)`` (the E[log p(w | theta, beta)] term of
    the variational bound). ``eps`` is float64 machine epsilon.

    Returns
    -------
    n_iter : ndarray of int32 (len(rows),): updates run per document.
    """
    cdef Py_ssize_t n_rows = rows.shape[0], K = exp_elog_beta_t.shape[1]
    cdef Py_ssize_t V = exp_elog_beta_t.shape[0], n_docs = indptr.shape[0] - 1
    cdef Py_ssize_t i, j, k, d, w, start, nnz, max_nnz = 0
    cdef int it
    cdef double total, psi_total, change, p, r, new, e, bound
    cdef bint do_sstats = sstats is not None, do_bound = word_bound is not None
    if gamma.shape[0] != n_rows or gamma.shape[1] != K:
        raise ValueError(f"gamma must have shape ({n_rows}, {K})")
    if do_sstats and (sstats.shape[0] != V or sstats.shape[1] != K):
        raise ValueError(f"sstats must have shape ({V}, {K})")
    if do_bound and word_bound.shape[0] != n_rows:
        raise ValueError(f"word_bound must have length {n_rows}")
    if n_rows and (np.min(rows) < 0 or np.max(rows) >= n_docs):
        raise ValueError(f"rows must lie in [0, {n_docs})")
    if indices.shape[0] and (np.min(indices) < 0 or np.max(indices) >= V):
        raise ValueError(f"indices must lie in [0, {V})")
    for i in range(n_rows):
        nnz = indptr[rows[i] + 1] - indptr[rows[i]]
        if nnz > max_nnz:
            max_nnz = nnz
    iter_out = np.zeros(n_rows, dtype=np.int32)
    cdef int32_t[::1] n_iter = iter_out
    # Per document, its rows of B are gathered twice: word-major (bd[j*K + k]) for the
    # gradient and topic-major (bdt[k*nnz + j]) for the normalisers, so that both inner
    # loops are axpy-like (vectorisable) rather than reductions.
    cdef double* et = <double*> malloc(K * sizeof(double))
    cdef double* acc = <double*> malloc(K * sizeof(double))
    cdef double* pj = <double*> malloc((max_nnz + 1) * sizeof(double))
    cdef double* bd = <double*> malloc((max_nnz * K + 1) * sizeof(double))
    cdef double* bdt = <double*> malloc((max_nnz * K + 1) * sizeof(double))
    cdef const double* brow
    cdef double* row
    if et == NULL or acc == NULL or pj == NULL or bd == NULL or bdt == NULL:
        free(et)
        free(acc)
        free(pj)
        free(bd)
        free(bdt)
        raise MemoryError()
    try:
        with nogil:
            for i in range(n_rows):
                d = rows[i]
                start = indptr[d]
                nnz = indptr[d + 1] - start
                for j in range(nnz):
                    brow = &exp_elog_beta_t[indices[start + j], 0]
                    row = bd + j * K
                    for k in range(K):
                        row[k] = brow[k]
                        bdt[k * nnz + j] = brow[k]
                total = 0.0
                for k in range(K):
                    total += gamma[i, k]
                psi_total = digamma(total)
                for k in range(K):
                    et[k] = _c_exp(digamma(gamma[i, k]) - psi_total)
                it = 0
                while it < max_iter:
                    # norm_phi[j] = eps + sum_k et[k] B[w_j, k]
                    dptm_svi_norm_phi(bdt, et, pj, K, nnz, _SVI_EPS)
                    for j in range(nnz):
                        pj[j] = counts[start + j] / pj[j]
                    # acc[k] = sum_j (c_j / norm_phi[j]) B[w_j, k]
                    dptm_svi_gradient(bd, pj, acc, K, nnz)
                    total = 0.0
                    change = 0.0
                    for k in range(K):
                        new = et[k] * acc[k] + alpha
                        change += _c_fabs(new - gamma[i, k])
                        gamma[i, k] = new
                        total += new
                    psi_total = digamma(total)
                    for k in range(K):
                        et[k] = _c_exp(digamma(gamma[i, k]) - psi_total)
                    it += 1
                    if change / K < tol:
                        break
                n_iter[i] = <int32_t> it
                if do_sstats or do_bound:
                    dptm_svi_norm_phi(bdt, et, pj, K, nnz, 0.0)
                    bound = 0.0
                    for j in range(nnz):
                        if do_bound:
                            bound += counts[start + j] * _c_log(pj[j])
                        if do_sstats:
                            r = counts[start + j] / (pj[j] + _SVI_EPS)
                            row = bd + j * K
                            w = indices[start + j]
                            for k in range(K):
                                sstats[w, k] += r * et[k] * row[k]
                    if do_bound:
                        word_bound[i] = bound
    finally:
        free(et)
        free(acc)
        free(pj)
        free(bd)
        free(bdt)
    return iter_out
