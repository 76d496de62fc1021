"""Real corpora for the utility benchmarks, declared as a tuning set and an evaluation set.

Held-out discipline: a default of a model may be chosen (tuned, compared, switched) only on
the corpora of ``TUNING``. The corpora of ``EVALUATION`` are for reporting; a figure that
decided a default must not come from them, and a claim names the corpora it was measured on.
The sets were declared before any private model was measured on the evaluation corpora.

Every corpus is real text found on a Debian machine or in the shared data folder, read by a
loader whose docstring states its provenance. ``load`` turns it into one fixed benchmark:

- documents deduplicated (identical normalised text kept once), ordered by a stable id;
- held-out split: a seeded permutation (``numpy.random.default_rng(seed)``) puts 10% of the
  documents (at least 1,000, or a fifth of a small corpus, when that is more) into the test
  part; the split depends on the document count and the seed only;
- vocabulary: the ``vocabulary_size`` most frequent words of the TRAINING part (lowercase,
  letters only, two or more of them, scikit-learn's English stop words removed, in 3 or more
  training documents; ties broken alphabetically), listed alphabetically. The benchmark
  treats this vocabulary as public (a deployment would take it from public text or select it
  privately with ``dptm.DPVocabulary``);
- documents with fewer than 5 tokens in that vocabulary dropped (both parts).

Processed matrices (and the raw documents) are cached in ``~/.cache/dptm-bench``
(``$DPTM_BENCH_CACHE``); run ``python bench/corpora.py --refresh NAME`` (or delete the
files) after the sources change.

    python bench/corpora.py                 # the table of every available corpus
    python bench/corpora.py c50 changelogs  # some of them
"""
import argparse
import glob
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

# a default may be chosen on these (short: debian, foldoc; long: kos, c50, nips, perlpod;
# heavy-tailed: gcide); EXTRA is small and may be used as tuning data too
TUNING = ("debian", "kos", "c50", "nips", "gcide", "foldoc", "perlpod")
# never used to choose a default (short: fortunes, wordnet, changelogs; long: manpages;
# heavy-tailed like a discussion forum: pydoc); authors: fortunes, changelogs
EVALUATION = ("fortunes", "wordnet", "manpages", "pydoc", "changelogs")
EXTRA = ("tweetrumors",)
# the length regime of each corpus, from its training part at V = 5000: long when the
# median document has 100+ tokens, else heavy-tailed when the longest 10% of documents
# hold 38%+ of the tokens, else short (docs/benchmarks/corpora.md has the figures)
REGIME = {"debian": "short", "foldoc": "short", "fortunes": "short", "wordnet": "short",
          "changelogs": "short", "tweetrumors": "short",
          "kos": "long", "c50": "long", "nips": "long", "manpages": "long", "perlpod": "long",
          "gcide": "heavy-tailed", "pydoc": "heavy-tailed"}

# bump when the processing changes, so that stale caches are not read
_VERSION = 2
MIN_TOKENS = 5
MIN_DF = 3
TOKEN = re.compile(r"\b[a-z][a-z]+\b")


@dataclass
class Corpus:
    """One benchmark corpus: document-term counts of the fixed train/test split.

    ``groups_*`` hold an integer author id per document (None when the source has no
    authorship); ``meta`` holds ``source``, ``provenance``, ``n_docs``, token statistics
    of the training part, author statistics, and ``ids_train`` / ``ids_test`` (a stable
    source id per document)."""
    X_train: sp.csr_matrix
    X_test: sp.csr_matrix
    vocabulary: list
    groups_train: np.ndarray | None
    groups_test: np.ndarray | None
    meta: dict = field(default_factory=dict)


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus_sources import (  # noqa: E402,F401  (re-exported: the loaders and their helpers)
    APT_LISTS, LOADERS, MANPAGE_PACKAGES, PYDOC_PACKAGES, SOURCE_VERSION, Unavailable, _B64,
    _Raw, _b64, _changelog_entries, _changelog_progress, _sample_progress, _shared,
    cache_dir, changelog_sample, data_dir, perl_sample, pod_author, roff_to_text,
    split_attribution)

NAMES = TUNING + EVALUATION + EXTRA


