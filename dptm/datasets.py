"""Corpora: the embedded demo corpus, synthetic LDA corpora with ground truth, and loaders.

* :func:`load_demo_corpus` — the corpus the ``dptm`` command uses on a fresh install: eight
  hand-written themes (``dptm/data/demo_topics.json``) and 800 short documents drawn from
  the LDA generative process over them with a fixed seed, so the true topics are known.
* :func:`make_lda_corpus` — any-size synthetic corpus from the LDA generative process.
* Loaders for the real corpora of the papers (UCI bag of words: KOS, NIPS; the cleaned
  TweetRumors JSON; Reuters C50 with author labels). The data is not shipped:
  :func:`shared_data_dir` finds the shared data folder (``$DPTM_DATA``).
"""
import codecs
import contextlib
import csv
import gzip
import io
import json
import os
import tarfile
import zlib
from functools import lru_cache
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch

from ._utils import check_int, check_positive, check_random_state

__all__ = [
    "load_uci_bow", "load_json_texts", "load_jsonl_texts", "load_csv_texts", "load_texts",
    "load_text_lines", "load_text_folder", "load_reuters_c50",
    "make_lda_corpus", "load_demo_corpus", "shared_data_dir",
]

_DEMO_TOPICS = Path(__file__).resolve().parent / "data" / "demo_topics.json"


def shared_data_dir():
    """The shared data folder holding the real corpora, or None when it is absent.

    ``$DPTM_DATA`` when that variable is set (None if it names no folder); otherwise
    ``<repository>/../shared/data`` relative to this package's source tree.

    Returns
    -------
    pathlib.Path or None
    """
    env = os.environ.get("DPTM_DATA")
    path = Path(env) if env else Path(__file__).resolve().parent.parent.parent / "shared" / "data"
    return path if path.is_dir() else None


def _check_file(path, name):
    path = Path(os.fspath(path))
    if not path.is_file():
        raise FileNotFoundError(f"{name}: no such file: {path}")
    return path


def _read_bytes(path):
    """File content, transparently gunzipped when the name ends in .gz. A corrupt or
    truncated gzip stream is a ValueError naming the file."""
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fh:
                return fh.read()
        return path.read_bytes()
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise ValueError(f"{path}: not a readable gzip file (corrupt or truncated: "
                         f"{exc or type(exc).__name__})") from None
    except IsADirectoryError:
        raise ValueError(f"{path}: is a directory, not a file") from None


def _check_encoding(encoding):
    """The codec name ``encoding`` checked: a text codec Python knows (ValueError otherwise,
    naming ``encoding``); the encoding is a public parameter of the run."""
    if not isinstance(encoding, str):
        raise TypeError(f"encoding must be a codec name (str), got {type(encoding).__name__}")
    try:
        info = codecs.lookup(encoding)
    except LookupError:
        info = None
    if info is None or not getattr(info, "_is_text_encoding", True):
        raise ValueError(f"encoding: unknown text encoding {encoding!r} (e.g. 'utf-8', "
                         "'latin-1', 'cp1252', 'utf-16')")
    return encoding


def _decode(path, raw, encoding="utf-8"):
    """The text of ``raw`` in ``encoding`` (UTF-8: a leading BOM dropped); a decoding error
    names the file, the line, the byte offset and the option to set."""
    codec = codecs.lookup(_check_encoding(encoding)).name
    try:
        return raw.decode("utf-8-sig" if codec == "utf-8" else codec)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        shown = "UTF-8" if codec == "utf-8" else encoding
        # a byte-order mark names UTF-16; otherwise Windows' cp1252 is the usual culprit
        # (latin-1 decodes any bytes, so it never fails, even on the wrong file)
        guess = "utf-16" if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else "cp1252"
        source = "utf16" if guess == "utf-16" else "cp1252"
        raise ValueError(f"{path}: line {line}: not valid {shown} (byte offset {exc.start}: "
                         f"{exc.reason}); give the file's encoding, e.g. encoding='{guess}', "
                         "and check that the words come out right, or convert it first, e.g. "
                         f"`iconv -f {source} -t utf-8`") from None


