"""``Release``: what a user publishes from a fitted topic model.

A fitted private estimator holds secrets (true counts, the token assignments, in test mode
its seed) and is not for publication. ``model.release()`` extracts what is: the privatized
topic-word matrix, the vocabulary with its provenance, the privacy report and the public
hyperparameters. Every field is either a privatized value or a declared public parameter,
so the release of two neighbouring data sets differs only through the mechanism's noise.

``Release.save(path)`` writes two plain files in a directory (``topics.npz``: the arrays;
``release.json``: everything else, the privacy report as its full event tree) and
``Release.load(path)`` reads them back without pickle. ``transform`` and ``perplexity``
infer the topics of new documents with the released topics fixed (post-processing).
"""
import json
import numbers
import os
import zlib

import numpy as np

from . import _cgs
from ._utils import check_count_matrix, check_int, check_positive
from .accounting.report import PrivacyReport
from .corpus import Corpus

__all__ = ["Release"]

FORMAT_VERSION = 1
_ARRAYS, _META = "topics.npz", "release.json"
# Never part of a release: secrets (the seed) and run-time options.
_NOT_PUBLIC = {"random_state", "verbose", "callback", "n_jobs"}
_NOT_PRIVATE_NOTE = ("NOT PRIVATE: a non-private model; these topics and this vocabulary "
                     "expose the training data")


def public_params(params):
    """``params`` (an estimator's ``get_params(deep=False)``) as JSON-ready public data:
    seeds and run-time options dropped, nested estimators by class and parameters, arrays
    (e.g. a reference corpus) by shape only."""
    return {k: _public_value(v) for k, v in sorted(params.items()) if k not in _NOT_PUBLIC}


def _public_value(v):
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        return float(v)
    if isinstance(v, (list, tuple)) and all(isinstance(x, (str, numbers.Number)) for x in v):
        return [_public_value(x) for x in v]
    if hasattr(v, "get_params"):
        return {"estimator": type(v).__name__, "params": public_params(v.get_params(deep=False))}
    if hasattr(v, "shape"):
        return f"<{type(v).__name__} of shape {tuple(v.shape)}>"
    return f"<{type(v).__name__}>"


