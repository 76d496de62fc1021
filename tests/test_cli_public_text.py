"""``dptm fit --public-text PATH``: public documents of the same kind as ``--data`` give
batch-vb its vocabulary (their most frequent words, or a ``--vocabulary`` word list's), the
words' raw counts (``word_counts``) and its starting topics (``init_topics``: scikit-learn's
batch LDA on them); nothing of it depends on the private text (neighbouring data sets get
the same vocabulary, counts, topics and report lines); the report declares them public by
the file's name; flags it does not go with are refused before the private data is read."""
import json
import os
from collections import Counter

import numpy as np
import pytest
from sklearn.decomposition import LatentDirichletAllocation

import dptm._cli_public as public
import dptm.models.private_vb as private_vb
from dptm import Release
from dptm.cli import _check_model_choice, build_parser
from dptm.text import preprocess, tokens_to_matrix

from _cli import refused, run

pytestmark = [pytest.mark.filterwarnings(f"ignore::dptm.exceptions.{w}") for w in (
    "UtilityWarning", "SeededPrivacyWarning", "UninformativeModelWarning")]

SHARED = ["apple", "banana", "cherry", "grape", "lemon", "mango", "olive", "peach", "plum",
          "quince"]
PUBLIC_ONLY = ["river", "stone"]
PRIVATE_ONLY = "zebra"


def _jsonl(path, texts, **fields):
    with open(path, "w") as fh:
        for i, t in enumerate(texts):
            fh.write(json.dumps({"text": t, **{k: v[i] for k, v in fields.items()}}) + "\n")
    return path


def _texts(seed, n, words, p=None):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(words, size=rng.integers(5, 15), p=p)) for _ in range(n)]


@pytest.fixture
def pub(tmp_path):
    # word frequencies fall with the word's place: the most frequent words are known
    words = SHARED + PUBLIC_ONLY
    p = np.arange(len(words), 0, -1.0)
    return _jsonl(tmp_path / "forum_posts.jsonl", _texts(1, 150, words, p / p.sum()))


@pytest.fixture
def priv(tmp_path):
    texts = _texts(2, 200, SHARED + [PRIVATE_ONLY])
    return _jsonl(tmp_path / "private.jsonl", texts, user=[f"u{i % 37}" for i in range(200)])


def _prepared(*argv):
    a = build_parser().parse_args(["fit", *map(str, argv)])
    _check_model_choice(a)
    public.prepare_public_text(a)
    return a


def _public_counts(path):
    tokens = preprocess([json.loads(line)["text"] for line in open(path)])
    return Counter(t for doc in tokens for t in doc), tokens


@pytest.fixture
def spy(monkeypatch):
    """The init_topics and word_counts each PrivateBatchLDA of the run was built with."""
    seen = []

    class Spy(private_vb.PrivateBatchLDA):
        def fit(self, X, y=None, groups=None):
            seen.append((self.init_topics, self.word_counts, X.shape))
            return super().fit(X, y, groups=groups)

    monkeypatch.setattr(private_vb, "PrivateBatchLDA", Spy)
    return seen


def test_vocabulary_counts_and_topics_come_from_the_public_text(pub, priv, tmp_path, spy):
    save = tmp_path / "rel"
    code, out = run("fit", "--data", priv, "--public-text", pub, "-k", 3, "--epsilon", 1,
                    "--save", save)
    assert code == 0, out
    counts, tokens = _public_counts(pub)
    release = Release.load(str(save))
    # every public word (fewer than VOCABULARY_SIZE), alphabetically; never the private-only
    assert list(release.vocabulary) == sorted(counts)
    assert PRIVATE_ONLY not in release.vocabulary and "river" in release.vocabulary
    init, word_counts, shape = spy[0]
    assert shape == (200, len(counts))              # every private document, over those words
    np.testing.assert_array_equal(word_counts, [counts[w] for w in sorted(counts)])
    X, _ = tokens_to_matrix(tokens, vocabulary=sorted(counts))
    lda = LatentDirichletAllocation(3, learning_method="batch", random_state=0).fit(X)
    np.testing.assert_allclose(init, lda.components_)
    report = release.privacy
    assert {"init_topics (given as public)", "word_counts (given as public)"} <= set(
        report.assumed_public)
    # the file's name, not its path (a path tells about the machine)
    assert "public text forum_posts.jsonl" in report.vocabulary
    assert str(tmp_path) not in (save / "release.json").read_text()
    assert "vocabulary : public (the 12 most frequent words of the public text " in out


