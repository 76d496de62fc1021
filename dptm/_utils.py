"""Validation and randomness helpers shared by every estimator.

Every random choice in dptm flows from one ``numpy.random.Generator``; ``check_random_state``
is the only place a user's ``random_state`` is interpreted.
"""
import numbers

import numpy as np
import scipy.sparse as sp

__all__ = [
    "check_random_state", "spawn_generators", "check_count_matrix", "check_positive",
    "check_probability", "check_int",
]


def check_random_state(random_state):
    """Turn ``random_state`` into a ``numpy.random.Generator``.

    Parameters
    ----------
    random_state : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator
        None draws fresh OS entropy; an int or SeedSequence seeds a PCG64; a Generator is
        used as is (and advanced by the caller's use).

    Returns
    -------
    numpy.random.Generator
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        if isinstance(random_state, numbers.Integral) and random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer, got {random_state}")
        return np.random.Generator(np.random.PCG64(random_state))
    if isinstance(random_state, np.random.BitGenerator):
        return np.random.Generator(random_state)
    if isinstance(random_state, np.random.RandomState):
        raise TypeError(
            "random_state must be None, an int, a SeedSequence or a numpy.random.Generator; "
            "legacy RandomState is not supported (use np.random.default_rng)")
    raise TypeError(
        "random_state must be None, an int, a SeedSequence or a numpy.random.Generator, "
        f"got {type(random_state).__name__}")


def spawn_generators(rng, n):
    """``n`` independent child Generators of ``rng``, one per unit of work.

    Children are keyed by their index, never by the worker that runs them, so results do
    not depend on ``n_jobs``.
    """
    return rng.spawn(n)


def check_count_matrix(X, name="X", estimator=None, reset=True):
    """Validate a document-term count matrix and return it as CSR with int64 counts.

    Parameters
    ----------
    X : array-like or scipy sparse matrix of shape (n_docs, n_words)
        Non-negative integer counts (floats holding integers are accepted). Empty
        documents (rows of zeros) are allowed; a corpus without any token is not.
    name : str
        Parameter name used in error messages.
    estimator : estimator, optional
        When given, scikit-learn's ``validate_data`` also sets (``reset=True``) or checks
        (``reset=False``) ``n_features_in_``.

    Returns
    -------
    scipy.sparse.csr_matrix of int64, canonical (sorted indices, no explicit zeros).
    """
    from sklearn.utils.validation import check_array, validate_data
    kwargs = dict(accept_sparse="csr", dtype="numeric", ensure_min_samples=1,
                  ensure_min_features=1, ensure_all_finite=True)
    if estimator is not None:
        X = validate_data(estimator, X, reset=reset, **kwargs)
    else:
        X = check_array(X, input_name=name, **kwargs)
    X = sp.csr_matrix(X)
    data = X.data
    if data.size and data.min() < 0:
        raise ValueError(f"Negative values in data passed to {name}: document-term counts "
                         "must be non-negative integers")
    if np.issubdtype(data.dtype, np.floating) and np.any(data != np.round(data)):
        raise ValueError(f"{name} must hold integer counts; found fractional values")
    X = sp.csr_matrix((data.astype(np.int64), X.indices, X.indptr), shape=X.shape)
    X.sum_duplicates()
    X.eliminate_zeros()
    X.sort_indices()
    if X.nnz == 0:
        raise ValueError(f"{name} has no tokens: every document is empty")
    return X


def check_positive(value, name, strict=True, allow_inf=False):
    """Return ``value`` as float after checking it is a positive (or non-negative) real."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if np.isnan(value) or (np.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be finite, got {value}")
    if value < 0 or (strict and value == 0):
        raise ValueError(f"{name} must be {'> 0' if strict else '>= 0'}, got {value}")
    return value


def check_probability(value, name, low_open=True, high_open=False):
    """Return ``value`` as float after checking it lies in (0, 1] (bounds configurable)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    lo_ok = value > 0 if low_open else value >= 0
    hi_ok = value < 1 if high_open else value <= 1
    if not (lo_ok and hi_ok) or np.isnan(value):
        lo, hi = ("(" if low_open else "["), (")" if high_open else "]")
        raise ValueError(f"{name} must be in {lo}0, 1{hi}, got {value}")
    return value


def check_int(value, name, minimum=1):
    """Return ``value`` as int after checking it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)
