# ---------------------------------------------------------------------- AD-LDA sweeps
cdef struct Work:
    # one partition's buffers, each in cache lines of its own (threads share none)
    Py_ssize_t P, V, K
    int32_t* old           # V x K counts of the start of the sweep (P > 1)
    int32_t** wk           # per partition its V x K counts (wk[0] unused: n_wk in place)
    int64_t** nk           # per partition its K topic totals
    int32_t** lists        # sparse: per partition each word's (topic, count) pairs
    const int64_t* loff    # sparse: word w's pairs at lists[p] + loff[w] (int32 units), room
                           # for (loff[w + 1] - loff[w]) / 2 pairs: min(K, its tokens)
    int32_t** small        # sparse: per partition V + 2 K (list lengths, document list)
    double** dbuf          # per partition scratch: 3 K + NB
    bitgen_t** gens        # per partition a copy of its generator's bitgen_t (same state
                           # pointer: the draws are the generator's own)


cdef extern from "_kernels/cgs_adlda.h":
    void dptm_advise_huge(void* p, size_t n) noexcept nogil


cdef size_t HUGE_PAGE = 1 << 21


cdef void* _own_lines(size_t nbytes, void** raw) noexcept nogil:
    """``nbytes`` at a cache-line boundary inside an allocation padded by a line at each
    end, so that no other allocation shares its lines (``*raw`` is what to free). From
    4 MB: at a 2 MB boundary, advised to use huge pages."""
    cdef char* p
    cdef uintptr_t a
    if nbytes >= 2 * HUGE_PAGE:
        p = <char*> malloc(nbytes + 2 * HUGE_PAGE)
        raw[0] = <void*> p
        if p == NULL:
            return NULL
        a = (<uintptr_t> p + HUGE_PAGE) & ~(<uintptr_t> (HUGE_PAGE - 1))
        dptm_advise_huge(<void*> a, (nbytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1))
        return <void*> a
    p = <char*> malloc(nbytes + 128)
    raw[0] = <void*> p
    if p == NULL:
        return NULL
    return <void*> ((<uintptr_t> p + 64) & ~(<uintptr_t> 63))


# What the last sweep on a workspace left in step with the shared counts.
cdef enum SyncState:
    SYNC_NONE = 0
    SYNC_MERGED = 1            # a partitioned sweep, merged at its end
    SYNC_SPARSE_ROUNDS = 2     # sparse rounds
    SYNC_DENSE_ROUNDS = 3      # dense rounds


