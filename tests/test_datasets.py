import gzip
import io
import json
import pickle
import tarfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dptm import datasets
from dptm.datasets import (load_demo_corpus, load_json_texts, load_reuters_c50, load_text_lines,
                           load_uci_bow, make_lda_corpus, shared_data_dir)
from dptm.text import preprocess, tokens_to_matrix


# ---------------------------------------------------------------- UCI bag of words

def _write_uci(tmp_path, header, lines, vocab, gz=False):
    body = "\n".join([*map(str, header), *lines]) + "\n"
    doc = tmp_path / ("docword.toy.txt.gz" if gz else "docword.toy.txt")
    if gz:
        with gzip.open(doc, "wt") as fh:
            fh.write(body)
    else:
        doc.write_text(body)
    voc = tmp_path / "vocab.toy.txt"
    voc.write_text("\n".join(vocab) + "\n")
    return doc, voc


@pytest.mark.parametrize("gz", [False, True])
def test_load_uci_bow_toy(tmp_path, gz):
    doc, voc = _write_uci(tmp_path, (3, 4, 4), ["1 2 5", "1 4 1", "3 1 2", "3 2 1"],
                          ["w1", "w2", "w3", "w4"], gz=gz)
    X, vocab = load_uci_bow(doc, voc)
    assert X.format == "csr" and X.dtype == np.int64 and X.has_sorted_indices
    np.testing.assert_array_equal(X.toarray(), [[0, 5, 0, 1], [0, 0, 0, 0], [2, 1, 0, 0]])
    assert vocab.tolist() == ["w1", "w2", "w3", "w4"]


@pytest.mark.parametrize("header, lines, vocab, match", [
    ((3, 4, 5), ["1 2 5", "1 4 1"], 4, "NNZ=5"),
    ((3, 4, 2), ["1 2 5", "4 4 1"], 4, "docID"),
    ((3, 4, 2), ["1 2 5", "1 5 1"], 4, "wordID"),
    ((3, 4, 2), ["1 2 5", "1 3 0"], 4, "positive"),
    ((3, 4, 2), ["1 2 5", "1 2 1"], 4, "repeated"),
    ((3, 4, 2), ["1 2 5", "1 3 1"], 3, "W=4"),
    ((3, 4, 2), ["1 2 5", "1 3"], 4, "malformed|columns"),
])
def test_load_uci_bow_validates_header(tmp_path, header, lines, vocab, match):
    doc, voc = _write_uci(tmp_path, header, lines, [f"w{i}" for i in range(vocab)])
    with pytest.raises(ValueError, match=match):
        load_uci_bow(doc, voc)


def test_load_uci_bow_bad_header_and_missing_file(tmp_path):
    doc, voc = _write_uci(tmp_path, ("x", 4, 1), ["1 1 1"], ["a", "b", "c", "d"])
    with pytest.raises(ValueError, match="D, W, NNZ"):
        load_uci_bow(doc, voc)
    with pytest.raises(FileNotFoundError, match="docword_path"):
        load_uci_bow(tmp_path / "nope.txt", voc)
    with pytest.raises(FileNotFoundError, match="vocab_path"):
        load_uci_bow(doc, tmp_path / "nope.txt")


def test_kos_statistics(kos):
    X, vocab = kos  # numbers from ../shared/data/kos/SOURCE.md
    assert X.shape == (3430, 6906) and X.nnz == 353160 and X.sum() == 467714
    lengths = np.asarray(X.sum(axis=1)).ravel()
    assert (lengths.min(), np.median(lengths), lengths.max()) == (25, 111, 670)
    assert vocab.size == np.unique(vocab).size == 6906
    assert X.dtype == np.int64 and X.has_sorted_indices


def test_nips_statistics(nips):
    X, vocab = nips  # numbers from ../shared/data/nips_uci/SOURCE.md
    assert X.shape == (1500, 12419) and X.nnz == 746316 and X.sum() == 1932365
    assert np.count_nonzero(X.getnnz(axis=0)) == 12375  # 44 words never occur (UCI quirk)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    assert (lengths.min(), np.median(lengths), lengths.max()) == (2, 1300.5, 2307)


# ---------------------------------------------------------------- text loaders

def test_load_json_texts(tmp_path):
    p = tmp_path / "d.json"
    p.write_text(json.dumps({"text": ["a b", "c"]}))
    assert load_json_texts(p) == ["a b", "c"]
    p.write_text(json.dumps(["x", "y"]))
    assert load_json_texts(p) == ["x", "y"]
    p.write_text(json.dumps({"body": ["x"]}))
    assert load_json_texts(p, key="body") == ["x"]
    with pytest.raises(ValueError, match="no key 'text'"):
        load_json_texts(p)
    p.write_text(json.dumps(["x", 3]))
    with pytest.raises(ValueError, match="not strings"):
        load_json_texts(p)
    with pytest.raises(FileNotFoundError):
        load_json_texts(tmp_path / "missing.json")


