"""Text preprocessing as in the papers dptm implements.

The pipeline of Manzonelli et al. 2024 (Section 4, footnote 2) and of the cleaned
TweetRumors corpus, in this order:

1. replace every non-alphabetic character by a space and split on whitespace
   (so ``"don't stop-loss"`` gives ``don``, ``t``, ``stop``, ``loss``);
2. lower-case;
3. remove stop words;
4. optionally lemmatize with nltk's WordNet lemmatizer (nouns), then drop any lemma
   that is a stop word;
5. keep tokens of ``min_length`` to ``max_length`` characters (3 to 15 by default).

Everything works offline on a fresh machine: the default stop-word list is nltk's English
list when its data is installed and scikit-learn's ``ENGLISH_STOP_WORDS`` otherwise (pass
``stop_words="sklearn"`` or ``"nltk"`` to pin one). Lemmatization is off by default because
it needs the WordNet data (``python -m nltk.downloader wordnet``); asking for it when the
data is missing raises :class:`MissingNLTKDataError` saying so.

Nothing here is private: preprocessing is a per-document map, so it preserves every
adjacency notion; but a vocabulary built from the whole corpus (``tokens_to_matrix`` with
``vocabulary=None``) is *not* private — use ``dptm.vocab`` for a DP vocabulary.
"""
import re

import numpy as np
import scipy.sparse as sp

from ._utils import check_count_matrix, check_int

__all__ = [
    "MissingNLTKDataError", "TextPreprocessor", "preprocess", "tokens_to_matrix",
    "matrix_to_tokens", "get_stop_words",
]

# Maximal runs of letters (any script): digits, underscores and punctuation separate tokens.
_WORD_RE = re.compile(r"[^\W\d_]+")


class MissingNLTKDataError(LookupError):
    """An nltk data package (e.g. WordNet) needed by the requested option is not installed."""


def _nltk_stop_words():
    """nltk's English stop words, or None when nltk or its data is missing."""
    try:
        import nltk
        nltk.data.find("corpora/stopwords")
        from nltk.corpus import stopwords
        return frozenset(stopwords.words("english"))
    except (ImportError, LookupError, OSError):
        return None


def get_stop_words(stop_words="english"):
    """Resolve a ``stop_words`` argument into a frozenset of lower-case words.

    Parameters
    ----------
    stop_words : {"english", "nltk", "sklearn"}, None, False or iterable of str
        ``"english"``: nltk's English list if its data is installed, otherwise
        scikit-learn's ``ENGLISH_STOP_WORDS`` (so results can differ between machines;
        pin ``"nltk"`` or ``"sklearn"`` for reproducibility). ``"nltk"``: nltk's list,
        raising :class:`MissingNLTKDataError` when its data is missing. ``"sklearn"``:
        scikit-learn's list. None or False: no stop words. An iterable: those words.

    Returns
    -------
    frozenset of str
    """
    if stop_words is None or stop_words is False:
        return frozenset()
    if isinstance(stop_words, str):
        if stop_words == "sklearn":
            from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
            return frozenset(ENGLISH_STOP_WORDS)
        if stop_words in ("english", "nltk"):
            words = _nltk_stop_words()
            if words is not None:
                return words
            if stop_words == "nltk":
                raise MissingNLTKDataError(
                    "stop_words='nltk' needs nltk's stopwords data, which is not installed; "
                    "run `python -m nltk.downloader stopwords`, or use stop_words='sklearn'")
            return get_stop_words("sklearn")
        raise ValueError("stop_words must be 'english', 'nltk', 'sklearn', None or an iterable "
                         f"of words, got {stop_words!r}")
    try:
        words = [str(w).lower() for w in stop_words]
    except TypeError:
        raise TypeError("stop_words must be 'english', 'nltk', 'sklearn', None or an iterable "
                        f"of words, got {type(stop_words).__name__}") from None
    return frozenset(words)