cdef class ADLDAWorkspace:
    """Buffers of ``gibbs_sweep_parallel`` / ``gibbs_sweep_sparse`` kept from one sweep to
    the next: per partition its copy of the word counts (partition 0 works in ``n_wk``),
    its topic totals, its per-word topic lists (sparse) and its scratch, each in cache lines
    of its own.

    Without a workspace a sweep allocates these, copies the counts into them and lets them
    go (a fresh V x K allocation per sweep costs its page faults again: about as much as
    the sweep at large K). With one, made for the same partitions count, V, K and
    kind and passed to consecutive sweeps of one state, the merge at the end of a sweep also
    writes the next sweep's copies and word lists (one pass over the V x K counts, in
    parallel over words), and a sweep allocates nothing. The draws are the same either
    way. The workspace is in step with the state it last swept; a sweep of another state,
    or of the same state after ``n_wk`` or ``n_k`` changed otherwise, must follow
    ``invalidate()`` (another ``n_wk`` array or changed ``n_k`` are detected; a change of
    ``n_wk`` alone is not). Memory: ``(P - 1 + [P > 1]) V K`` int32 for the copies (a
    sparse part's room for the positions of the topics in its word lists) and, if
    sparse, ``2 P sum_w min(K, c_w)`` int32 for the lists ((topic, count) pairs; ``c_w =
    word_counts[w]``, else K: a word's tokens have at most that many distinct topics).
    Buffers from 4 MB sit at 2 MB boundaries, advised to use transparent huge pages.

    Parameters
    ----------
    n_parts, n_words, n_topics : int
        Partitions P, vocabulary size V and topics K of the sweeps.
    sparse : bool
        For ``gibbs_sweep_sparse`` (else ``gibbs_sweep_parallel``).
    word_counts : array of V ints, optional
        Sparse: the tokens of each word in the corpora to be swept; each word's list then
        has room for ``min(K, word_counts[w])`` pairs instead of K (far smaller lists at
        large K: fewer pages to fault in, and the lists share the caches). A sparse sweep
        that builds the lists checks that no word of its counts has more tokens than its
        room (ValueError).
    """
    cdef Work w
    cdef readonly Py_ssize_t n_parts, n_words, n_topics
    cdef readonly bint sparse
    cdef void** raw
    cdef Py_ssize_t n_raw, cap_raw
    cdef bint synced
    cdef int mode                  # the SyncState of the kernel that last swept
    cdef int32_t* rec              # rounds, P > 1: the moves (3 int32 per token of the corpus)
    cdef Py_ssize_t rec_cap
    cdef const int32_t* synced_wk
    cdef object synced_owner       # keeps the swept n_wk alive: its address is not reused
    cdef int64_t* synced_nk
    cdef bint capped               # some word's list has room for fewer than K pairs
    cdef int64_t* loff

    def __cinit__(self, Py_ssize_t n_parts, Py_ssize_t n_words, Py_ssize_t n_topics,
                  bint sparse, word_counts=None):
        cdef Py_ssize_t p, w, P = n_parts, V = n_words, K = n_topics
        cdef int64_t room
        if P < 1 or V < 0 or K < 1:
            raise ValueError("need n_parts >= 1, n_words >= 0, n_topics >= 1")
        cdef const int64_t[::1] counts = None
        if word_counts is not None:
            counts = np.ascontiguousarray(word_counts, dtype=np.int64)
            if counts.shape[0] != V:
                raise ValueError(f"word_counts must have n_words = {V} entries, got "
                                 f"{counts.shape[0]}")
        self.n_parts, self.n_words, self.n_topics, self.sparse = P, V, K, sparse
        self.cap_raw = 6 * P + 10
        self.raw = <void**> calloc(self.cap_raw, sizeof(void*))
        self.w.P, self.w.V, self.w.K = P, V, K
        self.w.wk = <int32_t**> self._alloc(P * sizeof(int32_t*))
        self.w.nk = <int64_t**> self._alloc(P * sizeof(int64_t*))
        self.w.dbuf = <double**> self._alloc(P * sizeof(double*))
        self.w.gens = <bitgen_t**> self._alloc(P * sizeof(bitgen_t*))
        self.synced_nk = <int64_t*> self._alloc(K * sizeof(int64_t))
        if P > 1:
            # the counts of the start of a sweep (or a sparse rounds part 0's positions)
            self.w.old = <int32_t*> self._alloc(V * K * sizeof(int32_t))
        if sparse:
            self.w.lists = <int32_t**> self._alloc(P * sizeof(int32_t*))
            self.w.small = <int32_t**> self._alloc(P * sizeof(int32_t*))
            self.loff = <int64_t*> self._alloc((V + 1) * sizeof(int64_t))
            self.loff[0] = 0
            for w in range(V):
                room = K
                if counts is not None and counts[w] < K:
                    room = counts[w] if counts[w] > 0 else 0
                    self.capped = True
                self.loff[w + 1] = self.loff[w] + 2 * room
            self.w.loff = self.loff
        for p in range(P):
            self.w.wk[p] = <int32_t*> self._alloc(V * K * sizeof(int32_t)) if p > 0 else NULL
            self.w.nk[p] = <int64_t*> self._alloc(K * sizeof(int64_t))
            self.w.gens[p] = <bitgen_t*> self._alloc(sizeof(bitgen_t))
            # scratch for either kind of sweep (a sparse workspace also serves dense
            # rounds: gibbs_sweep_rounds); the sparse word bucket's prefixes take up to
            # K + 3 entries (its lanes' padding)
            self.w.dbuf[p] = <double*> self._alloc((3 * K + DPTM_CGS_NB) * sizeof(double))
            if sparse:
                # 3 pairs of slack: the word bucket's last row reads (and ignores) up to
                # 3 pairs past a list
                self.w.lists[p] = <int32_t*> self._alloc((self.loff[V] + 6) * sizeof(int32_t))
                self.w.small[p] = <int32_t*> self._alloc((V + 2 * K) * sizeof(int32_t))

    cdef void* _alloc(self, size_t nbytes) except NULL:
        if self.raw == NULL or self.n_raw == self.cap_raw:
            raise MemoryError()
        cdef void* out = _own_lines(nbytes, &self.raw[self.n_raw])
        if out == NULL:
            raise MemoryError()
        self.n_raw += 1
        return out

    def __dealloc__(self):
        cdef Py_ssize_t i
        free(self.rec)
        if self.raw != NULL:
            for i in range(self.n_raw):
                free(self.raw[i])
            free(self.raw)

    cdef check_room(self, const int32_t[:, ::1] n_wk, int n_threads):
        """ValueError unless every word of ``n_wk`` has at most as many tokens as its list
        has room for (then no sweep of these counts can overflow a list: a word's tokens
        keep their number). On ``n_threads`` threads: a V x K pass before the first sparse
        sweep, 3% of a 2-part one at K = 1000 when serial."""
        cdef Py_ssize_t w, t, V = self.n_words, K = self.n_topics, bad = -1, n_bad = 0
        cdef int64_t tot
        if not self.capped:
            return
        with nogil:
            for w in prange(V, schedule="static", num_threads=n_threads):
                tot = 0
                for t in range(K):
                    tot = tot + n_wk[w, t]
                if 2 * (tot if tot < K else K) > self.loff[w + 1] - self.loff[w]:
                    n_bad += 1
        if n_bad == 0:
            return
        for w in range(V):
            tot = 0
            for t in range(K):
                tot = tot + n_wk[w, t]
            if 2 * (tot if tot < K else K) > self.loff[w + 1] - self.loff[w]:
                bad = w
                break
        raise ValueError(f"word {bad} has more tokens than the workspace's word_counts "
                         f"({(self.loff[bad + 1] - self.loff[bad]) // 2})")

    def invalidate(self):
        """Forget the state last swept: the next sweep copies the counts afresh."""
        self.synced = False
        self.synced_owner = None

    cdef bint in_step(self, const int32_t* n_wk, const int64_t* n_k, int mode) noexcept:
        cdef Py_ssize_t k
        if not self.synced or self.synced_wk != n_wk or self.mode != mode:
            return False
        for k in range(self.n_topics):
            if self.synced_nk[k] != n_k[k]:
                return False
        return True