def test_tweetrumors_statistics(tweetrumors):
    # the real corpus (SOURCE.md: 5,698 documents, 50,408 tokens)
    assert len(tweetrumors) == 5698
    assert sum(len(t.split()) for t in tweetrumors) == 50408


def test_load_text_lines(tmp_path):
    p = tmp_path / "docs.txt"
    p.write_text("first doc\n\n  \nsecond doc  \r\nthird\n")
    assert load_text_lines(p) == ["first doc", "second doc", "third"]
    g = tmp_path / "docs.txt.gz"
    with gzip.open(g, "wt", encoding="utf-8") as fh:
        fh.write("é doc\n\nz\n")
    assert load_text_lines(g) == ["é doc", "z"]
    with pytest.raises(FileNotFoundError):
        load_text_lines(tmp_path / "missing.txt")


def _toy_c50(path, reverse=False):
    members = [("C50train/Bob/2news.txt", b"bob two\r\nline"),
               ("C50train/Bob/1news.txt", b"bob one"),
               ("C50train/Al/9news.txt", b"al nine"), ("C50test/Al/3news.txt", b"al test")]
    if reverse:
        members = members[::-1]
    with tarfile.open(path, "w:gz") as tar:
        tar.addfile(tarfile.TarInfo("C50train"))
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_load_reuters_c50_toy_order_and_subsets(tmp_path):
    a, b = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz"
    _toy_c50(a)
    _toy_c50(b, reverse=True)
    for path in (a, b):  # deterministic whatever the archive order
        texts, authors = load_reuters_c50(path, "train")
        assert texts == ["al nine", "bob one", "bob two\nline"]
        assert authors.tolist() == ["Al", "Bob", "Bob"]
        texts, authors = load_reuters_c50(path, "all")
        assert texts[-1] == "al test" and len(texts) == 4
        assert load_reuters_c50(path, "test")[1].tolist() == ["Al"]
    with pytest.raises(ValueError, match="subset"):
        load_reuters_c50(a, "dev")
    with pytest.raises(FileNotFoundError):
        load_reuters_c50(tmp_path / "missing.tar.gz")


def test_reuters_c50_statistics(reuters_c50):
    texts, authors = reuters_c50  # SOURCE.md: 50 authors x (50 train + 50 test)
    assert len(texts) == authors.size == 5000
    for half in (authors[:2500], authors[2500:]):
        names, counts = np.unique(half, return_counts=True)
        assert names.size == 50 and np.all(counts == 50)
    assert "\r" not in texts[0] and len(set(texts)) == 5000


# ---------------------------------------------------------------- synthetic corpora

def test_make_lda_corpus_shapes_and_determinism():
    X, phi, theta = make_lda_corpus(50, 30, 4, doc_length=(5, 9), random_state=3)
    assert X.shape == (50, 30) and X.format == "csr" and X.dtype == np.int64
    assert phi.shape == (4, 30) and theta.shape == (50, 4)
    np.testing.assert_allclose(phi.sum(1), 1)
    np.testing.assert_allclose(theta.sum(1), 1)
    lengths = np.asarray(X.sum(1)).ravel()
    assert lengths.min() >= 5 and lengths.max() <= 9
    X2, phi2, theta2 = make_lda_corpus(50, 30, 4, doc_length=(5, 9), random_state=3)
    assert (X != X2).nnz == 0 and np.array_equal(phi, phi2) and np.array_equal(theta, theta2)
    X3, _, _ = make_lda_corpus(50, 30, 4, doc_length=7, random_state=np.random.default_rng(3))
    assert np.all(np.asarray(X3.sum(1)).ravel() == 7)


def test_make_lda_corpus_word_frequencies_match_model():
    # Given theta and phi, word counts of the whole corpus are Multinomial(N, p) with
    # p = sum_d N_d theta_d phi / N; a chi-square test with a 1e-6 false-alarm rate.
    X, phi, theta = make_lda_corpus(400, 40, 3, doc_length=200, doc_topic_prior=0.5,
                                    topic_word_prior=1.0, random_state=11)
    counts = np.asarray(X.sum(0)).ravel()
    expected = 200 * (theta @ phi).sum(0)
    assert np.isclose(expected.sum(), counts.sum())
    _, pvalue = stats.chisquare(counts, expected)
    assert pvalue > 1e-6
    # and theta follows its symmetric Dirichlet: E[theta_dk] = 1/K (std of mean ~0.015)
    np.testing.assert_allclose(theta.mean(0), 1 / 3, atol=0.08)


