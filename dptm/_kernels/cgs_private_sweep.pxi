cdef inline int64_t _geometric_capped(bitgen_t* rng, double scale, int64_t cap) noexcept nogil:
    """min(floor(E * scale), cap) for one standard exponential E (numpy's ziggurat
    ``random_standard_exponential``, the draw of ``Generator.standard_exponential()``).
    With ``scale = -1 / log(q)``, floor(E * scale) counts the failures before the first
    success of independent trials failing with probability q: P(G >= g) = P(E >= -g log q)
    = q^g exactly (no logarithm per draw)."""
    cdef double x = random_standard_exponential(rng) * scale
    if x >= <double> cap:
        return cap
    return <int64_t> x


cdef inline int64_t _next_selected(bitgen_t* rng, int mode, double scale, int64_t p, int64_t end,
                                   int64_t* sel_left) noexcept nogil:
    """The first token >= p selected by ``noisy_gibbs_sweep`` (``end`` if none; draws
    nothing once p reaches ``end``): p itself in SELECT_ALL and SELECT_TABLE (every token is a
    candidate), p plus a geometric gap in SELECT_GAPS, and in SELECT_RUNS p if the run of
    selected tokens has ``sel_left`` > 0 tokens left, else after skipped tokens, each
    followed by a fresh run length."""
    if p >= end:
        return end
    if mode == SELECT_GAPS:
        return p + _geometric_capped(rng, scale, end - p)
    if mode == SELECT_RUNS:
        while sel_left[0] == 0:
            p += 1                                      # token p is not selected
            if p >= end:
                return end
            sel_left[0] = _geometric_capped(rng, scale, end - p)
        sel_left[0] -= 1
    return p


cdef extern from "_kernels/cgs_private_sweep.h":
    void dptm_atomic_add_i32(int32_t* p, int32_t v) noexcept nogil


# Which tokens a noisy sweep resamples.
cdef enum SelectionMode:
    SELECT_NONE = -1     # rate 0: nothing
    SELECT_ALL = 0       # every token (no selection draw)
    SELECT_TABLE = 1     # token by token, at the rate of its (word, topic) in the table
    SELECT_GAPS = 2      # rate <= 0.75: a geometric gap before each selected token
    SELECT_RUNS = 3      # rate > 0.75: geometric runs of selected tokens between skips


cdef int _selection_mode(double rate, bint table, double* scale) noexcept:
    """The SelectionMode of ``noisy_gibbs_sweep`` for ``rate`` (and its geometric scale)."""
    scale[0] = 0.0
    if table:
        return SELECT_TABLE
    if rate >= 1.0:
        return SELECT_ALL
    if not rate > 0.0:
        return SELECT_NONE
    if rate <= 0.75:
        # one exponential per selected token; above 0.75 one per skipped token is cheaper
        scale[0] = -1.0 / log1p(-rate)
        return SELECT_GAPS
    scale[0] = -1.0 / log(rate)
    return SELECT_RUNS


cdef extern from "_kernels/cgs_private_sweep.h":
    void dptm_prefetch_r(const void* p, Py_ssize_t nbytes) noexcept nogil
    void dptm_prefetch_w(const void* p, Py_ssize_t nbytes) noexcept nogil


cdef extern from "_kernels/cgs_private_sweep.h":
    int DPTM_LIST_PAD
    const double dptm_zero_one[2]
    int dptm_leave(double* cnt, Py_ssize_t jk, int same) noexcept nogil
    int dptm_draws(const double* cum, Py_ssize_t nx, Py_ssize_t n, double u,
                   int same) noexcept nogil
    double dptm_doc_bucket(const float* f, const double* cnt, const int32_t* nz, Py_ssize_t n,
                           double* cum, const float* pf) noexcept nogil
    Py_ssize_t dptm_count_le(const double* cum, Py_ssize_t m, double u) noexcept nogil
    Py_ssize_t dptm_doc_take(const int32_t* c, Py_ssize_t K, int32_t* nz, double* cnt,
                             int32_t* pos, int64_t* n_k) noexcept nogil
    void dptm_doc_put(int32_t* c, int64_t* n_k, const int32_t* nz, const double* cnt,
                      Py_ssize_t n) noexcept nogil