# ----------------------------------------------------------------------------- processing
def split_indices(n, seed=0):
    """The fixed held-out split of ``n`` documents: (train, test) index arrays, sorted.
    10% of the documents are held out, at least 1,000 (or a fifth of a small corpus)."""
    n_test = max(-(-n // 10), min(1000, n // 5))
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def user_split(groups, seed=0):
    """The held-out split BY USER of documents with author keys ``groups`` (in document
    order): a seeded permutation of the distinct users (sorted) is walked until the users
    taken hold 10% of the documents (at least 1,000, or a fifth of a small corpus); every
    document of a held-out user is in the test part, none in the training part.
    Returns (train, test) index arrays, sorted."""
    n = len(groups)
    n_test = max(-(-n // 10), min(1000, n // 5))
    names = sorted(set(groups))
    code = {g: k for k, g in enumerate(names)}
    g = np.array([code[x] for x in groups], dtype=np.int64)
    per = np.bincount(g, minlength=len(names))
    held = np.zeros(len(names), dtype=bool)
    total = 0
    for u in np.random.default_rng(seed).permutation(len(names)):
        if total >= n_test:
            break
        held[u], total = True, total + per[u]
    test = held[g]
    return np.flatnonzero(~test), np.flatnonzero(test)


def target_shape(n_users=8500, n_docs=17000, max_per_user=120):
    """Documents per user of the issue's target corpus, most active first: rank-size
    counts ``max(1, round(max_per_user * rank^-b))`` with b set by bisection, then the
    counts at the 1-2 boundary moved by one so that they add up to exactly ``n_docs``."""
    rank = np.arange(1, n_users + 1, dtype=np.float64)
    def shape(b):
        return np.maximum(1, np.floor(max_per_user * rank ** -b + 0.5)).astype(np.int64)
    lo, hi = 0.05, 3.0            # total decreases with b
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if shape(mid).sum() > n_docs else (lo, mid)
    c = shape(hi)
    gap = n_docs - int(c.sum())
    if gap > 0:                   # one-document users after the last two-document one get 2
        first_one = int(np.argmax(c == 1))
        c[first_one:first_one + gap] += 1
    elif gap < 0:                 # the last users above one document give one back
        idx = np.flatnonzero(c > 1)[gap:]
        c[idx] -= 1
    if c.sum() != n_docs or c.min() < 1:
        raise ValueError(f"no shape of {n_users} users and {n_docs} documents with at most "
                         f"{max_per_user} per user")
    return np.sort(c)[::-1]


def user_shape(groups):
    """The shape of a corpus by user: n_docs, n_users, share of users with one document,
    max and median documents per user, share of the documents held by the top 1% of users."""
    _, per = np.unique(np.asarray(groups), return_counts=True)
    per = np.sort(per)[::-1]
    return {"n_docs": int(per.sum()), "n_users": int(len(per)),
            "users_with_one_doc": float(np.mean(per == 1)), "max_docs_per_user": int(per[0]),
            "median_docs_per_user": float(np.median(per)),
            "docs_by_top1pct_users": float(per[:max(1, len(per) // 100)].sum() / per.sum())}


# tokens a pool document needs in the pool's vocabulary (as MIN_TOKENS in the training one)
MIN_POOL_TOKENS = 5


def _pool_filter(texts, vocabulary_size=5000):
    # the 5,000 most frequent words of the whole pool, as the training part will pick them
    from sklearn.feature_extraction.text import CountVectorizer
    cv = CountVectorizer(lowercase=True, token_pattern=TOKEN.pattern, dtype=np.int64)
    X = cv.fit_transform(texts)
    words = list(cv.get_feature_names_out())
    cols = _select_vocabulary(np.asarray(X.sum(axis=0)).ravel(), np.diff(X.tocsc().indptr),
                              words, vocabulary_size)
    return np.asarray(X[:, cols].sum(axis=1)).ravel() >= MIN_POOL_TOKENS


def authors17k(seed=0, shape=None):
    """A real corpus shaped like the issue's target (``target_shape()``: 17,000 documents by
    8,500 users, most with one, the most active with 120), from the documents of people:
    fortunes by quoted author (each anonymous fortune its own author) and Debian package
    descriptions and changelog entries by maintainer / uploader e-mail (one key for both:
    a person's descriptions and uploads are theirs). Documents with fewer than 5 tokens in
    the 5,000 most frequent words of the pool are left out; the pool's users sorted by
    their document count (ties in a seeded order) take the target counts in order, each a
    seeded subset of min(own, target) of their documents, so the shape falls short where
    the pool lacks users that active.

    Provenance: the loaders ``fortunes``, ``debian`` and ``changelogs``
    (bench/corpus_sources.py). Licence: theirs."""
    shape = target_shape() if shape is None else np.asarray(shape)
    docs = []
    for src, prefix in (("fortunes", "fortunes:"), ("debian", "debian:"),
                        ("changelogs", "debian:")):
        raw = _load_raw(src)
        docs += [(prefix + g, f"{src}/{i}", t)
                 for t, i, g in zip(raw.texts, _unique(raw.ids), raw.groups)]
    pool = {}
    for (g, i, t), ok in zip(docs, _pool_filter([d[2] for d in docs])):
        if ok:
            pool.setdefault(g, []).append((i, t))
    rng = np.random.default_rng([seed, 17])
    keys = sorted(pool)
    keys = [keys[i] for i in rng.permutation(len(keys))]
    keys.sort(key=lambda k: -len(pool[k]))            # stable: ties stay in seeded order
    texts, ids, groups = [], [], []
    for key, want in zip(keys, shape):
        docs = sorted(pool[key])
        take = np.sort(rng.choice(len(docs), min(len(docs), int(want)), replace=False))
        for j in take:
            ids.append(docs[j][0])
            texts.append(docs[j][1])
            groups.append(key)
    return _Raw(texts, ids, groups, {"sources": ["fortunes", "debian", "changelogs"],
                                     "target": user_shape(np.repeat(np.arange(len(shape)),
                                                                    shape))})


# corpora built from others for the user-level benchmark (not in NAMES: no loader of their own)
USER_CORPORA = {"authors17k": authors17k}


def load_by_user(name, *, vocabulary_size=5000, seed=0):
    """A corpus with authors split BY USER (:func:`user_split`: held-out users never in the
    training part); vocabulary and short-document rule as :func:`load`. ``name`` is a
    corpus of ``NAMES`` with authors or one of ``USER_CORPORA``. Cached like :func:`load`.

    Returns
    -------
    Corpus
        ``groups_train`` / ``groups_test`` integer user ids (one numbering for both parts);
        ``meta["users"]`` / ``meta["users_train"]``: :func:`user_shape` of all documents /
        of the training part.
    """
    if name not in LOADERS and name not in USER_CORPORA:
        raise ValueError(f"name must be one of {sorted(LOADERS) + sorted(USER_CORPORA)}, "
                         f"got {name!r}")
    stamp = _stamp(name) if name in LOADERS else f"v{_VERSION}u1"
    path = cache_dir() / f"{name}-byuser-V{int(vocabulary_size)}-seed{int(seed)}-{stamp}.npz"
    if not path.is_file():
        t = time.perf_counter()
        raw = _load_raw(name) if name in LOADERS else USER_CORPORA[name](seed)
        if raw.groups is None:
            raise ValueError(f"corpus {name!r} has no authors")
        out = _process(raw, int(vocabulary_size), int(seed), by_user=True)
        meta = {"name": name, "split": "by user", "provenance": raw.provenance,
                "seed": int(seed), "vocabulary_size": len(out["vocab"]),
                "raw_docs": len(raw.ids),
                "n_docs": {"train": out["Xtr"].shape[0], "test": out["Xte"].shape[0]},
                "train_tokens": length_stats(out["Xtr"]),
                "users": user_shape(np.concatenate([out["gtr"], out["gte"]])),
                "users_train": user_shape(out["gtr"]),
                "built": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "build_seconds": round(time.perf_counter() - t, 1)}
        _save(path, out, meta)
    Xtr, Xte, vocab, gtr, gte, meta = _read(path)
    return Corpus(Xtr, Xte, vocab, gtr, gte, meta)


def _select_vocabulary(counts, df, words, size):
    # letters only, no stop words, in MIN_DF training documents; most frequent first,
    # ties alphabetical; then listed alphabetically
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
    ok = [j for j, w in enumerate(words)
          if df[j] >= MIN_DF and TOKEN.fullmatch(w) and w not in ENGLISH_STOP_WORDS]
    ok.sort(key=lambda j: (-counts[j], words[j]))
    return sorted(ok[:size], key=lambda j: words[j])


def _unique(ids):
    # a name defined twice (a function redefined, a version uploaded twice) keeps its
    # occurrences apart: "#2", "#3" in source order
    seen, out = {}, []
    for i in ids:
        seen[i] = seen.get(i, 0) + 1
        out.append(i if seen[i] == 1 else f"{i}#{seen[i]}")
    return out


def _process(raw, vocabulary_size, seed, by_user=False):
    raw.ids = _unique(raw.ids)
    order = sorted(range(len(raw.ids)), key=lambda i: raw.ids[i])
    tr, te = (user_split([raw.groups[i] for i in order], seed) if by_user
              else split_indices(len(order), seed))
    tr, te = [order[i] for i in tr], [order[i] for i in te]
    if raw.bow is not None:
        X, words = raw.bow
        Xtr_full, Xte_full = X[tr], X[te]
    else:
        from sklearn.feature_extraction.text import CountVectorizer
        cv = CountVectorizer(lowercase=True, token_pattern=TOKEN.pattern, dtype=np.int64)
        Xtr_full = cv.fit_transform([raw.texts[i] for i in tr])
        words = list(cv.get_feature_names_out())
        Xte_full = None
    counts = np.asarray(Xtr_full.sum(axis=0)).ravel()
    df = np.diff(Xtr_full.tocsc().indptr)
    cols = _select_vocabulary(counts, df, words, vocabulary_size)
    vocab = [words[j] for j in cols]
    Xtr = Xtr_full[:, cols].tocsr()
    if Xte_full is None:
        from sklearn.feature_extraction.text import CountVectorizer
        cv = CountVectorizer(lowercase=True, token_pattern=TOKEN.pattern, dtype=np.int64,
                             vocabulary=vocab)
        Xte = cv.transform([raw.texts[i] for i in te]).tocsr()
    else:
        Xte = Xte_full[:, cols].tocsr()
    ktr = np.asarray(Xtr.sum(axis=1)).ravel() >= MIN_TOKENS
    kte = np.asarray(Xte.sum(axis=1)).ravel() >= MIN_TOKENS
    tr = [i for i, k in zip(tr, ktr) if k]
    te = [i for i, k in zip(te, kte) if k]
    out = {"Xtr": Xtr[ktr], "Xte": Xte[kte], "vocab": vocab,
           "ids_tr": [raw.ids[i] for i in tr], "ids_te": [raw.ids[i] for i in te]}
    if raw.groups is not None:
        names = sorted(set(raw.groups[i] for i in tr + te))
        code = {g: k for k, g in enumerate(names)}
        out["gtr"] = np.array([code[raw.groups[i]] for i in tr], dtype=np.int64)
        out["gte"] = np.array([code[raw.groups[i]] for i in te], dtype=np.int64)
        out["group_names"] = names
    return out


def length_stats(X):
    """Token statistics of a document-term matrix: n_docs, tokens, mean, median, p90, max
    tokens per document and the share of tokens in the longest 1% and 10% of documents."""
    n = np.sort(np.asarray(X.sum(axis=1)).ravel().astype(np.int64))[::-1]
    total = max(int(n.sum()), 1)
    top = lambda q: float(n[:max(1, int(round(q * len(n))))].sum() / total)  # noqa: E731
    return {"n_docs": int(len(n)), "tokens": int(n.sum()), "mean": float(n.mean()),
            "median": float(np.median(n)), "p90": float(np.percentile(n, 90)),
            "max": int(n.max()), "top1_share": top(0.01), "top10_share": top(0.10)}


def group_stats(groups):
    """Documents per author: number of authors, the most active author's count, the share
    of authors with one document and the share of documents written by them, the median."""
    _, per = np.unique(groups, return_counts=True)
    return {"n_authors": int(len(per)), "max_docs_per_author": int(per.max()),
            "median_docs_per_author": float(np.median(per)),
            "authors_with_one_doc": float(np.mean(per == 1)),
            "docs_by_one_doc_authors": float(np.sum(per == 1) / per.sum())}


def _stamp(name):
    # the processing's version, then the loader's when it changed since (stale caches unread)
    return f"v{_VERSION}" + (f"r{SOURCE_VERSION[name]}" if SOURCE_VERSION.get(name) else "")


def _cache_path(name, vocabulary_size, seed):
    return cache_dir() / f"{name}-V{vocabulary_size}-seed{seed}-{_stamp(name)}.npz"


def _save(path, out, meta):
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for key in ("Xtr", "Xte"):
        X = out[key]
        arrays.update({f"{key}_data": X.data, f"{key}_indices": X.indices,
                       f"{key}_indptr": X.indptr, f"{key}_shape": np.array(X.shape)})
    arrays["vocab"] = np.array(out["vocab"], dtype=str)
    arrays["ids_tr"] = np.array(out["ids_tr"], dtype=str)
    arrays["ids_te"] = np.array(out["ids_te"], dtype=str)
    if "gtr" in out:
        arrays.update(gtr=out["gtr"], gte=out["gte"],
                      group_names=np.array(out["group_names"], dtype=str))
    arrays["meta"] = np.array(json.dumps(meta))
    tmp = path.with_suffix(f".tmp{os.getpid()}.npz")
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, path)


def _read(path):
    with np.load(path, allow_pickle=False) as z:
        mats = {k: sp.csr_matrix((z[f"{k}_data"].astype(np.int64), z[f"{k}_indices"],
                                  z[f"{k}_indptr"]), shape=tuple(z[f"{k}_shape"]))
                for k in ("Xtr", "Xte")}
        meta = json.loads(str(z["meta"]))
        meta["ids_train"], meta["ids_test"] = z["ids_tr"].tolist(), z["ids_te"].tolist()
        g = (z["gtr"], z["gte"]) if "gtr" in z.files else (None, None)
        if "group_names" in z.files:
            meta["group_names"] = z["group_names"].tolist()
        return mats["Xtr"], mats["Xte"], z["vocab"].tolist(), g[0], g[1], meta


def _load_raw(name):
    """The loader's documents, cached as gzipped JSON (so another vocabulary size or seed
    does not parse the sources again); bag-of-words sources are read directly."""
    import gzip
    path = cache_dir() / f"{name}-raw-{_stamp(name)}.json.gz"
    if path.is_file():
        with gzip.open(path, "rt", encoding="utf-8") as f:
            d = json.load(f)
        return _Raw(d["texts"], d["ids"], d["groups"], d["provenance"])
    raw = LOADERS[name]()
    if raw.bow is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        with gzip.open(tmp, "wt", encoding="utf-8") as f:
            json.dump({"texts": raw.texts, "ids": raw.ids, "groups": raw.groups,
                       "provenance": raw.provenance}, f)
        os.replace(tmp, path)
    return raw


def load(name, *, vocabulary_size=5000, max_docs=None, seed=0):
    """Load one benchmark corpus (processed once, then read from the cache).

    Parameters
    ----------
    name : str
        One of ``TUNING``, ``EVALUATION`` or ``EXTRA``.
    vocabulary_size : int, default=5000
        Number of words kept: the most frequent of the training part (see the module).
    max_docs : int or None
        Keep a seeded random subset of this many TRAINING documents (with their groups);
        the test part and the vocabulary stay those of the whole corpus, so figures at
        different ``max_docs`` share one held-out set.
    seed : int, default=0
        Seed of the held-out split (and of the ``max_docs`` subset). The benchmark's
        figures use 0.

    Returns
    -------
    Corpus

    Raises
    ------
    ValueError
        Unknown name or bad parameter.
    Unavailable
        The machine lacks the corpus's source (the message says what to install).
    """
    if name not in LOADERS:
        raise ValueError(f"name must be one of {sorted(LOADERS)}, got {name!r}")
    if isinstance(vocabulary_size, bool) or not isinstance(vocabulary_size, (int, np.integer)) \
            or vocabulary_size < 1:
        raise ValueError(f"vocabulary_size must be a positive int, got {vocabulary_size!r}")
    if max_docs is not None and (isinstance(max_docs, bool) or
                                 not isinstance(max_docs, (int, np.integer)) or max_docs < 1):
        raise ValueError(f"max_docs must be None or a positive int, got {max_docs!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an int, got {seed!r}")
    path = _cache_path(name, int(vocabulary_size), int(seed))
    if not path.is_file():
        t = time.perf_counter()
        raw = _load_raw(name)
        out = _process(raw, int(vocabulary_size), int(seed))
        meta = {"name": name, "set": corpus_set(name), "source": LOADERS[name].__doc__
                .split("\n\n")[0].replace("\n", " ").replace("    ", " ").strip(),
                "provenance": raw.provenance, "seed": int(seed),
                "vocabulary_size": len(out["vocab"]), "raw_docs": len(raw.ids),
                "n_docs": {"train": out["Xtr"].shape[0], "test": out["Xte"].shape[0]},
                "train_tokens": length_stats(out["Xtr"]),
                "test_tokens": length_stats(out["Xte"]),
                "built": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "build_seconds": round(time.perf_counter() - t, 1)}
        if "gtr" in out:
            meta["authors"] = group_stats(np.concatenate([out["gtr"], out["gte"]]))
            meta["authors_train"] = group_stats(out["gtr"])
        _save(path, out, meta)
    Xtr, Xte, vocab, gtr, gte, meta = _read(path)
    meta["set"], meta["regime"] = corpus_set(name), REGIME[name]
    if max_docs is not None and max_docs < Xtr.shape[0]:
        keep = _subset(Xtr.shape[0], max_docs, seed)
        Xtr = Xtr[keep]
        gtr = None if gtr is None else gtr[keep]
        meta["ids_train"] = [meta["ids_train"][i] for i in keep]
        meta["max_docs"] = int(max_docs)
        meta["n_docs"] = {"train": Xtr.shape[0], "test": Xte.shape[0]}
        meta["train_tokens"] = length_stats(Xtr)
    return Corpus(Xtr, Xte, vocab, gtr, gte, meta)


def _subset(n, max_docs, seed):
    """The training rows ``load(max_docs=...)`` keeps (seeded, sorted)."""
    return np.sort(np.random.default_rng([int(seed), 1]).choice(n, int(max_docs),
                                                                 replace=False))


def public_documents(name, n_docs, *, vocabulary_size=5000, max_docs=None, seed=0):
    """Count matrix of ``n_docs`` training documents that ``load(name, max_docs=...)``
    leaves out (seeded): same-domain text disjoint from the documents fitted and from the
    held-out ones, standing in for public text (its word counts, its topics). Raises
    ValueError when fewer than ``n_docs`` are left out."""
    c = load(name, vocabulary_size=vocabulary_size, seed=seed)
    n = c.X_train.shape[0]
    # without a subset every training document is fitted: none is left to stand in for
    # public text
    rest = (np.array([], dtype=np.int64) if max_docs is None or max_docs >= n else
            np.setdiff1d(np.arange(n), _subset(n, max_docs, seed)))
    if len(rest) < n_docs:
        raise ValueError(f"{name}: only {len(rest)} training documents are left out of "
                         f"max_docs={max_docs}, fewer than {n_docs}")
    pick = np.random.default_rng([int(seed), 2]).choice(rest, int(n_docs), replace=False)
    return c.X_train[np.sort(pick)]


def corpus_set(name):
    return "tuning" if name in TUNING else "evaluation" if name in EVALUATION else "extra"


def _installed(module):
    import importlib.util
    return importlib.util.find_spec(module) is not None


# name -> (cheap check that the source exists, what to do when it does not)
_PROBES = {
    "debian": (lambda: glob.glob(os.path.join(APT_LISTS, "*_main_i18n_Translation-en*"))
               and glob.glob(os.path.join(APT_LISTS, "*_main_binary-amd64_Packages*")),
               "apt-get update -o Acquire::Languages=en"),
    "changelogs": (lambda: (p := _changelog_progress()) is not None and p[0] == p[1] > 0,
                   "the changelog sample downloaded"),
    "perlpod": (lambda: (p := _sample_progress("perl-sample.txt", "perl")) is not None
                and p[0] == p[1] > 0, "the perl sample downloaded"),
    "manpages": (lambda: len(glob.glob("/usr/share/man/man1/*")) >= 1000,
                 "manual pages under /usr/share/man (not a minimised image)"),
    "gcide": (lambda: os.path.exists("/usr/share/dictd/gcide.dict.dz"),
              "apt-get install dict-gcide"),
    "wordnet": (lambda: os.path.exists("/usr/share/dictd/wn.dict.dz"), "apt-get install dict-wn"),
    "foldoc": (lambda: os.path.exists("/usr/share/dictd/foldoc.dict.dz"),
               "apt-get install dict-foldoc"),
    "fortunes": (lambda: len(glob.glob("/usr/share/games/fortunes/*.dat")) >= 10,
                 "apt-get install fortunes fortunes-min"),
    "pydoc": (lambda: all(_installed(m) for _, m in PYDOC_PACKAGES),
              "pip install " + " ".join(d for d, _ in PYDOC_PACKAGES)),
    "kos": (lambda: _shared("kos", "docword.kos.txt.gz"), ""),
    "nips": (lambda: _shared("nips_uci", "docword.nips.txt.gz"), ""),
    "c50": (lambda: _shared("reuters_c50", "C50.tar.gz"), ""),
    "tweetrumors": (lambda: _shared("tweetrumors", "tweetrumors_clean.json"), ""),
}


def available(sources_only=False):
    """``{name: None}`` for every corpus this machine can build (or has cached; with
    ``sources_only``, only where its raw source is present, so that it can be built
    again), else ``{name: reason}``. Cheap: the sources are looked for, not read."""
    out = {}
    for name in NAMES:
        if not sources_only and glob.glob(str(cache_dir() / f"{name}-V*-seed*-{_stamp(name)}.npz")):
            out[name] = None
            continue
        check, hint = _PROBES[name]
        try:
            out[name] = None if check() else f"missing: {hint} (bench/setup_corpora.sh)"
        except Unavailable as exc:
            out[name] = str(exc)
    return out


def _fmt_row(name, c, seconds):
    s = c.meta["train_tokens"]
    a = c.meta.get("authors")
    authors = "-" if a is None else (f"{a['n_authors']} (max {a['max_docs_per_author']}, "
                                     f"{100 * a['authors_with_one_doc']:.0f}% one doc)")
    return (f"{name:12s} {corpus_set(name):10s} {c.X_train.shape[0]:>7d} {c.X_test.shape[0]:>6d} "
            f"{s['mean']:7.1f} {s['median']:6.0f} {s['p90']:6.0f} {s['max']:7d} "
            f"{100 * s['top1_share']:5.1f}% {100 * s['top10_share']:5.1f}%  {authors:28s} "
            f"{seconds:6.1f}s")


def main(argv=None):
    p = argparse.ArgumentParser(description="The benchmark corpora: sets, sizes, lengths.")
    p.add_argument("names", nargs="*", default=list(NAMES))
    p.add_argument("--vocabulary-size", type=int, default=5000)
    p.add_argument("--refresh", action="store_true", help="rebuild the cached matrices")
    p.add_argument("--changelog-sample", action="store_true",
                   help="print the changelog sample (source binary per line) and exit")
    p.add_argument("--perl-sample", action="store_true",
                   help="print the perl packages of the perlpod corpus and exit")
    a = p.parse_args(argv)
    if a.changelog_sample:
        for src, pkg in changelog_sample():
            print(src, pkg)
        return
    if a.perl_sample:
        print("\n".join(perl_sample()))
        return
    print(f"{'name':12s} {'set':10s} {'train':>7s} {'test':>6s} {'mean':>7s} {'median':>6s} "
          f"{'p90':>6s} {'max':>7s} {'top1%':>6s} {'top10%':>6s}  {'authors':28s} {'load':>7s}")
    for name in a.names:
        if a.refresh:
            _cache_path(name, a.vocabulary_size, 0).unlink(missing_ok=True)
            (cache_dir() / f"{name}-raw-{_stamp(name)}.json.gz").unlink(missing_ok=True)
        t = time.perf_counter()
        try:
            c = load(name, vocabulary_size=a.vocabulary_size)
        except Unavailable as exc:
            print(f"{name:12s} {corpus_set(name):10s} unavailable: {exc}")
            continue
        print(_fmt_row(name, c, time.perf_counter() - t), flush=True)
    print("tokens: training documents, in the vocabulary; top1%/top10%: share of the training "
          "tokens in the longest 1% / 10% of documents")


if __name__ == "__main__":
    main()