def _wordnet_lemmatizer():
    """A working nltk WordNetLemmatizer, or MissingNLTKDataError with the fix."""
    message = ("lemmatize=True needs nltk's WordNet data, which is not installed; run "
               "`python -m nltk.downloader wordnet` (or use lemmatize=False)")
    try:
        from nltk.stem import WordNetLemmatizer
    except ImportError as exc:  # pragma: no cover - nltk is a dependency
        raise MissingNLTKDataError(message) from exc
    lemmatizer = WordNetLemmatizer()
    try:
        lemmatizer.lemmatize("tests")  # forces the lazy corpus load
    except (LookupError, OSError) as exc:
        raise MissingNLTKDataError(message) from exc
    return lemmatizer


class TextPreprocessor:
    """Callable turning one document (a string) into its list of tokens.

    Usable wherever a tokenizer is expected, in particular as
    ``CountVectorizer(analyzer=TextPreprocessor())``. Picklable (the stop-word set and the
    lemmatizer are rebuilt lazily after unpickling), so it works with joblib workers.

    Parameters
    ----------
    lemmatize : bool, default=False
        Lemmatize tokens with nltk's WordNet lemmatizer (as the papers do). Needs the WordNet
        data; raises :class:`MissingNLTKDataError` on first use when it is missing.
    stop_words : {"english", "nltk", "sklearn"}, None or iterable of str, default="english"
        See :func:`get_stop_words`.
    min_length, max_length : int, default=3, 15
        Tokens shorter or longer than this (in characters, after lemmatization) are dropped.
    """

    def __init__(self, *, lemmatize=False, stop_words="english", min_length=3, max_length=15):
        self.lemmatize = lemmatize
        self.stop_words = stop_words
        self.min_length = min_length
        self.max_length = max_length
        self._state = None

    def _prepare(self):
        if self._state is None:
            if not isinstance(self.lemmatize, (bool, np.bool_)):
                raise TypeError(f"lemmatize must be True or False, got {self.lemmatize!r}")
            min_length = check_int(self.min_length, "min_length", minimum=1)
            max_length = check_int(self.max_length, "max_length", minimum=1)
            if max_length < min_length:
                raise ValueError(f"max_length must be >= min_length ({min_length}), "
                                 f"got {max_length}")
            stop = get_stop_words(self.stop_words)
            lemmatizer = _wordnet_lemmatizer() if self.lemmatize else None
            self._state = (stop, lemmatizer, min_length, max_length)
        return self._state

    def __call__(self, doc):
        if isinstance(doc, bytes):
            doc = doc.decode("utf-8", errors="replace")
        if not isinstance(doc, str):
            raise TypeError(f"each document must be a str, got {type(doc).__name__}")
        stop, lemmatizer, lo, hi = self._prepare()
        tokens = [t for t in _WORD_RE.findall(doc.lower()) if t not in stop]
        if lemmatizer is not None:
            lemma = lemmatizer.lemmatize
            tokens = [w for w in (lemma(t) for t in tokens) if w not in stop]
        return [t for t in tokens if lo <= len(t) <= hi]

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_state"] = None
        return state

    def __repr__(self):
        return (f"TextPreprocessor(lemmatize={self.lemmatize!r}, stop_words={self.stop_words!r}, "
                f"min_length={self.min_length!r}, max_length={self.max_length!r})")


def preprocess(texts, *, lemmatize=False, stop_words="english", min_length=3, max_length=15):
    """Tokenize documents as the papers do (see the module docstring for the steps).

    Parameters
    ----------
    texts : iterable of str
        The documents. A single string is rejected (it would be read as characters).
    lemmatize, stop_words, min_length, max_length
        As in :class:`TextPreprocessor`.

    Returns
    -------
    list of list of str
        One token list per document, in document order (possibly empty lists).

    Examples
    --------
    >>> preprocess(["The doctors' 3 clinics, in 2024!"], stop_words="sklearn")
    [['doctors', 'clinics']]
    """
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts must be an iterable of documents, not a single string; "
                        "wrap it in a list")
    analyzer = TextPreprocessor(lemmatize=lemmatize, stop_words=stop_words,
                                min_length=min_length, max_length=max_length)
    analyzer._prepare()  # validate arguments (and find nltk data) even for empty input
    return [analyzer(doc) for doc in texts]


