# Entry points that no estimator calls: tests and benchmarks reach the kernels' internal
# steps and reference forms through them (the word-list moves and the word bucket, the
# AD-LDA sweep without rounds, the exact resolver's margin, the samplers one by one, the
# noisy sweep on one stream, a generator's raw throughput). Nothing in dptm/ imports them.


# How _list_moves applies a move (as the kernels' callers do).
cdef enum ListMoveMode:
    MOVE_BY_POSITION = 0           # through the positions, b's index not given (the rounds)
    MOVE_BY_POSITION_INDEXED = 1   # through the positions, b's index given (the sampler)
    MOVE_BY_SEARCH = 2             # without positions (the serial sampler)


def _list_moves(const int32_t[::1] pairs, const int32_t[:, ::1] moves, Py_ssize_t K,
                const int32_t[::1] pos_fill, int mode):
    """For tests: a word list (``pairs``: (topic, count) pairs, topics < K) after the
    ``moves`` rows (a, b), each a token moved from topic a (in the list) to b != a by
    ``dptm_list_move_at`` as the kernels call it, ``mode`` a ListMoveMode: 0 through the
    positions, b's index not given (the rounds' exchange of another part's moves); 1 through
    the positions, b's index given when b is in the list (the sampler's draw from the word
    bucket); 2 without positions (the serial sampler). The positions start as ``pos_fill``
    (K values: what memory held) but for the list's topics. Returns the list and the positions."""
    cdef Py_ssize_t n0 = pairs.shape[0] // 2, i, j, ja, jb
    cdef int32_t n = <int32_t> n0
    if pos_fill.shape[0] != K or 2 * n0 != pairs.shape[0] or moves.shape[1] != 2:
        raise ValueError("pairs must hold (topic, count) pairs, pos_fill K values, moves 2 columns")
    out = np.zeros(2 * K, dtype=np.int32)
    pos = np.array(pos_fill, dtype=np.int32)
    cdef int32_t[::1] wl = out, pp = pos
    for j in range(2 * n0):
        wl[j] = pairs[j]
    for j in range(n0):
        pp[pairs[2 * j]] = <int32_t> j
    for i in range(moves.shape[0]):
        ja = (dptm_find_topic(&wl[0], n, moves[i, 0]) if mode == MOVE_BY_SEARCH
              else pp[moves[i, 0]])
        jb = dptm_find_topic(&wl[0], n, moves[i, 1]) if mode == MOVE_BY_POSITION_INDEXED else n
        dptm_list_move_at(&wl[0], &n, ja, moves[i, 1], jb,
                          NULL if mode == MOVE_BY_SEARCH else &pp[0])
    return out[:2 * n].reshape(-1, 2), pos


def gibbs_sweep_parallel(const int64_t[::1] doc_ptr, const int32_t[::1] words, int32_t[::1] z,
                         int32_t[:, ::1] n_wk, int32_t[:, ::1] n_dk, int64_t[::1] n_k,
                         double alpha, double beta, const int64_t[::1] part_ptr,
                         list bit_generators, int n_threads, ADLDAWorkspace workspace=None):
    """One approximate-distributed sweep (AD-LDA, Newman et al. 2009) on ``P`` partitions.

    Partition ``p`` (documents ``part_ptr[p]:part_ptr[p + 1]``) runs ``gibbs_sweep``'s
    sampler on its documents with ``bit_generators[p]`` and its own copy of ``n_wk`` and
    ``n_k`` taken at the start of the sweep (it sees its own moves, not the others'); after
    the sweep every partition's count changes are added to the shared counts (integer sums,
    in any order the same). ``z`` and ``n_dk`` are exact; the approximation is that a
    partition samples from word counts that are stale by the other partitions' moves of
    this sweep. The result depends on the partitions and their streams, not on the
    threads that run them (``n_threads`` OpenMP threads), nor on ``workspace`` (an
    ``ADLDAWorkspace(P, V, K, False)`` reused across the sweeps of one state saves the
    per-sweep allocation and copies). Memory: ``P`` copies of ``n_wk``. With one partition
    it is ``gibbs_sweep`` with that generator.
    """
    _run_adlda(False, doc_ptr, words, z, n_wk, n_dk, n_k, alpha, beta, part_ptr,
               bit_generators, n_threads, workspace)


