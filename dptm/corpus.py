"""Corpus: a document-term count matrix seen as the flat token arrays the kernels use.

A CSR count matrix ``X`` (documents x words) becomes ``doc_ptr`` (int64, length D+1) and
``word_ids`` (int32, one entry per token): the tokens of document ``d`` are
``word_ids[doc_ptr[d]:doc_ptr[d+1]]``, each word repeated as often as it is counted, in
column order. ``to_matrix`` inverts this exactly.
"""
import numpy as np
import scipy.sparse as sp

from ._utils import check_count_matrix, check_token_total

__all__ = ["Corpus"]


class Corpus:
    """Token-array view of a bag-of-words corpus.

    Parameters
    ----------
    doc_ptr : ndarray of int64, shape (n_docs + 1,)
        Token offsets of each document.
    word_ids : ndarray of int32, shape (n_tokens,)
        Word id of each token.
    n_words : int
        Vocabulary size V (word ids are < V).
    """

    def __init__(self, doc_ptr, word_ids, n_words):
        # copies: a Corpus never shares memory with the caller's arrays
        self._set(np.array(doc_ptr, dtype=np.int64, order="C"),
                  np.array(word_ids, dtype=np.int32, order="C"), n_words)

    @classmethod
    def _owning(cls, doc_ptr, word_ids, n_words):
        """A Corpus of arrays the caller just built and hands over (no copy)."""
        corpus = cls.__new__(cls)
        corpus._set(np.ascontiguousarray(doc_ptr, dtype=np.int64),
                    np.ascontiguousarray(word_ids, dtype=np.int32), n_words)
        return corpus

    def _set(self, doc_ptr, word_ids, n_words):
        self.doc_ptr, self.word_ids, self.n_words = doc_ptr, word_ids, int(n_words)
        if self.doc_ptr.ndim != 1 or self.doc_ptr[0] != 0 or self.doc_ptr[-1] != self.word_ids.size \
                or np.any(np.diff(self.doc_ptr) < 0):
            raise ValueError("doc_ptr must start at 0, be non-decreasing and end at len(word_ids)")
        if self.word_ids.size and (self.word_ids.min() < 0 or self.word_ids.max() >= self.n_words):
            raise ValueError(f"word_ids must lie in [0, n_words={self.n_words})")

    @classmethod
    def from_matrix(cls, X, name="X"):
        """Build the token arrays from a non-negative integer doc-term matrix (validated)."""
        return cls._from_counts(check_count_matrix(X, name=name), name=name)

    @classmethod
    def _from_counts(cls, X, name="X"):
        """``from_matrix`` of a matrix ``check_count_matrix`` returned, not validated again
        (callers that validated X themselves, e.g. with ``estimator=``); the token total is
        still checked. A matrix without tokens gives a corpus without tokens."""
        if not (sp.issparse(X) and X.format == "csr" and X.dtype == np.int64):
            raise TypeError("Corpus._from_counts needs check_count_matrix's CSR int64 matrix, "
                            f"got {type(X).__name__} of {getattr(X, 'dtype', None)}")
        check_token_total(X, name=name)  # before np.repeat allocates the token arrays
        word_ids = np.repeat(X.indices.astype(np.int32), X.data)
        doc_ptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.asarray(X.sum(axis=1)).ravel(), out=doc_ptr[1:])
        return cls._owning(doc_ptr, word_ids, X.shape[1])

    def to_matrix(self):
        """The CSR count matrix (int64) these tokens came from."""
        doc_of_token = np.repeat(np.arange(self.n_docs), self.doc_lengths)
        X = sp.csr_matrix((np.ones(self.n_tokens, dtype=np.int64), (doc_of_token, self.word_ids)),
                          shape=(self.n_docs, self.n_words))
        X.sum_duplicates()
        return X

    @property
    def n_docs(self):
        return self.doc_ptr.size - 1

    @property
    def n_tokens(self):
        return self.word_ids.size

    @property
    def doc_lengths(self):
        return np.diff(self.doc_ptr)

    def __repr__(self):
        return f"Corpus(n_docs={self.n_docs}, n_words={self.n_words}, n_tokens={self.n_tokens})"
