# ---------------------------------------------------------------------------------------
# Noisy-snapshot Gibbs sampling (Zhao et al. 2021 Algorithm 1, HDP-LDA; Huang et al. 2022
# Algorithm 1, SUB-LDA), with the release semantics of DESIGN.md 3.1-3.2.

cdef extern from "_kernels/cgs_snapshot.h":
    int64_t dptm_pos_i64(int64_t v) noexcept nogil
    double dptm_clamp(double x, double hi) noexcept nogil


# The word bucket's two-level search: per word, the running sums of its word-factor row
# at the end of each block of this many topics (a binary search over the blocks, then a
# scan of one block's floats from the previous block's end: the linear scan's running sums,
# so the same draws, from a V x K/16 table).
DEF WORD_BLOCK = 16
WORD_BLOCK_TOPICS = WORD_BLOCK    # the same, for Python (table shapes)


cdef void _dyadic_row(bitgen_t* rng, Lanes* lanes, const LaplaceTable* T,
                      const int32_t* counts, double* out, double* tot,
                      Py_ssize_t K, int32_t* cout, int64_t cmax) noexcept nogil:
    """One snapshot row under a table-inversion noise (the dyadic discrete Laplace or the
    discrete Gaussian by inversion, whichever ``T`` holds): out[k] = counts[k] + x_k
    (``fill_discrete_laplace_dyadic``'s or ``fill_discrete_gaussian_inversion``'s draws,
    continuing ``lanes``), adding the positive entries to ``tot``; with ``cout`` (not
    NULL) cout[k] = min(max(counts[k] + x_k, 0), cmax) instead of out[k] (the same draws)."""
    cdef Lanes ln = lanes[0]                     # a local copy (no store per draw)
    cdef Py_ssize_t k
    cdef int64_t v, pv
    if cout != NULL:
        for k in range(K):
            v = counts[k] + _dlap_draw(rng, &ln, T)
            pv = dptm_pos_i64(v)
            cout[k] = <int32_t> (pv if pv < cmax else cmax)
            tot[k] += <double> pv
        lanes[0] = ln
        return
    for k in range(K):
        v = counts[k] + _dlap_draw(rng, &ln, T)
        out[k] = <double> v
        tot[k] += <double> dptm_pos_i64(v)
    lanes[0] = ln


# the factor pass reads the double snapshot, or the clamped and clipped int32 counts
ctypedef fused snap_t:
    double
    int32_t


