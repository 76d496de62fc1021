# The statistic of PrivateBatchLDA's releases in one pass over the stored pairs: per unit
# (a document, or a user's run of documents) its expected topic-word counts, clipped to L2
# norm C, rounded down to the noise lattice, checked exactly and summed, without any
# nnz x K array. Every floating-point step is the numpy expression it replaced, in the same
# order (models/vb_statistic.py documents them), so the statistic is bitwise the same.
cdef extern from "_kernels/svi_clipped_sum.h":
    double dptm_einsum_dot(const double* a, const double* b, Py_ssize_t n) noexcept nogil
    double dptm_pairwise_sum(const double* a, Py_ssize_t n) noexcept nogil
    void dptm_group_sum(const int64_t* slot, Py_ssize_t n, const int64_t* rows,
                        const int32_t* words, const double* wt, const double* et,
                        const double* eb, Py_ssize_t K, double* v,
                        double* scratch) noexcept nogil

# doubles of scratch per thread, in units of K: v, m, and dptm_group_sum's (1 + 8 + 64)
cdef Py_ssize_t _CLIP_SCRATCH = 75

from libc.math cimport floor as _c_floor, isnan as _c_isnan  # no-cython-lint


cdef inline bint _lattice_row_ok(const double* m, Py_ssize_t K, double bound, int64_t limit,
                                 int64_t* sq) noexcept nogil:
    """Adds the squares of the lattice row ``m`` (integers as doubles) to ``sq[0]``; False
    as soon as an entry is NaN, infinite or above ``bound`` in magnitude (it would cast to
    garbage or square past 2^63) or the sum exceeds ``limit`` (< 2^62: with entries below
    2^31 the sum never overflows before the comparison)."""
    cdef Py_ssize_t k
    cdef int64_t i
    for k in range(K):
        if not (_c_fabs(m[k]) <= bound):
            return False
        i = <int64_t> m[k]
        sq[0] += i * i
        if sq[0] > limit:
            return False
    return True