def _word_draw(const int32_t[::1] pairs, const double[::1] c, int32_t kold, double u):
    """Test hook: ``_sparse_docs``' word bucket and search on one list (``pairs``: 2 n int32,
    (topic, count), the old topic ``kold`` among them, every topic < len(c)) for the point
    ``u`` of [0, q). Returns (q, cum, jk, j): the bucket's mass, its 4 cumulative lane
    totals, kold's index and the chosen pair's index (-1 if u >= q: not in the bucket)."""
    cdef Py_ssize_t n = pairs.shape[0] // 2, jk = -1, j = -1, t
    if n < 1 or pairs.shape[0] != 2 * n:
        raise ValueError("need n >= 1 (topic, count) pairs")
    for t in range(n):
        if not 0 <= pairs[2 * t] < c.shape[0] or pairs[2 * t + 1] < 1:
            raise ValueError("topics must index c, counts be >= 1")
    # the kernel's buffers: 3 pairs of slack after the list (junk there, as the next
    # word's pairs in a sweep: the bucket must ignore them), K + 3 prefixes
    cdef int32_t[::1] wl = np.full(2 * n + 6, c.shape[0] - 1, dtype=np.int32)
    cdef double[::1] P = np.zeros(n + 4)
    cdef double[::1] cum = np.zeros(4)
    wl[:2 * n] = pairs
    q = dptm_word_bucket(&wl[0], n, &c[0], kold, &P[0], &cum[0], &jk)
    if u < q:
        j = dptm_word_search(&wl[0], n, &P[0], &cum[0], jk, u)
    return q, np.asarray(cum).copy(), jk, j


def _set_lazy_margin(double margin):
    """Test hook: set the comparison margin (returns the old one). A margin >= 1 sends every
    Bernoulli(exp) decision down the exact rational path, so tests can check its pmf; a
    margin below 2^-36 would let double-precision errors decide, and is refused."""
    global LAZY_MARGIN
    if not margin >= 1.0 / 68719476736.0:
        raise ValueError(f"margin must be >= 2^-36, got {margin}")
    old, LAZY_MARGIN = LAZY_MARGIN, margin
    return old


def fill_discrete_laplace_dyadic(int64_t[::1] out, uint64_t a, object bit_generator,
                                 dict table=None):
    """Fill ``out`` with exact discrete Laplace draws of parameter r = a / 2^21:
    P(x) = (1 - r) / (1 + r) r^|x| (scale -1 / log r), 0 < a < 2^21 (scale up to about
    600), through ``table = dptm.noise.laplace_table.dyadic_table(a)`` (the default)."""
    cdef Py_ssize_t i, n = out.shape[0]
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    cdef LaplaceTable T
    cdef Lanes ln
    if a < 1 or a >= (<uint64_t> 1 << DYADIC_BITS):
        raise ValueError("a must be in [1, 2^21)")
    if table is None:
        table = _laplace_table.dyadic_table(a)
    _set_laplace_table(&T, table, a)
    ln.word = 0
    ln.left = 0
    with bit_generator.lock, nogil:
        for i in range(n):
            out[i] = _dlap_draw(rng, &ln, &T)


def fill_discrete_gaussian_inversion(int64_t[::1] out, uint64_t p, uint64_t q,
                                     object bit_generator, dict table=None):
    """Fill ``out`` with exact discrete Gaussian draws of variance p/q:
    P(x) proportional to exp(-x^2 q / (2 p)) on the integers, through
    ``table = dptm.noise.gauss_inversion.inversion_table(p, q)`` (the default)."""
    cdef Py_ssize_t i, n = out.shape[0]
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    cdef LaplaceTable T
    cdef Lanes ln
    if p < 1 or q < 1:
        raise ValueError("p and q must be positive integers")
    if table is None:
        table = _gauss_inversion.inversion_table(p, q)
    _set_gauss_inversion(&T, table, p, q)
    ln.word = 0
    ln.left = 0
    with bit_generator.lock, nogil:
        for i in range(n):
            out[i] = _dlap_draw(rng, &ln, &T)


