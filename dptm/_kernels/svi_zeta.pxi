cdef double SQUAREM_SHRINK = 1e-3


cdef inline double _zeta_eval(const int64_t start, const int64_t stop, const int32_t[::1] indices,
                              const double[::1] counts, const double[:, ::1] phi_t,
                              const double* theta, double* acc, Py_ssize_t K,
                              double floor, bint with_obj=True) noexcept nogil:
    """Objective sum_j c_j log(p_j), p_j = theta @ phi_t[w_j], at ``theta`` (0 unless
    ``with_obj``); fills ``acc[k] = sum_j c_j phi_t[w_j, k] / p_j`` (the gradient, also the
    EM accumulator)."""
    cdef Py_ssize_t j, k
    cdef double obj = 0.0, p, ratio
    cdef const double* row
    for k in range(K):
        acc[k] = 0.0
    for j in range(start, stop):
        row = &phi_t[indices[j], 0]
        p = 0.0
        for k in range(K):
            p += theta[k] * row[k]
        if p < floor:
            p = floor
        if with_obj:
            obj += counts[j] * log(p)
        ratio = counts[j] / p
        for k in range(K):
            acc[k] += ratio * row[k]
    return obj


cdef inline double _zeta_gap(const double* acc, Py_ssize_t K, double n_d) noexcept nogil:
    """Frank-Wolfe duality gap max_k acc[k] - N_d: an upper bound on zeta - objective
    (concavity; sum_k theta_k acc[k] = N_d for every theta in the simplex)."""
    cdef Py_ssize_t k
    cdef double g = acc[0]
    for k in range(1, K):
        if acc[k] > g:
            g = acc[k]
    return g - n_d


cdef inline void _zeta_em(const double* theta, const double* acc, double* out, Py_ssize_t K,
                          double n_d) noexcept nogil:
    """The EM fixed-point map out_k = theta_k * acc_k / N_d (stays in the simplex)."""
    cdef Py_ssize_t k
    cdef double s = 0.0
    for k in range(K):
        out[k] = theta[k] * acc[k] / n_d
        s += out[k]
    for k in range(K):  # renormalise away rounding drift
        out[k] /= s


# Active-set Newton finishing step of zeta_batch (see _zeta_newton).
cdef double NEWTON_BIND = 1e-2    # theta_k <= this with g_k < N_d: component sent to 0
cdef double NEWTON_PIVOT = 1e-11  # LDL^T pivot below this * max diagonal: direction dropped
cdef int NEWTON_HALVINGS = 10     # step halvings tried before giving the turn back to EM
cdef int NEWTON_WARM = 2          # SQUAREM cycles before the first Newton step


