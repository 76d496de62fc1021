"""The benchmark corpora (bench/corpora.py): the declared sets, the fixed held-out split, the
training-only vocabulary, the processed matrices of every corpus this machine has.

Cheap corpora are built when their source is present; the expensive ones (minutes to build)
are checked only once cached (``python bench/corpora.py`` builds them)."""
import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

_PATH = Path(__file__).resolve().parent.parent / "bench" / "corpora.py"
_spec = importlib.util.spec_from_file_location("bench_corpora", _PATH)
corpora = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpora)

CHEAP = ("kos", "c50", "nips", "fortunes", "foldoc", "tweetrumors")


def _loadable(name, vocabulary_size=5000):
    reason = corpora.available()[name]
    if reason is not None:
        pytest.skip(f"{name} unavailable: {reason}")
    if name not in CHEAP and not corpora._cache_path(name, vocabulary_size, 0).is_file():
        pytest.skip(f"{name} not cached (slow to build here; `python bench/corpora.py {name}`)")
    return corpora.load(name, vocabulary_size=vocabulary_size)


def test_sets_declared():
    assert {"debian", "kos", "c50"} <= set(corpora.TUNING)
    assert len(corpora.EVALUATION) >= 3
    assert not set(corpora.TUNING) & set(corpora.EVALUATION)
    assert not set(corpora.EXTRA) & (set(corpora.TUNING) | set(corpora.EVALUATION))
    assert set(corpora.NAMES) == set(corpora.LOADERS) == set(corpora.REGIME)
    # the evaluation set covers the three length regimes
    assert {corpora.REGIME[n] for n in corpora.EVALUATION} == {"short", "long", "heavy-tailed"}
    for name, loader in corpora.LOADERS.items():
        assert "Provenance" in loader.__doc__, name
        assert "Licence" in loader.__doc__ or "licence" in loader.__doc__.lower(), name


def test_setup_installs_what_the_loaders_read():
    script = (_PATH.parent / "setup_corpora.sh").read_text()
    for package in corpora.MANPAGE_PACKAGES + ("dict-gcide", "dict-wn", "dict-foldoc",
                                              "fortunes", "fortunes-min"):
        assert re.search(rf"(^|\s){re.escape(package)}(\s|;|$)", script, re.M), package
    assert "--changelog-sample" in script and "Acquire::Languages=en" in script


def test_available_reports_every_name():
    av = corpora.available()
    assert set(av) == set(corpora.NAMES)
    assert all(v is None or (isinstance(v, str) and v) for v in av.values())


