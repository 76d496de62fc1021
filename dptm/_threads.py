"""Thread counts for the OpenMP kernels (scikit-learn's ``n_jobs`` semantics)."""
import functools
import numbers

import numpy as np


@functools.lru_cache(maxsize=1)
def _cpu_count():
    from joblib import cpu_count
    return max(1, int(cpu_count()))


def effective_n_jobs(n_jobs):
    """Number of threads for ``n_jobs``: None is 1, a positive int itself, -1 every core,
    -2 every core but one, ... (at least 1). Never depends on the data.

    Raises TypeError for a non-integer and ValueError for 0, naming ``n_jobs``.
    """
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(f"n_jobs must be None or a non-zero int, got {type(n_jobs).__name__}")
    n_jobs = int(n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs must be None, a positive int or a negative int (-1: all "
                         "cores), got 0")
    if n_jobs > 0:
        return min(n_jobs, 2 ** 31 - 1)  # the kernels' C int
    return max(1, _cpu_count() + 1 + n_jobs)