cdef int _zeta_newton(const int64_t start, const int64_t stop, const int32_t[::1] indices,
                      const double[::1] counts, const double[:, ::1] phi_t,
                      double* th, double* acc, double* obj, Py_ssize_t K, double n_d,
                      double floor, double* wk, Py_ssize_t* fidx,
                      Py_ssize_t* n_eval) noexcept nogil:
    """One active-set Newton step on the simplex from ``th`` (gradient ``acc``, objective
    ``obj[0]``); ``th``, ``acc``, ``obj`` are updated in place when a step is taken.

    Components split into: B (binding: 0 < theta_k <= eps and g_k < N_d, eps =
    min(NEWTON_BIND, w), w = (max_k g_k - N_d + sum_k theta_k |g_k - N_d|) / N_d the distance
    from optimality, as in Bertsekas' (1982) projected Newton method), moved to exactly 0 (EM
    only shrinks them geometrically); F (free: the other theta_k > 0, and theta_k = 0 with
    g_k > N_d, i.e. KKT-violating components re-added); the rest stay at 0. On F the
    equality-constrained Newton step of the second-order model
    sum_j c_j [dp_j / p_j - dp_j^2 / (2 p_j^2)] (dp_j the change of p_j) is found with the
    constraint eliminated through the largest free component r: dtheta_a = y_a for
    a in F \\ {r}, dtheta_r = sum_B theta - sum_a y_a. The reduced system
    (Psi W Psi^T) y = Psi W (p - b), Psi[a, j] = Phi[a, w_j] - Phi[r, w_j], W = c / p^2,
    b the (known) change of p from B and r, is solved by LDL^T; a pivot below NEWTON_PIVOT
    times the largest diagonal marks a direction along which the objective is (numerically)
    flat, whose y is fixed at 0 (so a face with more components than the document has
    distinct words is handled). A re-added component the step would lower stays at 0.

    Step length: the full step if the Newton decrement lam (lam^2 = sum_j c_j dp_j^2 / p_j^2)
    is <= 1/4, else the damped step 1 / (1 + lam), which increases a self-concordant
    objective (sum_j c_j log p_j is, for counts >= 1); then the ratio test: if a component
    would cross 0 first, the step stops there and that component is set to exactly 0 (it
    leaves the face). The step is accepted, or halved (NEWTON_HALVINGS times at most), on
    the change of the objective computed term by term (see _zeta_trial): accepted iff it does
    not decrease.

    Returns 1 if the objective increased, 0 otherwise (the caller falls back to EM).
    Every objective evaluation adds 1 to ``n_eval[0]``.
    """
    cdef Py_ssize_t J = stop - start, j, k, a, b, t, m = 0, mm, r = -1
    cdef double sB = 0.0, pj, bj, wj, uj, s, alpha, obj_new, hmax, piv, v, lam2, amax, eps_b, diff
    cdef Py_ssize_t kb
    cdef double* delta = wk
    cdef double* tnew = wk + K
    cdef double* accn = wk + 2 * K
    cdef double* y = wk + 3 * K
    cdef double* dg = wk + 4 * K
    cdef double* psi = wk + 5 * K
    cdef double* H = wk + 6 * K
    cdef const double* row
    cdef int ls
    # 1. Split the components. The binding threshold shrinks with the distance from
    # optimality w (Bertsekas 1982), so that small components of the support are kept free.
    v = acc[0]
    s = 0.0
    for k in range(K):
        if acc[k] > v:
            v = acc[k]
        s += th[k] * fabs(acc[k] - n_d)
    eps_b = (v - n_d + s) / n_d
    if eps_b > NEWTON_BIND:
        eps_b = NEWTON_BIND
    for k in range(K):
        delta[k] = 0.0
        if th[k] > 0.0:
            if acc[k] < n_d and th[k] <= eps_b:
                delta[k] = -th[k]
                sB += th[k]
            else:
                fidx[m] = k
                m += 1
                if r < 0 or th[k] > th[r]:
                    r = k
        elif acc[k] > n_d:
            fidx[m] = k
            m += 1
    if r < 0:
        return 0
    mm = 0
    for a in range(m):  # F \ {r}
        if fidx[a] != r:
            fidx[mm] = fidx[a]
            mm += 1
    # 2. Reduced Newton system (lower triangle of H, row-major mm x mm) and right side y.
    for a in range(mm):
        y[a] = 0.0
        for b in range(a + 1):
            H[a * mm + b] = 0.0
    for j in range(J):
        row = &phi_t[indices[start + j], 0]
        pj = 0.0
        bj = sB * row[r]
        for k in range(K):
            pj += th[k] * row[k]
            bj += delta[k] * row[k]
        if not pj > floor:
            continue  # floored word: the model is flat there
        wj = counts[start + j] / (pj * pj)
        uj = wj * (pj - bj)
        for a in range(mm):
            psi[a] = row[fidx[a]] - row[r]
            y[a] += psi[a] * uj
            v = wj * psi[a]
            for b in range(a + 1):
                H[a * mm + b] += v * psi[b]
    # 3. LDL^T with dropping of (numerically) null pivots, then the solve.
    hmax = 0.0
    for a in range(mm):
        if H[a * mm + a] > hmax:
            hmax = H[a * mm + a]
    for a in range(mm):
        for b in range(a):
            if dg[b] == 0.0:
                H[a * mm + b] = 0.0
                continue
            v = H[a * mm + b]
            for t in range(b):
                v -= H[a * mm + t] * dg[t] * H[b * mm + t]
            H[a * mm + b] = v / dg[b]
        piv = H[a * mm + a]
        for t in range(a):
            piv -= H[a * mm + t] * H[a * mm + t] * dg[t]
        dg[a] = piv if piv > NEWTON_PIVOT * hmax else 0.0
    for a in range(mm):  # forward, diagonal
        v = y[a]
        for t in range(a):
            v -= H[a * mm + t] * y[t]
        y[a] = v
    for a in range(mm):
        y[a] = y[a] / dg[a] if dg[a] != 0.0 else 0.0
    for a in range(mm - 1, -1, -1):  # backward
        v = y[a]
        for t in range(a + 1, mm):
            v -= H[t * mm + a] * y[t]
        y[a] = v if dg[a] != 0.0 else 0.0
    # 4. The direction; a re-added component the step would push below 0 stays at 0.
    s = sB
    for a in range(mm):
        if not fabs(y[a]) < 1e300:
            return 0
        k = fidx[a]
        if th[k] == 0.0 and y[a] < 0.0:
            y[a] = 0.0
        delta[k] = y[a]
        s -= y[a]
    delta[r] = s
    # 5. Step length. Newton decrement lam^2 = sum_j c_j (dp_j / p_j)^2; the damped step
    # 1 / (1 + lam) of self-concordant functions (-c log p is, for c >= 1) when lam > 1/4,
    # else the full step; shortened to the first free component that reaches 0 (ratio
    # test; that component is then set to exactly 0: it leaves the face).
    lam2 = 0.0
    for j in range(J):
        row = &phi_t[indices[start + j], 0]
        pj = 0.0
        bj = 0.0
        for k in range(K):
            pj += th[k] * row[k]
            bj += delta[k] * row[k]
        if pj > floor:
            lam2 += counts[start + j] * (bj / pj) * (bj / pj)
    alpha = 1.0
    if lam2 > 0.0625:
        alpha = 1.0 / (1.0 + sqrt(lam2))
    amax = 2.0
    kb = -1
    for k in range(K):
        if delta[k] < 0.0 and th[k] + delta[k] < 0.0:
            v = th[k] / (-delta[k])
            if v < amax:
                amax = v
                kb = k
    if amax < alpha:
        alpha = amax
    else:
        kb = -1
    for ls in range(NEWTON_HALVINGS + 1):
        diff = _zeta_trial(start, stop, indices, counts, phi_t, th, delta, alpha, kb,
                           tnew, accn, &obj_new, K, n_d, floor)
        n_eval[0] += 1
        if diff >= 0.0:
            return _zeta_accept(th, acc, obj, tnew, accn, obj_new, diff, K)
        alpha *= 0.5
        kb = -1
    return 0


