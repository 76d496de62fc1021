"""``dptm fit --vocabulary FILE`` with ``word count`` lines: the counts (public) reach
batch-vb as ``word_counts`` aligned with the words kept (a stop word dropped with its
count), the report lists them as assumed public, a plain word list passes none, and a
malformed line is refused with the file and the line."""
import io
import json

import numpy as np
import pytest

from dptm import Release
from dptm._cli_data import load_corpus
from dptm.cli import build_parser, main

WORDS = ["apple", "banana", "cherry", "grape", "lemon", "mango", "olive", "peach", "plum",
         "quince", "the"]


def run(*argv):
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "docs.jsonl"
    with open(path, "w") as fh:
        for i in range(400):
            words = rng.choice(WORDS[:10], size=rng.integers(3, 12), p=np.r_[[0.3, 0.2],
                                                                               [0.0625] * 8])
            fh.write(json.dumps({"text": " ".join(words)}) + "\n")
    return path


def _vocab(tmp_path, lines):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_counts_reach_the_model_aligned_with_the_kept_words(data, tmp_path):
    lines = [f"{w} {i * 10 + 1}" for i, w in enumerate(WORDS)]      # "the" is a stop word
    a = build_parser().parse_args(["fit", "--data", str(data), "--text-key", "text",
                                   "--vocabulary", str(_vocab(tmp_path, lines))])
    load_corpus(a)
    np.testing.assert_array_equal(a.word_counts, [i * 10 + 1 for i in range(10)])
    save = tmp_path / "rel"
    code, out = run("fit", "--data", str(data), "--text-key", "text", "--vocabulary",
                    str(_vocab(tmp_path, lines)), "-k", "2", "--save", str(save))
    assert code == 0, out
    report = Release.load(str(save)).privacy
    assert "word_counts (given as public)" in report.assumed_public


def test_a_plain_word_list_passes_no_counts(data, tmp_path):
    save = tmp_path / "rel"
    code, out = run("fit", "--data", str(data), "--text-key", "text", "--vocabulary",
                    str(_vocab(tmp_path, WORDS)), "-k", "2", "--save", str(save))
    assert code == 0, out
    assert not any("word_counts" in s for s in Release.load(str(save)).privacy.assumed_public)


@pytest.mark.parametrize("bad, n", [
    ("apple 3\nbanana", 2), ("apple 3\nbanana x", 2), ("apple 3\nbanana -1", 2),
    ("apple 3\nbanana 2 7", 2), ("apple 3\nbanana nan", 2),
    # frequencies were accepted and then trusted as one token's worth of public text
    ("apple 0.75\nbanana 0.25", 1), ("apple 3\n\nbanana 2.5", 3)])
def test_a_malformed_counts_line_is_refused(data, tmp_path, capsys, bad, n):
    path = _vocab(tmp_path, bad.split("\n"))
    code, _ = run("fit", "--data", str(data), "--text-key", "text", "--vocabulary", str(path))
    err = capsys.readouterr().err
    line = bad.split("\n")[n - 1]
    assert code == 2
    assert f"{path}: line {n}: {line!r} is not 'word count' (a word and a whole count" in err, err
    assert "not frequencies" in err


@pytest.mark.parametrize("lines", [["apple 3", "", "banana 1", "apple 4"],
                                   ["apple", "", "banana", "apple"]])
def test_a_repeated_word_is_named_with_both_lines(data, tmp_path, capsys, lines):
    # it said only "repeats words": in a file of thousands of words, not which one; the
    # line numbers count the blank line (they are the editor's)
    path = _vocab(tmp_path, lines)
    code, _ = run("fit", "--data", str(data), "--text-key", "text", "--vocabulary", str(path))
    err = capsys.readouterr().err
    assert code == 2 and f"{path}: line 4: the public vocabulary file repeats the word " \
        "'apple' (first on line 1)" in err, err