cdef void _factor_rows(const snap_t* snap, float* wf, double* wm, const double* inv_tot,
                       Py_ssize_t w0, Py_ssize_t w1, Py_ssize_t K, double clip, double beta,
                       double* wb) noexcept nogil:
    """Rows [w0, w1) (at most 4) of ``noisy_snapshot``'s word factor pass:
    wf[w, k] = float((clamp(snap[w, k], 0, clip) + beta) * inv_tot[k]), wm[w] = the sum of
    wf[w, :] in double, in topic order, and (wb not NULL) wb[w, b] its running sum at the
    end of topic block b (topics [b WORD_BLOCK, (b + 1) WORD_BLOCK) cut at K)."""
    cdef Py_ssize_t k, w, kb, ke, nb = (K + WORD_BLOCK - 1) // WORD_BLOCK
    cdef double m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0, t
    cdef float f0, f1, f2, f3
    cdef const snap_t* s0 = snap + w0 * K
    cdef float* g0 = wf + w0 * K
    cdef double* b0 = wb + w0 * nb if wb != NULL else NULL
    if w1 - w0 == 4:
        # topic blocks: the block ends stored after each block (no per-topic branch)
        for kb in range(nb):
            ke = min(kb * WORD_BLOCK + WORD_BLOCK, K)
            for k in range(kb * WORD_BLOCK, ke):
                t = inv_tot[k]
                f0 = <float> ((dptm_clamp(s0[k], clip) + beta) * t)
                f1 = <float> ((dptm_clamp(s0[K + k], clip) + beta) * t)
                f2 = <float> ((dptm_clamp(s0[2 * K + k], clip) + beta) * t)
                f3 = <float> ((dptm_clamp(s0[3 * K + k], clip) + beta) * t)
                g0[k] = f0
                g0[K + k] = f1
                g0[2 * K + k] = f2
                g0[3 * K + k] = f3
                # the sums of the stored floats, read back (the same numbers as f0..f3, but
                # GCC without -fopenmp summed the unrounded double products for two of the
                # four rows: a mass off its factor row by ~1e-8 relative)
                m0 = m0 + g0[k]
                m1 = m1 + g0[K + k]
                m2 = m2 + g0[2 * K + k]
                m3 = m3 + g0[3 * K + k]
            if b0 != NULL:
                b0[kb] = m0
                b0[nb + kb] = m1
                b0[2 * nb + kb] = m2
                b0[3 * nb + kb] = m3
        wm[w0] = m0
        wm[w0 + 1] = m1
        wm[w0 + 2] = m2
        wm[w0 + 3] = m3
        return
    for w in range(w0, w1):
        m0 = 0.0
        for k in range(K):
            f0 = <float> ((dptm_clamp(snap[w * K + k], clip) + beta) * inv_tot[k])
            wf[w * K + k] = f0
            m0 = m0 + wf[w * K + k]
            if wb != NULL and (k % WORD_BLOCK == WORD_BLOCK - 1 or k == K - 1):
                wb[w * nb + k // WORD_BLOCK] = m0
        wm[w] = m0


def noisy_snapshot(const int32_t[:, ::1] n_wk, int kind, double scale, uint64_t a, uint64_t b,
                   uint64_t c, double clip, double beta, double[:, ::1] snapshot,
                   float[:, ::1] word_factor, double[::1] word_mass, object bit_generator,
                   int n_threads=1, dict gauss_table=None, dict laplace_table=None, *,
                   double[:, ::1] word_blocks=None, int32_t[:, ::1] clipped=None,
                   const int32_t[::1] topics=None, const int64_t[::1] word_ptr=None,
                   const int64_t[::1] word_tokens=None):
    """Draw a noisy snapshot of the topic-word counts, its fixed word factor and row masses.

    ``snapshot = n_wk + eta`` with eta i.i.d. per entry; ``kind`` is a NoiseKind: 0 none,
    1 Laplace(scale) (as in ``fill_noise``), 2 Normal(0, scale^2), 3 discrete Laplace of
    scale a/b, 4 discrete Gaussian of variance a/b with c = floor(sqrt(a/b)) + 1 (drawn
    through ``gauss_table`` when given: the same pmf, faster; the dict of
    ``dptm.noise.gauss_inversion.inversion_table(a, b)``, drawn by inversion in lanes per block
    like kind 5, or of ``dptm.noise.gauss_table.gauss_table(a, b)``, the alias-table proposal),
    5 discrete Laplace of parameter r = a / 2^21 (``fill_discrete_laplace_dyadic``, through
    ``laplace_table``, default ``dptm.noise.laplace_table.dyadic_table(a)``). Then, in NumPy
    terms::

        pos = np.maximum(snapshot, 0)
        word_factor = ((np.minimum(pos, clip) + beta)
                       / (pos.sum(axis=0) + V * beta)).astype(np.float32)
        word_mass = word_factor.astype(np.float64).cumsum(axis=1)[:, -1]

    (numerator clamped and clipped, topic totals from the clamped snapshot; float32 halves
    the memory the sweep streams through; ``word_mass`` is summed in topic order, for the
    sweep's word bucket). O(V K). ``word_blocks`` (V x ceil(K / 16), optional, keyword)
    receives the running sums of the same pass at the end of each block of 16 topics
    (``word_block_sums``'s result, without a second pass over the word factor): the
    sweep's two-level word-bucket search table.

    ``clipped`` (V x K int32, optional, keyword; discrete kinds 3, 4, 5 and ceil(clip) < 2^31): the
    snapshot is then not written (``snapshot`` is left as it was); ``clipped`` receives
    ``min(max(snapshot, 0), ceil(clip))`` instead, the only part of it the factor pass
    reads (min(that, clip) is min(max(snapshot, 0), clip)). The same draws, the same
    word factor, masses and tables, with half the memory traffic of the double snapshot:
    for the snapshots a fit does not release.

    ``topics``, ``word_ptr``, ``word_tokens`` (optional, keyword, all three or none): the
    counts are those of ``topics`` (one topic per token) over the token positions grouped
    by word (word ``w``'s are ``word_tokens[word_ptr[w]:word_ptr[w + 1]]``), each row
    counted in the pass that draws its noise; ``n_wk`` is then not read (only its shape):
    for a fit whose sweeps leave the counts to the snapshot
    (``noisy_gibbs_sweep_blocks(..., recount=True)``). The same snapshot as from ``n_wk``
    holding those counts.

    ``bit_generator``: one BitGenerator (every row from it, in row order), or a list of
    ``B`` BitGenerators: rows in ``B`` consecutive blocks of ``ceil(V / B)`` rows, block
    ``j`` drawing its noise from generator ``j`` (used without its lock: they must belong
    to this call), on ``n_threads`` OpenMP threads (a block's rows on one thread, blocks
    handed out as threads free up; one parallel region for the noise and the factor
    pass). The topic totals are summed per block
    (the first block starting from ``V beta``) and then over blocks in block order, so the
    result depends on the blocks and their streams, never on ``n_threads``.
    """
    cdef Py_ssize_t V = n_wk.shape[0], K = n_wk.shape[1], w, k
    cdef Py_ssize_t n_blocks, rows_per, blk, j, g
    cdef double x, beta_sum = V * beta
    cdef bitgen_t* rng
    cdef bint single = not isinstance(bit_generator, list)
    if snapshot.shape[0] != V or snapshot.shape[1] != K or word_factor.shape[0] != V \
            or word_factor.shape[1] != K:
        raise ValueError("snapshot and word_factor must have the shape of n_wk")
    if word_mass.shape[0] != V:
        raise ValueError("word_mass must have one entry per word")
    cdef bint use_clipped = clipped is not None
    cdef int64_t cmax = 0
    cdef double cmaxd = 0.0
    if use_clipped:
        if kind not in (NOISE_DISCRETE_LAPLACE, NOISE_DISCRETE_GAUSSIAN, NOISE_DYADIC_LAPLACE):
            raise ValueError("clipped needs a discrete noise (kind 3, 4 or 5)")
        if not (clip > 0.0 and ceil(clip) < 2147483648.0):
            raise ValueError(f"clipped needs 0 < clip < 2^31, got {clip}")
        if clipped.shape[0] != V or clipped.shape[1] != K:
            raise ValueError("clipped must have the shape of n_wk")
        cmax = <int64_t> ceil(clip)
        cmaxd = <double> cmax
    cdef Py_ssize_t n_wblk = (K + WORD_BLOCK - 1) // WORD_BLOCK
    if word_blocks is not None and (word_blocks.shape[0] != V or word_blocks.shape[1] != n_wblk):
        raise ValueError(f"word_blocks must have shape (V, ceil(K / {WORD_BLOCK})) = "
                         f"({V}, {n_wblk})")
    cdef bint recount = topics is not None
    if recount != (word_ptr is not None) or recount != (word_tokens is not None):
        raise ValueError("topics, word_ptr and word_tokens go together")
    if recount:
        _check_word_groups(word_ptr, word_tokens, V, topics.shape[0])
    if kind < NOISE_NONE or kind > NOISE_DYADIC_LAPLACE:
        raise ValueError("kind must be in 0..5 (a NoiseKind)")
    if (kind == NOISE_DISCRETE_LAPLACE or kind == NOISE_DISCRETE_GAUSSIAN) and (
            a < 1 or b < 1 or (kind == NOISE_DISCRETE_GAUSSIAN and c < 1)):
        raise ValueError("discrete noise needs positive integer parameters")
    if kind == NOISE_DYADIC_LAPLACE and (a < 1 or a >= (<uint64_t> 1 << DYADIC_BITS)):
        raise ValueError("the dyadic discrete Laplace needs a in [1, 2^21)")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    cdef GaussTable T
    cdef LaplaceTable LT
    cdef bint use_table = kind == NOISE_DISCRETE_GAUSSIAN and gauss_table is not None
    # the kinds drawn by _dyadic_row (inversion tables)
    cdef bint lane_kind = kind == NOISE_DYADIC_LAPLACE
    if use_table:
        if gauss_table["p"] != a or gauss_table["q"] != b:
            raise ValueError("gauss_table was built for another variance than a/b")
        if "guide" in gauss_table:
            _set_gauss_inversion(&LT, gauss_table, a, b)
            lane_kind = 1
        else:
            _set_gauss_table(&T, gauss_table)
    if kind == NOISE_DYADIC_LAPLACE:
        if laplace_table is None:
            laplace_table = _laplace_table.dyadic_table(a)
        _set_laplace_table(&LT, laplace_table, a)
    gens = [bit_generator] if single else bit_generator
    n_blocks = len(gens)
    if n_blocks < 1:
        raise ValueError("need at least one bit generator")
    if V == 0 or K == 0:
        return
    rows_per = (V + n_blocks - 1) // n_blocks
    cdef const double* snap_p = &snapshot[0, 0]
    cdef int32_t* cl_p = &clipped[0, 0] if use_clipped else NULL
    cdef float* wf_p = &word_factor[0, 0]
    cdef double* wb_p = &word_blocks[0, 0] if word_blocks is not None else NULL
    cdef double* wm_p = &word_mass[0]
    cdef const int32_t* tp = &topics[0] if recount and topics.shape[0] else NULL
    cdef const int64_t* gp = &word_ptr[0] if recount else NULL
    cdef const int64_t* gt = &word_tokens[0] if recount and word_tokens.shape[0] else NULL
    cdef const int32_t* crow
    cdef int32_t* myrow = NULL
    cdef int64_t jt
    # per-block topic totals, each block's in cache lines of its own: two threads adding
    # into one line (adjacent blocks) would pass it back and forth once per row; after
    # them, each thread's copy of the inverse totals
    cdef Py_ssize_t Kp = (K + 7) & ~(<Py_ssize_t> 7), tid = 0, tk = 0, tj = 0
    cdef double tacc = 0.0
    cdef Bits bits
    cdef Lanes lane
    cdef void* ptot_raw = NULL
    cdef double* ptot = <double*> _own_lines((n_blocks + n_threads) * Kp * sizeof(double),
                                             &ptot_raw)
    # recount: each thread's row of counts (K int32, in cache lines of its own)
    cdef Py_ssize_t Ki = (K + 15) & ~(<Py_ssize_t> 15)
    cdef void* rows_raw = NULL
    cdef int32_t* rows = (<int32_t*> _own_lines(n_threads * Ki * sizeof(int32_t), &rows_raw)
                          if recount else NULL)
    cdef double* totals = NULL
    cdef bitgen_t** rngs = <bitgen_t**> malloc(n_blocks * sizeof(bitgen_t*))
    cdef Bits* srcs = <Bits*> malloc(n_blocks * sizeof(Bits))
    # kind 5 (and 4 by inversion): one lane stream per block, read in row order by the
    # block's thread: the draws of fill_discrete_laplace_dyadic (fill_discrete_gaussian_
    # inversion) over the block's counts, without its V x K int64 buffer
    cdef Lanes* lanes = <Lanes*> calloc(n_blocks, sizeof(Lanes))
    if (ptot == NULL or rngs == NULL or srcs == NULL or lanes == NULL
            or (recount and rows == NULL)):
        free(ptot_raw); free(rngs); free(srcs); free(lanes); free(rows_raw)
        raise MemoryError()
    memset(ptot, 0, n_blocks * Kp * sizeof(double))
    if single:
        n_threads = 1
        bit_generator.lock.acquire()
    try:
        for j in range(n_blocks):
            rngs[j] = get_bitgen(gens[j])
            _bits_init(&srcs[j], rngs[j])
        for k in range(K):
            ptot[k] = beta_sum
        with nogil, parallel(num_threads=n_threads):
            # one parallel region for the noise and the factor pass (one thread wake-up
            # per snapshot); a block's rows on one thread, in row order, blocks handed out
            # as threads free up (the result depends on the blocks only)
            for blk in prange(n_blocks, schedule="dynamic"):
                rng = rngs[blk]
                # the block's bit pool and lanes in the thread's own stack (the arrays'
                # entries of adjacent blocks share cache lines)
                bits = srcs[blk]
                lane = lanes[blk]
                if recount:
                    myrow = rows + threadid() * Ki
                for w in range(blk * rows_per, min(V, blk * rows_per + rows_per)):
                    crow = &n_wk[w, 0]
                    if recount:
                        # the row's counts from its word's topics, in the thread's own row
                        # (n_wk is neither read nor written)
                        memset(myrow, 0, K * sizeof(int32_t))
                        for jt in range(gp[w], gp[w + 1]):
                            myrow[tp[gt[jt]]] += 1
                        crow = myrow
                        # the next row's topics (random positions in z) load while this
                        # row's noise is drawn
                        for jt in range(gp[w + 1], gp[w + 2] if w + 2 <= V else gp[w + 1]):
                            dptm_prefetch_r(tp + gt[jt], 1)
                    if lane_kind:
                        # the default noises, in their own loop (no per-count branch on kind)
                        _dyadic_row(rng, &lane, &LT, crow, &snapshot[w, 0],
                                    ptot + blk * Kp, K, cl_p + w * K if use_clipped else NULL,
                                    cmax)
                        continue
                    for k in range(K):
                        x = crow[k]
                        if kind == NOISE_LAPLACE:
                            x = x + scale * (random_standard_exponential(rng)
                                             - random_standard_exponential(rng))
                        elif kind == NOISE_GAUSSIAN:
                            x += scale * random_standard_normal(rng)
                        elif kind == NOISE_DISCRETE_LAPLACE:
                            x = x + <double> _discrete_laplace(&bits, a, b)
                        elif use_table:
                            x = x + <double> _discrete_gaussian_table(&bits, &T)
                        elif kind == NOISE_DISCRETE_GAUSSIAN:
                            x = x + <double> _discrete_gaussian(&bits, a, b, c)
                        if use_clipped:
                            cl_p[w * K + k] = <int32_t> dptm_clamp(x, cmaxd)
                        else:
                            snapshot[w, k] = x
                        ptot[blk * Kp + k] += dptm_clamp(x, INFINITY)   # branch-free max(x, 0)
            dptm_omp_barrier()                  # every block's totals are in
            # each thread sums the blocks' totals in block order (the same doubles on every
            # thread, whatever the team), into its own copy
            tid = threadid()
            totals = ptot + (n_blocks + tid) * Kp
            for tk in range(K):
                tacc = ptot[tk]
                for tj in range(1, n_blocks):
                    tacc = tacc + ptot[tj * Kp + tk]
                totals[tk] = 1.0 / tacc
            # four rows at a time: each row's mass is a chain of dependent additions in
            # topic order (kept: the sweep's word bucket needs exactly these sums), so four
            # independent chains hide the add latency (same sums, same results)
            for g in prange((V + 3) // 4, schedule="static"):
                if use_clipped:
                    _factor_rows(<const int32_t*> cl_p, wf_p, wm_p, totals, 4 * g,
                                 min(4 * g + 4, V), K, clip, beta, wb_p)
                else:
                    _factor_rows(snap_p, wf_p, wm_p, totals, 4 * g, min(4 * g + 4, V), K,
                                 clip, beta, wb_p)
    finally:
        if single:
            bit_generator.lock.release()
        free(ptot_raw)
        free(rows_raw)
        free(rngs)
        free(srcs)
        free(lanes)
