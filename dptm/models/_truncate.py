"""Random truncation of documents to a length cap (the sensitivity bound of VIPS)."""
import numpy as np
import scipy.sparse as sp

__all__ = ["truncate_documents"]

# Documents up to this many tokens are expanded into their tokens (about 40 bytes each).
_EXPAND_LIMIT = 1 << 20


def truncate_documents(X, max_length, rng):
    """Cap every document of ``X`` at ``max_length`` tokens.

    A document longer than ``max_length`` keeps a uniformly random subset of exactly
    ``max_length`` of its tokens (sampling without replacement from its multiset of
    tokens); shorter documents are unchanged.

    Parameters
    ----------
    X : scipy.sparse.csr_matrix of int64 (validated counts)
    max_length : int >= 1
    rng : numpy.random.Generator

    Returns
    -------
    scipy.sparse.csr_matrix of int64 with the same shape; row sums <= ``max_length``.
    """
    lengths = np.asarray(X.sum(axis=1)).ravel()
    long_docs = np.flatnonzero(lengths > max_length)
    if long_docs.size == 0:
        return X
    # a document too long to expand into its tokens draws token positions instead (memory
    # of max_length, not of its length: a 2^40-count document raised MemoryError)
    huge = lengths[long_docs] > max(_EXPAND_LIMIT, 64 * max_length)
    big_docs, long_docs = long_docs[huge], long_docs[~huge]
    kept = _kept_tokens(X, long_docs, lengths, max_length, rng)
    if big_docs.size:
        kept = sp.vstack([kept, _kept_positions(X, big_docs, max_length, rng)]).tocsr()
        long_docs = np.concatenate([long_docs, big_docs])
    short = X.copy()
    short.data[np.repeat(np.isin(np.arange(X.shape[0]), long_docs), np.diff(X.indptr))] = 0
    placed = sp.csr_matrix((kept.data, kept.indices, kept.indptr),
                           shape=(long_docs.size, X.shape[1]))
    expand = sp.csr_matrix((np.ones(long_docs.size, dtype=np.int64),
                            (long_docs, np.arange(long_docs.size))),
                           shape=(X.shape[0], long_docs.size))
    out = (short + expand @ placed).tocsr()
    out.eliminate_zeros()
    out.sort_indices()
    return out.astype(np.int64)


def _kept_tokens(X, long_docs, lengths, max_length, rng):
    """The kept counts of the documents ``long_docs`` (rows of a CSR), each token given a
    random key and the ``max_length`` smallest kept."""
    if long_docs.size == 0:
        return sp.csr_matrix((0, X.shape[1]), dtype=np.int64)
    sub = X[long_docs]
    nnz_doc = np.repeat(np.arange(long_docs.size), np.diff(sub.indptr))
    tok_doc = np.repeat(nnz_doc, sub.data)
    tok_word = np.repeat(sub.indices, sub.data)
    order = np.lexsort((rng.random(tok_doc.size), tok_doc))
    starts = np.concatenate(([0], np.cumsum(lengths[long_docs])[:-1]))
    rank = np.arange(tok_doc.size) - starts[tok_doc[order]]
    keep = order[rank < max_length]
    kept = sp.csr_matrix((np.ones(keep.size, dtype=np.int64), (tok_doc[keep], tok_word[keep])),
                         shape=(long_docs.size, X.shape[1]))
    kept.sum_duplicates()
    return kept


def _kept_positions(X, docs, max_length, rng):
    """The kept counts of the documents ``docs``: ``max_length`` distinct token positions
    of each, uniformly (Floyd's algorithm in ``Generator.choice``: the population is over
    64 times the sample), mapped to their words."""
    rows = []
    for d in docs:
        lo, hi = X.indptr[d], X.indptr[d + 1]
        ends = np.cumsum(X.data[lo:hi])
        pos = rng.choice(int(ends[-1]), size=max_length, replace=False, shuffle=False)
        counts = np.bincount(np.searchsorted(ends, pos, side="right"), minlength=hi - lo)
        rows.append(sp.csr_matrix((counts, X.indices[lo:hi], [0, hi - lo]),
                                  shape=(1, X.shape[1]), dtype=np.int64))
    return sp.vstack(rows).tocsr()
