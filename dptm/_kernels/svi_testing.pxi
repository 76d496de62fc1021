# Entry points that no estimator calls: the tests check the E-step's C digamma through it.


def digamma_array(const double[::1] x):
    """``scipy.special.psi(x)`` computed by the kernels' C digamma (for tests)."""
    cdef Py_ssize_t i, n = x.shape[0]
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        for i in range(n):
            o[i] = digamma(x[i])
    return out


def exp_digamma_array(const double[::1] g, double psi_total):
    """``exp(digamma(g) - psi_total)`` by the E-step's vectorised routine (for tests)."""
    cdef Py_ssize_t K = g.shape[0]
    out = np.empty(K, dtype=np.float64)
    xs = np.empty(2 * K + 1, dtype=np.float64)
    cdef double[::1] o = out, x = xs
    if K:
        with nogil:
            dptm_svi_exp_digamma(&g[0], &o[0], &x[0], K, psi_total)
    return out


cdef extern from "_kernels/svi_elementary.h":
    double dptm_exp(double x) noexcept nogil
    double dptm_log_ge1(double x) noexcept nogil


def elementary_array(const double[::1] x, str which):
    """svi_elementary.h's ``exp`` or ``log`` (x >= 1) of every entry (for tests)."""
    cdef Py_ssize_t i, n = x.shape[0]
    cdef bint is_exp = which == "exp"
    if which not in ("exp", "log"):
        raise ValueError(f"which must be 'exp' or 'log', got {which!r}")
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        for i in range(n):
            o[i] = dptm_exp(x[i]) if is_exp else dptm_log_ge1(x[i])
    return out