cdef extern from "_kernels/cgs_adlda.h":
    void dptm_omp_barrier() noexcept nogil


cdef void _sync_row(const Work* ws, int32_t* n_wk, Py_ssize_t w, bint merge,
                    bint refresh) noexcept nogil:
    """Word ``w``'s row of the counts: with ``merge``, partition 0's counts (``n_wk``, in
    place) plus every other partition's changes since the start of the sweep; with
    ``refresh``, the next sweep's start: ``old`` and the other partitions' copies set to the
    row, and (sparse) every partition's list of the row's non-zero topics in increasing
    order."""
    cdef Py_ssize_t P = ws.P, K = ws.K, p, t, cnt
    cdef int32_t* row = n_wk + w * K
    cdef int32_t* o
    cdef int32_t* a
    cdef int32_t* wl
    cdef int64_t acc
    if P > 1:
        o = ws.old + w * K
        if merge and P == 2:
            a = ws.wk[1] + w * K
            for t in range(K):
                row[t] = row[t] + a[t] - o[t]
        elif merge:
            for t in range(K):
                acc = row[t]
                for p in range(1, P):
                    acc = acc + ws.wk[p][w * K + t] - o[t]
                row[t] = <int32_t> acc
        if refresh:
            memcpy(o, row, K * sizeof(int32_t))
            for p in range(1, P):
                memcpy(ws.wk[p] + w * K, row, K * sizeof(int32_t))
    if refresh and ws.lists != NULL:
        wl = ws.lists[0] + ws.loff[w]
        cnt = dptm_row_list(row, K, wl)
        ws.small[0][w] = <int32_t> cnt
        for p in range(1, P):
            memcpy(ws.lists[p] + ws.loff[w], wl, 2 * cnt * sizeof(int32_t))
            ws.small[p][w] = <int32_t> cnt


cdef inline int32_t* _round_pos(const Work* ws, int32_t* n_wk, Py_ssize_t p,
                                bint sparse) noexcept nogil:
    """Sparse rounds with P > 1: part ``p``'s V x K positions of the topics in its word
    lists (``dptm_list_move_at``), else NULL. In memory the sparse rounds leave unused: part 0
    ``old``, part p > 0 its dense copy (already touched by a fit's first, dense, sweep).
    Kept from one sweep to the next with the lists (only the positions of topics in a
    list are ever read)."""
    if not sparse or ws.P == 1:
        return NULL
    return ws.old if p == 0 else ws.wk[p]


cdef void _round_sync_row(const Work* ws, int32_t* n_wk, Py_ssize_t w,
                          bint sparse) noexcept nogil:
    """Word ``w``'s start of a rounds sweep (``_rounds_sweep``): dense, the other
    partitions' copies set to the row of ``n_wk``; sparse, every partition's list of the
    row's non-zero topics in increasing order, and with ``P > 1`` each part's positions
    of them (``_round_pos``; a sparse partition keeps no copy of the counts, and no
    partition reads ``old``)."""
    cdef Py_ssize_t P = ws.P, K = ws.K, p, t, cnt
    cdef const int32_t* row = n_wk + w * K
    cdef int32_t* wl
    cdef int32_t* prow
    if not sparse:
        for p in range(1, P):
            memcpy(ws.wk[p] + w * K, row, K * sizeof(int32_t))
        return
    wl = ws.lists[0] + ws.loff[w]
    cnt = dptm_row_list(row, K, wl)
    ws.small[0][w] = <int32_t> cnt
    for p in range(1, P):
        memcpy(ws.lists[p] + ws.loff[w], wl, 2 * cnt * sizeof(int32_t))
        ws.small[p][w] = <int32_t> cnt
    if P > 1:
        # every part's positions of the list's topics
        for p in range(P):
            prow = _round_pos(ws, n_wk, p, True) + w * K
            for t in range(cnt):
                prow[wl[2 * t]] = <int32_t> t