def clipped_lattice_sum(const int64_t[::1] unit_ptr, const int64_t[::1] group_ptr,
                        const int64_t[::1] slots, const int64_t[::1] rows,
                        const int32_t[::1] words, const double[::1] numerators,
                        const double[:, ::1] et, const double[:, ::1] exp_elog_beta_t,
                        double target, double granularity=0.0, double bound=0.0,
                        int64_t limit=0, const double[::1] word_weight=None,
                        double[:, ::1] out_sum=None, int64_t[:, ::1] out_lattice=None,
                        int n_threads=1):
    """Sum of the clipped (and lattice-rounded) contributions of units, word-major V x K.

    Pair ``p`` (a stored (document, word) entry) has document ``rows[p]`` (a row of
    ``et``, exp(E[log theta]) of the documents) and word ``words[p]``; its contribution is
    ``(et[rows[p]] * B[words[p]]) * wt_p`` with ``B = exp_elog_beta_t`` (V x K) and
    ``wt_p = numerators[p] / phinorm_p`` (times ``word_weight[words[p]]`` if given),
    ``phinorm_p = et[rows[p]] . B[words[p]] + 1e-100``. Group ``q`` is the pairs
    ``slots[group_ptr[q] : group_ptr[q + 1]]`` (one word; their contributions added in
    that order), unit ``u`` the groups ``unit_ptr[u] : unit_ptr[u + 1]``.

    Each unit is divided by its largest entry ``peak`` (if positive), its L2 norm
    ``length`` taken, and it is scaled by ``min(peak, target / length)`` (0 if length is
    0; NaN propagates): back to its own scale, or to norm ``target`` (a hair below C).
    With ``granularity`` g > 0 every entry is floored to a multiple of g and the unit is
    kept only if every entry is finite and at most ``bound`` (C / g) in magnitude and the
    integer sum of squares is at most ``limit`` (floor(bound^2)); the kept units' integer
    lattice counts are added to ``out_lattice`` (V x K, exact). Without it the scaled
    entries are added to ``out_sum`` (V x K) in group order per cell.

    Parallelism: units on ``n_threads`` threads, then the sums split by word ranges, each
    cell receiving its groups in order: the output is the same for every ``n_threads``.

    Returns
    -------
    ok : ndarray of float64 (n_units,): 1.0 for a unit kept, 0.0 for one dropped by the
        lattice check (always 1.0 without granularity).
    """
    cdef Py_ssize_t n_units = unit_ptr.shape[0] - 1, n_pairs = rows.shape[0]
    cdef Py_ssize_t K = exp_elog_beta_t.shape[1], V = exp_elog_beta_t.shape[0]
    cdef bint lattice = granularity > 0.0, weighted = word_weight is not None
    cdef Py_ssize_t u, q, p, k, t, w, lo, hi, g0, n, tid
    cdef double peak, pdiv, ss, length, clip, scale, x
    cdef bint nan, good
    cdef int64_t sq
    cdef int bad_groups = 0
    if unit_ptr.shape[0] < 1 or group_ptr.shape[0] < 1:
        raise ValueError("unit_ptr and group_ptr must hold at least one offset")
    if unit_ptr[0] != 0 or unit_ptr[n_units] != group_ptr.shape[0] - 1:
        raise ValueError("unit_ptr must run from 0 to the number of groups")
    if group_ptr[0] != 0 or group_ptr[group_ptr.shape[0] - 1] != slots.shape[0]:
        raise ValueError("group_ptr must run from 0 to the number of slots")
    if words.shape[0] != n_pairs or numerators.shape[0] != n_pairs:
        raise ValueError("rows, words and numerators must have one entry per pair")
    if et.shape[1] != K:
        raise ValueError(f"et must have {K} columns")
    if n_units and (np.any(np.diff(np.asarray(unit_ptr)) < 0)
                    or np.any(np.diff(np.asarray(group_ptr)) <= 0)):
        raise ValueError("unit_ptr must be non-decreasing and every group non-empty")
    if slots.shape[0] and (np.min(slots) < 0 or np.max(slots) >= n_pairs):
        raise ValueError(f"slots must lie in [0, {n_pairs})")
    if n_pairs and (np.min(rows) < 0 or np.max(rows) >= et.shape[0]):
        raise ValueError(f"rows must lie in [0, {et.shape[0]})")
    if n_pairs and (np.min(words) < 0 or np.max(words) >= V):
        raise ValueError(f"words must lie in [0, {V})")
    if weighted and word_weight.shape[0] != V:
        raise ValueError(f"word_weight must have length {V}")
    if lattice and (out_lattice is None or out_lattice.shape[0] != V
                    or out_lattice.shape[1] != K or not 0.0 < bound < 2.0 ** 31
                    or not 0 <= limit < (<int64_t> 1) << 62):
        raise ValueError(f"the lattice sum needs out_lattice ({V}, {K}), 0 < bound < 2^31 "
                         "and 0 <= limit < 2^62")
    if not lattice and (out_sum is None or out_sum.shape[0] != V or out_sum.shape[1] != K):
        raise ValueError(f"out_sum must have shape ({V}, {K})")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    ok_arr = np.ones(n_units, dtype=np.float64)
    if n_units == 0 or K == 0:
        return ok_arr
    cdef double[::1] ok = ok_arr
    wt_arr = np.empty(n_pairs, dtype=np.float64)
    pdiv_arr = np.ones(n_units, dtype=np.float64)
    scale_arr = np.zeros(n_units, dtype=np.float64)
    cdef double[::1] wt = wt_arr, pdivs = pdiv_arr, scales = scale_arr
    cdef const double* etp = &et[0, 0]
    cdef const double* ebp = &exp_elog_beta_t[0, 0]
    cdef const int64_t* slotp = &slots[0]
    cdef const int64_t* rowp = &rows[0]
    cdef const int32_t* wordp = &words[0]
    cdef double* wtp = &wt[0]
    cdef int nt = <int> min(n_threads, n_units)
    cdef double* scratch = <double*> malloc(nt * _CLIP_SCRATCH * K * sizeof(double))
    # per thread, the last unit that held each word: two groups of one unit on one word
    # would add up in one cell after their norms were taken apart (sqrt(2) times C)
    cdef int64_t* seen = <int64_t*> malloc(nt * V * sizeof(int64_t))
    cdef int64_t* mark
    if scratch == NULL or seen == NULL:
        free(scratch)
        free(seen)
        raise MemoryError()
    for p in range(nt * V):
        seen[p] = -1
    cdef double* v
    cdef double* m
    try:
        with nogil:
            # per pair: its count (or 1) over the phi normaliser, as the numpy expression
            # ((1.0 or counts) / (einsum + 1e-100)) * word_weight
            for p in prange(n_pairs, num_threads=nt, schedule="static"):
                x = dptm_einsum_dot(etp + rowp[p] * K, ebp + wordp[p] * K, K) + 0.0
                wtp[p] = numerators[p] / (x + 1e-100)
                if weighted:
                    wtp[p] = wtp[p] * word_weight[wordp[p]]
            for u in prange(n_units, num_threads=nt, schedule="dynamic"):
                tid = threadid()
                v = scratch + tid * _CLIP_SCRATCH * K
                m = v + K
                mark = seen + tid * V
                if unit_ptr[u + 1] == unit_ptr[u]:
                    continue
                # peak: the unit's largest entry (NaN if any entry is NaN)
                nan = False
                peak = 0.0
                for q in range(unit_ptr[u], unit_ptr[u + 1]):
                    g0 = group_ptr[q]
                    w = wordp[slotp[g0]]
                    if mark[w] == u:
                        bad_groups += 1
                    mark[w] = u
                    for p in range(g0 + 1, group_ptr[q + 1]):
                        if wordp[slotp[p]] != w:
                            bad_groups += 1
                    dptm_group_sum(slotp + g0, group_ptr[q + 1] - g0, rowp, wordp, wtp, etp,
                                   ebp, K, v, v + 2 * K)
                    if q == unit_ptr[u]:
                        peak = v[0]
                    for k in range(K):
                        if _c_isnan(v[k]):
                            nan = True
                        elif v[k] > peak:
                            peak = v[k]
                if nan:
                    peak = _C_NAN
                pdiv = peak if peak > 0.0 else 1.0
                # the norm of the unit divided by its peak: a pairwise sum per group (numpy's
                # row sum), the groups added in order (bincount)
                ss = 0.0
                for q in range(unit_ptr[u], unit_ptr[u + 1]):
                    g0 = group_ptr[q]
                    dptm_group_sum(slotp + g0, group_ptr[q + 1] - g0, rowp, wordp, wtp, etp,
                                   ebp, K, v, v + 2 * K)
                    for k in range(K):
                        x = v[k] / pdiv
                        m[k] = x * x
                    ss = ss + dptm_pairwise_sum(m, K)
                length = sqrt(ss)
                clip = target / length if length > 0.0 else 0.0
                scale = _C_NAN if (_c_isnan(peak) or _c_isnan(clip)) else (
                    peak if peak < clip else clip)
                pdivs[u] = pdiv
                scales[u] = scale
                if lattice:
                    sq = 0
                    good = True
                    for q in range(unit_ptr[u], unit_ptr[u + 1]):
                        g0 = group_ptr[q]
                        dptm_group_sum(slotp + g0, group_ptr[q + 1] - g0, rowp, wordp, wtp, etp,
                                       ebp, K, v, v + 2 * K)
                        for k in range(K):
                            m[k] = _c_floor(((v[k] / pdiv) * scale) / granularity)
                        if not _lattice_row_ok(m, K, bound, limit, &sq):
                            good = False
                            break
                    if not good:
                        ok[u] = 0.0
        if bad_groups:
            raise ValueError("every group must hold one word and every unit distinct words")
        with nogil:
            # Thread t owns the word ids [t V / nt, (t + 1) V / nt): each cell gets its
            # groups in order whatever nt is.
            for t in prange(nt, num_threads=nt, schedule="static", chunksize=1):
                lo = (t * V) // nt
                hi = ((t + 1) * V) // nt
                v = scratch + t * _CLIP_SCRATCH * K
                for u in range(n_units):
                    if ok[u] == 0.0:
                        continue
                    for q in range(unit_ptr[u], unit_ptr[u + 1]):
                        g0 = group_ptr[q]
                        w = wordp[slotp[g0]]
                        if w < lo or w >= hi:
                            continue
                        n = group_ptr[q + 1] - g0
                        dptm_group_sum(slotp + g0, n, rowp, wordp, wtp, etp, ebp, K, v, v + 2 * K)
                        for k in range(K):
                            x = (v[k] / pdivs[u]) * scales[u]
                            if lattice:
                                out_lattice[w, k] += <int64_t> _c_floor(x / granularity)
                            else:
                                out_sum[w, k] += x
    finally:
        free(scratch)
        free(seen)
    return ok_arr


