"""``dptm fit --group-key FIELD``: user-level privacy from the command line. The training
sets the model sees on D and on D plus one user (all their documents, anywhere in the file)
are add/remove-user neighbours (no data-dependent split, every user id carried along); the
printed report and the release say user-level; a model without a user-level guarantee, a
record without the user id and inputs without records are refused with a message naming
the flag, the file and the line. Also: ``--epsilon`` with ``--non-private`` is an error,
and the small-vocabulary warning is shown once."""
import csv
import io
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from dptm import Release
from dptm.cli import main
from dptm.datasets import load_demo_corpus
from dptm.text import preprocess

pytestmark = pytest.mark.filterwarnings("ignore::dptm.exceptions.UtilityWarning")

DEMO = load_demo_corpus()


def run(*argv):
    out = io.StringIO()
    return main([str(a) for a in argv], out=out), out.getvalue()


def refused(capsys, *argv):
    code, _ = run(*argv)
    assert code == 2
    return capsys.readouterr().err


def users_of(n):
    """Heavy-tailed authorship: one user with 60 documents, then users of 1-3 documents."""
    sizes = [60] + list(np.resize([1, 2, 3, 1, 1], n))
    owner = np.repeat(np.arange(len(sizes)), sizes)[:n]
    return [f"user-{i}" for i in owner]


def write(path, texts, users, fmt, group_field="user"):
    if fmt == "jsonl":
        path = path.with_suffix(".jsonl")
        path.write_text("".join(json.dumps({"text": t, group_field: u}) + "\n"
                                for t, u in zip(texts, users)))
    else:
        path = path.with_suffix(".csv")
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["text", group_field])
            w.writerows(zip(texts, users))
    return path


# ------------------------------------------------------------------ neighbouring training sets
class _Stop(Exception):
    """Raised by the recording fit: the test needs what the model is given, not a fit."""


def _captured(monkeypatch, path, *flags):
    from dptm.models.private_vb import PrivateBatchLDA
    from dptm.pipeline import FullyPrivateTopicModel
    seen = {}

    def fdptm_fit(self, documents, groups=None, **kw):
        seen.update(rows=[list(d) for d in documents], groups=list(groups))
        raise _Stop

    def batch_fit(self, X, y=None, groups=None):
        seen.update(rows=[tuple(r) for r in X.toarray()], groups=list(groups))
        raise _Stop

    monkeypatch.setattr(FullyPrivateTopicModel, "fit", fdptm_fit)
    monkeypatch.setattr(PrivateBatchLDA, "fit", batch_fit)
    with pytest.raises(_Stop):
        main(["fit", "--data", str(path), "--group-key", "user", "-k", "3",
              *map(str, flags)], out=io.StringIO())
    return seen


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
@pytest.mark.parametrize("vocabulary", [False, True], ids=["dp-vocabulary", "public-vocabulary"])
def test_training_sets_of_user_neighbours_are_add_remove_neighbours(fmt, vocabulary, tmp_path,
                                                                    monkeypatch):
    texts, users = DEMO.texts[:200], users_of(200)
    # the added user's 25 documents scattered through the file (and one at each end)
    rng = np.random.default_rng(0)
    added = [DEMO.texts[200 + i] for i in range(25)]
    where = np.sort(np.concatenate([[0, 200], rng.integers(0, 201, 23)]))
    texts2, users2 = list(texts), list(users)
    for j, w in enumerate(where[::-1]):
        texts2.insert(int(w), added[24 - j])
        users2.insert(int(w), "the-added-user")
    flags = []
    if vocabulary:
        words = tmp_path / "words.txt"
        words.write_text("\n".join(DEMO.vocabulary) + "\n")
        flags = ["--vocabulary", words]
    a = _captured(monkeypatch, write(tmp_path / "d", texts, users, fmt), *flags)
    b = _captured(monkeypatch, write(tmp_path / "d2", texts2, users2, fmt), *flags)
    # every document, in the order given, each with its own user id
    assert a["groups"] == users and len(a["rows"]) == 200
    if not vocabulary:
        assert a["rows"] == preprocess(texts)
    keep = [g != "the-added-user" for g in b["groups"]]
    assert sum(not k for k in keep) == 25
    assert [r for r, k in zip(b["rows"], keep) if k] == a["rows"]
    assert [g for g, k in zip(b["groups"], keep) if k] == a["groups"]
    added_rows = [r for r, k in zip(b["rows"], keep) if not k]
    if not vocabulary:
        assert added_rows == preprocess([texts2[i] for i, k in enumerate(keep) if not k])


# ------------------------------------------------------------------ the printed report
@pytest.fixture(scope="module")
def grouped_jsonl(tmp_path_factory):
    return write(tmp_path_factory.mktemp("grouped") / "notes", DEMO.texts, users_of(800),
                 "jsonl")