cdef void _adlda_sweep(const Work* ws, bint sparse, bint in_step, bint keep,
                       const int64_t* doc_ptr, const int32_t* words, Py_ssize_t n_tokens,
                       int32_t* z, int32_t* n_wk, int32_t* n_dk, int64_t* n_k,
                       const int64_t* part_ptr, double alpha, double beta,
                       int n_threads) noexcept nogil:
    """One AD-LDA sweep on ``ws.P`` partitions (see ``gibbs_sweep_parallel``), in one
    parallel region: the start-of-sweep copies (unless ``in_step``), the partitions' sweeps,
    the merge over words (refreshing the copies for the next sweep if ``keep``)."""
    cdef Py_ssize_t P = ws.P, V = ws.V, K = ws.K, VK = V * K, p, w, k
    cdef bint rows = P > 1 or sparse
    cdef int32_t* wkp
    cdef int32_t* sm
    cdef double* db
    cdef int64_t acc
    with parallel(num_threads=n_threads):
        if rows and not in_step:
            for w in prange(V, schedule="static"):
                _sync_row(ws, n_wk, w, False, True)
        dptm_omp_barrier()
        for p in prange(P, schedule="static", chunksize=1):
            wkp = n_wk if p == 0 else ws.wk[p]
            db = ws.dbuf[p]
            memcpy(ws.nk[p], n_k, K * sizeof(int64_t))
            if sparse:
                sm = ws.small[p]
                _sparse_docs(doc_ptr, part_ptr[p], part_ptr[p + 1], words, z, wkp, n_dk,
                             ws.nk[p], V, K, alpha, beta, ws.gens[p], ws.lists[p], ws.loff,
                             sm, sm + V, sm + V + K, db, db + K, db + 2 * K, NULL)
            else:
                _gibbs_docs(doc_ptr, part_ptr[p], part_ptr[p + 1], words, n_tokens, z, wkp,
                            n_dk, ws.nk[p], V, K, alpha, beta, ws.gens[p], db, db + K)
        dptm_omp_barrier()
        if rows and (P > 1 or keep):
            for w in prange(V, schedule="static"):
                _sync_row(ws, n_wk, w, True, keep)
    for k in range(K):
        acc = 0
        for p in range(P):
            acc = acc + ws.nk[p][k] - n_k[k]
        n_k[k] += acc


cdef _run_adlda(bint sparse, const int64_t[::1] doc_ptr, const int32_t[::1] words,
                int32_t[::1] z, int32_t[:, ::1] n_wk, int32_t[:, ::1] n_dk, int64_t[::1] n_k,
                double alpha, double beta, const int64_t[::1] part_ptr, list bit_generators,
                int n_threads, ADLDAWorkspace workspace):
    """Checks, then ``_adlda_sweep`` with ``workspace`` (or a one-sweep one)."""
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1, V = n_wk.shape[0], K = n_wk.shape[1]
    cdef Py_ssize_t P = part_ptr.shape[0] - 1, p
    cdef bint keep = workspace is not None, in_step
    _check_partitions(part_ptr, D, bit_generators, n_threads)
    if D <= 0 or K <= 0 or words.shape[0] == 0:
        return
    if keep:
        if (workspace.n_parts != P or workspace.n_words != V or workspace.n_topics != K
                or workspace.sparse != sparse):
            raise ValueError(
                f"workspace is for P={workspace.n_parts}, V={workspace.n_words}, "
                f"K={workspace.n_topics}, sparse={workspace.sparse}; this sweep has P={P}, "
                f"V={V}, K={K}, sparse={sparse}")
    else:
        workspace = ADLDAWorkspace(P, V, K, sparse)
    in_step = workspace.in_step(&n_wk[0, 0], &n_k[0], SYNC_MERGED)
    if sparse and not in_step:
        workspace.check_room(n_wk, n_threads)
    for p in range(P):
        workspace.w.gens[p][0] = get_bitgen(bit_generators[p])[0]
    workspace.synced = False
    workspace.synced_owner = None
    with nogil:
        _adlda_sweep(&workspace.w, sparse, in_step, keep, &doc_ptr[0], &words[0],
                     words.shape[0], &z[0], &n_wk[0, 0], &n_dk[0, 0], &n_k[0], &part_ptr[0],
                     alpha, beta, n_threads)
    if keep:
        workspace.synced = True
        workspace.mode = SYNC_MERGED
        workspace.synced_wk = &n_wk[0, 0]
        workspace.synced_owner = n_wk.base
        memcpy(workspace.synced_nk, &n_k[0], K * sizeof(int64_t))


cdef Py_ssize_t _record_moves(const int32_t* words, const int32_t* z, int32_t* rec,
                              Py_ssize_t n) noexcept nogil:
    """The moves of a round of ``n`` tokens (``words``, new topics ``z``; their start topics
    in ``rec[2 n:3 n]``) as (word, from, to) triples from ``rec[0]`` in token order, tokens
    that kept their topic left out; returns their number. In place: triple j <= i ends at
    ``rec[3 i + 2]``, before ``rec[2 n + i + 1]``, the next start topic still to read. A
    triple is written for every token and kept only if it moved: no branch on a move,
    a coin flip for the predictor (the former per-token test of the applying part
    mispredicted about half the time)."""
    cdef Py_ssize_t i, m = 0
    cdef int32_t a, b
    for i in range(n):
        a = rec[2 * n + i]
        b = z[i]
        rec[3 * m] = words[i]
        rec[3 * m + 1] = a
        rec[3 * m + 2] = b
        m += a != b
    return m


