"""--encoding on the command line and ``encoding=`` of the text loaders: a latin-1 corpus read
with its encoding is the same corpus as its UTF-8 copy; a wrong codec name and undecodable
bytes are one-line input errors naming the option."""
import csv
import io
import json

import pytest

from dptm import datasets
from dptm.cli import main

DOCS = [f"café résumé naïve über façade word{i % 7} topic{i % 3} " * 3 for i in range(60)]


def run(*argv):
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


def _write(path, encoding):
    suffix = path.suffix
    if suffix == ".txt":
        path.write_text("\n".join(DOCS), encoding=encoding)
    elif suffix == ".jsonl":
        path.write_text("\n".join(json.dumps({"text": d}, ensure_ascii=False) for d in DOCS),
                        encoding=encoding)
    elif suffix == ".json":
        path.write_text(json.dumps({"text": DOCS}, ensure_ascii=False), encoding=encoding)
    elif suffix == ".csv":
        with open(path, "w", encoding=encoding, newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["text"])
            w.writerows([d] for d in DOCS)
    else:                                                   # a folder: one file per document
        path.mkdir()
        for i, d in enumerate(DOCS):
            (path / f"{i:03d}.txt").write_text(d, encoding=encoding)
    return path


@pytest.mark.parametrize("name", ["docs.txt", "docs.jsonl", "docs.json", "docs.csv", "folder"])
def test_loader_latin1_equals_utf8(tmp_path, name):
    # catches: encoding= accepted but not passed down to one format's reader
    (tmp_path / "u").mkdir()
    (tmp_path / "l").mkdir()
    u = _write(tmp_path / "u" / name, "utf-8")
    lat = _write(tmp_path / "l" / name, "latin-1")
    assert datasets.load_texts(u) == datasets.load_texts(lat, encoding="latin-1")
    assert datasets.load_texts(lat, encoding="latin-1")[0].startswith("café")
    with pytest.raises(ValueError, match="encoding='cp1252'"):
        datasets.load_texts(lat)                            # the default stays utf-8


def test_utf8_bom_still_dropped(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffcafé\nb".encode("utf-8"))
    assert datasets.load_texts(path) == ["café", "b"]
    assert datasets.load_text_lines(path, encoding="UTF8") == ["café", "b"]


@pytest.mark.parametrize("bad", ["nope", "base64", "rot13"])
def test_loader_unknown_codec_names_encoding(tmp_path, bad):
    # base64/rot13 are codecs but not text encodings: refused before any file is read
    path = _write(tmp_path / "docs.txt", "utf-8")
    with pytest.raises(ValueError, match=r"^encoding: unknown text encoding"):
        datasets.load_texts(path, encoding=bad)
    with pytest.raises(ValueError, match=r"^encoding:"):
        datasets.load_text_folder(tmp_path / "missing", encoding=bad)


def test_decode_error_names_file_line_offset_and_options(tmp_path):
    path = tmp_path / "docs.txt"
    path.write_bytes(b"fine line\nsecond ok\ncaf\xe9 here\n")
    with pytest.raises(ValueError) as info:
        datasets.load_text_lines(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: line 3: not valid UTF-8 (byte offset 23")
    # the Python API speaks Python: the keyword first, iconv second
    # (cp1252, not latin-1: latin-1 decodes any bytes, so it would hide a wrong guess)
    assert "encoding='cp1252'" in msg and "--encoding" not in msg
    assert msg.index("encoding='cp1252'") < msg.index("iconv -f cp1252")


def test_decode_error_of_a_utf16_file_suggests_utf16(tmp_path):
    # catches: the cp1252 hint on a file whose byte-order mark says UTF-16 (cp1252 would
    # decode it into junk and the run would fail later with an empty vocabulary)
    path = tmp_path / "docs.txt"
    path.write_bytes("café au lait\nthé\n".encode("utf-16"))
    with pytest.raises(ValueError, match=r"byte offset 0: .*encoding='utf-16'.*iconv -f utf16"):
        datasets.load_text_lines(path)
    assert datasets.load_text_lines(path, encoding="utf-16") == ["café au lait", "thé"]


def test_cli_latin1_same_topics_and_vocab_as_utf8(tmp_path):
    (tmp_path / "u").mkdir()
    (tmp_path / "l").mkdir()
    u = _write(tmp_path / "u" / "d.txt", "utf-8")
    lat = _write(tmp_path / "l" / "d.txt", "latin-1")
    common = ["--one-per-line", "--non-private", "-k", "2", "--seed", "3", "--iterations", "20"]
    code_u, out_u = run("fit", "--data", str(u), *common)
    code_l, out_l = run("fit", "--data", str(lat), "--encoding", "latin-1", *common)
    assert code_u == code_l == 0
    topics = [ln for ln in out_u.splitlines() if ln.startswith("topic")]
    assert topics and any("café" in ln for ln in topics)
    assert topics == [ln for ln in out_l.splitlines() if ln.startswith("topic")]
    # the header line (documents, words, tokens) matches once the path is set aside
    assert out_u.splitlines()[0].replace(str(u), "P") == out_l.splitlines()[0].replace(str(lat), "P")


def test_cli_unknown_codec_is_one_line_exit_2(tmp_path, capsys):
    path = _write(tmp_path / "d.txt", "utf-8")
    code, _ = run("fit", "--data", str(path), "--one-per-line", "--encoding", "nope")
    assert code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "argument --encoding: unknown text encoding 'nope'" in err


def test_cli_decode_error_names_file_line_and_option(tmp_path, capsys):
    path = tmp_path / "d.txt"
    path.write_bytes(b"ok one\ncaf\xe9\n")
    code, _ = run("fit", "--data", str(path), "--one-per-line")
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"{path}: line 2: not valid UTF-8" in err and "--encoding cp1252" in err
    assert "encoding='" not in err and "iconv" in err