def test_the_most_frequent_words_ties_alphabetically(tmp_path, priv, monkeypatch):
    monkeypatch.setattr(public, "VOCABULARY_SIZE", 3)
    path = _jsonl(tmp_path / "p.jsonl", ["stone stone stone river river apple",
                                         "banana banana cherry cherry grape"])
    a = _prepared("--data", priv, "--public-text", path)
    # stone 3, then river, banana, cherry 2 each: banana and cherry lose to... the alphabet
    assert a.public_words == ["banana", "cherry", "stone"]
    np.testing.assert_array_equal(a.word_counts, [2, 2, 3])
    assert "the 3 most frequent words of the public text p.jsonl" in a.public_provenance


def test_stop_words_and_the_reader_options_apply_to_the_public_text(tmp_path, priv):
    stop = tmp_path / "stop.txt"
    stop.write_text("apple\n")
    lines = tmp_path / "notes.txt"
    lines.write_text("apple banana the\ncherry banana\n")
    a = _prepared("--data", priv, "--public-text", lines, "--one-per-line", "--stop-words",
                  stop)
    assert a.public_words == ["banana", "cherry"]       # "the" and --stop-words left out
    assert a.public_X.shape == (2, 2)                   # one document per line


def test_a_word_list_takes_counts_and_topics_from_the_public_text(pub, priv, tmp_path, spy):
    vocab = tmp_path / "words.txt"
    vocab.write_text("apple\nzebra\nriver\nthe\n")      # "the": a stop word, left out
    save = tmp_path / "rel"
    code, out = run("fit", "--data", priv, "--public-text", pub, "--vocabulary", vocab,
                    "-k", 2, "--save", save)
    assert code == 0, out
    counts, _ = _public_counts(pub)
    release = Release.load(str(save))
    assert list(release.vocabulary) == ["apple", "zebra", "river"]    # the list's order
    init, word_counts, _ = spy[0]
    np.testing.assert_array_equal(word_counts, [counts["apple"], 0, counts["river"]])
    assert init.shape == (2, 3)
    assert release.privacy.vocabulary == (
        "public (given: words.txt; its 1 stop word left out; the words' counts and the "
        "starting topics from the public text forum_posts.jsonl)")


def test_neighbouring_private_data_get_the_same_public_inputs_and_report(pub, tmp_path, spy):
    """D and D plus one document (a word the public text lacks, the rarest public word made
    the most frequent): the vocabulary, counts, starting topics and the report's vocabulary
    and assumed-public lines are the same; the private text only moves the noisy topics."""
    base = _texts(3, 120, SHARED)
    lines = {}
    for name, texts in (("d", base), ("d1", base[:60] + [f"{PRIVATE_ONLY} " + "stone " * 40]
                                       + base[60:])):
        data = _jsonl(tmp_path / f"{name}.jsonl", texts)
        save = tmp_path / f"rel-{name}"
        code, out = run("fit", "--data", data, "--public-text", pub, "-k", 2, "--seed", 5,
                        "--save", save)
        assert code == 0, out
        release = Release.load(str(save))
        lines[name] = (list(release.vocabulary), release.privacy.vocabulary,
                       release.privacy.assumed_public,
                       [ln for ln in out.splitlines()
                        if ln.strip().startswith(("vocabulary :", "assumed public :"))])
    assert lines["d"] == lines["d1"]
    (init0, counts0, shape0), (init1, counts1, shape1) = spy
    np.testing.assert_array_equal(init0, init1)
    np.testing.assert_array_equal(counts0, counts1)
    assert shape1[0] == shape0[0] + 1 and shape0[1] == shape1[1]