cdef inline void _apply_dense(int32_t* wk, int64_t* nk, Py_ssize_t K, const int32_t* rec,
                              Py_ssize_t lo, Py_ssize_t hi, bint ahead) noexcept nogil:
    """Moves ``lo .. hi - 1`` of ``rec`` into the counts ``wk`` and ``nk``, the rows of the
    move 12 ahead prefetched if ``ahead`` (random words: without it each move waits for
    its row; about a sixth of a 2-part sweep at K = 50)."""
    cdef Py_ssize_t j
    cdef const int32_t* m
    cdef int32_t* row
    for j in range(lo, hi):
        if ahead:
            m = rec + 3 * (j + 12)
            __builtin_prefetch(wk + m[0] * K + m[1])
            __builtin_prefetch(wk + m[0] * K + m[2])
        m = rec + 3 * j
        row = wk + m[0] * K
        row[m[1]] -= 1
        row[m[2]] += 1
        nk[m[1]] -= 1
        nk[m[2]] += 1


cdef void _apply_moves(const Work* ws, Py_ssize_t p, int32_t* wkp, int32_t* pos,
                       const int32_t* rec, Py_ssize_t n) noexcept nogil:
    """Partition ``p``'s counts take the ``n`` moves of ``rec`` in order: (word, from topic,
    to topic) triples from ``_record_moves``. Only the moves are read: the tokens that
    kept their topic (about half after a few sweeps) cost nothing here. Dense (``pos``
    NULL): the counts ``wkp`` and ``ws.nk[p]``, in a loop with no test per move. Sparse:
    ``ws.nk[p]`` and the word lists, edited through the positions ``pos`` (``_round_pos``)
    by ``dptm_list_move_at``, without searching them."""
    cdef Py_ssize_t j, K = ws.K
    cdef int32_t a, b, w
    cdef int32_t* wl0
    cdef int32_t* wn
    cdef const int64_t* loff = ws.loff
    cdef int64_t* nk = ws.nk[p]
    cdef const int32_t* ahead
    if pos == NULL:
        _apply_dense(wkp, nk, K, rec, 0, n - 12 if n > 12 else 0, True)
        _apply_dense(wkp, nk, K, rec, n - 12 if n > 12 else 0, n, False)
        return
    wl0 = ws.lists[p]
    wn = ws.small[p]
    for j in range(n):
        # random words: the positions and list length of the move 16 ahead, then the
        # pair of its old topic 8 ahead, load while this one is applied (hints only)
        if j + 16 < n:
            ahead = rec + 3 * (j + 16)
            __builtin_prefetch(pos + ahead[0] * K + ahead[1])
            __builtin_prefetch(pos + ahead[0] * K + ahead[2])
            __builtin_prefetch(wn + ahead[0])
        if j + 8 < n:
            ahead = rec + 3 * (j + 8)
            __builtin_prefetch(wl0 + loff[ahead[0]] + 2 * pos[ahead[0] * K + ahead[1]])
        w = rec[3 * j]
        a = rec[3 * j + 1]
        b = rec[3 * j + 2]
        nk[a] -= 1
        nk[b] += 1
        dptm_list_move_at(wl0 + loff[w], wn + w, pos[w * K + a], b, wn[w], pos + w * K)


cdef extern from "_kernels/cgs_adlda.h":
    void dptm_store_release(int64_t* p, int64_t v) noexcept nogil
    void dptm_wait_at_least(const int64_t* p, int64_t v) noexcept nogil
    int dptm_team_size() noexcept nogil
    int dptm_team_rank() noexcept nogil


cdef void _apply_round(const Work* ws, Py_ssize_t p, int32_t* wkp, int32_t* pos,
                       const int64_t* doc_ptr, const int32_t* rec, const int64_t* n_rec,
                       const int64_t* round_ptr, Py_ssize_t S, Py_ssize_t r, int64_t* done,
                       bint wait) noexcept nogil:
    """Part ``p``'s copy takes every other part's moves of round ``r``, in part order
    (waiting for each part's round to be done first if ``wait``). Part q's moves of round
    r are ``n_rec[q S + r]`` triples at ``rec + 3 t``, t the round's first token."""
    cdef Py_ssize_t q
    for q in range(ws.P):
        if q != p:
            if wait:
                dptm_wait_at_least(done + 8 * q, r + 1)
            _apply_moves(ws, p, wkp, pos, rec + 3 * doc_ptr[round_ptr[q * (S + 1) + r]],
                         n_rec[q * S + r])


