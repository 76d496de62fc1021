"""The data side of the ``dptm`` command: reading a corpus from its options, keeping a
private model's training set every document it is given, the public evaluation data, the
split of a total epsilon between a DP vocabulary and the model, and the ``--save`` path
checked before any of it."""
import math
import os

import numpy as np

__all__ = ["load_corpus", "budget_split", "load_grouped_texts", "check_save_target"]

# The non-private model is reproducible by default (it protects nothing a seed could expose).
DEFAULT_NONPRIVATE_SEED = 2
LOCAL = ("lp-lda", "olp-lda")
# Word-level proofs: a DP vocabulary in front turns a word replacement into a deletion, which
# their accounting does not cover; on raw text they need a public vocabulary.
WORD_LEVEL = ("hdp-lda", "cdp-lda+", "zhu-lda", "sub-lda")
RECOMMENDED = "batch-vb"
NON_PRIVATE = ("gibbs",)
# Models with a user-level guarantee from the command line (--group-key): PrivateBatchLDA,
# on a public vocabulary or behind a user-level DP vocabulary.
USER_LEVEL = ("batch-vb",)
_GROUPED_FORMATS = (".jsonl", ".ndjson", ".csv", ".tsv")


def _is_private(name):
    return name not in NON_PRIVATE


def _numbered_lines(path, flag, encoding):
    """The non-blank lines of a word-list file with their 1-based line numbers."""
    from .datasets import _check_encoding, _check_file, _lines, _read_text
    text = _read_text(_check_file(path, flag), _check_encoding(encoding))
    return [(i, line.strip()) for i, line in enumerate(_lines(text), 1) if line.strip()]


def _check_unique(path, what, numbered):
    seen = {}
    for i, word in numbered:
        if word in seen:
            raise ValueError(f"{path}: line {i}: {what} repeats the word {word!r} (first on "
                             f"line {seen[word]}); give each word once")
        seen[word] = i


def _words(path, what, numbered):
    """The words of numbered lines, refused when there are none or one repeats."""
    if not numbered:
        raise ValueError(f"{path}: {what} has no words")
    _check_unique(path, what, numbered)
    return [w for _, w in numbered]


def _read_word_list(path, flag="--vocabulary", what="the public vocabulary file",
                    encoding="utf-8"):
    return _words(path, what, _numbered_lines(path, flag, encoding))


def _read_vocabulary(path, encoding="utf-8"):
    """The words of ``--vocabulary FILE`` and, when every line is ``word count``, their
    PUBLIC counts (batch-vb reads its rare words from them); else (words, None)."""
    what = "the public vocabulary file"
    numbered = _numbered_lines(path, "--vocabulary", encoding)
    fields = [(i, line.split()) for i, line in numbered]
    if not fields or len(fields[0][1]) == 1:    # the first line sets the format: a word list
        for i, f in fields:
            if len(f) != 1:
                raise ValueError(f"{path}: line {i}: {' '.join(f)!r} is not one word (the "
                                 "first line is); --vocabulary takes one word per line, or "
                                 "every line a word and its count in public text")
        return _words(path, what, numbered), None
    words, counts = [], []
    for i, f in fields:
        try:
            word, count = f
            count = float(count)
            # whole numbers: frequencies (summing to 1) would be trusted as one token's worth
            if not (math.isfinite(count) and count >= 0 and count.is_integer()):
                raise ValueError
        except ValueError:
            raise ValueError(f"{path}: line {i}: {' '.join(f)!r} is not 'word count' (a word "
                             "and a whole count >= 0: raw token counts, not frequencies); "
                             "--vocabulary takes one word per line, or every line a word and "
                             "its count in public text") from None
        words.append((i, word))
        counts.append(count)
    return _words(path, what, words), np.asarray(counts)