def _read_text(path, encoding="utf-8"):
    return _decode(path, _read_bytes(path), encoding)


def _lines(text):
    """The lines of ``text`` split at "\\n" only (a trailing "\\r" dropped): str.splitlines
    also splits at U+2028, U+0085, form feeds..., which valid JSON strings and documents hold."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def _base_suffix(path):
    """The format suffix of ``path``, ignoring a trailing ``.gz`` (``a.jsonl.gz`` -> ``.jsonl``)."""
    suffixes = [x.lower() for x in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def _json_kind(value):
    """What a decoded JSON value is, in JSON's words (``null``, a number, ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return {int: "a number", float: "a number", list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__)


def _text_of_record(path, where, rec, key):
    """The document text of one JSON/JSONL record: a string, or an object's ``key`` field."""
    if isinstance(rec, str):
        return rec
    if isinstance(rec, dict):
        if key not in rec:
            raise ValueError(f"{path}: {where}: record has no key {key!r} (its keys: "
                             f"{', '.join(map(repr, sorted(rec)[:10]))}); every record needs the "
                             "text field, chosen with key=")
        val = rec[key]
        if not isinstance(val, str):
            raise ValueError(f"{path}: {where}: field {key!r} is {_json_kind(val)}, not a string")
        return val
    raise ValueError(f"{path}: {where}: expected a string or an object with key {key!r}, got "
                     f"{type(rec).__name__}")


def load_uci_bow(docword_path, vocab_path):
    """Load a UCI "Bag of Words" corpus (KOS, NIPS, Enron, NYTimes, PubMed layout).

    Parameters
    ----------
    docword_path : path-like
        ``docword.<name>.txt`` or ``docword.<name>.txt.gz``: three header lines D (number of
        documents), W (vocabulary size), NNZ (number of entries), then NNZ lines
        ``docID wordID count`` with 1-based ids.
    vocab_path : path-like
        ``vocab.<name>.txt``: one word per line, line i is wordID i.

    Returns
    -------
    X : scipy.sparse.csr_matrix of int64, shape (D, W)
        Document-term counts (canonical CSR). Documents and words that never occur keep
        their (empty) row or column, so ids match the files.
    vocabulary : numpy.ndarray of str, shape (W,)

    Raises
    ------
    FileNotFoundError
        A file is missing.
    ValueError
        The header disagrees with the data or the vocabulary (ids out of range, wrong
        number of entries or of words, non-positive counts, repeated (doc, word) pairs).
    """
    docword_path = _check_file(docword_path, "docword_path")
    vocab_path = _check_file(vocab_path, "vocab_path")
    raw = _read_bytes(docword_path)
    head = raw.split(b"\n", 3)
    if len(head) < 3:
        raise ValueError(f"{docword_path}: expected 3 header lines (D, W, NNZ)")
    try:
        n_docs, n_words, nnz = (int(h) for h in head[:3])
    except ValueError:
        raise ValueError(f"{docword_path}: the first 3 lines must be the integers D, W, NNZ, "
                         f"got {[h[:30] for h in head[:3]]}") from None
    body = head[3] if len(head) == 4 else b""
    if body.strip():
        try:
            data = np.loadtxt(io.BytesIO(body), dtype=np.int64, ndmin=2)
        except ValueError as exc:
            raise ValueError(f"{docword_path}: malformed entry line ({exc})") from None
    else:
        data = np.empty((0, 3), dtype=np.int64)
    if data.shape[1] != 3:
        raise ValueError(f"{docword_path}: entry lines must be 'docID wordID count', got "
                         f"{data.shape[1]} columns")
    if data.shape[0] != nnz:
        raise ValueError(f"{docword_path}: header says NNZ={nnz} but the file has "
                         f"{data.shape[0]} entry lines")
    doc, word, count = data[:, 0], data[:, 1], data[:, 2]
    if nnz and (doc.min() < 1 or doc.max() > n_docs):
        raise ValueError(f"{docword_path}: docID outside 1..D={n_docs} "
                         f"(range {doc.min()}..{doc.max()})")
    if nnz and (word.min() < 1 or word.max() > n_words):
        raise ValueError(f"{docword_path}: wordID outside 1..W={n_words} "
                         f"(range {word.min()}..{word.max()})")
    if nnz and count.min() < 1:
        raise ValueError(f"{docword_path}: counts must be positive integers, found {count.min()}")
    X = sp.csr_matrix((count, (doc - 1, word - 1)), shape=(n_docs, n_words))
    if X.nnz != nnz:  # coo->csr summed duplicate (doc, word) pairs
        raise ValueError(f"{docword_path}: {nnz - X.nnz} repeated (docID, wordID) pairs")
    X.sort_indices()
    X = sp.csr_matrix((X.data.astype(np.int64), X.indices.astype(np.int64),
                       X.indptr.astype(np.int64)), shape=X.shape)
    words = _lines(_read_text(vocab_path))
    while words and not words[-1].strip():
        words.pop()
    vocabulary = np.array([w.strip() for w in words], dtype=str)
    if vocabulary.size != n_words:
        raise ValueError(f"{vocab_path}: header of {docword_path.name} says W={n_words} but "
                         f"the vocabulary has {vocabulary.size} words")
    return X, vocabulary


