"""Per-user contributions of :class:`~dptm.models.private_vb.PrivateBatchLDA` (user level).

With ``groups`` (one user id per document) the unit of privacy is a user: every release's
statistic is the sum over users of each user's contribution, the sum of that user's
documents' expected topic-word counts (or presence counts), CLIPPED to L2 norm C as a
whole and rounded down to the noise lattice. Adding or removing one user, with all their
documents, moves the statistic by at most C; the norm histogram counts users (one bin per
user: sensitivity 1). A user with many documents is bounded, never dropped.

The documents are ordered by user once (:func:`group_documents`); the E-step runs in
chunks of whole users, each user's (document, word) contributions are added per
(user, word) pair, then clipped and checked exactly per user like a document's (one
kernel, ``vb_statistic._clipped_sum``, for both).
"""
import numbers

import numpy as np
import scipy.sparse as sp

from .._utils import canonical_csr
from .vb_statistic import _checked_word_weight, _clipped_sum, _estep, _exp_dirichlet

#: What the user-level report says of the mechanism and of what it assumes public.
USER_DESCRIPTION = (
    "batch VB LDA at user level: a noisy histogram of the users' count-vector norms sets "
    "the clip bound; each user's expected counts summed over all their documents and "
    "clipped as a whole, lattice (exact discrete) Gaussian releases on every user, the "
    "budget split across them (sequential composition)")
USER_ASSUMED_PUBLIC = (
    "the user of each document (groups) is given: the guarantee is per user id, so one "
    "person under two ids is two users; the numbers of users and of documents are not public")

# E-step working set (stored (document, word) pairs) of a chunk of whole users
_CHUNK_NNZ = 1 << 20


def user_id_array(groups):
    """The user ids as a 1-D array WITHOUT conversion: a numpy (or array-like, e.g. pandas)
    array as it is; a list, tuple or other iterable element by element into an object
    array (``np.asarray`` would make ``[1, "1"]`` two "1"s, ``2**53 + 1`` a float, and strip
    a trailing NUL: distinct users merged). Ids are then compared like dict keys."""
    if isinstance(groups, (str, bytes)):
        raise ValueError("groups must be a 1-D array-like of user ids, got a single string")
    if isinstance(groups, np.ndarray) or (hasattr(groups, "__array__")
                                          and not isinstance(groups, (list, tuple))):
        return np.asarray(groups)
    try:
        seq = list(groups)
    except TypeError:
        raise ValueError(f"groups must be a 1-D array-like of user ids, got "
                         f"{type(groups).__name__}") from None
    out = np.empty(len(seq), dtype=object)
    for i, g in enumerate(seq):
        out[i] = g
    return out


def check_groups(groups, n_documents):
    """User index (int64, 0 .. U-1, in order of the sorted ids) of each document.

    ``groups``: array-like of shape (n_documents,) of hashable ids (ints or strings), read
    by :func:`user_id_array`; None, NaN, a 2-D array or a wrong length raise a ValueError
    naming ``groups`` (the message names no count of the data)."""
    arr = user_id_array(groups)
    if arr.ndim != 1:
        raise ValueError(f"groups must be 1-D (one user id per document), got {arr.ndim}-D")
    if arr.shape[0] != n_documents:
        raise ValueError("groups must have one user id per document: its length differs "
                         "from the number of documents")
    if arr.dtype.kind == "f":
        if np.isnan(arr).any():
            raise ValueError("groups must not contain NaN (every document needs a user id)")
    elif arr.dtype.kind == "O":
        ids = {}
        out = np.empty(n_documents, dtype=np.int64)
        for i, g in enumerate(arr):
            if g is None or (isinstance(g, numbers.Real) and g != g):
                raise ValueError("groups must not contain None or NaN (every document "
                                 "needs a user id)")
            try:
                out[i] = ids.setdefault(g, len(ids))
            except TypeError:
                raise ValueError(f"groups must hold hashable ids, got {type(g).__name__}") \
                    from None
        # indices by sorted id where the ids are orderable (mixed types: first appearance)
        try:
            order = sorted(ids, key=lambda k: (type(k).__name__, k))
        except TypeError:
            return out
        remap = np.empty(len(ids), dtype=np.int64)
        remap[[ids[k] for k in order]] = np.arange(len(ids))
        return remap[out]
    elif arr.dtype.kind not in "iubUS":
        raise ValueError(f"groups must hold ints or strings, got dtype {arr.dtype}")
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(arr, return_inverse=True)[1].astype(np.int64).ravel()