class Release:
    """A publishable topic model.

    Parameters
    ----------
    topic_word : array-like of shape (n_components, n_words)
        The released topics (rows are normalised to sum to 1).
    doc_topic_prior : float
        Dirichlet prior of the document-topic distributions, used by ``transform``.
    privacy : PrivacyReport or None
        The guarantee; None for a non-private model (then nothing protects the data).
    vocabulary : sequence of str, optional
        Word of each column. Its provenance is ``privacy.vocabulary`` when the report states
        it; otherwise the vocabulary is declared public (the guarantee assumes it).
    model : str
        Class name of the estimator that produced the release.
    hyperparameters : dict
        Public hyperparameters (JSON-ready).
    components : array-like of shape (n_components, n_words), optional
        The released pseudo-counts, when the model releases them (privatized).
    transform_seed : int
        Seed of ``transform``'s fold-in sampler; public (it only randomises
        post-processing of released values).
    transform_max_iter : int
        Fold-in sweeps per document in ``transform``.

    Privacy contract
    ----------------
    Contains no seed, no generator state, no true count and no timing; ``save`` writes only
    the fields above.
    """

    def __init__(self, topic_word, *, doc_topic_prior, privacy=None, vocabulary=None,
                 model="", hyperparameters=None, components=None, transform_seed=0,
                 transform_max_iter=100):
        tw = np.array(topic_word, dtype=np.float64)
        if tw.ndim != 2 or tw.shape[0] < 1 or tw.shape[1] < 1:
            raise ValueError(f"topic_word must be a non-empty 2-D array, got shape {tw.shape}")
        if not np.all(np.isfinite(tw)) or tw.min() < 0 or np.any(tw.sum(axis=1) <= 0):
            raise ValueError("topic_word must be finite, non-negative, with positive row sums")
        sums = tw.sum(axis=1, keepdims=True)
        # Normalise once; an already normalised matrix (a loaded release) is kept bit for bit.
        self.topic_word = tw if np.allclose(sums, 1.0, rtol=0, atol=1e-12) else tw / sums
        self.components = None if components is None else np.array(components, dtype=np.float64)
        if self.components is not None and self.components.shape != tw.shape:
            raise ValueError(f"components must have the shape of topic_word {tw.shape}, "
                             f"got {self.components.shape}")
        self.doc_topic_prior = check_positive(doc_topic_prior, "doc_topic_prior")
        if privacy is not None and not isinstance(privacy, PrivacyReport):
            raise TypeError(f"privacy must be a PrivacyReport or None, got {type(privacy).__name__}")
        self.privacy = privacy
        if vocabulary is not None:
            vocabulary = [str(w) for w in vocabulary]
            if len(vocabulary) != tw.shape[1]:
                raise ValueError(f"vocabulary has {len(vocabulary)} words but topic_word has "
                                 f"{tw.shape[1]} columns")
        self.vocabulary = vocabulary
        self.model = str(model)
        self.hyperparameters = dict(hyperparameters or {})
        self.transform_seed = check_int(transform_seed, "transform_seed", minimum=0)
        self.transform_max_iter = check_int(transform_max_iter, "transform_max_iter", minimum=2)

    # -- what it states --------------------------------------------------------------
    @property
    def n_components(self):
        return self.topic_word.shape[0]

    @property
    def private(self):
        """False for the output of a non-private model (no privacy report): NOT PRIVATE."""
        return self.privacy is not None

    @property
    def vocabulary_provenance(self):
        """Where the vocabulary comes from, as the guarantee assumes it."""
        if self.privacy is not None and self.privacy.vocabulary is not None:
            return self.privacy.vocabulary
        if self.vocabulary is None:
            return "word ids only (no vocabulary released)"
        return "public (given): the guarantee assumes it does not depend on the private data"

    def top_words(self, n=10):
        """The ``n`` most probable words (or word ids) of each topic, most probable first."""
        n = check_int(n, "n", minimum=1)
        order = np.argsort(-self.topic_word, axis=1, kind="stable")[:, :n]
        if self.vocabulary is None:
            return order.tolist()
        return [[self.vocabulary[i] for i in row] for row in order]

    # -- post-processing ---------------------------------------------------------------
    def transform(self, X):
        """Document-topic distributions of new documents, topics fixed (fold-in Gibbs;
        each document draws from a stream seeded by ``transform_seed`` and its content, so
        a document's theta does not depend on the others in ``X``)."""
        return self._transform_counts(check_count_matrix(X))

    def _transform_counts(self, X):
        """``transform`` of a matrix ``check_count_matrix`` returned (not validated again)."""
        if X.shape[1] != self.topic_word.shape[1]:
            raise ValueError(f"X has {X.shape[1]} columns but the release has "
                             f"{self.topic_word.shape[1]} words")
        return _fold_in_counts(self.topic_word, X, self.doc_topic_prior,
                               self.transform_max_iter, self.transform_seed)

    def perplexity(self, X):
        """Held-out perplexity of ``X`` (``dptm.metrics.perplexity``, theta by ``transform``)."""
        from .metrics import _perplexity_counts
        X = check_count_matrix(X)
        return _perplexity_counts(X, self._transform_counts(X), self.topic_word)

    # -- files -----------------------------------------------------------------------------
    def save(self, path):
        """Write the release to the directory ``path`` (created if needed): ``topics.npz``
        and ``release.json``. Returns ``path``."""
        os.makedirs(path, exist_ok=True)
        arrays = {"topic_word": self.topic_word}
        if self.components is not None:
            arrays["components"] = self.components
        np.savez(os.path.join(path, _ARRAYS), **arrays)
        meta = {
            "format": "dptm.Release", "format_version": FORMAT_VERSION, "model": self.model,
            "doc_topic_prior": self.doc_topic_prior, "transform_seed": self.transform_seed,
            "transform_max_iter": self.transform_max_iter,
            "hyperparameters": self.hyperparameters, "vocabulary": self.vocabulary,
            "vocabulary_provenance": self.vocabulary_provenance,
            "privacy": None if self.privacy is None else self.privacy.to_state(),
            "privacy_summary": (_NOT_PRIVATE_NOTE if self.privacy is None
                                else self.privacy.to_dict()),
            "private": self.private,
        }
        with open(os.path.join(path, _META), "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=1, allow_nan=True)
        return path

    @classmethod
    def load(cls, path):
        """Read a release written by :meth:`save` (no pickle involved)."""
        meta_path = os.path.join(path, _META)
        try:
            with open(meta_path, encoding="utf-8") as f:
                meta = json.load(f)
        except FileNotFoundError:
            raise FileNotFoundError(f"{meta_path}: no release here (expected {_META})") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"{meta_path}: not valid JSON ({exc})") from None
        if not isinstance(meta, dict) or meta.get("format") != "dptm.Release":
            raise ValueError(f"{meta_path}: not a dptm release")
        if meta.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"{meta_path}: format version {meta.get('format_version')} is not "
                             f"supported (this dptm reads version {FORMAT_VERSION})")
        with np.load(os.path.join(path, _ARRAYS), allow_pickle=False) as arrays:
            topic_word = arrays["topic_word"]
            components = arrays["components"] if "components" in arrays.files else None
        privacy = meta["privacy"]
        if meta.get("private", privacy is not None) is not (privacy is not None):
            raise ValueError(f"{meta_path}: 'private' is {meta.get('private')!r} but the "
                             f"release {'has' if privacy is not None else 'has no'} privacy report")
        return cls(topic_word, components=components, doc_topic_prior=meta["doc_topic_prior"],
                   privacy=None if privacy is None else PrivacyReport.from_state(privacy),
                   vocabulary=meta["vocabulary"], model=meta["model"],
                   hyperparameters=meta["hyperparameters"], transform_seed=meta["transform_seed"],
                   transform_max_iter=meta["transform_max_iter"])

    def __eq__(self, other):
        if not isinstance(other, Release):
            return NotImplemented
        same_arrays = (np.array_equal(self.topic_word, other.topic_word)
                       and (self.components is None) == (other.components is None)
                       and (self.components is None
                            or np.array_equal(self.components, other.components)))
        return same_arrays and all(
            getattr(self, k) == getattr(other, k) for k in
            ("doc_topic_prior", "privacy", "vocabulary", "model", "hyperparameters",
             "transform_seed", "transform_max_iter"))

    __hash__ = None

    def __repr__(self):
        kind = "NOT PRIVATE" if self.privacy is None else repr(self.privacy)
        return (f"Release(model={self.model!r}, n_components={self.n_components}, "
                f"n_words={self.topic_word.shape[1]}, {kind})")


