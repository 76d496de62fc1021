"""``dptm fit --model topicdp``: the reference corpus is where the unit is measured (one
reference document removed per sample), so it must be read in the unit ``--data`` protects:
a plain-text reference (one document per line) only for plain-text data read per line."""
import io

import pytest

from dptm._cli_data import load_corpus
from dptm.cli import build_parser, main

WORDS = ["flood rain river", "vote poll candidate", "rain river storm", "poll vote senate"]


def run(*argv):
    out = io.StringIO()
    return main([str(a) for a in argv], out=out), out.getvalue()


@pytest.fixture
def corpus(tmp_path):
    data = tmp_path / "notes"
    data.mkdir()
    for i in range(12):        # long documents: several lines each
        (data / f"n{i}.txt").write_text("\n".join(WORDS[i % 4:] + WORDS[:i % 4]))
    public_dir = tmp_path / "public"
    public_dir.mkdir()
    for i in range(12):
        (public_dir / f"p{i}.txt").write_text("\n".join(WORDS[(i + 1) % 4:]))
    lines = tmp_path / "public.txt"
    lines.write_text("\n".join(WORDS * 10))
    vocab = tmp_path / "words.txt"
    vocab.write_text("\n".join(sorted({w for t in WORDS for w in t.split()})))
    return data, public_dir, lines, vocab


def test_plain_text_reference_for_folder_data_is_refused_before_any_fit(corpus, capsys,
                                                                          monkeypatch):
    # catches the sensitivity measured by removing one reference LINE, reported for
    # neighbours differing in a whole document (a file of several lines)
    import dptm.cli

    def forbidden(*args, **kwargs):
        raise AssertionError("a model was fitted before the refusal")

    monkeypatch.setattr(dptm.cli, "_fit_model", forbidden)
    data, _, lines, vocab = corpus
    code, out = run("fit", "--model", "topicdp", "--data", data, "--vocabulary", vocab,
                    "--reference-data", lines, "--gamma", "0.5", "-k", "2")
    err = capsys.readouterr().err
    assert code == 2 and out == "" and err.count("\n") == 1, (code, out, err)
    assert f"--reference-data {lines} is plain text" in err
    assert "LINE" in err and "--one-per-line" in err and f"--data {data}" in err


def _loaded(*argv):
    a = build_parser().parse_args(["fit", *map(str, argv)])
    a.epsilon_given, a.epsilon = False, 4.0
    return a, load_corpus(a)


def test_reference_in_the_unit_of_the_data_is_accepted(corpus, tmp_path):
    data, public_dir, lines, vocab = corpus
    # a folder for a folder: one reference document per file, as the private ones
    a, _ = _loaded("--model", "topicdp", "--data", data, "--vocabulary", vocab,
                   "--reference-data", public_dir)
    assert a.reference_X.shape[0] == 12
    # lines for lines
    private_lines = tmp_path / "private.txt"
    private_lines.write_text("\n".join(WORDS * 3))
    a, _ = _loaded("--model", "topicdp", "--data", private_lines, "--one-per-line",
                   "--vocabulary", vocab, "--reference-data", lines)
    assert a.reference_X.shape[0] == 40


def test_other_models_keep_a_plain_text_reference_for_evaluation(corpus):
    # a reference only evaluated on (no unit measured there) stays one document per line
    data, _, lines, vocab = corpus
    a, out = _loaded("--model", "batch-vb", "--data", data, "--vocabulary", vocab,
                     "--reference-data", lines)
    assert out.X_eval.shape[0] == 40


@pytest.mark.parametrize("how", [("--sensitivity", "0.1"), ("--reference-data", "PUBLIC")])
def test_the_report_says_document_level_as_the_header_does(corpus, how):
    # each document is its own user: the report said "user-level: ... all documents of one
    # user" under a header saying "each document its own user", and release.json kept it
    data, public_dir, _, vocab = corpus
    flag, value = how
    code, out = run("fit", "--model", "topicdp", "--data", data, "--vocabulary", vocab,
                    flag, public_dir if value == "PUBLIC" else value, "--gamma", "0.5",
                    "-k", "2", "--epsilon", "4")
    assert code == 0, out
    assert "adjacency  : document-level" in out and "user-level" not in out, out
