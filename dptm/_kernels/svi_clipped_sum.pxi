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
    void dptm_row_peak(const double* row, Py_ssize_t K, double* peak, int* nan) noexcept nogil
    void dptm_lattice_row(const double* row, double* lat, Py_ssize_t K, double scale,
                          double inv_g) noexcept nogil
    void dptm_prefetch_row(const int64_t* p, Py_ssize_t n) noexcept nogil
    void dptm_divided_squares(double* row, double* sq, Py_ssize_t K, double pdiv,
                              int store) noexcept nogil

# doubles of scratch per thread, in units of K: v, m, and dptm_group_sum's (1 + 8 + 64)
cdef Py_ssize_t _CLIP_SCRATCH = 75
# doubles per thread caching a unit's group sums (computed once, not once per pass); a
# larger unit recomputes them (same values)
cdef Py_ssize_t _CLIP_CACHE = 1 << 17


cdef struct _ClipArgs:
    const int64_t* unit_ptr
    const int64_t* group_ptr
    const int64_t* slots
    const int64_t* rows
    const int32_t* words
    const double* wt
    const double* et
    const double* eb
    Py_ssize_t K
    Py_ssize_t V
    double target
    double granularity
    double inv_g
    double bound
    int64_t limit
    bint lattice

from libc.math cimport floor as _c_floor, frexp, isnan as _c_isnan  # no-cython-lint


cdef inline double _lattice_floor(double x) noexcept nogil:
    """floor(x) (the sign of a zero aside): a truncation below 2^52, libm's floor beyond
    (and for NaN / inf), which the baseline x86-64 build would call for every entry."""
    cdef double t
    if _c_fabs(x) < 4503599627370496.0:
        t = <double> (<int64_t> x)
        return t - 1.0 if t > x else t
    return _c_floor(x)


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


cdef inline double* _group_row(const _ClipArgs* a, Py_ssize_t q, Py_ssize_t q0, bint cached,
                               double* cache, double* v, double* scr) noexcept nogil:
    """Group ``q``'s summed contribution: its row of the unit's cache (the unit's first
    group is ``q0``), else computed into ``v``."""
    cdef Py_ssize_t g0
    if cached:
        return cache + (q - q0) * a.K
    g0 = a.group_ptr[q]
    dptm_group_sum(a.slots + g0, a.group_ptr[q + 1] - g0, a.rows, a.words, a.wt, a.et, a.eb,
                   a.K, v, scr)
    return v


cdef inline void _add_group(const _ClipArgs* a, Py_ssize_t q, const double* row, double pdiv,
                            double scale, int64_t* out_lattice, double* out_sum) noexcept nogil:
    """Adds group ``q``'s clipped entries (``row`` its summed contribution) to its word's
    row of the V x K output: lattice counts, or the scaled values."""
    cdef Py_ssize_t k, K = a.K, w = a.words[a.slots[a.group_ptr[q]]]
    cdef double x
    for k in range(K):
        x = (row[k] / pdiv) * scale
        if a.lattice:
            # times 1 / g, a power of two: exactly x / g
            out_lattice[w * K + k] += <int64_t> _lattice_floor(x * a.inv_g)
        else:
            out_sum[w * K + k] += x


