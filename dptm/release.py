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
import math
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
# Bounds on what Release.load accepts from a file (the files may be hostile).
_MAX_META_BYTES = 1 << 30
_MAX_TRANSFORM_ITER = 100_000
_NPY_HEADER_BYTES = 1 << 16        # an .npy header is at most this long (numpy writes ~128)
_MAX_INFLATION = 64                # bytes out per compressed byte in a compressed topics.npz
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


def _check_save_path(path, overwrite=False):
    """Refuse ``path`` as the directory of :meth:`Release.save`: an existing file, or a
    non-empty directory unless ``overwrite``. Reads only the file system at ``path``, so a
    caller can check it before any work."""
    if overwrite not in (True, False):
        raise TypeError(f"overwrite must be True or False, got {overwrite!r}")
    if os.path.exists(path) and not os.path.isdir(path):
        raise FileExistsError(f"{os.fspath(path)}: exists and is not a directory (a release "
                              "is a directory: topics.npz + release.json)")
    if not overwrite and os.path.isdir(path) and os.listdir(path):
        raise FileExistsError(f"{os.fspath(path)}: the directory is not empty; pass "
                              "overwrite=True to write the release into it anyway "
                              "(topics.npz and release.json replaced, other files kept)")


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
        if self.components is not None:
            if self.components.shape != tw.shape:
                raise ValueError(f"components must have the shape of topic_word {tw.shape}, "
                                 f"got {self.components.shape}")
            if not np.all(np.isfinite(self.components)) or self.components.min() < 0:
                raise ValueError("components must be finite and non-negative")
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
        if self.transform_max_iter > _MAX_TRANSFORM_ITER:
            raise ValueError(f"transform_max_iter must be <= {_MAX_TRANSFORM_ITER}, got "
                             f"{self.transform_max_iter}")

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

    def top_words(self, n=10, as_frame=None):
        """The ``n`` most probable words (or word ids) of each topic, most probable first
        (post-processing of the released topics), as ``model.top_words`` gives them.

        Parameters
        ----------
        n : int
        as_frame : bool, optional
            None: a pandas DataFrame (one row per topic, columns 1..n) when pandas is
            installed, else a list of lists; True: a DataFrame (pandas required); False: a
            list of lists.
        """
        return _top_words_table(self.topic_word, n, self.vocabulary, as_frame)

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

    def pyldavis_data(self, X, *, documents):
        """What ``pyLDAvis.prepare`` needs to draw this release, from documents the caller
        declares publishable: ``pyLDAvis.prepare(**release.pyldavis_data(X, documents=
        "public"))``. pyLDAvis itself is not needed here (``pip install pyLDAvis`` to draw).

        Parameters
        ----------
        X : doc-term count matrix of shape (n_docs, n_words)
            Public documents, or held-out documents that may be published, in the
            release's vocabulary. Never the private training data.
        documents : {"public", "held-out"}
            The caller's declaration of what ``X`` is (required: there is no default).

        Returns
        -------
        dict with ``topic_term_dists`` (the released topics), ``doc_topic_dists``
        (:meth:`transform` of ``X``: fold-in with the topics fixed), ``doc_lengths`` and
        ``term_frequency`` (token counts of ``X``), ``vocab`` (the vocabulary, or the word
        ids as strings).

        Privacy
        -------
        The topics are the release (post-processing). Everything else is computed from
        ``X`` itself without noise: the document lengths, term frequencies and topic
        mixtures of ``X`` are published as they are. That is safe only for documents whose
        content may be published; passing the private training data would publish its
        exact term counts, outside any guarantee.
        """
        if documents not in ("public", "held-out"):
            raise ValueError("documents must be 'public' or 'held-out' (the caller's "
                             f"declaration that X may be published), got {documents!r}")
        X = check_count_matrix(X)
        theta = self._transform_counts(X)
        vocab = (self.vocabulary if self.vocabulary is not None
                 else [str(i) for i in range(self.topic_word.shape[1])])
        return {
            "topic_term_dists": self.topic_word.copy(),
            "doc_topic_dists": theta,
            "doc_lengths": np.asarray(X.sum(axis=1)).ravel().astype(np.int64),
            "vocab": list(vocab),
            "term_frequency": np.asarray(X.sum(axis=0)).ravel().astype(np.int64),
        }

    # -- files -----------------------------------------------------------------------------
    def save(self, path, *, overwrite=False):
        """Write the release to the directory ``path`` (created if needed): ``topics.npz``
        and ``release.json``. Returns ``path``.

        Parameters
        ----------
        path : str or os.PathLike
            A new or empty directory.
        overwrite : bool, default=False
            Also write into a non-empty directory, replacing ``topics.npz`` and
            ``release.json`` there (other files are left as they are). Without it a
            non-empty directory raises ``FileExistsError``: an earlier release is never
            replaced by accident.
        """
        _check_save_path(path, overwrite)
        os.makedirs(path, exist_ok=True)
        arrays = {"topic_word": self.topic_word}
        if self.components is not None:
            arrays["components"] = self.components
        np.savez(os.path.join(path, _ARRAYS), **arrays)
        meta = {
            "format": "dptm.Release", "format_version": FORMAT_VERSION, "model": self.model,
            "shape": list(self.topic_word.shape),
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
        """Read a release written by :meth:`save` (no pickle involved).

        The files are treated as untrusted: ``release.json`` is bounded in size and every
        field is validated (types, ranges, the privacy report as a complete report); each
        array of ``topics.npz`` must be a float64 array of the shape ``release.json``
        states, and its declared size is checked before anything is inflated, so a
        compressed bomb is refused without being decompressed.
        """
        meta_path = os.path.join(path, _META)
        try:
            size = os.path.getsize(meta_path)
            if size > _MAX_META_BYTES:
                raise ValueError(f"{meta_path}: {size} bytes, more than a release's metadata "
                                 f"may hold ({_MAX_META_BYTES})")
            with open(meta_path, encoding="utf-8") as f:
                meta = json.load(f)
        except FileNotFoundError:
            raise FileNotFoundError(f"{meta_path}: no release here (expected {_META})") from None
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise ValueError(f"{meta_path}: not valid JSON ({type(exc).__name__})") from None
        if not isinstance(meta, dict) or meta.get("format") != "dptm.Release":
            raise ValueError(f"{meta_path}: not a dptm release")
        version = meta.get("format_version")
        if type(version) is not int or version != FORMAT_VERSION:     # noqa: E721 (no bool)
            raise ValueError(f"{meta_path}: format version {version!r} is not supported "
                             f"(this dptm reads version {FORMAT_VERSION})")
        fields = _check_meta(meta, meta_path)
        has_report = fields["privacy"] is not None
        if meta.get("private", has_report) is not has_report:
            raise ValueError(f"{meta_path}: 'private' is {meta.get('private')!r} but the "
                             f"release {'has' if has_report else 'has no'} privacy report")
        arrays = _read_arrays(os.path.join(path, _ARRAYS), fields.pop("shape"))
        return cls(arrays["topic_word"], components=arrays.get("components"), **fields)

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


def _top_words_table(topic_word, n, vocabulary, as_frame=None):
    """The top words of every row of ``topic_word`` (ties by column order): the one
    implementation behind ``Release.top_words`` and the models' ``top_words``."""
    n = check_int(n, "n", minimum=1)
    if as_frame is not None and not isinstance(as_frame, bool):
        raise TypeError(f"as_frame must be None, True or False, got {type(as_frame).__name__}")
    if vocabulary is not None and len(vocabulary) != topic_word.shape[1]:
        raise ValueError(f"vocabulary has {len(vocabulary)} words but the model has "
                         f"{topic_word.shape[1]}")
    order = np.argsort(-topic_word, axis=1, kind="stable")[:, :n]
    words = (order.tolist() if vocabulary is None
             else [[str(vocabulary[i]) for i in row] for row in order])
    if as_frame is False:
        return words
    try:
        import pandas as pd
    except ImportError:
        if as_frame:
            raise ImportError("top_words(as_frame=True) needs pandas") from None
        return words
    return pd.DataFrame(words, index=[f"topic {k}" for k in range(len(words))],
                        columns=range(1, order.shape[1] + 1))


def _check_meta(meta, where):
    """The constructor's arguments from a loaded ``release.json``, every field checked for
    its type (the constructor then checks the ranges); ``shape`` is the arrays' (K, V)."""
    def need(key, types, what):
        v = meta.get(key)
        if not isinstance(v, types) or isinstance(v, bool) and bool not in types:
            raise ValueError(f"{where}: {key} must be {what}, got {type(v).__name__}")
        return v

    shape = meta.get("shape")
    if shape is not None:
        if not (isinstance(shape, list) and len(shape) == 2
                and all(type(n) is int and n >= 1 for n in shape)):       # noqa: E721
            raise ValueError(f"{where}: shape must be [n_components, n_words], got {shape!r:.80}")
        shape = tuple(shape)
    vocabulary = meta.get("vocabulary")
    if vocabulary is not None and not (isinstance(vocabulary, list)
                                       and all(isinstance(w, str) for w in vocabulary)):
        raise ValueError(f"{where}: vocabulary must be a list of strings or null")
    if shape is None:
        # files written before the shape was recorded: K and V from the other fields
        k = meta.get("hyperparameters", {}).get("n_components") \
            if isinstance(meta.get("hyperparameters"), dict) else None
        if type(k) is int and k >= 1 and vocabulary:                        # noqa: E721
            shape = (k, len(vocabulary))
    privacy = meta.get("privacy")
    if privacy is not None and not isinstance(privacy, dict):
        raise ValueError(f"{where}: privacy must be a saved privacy report or null")
    try:
        report = None if privacy is None else PrivacyReport.from_state(privacy)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: privacy is not a complete privacy report ({exc})") from None
    for key in ("doc_topic_prior", "transform_seed", "transform_max_iter"):
        if key not in meta:
            raise ValueError(f"{where}: {key} is missing")
    return dict(shape=shape, doc_topic_prior=meta["doc_topic_prior"], privacy=report,
                vocabulary=vocabulary, model=need("model", (str,), "a string"),
                hyperparameters=need("hyperparameters", (dict,), "an object"),
                transform_seed=meta["transform_seed"],
                transform_max_iter=meta["transform_max_iter"])


def _read_arrays(path, shape):
    """The arrays of ``topics.npz``: only ``topic_word`` and ``components``, float64 of
    ``shape`` (K, V). The zip members' declared sizes are checked before anything is read,
    so nothing larger than the arrays themselves is ever inflated; never unpickles."""
    import zipfile
    allowed = {"topic_word.npy", "components.npy"}
    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no release arrays here (expected {_ARRAYS})") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise ValueError(f"{path}: not a valid .npz file ({exc})") from None
    out, on_disk = {}, os.path.getsize(path)
    with zf:
        infos = zf.infolist()
        names = [i.filename for i in infos]
        if set(names) - allowed or len(set(names)) != len(names) or "topic_word.npy" not in names:
            raise ValueError(f"{path}: must hold topic_word (and optionally components) only, "
                             f"got {sorted(names)!r:.120}")
        for info in infos:
            name = info.filename[:-4]
            limit = math.inf if shape is None else _NPY_HEADER_BYTES + shape[0] * shape[1] * 8
            if info.compress_type != zipfile.ZIP_STORED:
                # save() stores the arrays uncompressed; a compressed copy may shrink them
                # only as much as float matrices do, never like a bomb
                limit = min(limit, _NPY_HEADER_BYTES + _MAX_INFLATION * info.compress_size)
            if info.compress_size > on_disk:
                raise ValueError(f"{path}: {name} declares more bytes than the file has")
            if info.file_size > limit:
                raise ValueError(f"{path}: {name} declares {info.file_size} bytes, more than "
                                 f"the release's shape allows ({limit}): refused unread")
            try:
                with zf.open(info) as f:
                    version = np.lib.format.read_magic(f)
                    if version not in ((1, 0), (2, 0)):
                        raise ValueError(f"{name}: unsupported .npy version {version}")
                    reader = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                              else np.lib.format.read_array_header_2_0)
                    arr_shape, fortran, dtype = reader(f)
                    if dtype != np.dtype("<f8") or len(arr_shape) != 2 or \
                            (shape is not None and tuple(arr_shape) != shape):
                        raise ValueError(f"{name} must be a float64 array of shape "
                                         f"{shape or '(K, V)'}, got {dtype} {arr_shape}")
                    want = arr_shape[0] * arr_shape[1] * 8
                    if f.tell() + want != info.file_size:
                        raise ValueError(f"{name}'s size does not match its header")
                    data = f.read(want)
                    if len(data) != want:
                        raise ValueError(f"{name} is truncated")
            except (ValueError, zipfile.BadZipFile, OSError, EOFError) as exc:
                raise ValueError(f"{path}: {exc}") from None
            arr = np.frombuffer(data, dtype="<f8").astype(np.float64)
            out[name] = arr.reshape(arr_shape, order="F" if fortran else "C")
    _check_loaded_arrays(out, path)
    return out


