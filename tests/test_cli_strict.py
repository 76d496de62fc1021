"""A strict CLI and loaders that name the file and the line (issue 17): every flag is
range-checked (argparse error naming the flag, exit status 2), JSONL / CSV / JSON records
are read with --text-key, and broken files give one error line, never a traceback."""
import gzip
import io
import json
import subprocess
import sys

import pytest

from dptm import datasets
from dptm.cli import main


def run(*argv):
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


BAD_FLAGS = [
    ("--test-fraction", "-0.5"), ("--test-fraction", "1"), ("--iterations", "0"),
    ("--prior-fraction", "-1"), ("--prior-fraction", "1"), ("-k", "0"), ("--topics", "-3"),
    ("--min-df", "0"), ("--seed", "-1"), ("--epsilon", "0"), ("--epsilon", "nan"),
    ("--epsilon", "-1"), ("--delta", "0"), ("--delta", "1"), ("--clip", "0"), ("--beta", "-0.1"),
    ("--noise-multiplier", "0"), ("--sample-rate", "0"), ("--sample-rate", "1.5"),
    ("--batch-size", "0"), ("--max-doc-length", "0"), ("--gamma", "0"), ("--gamma", "1"),
    ("--vocab-epsilon", "0"), ("--top-words", "0"), ("--jobs", "0"), ("--jobs", "-2"),
    ("--iterations", "abc"), ("--epsilon", "x"),
]


@pytest.mark.parametrize("flag, value", BAD_FLAGS)
def test_every_flag_is_range_checked(flag, value, capsys):
    code, out = run("fit", flag, value)
    assert code == 2 and out == ""
    err = capsys.readouterr().err
    assert f"argument {flag}" in err or (flag in err and "argument" in err)
    assert "Traceback" not in err
    # one line naming the flag and where to look (docs/guide/cli.md), not the usage block
    assert err.count("\n") == 1 and err.endswith("(see 'dptm fit --help')\n")


@pytest.mark.parametrize("argv, prog", [(["fit", "--epsilon", "4", "--bogus"], "dptm fit"),
                                        (["--bogus", "1"], "dptm fit"),
                                        (["audit", "--bogus"], "dptm audit")])
def test_an_unknown_flag_is_refused_by_its_subcommand(argv, prog, capsys):
    # argparse reported it from the top parser, "dptm: error: ... (see 'dptm --help')",
    # whose help does not list the subcommand's flags
    code, out = run(*argv)
    err = capsys.readouterr().err
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"{prog}: error: unrecognized arguments: --bogus")
    assert err.endswith(f"(see '{prog} --help')\n"), err


@pytest.mark.parametrize("value", ["0", "3", "-2"])
def test_audit_shadows_must_be_even_and_positive(value, capsys):
    code, _ = run("audit", "--shadows", value)
    assert code == 2
    assert "argument --shadows: must be" in capsys.readouterr().err


def test_boundary_values_are_accepted():
    code, out = run("fit", "--test-fraction", "0", "--iterations", "1", "-k", "2",
                    "--jobs", "-1")
    assert code == 0, out


def _fit_words(path, *extra):
    # the non-private model reads the text fields of these toy files (too small for a DP
    # vocabulary); the private default is covered by test_cli_raw_text.py
    code, out = run("fit", "--non-private", "--data", str(path), "-k", "2", "--iterations", "3",
                    "--test-fraction", "0", "--top-words", "20", *extra)
    assert code == 0, out
    return " ".join(line.split(":", 1)[1] for line in out.splitlines()
                    if line.startswith("topic "))


DOCS = ["cats purr softly", "dogs bark loudly", "cats chase dogs", "dogs chase cats"] * 3


def test_jsonl_csv_and_json_records_are_read_by_their_text_field(tmp_path):
    jl = tmp_path / "d.jsonl"
    jl.write_text("\n".join(json.dumps({"id": i, "body": t}) for i, t in enumerate(DOCS)) + "\n")
    words = _fit_words(jl, "--text-key", "body")
    assert "cats" in words and "body" not in words and "id" not in words
    csvp = tmp_path / "d.csv"
    csvp.write_text("id,text\n" + "\n".join(f'{i},"{t}"' for i, t in enumerate(DOCS)) + "\n")
    words = _fit_words(csvp)
    assert "dogs" in words and "text" not in words.split()
    rec = tmp_path / "d.json"
    rec.write_text(json.dumps([{"text": t, "user": "u"} for t in DOCS]))
    words = _fit_words(rec)
    assert "cats" in words and "user" not in words.split()
    gz = tmp_path / "d.jsonl.gz"
    with gzip.open(gz, "wt") as fh:
        fh.write("\n".join(json.dumps(t) for t in DOCS))
    assert "cats" in _fit_words(gz)
    assert datasets.load_texts(gz) == DOCS
    assert datasets.load_texts(csvp) == DOCS
    assert datasets.load_texts(rec) == DOCS