def test_a_repeated_stop_word_is_named(data, tmp_path, capsys):
    path = tmp_path / "stop.txt"
    path.write_text("apple\nbanana\napple\n")
    code, _ = run("fit", "--data", str(data), "--text-key", "text", "--stop-words", str(path))
    err = capsys.readouterr().err
    assert code == 2 and "line 3: the stop-word file repeats the word 'apple'" in err, err


@pytest.mark.parametrize("lines, why", [
    ([f"{w} 0" for w in WORDS], "every count of --vocabulary is 0; "),
    ([f"{w} {5 if w == 'the' else 0}" for w in WORDS],
     "every count of --vocabulary is 0 once its stop words are left out"),
])
def test_counts_that_are_all_zero_are_refused(data, tmp_path, capsys, lines, why):
    # they were dropped silently: the run went on without counts, the user believing in them
    code, _ = run("fit", "--data", str(data), "--text-key", "text", "--vocabulary",
                  str(_vocab(tmp_path, lines)))
    assert code == 2 and why in capsys.readouterr().err


def test_a_line_of_two_words_in_a_word_list_is_named(data, tmp_path, capsys):
    # the first line sets the format: before, the message named 'apple' as a bad count line
    path = _vocab(tmp_path, ["apple", "new york", "banana"])
    code, _ = run("fit", "--data", str(data), "--text-key", "text", "--vocabulary", str(path))
    err = capsys.readouterr().err
    assert code == 2 and f"{path}: line 2: 'new york' is not one word" in err, err


def test_a_counts_file_inside_data_is_refused(tmp_path, capsys):
    folder = tmp_path / "notes"
    folder.mkdir()
    for i in range(5):
        (folder / f"{i}.txt").write_text("apple banana cherry apple\n")
    counts = _vocab(folder, ["apple 3", "banana 2"])
    code, _ = run("fit", "--data", str(folder), "--vocabulary", str(counts))
    assert code == 2 and "overlaps --data" in capsys.readouterr().err


def test_a_counts_file_in_its_encoding(data, tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes("caf\xe9 3\napple 9\nbanana 4\n".encode("latin-1"))
    a = build_parser().parse_args(["fit", "--data", str(data), "--text-key", "text",
                                   "--vocabulary", str(path), "--encoding", "latin-1"])
    assert list(load_corpus(a).vocab) == ["café", "apple", "banana"]
    np.testing.assert_array_equal(a.word_counts, [3, 9, 4])


def test_the_counts_add_one_line_to_the_output(data, tmp_path, capsys):
    # seeded runs on the same words, with and without counts: besides the topics (the
    # release, post-processed) only the report's assumed-public line is new; stderr equal
    seen = []
    for lines in (WORDS, [f"{w} {i * 10 + 1}" for i, w in enumerate(WORDS)]):
        code, out = run("fit", "--data", str(data), "--text-key", "text", "--vocabulary",
                        str(_vocab(tmp_path, lines)), "-k", "2", "--seed", "1")
        assert code == 0, out
        seen.append(([x for x in out.splitlines() if not x.startswith("topic ")],
                     capsys.readouterr().err))
    (plain, err_plain), (counted, err_counted) = seen
    assert [x for x in counted if x not in plain] == [
        "  assumed public : word_counts (given as public)"]
    assert len(counted) == len(plain) + 1 and err_counted == err_plain


@pytest.mark.parametrize("word, reads", [("Apple", "; it reads as 'apple'"),
                                         ("ab", ""), ("gene-x", "; it reads as 'gene'")])
def test_a_word_the_text_never_yields_is_refused(data, tmp_path, capsys, word, reads):
    # 'Apple 30' was a silent column of noise (the text is lower-cased) given a public
    # count's share of every topic's background mass: the topics lost apple
    path = _vocab(tmp_path, [f"{word} 30", "banana 20", "cherry 5"])
    code, _ = run("fit", "--data", str(data), "--text-key", "text", "--vocabulary", str(path))
    err = capsys.readouterr().err
    assert code == 2 and f"{path}: the word {word!r} never occurs in the text" in err, err
    assert f"3 to 15 of them{reads})" in err