cdef inline int32_t* _round_counts(const Work* ws, int32_t* n_wk, Py_ssize_t p,
                                   bint sparse) noexcept nogil:
    """The word-topic counts part ``p`` keeps in the rounds kernel: dense, part 0 the
    true ones (``n_wk``, in place) and another part its copy; sparse, none (a sparse
    sampler reads its word lists; ``n_wk`` is rewritten from part 0's lists after the
    sweep, a sequential pass, instead of two random writes per move for part 0, which made
    it the slowest part)."""
    if sparse:
        return NULL
    return n_wk if p == 0 else ws.wk[p]


cdef void _rounds_sweep(const Work* ws, bint sparse, bint in_step, const int64_t* doc_ptr,
                        const int32_t* words, Py_ssize_t n_tokens, int32_t* z, int32_t* rec,
                        int64_t* n_rec, int32_t* n_wk, int32_t* n_dk, int64_t* n_k,
                        const int64_t* round_ptr, Py_ssize_t S, Py_ssize_t lag, int64_t* done,
                        double alpha, double beta, int n_threads) noexcept nogil:
    """``gibbs_sweep_rounds`` after its checks, in one parallel region. Parts are dealt
    to the team's threads round-robin (thread t: parts t, t + n, ...), every thread running
    its parts' rounds in order; the only waits are for another part's round ``r - lag``
    (``done[8 q]``: rounds part q has finished; 8 int64 apart, a cache line each) and one
    barrier before the last rounds' moves. No deadlock for any team size: a thread in round
    r waits only for rounds < r, which every thread in a round >= r has finished. Sparse,
    ``n_wk`` is then rewritten from part 0's word lists (exact after the last moves).
    After each round a part lists its moves (``_record_moves``: ``rec`` at 3 int32 per
    token of the round, ``n_rec[p S + r]`` of them, published by the round's release
    store): the other parts read those triples only, not every token's old and new topic."""
    cdef Py_ssize_t P = ws.P, V = ws.V, K = ws.K, p, r, rr, w, lo, hi, nthr, rank, j, t0, nt
    cdef int32_t* wkp
    cdef int32_t* row
    cdef const int32_t* wl
    cdef int32_t* sm
    cdef double* db = NULL
    p = r = rr = lo = hi = nthr = rank = t0 = nt = 0
    wkp = sm = NULL
    with parallel(num_threads=n_threads):
        if not in_step and (P > 1 or sparse):
            for w in prange(V, schedule="static"):
                _round_sync_row(ws, n_wk, w, sparse)
        dptm_omp_barrier()
        nthr = dptm_team_size()
        rank = dptm_team_rank()
        for r in range(S):
            p = rank
            while p < P:
                wkp = _round_counts(ws, n_wk, p, sparse)
                if r == 0:
                    memcpy(ws.nk[p], n_k, K * sizeof(int64_t))
                elif r >= lag:
                    _apply_round(ws, p, wkp, _round_pos(ws, n_wk, p, sparse), doc_ptr,
                                 rec, n_rec, round_ptr, S,
                                 r - lag, done, True)
                lo = round_ptr[p * (S + 1) + r]
                hi = round_ptr[p * (S + 1) + r + 1]
                t0 = doc_ptr[lo]
                nt = doc_ptr[hi] - t0
                if P > 1:
                    # the round's start topics, in the last third of its moves' room
                    memcpy(rec + 3 * t0 + 2 * nt, z + t0, nt * sizeof(int32_t))
                db = ws.dbuf[p]
                if sparse:
                    sm = ws.small[p]
                    _sparse_docs(doc_ptr, lo, hi, words, z, wkp, n_dk, ws.nk[p], V, K, alpha,
                                 beta, ws.gens[p], ws.lists[p], ws.loff, sm, sm + V,
                                 sm + V + K, db, db + K, db + 2 * K,
                                 _round_pos(ws, n_wk, p, sparse))
                else:
                    _gibbs_docs(doc_ptr, lo, hi, words, n_tokens, z, wkp, n_dk, ws.nk[p], V,
                                K, alpha, beta, ws.gens[p], db, db + K)
                if P > 1:
                    n_rec[p * S + r] = _record_moves(words + t0, z + t0, rec + 3 * t0, nt)
                dptm_store_release(done + 8 * p, r + 1)
                p = p + nthr
        dptm_omp_barrier()
        # the rounds no part has seen yet from the others: S - lag .. S - 1
        p = rank
        while p < P:
            wkp = _round_counts(ws, n_wk, p, sparse)
            for rr in range(S - lag if S > lag else 0, S):
                _apply_round(ws, p, wkp, _round_pos(ws, n_wk, p, sparse), doc_ptr, rec,
                             n_rec, round_ptr, S, rr,
                             done, False)
            p = p + nthr
        if sparse:
            dptm_omp_barrier()
            for w in prange(V, schedule="static"):
                row = n_wk + w * K
                wl = ws.lists[0] + ws.loff[w]
                memset(row, 0, K * sizeof(int32_t))
                for j in range(ws.small[0][w]):
                    row[wl[2 * j]] = wl[2 * j + 1]
    memcpy(n_k, ws.nk[0], K * sizeof(int64_t))