def test_user_level_fit_with_public_text(pub, priv, tmp_path, spy):
    save = tmp_path / "rel"
    code, out = run("fit", "--data", priv, "--group-key", "user", "--public-text", pub,
                    "-k", 2, "--save", save)
    assert code == 0, out
    report = Release.load(str(save)).privacy
    assert report.adjacency == "user"
    assert "init_topics (given as public)" in report.assumed_public
    assert "DP vocabulary" not in out               # the words are public: no budget for them
    assert spy[0][0] is not None


def test_curve_with_public_text_fits_the_starting_topics_once(pub, priv, tmp_path, spy,
                                                              monkeypatch):
    fits = []
    real = LatentDirichletAllocation.fit
    monkeypatch.setattr(LatentDirichletAllocation, "fit",
                        lambda self, X, y=None: fits.append(1) or real(self, X))
    ref = _jsonl(tmp_path / "reference.jsonl", _texts(4, 40, SHARED + PUBLIC_ONLY))
    code, out = run("fit", "--data", priv, "--public-text", pub, "--reference-data", ref,
                    "--epsilons", "1,4", "-k", 2)
    assert code == 0, out
    assert "perplexity" in out and len(spy) == 2 and len(fits) == 1
    assert spy[0][0] is spy[1][0]                   # one public fit for every epsilon



def test_the_measurement_gives_the_public_topics_alone(pub, priv, tmp_path, spy):
    # catches: a release worse than the free public starting topics, printed with nothing to
    # compare it to (a user-level fit on 992 authors came to 1.26x the unigram model, the
    # public topics alone to 0.91x); or the figure computed on other topics or words
    ref = _jsonl(tmp_path / "reference.jsonl", _texts(4, 40, SHARED + PUBLIC_ONLY))
    code, out = run("fit", "--data", priv, "--public-text", pub, "--reference-data", ref,
                    "-k", 3, "--epsilon", 1, "--json")
    assert code == 0, out
    metrics = json.loads(out)["metrics"]
    counts, _ = _public_counts(pub)
    X_ref, _ = tokens_to_matrix(preprocess([json.loads(line)["text"] for line in open(ref)]),
                                vocabulary=sorted(counts))
    alone = Release(spy[0][0], doc_topic_prior=1 / 3).perplexity(X_ref)
    assert metrics["public_topics_perplexity"] == pytest.approx(alone)
    assert metrics["public_topics_unigram_ratio"] == pytest.approx(
        alone / metrics["unigram_perplexity"])
    assert metrics["public_topics_perplexity"] != pytest.approx(metrics["heldout_perplexity"])
    code, out = run("fit", "--data", priv, "--public-text", pub, "--reference-data", ref,
                    "-k", 3, "--epsilon", 1)
    assert f"the starting topics of --public-text alone, no budget spent: {alone:.2f}" in out
    words = tmp_path / "words.txt"
    words.write_text("\n".join(SHARED) + "\n")
    code, out = run("fit", "--data", priv, "--vocabulary", words, "--reference-data", ref,
                    "-k", 3, "--epsilon", 1)
    assert code == 0 and "private / unigram" in out and "--public-text alone" not in out

