# A word's list (SparseLDA): its non-zero topics as (topic, count) int32 pairs, wl[2 j] and
# wl[2 j + 1], so the word bucket reads one contiguous run instead of gathering counts
# from the word's row (a cache line per topic at large K). Unordered: a topic whose count
# drops to zero is replaced by the last pair, a new one is appended.
cdef extern from "_kernels/cgs_sparse.h":
    Py_ssize_t dptm_scan_smooth(const double* x, Py_ssize_t K, double u) noexcept nogil
    int32_t dptm_scan_doc(const int32_t* dnz, Py_ssize_t n, const int32_t* drow,
                          const double* inv, double u) noexcept nogil
    Py_ssize_t dptm_row_list(const int32_t* row, Py_ssize_t K, int32_t* wl) noexcept nogil
    Py_ssize_t dptm_find_topic(const int32_t* wl, Py_ssize_t n, int32_t k) noexcept nogil
    double dptm_word_bucket(const int32_t* wl, Py_ssize_t n, const double* c, int32_t kold,
                            double* P, double* cum, Py_ssize_t* jk) noexcept nogil
    Py_ssize_t dptm_word_search(const int32_t* wl, Py_ssize_t n, const double* P,
                                const double* cum, Py_ssize_t jk, double u) noexcept nogil
    void dptm_list_move_at(int32_t* wl, int32_t* wn, Py_ssize_t ja, int32_t b,
                           Py_ssize_t jb, int32_t* prow) noexcept nogil


cdef inline double _sum_doubles(const double* x, Py_ssize_t n) noexcept nogil:
    """sum of x[0:n] in 4 interleaved partial sums (a quarter of the serial additions)."""
    cdef double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0
    cdef Py_ssize_t j = 0
    while j + 4 <= n:
        a0 += x[j]
        a1 += x[j + 1]
        a2 += x[j + 2]
        a3 += x[j + 3]
        j += 4
    while j < n:
        a0 += x[j]
        j += 1
    return (a0 + a1) + (a2 + a3)