def given_vocabulary(path, stop_words, encoding="utf-8"):
    """The words of ``--vocabulary FILE`` the text can hold (its stop words left out, each
    one a word the preprocessing yields), their PUBLIC counts aligned with them (None for a
    word list) and the provenance the report states (the file's name, not its path: the
    report is published and a path tells about the machine and its users)."""
    from . import text
    # a stop word of the list never occurs in the tokens: a column of noise only
    given, counts = _read_vocabulary(path, encoding=encoding)
    keep = [w.lower() not in stop_words for w in given]
    words = [w for w, k in zip(given, keep) if k]
    if not words:
        raise ValueError(f"{path}: every word of --vocabulary is a stop word")
    # a word the preprocessing never yields is a column of noise (with a count: mass
    # spread onto it); capitals are the usual case, the text being lower-cased
    for w, t in zip(words, text.preprocess(words, stop_words=stop_words)):
        if t != [w]:
            raise ValueError(
                f"{path}: the word {w!r} never occurs in the text as it is "
                "read (lower-case letters, 3 to 15 of them"
                + (f"; it reads as {' '.join(t)!r}" if t else "") + ")")
    if counts is not None:
        # refused, not dropped: the run would go on as if no count had been given
        if not counts[keep].sum() > 0:
            raise ValueError(f"{path}: every count of --vocabulary is 0"
                             + (" once its stop words are left out"
                                if counts.sum() > 0 else "")
                             + "; give the words' counts in public text, or one word "
                             "per line")
        counts = counts[keep]
    left = len(given) - len(words)
    provenance = f"public (given: {os.path.basename(path)}" + (
        f"; its {left} stop word{'' if left == 1 else 's'} left out)" if left else ")")
    return words, counts, provenance


def _encoding_type(text):
    """argparse type of --encoding: a text codec Python knows (argparse turns the error into
    "argument --encoding: ..." and exit status 2)."""
    import argparse
    from .datasets import _check_encoding
    try:
        return _check_encoding(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("encoding: ")) from None


def _stop_words(a):
    """English stop words, plus the words of ``--stop-words FILE`` (public, one per line)."""
    from . import text
    path = getattr(a, "stop_words", None)
    words = text.get_stop_words("english")
    if path is None:
        return words
    return words | {w.lower() for w in _read_word_list(path, "--stop-words", "the stop-word file",
                                                   getattr(a, "encoding", "utf-8"))}


def _ids(groups):
    """The ids as Python strings in an object array (a numpy str array strips a trailing
    NUL: "a" and "a\\0" would be one user)."""
    from .models.user_contributions import user_id_array
    return user_id_array(groups)


def _group_id(path, where, value, group_key):
    """A user id from a record's field: a non-empty string, or a JSON number / boolean by its
    JSON text (1 and "1" are the same user)."""
    import json

    from .datasets import _json_kind
    if value is None or value == "":
        raise ValueError(f"{path}: {where}: the user id field {group_key!r} (--group-key) is "
                         "empty: every document needs its author's id")
    if isinstance(value, (dict, list)):
        raise ValueError(f"{path}: {where}: the user id field {group_key!r} (--group-key) is "
                         f"{_json_kind(value)}, not a string or number")
    return value if isinstance(value, str) else json.dumps(value)


def load_grouped_texts(path, key="text", group_key="user", encoding="utf-8"):
    """Documents and their authors from JSON Lines (``.jsonl``/``.ndjson``) or CSV
    (``.csv``/``.tsv``), optionally ``.gz``: ``key`` is the text field / column and
    ``group_key`` the field / column holding the user id. Blank lines are skipped as the
    text loaders skip them; a record without the user id is a ValueError naming the file and
    the line.

    Returns
    -------
    docs : list of str
    groups : numpy.ndarray of str, one user id per document
    """
    import csv
    from .datasets import (_base_suffix, _check_file, _jsonl_records, _read_text,
                           _csv_rows, _text_of_record)
    suffix = _base_suffix(path)
    if suffix not in _GROUPED_FORMATS:
        raise ValueError(f"--group-key reads the user id from a field of JSONL records or a CSV "
                         f"column; --data {path} is not a .jsonl/.ndjson/.csv/.tsv file")
    path = _check_file(path, "path")
    docs, groups = [], []
    if suffix in (".jsonl", ".ndjson"):
        for n, rec in _jsonl_records(path, encoding):
            if not isinstance(rec, dict):
                raise ValueError(f"{path}: line {n}: expected an object with the fields {key!r} "
                                 f"and {group_key!r} (--group-key), got {type(rec).__name__}")
            docs.append(_text_of_record(path, f"line {n}", rec, key))
            if group_key not in rec:
                raise ValueError(f"{path}: line {n}: record has no user id field {group_key!r} "
                                 f"(--group-key; keys: {sorted(rec)[:10]})")
            groups.append(_group_id(path, f"line {n}", rec[group_key], group_key))
        return docs, _ids(groups)
    delimiter = "\t" if suffix == ".tsv" else ","
    with _csv_rows(_read_text(path, encoding), delimiter) as reader:
        try:
            header = next(reader, None)
            if header is None:
                raise ValueError(f"{path}: empty CSV file (a header row naming the {key!r} and "
                                 f"{group_key!r} columns is required)")
            for name, flag in ((key, "--text-key"), (group_key, "--group-key")):
                if name not in header:
                    columns = ", ".join(map(repr, header[:10]))
                    raise ValueError(f"{path}: line 1: the CSV header has no column {name!r} "
                                     f"(columns: {columns}); choose it with {flag}")
            col, gcol = header.index(key), header.index(group_key)
            for row in reader:
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                where = f"line {reader.line_num}"
                if len(row) != len(header):
                    raise ValueError(f"{path}: {where}: {len(row)} fields, the header has "
                                     f"{len(header)}")
                docs.append(row[col])
                groups.append(_group_id(path, where, row[gcol].strip(), group_key))
        except csv.Error as exc:
            raise ValueError(f"{path}: line {reader.line_num}: malformed CSV ({exc})") from None
    return docs, _ids(groups)


