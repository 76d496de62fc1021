# The two O(nnz_d * K) passes of the E-step and its exp(E[log theta]), in C so that GCC can
# build AVX2 / AVX-512 clones of them (chosen at load time; "default" is the baseline SSE2
# build). All are element-wise IEEE operations in a fixed order - no reductions are
# reordered, no FMA, no libm call - so every clone gives bitwise the same result.
cdef extern from "_kernels/svi_e_step.h":
    void dptm_svi_norm_phi(const double* bdt, const double* et, double* pj, Py_ssize_t K,
                           Py_ssize_t n, double init) noexcept nogil
    void dptm_svi_gradient(const double* bd, const double* r, double* acc, Py_ssize_t K,
                           Py_ssize_t nnz) noexcept nogil
    void dptm_svi_exp_digamma(const double* g, double* et, double* xs, Py_ssize_t K,
                              double psi_total) noexcept nogil
    void dptm_svi_gather(const double* B, const int32_t* ids, Py_ssize_t nnz, Py_ssize_t K,
                         Py_ssize_t n, double* bd, double* bdt) noexcept nogil

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


cdef inline Py_ssize_t _padded(Py_ssize_t nnz) noexcept nogil:
    """``nnz`` rounded up to a multiple of 8: the row stride of the topic-major copy."""
    return (nnz + 7) & ~(<Py_ssize_t> 7)


cdef int _e_step_doc(const int64_t start, Py_ssize_t nnz, const int32_t[::1] indices,
                     const double[::1] counts, const double[:, ::1] exp_elog_beta_t,
                     double* g, Py_ssize_t K, double alpha, double tol, int max_iter,
                     double* et, double* acc, double* pj, double* bd,
                     double* bdt, double* xs) noexcept nogil:
    """The E-step fixed point of one document (see lda_e_step) from gamma row ``g``
    (overwritten); leaves exp(E[log theta]) in ``et`` and the document's rows of B gathered
    in ``bd`` / ``bdt`` (``bdt`` rows, and ``pj``, padded to a multiple of 8 entries).
    Returns the number of updates."""
    cdef Py_ssize_t j, k, n = _padded(nnz)
    cdef int it
    cdef double total, change, new
    # The document's rows of B are gathered twice: word-major for the gradient and
    # topic-major for the normalisers, so that both inner loops are axpy-like
    # (vectorisable) rather than reductions.
    dptm_svi_gather(&exp_elog_beta_t[0, 0], &indices[start], nnz, K, n, bd, bdt)
    total = 0.0
    for k in range(K):
        total += g[k]
    dptm_svi_exp_digamma(g, et, xs, K, digamma(total))
    it = 0
    while it < max_iter:
        # norm_phi[j] = eps + sum_k et[k] B[w_j, k]
        dptm_svi_norm_phi(bdt, et, pj, K, n, _SVI_EPS)
        for j in range(nnz):
            pj[j] = counts[start + j] / pj[j]
        # acc[k] = sum_j (c_j / norm_phi[j]) B[w_j, k]
        dptm_svi_gradient(bd, pj, acc, K, nnz)
        total = 0.0
        change = 0.0
        for k in range(K):
            new = et[k] * acc[k] + alpha
            change += _c_fabs(new - g[k])
            g[k] = new
            total += new
        dptm_svi_exp_digamma(g, et, xs, K, digamma(total))
        it += 1
        if change / K < tol:
            break
    return it


