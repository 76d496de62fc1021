"""The ``dptm`` command: the main job on the embedded corpus, every model, data files,
errors."""
import gzip
import io
import json
import subprocess
import sys

import numpy as np
import pytest

from dptm.cli import MODELS, main


def run(*argv):
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def test_main_job_on_demo_corpus():
    code, out = run()
    assert code == 0
    assert "embedded demo corpus" in out
    topics = [line for line in out.splitlines() if line.startswith("topic ")]
    assert len(topics) == 8 and all(len(t.split(":")[1].split()) == 10 for t in topics)
    assert "held-out perplexity" in out and "UMass coherence" in out
    assert "privacy: none" in out


@pytest.mark.parametrize("model", sorted(set(MODELS) - {"gibbs"}))
def test_every_private_model_prints_its_privacy_report(model):
    code, out = run("fit", "--model", model, "--iterations", "3", "-k", "4")
    assert code == 0, out
    assert "Privacy report" in out and "adjacency" in out and "epsilon =" in out


def test_uci_and_json_inputs(tmp_path):
    docword = tmp_path / "docword.toy.txt.gz"
    rows = [(1, 1, 3), (1, 2, 1), (2, 2, 2), (2, 3, 4), (3, 1, 1), (3, 3, 2)]
    with gzip.open(docword, "wt") as fh:
        fh.write(f"3\n3\n{len(rows)}\n" + "".join(f"{d} {w} {c}\n" for d, w, c in rows))
    vocab = tmp_path / "vocab.toy.txt"
    vocab.write_text("apple\nbanana\ncherry\n")
    code, out = run("fit", "--data", str(docword), "--vocab", str(vocab), "-k", "2",
                    "--iterations", "5", "--test-fraction", "0")
    assert code == 0 and "3 words" in out and "cherry" in out
    texts = tmp_path / "texts.json"
    texts.write_text(json.dumps(["the cat sat on the mat", "dogs chase cats", "mat and hat"]))
    code, out = run("fit", "--data", str(texts), "-k", "2", "--iterations", "5",
                    "--test-fraction", "0")
    assert code == 0 and "mat" in out


def test_errors_are_reported_not_raised(tmp_path, capsys):
    code, _ = run("fit", "--data", str(tmp_path / "missing.txt"))
    assert code == 2
    assert "no such file" in capsys.readouterr().err
    code, _ = run("fit", "-k", "0")
    assert code == 2
    assert "argument -k/--topics: must be an integer >= 1, got 0" in capsys.readouterr().err


def test_python_dash_m_entry_point():
    proc = subprocess.run([sys.executable, "-m", "dptm", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "fit" in proc.stdout


def test_audit_command_prints_attack_table_and_privacy(tmp_path):
    save = tmp_path / "lira.npz"
    code, out = run("audit", "--model", "hdp-lda", "--shadows", "4", "--iterations", "5",
                    "-k", "4", "--save", str(save))
    assert code == 0, out
    assert "LiRA online (zeta)" in out and "LiRA offline (zeta)" in out and "AUC" in out
    assert "Privacy report" in out
    assert save.exists()