def _check_group_key(a):
    """--group-key asks for user-level privacy: a model with a user-level guarantee, on
    private records that hold the user id."""
    if getattr(a, "group_key", None) is None:
        return
    if not _is_private(a.model):
        raise ValueError("--group-key asks for user-level privacy; the non-private --model "
                         f"{a.model} protects no one (drop --group-key, or use --model "
                         f"{RECOMMENDED})")
    if a.model not in USER_LEVEL:
        raise ValueError(
            f"--group-key asks for user-level privacy (every document of one user protected "
            f"together), but --model {a.model} has no user-level guarantee; use --model "
            f"{RECOMMENDED} (user-level with --group-key, on raw text behind a user-level DP "
            "vocabulary)")
    if a.data == "demo" or getattr(a, "vocab", None) is not None:
        raise ValueError("--group-key reads the user id from a field of JSONL records or a CSV "
                         "column: pass --data FILE.jsonl or FILE.csv")


def _public_split(X, a):
    """(train rows, held-out rows) of PUBLIC or non-private data: a fixed-seed split."""
    from ._utils import check_random_state
    fraction = 0.1 if a.test_fraction is None else a.test_fraction
    order = check_random_state(a.seed if a.seed is not None
                               else DEFAULT_NONPRIVATE_SEED).permutation(X.shape[0])
    n_test = int(round(fraction * X.shape[0]))
    return order[n_test:], order[:n_test]


def _within(path, data):
    """``path`` is the ``--data`` path or lies in it: by name once symlinks are resolved,
    or as the same file (a hard link) or under the same folder (a bind mount). ``path``
    need not exist yet (a ``--save`` target)."""
    if data == "demo" or not os.path.exists(data):
        return False
    ref, dat = os.path.realpath(path), os.path.realpath(data)
    if os.path.commonpath([ref, dat]) == dat:
        return True
    # identity, not name: the path itself if it exists, else its nearest existing ancestor
    while not os.path.exists(ref) and os.path.dirname(ref) != ref:
        ref = os.path.dirname(ref)
    while True:
        if os.path.samefile(ref, dat):
            return True
        if os.path.dirname(ref) == ref:
            return False
        ref = os.path.dirname(ref)


def _overlaps(path, data):
    """``path`` is (also as a hard link), holds or lies in the ``--data`` path, or is a
    folder one of whose documents is a link to the ``--data`` file or into its folder (the
    folder reader follows links: the private text would be read under a public name). A
    copy of the file under another name, or a hard link to a file of a ``--data`` folder,
    is the user's declaration to keep (finding one would list the private folder)."""
    if _within(path, data) or (data != "demo" and _within(data, path)):
        return True
    if data == "demo" or not os.path.isdir(path):
        return False
    from .datasets import folder_files
    dat = os.path.realpath(data)
    return any(os.path.commonpath([os.path.realpath(f), dat]) == dat or os.path.samefile(f, data)
               for f in folder_files(path))


def _check_reference_apart(reference, data):
    """Refuse a ``--reference-data`` path that overlaps ``--data``: a metric on it would
    measure the private training text, not public text."""
    if _overlaps(reference, data):
        raise ValueError(f"--reference-data {reference} overlaps --data {data}: the reference "
                         "corpus must be PUBLIC text apart from the training data (a metric on "
                         "the training documents is neither held out nor covered by the "
                         "guarantee)")