def fold_in(topic_word, X, doc_topic_prior, n_iter, seed, n_threads=1):
    """theta of each row of the doc-term count matrix ``X`` with ``topic_word`` fixed:
    fold-in Gibbs sampling (papers/zhao2021 VII-A), ``n_iter`` sweeps, the second half
    averaged. Each document's stream is keyed by ``seed`` and the document's content (so
    the result is the same for any ``n_threads``)."""
    return _fold_in_counts(topic_word, check_count_matrix(X), doc_topic_prior, n_iter, seed,
                           n_threads)


def _fold_in_counts(topic_word, X, doc_topic_prior, n_iter, seed, n_threads=1):
    """``fold_in`` of a matrix ``check_count_matrix`` returned (not validated again)."""
    corpus = Corpus._from_counts(X)
    rngs = [np.random.Generator(np.random.PCG64(
        [seed, zlib.crc32(X.indices[X.indptr[d]:X.indptr[d + 1]].tobytes()),
         zlib.crc32(X.data[X.indptr[d]:X.indptr[d + 1]].tobytes())])).bit_generator
        for d in range(X.shape[0])]
    word_factor = np.ascontiguousarray(topic_word.T)
    mean_counts = _cgs.fold_in(corpus.doc_ptr, corpus.word_ids, word_factor, doc_topic_prior,
                               n_iter, n_iter // 2, rngs, n_threads)
    theta = mean_counts + doc_topic_prior
    return theta / theta.sum(axis=1, keepdims=True)