def load_json_texts(path, key="text", *, encoding="utf-8"):
    """Load documents from a JSON file: ``{key: [str, ...]}``, a list of strings, or a list
    of records (objects) whose ``key`` field is the text.

    This is the format of the cleaned TweetRumors corpus (``tweetrumors_clean.json``).
    ``.json.gz`` is decompressed.

    Returns
    -------
    list of str

    Raises
    ------
    FileNotFoundError
        No such file.
    ValueError
        Invalid JSON (the message names the file, line and column), invalid UTF-8, corrupt
        gzip, or a record without a string ``key``.
    """
    _check_encoding(encoding)
    path = _check_file(path, "path")
    text = _read_text(path, encoding)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: line {exc.lineno} column {exc.colno}: invalid JSON "
                         f"({exc.msg})") from None
    if isinstance(obj, dict):
        if key not in obj:
            raise ValueError(f"{path}: JSON object has no key {key!r} (keys: {sorted(obj)[:10]})")
        obj = obj[key]
    if not isinstance(obj, list):
        raise ValueError(f"{path}: expected a list of documents, got {type(obj).__name__}")
    bad = [i for i, t in enumerate(obj) if not isinstance(t, (str, dict))]
    if bad:
        raise ValueError(f"{path}: {len(bad)} entries are not strings (first at index {bad[0]})")
    return [_text_of_record(path, f"record {i}", t, key) for i, t in enumerate(obj)]


def load_jsonl_texts(path, key="text", *, encoding="utf-8"):
    """Load documents from JSON Lines (``.jsonl``/``.ndjson``, optionally ``.gz``): one JSON
    value per line, a string or an object whose ``key`` field is the text; blank lines are
    skipped. Errors name the file and the line."""
    _check_encoding(encoding)
    path = _check_file(path, "path")
    return [_text_of_record(path, f"line {n}", rec, key)
            for n, rec in _jsonl_records(path, encoding)]