def _check_loaded_arrays(arrays, path):
    """A loaded topic_word must be a matrix of distributions; components, when present,
    must be what it was normalised from."""
    tw = arrays["topic_word"]
    if not np.all(np.isfinite(tw)) or tw.min() < 0 or \
            not np.allclose(tw.sum(axis=1), 1.0, rtol=0, atol=1e-9):
        raise ValueError(f"{path}: topic_word rows must be probability distributions "
                         "(finite, non-negative, summing to 1)")
    comp = arrays.get("components")
    if comp is None:
        return
    if comp.shape != tw.shape or not np.all(np.isfinite(comp)) or comp.min() < 0:
        raise ValueError(f"{path}: components must be finite, non-negative, of topic_word's shape")
    sums = comp.sum(axis=1, keepdims=True)
    pos = sums[:, 0] > 0
    # a row without mass (an empty keyword block) may be any distribution
    if not np.allclose(tw[pos], comp[pos] / sums[pos], rtol=1e-9, atol=1e-12):
        raise ValueError(f"{path}: components are not consistent with topic_word (each "
                         "topic_word row must be its components row normalised)")


def fold_in(topic_word, X, doc_topic_prior, n_iter, seed, n_threads=1):
    """theta of each row of the doc-term count matrix ``X`` with ``topic_word`` fixed:
    fold-in Gibbs sampling (Zhao et al. 2021 VII-A), ``n_iter`` sweeps, the second half
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
