"""Validation and randomness helpers shared by every estimator: the ONE validation module
of dptm (count matrices, scalars, probabilities, orders, shapes). ``dptm.accounting`` uses
the scalar checks below through its thin ``_validation`` alias module.

Every random choice in dptm flows from one ``numpy.random.Generator``; ``check_random_state``
is the only place a user's ``random_state`` is interpreted.
"""
import numbers
import re

import numpy as np
import scipy.sparse as sp

__all__ = [
    "check_random_state", "spawn_generators", "check_count_matrix", "check_positive",
    "check_probability", "check_int",
    "check_token_total", "INT32_MAX", "INT64_MAX", "check_real", "check_delta_open",
    "check_orders", "check_probability_matrix", "check_index_array",
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


# The Gibbs kernels keep topic counts and token offsets in int32 count tables, the count
# matrix itself is int64: these are the largest values they can hold.
INT32_MAX = np.iinfo(np.int32).max
INT64_MAX = np.iinfo(np.int64).max


def _readonly_view(a):
    """A read-only view of ``a``: returned matrices may share the caller's index arrays, so
    no later step can write into them by accident."""
    v = a.view()
    v.flags.writeable = False
    return v


def _refuse_text(X, name):
    """Raw text where counts are expected: say how to vectorize it, never echo the text
    (the documents may be the private data and end up in a log)."""
    if isinstance(X, str) or (isinstance(X, (list, tuple)) and X and isinstance(X[0], str)) \
            or (isinstance(X, np.ndarray) and X.dtype.kind in "US"):
        raise TypeError(
            f"{name} holds raw text; a document-term count matrix is expected. Vectorize "
            "with a PUBLIC vocabulary, e.g. CountVectorizer(vocabulary=public_words)"
            ".transform(texts) (for a release: vocabulary=release.vocabulary), or select "
            "the vocabulary privately with dptm.FullyPrivateTopicModel / `dptm fit --data`")


def check_count_matrix(X, name="X", estimator=None, reset=True):
    """Validate a document-term count matrix and return it as CSR with int64 counts.

    The caller's data is never modified and may be read-only (a memory-mapped array, a
    matrix built on read-only buffers, what joblib hands its workers): the counts are
    always converted into a new int64 array; the CSR index arrays are shared (as read-only
    views) when ``X`` is already a canonical CSR matrix and copied only when duplicates,
    unsorted indices or explicit zeros must be removed.

    Parameters
    ----------
    X : array-like or scipy sparse matrix of shape (n_docs, n_words)
        Non-negative integer counts (floats holding integers are accepted, as are
        ``float16``, ``bool`` and ``np.matrix`` input). Empty documents (rows of zeros) are
        allowed; a corpus without any token is not. Each count and the total must be below
        2**63 (the int64 count type).
    name : str
        Parameter name used in error messages.
    estimator : estimator, optional
        When given, scikit-learn's ``validate_data`` also sets (``reset=True``) or checks
        (``reset=False``) ``n_features_in_``.

    Returns
    -------
    scipy.sparse.csr_matrix of int64, canonical (sorted indices, no duplicates, no explicit
    zeros). Its index arrays may be read-only.

    Raises
    ------
    ValueError
        Negative, fractional, NaN/inf or too large (>= 2**63) counts, or no token at all.

    Privacy
    -------
    The refusals of a total of 2**63 tokens or more and of a corpus without tokens depend
    on the data: a private estimator's guarantee covers neighbouring data sets that are
    both accepted (stated in :class:`dptm.accounting.PrivacyReport`).
    """
    from sklearn.utils.validation import check_array, validate_data
    _refuse_text(X, name)
    if isinstance(X, np.matrix):
        X = np.asarray(X)
    if getattr(X, "dtype", None) is not None and np.dtype(X.dtype).kind == "c":
        raise ValueError(f"Complex data not supported: {name} must hold real non-negative "
                         "integer counts")
    if not sp.issparse(X) and getattr(X, "dtype", None) == np.float16:
        # scipy.sparse has no float16; float32 holds every float16 exactly.
        X = np.asarray(X, dtype=np.float32)
    if sp.issparse(X) and X.dtype == np.float16:
        X = X.astype(np.float32)
    kwargs = dict(accept_sparse="csr", dtype="numeric", ensure_min_samples=1,
                  ensure_min_features=1, ensure_all_finite=True)
    try:
        if estimator is not None:
            X = validate_data(estimator, X, reset=reset, **kwargs)
        else:
            X = check_array(X, input_name=name, **kwargs)
    except ValueError as exc:
        if not re.search(r"Input \S* ?contains (NaN|infinity)", str(exc)):
            raise
        # scikit-learn's message suggests supervised estimators that accept missing values
        raise ValueError(f"{name} contains NaN or infinity: document-term counts must be "
                         "finite non-negative integers") from None
    if X.dtype == np.float16:
        X = X.astype(np.float32)
    # csr_matrix of a CSR input shares its arrays (no copy); of a dense or CSC input it
    # builds new ones. Nothing below writes into X's arrays.
    X = sp.csr_matrix(X)
    data = X.data
    if data.size:
        if X.dtype.kind in "iuf":
            lo, hi = data.min(), data.max()
        else:  # bool
            lo, hi = 0, 1
        if lo < 0:
            raise ValueError(f"Negative values in data passed to {name}: document-term counts "
                             "must be non-negative integers")
        if np.issubdtype(data.dtype, np.floating) and np.any(data != np.round(data)):
            raise ValueError(f"{name} must hold integer counts; found fractional values")
        # float(hi) >= 2**63 also catches uint64 values that would wrap to negative int64.
        if float(hi) >= 2.0 ** 63 or (X.dtype.kind == "u" and int(hi) > INT64_MAX):
            raise ValueError(f"{name} holds a count too large: counts must be below "
                             f"2**63 = {INT64_MAX + 1} (the int64 count type)")
        # The total (and each sum of duplicates) must fit in int64 too; summed in float64,
        # which cannot overflow, with a margin for its rounding.
        total = float(data.sum(dtype=np.float64))
        if total >= 2.0 ** 63 * (1 - 1e-9):
            raise ValueError(f"{name} holds too many tokens in all: the total must be below "
                             f"2**63 = {INT64_MAX + 1} (the int64 count type)")
    data = data.astype(np.int64)  # always a new array: the caller's data is never written
    if X.has_canonical_format:
        out = sp.csr_matrix((data, _readonly_view(X.indices), _readonly_view(X.indptr)),
                            shape=X.shape)
        out.has_sorted_indices = True
        out.has_canonical_format = True
    else:
        out = sp.csr_matrix((data, X.indices.copy(), X.indptr.copy()), shape=X.shape)
        out.sum_duplicates()  # also sorts the indices
    if out.nnz and not np.all(out.data):
        keep = out.data != 0
        rows = np.repeat(np.arange(out.shape[0]), np.diff(out.indptr))
        indptr = np.zeros(out.shape[0] + 1, dtype=out.indptr.dtype)
        np.cumsum(np.bincount(rows[keep], minlength=out.shape[0]), out=indptr[1:])
        out = sp.csr_matrix((out.data[keep], out.indices[keep], indptr), shape=out.shape)
        out.has_sorted_indices = True
        out.has_canonical_format = True
    if out.nnz == 0:
        raise ValueError(f"{name} has no tokens: every document is empty")
    return out


def check_token_total(X, name="X", limit=INT32_MAX, what="the Gibbs kernels' int32 token counts"):
    """Check that the total number of tokens of a validated count matrix fits ``limit``.

    Called before the token arrays are allocated (one count of 3e9 would otherwise ask for
    ~11 GiB per array before failing). Returns the total as a Python int.
    """
    total = int(X.data.sum(dtype=np.int64)) if sp.issparse(X) else int(np.sum(X, dtype=np.int64))
    if total > limit:
        # the limit is named, never the (private) total
        raise ValueError(f"{name} holds more tokens than {what} support ({limit:,})")
    return total


def canonical_csr(X):
    """``X`` as CSR with no word stored twice in a row (summed in a copy when it had any):
    a word stored twice would add its contributions in one cell after the norm was taken
    over them apart, sqrt(2) times the sensitivity."""
    X = sp.csr_matrix(X)
    try:
        # a malformed CSR (indptr past the end, decreasing) would corrupt memory in the
        # kernels and in scipy's own sum_duplicates
        X.check_format(full_check=True)
    except ValueError as exc:
        raise ValueError(f"X is not a valid CSR matrix: {exc}") from None
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def _real(value, name):
    """``value`` as float; TypeError naming ``name`` unless it is a real number (not bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def check_positive(value, name, strict=True, allow_inf=False):
    """Return ``value`` as float after checking it is a positive (or non-negative) real."""
    value = _real(value, name)
    if np.isnan(value) or (np.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be finite, got {value}")
    if value < 0 or (strict and value == 0):
        raise ValueError(f"{name} must be {'> 0' if strict else '>= 0'}, got {value}")
    return value


def check_probability(value, name, low_open=True, high_open=False):
    """Return ``value`` as float after checking it lies in (0, 1] (bounds configurable)."""
    value = _real(value, name)
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


def check_real(value, name):
    """``value`` as float: a real number (not bool), not NaN (infinities allowed)."""
    value = _real(value, name)
    if np.isnan(value):
        raise ValueError(f"{name} must be a finite real number, got nan")
    return value


def check_delta_open(value, name="delta"):
    """``value`` as float in the open interval (0, 1)."""
    value = check_real(value, name)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be in the open interval (0, 1), got {value}")
    return value


def check_orders(orders, name="orders"):
    """Renyi orders as a 1-D float array, every entry finite and > 1."""
    arr = np.atleast_1d(np.asarray(orders, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of Renyi orders > 1")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 1.0):
        raise ValueError(f"{name} must all be finite and > 1, got {arr[~(np.isfinite(arr) & (arr > 1))][:3]}")
    return arr


def check_probability_matrix(P, name, shape=None, normalize=False, atol=1e-6, rows=None):
    """A 2-D float64 matrix of probability rows (theta, a topic-word matrix, ...).

    Every entry finite and >= 0. ``rows`` says what the rows must be: ``"stochastic"``
    (the default; each row sums to 1 within ``atol``), ``"normalize"`` (each row has
    positive mass and is normalised; same as ``normalize=True``), or ``"any"`` (no
    condition on the rows: non-negative weights such as pseudo-counts). A new array is
    returned when anything changes; the input is never modified. ``shape`` entries that
    are not None are required. Non-numeric and complex input raise TypeError.
    """
    if rows is None:
        rows = "normalize" if normalize else "stochastic"
    if rows not in ("stochastic", "normalize", "any"):
        raise ValueError(f"rows must be 'stochastic', 'normalize' or 'any', got {rows!r}")
    if sp.issparse(P):
        P = P.toarray()
    if isinstance(P, np.matrix):
        P = np.asarray(P)
    dtype = getattr(P, "dtype", None)
    if dtype is not None and (np.issubdtype(dtype, np.complexfloating)
                              # numpy dtypes compare to Python types with ==, not `is`
                              or not (np.issubdtype(dtype, np.number)
                                      or dtype == bool  # noqa: E721
                                      or dtype == object)):  # noqa: E721
        raise TypeError(f"{name} must be a real numeric array, got dtype {dtype}")
    try:
        P = np.asarray(P, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric 2-D array: {exc}") from None
    if P.ndim != 2 or P.shape[0] < 1 or P.shape[1] < 1:
        raise ValueError(f"{name} must be 2-D with at least one row and one column, got shape {P.shape}")
    if shape is not None:
        for axis, want in enumerate(shape):
            if want is not None and P.shape[axis] != want:
                raise ValueError(f"{name} has shape {P.shape}; expected {axis and 'columns' or 'rows'} "
                                 f"= {want} (shape {tuple('*' if w is None else w for w in shape)})")
    if not np.all(np.isfinite(P)):
        raise ValueError(f"{name} contains NaN or infinity")
    if np.any(P < 0):
        raise ValueError(f"{name} must be non-negative (negative entries found)")
    if rows == "any":
        return P
    sums = P.sum(axis=1, keepdims=True)
    if np.any(sums <= 0) or not np.all(np.isfinite(sums)):
        raise ValueError(f"{name} has a row with zero (or overflowing) total mass")
    if rows == "normalize":
        return P / sums
    if np.any(np.abs(sums - 1.0) > atol):
        raise ValueError(f"{name} rows must sum to 1 (within {atol:g}); found a row summing to "
                         f"{float(sums.ravel()[np.argmax(np.abs(sums - 1.0))]):.6g}")
    return P


def check_index_array(ids, name, n, ndim=1):
    """Integer ids in [0, n) as an int64 array (no bool, no floats holding non-integers)."""
    arr = np.asarray(ids)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer)
                                 or (np.issubdtype(arr.dtype, np.floating)
                                     and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)))):
        raise TypeError(f"{name} must hold integer ids in [0, {n}), got dtype {arr.dtype}")
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        bad = arr[(arr < 0) | (arr >= n)].ravel()[0]
        raise ValueError(f"{name} must hold ids in [0, {n}), got {bad}")
    return arr.astype(np.int64)


def groups_argument(groups, users, owner):
    """The grouping argument (one user / author id per document): ``groups``, the name
    TopicDP and scikit-learn use; ``users`` is its former name in DPVocabulary and
    FullyPrivateTopicModel, accepted with a FutureWarning."""
    if users is None:
        return groups
    if groups is not None:
        raise TypeError(f"{owner}.fit got both groups= and users=; pass groups= only")
    import warnings
    from .exceptions import user_stacklevel
    warnings.warn(f"{owner}.fit(users=...) is renamed groups= (as in TopicDP); users= will "
                  "be removed", FutureWarning, stacklevel=user_stacklevel())
    return users
