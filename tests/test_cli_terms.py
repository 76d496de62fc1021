"""The command line speaks flags, the Python API parameters: each library error or warning
the CLI shows that names a Python parameter is shown with its flag (dptm._cli_terms, one
table), while the library keeps the Python spelling."""
import io
import random
import re

import pytest

from dptm import datasets
from dptm._cli_terms import to_cli
from dptm.cli import main

# Python spellings that must not reach a CLI user
PYTHON = re.compile(r"(?<![\w-])key=|groups=None|groups given|target_epsilon|one_per_line"
                    r"|fit\(X|vocabulary stage's|encoding='")


def run(*argv):
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


def _fail(capsys, *argv, lines=1):
    code, out = run(*argv)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("dptm fit: error: ") and err.count("\n") == lines, err
    assert not PYTHON.search(err), err
    return err


@pytest.mark.parametrize("name, content, flag", [
    ("nokey.jsonl", '{"body": "x"}\n', "--text-key"),
    ("nocol.csv", "id,body\n1,x\n", "--text-key"),
    ("plain.txt", "a b\nc d\n", "--one-per-line"),
    ("latin.jsonl", b'"ok"\n"caf\xe9"\n', "--encoding cp1252"),
])
def test_loader_errors_name_the_flag_on_the_cli(tmp_path, capsys, name, content, flag):
    path = tmp_path / name
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    err = _fail(capsys, "fit", "--data", str(path))
    assert flag in err
    # ... and the Python API names the parameter, not the flag (catches a library message
    # rewritten to CLI terms, which a Python user cannot act on)
    with pytest.raises(ValueError) as info:
        datasets.load_texts(path, one_per_line=False)
    assert "--" + "text-key" not in str(info.value) and "--one-per-line" not in str(info.value)
    assert "--encoding" not in str(info.value)


def test_empty_dp_vocabulary_names_epsilon_flags(tmp_path, capsys):
    path = tmp_path / "tiny.txt"
    path.write_text("\n".join(["alpha beta gamma delta"] * 5))
    err = _fail(capsys, "fit", "--data", str(path), "--one-per-line", "--epsilon", "0.5")
    # the library says "raise the vocabulary stage's target_epsilon or use more data"; the
    # CLI gives its flags instead, on the same line
    assert "the private vocabulary is empty" in err and "a larger --epsilon or --vocab-share" in err
    assert "target_epsilon" not in err and "or use more data" not in err


def test_privacy_notes_speak_neither_python_nor_flags(tmp_path):
    # the report is printed exactly as published (release.json is read from Python too): its
    # notes are worded for both, so no translation is needed
    rng = random.Random(0)
    words = "apple banana cherry grape lemon mango olive peach pear plum river stone".split()
    path = tmp_path / "docs.txt"
    path.write_text("\n".join(" ".join(rng.choice(words) for _ in range(20)) for _ in range(300)))
    code, out = run("fit", "--data", str(path), "--one-per-line", "-k", "2", "--iterations", "2",
                    "-v")
    assert code == 0
    assert "no user ids given: every document is its own user" in out
    assert not PYTHON.search(out), [ln for ln in out.splitlines() if PYTHON.search(ln)]


@pytest.mark.parametrize("python, cli", [
    ("choose the text field with key=", "choose the text field with --text-key"),
    ("only with one_per_line=True: each", "only with --one-per-line: each"),
    ("e.g. encoding='cp1252', or", "e.g. --encoding cp1252, or"),
    ("groups=None: every document", "without --group-key: every document"),
    ("PrivateBatchLDA (fit(X, groups=...): add", "PrivateBatchLDA (--group-key: add"),
    ("raise the vocabulary stage's target_epsilon", "raise --epsilon or --vocab-share"),
    ("increase target_epsilon or topic_word_prior, or lower clip or max_iter",
     "increase --epsilon or --beta, or lower --clip or --iterations"),
    ("measure on public or held-out text with dptm.guardrails.check_against_unigram before",
     "measure on public or held-out text with --reference-data FILE before"),
    # a field named like a parameter is left alone
    ("record has no key 'text_key' (group_key=)", "record has no key 'text_key' (group_key=)"),
])
def test_table_rewrites_each_spelling(python, cli):
    assert to_cli(python) == cli
