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