def _jsonl_records(path, encoding="utf-8"):
    """(line number, decoded value) of every non-blank line of the (checked) JSON Lines file
    ``path``, lazily; invalid JSON is a ValueError naming the file, the line and the column.
    The one JSONL reader of the text loaders and the CLI's grouped loader."""
    for n, line in enumerate(_lines(_read_text(path, encoding)), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: line {n} column {exc.colno}: invalid JSON ({exc.msg})") from None
        yield n, rec


@contextlib.contextmanager
def _csv_rows(text, delimiter):
    """A strict ``csv.reader`` over ``text`` (already in memory) whose fields may be of any
    length: the csv module's default limit (131,072 characters) refused a whole file for
    one long document, an error only the data set holding that document raised. The
    process-wide limit is restored on exit."""
    old = csv.field_size_limit()
    csv.field_size_limit(2 ** 31 - 1)           # the largest a C long holds everywhere
    try:
        yield csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    finally:
        csv.field_size_limit(old)


def load_csv_texts(path, key="text", delimiter=None, *, encoding="utf-8"):
    """Load documents from a CSV (or ``.tsv``) file with a header row: the ``key`` column is
    the text of each row. ``delimiter`` defaults to tab for ``.tsv`` and comma otherwise.
    Errors name the file and the line."""
    _check_encoding(encoding)
    path = _check_file(path, "path")
    if delimiter is None:
        delimiter = "\t" if _base_suffix(path) == ".tsv" else ","
    with _csv_rows(_read_text(path, encoding), delimiter) as reader:
        try:
            header = next(reader, None)
            if header is None:
                raise ValueError(f"{path}: empty CSV file (a header row naming the {key!r} "
                                 "column is required)")
            if key not in header:
                columns = ", ".join(map(repr, header[:10]))
                raise ValueError(f"{path}: line 1: the CSV header has no column {key!r} "
                                 f"(columns: {columns}); choose the text column with key=")
            col = header.index(key)
            docs = []
            for row in reader:
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                if len(row) != len(header):
                    raise ValueError(f"{path}: line {reader.line_num}: {len(row)} fields, the "
                                     f"header has {len(header)}")
                docs.append(row[col])
        except csv.Error as exc:
            raise ValueError(f"{path}: line {reader.line_num}: malformed CSV ({exc})") from None
    return docs


def load_text_lines(path, *, encoding="utf-8"):
    """Load one document per line (``encoding``, default UTF-8; ``.gz`` is decompressed);
    blank lines are skipped.

    Returns
    -------
    list of str
        The lines without their line ends (and without surrounding whitespace).
    """
    _check_encoding(encoding)
    path = _check_file(path, "path")
    text = _read_text(path, encoding)
    return [line.strip() for line in _lines(text) if line.strip()]


def folder_files(root):
    """The files :func:`load_text_folder` reads as documents (links followed), in its order:
    every regular file under the folder ``root`` whose relative path has no part starting
    with ``.``."""
    root = Path(os.fspath(root))
    return sorted((p for p in root.rglob("*")
                   if p.is_file() and not any(part.startswith(".")
                                              for part in p.relative_to(root).parts)),
                  key=lambda p: p.relative_to(root).as_posix())


def load_text_folder(path, *, encoding="utf-8"):
    """Load a folder of documents: one document per file, sub-folders included.

    Every regular file whose name does not start with ``.`` is a document (UTF-8; ``.gz``
    is decompressed), in the order of the files' relative paths. An empty file is an
    empty document (kept, so the number of documents is the number of files).

    Returns
    -------
    list of str
        The file contents, surrounding whitespace removed.
    """
    _check_encoding(encoding)
    root = Path(os.fspath(path))
    if not root.is_dir():
        raise FileNotFoundError(f"path: no such folder: {root}")
    files = folder_files(root)
    if not files:
        raise ValueError(f"{root}: the folder has no files (one document per file expected)")
    return [_read_text(p, encoding).strip() for p in files]


# Formats whose unit is fixed by the file: records, rows, files. A plain text file is read
# one document per line only when asked (the line then becomes the unit protected).
RECORD_SUFFIXES = (".json", ".jsonl", ".ndjson", ".csv", ".tsv")


def load_texts(path, key="text", *, one_per_line=True, encoding="utf-8"):
    """Load raw documents, the format chosen by the path (a final ``.gz`` is ignored):
    a folder (:func:`load_text_folder`, one document per file), ``.json``
    (:func:`load_json_texts`), ``.jsonl``/``.ndjson`` (:func:`load_jsonl_texts`),
    ``.csv``/``.tsv`` (:func:`load_csv_texts`), anything else one document per line
    (:func:`load_text_lines`). ``key`` names the text field of records / the CSV column.

    ``one_per_line=False`` refuses the last case with a ValueError: reading a plain text
    file line by line makes each line a document, which silently changes the unit a
    document-level guarantee protects (e.g. ``cat texts/* > all.txt``).

    ``encoding`` (default ``"utf-8"``, a leading BOM dropped) is the codec of every file
    read; an unknown codec is a ValueError naming ``encoding``, bytes it cannot decode a
    ValueError naming the file, the line and the byte offset."""
    _check_encoding(encoding)
    if Path(os.fspath(path)).is_dir():
        return load_text_folder(path, encoding=encoding)
    suffix = _base_suffix(path)
    if suffix == ".json":
        return load_json_texts(path, key=key, encoding=encoding)
    if suffix in (".jsonl", ".ndjson"):
        return load_jsonl_texts(path, key=key, encoding=encoding)
    if suffix in (".csv", ".tsv"):
        return load_csv_texts(path, key=key, encoding=encoding)
    if not one_per_line:
        _check_file(path, "path")
        raise ValueError(
            f"{path}: a plain text file is read as one document per line only with "
            "one_per_line=True: each line then becomes the unit the guarantee protects. For "
            "one document per file pass the folder; for records use .jsonl or .csv (key=)")
    return load_text_lines(path, encoding=encoding)


def load_reuters_c50(path, subset="train"):
    """Load the Reuter_50_50 (C50) author-labelled news corpus straight from its tar.gz.

    Parameters
    ----------
    path : path-like
        ``C50.tar.gz`` with members ``C50train/<Author>/<id>newsML.txt`` and
        ``C50test/<Author>/<id>newsML.txt``. Nothing is extracted to disk.
    subset : {"train", "test", "all"}, default="train"
        ``"all"`` is the training documents followed by the test documents.

    Returns
    -------
    texts : list of str
        The articles (CRLF line ends turned into ``\\n``), ordered by subset, author, then
        file name — deterministic whatever the order of the archive.
    authors : numpy.ndarray of str
        The author (directory name) of each article: the group ids for user-level privacy.
    """
    if subset not in ("train", "test", "all"):
        raise ValueError(f"subset must be 'train', 'test' or 'all', got {subset!r}")
    path = _check_file(path, "path")
    wanted = ("C50train", "C50test") if subset == "all" else (f"C50{subset}",)
    entries = []
    try:
        with tarfile.open(path, "r:gz") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                parts = member.name.strip("/").split("/")
                if len(parts) < 3 or parts[-3] not in wanted:
                    continue
                raw = tar.extractfile(member).read()
                text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n")
                entries.append((wanted.index(parts[-3]), parts[-2], parts[-1], text))
    except (tarfile.TarError, gzip.BadGzipFile, EOFError, zlib.error, OSError) as exc:
        raise ValueError(f"{path}: not a readable tar.gz archive (corrupt or truncated: "
                         f"{exc or type(exc).__name__})") from None
    if not entries:
        raise ValueError(f"{path}: no C50 articles for subset={subset!r} (expected members "
                         "C50train/<author>/<file> and C50test/<author>/<file>)")
    entries.sort(key=lambda e: e[:3])
    return [e[3] for e in entries], np.array([e[1] for e in entries], dtype=str)


def _check_prior(value, size, name):
    """A positive Dirichlet parameter vector of length ``size`` from a scalar or array."""
    if np.ndim(value) == 0:
        return np.full(size, check_positive(value, name))
    arr = np.asarray(value, dtype=float)
    if arr.shape != (size,):
        raise ValueError(f"{name} must be a positive scalar or an array of shape ({size},), "
                         f"got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} must hold finite values > 0")
    return arr


def _doc_lengths(doc_length, n_docs, rng):
    if np.ndim(doc_length) == 0:
        return np.full(n_docs, check_int(doc_length, "doc_length", minimum=1), dtype=np.int64)
    if len(doc_length) != 2:
        raise ValueError(f"doc_length must be an int or a (low, high) pair, got {doc_length!r}")
    low = check_int(doc_length[0], "doc_length[0]", minimum=1)
    high = check_int(doc_length[1], "doc_length[1]", minimum=low)
    return rng.integers(low, high, endpoint=True, size=n_docs).astype(np.int64)


def _sample_counts(rng, doc_topic, topic_word, lengths):
    """Doc-term counts: row d ~ Multinomial(lengths[d], doc_topic[d] @ topic_word).

    Summing the topic assignments out of the per-token process (z ~ theta_d, w ~ phi_z)
    gives exactly this multinomial, so it is the LDA generative process, vectorised.
    """
    n_docs, n_words = doc_topic.shape[0], topic_word.shape[1]
    chunk = max(1, (1 << 22) // n_words)
    blocks = []
    for start in range(0, n_docs, chunk):
        p = doc_topic[start:start + chunk] @ topic_word
        p /= p.sum(axis=1, keepdims=True)
        counts = rng.multinomial(lengths[start:start + chunk], p)
        blocks.append(sp.csr_matrix(counts.astype(np.int64)))
    X = sp.vstack(blocks, format="csr")
    return sp.csr_matrix((X.data.astype(np.int64), X.indices.astype(np.int64),
                          X.indptr.astype(np.int64)), shape=X.shape)


def make_lda_corpus(n_docs, n_words, n_topics, *, doc_length=100, doc_topic_prior=0.1,
                    topic_word_prior=0.01, random_state=None):
    """Draw a synthetic corpus from the LDA generative process.

    phi_k ~ Dirichlet(topic_word_prior) for each topic, theta_d ~ Dirichlet(doc_topic_prior)
    for each document, and each of the N_d tokens of document d draws z ~ theta_d then
    w ~ phi_z (sampled as X_d ~ Multinomial(N_d, theta_d @ phi), the same distribution).

    Parameters
    ----------
    n_docs, n_words, n_topics : int
        D, V and K (all >= 1).
    doc_length : int or (int, int), default=100
        Tokens per document: a fixed N, or uniform on the integers low..high inclusive.
    doc_topic_prior : float or array of shape (n_topics,), default=0.1
    topic_word_prior : float or array of shape (n_words,), default=0.01
    random_state : None, int, SeedSequence or numpy.random.Generator
        All randomness comes from ``dptm._utils.check_random_state(random_state)``.

    Returns
    -------
    X : scipy.sparse.csr_matrix of int64, shape (n_docs, n_words)
    topic_word : numpy.ndarray, shape (n_topics, n_words)
        The true phi; rows sum to 1.
    doc_topic : numpy.ndarray, shape (n_docs, n_topics)
        The true theta; rows sum to 1.
    """
    n_docs = check_int(n_docs, "n_docs")
    n_words = check_int(n_words, "n_words")
    n_topics = check_int(n_topics, "n_topics")
    alpha = _check_prior(doc_topic_prior, n_topics, "doc_topic_prior")
    beta = _check_prior(topic_word_prior, n_words, "topic_word_prior")
    rng = check_random_state(random_state)
    topic_word = _dirichlet(rng, beta, n_topics)
    doc_topic = _dirichlet(rng, alpha, n_docs)
    lengths = _doc_lengths(doc_length, n_docs, rng)
    X = _sample_counts(rng, doc_topic, topic_word, lengths)
    return X, topic_word, doc_topic


def _dirichlet(rng, alpha, size):
    """Dirichlet rows that sum to 1 exactly in float64, even for tiny concentrations.

    Very small concentrations can make every gamma draw underflow to 0; such a row falls
    back to a point mass on one coordinate drawn with probabilities proportional to alpha
    (the limit of the Dirichlet as the concentration goes to 0).
    """
    draws = rng.dirichlet(alpha, size=size)
    sums = draws.sum(axis=1)
    bad = ~np.isfinite(sums) | (sums <= 0)
    if np.any(bad):  # pragma: no cover - only for extremely small priors
        idx = rng.choice(alpha.size, size=int(bad.sum()), p=alpha / alpha.sum())
        draws[bad] = 0.0
        draws[np.flatnonzero(bad), idx] = 1.0
        sums = draws.sum(axis=1)
    return draws / sums[:, None]


@lru_cache(maxsize=1)
def _demo_corpus_arrays():
    spec = json.loads(_DEMO_TOPICS.read_text(encoding="utf-8"))
    names = list(spec["topics"])
    vocabulary = np.array(sorted({w for ws in spec["topics"].values() for w in ws}), dtype=str)
    col = {w: j for j, w in enumerate(vocabulary.tolist())}
    n_topics, n_words = len(names), vocabulary.size
    # Each theme: Zipf-like weights over its own words (listed most probable first) plus a
    # small uniform background over the whole vocabulary, so every probability is > 0.
    topic_word = np.zeros((n_topics, n_words))
    for k, name in enumerate(names):
        words = spec["topics"][name]
        weights = 1.0 / np.arange(1, len(words) + 1) ** spec["zipf_exponent"]
        topic_word[k, [col[w] for w in words]] = weights / weights.sum()
    background = spec["background_mass"]
    topic_word = (1 - background) * topic_word + background / n_words
    topic_word /= topic_word.sum(axis=1, keepdims=True)

    rng = check_random_state(spec["seed"])
    doc_topic = _dirichlet(rng, np.full(n_topics, spec["doc_topic_prior"]), spec["n_docs"])
    lengths = _doc_lengths(tuple(spec["doc_length"]), spec["n_docs"], rng)
    X = _sample_counts(rng, doc_topic, topic_word, lengths)
    texts = []
    for d in range(X.shape[0]):
        lo, hi = X.indptr[d], X.indptr[d + 1]
        tokens = np.repeat(vocabulary[X.indices[lo:hi]], X.data[lo:hi])
        texts.append(" ".join(rng.permutation(tokens).tolist()))
    for a in (X.data, X.indices, X.indptr, vocabulary, topic_word, doc_topic):
        a.flags.writeable = False
    return X, vocabulary, tuple(texts), topic_word, tuple(names), doc_topic


def load_demo_corpus():
    """The embedded demo corpus: 800 short documents over 8 known themes.

    Built on the fly (a few milliseconds) from the hand-written word lists in
    ``dptm/data/demo_topics.json`` — themes medicine, sport, finance, cooking, computing,
    weather, music and travel, 30 words each, six words shared by two themes — by the LDA
    generative process with a fixed seed: phi_k puts Zipf-like weights (exponent 0.6) on
    its theme's words plus 2% uniform background mass, theta_d ~ Dirichlet(0.1), and each
    document has 20 to 60 tokens. It needs no download, so it is the default corpus of
    the ``dptm`` command. The same numpy version gives the same corpus on every machine.

    Returns
    -------
    sklearn.utils.Bunch
        With the fields:

        - X : scipy.sparse.csr_matrix of int64, shape (800, 232)
        - vocabulary : numpy.ndarray of str, shape (232,), sorted
        - texts : list of str, the documents (tokens in random order, separated by spaces);
          ``dptm.text.preprocess(texts)`` gives back exactly the tokens counted in X
        - topic_word : numpy.ndarray, shape (8, 232), the true topics (rows sum to 1)
        - topic_names : list of str, the theme of each true topic
        - doc_topic : numpy.ndarray, shape (800, 8), the true document-topic proportions
        - DESCR : str
    """
    X, vocabulary, texts, topic_word, names, doc_topic = _demo_corpus_arrays()
    return Bunch(X=X.copy(), vocabulary=vocabulary.copy(), texts=list(texts),
                 topic_word=topic_word.copy(), topic_names=list(names),
                 doc_topic=doc_topic.copy(),
                 DESCR=(f"dptm demo corpus: {X.shape[0]} documents, {X.shape[1]} words, "
                        f"{len(names)} planted topics ({', '.join(names)}), "
                        f"{int(X.sum())} tokens; drawn from LDA with a fixed seed."))