cdef inline double _zeta_trial(const int64_t start, const int64_t stop,
                               const int32_t[::1] indices, const double[::1] counts,
                               const double[:, ::1] phi_t, const double* th,
                               const double* delta, double alpha, Py_ssize_t kb, double* tnew,
                               double* accn, double* obj_new, Py_ssize_t K, double n_d,
                               double floor) noexcept nogil:
    """Trial point tnew = normalise(t), t = max(th + alpha delta, 0) with component ``kb`` (if
    >= 0) set to exactly 0: its objective goes to ``obj_new[0]``, its gradient to ``accn``,
    and the return value is the change of the objective on the simplex from ``th``, summed
    term by term as sum_j c_j log1p(dp_j / p_j) - N_d log1p(sum_k dt_k / sum_k th_k) (dt =
    t - th, kept in ``accn`` meanwhile; dp_j its change of p_j), accurate far below the
    rounding of the objective itself, so that steps near the optimum are judged reliably
    (-1, and ``obj_new`` untouched, if t is not a valid point)."""
    cdef Py_ssize_t j, k
    cdef double s = 0.0, s0 = 0.0, ds = 0.0, v, p, q, dp, diff = 0.0
    cdef const double* row
    for k in range(K):
        v = th[k] + alpha * delta[k]
        if v < 0.0 or k == kb:
            v = 0.0
        tnew[k] = v
        accn[k] = v - th[k]
        s += v
        s0 += th[k]
        ds += accn[k]
    if not s > 0.0:
        return -1.0
    # the objective on the simplex is f(t / sum t) = f(t) - N_d log(sum t)
    diff = -n_d * log1p(ds / s0)
    for j in range(start, stop):
        row = &phi_t[indices[j], 0]
        q = 0.0
        dp = 0.0
        for k in range(K):
            q += th[k] * row[k]
            dp += accn[k] * row[k]
        p = q + dp
        if q > floor and p > floor:
            diff += counts[j] * log1p(dp / q)
        else:
            diff += counts[j] * (log(p if p > floor else floor) - log(q if q > floor else floor))
    for k in range(K):
        tnew[k] /= s
    obj_new[0] = _zeta_eval(start, stop, indices, counts, phi_t, tnew, accn, K, floor)
    return diff


cdef inline int _zeta_accept(double* th, double* acc, double* obj, const double* tnew,
                             const double* accn, double obj_new, double diff,
                             Py_ssize_t K) noexcept nogil:
    """Move to the accepted trial point; 1 if the objective increased (diff > 0)."""
    cdef Py_ssize_t k
    for k in range(K):
        th[k] = tnew[k]
        acc[k] = accn[k]
    obj[0] = obj_new
    return 1 if diff > 0.0 else 0


