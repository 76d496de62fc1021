def gibbs_counts(const int64_t[::1] doc_ptr, const int32_t[::1] words, const int32_t[::1] z,
                 int32_t[:, ::1] n_wk, int32_t[:, ::1] n_dk, int64_t[::1] n_k,
                 int n_threads=1):
    """Set ``n_wk`` (V x K), ``n_dk`` (D x K) and ``n_k`` (K) to the counts of the
    assignments ``z`` (their previous contents are overwritten, so ``np.empty`` arrays will
    do). The same integers for any ``n_threads``.

    Every row is written first by the thread that counts into it, in parallel: on a fresh
    array the page faults are shared by the threads (a fresh V x K array's faults cost
    more than the counting itself at K = 1000). ``n_dk`` is counted per document; for
    ``n_wk`` each of the ``n_threads`` threads owns a range of words and counts the tokens
    of its words.
    """
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1, V = n_wk.shape[0], K = n_wk.shape[1]
    cdef Py_ssize_t N = words.shape[0], d, i, j, lo, hi, nthr, rank, ahead
    cdef int32_t w, t
    cdef int32_t* row
    cdef int32_t* wk
    cdef const int32_t* zp
    cdef const int32_t* wp
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    if D < 0:
        raise ValueError("doc_ptr must have at least one entry")
    if n_dk.shape[0] != D or n_dk.shape[1] != K or n_k.shape[0] != K:
        raise ValueError(f"need n_dk ({D}, {K}) and n_k ({K},) for n_wk ({V}, {K}) and "
                         f"{D} documents")
    if z.shape[0] != N or doc_ptr[0] != 0 or doc_ptr[D] != N:
        raise ValueError("z and words must have one entry per token, doc_ptr from 0 to it")
    with nogil:
        for d in range(D):
            if doc_ptr[d + 1] < doc_ptr[d]:
                with gil:
                    raise ValueError("doc_ptr must be non-decreasing")
        for i in range(N):
            if not (0 <= words[i] < V and 0 <= z[i] < K):
                with gil:
                    raise ValueError(f"token {i}: word {words[i]} or topic {z[i]} out of "
                                     f"range (V = {V}, K = {K})")
    if K > 0:
        memset(&n_k[0], 0, K * sizeof(int64_t))
    if N == 0 or K == 0:
        if V * K > 0:
            memset(&n_wk[0, 0], 0, V * K * sizeof(int32_t))
        if D * K > 0:
            memset(&n_dk[0, 0], 0, D * K * sizeof(int32_t))
        return
    zp = &z[0]
    wp = &words[0]
    wk = &n_wk[0, 0]
    lo = hi = nthr = rank = ahead = 0
    with nogil, parallel(num_threads=n_threads):
        for d in prange(D, schedule="static"):
            row = &n_dk[d, 0]
            memset(row, 0, K * sizeof(int32_t))
            for j in range(doc_ptr[d], doc_ptr[d + 1]):
                row[zp[j]] += 1
        nthr = dptm_team_size()
        rank = dptm_team_rank()
        lo = V * rank // nthr
        hi = V * (rank + 1) // nthr
        if hi > lo:
            memset(wk + lo * K, 0, (hi - lo) * K * sizeof(int32_t))
        for i in range(N):
            # the row of a token some way ahead loads while this one is counted (random
            # words: at K = 1000 each count is a cache miss otherwise)
            ahead = i + 16
            if ahead < N and lo <= wp[ahead] < hi:
                __builtin_prefetch(wk + wp[ahead] * K + zp[ahead])
            w = wp[i]
            if lo <= w < hi:
                wk[w * K + zp[i]] += 1
    for i in range(N):
        n_k[zp[i]] += 1


cdef Py_ssize_t OUT_BLOCK = 16     # topics per block of gibbs_outputs' transpose


