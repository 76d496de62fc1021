"""``dptm fit --public-text PATH``: PUBLIC documents of the same kind as the private
``--data`` give batch-vb its vocabulary (unless ``--vocabulary FILE`` lists the words), the
words' public counts (``word_counts``) and its starting topics (``init_topics``,
scikit-learn's batch LDA fitted on the public text).

Everything here is read from public inputs only (the public text, ``--vocabulary``,
``--stop-words`` and the flags): nothing depends on the private text, so neighbouring
private data sets get the same words, counts and starting topics. Every refusal comes
before the private data is read and before any budget is spent."""
import os
import warnings
from collections import Counter

__all__ = ["add_public_text_option", "prepare_public_text", "public_topics",
           "VOCABULARY_SIZE"]

# The vocabulary taken from public text: its most frequent words, as many as the bench's
# corpora use (bench/corpora.py), fewer when the public text has fewer distinct words.
VOCABULARY_SIZE = 5000
# The fewest public documents the starting topics were measured with (the model page's
# "Public starting topics"); fewer get a warning (their number is public).
FEW_DOCUMENTS = 1000


def add_public_text_option(p):
    p.add_argument("--public-text", default=None, metavar="PATH",
                   help="batch-vb on raw text: PUBLIC documents of the same kind as --data "
                        "(never the private ones), read as --data is; they give the "
                        f"vocabulary (their {VOCABULARY_SIZE:,} most frequent words, or the "
                        "words of a --vocabulary word list), the words' public counts and the "
                        "starting topics (scikit-learn batch LDA on them, K = --topics); all "
                        "of --epsilon goes to the model")


def _check_flags(a, path):
    """The refusals that need no file read: flags --public-text does not go with."""
    from ._cli_data import RECOMMENDED, _overlaps
    if getattr(a, "non_private", False):
        raise ValueError(f"--public-text gives the private --model {RECOMMENDED} its "
                         "vocabulary, word counts and starting topics; a --non-private model "
                         "reads them from --data itself: drop --public-text")
    if a.model != RECOMMENDED:
        raise ValueError(f"--public-text gives --model {RECOMMENDED} its vocabulary, word "
                         f"counts and starting topics; --model {a.model} takes none of them: "
                         f"use --model {RECOMMENDED}, or give a public --vocabulary FILE")
    if a.data == "demo":
        raise ValueError("--public-text goes with private raw text --data PATH; the demo "
                         "corpus has its own public vocabulary: give --data")
    if getattr(a, "vocab", None) is not None:
        raise ValueError("--public-text gives raw text its vocabulary; --data with --vocab is "
                         "a UCI bag of words over the --vocab file's words: drop one of them")
    if not os.path.exists(path):
        raise ValueError(f"--public-text: no such file or folder: {path}")
    if _overlaps(path, a.data):
        raise ValueError(f"--public-text {path} overlaps --data {a.data}: the public text must "
                         "be other documents of the same kind, never the private ones (their "
                         "words, counts and topics would be published as public)")
    reference = getattr(a, "reference_data", None)
    if reference is not None and _overlaps(reference, path):
        raise ValueError(f"--reference-data {reference} overlaps --public-text {path}: the "
                         "starting topics are fitted on the public text, so a metric on it is "
                         "not held out; measure on other public text")


def prepare_public_text(a):
    """Read ``--public-text`` (if given) before the private data: set ``a.public_words``
    (the vocabulary, for :func:`dptm._cli_data.load_corpus`), ``a.word_counts`` (their raw
    token counts in the public text), ``a.public_provenance`` (what the report says of the
    vocabulary: the file's name, never its path) and ``a.public_X`` (the public documents
    over those words, for :func:`public_topics`). A ValueError names the flags when
    --public-text does not go with the others or the public text holds no word."""
    import numpy as np

    from . import datasets, text
    from ._cli_data import _check_word_lists, _stop_words, given_vocabulary
    a.public_words = a.public_X = a.public_init = None
    path = getattr(a, "public_text", None)
    if path is None:
        return
    _check_flags(a, path)
    vocabulary = getattr(a, "public_vocab", None)
    for flag, p in (("--vocabulary", vocabulary), ("--stop-words", a.stop_words)):
        if p is not None and not os.path.exists(p):
            raise ValueError(f"{flag}: no such file or folder: {p}")
    _check_word_lists(a)                # public word lists, not read from --data
    encoding = getattr(a, "encoding", "utf-8")
    stop_words = _stop_words(a)
    name = os.path.basename(os.path.normpath(path))
    if vocabulary is not None:
        # the words first (a file with counts is refused before the public text is read)
        words, counts, given = given_vocabulary(vocabulary, stop_words, encoding)
        if counts is not None:
            raise ValueError(f"--vocabulary {vocabulary} carries word counts and --public-text "
                             f"{path} gives them too: two sources of counts. Give --vocabulary "
                             "as one word per line (its words' counts then come from the "
                             "public text), or drop --public-text")
    try:
        docs = datasets.load_texts(path, key=a.text_key, one_per_line=a.one_per_line,
                                   encoding=encoding)
    except ValueError as exc:           # the loaders' messages begin with the path
        raise ValueError(f"--public-text {exc}") from None
    if not docs:
        raise ValueError(f"--public-text {path}: no documents")
    if len(docs) < FEW_DOCUMENTS:
        from .exceptions import UtilityWarning
        warnings.warn(f"--public-text {path}: only {len(docs)} documents; the starting topics "
                      f"were measured with {FEW_DOCUMENTS:,} to 5,000 (topics of fewer are "
                      "weaker): give more public text of the same kind, and compare the "
                      "release with them on --reference-data FILE", UtilityWarning,
                      stacklevel=2)
    tokens = text.preprocess(docs, stop_words=stop_words)
    freq = Counter(t for doc in tokens for t in doc)
    if not freq:
        raise ValueError(f"--public-text {path}: no word is left once the text is read "
                         "(lower-case letters, 3 to 15 of them, stop words left out)")
    if vocabulary is None:
        # the most frequent words, ties in alphabetical order; listed alphabetically
        top = sorted(freq.items(), key=lambda wc: (-wc[1], wc[0]))[:VOCABULARY_SIZE]
        words = sorted(w for w, _ in top)
        a.public_provenance = (f"public (the {len(words)} most frequent words of the public "
                               f"text {name}; their counts and the starting topics from it)")
    else:
        if not any(freq[w] for w in words):
            raise ValueError(f"--public-text {path}: none of the words of --vocabulary "
                             f"{vocabulary} occurs in it: its counts and topics would say "
                             "nothing; give public text of the same kind as --data")
        a.public_provenance = (given[:-1] + "; the words' counts and the starting topics from "
                               f"the public text {name})")
    a.public_words = words
    a.word_counts = np.array([freq[w] for w in words], dtype=np.float64)
    X, _ = text.tokens_to_matrix(tokens, vocabulary=words)
    a.public_X = X[np.asarray(X.sum(axis=1)).ravel() > 0]


def public_topics(a):
    """The starting topics of batch-vb from ``--public-text`` (None without it):
    scikit-learn's batch LDA, K = ``--topics``, ``random_state=0``, fitted on the public
    documents once per run (a curve's fits share it)."""
    if getattr(a, "public_X", None) is None:
        return None
    if a.public_init is None:
        from sklearn.decomposition import LatentDirichletAllocation
        lda = LatentDirichletAllocation(a.topics, learning_method="batch", random_state=0)
        a.public_init = lda.fit(a.public_X).components_
    return a.public_init