cdef void _zeta_doc(const int64_t start, const int64_t stop, const int32_t[::1] indices,
                    const double[::1] counts, const double[:, ::1] phi_t, Py_ssize_t K,
                    double tol, int max_iter, double floor, bint accelerate, bint newton,
                    double* buf, Py_ssize_t* fidx, double* theta_row, double* zeta_d,
                    int32_t* n_iter_d) noexcept nogil:
    """zeta of one document (see zeta_batch) with the scratch ``buf`` (14 K + K^2 doubles)
    and ``fidx`` (K); writes its theta to ``theta_row``, zeta and the update count."""
    cdef Py_ssize_t j, k, it
    cdef double n_d, obj = 0.0, obj_new, rr, vv, a, s
    cdef int em_left, fails
    cdef double* th = buf            # current iterate
    cdef double* acc = buf + K       # gradient at th
    cdef double* t1 = buf + 2 * K    # F(th)
    cdef double* t2 = buf + 3 * K    # F(t1)
    cdef double* acc1 = buf + 4 * K
    cdef double* tx = buf + 5 * K    # extrapolated point
    cdef double* tn = buf + 6 * K    # F(tx): the new iterate
    cdef double* accn = buf + 7 * K
    cdef double* nwk = buf + 8 * K   # Newton workspace: 6 K + K^2
    n_d = 0.0
    for j in range(start, stop):
        n_d += counts[j]
    for k in range(K):
        th[k] = 1.0 / K
    it = 0
    em_left = NEWTON_WARM
    fails = 0
    if n_d > 0.0:
        obj = _zeta_eval(start, stop, indices, counts, phi_t, th, acc, K, floor)
        while it < max_iter and _zeta_gap(acc, K, n_d) > tol * fabs(obj):
            if not accelerate or K == 1:
                _zeta_em(th, acc, t1, K, n_d)
                for k in range(K):
                    th[k] = t1[k]
                obj = _zeta_eval(start, stop, indices, counts, phi_t, th, acc, K,
                                 floor)
                it += 1
                continue
            if newton and em_left <= 0:
                if _zeta_newton(start, stop, indices, counts, phi_t, th, acc, &obj,
                                K, n_d, floor, nwk, fidx, &it):
                    continue
                # no progress: back to SQUAREM, longer after repeated failures
                fails += 1
                em_left = fails if fails < 8 else 8
            em_left -= 1
            # SQUAREM cycle: two EM steps, extrapolate, one stabilising EM step.
            _zeta_em(th, acc, t1, K, n_d)
            _zeta_eval(start, stop, indices, counts, phi_t, t1, acc1, K, floor, False)
            _zeta_em(t1, acc1, t2, K, n_d)
            rr = 0.0
            vv = 0.0
            for k in range(K):
                rr += (t1[k] - th[k]) * (t1[k] - th[k])
                vv += (t2[k] - 2.0 * t1[k] + th[k]) * (t2[k] - 2.0 * t1[k] + th[k])
            a = -1.0
            if vv > 0.0 and rr > 0.0:
                a = -sqrt(rr / vv)
                if a > -1.0:
                    a = -1.0
            it += 2
            while True:
                if a == -1.0:
                    # theta' = t2 exactly: a plain double EM step, always valid.
                    for k in range(K):
                        tx[k] = t2[k]
                else:
                    # Extrapolate; a coordinate pushed below 0 is kept at a small
                    # fraction of its current value (the boundary is approached
                    # geometrically but never reached, so it can still recover).
                    s = 0.0
                    for k in range(K):
                        tx[k] = th[k] - 2.0 * a * (t1[k] - th[k]) \
                            + a * a * (t2[k] - 2.0 * t1[k] + th[k])
                        if tx[k] < SQUAREM_SHRINK * th[k]:
                            tx[k] = SQUAREM_SHRINK * th[k]
                        s += tx[k]
                    for k in range(K):
                        tx[k] /= s
                _zeta_eval(start, stop, indices, counts, phi_t, tx, accn, K, floor,
                           False)
                _zeta_em(tx, accn, tn, K, n_d)
                obj_new = _zeta_eval(start, stop, indices, counts, phi_t, tn,
                                     accn, K, floor)
                if obj_new >= obj or a == -1.0:
                    break
                a = (a - 1.0) / 2.0
                if a > -1.001:
                    a = -1.0
            it += 1
            for k in range(K):
                th[k] = tn[k]
                acc[k] = accn[k]
            obj = obj_new
    for k in range(K):
        theta_row[k] = th[k]
    zeta_d[0] = obj if n_d > 0.0 else 0.0
    n_iter_d[0] = <int32_t> it