def tokens_to_matrix(token_lists, vocabulary=None, min_df=1):
    """Build a document-term count matrix from token lists.

    Parameters
    ----------
    token_lists : iterable of iterable of str
        One token list per document (as returned by :func:`preprocess`).
    vocabulary : array-like of str, optional
        The columns, in this order (must be unique). Tokens not in it are dropped. When
        None, the vocabulary is every token with document frequency >= ``min_df``,
        sorted alphabetically (as ``CountVectorizer`` does).
    min_df : int, default=1
        Minimum number of documents a word must occur in to be kept (only used when
        ``vocabulary`` is None).

    Returns
    -------
    X : scipy.sparse.csr_matrix of int64, shape (n_docs, n_words)
        Canonical CSR (sorted indices, no explicit zeros). Documents that lose all their
        tokens are kept as empty rows.
    vocabulary : numpy.ndarray of str, shape (n_words,)
    """
    if isinstance(token_lists, (str, bytes)):
        raise TypeError("token_lists must be an iterable of token lists, not a string")
    docs = []
    for i, tokens in enumerate(token_lists):
        if isinstance(tokens, (str, bytes)):
            raise TypeError(f"token_lists[{i}] is a string; each document must be a list of "
                            "tokens (use preprocess() to tokenize text)")
        docs.append([str(t) for t in tokens])
    if not docs:
        raise ValueError("token_lists is an empty corpus: it has 0 documents")
    if vocabulary is None:
        min_df = check_int(min_df, "min_df", minimum=1)
        df = {}
        for tokens in docs:
            for t in set(tokens):
                df[t] = df.get(t, 0) + 1
        vocab = np.array(sorted(t for t, n in df.items() if n >= min_df), dtype=str)
        if vocab.size == 0:
            raise ValueError(f"empty vocabulary: no token occurs in >= min_df={min_df} "
                             "documents")
    else:
        if isinstance(vocabulary, (str, bytes)):
            raise TypeError("vocabulary must be an array-like of words, not a single string")
        vocab = np.asarray([str(w) for w in vocabulary], dtype=str)
        if vocab.size == 0:
            raise ValueError("vocabulary is empty")
        if np.unique(vocab).size != vocab.size:
            raise ValueError("vocabulary contains duplicate words")
    index = {w: j for j, w in enumerate(vocab.tolist())}
    indptr = np.zeros(len(docs) + 1, dtype=np.int64)
    cols = []
    for i, tokens in enumerate(docs):
        ids = [index[t] for t in tokens if t in index]
        cols.extend(ids)
        indptr[i + 1] = indptr[i] + len(ids)
    X = sp.csr_matrix((np.ones(len(cols), dtype=np.int64), np.asarray(cols, dtype=np.int64),
                       indptr), shape=(len(docs), vocab.size))
    X.sum_duplicates()  # also sorts the indices
    X.eliminate_zeros()
    return X, vocab


def matrix_to_tokens(X, vocabulary):
    """Inverse of :func:`tokens_to_matrix`, up to token order.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_docs, n_words)
        Non-negative integer counts.
    vocabulary : array-like of str, shape (n_words,)

    Returns
    -------
    list of list of str
        Document ``d`` holds word ``vocabulary[w]`` ``X[d, w]`` times, words in column order.
    """
    X = check_count_matrix(X)
    vocab = np.asarray(vocabulary, dtype=str)
    if vocab.ndim != 1 or vocab.size != X.shape[1]:
        raise ValueError(f"vocabulary must have one word per column of X ({X.shape[1]}), "
                         f"got shape {vocab.shape}")
    out = []
    for d in range(X.shape[0]):
        lo, hi = X.indptr[d], X.indptr[d + 1]
        out.append(np.repeat(vocab[X.indices[lo:hi]], X.data[lo:hi]).tolist())
    return out