def gibbs_sweep_rounds(const int64_t[::1] doc_ptr, const int32_t[::1] words, int32_t[::1] z,
                       int32_t[:, ::1] n_wk, int32_t[:, ::1] n_dk, int64_t[::1] n_k,
                       double alpha, double beta, const int64_t[:, ::1] round_ptr,
                       list bit_generators, int n_threads, bint sparse,
                       ADLDAWorkspace workspace, Py_ssize_t lag=1):
    """One AD-LDA sweep on ``P`` partitions synchronised ``S`` times (``round_ptr``, P x
    (S + 1) document boundaries: partition ``p``'s round ``r`` is documents
    ``round_ptr[p, r]:round_ptr[p, r + 1]``; ``round_ptr[p, S] == round_ptr[p + 1, 0]``,
    from 0 to D).

    In round ``r`` every partition samples its round-``r`` documents with its own
    generator (``gibbs_sweep``'s blocked/sequential draw, or ``gibbs_sweep_sparse``'s
    buckets if ``sparse``) against its own copy of the counts; then every partition adds
    the other partitions' moves of that round to its copy (in partition order), so at the
    start of each round every copy equals the true counts. The approximation of AD-LDA
    (a partition does not see the others' moves) is thus limited to one round: with
    ``S = 1`` it is ``gibbs_sweep_parallel`` / ``gibbs_sweep_sparse``'s semantics (not
    their draws: the word lists are never rebuilt here, and partition 0's are edited in
    another order). There is no O(V K) pass after the first sweep of a workspace; a round
    costs its moves (each partition applies the others', listed after each round as
    (word, from, to) triples: 3 N int32 in the workspace). The result depends on the
    partitions, rounds, ``lag`` and streams, not on ``n_threads``. ``workspace``:
    ``ADLDAWorkspace(P, V, K, sparse)``, reused across the sweeps of one state (required);
    a sparse one also serves dense sweeps (the same draws: GibbsLDA's first sweep, so the
    fit allocates and faults in one set of copies, not two). A dense sweep leaves its word
    lists stale: the next sparse sweep rebuilds them.

    ``lag`` (>= 1): a partition adds the others' moves of round ``r`` at the start of its
    round ``r + lag`` (in partition order), so it lags the others by at most ``lag``
    rounds; the moves of the last ``lag`` rounds are added after the sweep, so every copy
    again equals the true counts. ``lag = 1`` is the description above. With ``lag = 2``
    a partition never waits for a round that has just finished: threads wait only when one
    part is a whole round behind (one exchange per round, no barrier; one barrier per
    sweep). The same draws for any ``n_threads``; each thread takes its parts in order,
    so no team size deadlocks.
    """
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1, V = n_wk.shape[0], K = n_wk.shape[1]
    cdef Py_ssize_t P = round_ptr.shape[0], S = round_ptr.shape[1] - 1, p, r
    cdef Py_ssize_t N = words.shape[0]
    cdef bint in_step
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    if P < 1 or S < 1 or len(bit_generators) != P:
        raise ValueError("round_ptr must be P x (S + 1) with P, S >= 1, one bit generator "
                         "per partition")
    if round_ptr[0, 0] != 0 or round_ptr[P - 1, S] != D:
        raise ValueError("round_ptr must start at 0 and end at the number of documents")
    for p in range(P):
        if p + 1 < P and round_ptr[p, S] != round_ptr[p + 1, 0]:
            raise ValueError("round_ptr: partition p must end where p + 1 starts")
        for r in range(S):
            if round_ptr[p, r + 1] < round_ptr[p, r]:
                raise ValueError("round_ptr must be non-decreasing")
    if lag < 1:
        raise ValueError(f"lag must be >= 1, got {lag}")
    if workspace is None:
        raise ValueError("gibbs_sweep_rounds needs an ADLDAWorkspace")
    # a sparse workspace serves dense sweeps too (its copies are allocated either way)
    if (workspace.n_parts != P or workspace.n_words != V or workspace.n_topics != K
            or (sparse and not workspace.sparse)):
        raise ValueError(
            f"workspace is for P={workspace.n_parts}, V={workspace.n_words}, "
            f"K={workspace.n_topics}, sparse={workspace.sparse}; this sweep has P={P}, "
            f"V={V}, K={K}, sparse={sparse}")
    if D <= 0 or K <= 0 or N == 0:
        return
    if P > 1 and workspace.rec_cap < 3 * N:
        free(workspace.rec)
        workspace.rec = <int32_t*> malloc(3 * N * sizeof(int32_t))
        workspace.rec_cap = 3 * N if workspace.rec != NULL else 0
        if workspace.rec == NULL:
            raise MemoryError()
    # the rounds (sparse or dense): in step only with a sweep of the same kind
    in_step = workspace.in_step(&n_wk[0, 0], &n_k[0],
                                SYNC_SPARSE_ROUNDS if sparse else SYNC_DENSE_ROUNDS)
    if sparse and not in_step:
        workspace.check_room(n_wk, n_threads)
    for p in range(P):
        workspace.w.gens[p][0] = get_bitgen(bit_generators[p])[0]
    workspace.synced = False
    workspace.synced_owner = None
    # rounds done per part, one cache line each (written by one thread, read by the
    # others), then the moves recorded per part and round
    cdef int64_t* done = <int64_t*> calloc(8 * P + 8 + P * S, sizeof(int64_t))
    if done == NULL:
        raise MemoryError()
    try:
        with nogil:
            _rounds_sweep(&workspace.w, sparse, in_step, &doc_ptr[0], &words[0], N, &z[0],
                          workspace.rec, done + 8 * P + 8, &n_wk[0, 0], &n_dk[0, 0], &n_k[0],
                          &round_ptr[0, 0], S, lag, done, alpha, beta, n_threads)
    finally:
        free(done)
    workspace.synced = True
    workspace.mode = SYNC_SPARSE_ROUNDS if sparse else SYNC_DENSE_ROUNDS
    workspace.synced_wk = &n_wk[0, 0]
    workspace.synced_owner = n_wk.base
    memcpy(workspace.synced_nk, &n_k[0], K * sizeof(int64_t))