cdef int _clip_unit(const _ClipArgs* a, Py_ssize_t u, double* work, int64_t* mark,
                    double* pdiv_out, double* scale_out, int64_t* out_lattice,
                    double* out_sum) noexcept nogil:
    """Unit ``u``: its peak, norm, clip scale (into ``pdiv_out`` / ``scale_out``) and, with
    a lattice, the exact check. Returns 1 (kept), 0 (dropped by the check) or -1 (two
    groups on one word, or a group mixing words). With ``out_lattice`` / ``out_sum`` (one
    thread) a kept unit is also added to it, groups in order."""
    cdef Py_ssize_t K = a.K, q, q0 = a.unit_ptr[u], q1 = a.unit_ptr[u + 1], g0, p, k, w
    cdef double* v = work
    cdef double* m = work + K
    cdef double* scr = work + 2 * K
    cdef double* cache = work + _CLIP_SCRATCH * K
    cdef bint cached = (q1 - q0) * K <= _CLIP_CACHE
    cdef int nan = 0
    cdef double peak = 0.0, pdiv, ss = 0.0, length, clip, scale, x
    cdef double* row
    cdef double* lat
    cdef int64_t sq = 0
    if q1 == q0:
        return 1
    # words and peak (the unit's largest entry; NaN if any entry is NaN); fills the cache
    for q in range(q0, q1):
        g0 = a.group_ptr[q]
        w = a.words[a.slots[g0]]
        if mark[w] == u:
            return -1
        mark[w] = u
        for p in range(g0 + 1, a.group_ptr[q + 1]):
            if a.words[a.slots[p]] != w:
                return -1
        if out_lattice != NULL:
            dptm_prefetch_row(out_lattice + w * K, K)      # its adds come after the check
        row = cache + (q - q0) * K if cached else v
        dptm_group_sum(a.slots + g0, a.group_ptr[q + 1] - g0, a.rows, a.words, a.wt, a.et,
                       a.eb, K, row, scr)
        if q == q0:
            peak = row[0]
        dptm_row_peak(row, K, &peak, &nan)
    if nan:
        peak = _C_NAN
    pdiv = peak if peak > 0.0 else 1.0
    # the norm of the unit divided by its peak: a pairwise sum per group (numpy's row
    # sum), the groups added in order (bincount)
    for q in range(q0, q1):
        row = _group_row(a, q, q0, cached, cache, v, scr)
        # with a cached lattice unit, the lattice pass reads the divided row
        dptm_divided_squares(row, m, K, pdiv, cached and a.lattice)
        ss = ss + dptm_pairwise_sum(m, K)
    length = sqrt(ss)
    clip = a.target / length if length > 0.0 else 0.0
    scale = _C_NAN if (_c_isnan(peak) or _c_isnan(clip)) else (
        peak if peak < clip else clip)
    pdiv_out[0] = pdiv
    scale_out[0] = scale
    if a.lattice:
        for q in range(q0, q1):
            row = _group_row(a, q, q0, cached, cache, v, scr)
            if cached:                          # replaced by its lattice row
                dptm_lattice_row(row, row, K, scale, a.inv_g)
                lat = row
            else:
                lat = m
                for k in range(K):
                    lat[k] = _lattice_floor(((row[k] / pdiv) * scale) * a.inv_g)
            if not _lattice_row_ok(lat, K, a.bound, a.limit, &sq):
                return 0
    if out_lattice != NULL or out_sum != NULL:
        for q in range(q0, q1):
            if a.lattice and cached:
                row = cache + (q - q0) * K
                w = a.words[a.slots[a.group_ptr[q]]]
                for k in range(K):
                    out_lattice[w * K + k] += <int64_t> row[k]
            else:
                _add_group(a, q, _group_row(a, q, q0, cached, cache, v, scr), pdiv, scale,
                           out_lattice, out_sum)
    return 1


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
    ``slots[group_ptr[q] : group_ptr[q + 1]]`` (one word; their contributions added as
    np.add.reduceat adds them), unit ``u`` the groups ``unit_ptr[u] : unit_ptr[u + 1]``
    (distinct words).

    Each unit is divided by its largest entry ``peak`` (if positive), its L2 norm
    ``length`` taken, and it is scaled by ``min(peak, target / length)`` (0 if length is
    0; NaN propagates): back to its own scale, or to norm ``target`` (a hair below C).
    With ``granularity`` g > 0 every entry is floored to a multiple of g and the unit is
    kept only if every entry is finite and at most ``bound`` (C / g) in magnitude and the
    integer sum of squares is at most ``limit`` (floor(bound^2)); the kept units' integer
    lattice counts are added to ``out_lattice`` (V x K, exact). Without it the scaled
    entries are added to ``out_sum`` (V x K) in group order per cell.

    Parallelism: units on ``n_threads`` threads, then the sums split by word ranges, each
    cell receiving its groups in order (one thread adds each unit as it goes): the output
    is the same for every ``n_threads``.

    Returns
    -------
    ok : ndarray of float64 (n_units,): 1.0 for a unit kept, 0.0 for one dropped by the
        lattice check (always 1.0 without granularity).
    """
    cdef Py_ssize_t n_units = unit_ptr.shape[0] - 1, n_pairs = rows.shape[0]
    cdef Py_ssize_t K = exp_elog_beta_t.shape[1], V = exp_elog_beta_t.shape[0]
    cdef bint lattice = granularity > 0.0, weighted = word_weight is not None
    cdef Py_ssize_t u, q, p, t, w, lo, hi, g0, tid
    cdef double x
    cdef int verdict, malformed = 0, expo
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
    if lattice and not (frexp(granularity, &expo) == 0.5
                        and 2.0 ** -1022 <= granularity <= 2.0 ** 1022):
        # x / g is then exactly x * (1 / g)
        raise ValueError(f"granularity must be a power of two, got {granularity!r}")
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
    cdef _ClipArgs args
    args.unit_ptr = &unit_ptr[0]
    args.group_ptr = &group_ptr[0]
    args.slots = &slots[0] if slots.shape[0] else NULL
    args.rows = &rows[0] if n_pairs else NULL
    args.words = &words[0] if n_pairs else NULL
    args.wt = &wt[0] if n_pairs else NULL
    args.et = &et[0, 0] if et.shape[0] else NULL
    args.eb = &exp_elog_beta_t[0, 0] if V else NULL
    args.K = K
    args.V = V
    args.target = target
    args.granularity = granularity
    args.inv_g = 1.0 / granularity if lattice else 0.0
    args.bound = bound
    args.limit = limit
    args.lattice = lattice
    cdef int64_t* lat_p = &out_lattice[0, 0] if lattice and V else NULL
    cdef double* sum_p = &out_sum[0, 0] if not lattice and V else NULL
    cdef int nt = <int> min(n_threads, n_units)
    cdef Py_ssize_t per = _CLIP_SCRATCH * K + _CLIP_CACHE
    cdef double* scratch = <double*> malloc(nt * per * sizeof(double))
    # per thread, the last unit that held each word: two groups of one unit on one word
    # would add up in one cell after their norms were taken apart (sqrt(2) times C)
    cdef int64_t* seen = <int64_t*> malloc(nt * V * sizeof(int64_t))
    if scratch == NULL or seen == NULL:
        free(scratch)
        free(seen)
        raise MemoryError()
    for p in range(nt * V):
        seen[p] = -1
    try:
        with nogil:
            # per pair: its count (or 1) over the phi normaliser, as the numpy expression
            # ((1.0 or counts) / (einsum + 1e-100)) * word_weight
            for p in prange(n_pairs, num_threads=nt, schedule="static"):
                x = dptm_einsum_dot(args.et + args.rows[p] * K, args.eb + args.words[p] * K,
                                    K) + 0.0
                wt[p] = numerators[p] / (x + 1e-100)
                if weighted:
                    wt[p] = wt[p] * word_weight[args.words[p]]
            if nt == 1:
                for u in range(n_units):
                    verdict = _clip_unit(&args, u, scratch, seen, &pdivs[u], &scales[u],
                                         lat_p, sum_p)
                    if verdict < 0:
                        malformed = 1
                        break
                    ok[u] = verdict
        if malformed:
            raise ValueError("every group must hold one word and every unit distinct words")
        if nt > 1:
            with nogil:
                for u in prange(n_units, num_threads=nt, schedule="dynamic"):
                    tid = threadid()
                    verdict = _clip_unit(&args, u, scratch + tid * per, seen + tid * V,
                                         &pdivs[u], &scales[u], NULL, NULL)
                    if verdict < 0:
                        malformed += 1
                    else:
                        ok[u] = verdict
            if malformed:
                raise ValueError("every group must hold one word and every unit distinct "
                                 "words")
            with nogil:
                # Thread t owns the word ids [t V / nt, (t + 1) V / nt): each cell gets its
                # groups in order whatever nt is.
                for t in prange(nt, num_threads=nt, schedule="static", chunksize=1):
                    lo = (t * V) // nt
                    hi = ((t + 1) * V) // nt
                    for u in range(n_units):
                        if ok[u] == 0.0:
                            continue
                        for q in range(unit_ptr[u], unit_ptr[u + 1]):
                            g0 = group_ptr[q]
                            w = args.words[args.slots[g0]]
                            if w < lo or w >= hi:
                                continue
                            _add_group(&args, q, _group_row(&args, q, q, False, NULL,
                                                            scratch + t * per,
                                                            scratch + t * per + 2 * K),
                                       pdivs[u], scales[u], lat_p, sum_p)
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