def zeta_batch(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] counts,
               const double[:, ::1] phi_t, double tol=1e-10, int max_iter=10000,
               double floor=1e-300, bint accelerate=True, bint newton=True,
               int n_threads=1):
    """zeta(Phi, d) = max over theta in the simplex of sum_w c_w log(sum_k theta_k Phi[k, w]).

    Solved per document by the EM fixed point (Manzonelli et al. 2024, App. A)
    ``theta <- theta * (Phi[:, w] @ (c / (theta @ Phi[:, w]))) / N_d``, started at the
    uniform theta. Stops when the Frank-Wolfe duality gap ``max_k g_k - N_d`` (``g`` the
    gradient, which is the EM accumulator) is <= ``tol * |objective|``: by concavity this
    certifies that the returned objective is within a relative ``tol`` of the maximum. At
    most ``max_iter`` EM updates. Mixture probabilities below ``floor`` are floored.

    ``accelerate`` wraps the EM map in SQUAREM (Varadhan & Roland 2008, scheme S3): an
    extrapolation theta' = theta0 - 2 a r + a^2 v from two EM steps, followed by one EM step;
    the step ``a`` is halved towards -1 (plain double EM step) until the objective does not
    decrease (coordinates extrapolated below 0 are kept at 1e-3 of their current value), so
    the scheme stays a monotone EM fixed-point iteration with the same fixed points. Each
    accelerated cycle counts as 3 updates.

    With ``accelerate`` and ``newton`` (the default), EM is finished by an active-set Newton
    method (``_zeta_newton``): after NEWTON_WARM SQUAREM cycles, projected Newton steps on
    the support (components EM is collapsing are sent to exactly 0, KKT-violating zeros are
    re-added) with the same monotone acceptance rule; a step that cannot increase the
    objective hands back to SQUAREM for a few cycles (more after repeated failures). Same
    stopping certificate; each objective evaluation of a Newton step counts as 1 update.
    EM alone converges sublinearly when the maximiser is on the boundary of the simplex (the
    usual case for short documents, K > distinct words); Newton converges quadratically on
    the identified face. ``accelerate=False`` is the plain EM fixed point (no Newton).

    Documents are solved in parallel on ``n_threads`` OpenMP threads (one thread without
    OpenMP); each document's result depends only on the document, so the output is
    bit-identical for every ``n_threads``.

    Returns
    -------
    zeta : ndarray (n_docs,)
    theta : ndarray (n_docs, K)
    n_iter : ndarray of int32 (n_docs,)
        EM-map evaluations used; ``max_iter`` or more means the tolerance was not certified.
    """
    cdef Py_ssize_t D = indptr.shape[0] - 1, K = phi_t.shape[1]
    cdef Py_ssize_t d, tid, per = 14 * K + K * K
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    cdef int nt = <int> min(n_threads, max(D, 1))
    zeta_out = np.zeros(D, dtype=np.float64)
    theta_out = np.zeros((D, K), dtype=np.float64)
    iter_out = np.zeros(D, dtype=np.int32)
    cdef double[::1] zeta = zeta_out
    cdef double[:, ::1] theta_mv = theta_out
    cdef int32_t[::1] n_iter = iter_out
    # one scratch block per thread
    cdef double* buf = <double*> malloc(nt * per * sizeof(double))
    cdef Py_ssize_t* fidx = <Py_ssize_t*> malloc(nt * K * sizeof(Py_ssize_t))
    if buf == NULL or fidx == NULL:
        free(buf)
        free(fidx)
        raise MemoryError()
    try:
        if D > 0:
            with nogil:
                for d in prange(D, num_threads=nt, schedule="dynamic"):
                    tid = threadid()
                    _zeta_doc(indptr[d], indptr[d + 1], indices, counts, phi_t, K, tol,
                              max_iter, floor, accelerate, newton, buf + tid * per,
                              fidx + tid * K, &theta_mv[d, 0], &zeta[d], &n_iter[d])
    finally:
        free(buf)
        free(fidx)
    return zeta_out, theta_out, iter_out