# ------------------------------------------------------------------------------- refusals
def _refusals(tmp_path, pub, priv):
    counts = tmp_path / "counts.txt"
    counts.write_text("apple 3\nbanana 2\n")
    unknown = tmp_path / "unknown.txt"
    unknown.write_text("walrus\n")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    stops = tmp_path / "stops.txt"
    stops.write_text("the and\nof it\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "a.txt").write_text("apple banana")
    link = tmp_path / "link.jsonl"
    link.symlink_to(priv)
    P = ["--public-text", pub]
    return [
        (["--model", "vips", "--total-samples", 100, *P], "--model vips takes none of them"),
        (["--non-private", *P], "a --non-private model reads them from --data itself"),
        (["--vocab", tmp_path / "vocab.txt", *P], "--data with --vocab is a UCI bag of words"),
        (["--data", "demo", *P], "the demo corpus has its own public vocabulary"),
        (["--public-text", priv], "overlaps --data"),
        (["--public-text", link], "overlaps --data"),
        (["--public-text", tmp_path / "missing.jsonl"], "--public-text: no such file"),
        (["--public-text", empty, "--one-per-line"], "no documents"),
        (["--public-text", stops, "--one-per-line"], "no word is left once the text is read"),
        # plain text as --data is read: one document per line only when asked
        (["--public-text", stops], f"--public-text {stops}: a plain text file is read as one "
                                   "document per line only with --one-per-line"),
        (["--vocabulary", counts, *P], "two sources of counts"),
        (["--vocabulary", unknown, *P], "none of the words of --vocabulary"),
        (["--reference-data", pub, *P], "--reference-data"),
        (["--epsilons", "1,2", "--reference-data", pub, *P], "is not held out"),
        (["--data", folder, "--public-text", folder / "a.txt"], "overlaps --data"),
    ]


def test_refusals_come_before_the_private_data(pub, priv, tmp_path, capsys, no_work):
    for extra, needle in _refusals(tmp_path, pub, priv):
        argv = extra if "--data" in extra else ["--data", priv, *extra]
        err = refused(capsys, "fit", *argv)
        assert err.startswith("dptm fit: error: ") and needle in err, (extra, err)
        assert "--public-text" in err, err


def test_a_public_folder_holding_the_private_file_is_refused(tmp_path, capsys, no_work):
    folder = tmp_path / "texts"
    folder.mkdir()
    data = _jsonl(folder / "private.jsonl", ["apple banana"])
    err = refused(capsys, "fit", "--data", data, "--public-text", folder)
    assert f"--public-text {folder} overlaps --data {data}" in err
    assert os.path.exists(data)


@pytest.mark.parametrize("fmt", ["csv", "folder", "txt"])
def test_the_public_text_is_read_as_data_is(tmp_path, fmt):
    """Records under --text-key, a folder (one document per file), lines with --one-per-line."""
    texts = ["stone stone river", "river apple", "apple apple apple"]
    data = tmp_path / "private.jsonl"
    data.write_text(json.dumps({"body": "zebra mango"}) + "\n")
    extra = ["--text-key", "body"]
    if fmt == "csv":
        path = tmp_path / "public.csv"
        path.write_text("id,body\n" + "".join(f"{i},{t}\n" for i, t in enumerate(texts)))
    elif fmt == "folder":
        path = tmp_path / "public"
        path.mkdir()
        for i, t in enumerate(texts):
            (path / f"{i}.txt").write_text(t)
    else:
        path = tmp_path / "public.txt"
        path.write_text("\n".join(texts) + "\n")
        extra.append("--one-per-line")
    a = _prepared("--data", data, "--public-text", path, *extra)
    assert a.public_words == ["apple", "river", "stone"]
    np.testing.assert_array_equal(a.word_counts, [4, 2, 2])
    assert a.public_X.shape == (3, 3)                   # three public documents


def test_few_public_documents_are_flagged_from_their_public_number(pub, priv, tmp_path):
    # catches: 20 public documents taken as silently as 5,000 (the run then said "no
    # concern found"); or a warning that reads the private text (it must not depend on it)
    import warnings

    from dptm.exceptions import UtilityWarning
    with pytest.warns(UtilityWarning, match="only 150 documents; the starting topics were "):
        _prepared("--data", priv, "--public-text", pub)
    many = _jsonl(tmp_path / "many.jsonl", _texts(3, public.FEW_DOCUMENTS, SHARED))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UtilityWarning)
        _prepared("--data", priv, "--public-text", many)