cdef void _sparse_docs(const int64_t* doc_ptr, Py_ssize_t d_lo, Py_ssize_t d_hi,
                       const int32_t* words, int32_t* z, int32_t* n_wk, int32_t* n_dk,
                       int64_t* n_k, Py_ssize_t V, Py_ssize_t K, double alpha, double beta,
                       bitgen_t* rng, int32_t* wnz, const int64_t* loff, int32_t* wn,
                       int32_t* dnz,
                       int32_t* dpos, double* inv, double* c, double* cumq,
                       int32_t* pos) noexcept nogil:
    """``gibbs_sweep_sparse`` over documents [d_lo, d_hi), the word lists already built
    (the sampler reads them, not ``n_wk``; ``n_wk`` NULL: only the lists are kept).
    ``pos`` (unless NULL): V x K positions of the topics in their word's list, kept exact
    through the sampler's moves (the rounds' exchange reads them) and read instead
    of a search when a topic new to the word is drawn.

    Kept exact through the call (each recomputed when its topic's counts change):
    ``inv[t] = 1 / (n_k[t] + V beta)`` and ``c[t] = (n_dk[d, t] + alpha) inv[t]`` (``alpha
    inv[t]`` outside the current document's topics, so a document costs an O(K) integer
    scan for its topics and O(its topics) arithmetic to enter and leave). Kept as running
    sums, recomputed exactly per document: the smoothing mass ``s = sum_t inv[t]`` and the
    document mass ``r = sum_t n_dk[d, t] inv[t]``, so only the word bucket is summed per
    token; the document bucket's running sum is taken only when the uniform falls in it.
    The word lists keep counting the token being drawn (the bucket discounts its pair):
    a token that keeps its topic leaves its list as it was, and one that moves updates it
    once, at the pairs the bucket and its search found (no search of the list for the old
    topic). ``cumq`` takes K + 3 doubles (the word bucket's lanes)."""
    cdef Py_ssize_t d, i, j, k, w, t, n_d = 0, n_w, jk
    cdef int32_t kold
    cdef double cum[4]
    cdef double beta_sum = V * beta, ab = alpha * beta, s, q, r, u
    cdef bint in_list
    cdef int32_t* pend = NULL
    cdef bint dense = n_wk != NULL
    cdef int32_t* wrow
    cdef int32_t* drow
    cdef int32_t* wl
    cdef int32_t* prow = NULL
    cdef Py_ssize_t i_end = doc_ptr[d_hi]
    # n_k may have changed since the last call (another partition's moves)
    for t in range(K):
        inv[t] = 1.0 / (n_k[t] + beta_sum)
        c[t] = alpha * inv[t]
    for d in range(d_lo, d_hi):
        if doc_ptr[d + 1] == doc_ptr[d]:
            continue
        drow = n_dk + d * K
        # the document's topics (a branch-free scan of its counts), their c, and r and s
        # afresh: no drift carried across documents
        n_d = 0
        for t in range(K):
            dnz[n_d] = <int32_t> t
            n_d += drow[t] > 0
        r = 0.0
        for j in range(n_d):
            t = dnz[j]
            dpos[t] = <int32_t> j      # read for the document's topics only
            c[t] = (drow[t] + alpha) * inv[t]
            r += drow[t] * inv[t]
        s = _sum_doubles(inv, K)
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            # the counts a token reads are scattered over its word's row (V K int32 outgrow
            # the caches at large K): fetch the next token's, and the word list of the one
            # after, while this one is drawn (hints only: no effect on the draws)
            if i + 2 < i_end:
                w = words[i + 2]
                __builtin_prefetch(wnz + loff[w])
                __builtin_prefetch(wn + w)
            if i + 1 < i_end:
                w = words[i + 1]
                wl = wnz + loff[w]
                if dense:
                    __builtin_prefetch(n_wk + w * K + z[i + 1])
                # its next two lines unconditionally (most lists end there: no loop exit to
                # mispredict; a line past a short list is a neighbour's, or none: a hint)
                __builtin_prefetch(wl + 16)
                __builtin_prefetch(wl + 32)
                for j in range(48, 2 * wn[w], 16):
                    __builtin_prefetch(wl + j)
            w = words[i]
            k = z[i]
            wrow = n_wk + w * K
            wl = wnz + loff[w]
            if pos != NULL:
                prow = pos + w * K
            # remove the token
            s -= inv[k]
            r -= drow[k] * inv[k]
            if dense:
                wrow[k] -= 1
            drow[k] -= 1
            n_k[k] -= 1
            inv[k] = 1.0 / (n_k[k] + beta_sum)
            c[k] = (drow[k] + alpha) * inv[k]
            s += inv[k]
            r += drow[k] * inv[k]
            if drow[k] == 0:
                n_d -= 1
                j = dpos[k]
                dnz[j] = dnz[n_d]
                dpos[dnz[j]] = <int32_t> j
            # word bucket q (topics of the word), document bucket beta r (topics of the
            # document), smoothing bucket alpha beta s (all topics)
            # (the word's list still counts the token: its pair jk loses the count only
            # if the token moves, so a token that keeps its topic leaves the list alone)
            kold = <int32_t> k
            n_w = wn[w]
            q = dptm_word_bucket(wl, n_w, c, kold, cumq, cum, &jk)
            u = next_uniform(rng) * (q + beta * r + ab * s)
            in_list = u < q
            if in_list:
                j = dptm_word_search(wl, n_w, cumq, cum, jk, u)
                k = wl[2 * j]
            elif u < q + beta * r and n_d > 0:
                k = dptm_scan_doc(dnz, n_d, drow, inv, (u - q) / beta)
            else:
                k = dptm_scan_smooth(inv, K, (u - q - beta * r) / ab)
            # add it back with its new topic; the word-row count (not read by the sampler,
            # which reads the list) one token later, after a prefetch of its line
            z[i] = <int32_t> k
            s -= inv[k]
            r -= drow[k] * inv[k]
            if dense:
                if pend != NULL:
                    pend[0] += 1
                pend = wrow + k
                __builtin_prefetch(pend)
            drow[k] += 1
            n_k[k] += 1
            inv[k] = 1.0 / (n_k[k] + beta_sum)
            c[k] = (drow[k] + alpha) * inv[k]
            s += inv[k]
            r += drow[k] * inv[k]
            if k != kold:
                dptm_list_move_at(wl, wn + w, jk, <int32_t> k, j if in_list else n_w, prow)
            if drow[k] == 1:
                dpos[k] = <int32_t> n_d
                dnz[n_d] = <int32_t> k
                n_d += 1
        # leave the document: its topics' c back to alpha inv
        for j in range(n_d):
            t = dnz[j]
            c[t] = alpha * inv[t]
    if pend != NULL:
        pend[0] += 1