def _plain_lines(path):
    """``path`` is a plain text file, which the loaders read one document per line."""
    from .datasets import RECORD_SUFFIXES, _base_suffix
    return not os.path.isdir(path) and _base_suffix(path) not in RECORD_SUFFIXES


def _check_reference_unit(a):
    """TopicDP's sensitivity is the change from removing one reference document: a plain
    text ``--reference-data`` (one document per line) measures a line, so it is accepted
    only when the private documents are lines too (``--data`` plain text, --one-per-line)."""
    if _plain_lines(a.reference_data) and not (_plain_lines(a.data) and a.one_per_line):
        raise ValueError(
            f"--reference-data {a.reference_data} is plain text, read one document per line: "
            "topicdp would measure its sensitivity by removing one LINE while --data "
            f"{a.data} protects a whole document; give the reference as --data is (a folder, "
            ".jsonl or .csv), or use --one-per-line with a plain-text --data")


def _check_word_lists(a):
    """``--vocabulary`` and ``--stop-words`` (existing files) are public word lists: not read
    from the private ``--data``, and ``--stop-words`` only where raw text is tokenized."""
    for flag, path in (("--vocabulary", getattr(a, "public_vocab", None)),
                       ("--stop-words", getattr(a, "stop_words", None))):
        if path is not None and _overlaps(path, a.data):
            raise ValueError(f"{flag} {path} overlaps --data {a.data}: a word list read from "
                             "the private text would be published as public")
    if getattr(a, "stop_words", None) is not None and (a.data == "demo" or a.vocab is not None):
        raise ValueError("--stop-words applies to raw text; --data "
                         f"{'demo' if a.data == 'demo' else a.data} is already counted")


