cdef inline Py_ssize_t sample_cumulative(const double* cum, Py_ssize_t K, double u) noexcept nogil:
    """Smallest k with cum[k] > u (cum non-decreasing, u < cum[K-1])."""
    cdef Py_ssize_t k = 0
    while k < K - 1 and cum[k] <= u:
        k += 1
    return k


# The O(K) part of a draw of gibbs_sweep's blocked search, in C with the exact operation
# order of its docstring (no FMA contraction, so any -march gives the same bits).
# DPTM_CGS_NB blocks; topic t belongs to block t % NB, so the sums over blocks are
# element-wise (vectorised) and the serial additions per draw are about K / NB + NB
# instead of K. The search has no data-dependent branch: a mispredicted loop exit costs about
# as much as the arithmetic, and it keeps the CPU from overlapping consecutive tokens.
cdef extern from "_kernels/cgs_dense.h":
    const Py_ssize_t DPTM_CGS_NB
    void __builtin_prefetch(const void* p) noexcept nogil
    void dptm_cgs_prefetch_row(const int32_t* row, Py_ssize_t K) noexcept nogil
    void dptm_cgs_block_prefix(const int32_t* wrow, const double* c, double* P, Py_ssize_t K,
                               double beta) noexcept nogil
    Py_ssize_t dptm_cgs_block_search(const double* P, Py_ssize_t K, double uniform) noexcept nogil


# Below this many topics the plain sequential scan is faster.
cdef Py_ssize_t BLOCKED_MIN_TOPICS = 32


cdef void _gibbs_docs(const int64_t* doc_ptr, Py_ssize_t d_lo, Py_ssize_t d_hi,
                      const int32_t* words, Py_ssize_t n_tokens, int32_t* z, int32_t* n_wk,
                      int32_t* n_dk, int64_t* n_k, Py_ssize_t V, Py_ssize_t K, double alpha,
                      double beta, bitgen_t* rng, double* c, double* cum) noexcept nogil:
    """The sweep of ``gibbs_sweep`` over documents [d_lo, d_hi) with the counts given
    (``c``: K doubles, ``cum``: K + NB doubles of scratch)."""
    cdef Py_ssize_t d, i, k, w, t
    cdef double beta_sum = V * beta, total
    cdef int32_t* wrow
    cdef int32_t* drow
    cdef bint blocked = K >= BLOCKED_MIN_TOPICS
    if not blocked:
        for t in range(K):
            c[t] = 1.0 / (n_k[t] + beta_sum)
    for d in range(d_lo, d_hi):
        if doc_ptr[d + 1] == doc_ptr[d]:
            continue
        drow = n_dk + d * K
        if blocked:
            for t in range(K):
                c[t] = (drow[t] + alpha) / (n_k[t] + beta_sum)
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            k = z[i]
            wrow = n_wk + w * K
            wrow[k] -= 1
            drow[k] -= 1
            n_k[k] -= 1
            if blocked:
                c[k] = (drow[k] + alpha) / (n_k[k] + beta_sum)
                if i + 1 < n_tokens:
                    dptm_cgs_prefetch_row(n_wk + words[i + 1] * K, K)
                dptm_cgs_block_prefix(wrow, c, cum, K, beta)
                k = dptm_cgs_block_search(cum, K, next_uniform(rng))
            else:
                c[k] = 1.0 / (n_k[k] + beta_sum)
                total = 0.0
                for t in range(K):
                    total += (wrow[t] + beta) * (drow[t] + alpha) * c[t]
                    cum[t] = total
                k = sample_cumulative(cum, K, next_uniform(rng) * total)
            z[i] = <int32_t> k
            wrow[k] += 1
            drow[k] += 1
            n_k[k] += 1
            if blocked:
                c[k] = (drow[k] + alpha) / (n_k[k] + beta_sum)
            else:
                c[k] = 1.0 / (n_k[k] + beta_sum)


def gibbs_sweep(const int64_t[::1] doc_ptr, const int32_t[::1] words, int32_t[::1] z,
                int32_t[:, ::1] n_wk, int32_t[:, ::1] n_dk, int64_t[::1] n_k,
                double alpha, double beta, object bit_generator):
    """One sweep of collapsed Gibbs sampling over every token (Griffiths & Steyvers 2004).

    Tokens are visited in order. Token ``i`` of document ``d`` with word ``w`` and topic
    ``k`` is removed from the counts (``n_wk[w, k]``, ``n_dk[d, k]``, ``n_k[k]`` decremented),
    its topic is redrawn from ``p_t ∝ (n_wk[w, t] + beta) * (n_dk[d, t] + alpha) /
    (n_k[t] + V beta)`` with one uniform ``U`` (the BitGenerator's ``next_double``), and the
    counts of the new topic are incremented. O(K) per token. In double precision, with the
    current counts, the draw is:

    ``K < 32`` (sequential scan)::

        cum[t] = sum_{t' <= t} (n_wk[w, t'] + beta) * (n_dk[d, t'] + alpha)
                               * (1 / (n_k[t'] + V beta))
        u = U * cum[K - 1];  topic = first t with cum[t] > u  (K - 1 if none)

    (sums left to right, each product evaluated left to right).

    ``K >= 32`` (blocked search, 8 blocks; topic ``t`` is in block ``t % 8``)::

        x[t]    = (n_wk[w, t] + beta) * ((n_dk[d, t] + alpha) / (n_k[t] + V beta))
        P[b][j] = x[b] + x[b + 8] + ... + x[b + 8 j]      (left to right; topics < K)
        s[b]    = the last P[b][j] (block total)
        cum[b]  = s[0] + ... + s[b] for b < 4  (left to right),
                  cum[3] + (s[4] + ... + s[b]) for b >= 4
        u = U * cum[7]
        b* = min(#{b : cum[b] <= u}, 7);  r = u - cum[b* - 1]  (r = u if b* = 0)
        topic = b* + 8 j*,  j* = min(#{j : P[b*][j] <= r}, (last j of block b*))

    Both are the inverse-CDF draw (the second over topics ordered by block); the blocked form
    needs about K / 8 + 8 serial additions instead of K and no data-dependent branch.
    ``gibbs_sweep_parallel`` runs it on several threads (AD-LDA).
    """
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1, V = n_wk.shape[0], K = n_wk.shape[1]
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    # sequential scan: c[t] = 1 / (n_k[t] + beta_sum), cum the running sums;
    # blocked: c[t] = (drow[t] + alpha) / (n_k[t] + beta_sum) for the current document,
    # cum the block prefix sums (K + NB entries)
    if D <= 0 or K <= 0 or words.shape[0] == 0:
        return
    cdef double* c = <double*> malloc(K * sizeof(double))
    cdef double* cum = <double*> malloc((K + DPTM_CGS_NB) * sizeof(double))
    if c == NULL or cum == NULL:
        free(c); free(cum)
        raise MemoryError()
    try:
        with bit_generator.lock, nogil:
            _gibbs_docs(&doc_ptr[0], 0, D, &words[0], words.shape[0], &z[0], &n_wk[0, 0],
                        &n_dk[0, 0], &n_k[0], V, K, alpha, beta, rng, c, cum)
    finally:
        free(c)
        free(cum)