def test_make_lda_corpus_prior_arrays_and_errors():
    X, phi, theta = make_lda_corpus(20, 10, 2, doc_topic_prior=[1e3, 1e-3],
                                    topic_word_prior=np.ones(10), random_state=0)
    assert theta[:, 0].mean() > 0.99
    with pytest.raises(ValueError, match="n_topics"):
        make_lda_corpus(10, 10, 0)
    with pytest.raises(ValueError, match="doc_topic_prior"):
        make_lda_corpus(10, 10, 2, doc_topic_prior=-1.0)
    with pytest.raises(ValueError, match="shape \\(2,\\)"):
        make_lda_corpus(10, 10, 2, doc_topic_prior=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="doc_length"):
        make_lda_corpus(10, 10, 2, doc_length=(5, 3))
    with pytest.raises(TypeError, match="random_state"):
        make_lda_corpus(10, 10, 2, random_state="seed")


def test_demo_corpus_contents():
    b = load_demo_corpus()
    spec = json.loads((Path(datasets.__file__).parent / "data" / "demo_topics.json").read_text())
    K, V = len(spec["topics"]), b.vocabulary.size
    assert b.X.shape == (spec["n_docs"], V) and b.X.dtype == np.int64 and sp.issparse(b.X)
    assert b.topic_word.shape == (K, V) and b.doc_topic.shape == (spec["n_docs"], K)
    assert b.topic_names == list(spec["topics"])
    np.testing.assert_allclose(b.topic_word.sum(1), 1)
    assert np.all(b.topic_word > 0)
    lengths = np.asarray(b.X.sum(1)).ravel()
    assert lengths.min() >= spec["doc_length"][0] and lengths.max() <= spec["doc_length"][1]
    # each true topic's most probable word is its theme's first listed word
    for k, name in enumerate(b.topic_names):
        assert b.vocabulary[np.argmax(b.topic_word[k])] == spec["topics"][name][0]
    # the texts survive our preprocessing unchanged and give back X exactly
    X2, _ = tokens_to_matrix(preprocess(b.texts), vocabulary=b.vocabulary)
    assert (X2 != b.X).nnz == 0
    assert b.texts[0].split() != sorted(b.texts[0].split())  # tokens shuffled, not sorted


def test_demo_corpus_deterministic_and_independent_copies():
    a, b = load_demo_corpus(), load_demo_corpus()
    assert (a.X != b.X).nnz == 0 and a.texts == b.texts
    a.X.data[:] = 0
    a.topic_word[:] = 0
    c = load_demo_corpus()
    assert c.X.sum() == b.X.sum() and c.topic_word.sum() > 0
    pickle.loads(pickle.dumps(c))


def test_demo_corpus_word_frequencies_match_truth():
    b = load_demo_corpus()
    lengths = np.asarray(b.X.sum(1)).ravel()
    expected = (lengths[:, None] * (b.doc_topic @ b.topic_word)).sum(0)
    _, pvalue = stats.chisquare(np.asarray(b.X.sum(0)).ravel(), expected)
    assert pvalue > 1e-6


def test_shared_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("DPTM_DATA", str(tmp_path))
    assert shared_data_dir() == tmp_path
    monkeypatch.setenv("DPTM_DATA", str(tmp_path / "absent"))
    assert shared_data_dir() is None
    monkeypatch.delenv("DPTM_DATA")
    default = Path(datasets.__file__).resolve().parent.parent.parent / "shared" / "data"
    assert shared_data_dir() == (default if default.is_dir() else None)


def test_lines_split_at_newline_only(tmp_path):
    # str.splitlines also splits at U+2028, U+0085 and form feeds: a valid JSONL record
    # holding one was refused (naming its line number) and a text line became two documents
    from dptm._cli_data import load_grouped_texts
    from dptm.datasets import load_jsonl_texts
    recs = [{"text": "alpha\u2028beta", "user": "a"}, {"text": "gamma\x85delta", "user": "b"}]
    p = tmp_path / "d.jsonl"
    p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in recs) + "\r\n",
                 encoding="utf-8")
    assert load_jsonl_texts(p) == [r["text"] for r in recs]
    docs, groups = load_grouped_texts(p, "text", "user")
    assert docs == [r["text"] for r in recs] and list(groups) == ["a", "b"]
    t = tmp_path / "d.txt"
    t.write_text("first document\r\nsecond\x0cdocument here\nthird\x85one\n", encoding="utf-8")
    assert load_text_lines(t) == ["first document", "second\x0cdocument here", "third\x85one"]


def test_grouped_ids_keep_a_trailing_nul(tmp_path):
    from dptm._cli_data import load_grouped_texts
    p = tmp_path / "d.jsonl"
    p.write_text(json.dumps({"text": "x", "u": "a"}) + "\n" + json.dumps({"text": "y", "u": "a\x00"}))
    _, groups = load_grouped_texts(p, "text", "u")
    assert list(groups) == ["a", "a\x00"]