def test_raw_text_run_is_user_level_end_to_end(grouped_jsonl, tmp_path):
    code, out = run("fit", "--data", grouped_jsonl, "--group-key", "user", "-k", "4",
                    "--epsilon", "4", "--save", tmp_path / "rel")
    assert code == 0, out
    head, report = out.split("Privacy report", 1)
    assert "user-level DP: private batch VB, all documents of one user (--group-key user)" in head
    assert ("split into a user-level DP vocabulary (epsilon 2, delta 5e-06; at most 10 distinct "
            "words per user) and the model (epsilon 2, delta 5e-06)") in head
    assert "adjacency  : user-level: neighbouring corpora differ by adding or removing all " \
           "documents of one user" in report
    assert "stage 1: DP vocabulary (user-level)" in report
    rel = Release.load(tmp_path / "rel")
    assert rel.privacy.adjacency == "user"
    printed = float(re.search(r"composed total epsilon = ([\d.]+)", out).group(1))
    assert printed == pytest.approx(rel.privacy.epsilon(rel.privacy.default_delta), rel=1e-5)
    assert printed <= 4.0 * (1 + 1e-6)
    # no user id, no count of users or documents on screen
    assert "user-0" not in out and " 800 " not in out


@pytest.mark.parametrize("vocabulary", [False, True], ids=["dp-vocabulary", "public-vocabulary"])
def test_printed_user_level_report_names_the_cli_flags(vocabulary, grouped_jsonl, tmp_path):
    # catches the library's "(groups)" and "max_contribution" printed to a CLI user, and a
    # rewording that leaks into the published release.json (read by Python users too)
    flags = ["--vocabulary", tmp_path / "words.txt"] if vocabulary else []
    (tmp_path / "words.txt").write_text("\n".join(DEMO.vocabulary) + "\n")
    code, out = run("fit", "--data", grouped_jsonl, "--group-key", "user", "-k", "2", "-v",
                    "--vocab-cap", "7", *flags, "--save", tmp_path / "rel")
    assert code == 0, out
    report = out.split("Privacy report", 1)[1]
    assert "the user of each document (--group-key user) is given" in report
    assert "(groups)" not in report and "max_contribution" not in report
    if not vocabulary:
        assert ("--group-key user given: both stages are user-level (add or remove one user "
                "with all their documents); the vocabulary counts at most --vocab-cap 7 "
                "distinct words per user") in report
    published = str(Release.load(tmp_path / "rel").privacy)
    assert "the user of each document (groups) is given" in published
    assert "--group-key" not in published and "--vocab-cap" not in published
    # only those words differ: the printed report is the published one otherwise
    printed = report.split("\n\n", 1)[0]
    assert re.sub(r"\(--group-key user\)|--group-key user given|--vocab-cap 7", "#",
                  printed) == re.sub(r"\(groups\)|groups given|max_contribution", "#",
                                     published.split("Privacy report", 1)[1]).rstrip("\n")


def test_public_vocabulary_run_is_user_level(grouped_jsonl, tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("\n".join(DEMO.vocabulary) + "\n")
    code, out = run("fit", "--data", grouped_jsonl, "--group-key", "user", "-k", "4",
                    "--vocabulary", words, "--json")
    assert code == 0, out
    result = json.loads(out)
    assert result["privacy"]["adjacency"] == "user"
    assert result["description"].startswith("user-level DP")
    assert result["total_epsilon"] <= 4.0 * (1 + 1e-6)


def test_without_group_key_the_same_file_is_document_level(grouped_jsonl):
    code, out = run("fit", "--data", grouped_jsonl, "-k", "4")
    assert code == 0
    assert "adjacency  : document-level" in out
    assert "user-level DP" not in out and "per user" not in out


def _masked(out):
    """The printed lines with every number masked and the topics' word lines dropped: what
    may differ between neighbours only through the noise."""
    lines = [ln for ln in out.splitlines() if not ln.startswith("topic ")]
    return [re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "#", ln) for ln in lines]


@pytest.mark.parametrize("vocabulary", [False, True], ids=["dp-vocabulary", "public-vocabulary"])
def test_printed_output_of_user_neighbours_differs_only_in_noisy_numbers(vocabulary, tmp_path):
    users = users_of(800)
    # the added user: 40 copies of one long document, at the front of the file
    texts2 = [" ".join([DEMO.texts[0]] * 4)] * 40 + list(DEMO.texts)
    users2 = ["the-added-user"] * 40 + users
    flags = ["--group-key", "user", "-k", "2", "--epsilon", "8"]
    if vocabulary:
        words = tmp_path / "words.txt"
        words.write_text("\n".join(DEMO.vocabulary) + "\n")
        flags += ["--vocabulary", words]
    outs = []
    for t, u in ((DEMO.texts, users), (texts2, users2)):
        path = write(tmp_path / "notes", t, u, "jsonl")         # the same file name for both
        code, out = run("fit", "--data", path, *flags)
        assert code == 0, out
        outs.append(out)
    assert _masked(outs[0]) == _masked(outs[1])
    assert "the-added-user" not in outs[1]
    # and no number printed is a count of the private data (masking would hide one)
    for out, t, u in ((outs[0], DEMO.texts, users), (outs[1], texts2, users2)):
        counts = {len(t), len(set(u)), sum(len(d) for d in preprocess(t))}
        assert not counts & {int(n) for n in re.findall(r"(?<![\d.])\d+(?![\d.])", out)}