@pytest.mark.parametrize("n", [10, 999, 3430, 5000, 20000])
def test_split_fixed_disjoint_and_sized(n):
    tr, te = corpora.split_indices(n, seed=0)
    tr2, te2 = corpora.split_indices(n, seed=0)
    np.testing.assert_array_equal(tr, tr2)
    np.testing.assert_array_equal(te, te2)
    assert not np.intersect1d(tr, te).size
    np.testing.assert_array_equal(np.sort(np.concatenate([tr, te])), np.arange(n))
    assert len(te) == max(-(-n // 10), min(1000, n // 5))
    assert len(te) >= min(1000, n // 5) and len(te) >= n / 10
    other = corpora.split_indices(n, seed=1)[1]
    assert n < 20 or not np.array_equal(te, other)


def _raw(texts, groups=None):
    return corpora._Raw(list(texts), [f"d{i:04d}" for i in range(len(texts))], groups, {})


def test_vocabulary_from_training_part_only():
    rng = np.random.default_rng(0)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma"]
    texts = [" ".join(rng.choice(words, 8)) for _ in range(200)]
    tr, te = corpora.split_indices(200, 0)
    for i in te:  # a word only the held-out documents have is not in the vocabulary
        texts[i] += " heldoutonly heldoutonly"
    texts[tr[0]] += " rareword"  # in one training document: below min_df
    texts[tr[1]] += " the and x9 abc123"  # stop words and non-letters
    out = corpora._process(_raw(texts), 100, 0)
    assert out["vocab"] == sorted(words)
    assert out["Xtr"].shape == (len(tr), 6) and out["Xte"].shape == (len(te), 6)
    # the held-out counts are of the same words (extra words ignored)
    assert int(out["Xte"].sum()) == 8 * len(te)


def test_vocabulary_most_frequent_ties_alphabetical_and_short_docs_dropped():
    texts = ["aa aa aa bb bb cc"] * 30 + ["dd ee"] * 30 + ["ff " * 4] * 5
    out = corpora._process(_raw(texts), 2, 0)
    assert out["vocab"] == ["aa", "bb"]
    assert (np.asarray(out["Xtr"].sum(axis=1)).ravel() >= corpora.MIN_TOKENS).all()
    # only the 30 documents with 5 vocabulary tokens survive, in both parts
    assert out["Xtr"].shape[0] + out["Xte"].shape[0] == 30
    # ties: "dd" and "ee" equally frequent, alphabetical order picks "dd"
    out = corpora._process(_raw(["ee dd " * 3] * 40), 1, 0)
    assert out["vocab"] == ["dd"]


def test_groups_follow_their_documents():
    texts = [f"word{'a' * (i % 7 + 1)} " * 6 + "common " * 5 for i in range(300)]
    groups = [f"author{i % 7}" for i in range(300)]
    out = corpora._process(_raw(texts, groups), 50, 0)
    names = out["group_names"]
    for part in ("tr", "te"):
        X, ids, g = out[f"X{part}"], out[f"ids_{part}"], out[f"g{part}"]
        assert g.dtype == np.int64 and len(g) == X.shape[0]
        for doc, k in zip(ids, g):
            assert names[k] == groups[int(doc[1:])]


def test_roff_to_text():
    src = ('.\\" comment\n.TH LS 1\n.SH NAME\nls \\- list \\fBdirectory\\fR contents\n'
           '.B ls\n.PP\n\\fI\\,OPTION\\/\\fR and \\(em dash \\*(lqquoted\\*(rq\n.so other.1\n')
    text = corpora.roff_to_text(src)
    assert re.findall(r"[a-z]+", text.lower()) == [
        "name", "ls", "list", "directory", "contents", "ls", "option", "and", "dash", "quoted"]


def test_changelog_entries_and_authors():
    text = ("pkg (1.2-1) unstable; urgency=medium\n\n  * New upstream release.\n"
            "  * Fix the frobnicator.\n\n -- Jane Doe <Jane@Example.org>  Mon, 01 Jan 2024 "
            "00:00:00 +0000\n\npkg (1.1-1) unstable; urgency=low\n\n  * Initial release.\n\n"
            " -- John Roe <john@example.org>  Sun, 01 Jan 2023 00:00:00 +0000\n")
    entries = list(corpora._changelog_entries(text, "pkg"))
    assert [(e[0], e[2]) for e in entries] == [("pkg/1.2-1", "jane@example.org"),
                                               ("pkg/1.1-1", "john@example.org")]
    assert "frobnicator" in entries[0][1] and "Initial" in entries[1][1]
    assert "urgency" not in entries[0][1] and "Jane" not in entries[0][1]


def test_fortune_attribution():
    assert corpora.split_attribution('Quote.\n\t\t-- Mark  Twain, "Pudd\'nhead\n\tWilson"') \
        == ("Quote.", "mark twain")
    assert corpora.split_attribution("A\nB\n  -- Lao Tse (attrib.)") == ("A\nB", "lao tse")
    assert corpora.split_attribution("-- a line alone") == ("-- a line alone", None)
    assert corpora.split_attribution("no author\n") == ("no author", None)


def test_pod_author():
    page = '.SH NAME\nFoo \\- bar\n.SH "AUTHOR"\n.IX Header "AUTHOR"\nDave Rolsky <autarch@urth.org>\n'
    assert corpora.pod_author(page) == "dave rolsky"
    page = ".SH AUTHORS\nCopyright (c) 2004 Jane Q. Doe, all rights reserved.\n.SH SEE ALSO\nx\n"
    assert corpora.pod_author(page) == "jane q. doe"
    assert corpora.pod_author(".SH AUTHOR\nThis library is free software; you may use it\n") is None
    assert corpora.pod_author(".SH NAME\nFoo\n.SH DESCRIPTION\nWritten by Nobody\n") is None


def test_dictd_base64():
    assert corpora._b64("A") == 0 and corpora._b64("B") == 1 and corpora._b64("BA") == 64
    assert corpora._b64("/") == 63


@pytest.mark.parametrize("kw, param", [({"vocabulary_size": 0}, "vocabulary_size"),
                                       ({"vocabulary_size": 2.5}, "vocabulary_size"),
                                       ({"max_docs": 0}, "max_docs"),
                                       ({"max_docs": True}, "max_docs"),
                                       ({"seed": "0"}, "seed")])
def test_bad_parameters(kw, param):
    with pytest.raises(ValueError, match=param):
        corpora.load("kos", **kw)
    with pytest.raises(ValueError, match="name"):
        corpora.load("no-such-corpus")


@pytest.mark.parametrize("name", corpora.NAMES)
def test_corpus(name):
    c = _loadable(name)
    assert isinstance(c.X_train, sp.csr_matrix) and isinstance(c.X_test, sp.csr_matrix)
    for X in (c.X_train, c.X_test):
        assert X.dtype == np.int64 and X.shape[1] == len(c.vocabulary)
        assert (X.data > 0).all()
        assert (np.asarray(X.sum(axis=1)).ravel() >= corpora.MIN_TOKENS).all()
    assert len(c.vocabulary) == c.meta["vocabulary_size"] <= 5000
    assert len(c.vocabulary) == 5000 or name in ("tweetrumors",)
    assert c.vocabulary == sorted(set(c.vocabulary))
    assert all(corpora.TOKEN.fullmatch(w) for w in c.vocabulary)
    # the vocabulary words occur in the training part (a few only in its dropped documents)
    assert (np.diff(c.X_train.tocsc().indptr) > 0).mean() >= 0.99
    n = c.X_train.shape[0] + c.X_test.shape[0]
    assert 0.08 <= c.X_test.shape[0] / n <= 0.25
    ids_tr, ids_te = c.meta["ids_train"], c.meta["ids_test"]
    assert len(ids_tr) == c.X_train.shape[0] and len(ids_te) == c.X_test.shape[0]
    assert len(set(ids_tr) | set(ids_te)) == len(ids_tr) + len(ids_te)
    assert c.meta["n_docs"] == {"train": c.X_train.shape[0], "test": c.X_test.shape[0]}
    assert c.meta["set"] == corpora.corpus_set(name) and c.meta["provenance"]
    if c.groups_train is not None:
        assert len(c.groups_train) == c.X_train.shape[0]
        assert len(c.groups_test) == c.X_test.shape[0]
        assert c.groups_train.dtype == np.int64 and c.groups_train.min() >= 0
        assert c.meta["authors"]["n_authors"] == len(
            np.union1d(c.groups_train, c.groups_test))
    # the declared length regime is the documented rule applied to the training part
    st = c.meta["train_tokens"]
    rule = ("long" if st["median"] >= 100 else
            "heavy-tailed" if st["top10_share"] >= 0.38 else "short")
    assert corpora.REGIME[name] == c.meta["regime"] == rule, (name, st)
    # the cache returns the same corpus again
    d = corpora.load(name)
    assert d.vocabulary == c.vocabulary and d.meta["ids_test"] == ids_te
    assert (d.X_train != c.X_train).nnz == 0 and (d.X_test != c.X_test).nnz == 0


def test_max_docs_keeps_test_part_and_vocabulary():
    c = _loadable("kos")
    s = corpora.load("kos", max_docs=1000)
    assert s.X_train.shape == (1000, c.X_train.shape[1])
    assert s.vocabulary == c.vocabulary and (s.X_test != c.X_test).nnz == 0
    rows = {doc: i for i, doc in enumerate(c.meta["ids_train"])}
    idx = [rows[doc] for doc in s.meta["ids_train"]]
    assert (c.X_train[idx] != s.X_train).nnz == 0
    again = corpora.load("kos", max_docs=1000)
    assert again.meta["ids_train"] == s.meta["ids_train"]


def test_build_is_deterministic(tmp_path, monkeypatch):
    # rebuilt from its source below: a cached build alone is not enough
    reason = corpora.available(sources_only=True)["c50"]
    if reason is not None:
        pytest.skip(f"c50's source unavailable: {reason}")
    cached = corpora.load("c50", vocabulary_size=300)
    monkeypatch.setenv("DPTM_BENCH_CACHE", str(tmp_path))
    fresh = corpora.load("c50", vocabulary_size=300)
    assert fresh.vocabulary == cached.vocabulary
    assert (fresh.X_train != cached.X_train).nnz == 0 and (fresh.X_test != cached.X_test).nnz == 0
    np.testing.assert_array_equal(fresh.groups_test, cached.groups_test)
    assert len(fresh.vocabulary) == 300
    # rebuilt from the cached raw documents: the same again
    corpora._cache_path("c50", 300, 0).unlink()
    again = corpora.load("c50", vocabulary_size=300)
    assert again.vocabulary == fresh.vocabulary and (again.X_train != fresh.X_train).nnz == 0
    assert again.meta["ids_train"] == fresh.meta["ids_train"]
    np.testing.assert_array_equal(again.groups_train, fresh.groups_train)
    full = corpora.load("c50")
    # the 300 words are the 300 most frequent of the 5,000-word vocabulary's training counts
    counts = dict(zip(full.vocabulary, np.asarray(full.X_train.sum(axis=0)).ravel()))
    top = sorted(counts, key=lambda w: -counts[w])[:250]
    assert len(set(top) - set(fresh.vocabulary)) <= 25