def load_corpus(a, audit=False):
    """The data of a run, from the command-line data options, as a Bunch with
    ``X_train`` (None when a DP vocabulary is to be selected), ``documents`` (the token
    lists the DP vocabulary stage reads, else None), ``X_eval`` / ``eval_tokens`` (PUBLIC
    held-out data, or None), ``eval_where``, ``X_prior`` (olp-lda's public prior set),
    ``vocab``, ``name``, ``provenance`` and ``public`` (the training data is public: the
    demo corpus).

    A private model trains on every document of private data, in the order given: the
    training sets of D and D plus one document are add/remove neighbours. Nothing is held
    out of private data (a metric of held-out private documents would be a release no
    guarantee covers); evaluation uses public data only: the embedded demo corpus' fixed
    held-out split, or ``--reference-data``. The vocabulary of a private model must not
    come from the private text: the demo corpus and a UCI vocab file are public
    vocabularies; on raw text a private model uses ``--vocabulary FILE`` (declared public),
    the words of ``--public-text`` (read before the private text, ``a.public_words``) or a
    DP vocabulary. An audit (``audit=True``) simulates an experiment on data the
    auditor holds: every document, the vocabulary built from the text. A non-private model
    holds out ``--test-fraction`` (fixed seed)."""
    from sklearn.utils import Bunch
    from . import datasets, text
    private = _is_private(a.model) and not audit
    out = Bunch(X_train=None, documents=None, X_eval=None, eval_tokens=None, eval_where=None,
                X_prior=None, vocab=None, name=None, provenance=None, public=a.data == "demo",
                groups=None)
    a.documents = a.reference_X = a.reference_tokens = a.groups = None
    for flag, path in (("--data", None if a.data == "demo" else a.data),
                       ("--reference-data", getattr(a, "reference_data", None)),
                       ("--vocabulary", getattr(a, "public_vocab", None)),
                       ("--stop-words", getattr(a, "stop_words", None))):
        if path is not None and not os.path.exists(path):
            raise ValueError(f"{flag}: no such file or folder: {path}")
    if a.text_key != "text" and a.data != "demo" and getattr(a, "vocab", None) is None:
        from .datasets import _base_suffix
        if os.path.isdir(a.data):
            raise ValueError(f"--text-key names a field of JSONL or CSV records; --data "
                             f"{a.data} is a folder (one document per file): leave --text-key "
                             "out")
        if _base_suffix(a.data) not in (".json", ".jsonl", ".ndjson", ".csv", ".tsv"):
            raise ValueError(f"--text-key names a field of JSON, JSONL or CSV records; --data "
                             f"{a.data} is plain text: leave --text-key out")
    _check_word_lists(a)
    stop_words = _stop_words(a)
    encoding = getattr(a, "encoding", "utf-8")       # of every text file the run reads
    group_key = None if audit else getattr(a, "group_key", None)
    if group_key is not None:
        _check_group_key(a)
    public_vocab = getattr(a, "public_vocab", None)
    tokens = None
    if a.data == "demo":
        demo = datasets.load_demo_corpus()
        X, vocab, name = demo.X, demo.vocabulary, "embedded demo corpus (public)"
        out.provenance = "public (the embedded demo corpus' fixed vocabulary)"
    elif a.vocab is not None:
        X, vocab = datasets.load_uci_bow(a.data, a.vocab)
        name = a.data
        # the file's name, not its path: the report is published and a path tells about the
        # machine and its users
        out.provenance = f"public (given: {os.path.basename(a.vocab)})"
    else:
        if group_key is not None:
            docs, out.groups = load_grouped_texts(a.data, key=a.text_key, group_key=group_key,
                                                  encoding=encoding)
        else:
            docs = datasets.load_texts(a.data, key=a.text_key, one_per_line=a.one_per_line,
                                       encoding=encoding)
        if not docs:
            raise ValueError(f"{a.data}: no documents")
        if private and a.min_df != 1:
            raise ValueError("--min-df chooses words by their counts in the private text, which "
                             "no guarantee covers; a private model uses a DP vocabulary or a "
                             "public --vocabulary FILE")
        tokens = text.preprocess(docs, stop_words=stop_words)
        name = a.data
        if getattr(a, "public_words", None) is not None:
            # --public-text: the words, their counts and the provenance were read from the
            # public text before the private text (dptm/_cli_public.py)
            X, vocab = text.tokens_to_matrix(tokens, vocabulary=a.public_words)
            out.provenance = a.public_provenance
            tokens = None
        elif public_vocab is not None:
            words, counts, out.provenance = given_vocabulary(public_vocab, stop_words, encoding)
            if counts is not None:
                a.word_counts = counts              # public: read with the words
            X, vocab = text.tokens_to_matrix(tokens, vocabulary=words)
            tokens = None
        elif not private:
            X, vocab = text.tokens_to_matrix(tokens, min_df=a.min_df)
            tokens = None
        elif a.model in LOCAL:
            raise ValueError(f"--model {a.model} is local DP: the clients need a public "
                             "vocabulary; pass --vocabulary FILE (one public word per line)")
        elif a.model in WORD_LEVEL:
            raise ValueError(
                f"--model {a.model} is word-level DP: its proof does not cover a vocabulary "
                "selected from the same text (a replaced word can become a deleted one); pass "
                f"a public --vocabulary FILE, or use the recommended --model {RECOMMENDED}")
        else:
            X, vocab = None, None                   # the DP vocabulary stage selects the words
    if a.model == "fdptm" and private and tokens is None:
        tokens = text.matrix_to_tokens(X, vocab)    # fdptm selects its own words
        out.provenance = None
    out.name = name

    if private and not out.public:
        # every document, in the order given; evaluation needs public data
        if a.test_fraction:
            raise ValueError("--test-fraction: a private model trains on every document of "
                             "private data (a metric of held-out private documents is not "
                             "covered by the guarantee); evaluate on public text with "
                             "--reference-data FILE")
        out.X_train = X
        out.documents = tokens
    elif audit:
        out.X_train = X
    else:
        train, test = _public_split(X if X is not None else np.zeros((len(tokens), 0)), a)
        if tokens is not None:
            out.documents = [tokens[i] for i in train]
            out.eval_tokens = [tokens[i] for i in test] if len(test) else None
        if X is not None:
            X = X.tocsr()
            out.X_train = X[train]
            out.X_eval = X[test] if len(test) else None
        if out.public:
            out.eval_where = "the demo corpus' held-out split (public)"
        if private and a.model == "olp-lda":
            n_prior = max(1, int(a.prior_fraction * out.X_train.shape[0]))
            out.X_prior, out.X_train = out.X_train[:n_prior], out.X_train[n_prior:]
    if out.X_train is not None:
        out.X_train = out.X_train.tocsr()

    if getattr(a, "reference_data", None) is not None:
        # a PUBLIC corpus: TopicDP samples its sensitivity on it, olp-lda's prior set, and
        # the evaluation of a private model on private data
        _check_reference_apart(a.reference_data, a.data)
        if a.vocab is not None:
            a.reference_X, _ = datasets.load_uci_bow(a.reference_data, a.vocab)
        else:
            if a.model == "topicdp" and private and not out.public:
                _check_reference_unit(a)
            # public text: a plain file is one document per line (no unit to protect)
            ref_tokens = text.preprocess(datasets.load_texts(
                a.reference_data, key=a.text_key, one_per_line=True,
                encoding=encoding),
                stop_words=stop_words)
            if vocab is None or a.model == "fdptm":
                a.reference_tokens = ref_tokens
            else:
                a.reference_X, _ = text.tokens_to_matrix(ref_tokens, vocabulary=list(vocab))
        if private and not out.public:
            out.X_eval, out.eval_tokens = a.reference_X, a.reference_tokens
            out.eval_where = f"{a.reference_data} (declared public)"
    if private and a.model in ("vips", "fdptm") and getattr(a, "total_samples", None) is None:
        if not out.public:
            raise ValueError(
                f"--model {a.model} samples minibatches at rate S / N: give --total-samples N, "
                "a public number of documents (a bound or an estimate made without the private "
                "data); the number of private documents is not public under add/remove "
                f"adjacency (or use the recommended --model {RECOMMENDED})")
        a.total_samples = out.X_train.shape[0]      # the public demo corpus' training split
    if private and not out.public and a.model == "olp-lda":
        if a.reference_X is None:
            raise ValueError("--model olp-lda needs a clean prior set of PUBLIC documents: "
                             "pass --reference-data FILE (the clients' private documents are "
                             "all randomized)")
        out.X_prior = a.reference_X
    out.vocab = None if vocab is None else np.asarray(vocab)
    a.documents = out.documents
    a.groups = out.groups       # every document's user, in the order of the training set
    return out