def group_documents(X, groups):
    """``(X_sorted, user_ptr)``: the rows of CSR ``X`` ordered by user (stable: each user's
    documents in data order) and the indptr of each user's rows in it."""
    users = check_groups(groups, X.shape[0])
    order = np.argsort(users, kind="stable")
    counts = np.bincount(users, minlength=int(users.max()) + 1 if users.size else 0)
    counts = counts[counts > 0]
    user_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    Xs = sp.csr_matrix(X)[order]
    Xs.sum_duplicates()
    return Xs, user_ptr


def user_count_matrix(X, user_ptr):
    """U x V CSR: row u is the sum of user u's document count vectors."""
    U = len(user_ptr) - 1
    owner = np.repeat(np.arange(U), np.diff(user_ptr))
    G = sp.csr_matrix((np.ones(X.shape[0]), (owner, np.arange(X.shape[0]))), shape=(U, X.shape[0]))
    out = (G @ sp.csr_matrix(X, dtype=np.float64)).tocsr()
    out.sum_duplicates()
    return out


def user_expected_counts(X, user_ptr, beta, alpha, norm, granularity=None, presence=False,
                         n_threads=1, word_weight=None):
    """The user-level statistic: sum over users of each user's summed expected K x V
    topic-word counts (their documents' ``_expected_counts`` contributions added per
    word), each user's sum CLIPPED to L2 norm ``norm`` and, with ``granularity`` g,
    rounded down to multiples of g and checked in exact integer arithmetic
    (``vb_statistic._within_norm``). ``X``: CSR rows ordered by user, ``user_ptr`` their
    indptr (:func:`group_documents`). ``presence="norm-histogram"``: the (1, n_bins)
    histogram of the users' count-vector L2 norms (one user per bin)."""
    from .private_vb import _norm_histogram
    X = canonical_csr(X)
    if isinstance(presence, str):
        if presence != "norm-histogram":
            raise ValueError(f"unknown statistic {presence!r}")
        return _norm_histogram(user_count_matrix(X, user_ptr))
    K, V = beta.shape
    word_weight = _checked_word_weight(word_weight, V)
    eb_t = np.ascontiguousarray(_exp_dirichlet(beta).T)      # V x K
    stat = np.zeros((K, V))
    U = len(user_ptr) - 1
    pair_ptr = X.indptr[user_ptr]              # each user's first stored pair
    start = 0
    while start < U:   # whole users in chunks of about _CHUNK_NNZ stored pairs
        stop = int(np.searchsorted(pair_ptr, pair_ptr[start] + _CHUNK_NNZ, side="right"))
        stop = min(U, max(stop - 1, start + 1))
        d0, d1 = int(user_ptr[start]), int(user_ptr[stop])
        Xc = X[d0:d1]
        if Xc.nnz:
            et = _estep(Xc, eb_t, alpha, n_threads=n_threads)
            rows = np.repeat(np.arange(Xc.shape[0]), np.diff(Xc.indptr))
            # (user, word) keys; each user's documents in data order, so the per-pair sums
            # (in that order) do not depend on how users are chunked or partitioned
            owner = np.repeat(np.arange(stop - start), np.diff(user_ptr[start:stop + 1]))
            key = owner[rows] * V + Xc.indices
            order = np.argsort(key, kind="stable")
            key = key[order]
            first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
            uptr = np.searchsorted(key[first] // V, np.arange(stop - start + 1))
            stat += _clipped_sum(Xc, et, eb_t, presence, word_weight, uptr, order,
                                 np.r_[first, len(key)], norm, granularity, n_threads)[0]
        start = stop
    return stat