def noisy_gibbs_sweep(const int64_t[::1] doc_ptr, const int32_t[::1] words, int32_t[::1] z,
                      int32_t[:, ::1] n_wk, int32_t[:, ::1] n_dk, int64_t[::1] n_k,
                      const float[:, ::1] word_factor, const double[::1] word_mass, double alpha,
                      double rate, const double[:, ::1] rate_table, object bit_generator):
    """One sweep sampling each token's topic with the word factor fixed for the sweep.

    Selection (Poisson subsampling: each token independently with probability ``rate``):

    - ``rate_table`` (V x K) given: a token with word ``w`` and topic ``k`` is selected if
      a uniform, drawn just before its topic, is ``< rate_table[w, k]``;
    - else ``rate >= 1``: every token, no selection draws; ``rate`` not > 0 (0, NaN): none;
    - else ``rate <= 0.75`` (gaps): the next selected token is ``G`` tokens after the
      current position, ``G = floor(E * -1/log1p(-rate))`` (E a standard exponential, so
      G is Geometric: P(G >= g) = (1 - rate)^g, see ``_geometric_capped``);
    - else (runs): ``R = floor(E * -1/log(rate))`` consecutive tokens are selected
      (P(R >= r) = rate^r), then one token is skipped and a new R is drawn.

    Both give exactly independent Bernoulli(rate) selections with one exponential per
    selected (gaps) or skipped (runs) token; skipped tokens, and documents without a selected
    token, are not read. Draw order: the first selection draw (for runs: R, then the gap
    draws needed to reach the first selected token), then for each selected token the
    selection draws that locate the *next* selected token, then this token's topic uniform
    (selection is one token ahead of sampling; with every token selected the topic uniforms
    are drawn up to 64 at a time, the same numbers in the same order). Nothing is drawn
    past the last token.

    A selected token ``i`` of document ``d`` with word ``w`` and topic ``k`` is removed from
    its document's counts and redrawn from ``p_t ∝ F[w, t] (n_dk[d, t] + alpha)`` (``F =
    word_factor``, live document counts), then the true counts ``n_wk``, ``n_dk``, ``n_k``
    are updated; they only feed the next snapshot. Because F is fixed, p splits into a
    document bucket ``F[w, t] n_dk[d, t]`` over the document's non-zero topics and a word
    bucket ``alpha F[w, t]`` of total A_w = alpha * word_mass[w] (``word_mass`` from
    ``noisy_snapshot``). The document bucket is a list: entries j = 0, 1, ... with topic
    nz[j] and count c[j], weight x_j = F[w, nz[j]] c[j] (a double product, exact). With K >
    128 (long rows), when the previous selected token of the document was drawn from the
    document bucket (entry j*), the count it added is owed to that entry: c[j*] does not
    hold it yet, and it is one more entry after the list, of topic nz[j*] and weight F[w,
    nz[j*]] (so each topic still weighs F[w, t] n_dk[d, t]); with K <= 128 a drawn count is
    added to c[j*] at once and nothing is ever owed. With one uniform u on [0, Q + A_w), Q
    the running sum (double, left to right) of the list's weights, then the owed entry's,
    the topic is that of the first entry whose running sum exceeds u if u < Q, else the
    first t with sum_{t' <= t} F[w, t'] > (u - Q) / alpha (K - 1 if none). The token leaving
    its topic first cancels a count owed to that topic's entry, else takes 1 off its entry;
    an owed count is paid into c after the weights are summed; a draw from the owed entry
    owes the count to entry j* again. The list is built in increasing topic order at the
    first selected token of each document (nothing owed); an entry whose count drops to 0 is
    replaced by the last entry (an owed count moving with it), a topic the word bucket draws
    and the list lacks is appended with count 1 (nothing owed after a word-bucket draw). The
    owed entry keeps a token's document bucket from waiting for the previous token's draw
    (worth it for long rows only); the document's counts are put back into ``n_dk`` and
    ``n_k`` at its end. O(K_d) per selected token (K_d: non-zero topics of the document)
    plus O(K) with probability A_w / (Q + A_w), plus O(K) per document with a selected
    token. ``noisy_gibbs_sweep_blocks`` runs the same sweep on blocks of documents in
    parallel.

    Returns
    -------
    int : number of tokens resampled.
    """
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1, K = n_wk.shape[1]
    cdef Py_ssize_t n_sampled = 0
    cdef double scale = 0.0
    cdef int mode            # 0 every token, 1 rate table, 2 geometric gaps, 3 geometric runs
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    _check_noisy_args(n_wk, word_factor, word_mass, alpha, rate_table)
    mode = _selection_mode(rate, rate_table.shape[0] > 0, &scale)
    if mode == SELECT_NONE or D <= 0 or K <= 0:
        return 0
    cdef const int32_t* wp = &words[0] if words.shape[0] else NULL
    cdef int32_t* zp = &z[0] if z.shape[0] else NULL
    cdef double* cum = <double*> malloc((K + DPTM_LIST_PAD) * sizeof(double))
    cdef int32_t* nz = <int32_t*> malloc((K + DPTM_LIST_PAD + 1) * sizeof(int32_t))
    cdef double* cnt = <double*> malloc((K + DPTM_LIST_PAD + 1) * sizeof(double))
    cdef int32_t* pos = <int32_t*> malloc(K * sizeof(int32_t))
    if cum == NULL or nz == NULL or cnt == NULL or pos == NULL:
        free(cum); free(nz); free(cnt); free(pos)
        raise MemoryError()
    try:
        with bit_generator.lock, nogil:
            n_sampled = _noisy_block_any(&doc_ptr[0], 0, D, wp, zp, &n_wk[0, 0], &n_dk[0, 0],
                                         &n_k[0], &word_factor[0, 0], &word_mass[0],
                                         &rate_table[0, 0] if mode == SELECT_TABLE else NULL,
                                         K, alpha, mode, scale, rng, cum, nz, cnt, pos, False, NULL)
    finally:
        free(cum)
        free(nz)
        free(cnt)
        free(pos)
    return n_sampled


def uniform_sum(Py_ssize_t n, object bit_generator):
    """Sum of ``n`` uniform doubles drawn through the BitGenerator C API (``next_double``),
    the way the sweep kernels draw: the raw throughput of a generator in a kernel loop
    (bench/bench_private_gibbs.py)."""
    cdef Py_ssize_t i
    cdef double total = 0.0
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    with bit_generator.lock, nogil:
        for i in range(n):
            total += next_uniform(rng)
    return total