def lda_e_step(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] counts,
               const int64_t[::1] rows, const double[:, ::1] exp_elog_beta_t,
               double[:, ::1] gamma, double alpha, double tol=1e-3, int max_iter=100,
               double[:, ::1] sstats=None, double[::1] word_bound=None, int n_threads=1):
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

    Parallelism: documents are processed on ``n_threads`` OpenMP threads (one without
    OpenMP), each with its own scratch; gamma, the updates and ``word_bound`` of a document
    depend only on that document. ``sstats`` is then accumulated in a second pass split by
    word id ranges: every cell ``sstats[w, k]`` receives its documents' terms in the order
    of ``rows``, exactly as the serial loop adds them. Every output is therefore
    bit-identical for every ``n_threads`` (and to the former serial kernel).

    Returns
    -------
    n_iter : ndarray of int32 (len(rows),): updates run per document.
    """
    cdef Py_ssize_t n_rows = rows.shape[0], K = exp_elog_beta_t.shape[1]
    cdef Py_ssize_t V = exp_elog_beta_t.shape[0], n_docs = indptr.shape[0] - 1
    cdef Py_ssize_t i, j, k, d, w, t, start, nnz, max_nnz = 0, tid, lo, hi, o
    cdef double bound, r
    cdef bint do_sstats = sstats is not None, do_bound = word_bound is not None
    if gamma.shape[0] != n_rows or gamma.shape[1] != K:
        raise ValueError(f"gamma must have shape ({n_rows}, {K})")
    if do_sstats and (sstats.shape[0] != V or sstats.shape[1] != K):
        raise ValueError(f"sstats must have shape ({V}, {K})")
    if do_bound and word_bound.shape[0] != n_rows:
        raise ValueError(f"word_bound must have length {n_rows}")
    if counts.shape[0] != indices.shape[0]:
        raise ValueError("counts must have one entry per stored index")
    if n_docs < 0 or (n_docs and (np.any(np.diff(np.asarray(indptr)) < 0) or indptr[0] < 0
                                  or indptr[n_docs] > indices.shape[0])):
        raise ValueError("indptr must be non-decreasing within [0, len(indices)]")
    if n_rows and (np.min(rows) < 0 or np.max(rows) >= n_docs):
        raise ValueError(f"rows must lie in [0, {n_docs})")
    if indices.shape[0] and (np.min(indices) < 0 or np.max(indices) >= V):
        raise ValueError(f"indices must lie in [0, {V})")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    iter_out = np.zeros(n_rows, dtype=np.int32)
    if n_rows == 0 or K == 0:
        return iter_out
    cdef int32_t[::1] n_iter = iter_out
    # offsets of each row's terms in the (r_j) buffer of the sstats pass
    off_arr = np.zeros(n_rows + 1, dtype=np.int64)
    cdef int64_t[::1] off = off_arr
    for i in range(n_rows):
        nnz = indptr[rows[i] + 1] - indptr[rows[i]]
        off[i + 1] = off[i] + nnz
        if nnz > max_nnz:
            max_nnz = nnz
    cdef int nt = <int> min(n_threads, n_rows)
    max_nnz = _padded(max_nnz)
    cdef Py_ssize_t per = 4 * K + (max_nnz + 1) + 2 * (max_nnz * K + 1)
    cdef double* scratch = <double*> malloc(nt * per * sizeof(double))
    # final exp(E[log theta]) per row and c_j / (norm_phi_j + eps) per term, for sstats
    cdef double* et_all = NULL
    cdef double* r_all = NULL
    if do_sstats:
        et_all = <double*> malloc((n_rows * K + 1) * sizeof(double))
        r_all = <double*> malloc((off[n_rows] + 1) * sizeof(double))
    if scratch == NULL or (do_sstats and (et_all == NULL or r_all == NULL)):
        free(scratch)
        free(et_all)
        free(r_all)
        raise MemoryError()
    cdef double* et
    cdef double* acc
    cdef double* pj
    cdef double* bd
    cdef double* bdt
    cdef double* xs
    try:
        with nogil:
            for i in prange(n_rows, num_threads=nt, schedule="dynamic"):
                tid = threadid()
                et = scratch + tid * per
                acc = et + K
                pj = acc + K
                bd = pj + (max_nnz + 1)
                bdt = bd + (max_nnz * K + 1)
                xs = bdt + (max_nnz * K + 1)
                d = rows[i]
                start = indptr[d]
                nnz = indptr[d + 1] - start
                n_iter[i] = <int32_t> _e_step_doc(start, nnz, indices, counts,
                                                  exp_elog_beta_t, &gamma[i, 0], K, alpha,
                                                  tol, max_iter, et, acc, pj, bd, bdt, xs)
                if do_sstats or do_bound:
                    dptm_svi_norm_phi(bdt, et, pj, K, _padded(nnz), 0.0)
                    bound = 0.0
                    for j in range(nnz):
                        if do_bound:
                            bound = bound + counts[start + j] * _c_log(pj[j])
                        if do_sstats:
                            r_all[off[i] + j] = counts[start + j] / (pj[j] + _SVI_EPS)
                    if do_bound:
                        word_bound[i] = bound
                    if do_sstats:
                        for k in range(K):
                            et_all[i * K + k] = et[k]
            if do_sstats:
                # Thread t owns the word ids [t V / nt, (t + 1) V / nt): each cell gets its
                # terms in row order, as in the serial loop, whatever nt is.
                for t in prange(nt, num_threads=nt, schedule="static", chunksize=1):
                    lo = (t * V) // nt
                    hi = ((t + 1) * V) // nt
                    for i in range(n_rows):
                        start = indptr[rows[i]]
                        for j in range(off[i + 1] - off[i]):
                            w = indices[start + j]
                            if w < lo or w >= hi:
                                continue
                            r = r_all[off[i] + j]
                            o = i * K
                            for k in range(K):
                                sstats[w, k] += r * et_all[o + k] * exp_elog_beta_t[w, k]
    finally:
        free(scratch)
        free(et_all)
        free(r_all)
    return iter_out