def check_save_target(a):
    """Refuse ``--save`` before any work: a path inside the ``--data`` folder (its files would
    be documents of the next run), an existing file where a release directory goes, a
    non-empty directory (fit) or an existing file (audit) without ``--overwrite``. Reads
    only the file system at the path given, never the data, so whether a run is refused
    cannot depend on the private data; and no budget is spent on a release that cannot be
    written."""
    path = getattr(a, "save", None)
    if path is None:
        return
    data = getattr(a, "data", "demo")
    if _within(path, data):
        # every file of a --data folder is a document: the next run would train on it
        raise ValueError(f"--save {path} lies inside --data {data}: the next run on --data "
                         "would read the saved files as documents; save outside the data")
    overwrite = getattr(a, "overwrite", False)
    if getattr(a, "command", "fit") == "audit":
        # np.savez_compressed adds ".npz" to a name without it
        target = path if str(path).endswith(".npz") else f"{path}.npz"
        if os.path.isdir(target):
            raise ValueError(f"--save {path}: {target} is a directory; audit --save writes "
                             "one .npz file")
        if os.path.exists(target) and not overwrite:
            raise ValueError(f"--save {path}: {target} exists; pass --overwrite to replace "
                             "it, or give a new file name")
        return
    from ._cli_terms import to_cli
    from .release import _check_save_path
    try:
        _check_save_path(path, overwrite)
    except FileExistsError as exc:
        raise ValueError(f"--save {to_cli(exc)}") from None


def budget_split(a):
    """(vocabulary epsilon, vocabulary delta, model epsilon, model delta) of a raw-text run:
    public constants only. ``--vocab-epsilon`` fixes the vocabulary's share, else it is
    ``--vocab-share`` of the total ``--epsilon``; delta is halved between the stages."""
    eps_v = a.vocab_epsilon if a.vocab_epsilon is not None else a.vocab_share * a.epsilon
    if not eps_v < a.epsilon:
        raise ValueError(f"--vocab-epsilon {eps_v:g} must be below the total --epsilon "
                         f"{a.epsilon:g} (the model needs the rest)")
    return eps_v, a.delta / 2.0, a.epsilon - eps_v, a.delta / 2.0


def _matrix_over(release, X, tokens):
    """Public evaluation documents over the release's vocabulary, empty ones dropped."""
    from .text import tokens_to_matrix
    if tokens is not None:
        X, _ = tokens_to_matrix(tokens, vocabulary=list(release.vocabulary))
    if X is None:
        return None
    X = X.tocsr()
    X = X[np.asarray(X.sum(axis=1)).ravel() > 0]
    return X if X.shape[0] else None