def lattice_norm_ok(const double[:, ::1] m, const int64_t[::1] indptr, double bound,
                    int64_t limit):
    """The kernel's exact check (``_lattice_row_ok``) applied to given lattice rows: 1.0
    for each unit (rows ``indptr[u] : indptr[u + 1]`` of ``m``) whose entries are finite,
    at most ``bound`` in magnitude and whose integer sum of squares is at most ``limit``,
    else 0.0."""
    cdef Py_ssize_t n_units = indptr.shape[0] - 1, K = m.shape[1], u, r
    cdef int64_t sq
    if not 0.0 < bound < 2.0 ** 31 or not 0 <= limit < (<int64_t> 1) << 62:
        raise ValueError("need 0 < bound < 2^31 and 0 <= limit < 2^62")
    if n_units < 0 or indptr[0] != 0 or indptr[n_units] != m.shape[0] or (
            n_units and np.any(np.diff(np.asarray(indptr)) < 0)):
        raise ValueError("indptr must run from 0 to the number of rows, non-decreasing")
    ok_arr = np.ones(n_units, dtype=np.float64)
    cdef double[::1] ok = ok_arr
    if K == 0:
        return ok_arr
    with nogil:
        for u in range(n_units):
            sq = 0
            for r in range(indptr[u], indptr[u + 1]):
                if not _lattice_row_ok(&m[r, 0], K, bound, limit, &sq):
                    ok[u] = 0.0
                    break
    return ok_arr