# ------------------------------------------------------------------ errors
def test_a_record_without_the_user_id_names_the_file_and_line(tmp_path, capsys):
    path = tmp_path / "notes.jsonl"
    path.write_text(json.dumps({"text": "a b", "user": "x"}) + "\n\n"
                    + json.dumps({"text": "c d"}) + "\n")
    err = refused(capsys, "fit", "--data", path, "--group-key", "user")
    assert f"{path}: line 3: record has no user id field 'user' (--group-key" in err
    path.write_text(json.dumps({"text": "a b", "user": None}) + "\n")
    err = refused(capsys, "fit", "--data", path, "--group-key", "user")
    assert f"{path}: line 1: the user id field 'user' (--group-key) is empty" in err
    path.write_text(json.dumps({"text": "a b", "user": ["x"]}) + "\n")
    assert "is a list, not a string or number" in refused(
        capsys, "fit", "--data", path, "--group-key", "user")
    path.write_text(json.dumps("just a string") + "\n")
    assert f"{path}: line 1: expected an object" in refused(
        capsys, "fit", "--data", path, "--group-key", "user")


def test_a_csv_without_the_column_or_with_an_empty_cell_is_refused(tmp_path, capsys):
    path = tmp_path / "notes.csv"
    path.write_text("text,author\na b,x\n")
    err = refused(capsys, "fit", "--data", path, "--group-key", "user")
    assert f"{path}: line 1: the CSV header has no column 'user'" in err and "--group-key" in err
    path.write_text("text,user\na b,x\nc d,\n")
    assert f"{path}: line 3: the user id field 'user' (--group-key) is empty" in refused(
        capsys, "fit", "--data", path, "--group-key", "user")


def test_ids_are_read_as_text_and_blank_lines_skipped(tmp_path):
    from dptm._cli_data import load_grouped_texts
    path = tmp_path / "n.jsonl"
    path.write_text('{"text": "a", "u": 7}\n\n{"text": "b", "u": "7"}\n{"text": "c", "u": 7.5}\n')
    docs, groups = load_grouped_texts(path, "text", "u")
    assert docs == ["a", "b", "c"] and groups.tolist() == ["7", "7", "7.5"]
    path = tmp_path / "n.tsv"
    path.write_text("u\ttext\n 7 \ta\n\n8\tb\n")
    docs, groups = load_grouped_texts(path, "text", "u")
    assert docs == ["a", "b"] and groups.tolist() == ["7", "8"]


@pytest.mark.parametrize("model", ["vips", "fdptm", "topicdp", "hdp-lda", "lp-lda"])
def test_a_model_without_a_user_level_guarantee_is_refused(model, grouped_jsonl, capsys):
    err = refused(capsys, "fit", "--model", model, "--data", grouped_jsonl, "--group-key", "user")
    assert (f"--group-key asks for user-level privacy (every document of one user protected "
            f"together), but --model {model} has no user-level guarantee; use --model "
            "batch-vb") in err


def test_group_key_needs_records_and_a_private_single_fit(grouped_jsonl, tmp_path, capsys):
    assert "the non-private --model gibbs protects no one" in refused(
        capsys, "fit", "--non-private", "--data", grouped_jsonl, "--group-key", "user")
    assert "pass --data FILE.jsonl or FILE.csv" in refused(capsys, "fit", "--group-key", "user")
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "a.txt").write_text("a b c")
    assert f"--data {folder} is not a .jsonl/.ndjson/.csv/.tsv file" in refused(
        capsys, "fit", "--data", folder, "--group-key", "user")
    assert "--epsilons draws the curve on public data; --group-key" in refused(
        capsys, "fit", "--data", grouped_jsonl, "--group-key", "user", "--epsilons", "1,4")


# ------------------------------------------------------------------ the two small CLI fixes
def test_epsilon_with_non_private_is_an_error(capsys):
    for flag in (["--epsilon", "3"], ["--epsilon=4"]):
        err = refused(capsys, "fit", "--non-private", *flag)
        assert "--epsilon was given with --non-private" in err and "drop --epsilon" in err
    code, out = run("fit", "--non-private", "--iterations", "5", "-k", "2")
    assert code == 0 and "NOT PRIVATE" in out


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_the_small_vocabulary_warning_is_shown_once(json_flag, tmp_path):
    few = write(tmp_path / "few", DEMO.texts[:300], users_of(300), "jsonl")
    # K = 30: 10 x K = 300 exceeds the demo's 232 words, so any non-empty DP vocabulary is small
    proc = subprocess.run([sys.executable, "-m", "dptm", "fit", "--data", str(few), "-k", "30",
                           *json_flag], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    both = proc.stdout + proc.stderr
    assert both.count("fewer than 10 x K = 300") == 1, both
