"""Shared helpers of the table-inversion sampler tests (dyadic Laplace, discrete Gaussian):
both kernels check the same table layout."""
import numpy as np


def corrupted_tables(good):
    """Copies of the inversion table ``good`` (built with index_bits 4, low_bits 8), each
    with one structural defect the kernel must refuse."""
    def with_(**changes):
        t = dict(good)
        for key, fn in changes.items():
            arr = np.array(t[key])
            fn(arr)
            t[key] = arr
        return t
    return [with_(guide=lambda g: g.__setitem__(0, g[0] + 1)),
            with_(guide=lambda g: g.__setitem__(np.flatnonzero(g < 0)[0], 0)),
            with_(hi=lambda h: h.__setitem__(-1, 1)),
            with_(lo=lambda lo: lo.__setitem__(-1, 1)),
            with_(lo=lambda lo: lo.__setitem__(1, 1 << 9)),     # more than L bits
            with_(hi=lambda h: h.__setitem__(2, h[1] + 1))]     # not non-increasing
