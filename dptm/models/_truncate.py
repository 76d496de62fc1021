"""Random truncation of documents to a length cap (the sensitivity bound of VIPS)."""
import numpy as np
import scipy.sparse as sp

__all__ = ["truncate_documents"]


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
