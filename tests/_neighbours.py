"""Word-level neighbouring corpora shared by the release tests of the Gibbs models."""
import numpy as np

from dptm.datasets import make_lda_corpus


def word_replaced(n_docs, n_words=25, n_topics=3, doc_length=20, random_state=1):
    """A dense LDA corpus and its neighbour with one token of document 0 moved from a word
    it holds to one it does not (the word-level neighbour: 2 counts differ by 1)."""
    X, _, _ = make_lda_corpus(n_docs, n_words, n_topics, doc_length=doc_length,
                              random_state=random_state)
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X)
    Xp = X.copy()
    a = int(np.flatnonzero(X[0])[0])
    b = int(np.flatnonzero(X[0] == 0)[0])
    Xp[0, a] -= 1
    Xp[0, b] += 1
    return X, Xp