def gibbs_sweep_sparse(const int64_t[::1] doc_ptr, const int32_t[::1] words, int32_t[::1] z,
                       int32_t[:, ::1] n_wk, int32_t[:, ::1] n_dk, int64_t[::1] n_k,
                       double alpha, double beta, const int64_t[::1] part_ptr,
                       list bit_generators, int n_threads, ADLDAWorkspace workspace=None):
    """One collapsed Gibbs sweep with SparseLDA's bucket decomposition (Yao, Mimno &
    McCallum 2009), on ``P`` AD-LDA partitions as ``gibbs_sweep_parallel`` (``P = 1``: the
    serial sampler).

    The conditional of ``gibbs_sweep``, with the token removed and inv[t] = 1 / (n_k[t] +
    V beta), is split as

        p_t ∝ n_wk[w, t] (n_dk[d, t] + alpha) inv[t]      (word bucket q: topics of w)
            + beta n_dk[d, t] inv[t]                        (document bucket r: topics of d)
            + alpha beta inv[t]                             (smoothing bucket s: all topics)

    One uniform u on [0, q + r + s) picks the bucket (in that order) and the topic in it.
    Word bucket: the list's pairs in 4 lanes (pair j in lane j % 4, each lane summed left
    to right, the lanes' totals then cumulated), u's lane by those totals, then its pair by
    the lane's running sums (a point past the lane's end by rounding: the lane's last pair
    of positive weight). Document and smoothing buckets: a running sum over the document's
    topics (K_d) or all K by groups of 4 or 8 (a group's sum added at once, then one by one
    inside the group that passes u; the group's last topic, or the last topic, if a scan
    runs past the end). The same distribution as ``gibbs_sweep``, not the same draws. Per
    token only q is summed, O(K_w) (the word's non-zero topics, read from its list of
    (topic, count) pairs, which still counts the token: its old topic's pair weighs count -
    1, and the list changes only if the token moves); s and r are running sums kept as the
    counts change, recomputed exactly per document (O(K) additions); r's running sum is
    taken only when u falls in it, the smoothing scan only when u falls in s. Every
    partition's per-word topic lists start each sweep in increasing topic order, built from
    the counts of the start of the sweep (O(V K), in parallel over words, fused with the
    merge when ``workspace``, an ``ADLDAWorkspace(P, V, K, True)``, is reused across the
    sweeps of one state; the draws do not depend on it); within the sweep a topic whose
    count drops to zero is replaced by the list's last and a new one is appended (with
    several partitions each keeps a V x K array of its topics' positions in its lists, in
    memory the sparse rounds leave unused, so that the rounds apply the other partitions'
    moves without searching the lists; the sampler keeps them exact). Memory: P copies of
    ``n_wk`` and 2 P V K int32 for the lists.
    """
    _run_adlda(True, doc_ptr, words, z, n_wk, n_dk, n_k, alpha, beta, part_ptr,
               bit_generators, n_threads, workspace)


cdef _check_partitions(const int64_t[::1] part_ptr, Py_ssize_t D, object bit_generators,
                       int n_threads):
    """Arguments shared by the AD-LDA kernels: threads, one generator per partition, and
    partition boundaries from 0 to D, non-decreasing."""
    cdef Py_ssize_t p, P = part_ptr.shape[0] - 1
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    if P < 1 or len(bit_generators) != P:
        raise ValueError("need one bit generator per partition")
    if part_ptr[0] != 0 or part_ptr[P] != D:
        raise ValueError("part_ptr must start at 0 and end at the number of documents")
    for p in range(P):
        if part_ptr[p + 1] < part_ptr[p]:
            raise ValueError("part_ptr must be non-decreasing")
