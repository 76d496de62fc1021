"""``dptm`` on a newcomer's path: ``--save`` never replaces an earlier release or file by
accident and refuses before any data is read; every error of a subcommand starts the same
way; and README's "which model for which protection" table claims "each user" only for the
models the CLI runs at user level."""
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from dptm import Release
from dptm.cli import MODELS

from _cli import refused, run

ROOT = Path(__file__).resolve().parents[1]
FAST = ["--non-private", "--iterations", "5", "-k", "2"]       # a fit of about a second




def _earlier_release(path):
    return Release(np.full((2, 3), 1 / 3), doc_topic_prior=0.5, model="earlier").save(path)




# ------------------------------------------------------------------ --save never overwrites
@pytest.mark.parametrize("data", ["demo", "notes.jsonl"])
def test_fit_save_into_a_non_empty_directory_is_refused_before_any_work(
        data, tmp_path, capsys, no_work):
    # catches the silent overwrite (exit 0, the earlier release replaced), and a check made
    # after the fit (the budget spent for nothing: load_corpus is forbidden here); the
    # refusal is the same whatever --data holds: it reads only the path
    rel = tmp_path / "rel"
    _earlier_release(rel)
    before = (rel / "release.json").read_bytes()
    (tmp_path / "notes.jsonl").write_text('{"text": "a b c"}\n')
    err = refused(capsys, "fit", "--data", data if data == "demo" else tmp_path / data,
                  "--save", rel)
    assert err == (f"dptm fit: error: --save {rel}: the directory is not empty; pass "
                   "--overwrite to write the release into it anyway (topics.npz and "
                   "release.json replaced, other files kept)\n")
    assert (rel / "release.json").read_bytes() == before


def test_fit_save_onto_a_file_is_refused_even_with_overwrite(tmp_path, capsys, no_work):
    target = tmp_path / "rel"
    target.write_text("my notes")
    for extra in ([], ["--overwrite"]):
        err = refused(capsys, "fit", "--save", target, *extra)
        assert err.startswith(f"dptm fit: error: --save {target}: exists and is not a "
                              "directory")
    assert target.read_text() == "my notes"


def test_overwrite_writes_into_a_non_empty_directory_and_an_empty_one_needs_nothing(tmp_path):
    rel = tmp_path / "rel"
    _earlier_release(rel)
    (rel / "README.txt").write_text("kept")
    code, out = run("fit", *FAST, "--save", rel, "--overwrite")
    assert code == 0, out
    assert Release.load(rel).model == "GibbsLDA" and (rel / "README.txt").read_text() == "kept"
    empty = tmp_path / "empty"
    empty.mkdir()                               # made beforehand: not a release to protect
    code, out = run("fit", *FAST, "--save", empty)
    assert code == 0 and Release.load(empty).topic_word.shape[0] == 2


@pytest.mark.parametrize("name", ["stats.npz", "stats"])
def test_audit_save_refuses_an_existing_file_before_the_shadow_fits(name, tmp_path, capsys,
                                                                    no_work):
    # "stats" is written as stats.npz (numpy adds the suffix): a check of the literal path
    # alone would let it overwrite
    target = tmp_path / "stats.npz"
    target.write_bytes(b"earlier statistics")
    err = refused(capsys, "audit", "--save", tmp_path / name)
    assert err.startswith(f"dptm audit: error: --save {tmp_path / name}: {target} exists; "
                          "pass --overwrite")
    assert target.read_bytes() == b"earlier statistics"


def test_audit_overwrite_replaces_the_file(tmp_path):
    target = tmp_path / "stats.npz"
    target.write_bytes(b"earlier statistics")
    code, out = run("audit", "--model", "gibbs", "--shadows", "8", "--iterations", "5", "-k",
                    "2", "--save", target, "--overwrite")
    assert code == 0, out
    with np.load(target) as f:
        assert json.loads(str(f["params"]))["n_shadows"] == 8


# ------------------------------------------------------------------ one error prefix
@pytest.mark.parametrize("argv, says", [
    (["fit", "--topics", "0"], "argument -k/--topics"),                # argparse's own
    (["fit", "--data", "no/such/file.jsonl"], "--data: no such file"),  # a loader's
    (["fit", "--model", "gibbs"], "--model gibbs is NOT private"),     # the model choice
    (["fit", "--non-private", "--epsilon", "2"], "--epsilon was given with --non-private"),
    (["audit", "--shadows", "3"], "argument --shadows"),
    (["audit", "--data", "no/such/file.jsonl"], "--data: no such file"),
])
def test_every_error_of_a_subcommand_starts_with_its_prog(argv, says, capsys):
    # catches the hand-written refusals printed as "dptm: error:" beside argparse's
    # "dptm fit: error:"
    err = refused(capsys, *argv)
    assert err.startswith(f"dptm {argv[0]}: error: ") and says in err, err


def test_plot_without_matplotlib_uses_the_same_prefix(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # import matplotlib fails
    err = refused(capsys, "fit", "--plot", "t.png")
    assert err.startswith("dptm fit: error: --plot needs matplotlib"), err


# ------------------------------------------------------------------ README's table
def _protection_table():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Which model for which protection", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("| ") and "---" not in ln]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in rows[1:]]


def test_readme_claims_each_user_only_for_models_the_cli_runs_at_user_level(tmp_path,
                                                                            capsys):
    # catches the TopicDP row under "each user" although the CLI refuses --group-key for
    # topicdp (each document its own user) and its guarantee is only random DP
    notes = tmp_path / "notes.jsonl"
    notes.write_text("".join(json.dumps({"text": "a b", "user": f"u{i}"}) + "\n"
                             for i in range(4)))
    rows = _protection_table()
    assert len(rows) >= 6
    claimed = 0
    for protect, estimators, _ in rows:
        if not protect.replace("*", "").startswith("each user"):
            continue
        for name in re.findall(r"`([a-z+-]+)(?: [^`]*)?`", estimators):
            if name in MODELS:
                claimed += 1
                code, _ = run("fit", "--model", name, "--data", notes, "--group-key", "user",
                              "--iterations", "1", "-k", "2")
                err = capsys.readouterr().err
                assert "has no user-level guarantee" not in err, (name, err)
    assert claimed >= 1                          # the user-level row names its CLI model
    topicdp = [r for r in rows if "`topicdp`" in r[1]]
    assert len(topicdp) == 1 and "random DP" in topicdp[0][2]
    assert "each document its own user" in topicdp[0][1]