# Word-factor rows of at most this many topics are prefetched whole for a later token (a
# few cache lines); longer rows at the document's topics only.
DEF PREFETCH_MAX_TOPICS = 128
# Uniforms drawn ahead when every token is resampled (one uniform per token).
DEF UNIFORM_BATCH = 64
# The row prefetches are for the token this many tokens ahead, when every token is resampled.
DEF PREFETCH_AHEAD = 10


cdef inline Py_ssize_t _first_above(const double* sums, Py_ssize_t n, double u) noexcept nogil:
    """The first i with sums[i] > u in non-decreasing ``sums`` (n - 1 if none), by binary
    search: the linear scan's answer in O(log n)."""
    cdef Py_ssize_t lo = 0, hi = n - 1, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if sums[mid] > u:
            hi = mid
        else:
            lo = mid + 1
    return lo


cdef Py_ssize_t _word_bucket(const float* frow, const double* crow, Py_ssize_t K,
                             double u) noexcept nogil:
    """The word bucket's topic: the first t with sum_{t' <= t} frow[t'] > u (running sums
    in double, left to right; K - 1 if none). ``crow`` (NULL: linear scan) holds the
    running sums at the end of each block of WORD_BLOCK topics: the first block whose end
    sum exceeds u (the last block if none), then the scan inside it continued from the
    previous block's end sum (the same doubles, so the linear scan's result)."""
    cdef Py_ssize_t t, lo = 0, t1 = K
    cdef double acc = 0.0
    if crow != NULL:
        lo = _first_above(crow, (K + WORD_BLOCK - 1) // WORD_BLOCK, u)
        acc = crow[lo - 1] if lo > 0 else 0.0
        t1 = min(lo * WORD_BLOCK + WORD_BLOCK, K)
        lo = lo * WORD_BLOCK
    for t in range(lo, t1):
        acc = acc + frow[t]
        if acc > u:
            return t
    return t1 - 1


cdef inline Py_ssize_t _leave(double* cnt, int32_t* nz, int32_t* pos, int32_t* drow,
                              Py_ssize_t k, bint same, Py_ssize_t* jp, Py_ssize_t n_nz,
                              Py_ssize_t none) noexcept nogil:
    """A token of topic ``k`` leaves ``_noisy_block``'s document list (``same``: its entry
    is the one owed a count, ``jp[0]``, and the two cancel); an emptied entry is replaced
    by the list's last. Returns the list's new length."""
    cdef Py_ssize_t jk = pos[k]
    if same:
        jp[0] = none
    if dptm_leave(cnt, jk, same):
        drow[k] = 0                             # out of the list: not put back
        n_nz -= 1
        nz[jk] = nz[n_nz]
        cnt[jk] = cnt[n_nz]
        pos[nz[jk]] = <int32_t> jk
        nz[n_nz] = 0                            # a padding entry again
        cnt[n_nz] = 0.0
        if jp[0] == n_nz:
            jp[0] = jk
    return n_nz


# _noisy_block's two compiled forms: every token resampled (_Every, SELECT_ALL: no selection
# draw, test or call in the token's code) and the other selection modes (_Some); the tag
# pointer (NULL) only picks the form
cdef struct _Every:
    char unused
cdef struct _Some:
    char unused
ctypedef fused sel_t:
    _Every
    _Some


cdef Py_ssize_t _noisy_block(const int64_t* doc_ptr, Py_ssize_t d_lo, Py_ssize_t d_hi,
                             const int32_t* words, int32_t* z, int32_t* n_wk, int32_t* n_dk,
                             int64_t* n_k, const float* word_factor, const double* word_mass,
                             const double* rate_table, Py_ssize_t K,
                             double alpha, int mode, double scale, bitgen_t* rng, double* cum,
                             int32_t* nz, double* cnt, int32_t* pos, bint shared,
                             const double* word_blk, sel_t* form) noexcept nogil:
    """The sweep of ``noisy_gibbs_sweep`` over documents [d_lo, d_hi) with one stream
    (``form``: a NULL ``_Every*`` for SELECT_ALL, a NULL ``_Some*`` for the others).

    ``n_k`` receives the topic-total changes (the totals themselves, or a zeroed delta
    buffer); ``shared``: other threads update ``n_wk`` concurrently (atomic adds); ``n_wk``
    NULL: not updated (the caller does it from the topics).
    ``word_blk`` (NULL: linear scan for the word bucket) holds each word's running sums of
    its word-factor row (double, topic order) at the end of each block of WORD_BLOCK
    topics (``_word_bucket``). Scratch: ``cum`` (K + DPTM_LIST_PAD doubles), ``cnt`` and
    ``nz`` (K + DPTM_LIST_PAD + 1 each: the list, its padding, the slot of no owed
    count), ``pos`` (K). Returns the number of tokens resampled."""
    cdef Py_ssize_t d, k, w, j, jk, knew, wn = 0, n_nz = 0
    # the list entry owed one count; none: the slot after the padding (topic 0, a count
    # nobody reads), so that owing, paying and weighing it need no branch
    cdef Py_ssize_t none = K + DPTM_LIST_PAD, jp = none
    cdef double owed
    # long rows only: the owed count saves the wait on the previous draw, which short
    # rows (a short bucket) do not pay back
    cdef bint owe = K > PREFETCH_MAX_TOPICS
    cdef Py_ssize_t nb = (K + WORD_BLOCK - 1) // WORD_BLOCK
    cdef Py_ssize_t n_sampled = 0
    cdef int64_t i, ip, cur, end, doc_end, sel_left = 0
    cdef double q, u, a_w
    cdef bint hit = False
    cdef double ubuf[UNIFORM_BATCH]
    cdef Py_ssize_t ub = 0, ue = 0
    cdef const float* frow
    cdef const float* pf
    cdef int32_t* drow = NULL
    # pos is read for any topic of the word bucket (checked against nz): defined values
    memset(pos, 0, K * sizeof(int32_t))
    cum[0] = 0.0                                # read by dptm_draws for an empty list
    nz[none] = 0
    cnt[none] = 0.0
    i = doc_ptr[d_lo]
    end = doc_ptr[d_hi]
    d = d_lo - 1
    doc_end = i                                 # no document loaded yet
    if sel_t is _Some:
        if mode == SELECT_RUNS and i < end:
            sel_left = _geometric_capped(rng, scale, end - i)
        i = _next_selected(rng, mode, scale, i, end, &sel_left)
    while i < end:
        cur = i
        if sel_t is _Every:
            i = cur + 1
            # every token selected: the rows are requested PREFETCH_AHEAD tokens ahead (a
            # token's sampling is much shorter than a load from memory)
            ip = i + PREFETCH_AHEAD - 1 if i + PREFETCH_AHEAD - 1 < end else i
        else:
            # locating the next selected token first keeps the selection draws off
            # this token's critical path (the per-token cost otherwise grows as the rate
            # falls)
            i = _next_selected(rng, mode, scale, cur + 1, end, &sel_left)
            ip = i
        if ip < end:
            # that token's rows load while this one is sampled (its word is random: the
            # secret visiting order): its word factor at the topics it will read and its
            # count row (whole rows when short; for long rows the document's topics, if it
            # is in the same document, and the count it will decrement), its mass
            wn = words[ip]
            if K <= PREFETCH_MAX_TOPICS:
                dptm_prefetch_r(word_factor + wn * K, K * sizeof(float))
            dptm_prefetch_r(word_mass + wn, 1)
            if n_wk != NULL:
                if K <= PREFETCH_MAX_TOPICS:
                    dptm_prefetch_w(n_wk + wn * K, K * sizeof(int32_t))
                else:
                    dptm_prefetch_w(n_wk + wn * K + z[ip], 1)
        w = words[cur]
        k = z[cur]
        if sel_t is _Some:
            if mode == SELECT_TABLE:
                if next_uniform(rng) >= rate_table[w * K + k]:
                    continue
        if cur >= doc_end:
            # first selected token of a document: the previous one's counts put back, this
            # one's non-zero topics and counts taken (the tokens update only the copy: no
            # count row or total written at an address known only after the draw)
            if drow != NULL:
                cnt[jp] += 1.0
                jp = none
                dptm_doc_put(drow, n_k, nz, cnt, n_nz)
            d += 1
            while doc_ptr[d + 1] <= cur:
                d += 1
            doc_end = doc_ptr[d + 1]
            drow = n_dk + d * K
            n_nz = dptm_doc_take(drow, K, nz, cnt, pos, n_k)
            if sel_t is _Every:
                if owe:
                    n_nz = _leave(cnt, nz, pos, drow, k, False, &jp, n_nz, none)
        n_sampled += 1
        frow = word_factor + w * K
        a_w = alpha * word_mass[w]
        # the token leaves its topic: a count owed to that entry cancels it (every token
        # resampled, long rows: the previous token of its document did it, see below)
        if sel_t is _Some:
            n_nz = _leave(cnt, nz, pos, drow, k, pos[k] == jp, &jp, n_nz, none)
        elif not owe:                           # nothing owed: no cancel to select
            n_nz = _leave(cnt, nz, pos, drow, k, False, &jp, n_nz, none)
        # long rows: that token's word factor at this document's topics, prefetched in
        # the bucket's pass (if it is in this document)
        pf = word_factor + wn * K if K > PREFETCH_MAX_TOPICS and ip < doc_end else NULL
        # the list's entries with the counts in cnt (not waiting for the previous token's
        # draw), then the count the previous token added, owed to entry jp, as one more
        # entry after them (long rows): the document bucket's total is the same
        q = dptm_doc_bucket(frow, cnt, nz, n_nz, cum, pf)
        owed = dptm_zero_one[jp != none]
        q = q + <double> frow[nz[jp]] * owed
        if sel_t is _Every:
            # every token draws one uniform and nothing else: drawn ahead in batches (the
            # same uniforms in the same order, none past the block's last token), so the
            # generator's call is not in the token's code
            if ub == ue:
                ue = min(UNIFORM_BATCH, end - cur)
                for ub in range(ue):
                    ubuf[ub] = next_uniform(rng)
                ub = 0
            u = ubuf[ub] * (q + a_w)
            ub += 1
        else:
            u = next_uniform(rng) * (q + a_w)
        cnt[jp] += owed                         # paid (the address is known early)
        if u < q:
            # the first j with cum[j] > u, counted without a branch: cum increases, so the
            # entries <= u are a prefix (no mispredicted loop exit); j >= n_nz: the owed
            # entry's topic. The drawn entry is owed a count in turn (long rows; short
            # rows: added at once), its count is > 0: the topic stays in the list.
            if sel_t is _Every:
                # whether the next token (same document) leaves the entry this draw is
                # owed to, from u and three sums: its leaving waits on this, not on the
                # count
                hit = False
                if owe and i < doc_end:
                    jk = pos[z[i]]
                    hit = dptm_draws(cum, jk, n_nz, u, jk == jp)
            j = dptm_count_le(cum, n_nz, u)
            j = j if j < n_nz else jp
            knew = nz[j]
            jp = j
            if not owe:
                cnt[jp] += 1.0
                jp = none
        else:
            jp = none
            hit = False
            knew = _word_bucket(frow, word_blk + w * nb if word_blk != NULL else NULL, K,
                                (u - q) / alpha)
            j = pos[knew]                       # stale for a topic not in the list
            if j < n_nz and nz[j] == knew:
                cnt[j] += 1.0
            else:
                pos[knew] = <int32_t> n_nz
                nz[n_nz] = <int32_t> knew
                cnt[n_nz] = 1.0
                n_nz += 1
                nz[n_nz + DPTM_LIST_PAD - 1] = 0    # the padding's new last entry
                cnt[n_nz + DPTM_LIST_PAD - 1] = 0.0
        if shared and n_wk != NULL:
            if knew != k:
                z[cur] = <int32_t> knew
                dptm_atomic_add_i32(n_wk + w * K + k, -1)
                dptm_atomic_add_i32(n_wk + w * K + knew, 1)
        else:
            # without a branch on whether the topic changed (a coin flip for the
            # predictor): a token that kept it takes 1 off and adds it back
            z[cur] = <int32_t> knew
            if n_wk != NULL:                    # else updated by the caller after the sweep
                n_wk[w * K + k] -= 1
                n_wk[w * K + knew] += 1
        if sel_t is _Every:
            if owe and i < doc_end:
                # the next token leaves its topic now (nothing changes the list between;
                # short rows owe nothing: there it leaves in its own turn)
                n_nz = _leave(cnt, nz, pos, drow, z[i], hit, &jp, n_nz, none)
    if drow != NULL:
        cnt[jp] += 1.0
        dptm_doc_put(drow, n_k, nz, cnt, n_nz)
    return n_sampled


cdef inline Py_ssize_t _noisy_block_any(const int64_t* doc_ptr, Py_ssize_t d_lo,
                                        Py_ssize_t d_hi, const int32_t* words, int32_t* z,
                                        int32_t* n_wk, int32_t* n_dk, int64_t* n_k,
                                        const float* word_factor, const double* word_mass,
                                        const double* rate_table, Py_ssize_t K, double alpha,
                                        int mode, double scale, bitgen_t* rng, double* cum,
                                        int32_t* nz, double* cnt, int32_t* pos, bint shared,
                                        const double* word_blk) noexcept nogil:
    """``_noisy_block`` in the form for ``mode`` (SELECT_ALL: every token resampled)."""
    if mode == SELECT_ALL:
        return _noisy_block(doc_ptr, d_lo, d_hi, words, z, n_wk, n_dk, n_k, word_factor,
                            word_mass, rate_table, K, alpha, mode, scale, rng, cum, nz, cnt,
                            pos, shared, word_blk, <_Every*> NULL)
    return _noisy_block(doc_ptr, d_lo, d_hi, words, z, n_wk, n_dk, n_k, word_factor,
                        word_mass, rate_table, K, alpha, mode, scale, rng, cum, nz, cnt, pos,
                        shared, word_blk, <_Some*> NULL)


cdef _check_word_groups(const int64_t[::1] word_ptr, const int64_t[::1] word_tokens,
                        Py_ssize_t V, Py_ssize_t n_tokens):
    if word_ptr.shape[0] != V + 1 or word_tokens.shape[0] != n_tokens \
            or word_ptr[0] != 0 or word_ptr[V] != n_tokens:
        raise ValueError("word_ptr / word_tokens must group the token positions by word")


cdef _check_noisy_args(const int32_t[:, ::1] n_wk, const float[:, ::1] word_factor,
                       const double[::1] word_mass, double alpha, const double[:, ::1] rate_table):
    cdef Py_ssize_t V = n_wk.shape[0], K = n_wk.shape[1]
    if word_factor.shape[0] != V or word_factor.shape[1] != K:
        raise ValueError("word_factor must have the shape of n_wk")
    if word_mass.shape[0] != V:
        raise ValueError("word_mass must have one entry per word")
    if not alpha > 0.0:
        raise ValueError("alpha must be > 0")
    if rate_table.shape[0] > 0 and (rate_table.shape[0] != V or rate_table.shape[1] != K):
        raise ValueError("rate_table must be empty or have the shape of n_wk")


def noisy_gibbs_sweep_blocks(const int64_t[::1] doc_ptr, const int32_t[::1] words,
                             int32_t[::1] z, int32_t[:, ::1] n_wk, int32_t[:, ::1] n_dk,
                             int64_t[::1] n_k, const float[:, ::1] word_factor,
                             const double[::1] word_mass, double alpha, double rate,
                             const double[:, ::1] rate_table, const int64_t[::1] block_ptr,
                             list bit_generators, int n_threads, *,
                             const int64_t[::1] word_ptr=None,
                             const int64_t[::1] word_tokens=None,
                             int32_t[:, ::1] thread_counts=None,
                             const double[:, ::1] word_blocks=None, bint recount=False):
    """``noisy_gibbs_sweep`` on blocks of documents, in parallel, exactly.

    Block ``b`` holds documents ``block_ptr[b]:block_ptr[b + 1]`` and draws everything
    (its selection process, restarted at its first token, and its topics) from its own
    ``bit_generators[b]``, as ``noisy_gibbs_sweep`` would over those documents alone. The
    word factor is fixed for the sweep and a block reads and writes only its documents'
    ``z`` and ``n_dk`` rows, so the blocks are independent given the snapshot: running them
    on ``n_threads`` OpenMP threads (any order) gives the same ``z`` and ``n_dk``, and the
    true counts ``n_wk`` (atomic integer adds) and ``n_k`` (per-block changes summed after
    the sweep) are the same as well. The result depends on the blocks and their streams,
    never on ``n_threads``; with one block and one generator it is ``noisy_gibbs_sweep``'s.

    The optional arguments are keyword-only.

    ``word_blocks`` (V x ceil(K / 16), optional; None: the linear scan): ``word_factor``
    rows' running sums in double, topic order, at the end of each block of 16 topics
    (``word_block_sums``, or ``noisy_snapshot``'s factor pass); the word bucket is a binary
    search over the blocks, then a scan of one block's word factor continuing the previous
    block's sum: the same doubles and comparisons, so the linear scan's result, in
    O(log K + 16) instead of O(K).

    ``word_ptr``, ``word_tokens`` (optional): the token positions grouped by word (word
    ``w``'s tokens are ``word_tokens[word_ptr[w]:word_ptr[w + 1]]``). The sweep never reads
    ``n_wk`` (it samples from the fixed word factor), so with them the blocks only write
    ``z`` and ``n_dk`` and each row of ``n_wk`` is counted again after the sweep from its
    word's topics, in parallel over words (no atomic adds, no cache line written by two
    threads; on one thread, rows written in word order instead of a random count per
    token, the cheaper way for long rows). Without them, ``n_wk`` is updated as tokens
    move (atomic adds on several threads). ``n_wk`` must hold the counts of ``z`` (as in a
    fit): the result is then the same integer counts either way.

    ``recount`` (without ``word_ptr`` and ``thread_counts``): ``n_wk`` is neither read nor
    written; the caller's next ``noisy_snapshot`` counts it from ``z`` (its ``topics``
    argument) in the pass that draws each row's noise, instead of a pass over ``n_wk``
    here and another there.

    ``thread_counts`` (optional, without ``word_ptr``; (n_threads - 1) x (V K) int32, all
    zero): thread 0 updates ``n_wk`` as tokens move and thread t > 0 its row t - 1 of
    ``thread_counts`` (plain adds: each thread owns its counts), added into ``n_wk`` after
    the sweep, in parallel over words, and zeroed again for the next sweep. The same integer
    counts again, without atomic adds or a pass over the tokens by word (short rows: on 2
    threads at K = 50, the sweep at the per-token cost of one thread).

    The generators are used without their locks: they must belong to this sweep alone.

    Returns
    -------
    int : number of tokens resampled.
    """
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1, V = n_wk.shape[0], K = n_wk.shape[1]
    cdef Py_ssize_t n_blocks = block_ptr.shape[0] - 1, b, k, n_sampled = 0
    cdef double scale = 0.0
    cdef int mode
    _check_noisy_args(n_wk, word_factor, word_mass, alpha, rate_table)
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    if n_blocks < 0 or len(bit_generators) != n_blocks:
        raise ValueError("need one bit generator per block")
    if n_blocks == 0 or block_ptr[0] != 0 or block_ptr[n_blocks] != D:
        raise ValueError("block_ptr must start at 0 and end at the number of documents")
    for b in range(n_blocks):
        if block_ptr[b + 1] < block_ptr[b]:
            raise ValueError("block_ptr must be non-decreasing")
    cdef Py_ssize_t n_wblk = (K + WORD_BLOCK - 1) // WORD_BLOCK
    if word_blocks is not None and (word_blocks.shape[0] != V or word_blocks.shape[1] != n_wblk):
        raise ValueError(f"word_blocks must have shape (V, ceil(K / {WORD_BLOCK})) = "
                         f"({V}, {n_wblk})")
    mode = _selection_mode(rate, rate_table.shape[0] > 0, &scale)
    if mode == SELECT_NONE or D <= 0 or K <= 0:
        return 0
    cdef bitgen_t** rngs = <bitgen_t**> malloc(n_blocks * sizeof(bitgen_t*))
    # per-block topic-total changes, each block's in cache lines of its own (adjacent
    # blocks run at the same time on two threads: a shared line would move between the
    # cores at every token changing a topic at its ends)
    cdef Py_ssize_t Kp = (K + 7) & ~(<Py_ssize_t> 7)
    cdef void* dk_raw = NULL
    cdef int64_t* dk = <int64_t*> _own_lines(n_blocks * Kp * sizeof(int64_t), &dk_raw)
    if rngs == NULL or dk == NULL:
        free(rngs); free(dk_raw)
        raise MemoryError()
    memset(dk, 0, n_blocks * Kp * sizeof(int64_t))
    cdef const int32_t* wp = &words[0] if words.shape[0] else NULL
    cdef int32_t* zp = &z[0] if z.shape[0] else NULL
    cdef const double* bp = (&word_blocks[0, 0] if word_blocks is not None and V > 0
                             else NULL)
    cdef const double* rp = &rate_table[0, 0] if mode == SELECT_TABLE else NULL
    cdef double* cum
    cdef int32_t* nz
    cdef int32_t* pos
    cdef double* cnt
    if recount and (word_ptr is not None or word_tokens is not None
                    or thread_counts is not None):
        free(rngs); free(dk_raw)
        raise ValueError("recount takes neither word_ptr / word_tokens nor thread_counts")
    cdef bint deferred = word_ptr is not None and word_tokens is not None
    cdef bint per_thread = (thread_counts is not None and not deferred and n_threads > 1
                            and V * K > 0)
    cdef bint shared = n_threads > 1 and not per_thread
    cdef int32_t* tc = NULL
    cdef int32_t* mine
    cdef int32_t* src
    cdef Py_ssize_t tid, VK = V * K, n_tc = 0, c
    cdef int32_t* wk_target = &n_wk[0, 0]
    cdef Py_ssize_t w, j
    # per-thread scratch (the running sums, the document's non-zero topics, their
    # positions and counts), each thread's in cache lines of its own; tokens resampled per
    # block
    cdef size_t scratch_bytes = (((2 * K + 2 * DPTM_LIST_PAD + 1) * sizeof(double)
                                  + (2 * K + DPTM_LIST_PAD + 1) * sizeof(int32_t) + 63) // 64) * 64
    cdef void* scratch_raw = NULL
    cdef char* scratch = NULL
    cdef int64_t* sampled = NULL
    if deferred:
        try:
            _check_word_groups(word_ptr, word_tokens, V, words.shape[0])
        except ValueError:
            free(rngs); free(dk_raw)
            raise
    if deferred or recount:
        # the blocks write their n_wk changes nowhere: n_wk is counted again below (or by
        # the next snapshot)
        wk_target = NULL
    if per_thread:
        if thread_counts.shape[0] < n_threads - 1 or thread_counts.shape[1] != VK:
            free(rngs); free(dk_raw)
            raise ValueError(f"thread_counts must be at least (n_threads - 1) x (V K) = "
                             f"{n_threads - 1} x {VK}, got {thread_counts.shape[0]} x "
                             f"{thread_counts.shape[1]}")
        tc = &thread_counts[0, 0]
        n_tc = n_threads - 1
    try:
        scratch = <char*> _own_lines(n_threads * scratch_bytes, &scratch_raw)
        sampled = <int64_t*> calloc(n_blocks, sizeof(int64_t))
        if scratch == NULL or sampled == NULL:
            raise MemoryError()
        for b in range(n_blocks):
            rngs[b] = get_bitgen(bit_generators[b])
        tid = 0
        cum = NULL
        nz = pos = mine = NULL
        cnt = NULL
        with nogil:
            # one parallel region for the sweep and the count update (the worksharing
            # loops' barriers order them): one thread wake-up per sweep, not two
            with parallel(num_threads=n_threads):
                tid = threadid()
                cum = <double*> (scratch + tid * scratch_bytes)
                cnt = cum + K + DPTM_LIST_PAD
                nz = <int32_t*> (cnt + K + DPTM_LIST_PAD + 1)
                pos = nz + K + DPTM_LIST_PAD + 1
                # per-thread buffers: thread 0 writes n_wk, thread t > 0 row t - 1 of tc
                mine = tc + (tid - 1) * VK if per_thread and tid > 0 else wk_target
                for b in prange(n_blocks, schedule="dynamic"):
                    sampled[b] = _noisy_block_any(&doc_ptr[0], block_ptr[b], block_ptr[b + 1],
                                                  wp, zp, mine, &n_dk[0, 0], dk + b * Kp,
                                                  &word_factor[0, 0], &word_mass[0], rp, K,
                                                  alpha, mode, scale, rngs[b], cum, nz, cnt,
                                                  pos, shared, bp)
                dptm_omp_barrier()              # every block swept before the counts move
                if deferred:
                    # word frequencies are skewed: small chunks of words handed out as
                    # threads free up; each row is still written by one thread, so the
                    # counts are the same
                    for w in prange(V, schedule="dynamic", chunksize=16):
                        if (w + 1) % 16 != 0 and w + 1 < V:
                            # the next row of the chunk loads while this one is counted
                            dptm_prefetch_w(&n_wk[w + 1, 0], K * sizeof(int32_t))
                        # the row counted again from the word's topics (n_wk held their
                        # counts before the sweep: the same counts as taking each token
                        # off its old topic, with no copy of the old topics and one
                        # random load and add per token instead of two)
                        memset(&n_wk[w, 0], 0, K * sizeof(int32_t))
                        for j in range(word_ptr[w], word_ptr[w + 1]):
                            n_wk[w, zp[word_tokens[j]]] += 1
                if per_thread:
                    # every thread's changes into n_wk, the buffers zeroed for the next sweep
                    for w in prange(V, schedule="static"):
                        for j in range(n_tc):
                            src = tc + j * VK + w * K
                            for c in range(K):
                                n_wk[w, c] += src[c]
                                src[c] = 0
            for b in range(n_blocks):
                n_sampled += sampled[b]
                for k in range(K):
                    n_k[k] += dk[b * Kp + k]
    finally:
        free(rngs)
        free(dk_raw)
        free(scratch_raw)
        free(sampled)
    return n_sampled


def word_block_sums(const float[:, ::1] word_factor, double[:, ::1] out, int n_threads=1):
    """``out[w, b]`` = the running sum (double, left to right) of ``word_factor[w]`` at the
    end of topic block ``b`` (topics ``[16 b, 16 b + 16)`` cut at K), i.e. the columns
    15, 31, ..., K - 1 of ``word_factor.astype(np.float64).cumsum(axis=1)``: the two-level
    word-bucket table of ``noisy_gibbs_sweep_blocks`` (``noisy_snapshot`` fills it in its
    factor pass)."""
    cdef Py_ssize_t V = word_factor.shape[0], K = word_factor.shape[1], w, k
    cdef Py_ssize_t nb = (K + WORD_BLOCK - 1) // WORD_BLOCK
    cdef double acc
    if out.shape[0] != V or out.shape[1] != nb:
        raise ValueError(f"out must have shape (V, ceil(K / {WORD_BLOCK})) = ({V}, {nb})")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    with nogil:
        for w in prange(V, num_threads=n_threads, schedule="static"):
            acc = 0.0
            for k in range(K):
                acc = acc + word_factor[w, k]
                if k % WORD_BLOCK == WORD_BLOCK - 1 or k == K - 1:
                    out[w, k // WORD_BLOCK] = acc