def _write(tmp_path, name, content):
    p = tmp_path / name
    (p.write_bytes if isinstance(content, bytes) else p.write_text)(content)
    return p


def _gzip_bytes(text):
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb") as fh:
        fh.write(text.encode())
    return buf.getvalue()


BROKEN = [
    ("bad.json", '["a b",\n "c" "d"]', r"bad\.json: line 2 column 6: invalid JSON"),
    ("bad.jsonl", '"a b"\n{"text": 1}\n', r"bad\.jsonl: line 2: field 'text' is a number"),
    ("bad2.jsonl", '"a b"\n"c"\n{oops\n', r"bad2\.jsonl: line 3 column 2: invalid JSON"),
    ("nokey.jsonl", '{"body": "x"}\n', r"nokey\.jsonl: line 1: record has no key 'text'"),
    ("rec.json", '[{"text": "a"}, {"body": "b"}]', r"rec\.json: record 1: record has no key"),
    ("bad.csv", "id,body\n1,x\n", r"bad\.csv: line 1: the CSV header has no column 'text'"),
    ("ragged.csv", "id,text\n1,x\n2,y,z\n", r"ragged\.csv: line 3: 3 fields"),
    ("latin.txt", b"ok line\nbad \xe9 line\n",
     r"latin\.txt: line 2: not valid UTF-8 .*; give the file's encoding, e\.g\. "
     r"encoding='cp1252', and check that the words come out right, or convert it first, "
     r"e\.g\. `iconv -f cp1252"),
    ("trunc.txt.gz", _gzip_bytes("a b c\n" * 50)[:-12], r"trunc\.txt\.gz: not a readable gzip"),
    ("notgz.json.gz", b"plain text", r"notgz\.json\.gz: not a readable gzip"),
    ("empty.csv", "", r"empty\.csv: empty CSV file"),
]


@pytest.mark.parametrize("name, content, match", BROKEN)
def test_loaders_name_the_file_and_line(tmp_path, name, content, match):
    p = _write(tmp_path, name, content)
    with pytest.raises(ValueError, match=match):
        datasets.load_texts(p)


@pytest.mark.parametrize("name, content, match", BROKEN)
def test_cli_reports_broken_files_in_one_line(tmp_path, capsys, name, content, match):
    p = _write(tmp_path, name, content)
    code, _ = run("fit", "--data", str(p))
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("dptm fit: error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert name in err


def test_broken_uci_and_tar_files(tmp_path, capsys):
    vocab = _write(tmp_path, "vocab.txt", "a\nb\n")
    trunc = _write(tmp_path, "docword.txt.gz", _gzip_bytes("2\n2\n2\n1 1 1\n2 2 3\n")[:-10])
    with pytest.raises(ValueError, match=r"docword\.txt\.gz: not a readable gzip"):
        datasets.load_uci_bow(trunc, vocab)
    badvocab = _write(tmp_path, "vocab2.txt", b"a\n\xff\n")
    good = _write(tmp_path, "docword2.txt", "2\n2\n2\n1 1 1\n2 2 3\n")
    with pytest.raises(ValueError, match=r"vocab2\.txt: line 2: not valid UTF-8"):
        datasets.load_uci_bow(good, badvocab)
    tar = _write(tmp_path, "C50.tar.gz", _gzip_bytes("not a tar archive" * 100))
    with pytest.raises(ValueError, match=r"C50\.tar\.gz: not a readable tar\.gz archive"):
        datasets.load_reuters_c50(tar)
    code, _ = run("fit", "--data", str(trunc), "--vocab", str(vocab))
    err = capsys.readouterr().err
    assert code == 2 and "docword.txt.gz" in err and "Traceback" not in err


def test_console_script_exit_status_for_a_bad_flag():
    proc = subprocess.run([sys.executable, "-m", "dptm", "fit", "--iterations", "0"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "argument --iterations: must be an integer >= 1, got 0" in proc.stderr


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
@pytest.mark.parametrize("grouped", [False, True])
def test_a_document_longer_than_the_csv_modules_field_limit_is_read(tmp_path, suffix, grouped):
    # the csv module refuses fields over 131,072 characters by default: one long (valid)
    # document made dptm fit refuse the whole file ("malformed CSV", naming its line),
    # an error only the data set holding that document raised. The limit is restored.
    import csv
    from dptm._cli_data import load_grouped_texts
    sep = "\t" if suffix == ".tsv" else ","
    long_doc = " ".join(["storm"] * 40000)                 # 240,000 characters
    path = tmp_path / f"notes{suffix}"
    path.write_text(f"text{sep}user\nrain flood{sep}a\n{long_doc}{sep}b\n")
    limit = csv.field_size_limit()
    if grouped:
        docs, groups = load_grouped_texts(path, "text", "user")
        assert list(groups) == ["a", "b"]
    else:
        docs = datasets.load_csv_texts(path)
    assert docs == ["rain flood", long_doc]
    assert csv.field_size_limit() == limit