def gibbs_outputs(const int32_t[:, ::1] n_wk, const int32_t[:, ::1] n_dk, double alpha,
                  double beta, double[:, ::1] components, double[:, ::1] topic_word,
                  double[:, ::1] doc_topic, int n_threads=1):
    """GibbsLDA's released arrays from the final counts, in one parallel pass (every
    output row first written, so its pages faulted in, by the thread that fills it):

    - ``components[k, w] = n_wk[w, k] + beta`` (K x V);
    - ``topic_word[k, w] = components[k, w] / (c_k + V beta)``, ``c_k = sum_w n_wk[w, k]``
      (an exact integer sum; the row sums to 1 up to rounding);
    - ``doc_topic[d, k] = (n_dk[d, k] + alpha) / (n_d + K alpha)``, ``n_d = sum_k
      n_dk[d, k]``.

    The outputs are overwritten (``np.empty`` arrays will do). The same bits for any
    ``n_threads``. The transpose goes by blocks of 16 topics: a block reads 16 consecutive
    counts of each word row and writes 16 output rows sequentially.
    """
    cdef Py_ssize_t V = n_wk.shape[0], K = n_wk.shape[1], D = n_dk.shape[0]
    cdef Py_ssize_t nblk, blk, k0, k1, k, w, d
    cdef int64_t s
    cdef int64_t* tot
    cdef double vb, kb, inv
    cdef const int32_t* wk
    cdef const int32_t* src
    cdef const int32_t* drow
    cdef double* comp
    cdef double* crow
    cdef double* trow
    cdef double* trow_d
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    if (n_dk.shape[1] != K or components.shape[0] != K or components.shape[1] != V
            or topic_word.shape[0] != K or topic_word.shape[1] != V
            or doc_topic.shape[0] != D or doc_topic.shape[1] != K):
        raise ValueError(f"need components and topic_word ({K}, {V}) and doc_topic "
                         f"({D}, {K}) for n_wk ({V}, {K}) and n_dk "
                         f"({n_dk.shape[0]}, {n_dk.shape[1]})")
    if K == 0:
        return
    nblk = (K + OUT_BLOCK - 1) // OUT_BLOCK
    vb = V * beta
    kb = K * alpha
    # the topics' count totals, each entry written by the block that owns its topic
    tot = <int64_t*> calloc(K, sizeof(int64_t))
    if tot == NULL:
        raise MemoryError()
    wk = &n_wk[0, 0] if V > 0 else NULL
    comp = &components[0, 0] if V > 0 else NULL
    with nogil, parallel(num_threads=n_threads):
        if V > 0:
            for blk in prange(nblk, schedule="static"):
                k0 = blk * OUT_BLOCK
                k1 = k0 + OUT_BLOCK if k0 + OUT_BLOCK < K else K
                for w in range(V):
                    src = wk + w * K
                    for k in range(k0, k1):
                        tot[k] += src[k]
                        comp[k * V + w] = src[k] + beta
                for k in range(k0, k1):
                    crow = comp + k * V
                    trow = &topic_word[k, 0]
                    inv = tot[k] + vb
                    for w in range(V):
                        trow[w] = crow[w] / inv
        for d in prange(D, schedule="static"):
            drow = &n_dk[d, 0]
            trow_d = &doc_topic[d, 0]
            s = 0
            for k in range(K):
                s = s + drow[k]
            inv = s + kb
            for k in range(K):
                trow_d[k] = (drow[k] + alpha) / inv
    free(tot)


cdef void _fold_in_doc(const int32_t* words, Py_ssize_t n, const double* word_factor,
                       Py_ssize_t K, double alpha, int n_iter, int burn_in, bitgen_t* rng,
                       double* cum, int32_t* n_dk, int32_t* z, double* out) noexcept nogil:
    """``fold_in`` for one document of ``n`` tokens, its mean counts added to ``out``."""
    cdef Py_ssize_t i, k, t, it
    cdef double total
    cdef const double* wrow
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
            wrow = word_factor + words[i] * K
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
                out[t] += n_dk[t]
    for t in range(K):
        out[t] /= <double> (n_iter - burn_in)


def fold_in(const int64_t[::1] doc_ptr, const int32_t[::1] words,
            const double[:, ::1] word_factor, double alpha, int n_iter, int burn_in,
            list bit_generators, int n_threads=1):
    """Fold-in Gibbs sampling of held-out documents with the word factor held fixed.

    For each document ``d`` (with its own BitGenerator ``bit_generators[d]``), topics are
    initialised uniformly and each token with word ``w`` is redrawn ``n_iter`` times from
    ``p_k ∝ word_factor[w, k] * (n_dk[d, k] + alpha)`` (``word_factor = topic_word.T``).
    Each document has its own stream, so its result does not depend on the batch, nor on
    ``n_threads`` (documents run in parallel on that many OpenMP threads; the generators
    are used without their locks and must belong to this call).

    Returns
    -------
    mean_counts : ndarray (n_docs, K)
        ``n_dk`` averaged over the sweeps after the first ``burn_in``.
    """
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1, K = word_factor.shape[1]
    cdef Py_ssize_t d, n
    cdef int failed = 0
    if not 0 <= burn_in < n_iter:
        raise ValueError("need 0 <= burn_in < n_iter")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    if len(bit_generators) != D:
        raise ValueError("need one bit generator per document")
    out = np.zeros((D, K), dtype=np.float64)
    cdef double[:, ::1] mean_counts = out
    if D <= 0 or K <= 0:
        return out
    cdef bitgen_t** rngs = <bitgen_t**> malloc(D * sizeof(bitgen_t*))
    if rngs == NULL:
        raise MemoryError()
    cdef double* cum
    cdef int32_t* n_dk
    cdef int32_t* z
    try:
        for d in range(D):
            rngs[d] = get_bitgen(bit_generators[d])
        with nogil:
            for d in prange(D, num_threads=n_threads, schedule="dynamic"):
                n = doc_ptr[d + 1] - doc_ptr[d]
                if n > 0:
                    cum = <double*> malloc(K * sizeof(double))
                    n_dk = <int32_t*> malloc(K * sizeof(int32_t))
                    z = <int32_t*> malloc(n * sizeof(int32_t))
                    if cum == NULL or n_dk == NULL or z == NULL:
                        failed += 1
                    else:
                        _fold_in_doc(&words[doc_ptr[d]], n, &word_factor[0, 0], K, alpha,
                                     n_iter, burn_in, rngs[d], cum, n_dk, z,
                                     &mean_counts[d, 0])
                    free(cum)
                    free(n_dk)
                    free(z)
        if failed:
            raise MemoryError()
    finally:
        free(rngs)
    return out
