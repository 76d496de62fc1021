"""What ``dptm fit`` tells a newcomer around a private fit: whether the release is worth
publishing (from public facts only: the released vocabulary's size, a measurement on public
held-out data, else the fit's expectation from public inputs), the fit's expectation shown
as a prior guide beside a measurement rather than as a contradicting warning, the clip
bound used, and a hint towards --group-key when the records carry a user-like field."""
import csv
import io
import json
import re
import warnings

import pytest

from dptm import Release
from dptm._cli_report import _looks_like_user
from dptm.cli import main
from dptm.datasets import load_demo_corpus
from dptm.exceptions import SeededPrivacyWarning, UninformativeModelWarning

DEMO = load_demo_corpus()


def run(*argv):
    out = io.StringIO()
    return main([str(a) for a in argv], out=out), out.getvalue()


def _jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def always_predicts_poor(monkeypatch):
    """PrivateBatchLDA's expectation warning fires on every fit (its threshold at 0)."""
    import dptm.models.private_vb as private_vb
    monkeypatch.setattr(private_vb, "_UNIGRAM_RATIO", 0.0)


# ------------------------------------------------------------------ the advice to publish
def test_a_tiny_dp_vocabulary_withholds_the_advice_to_publish(tmp_path):
    # catches: "no concern found" printed whatever the release looks like
    notes = _jsonl(tmp_path / "notes.jsonl", [{"text": t} for t in DEMO.texts[:300]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # K = 30: 10 x K = 300 exceeds the demo's 232 words, so any DP vocabulary is small
        code, out = run("fit", "--data", notes, "-k", "30", "--save", tmp_path / "rel")
    assert code == 0, out
    n = int(re.search(r"private vocabulary: (\d+) words?", out).group(1))
    assert "no concern found" not in out
    assert f"NOT worth publishing as it is: its vocabulary has only {n} word" in out
    assert "for K = 30 topics (under 10 words per topic" in out


def test_a_tiny_public_vocabulary_withholds_the_advice_to_publish(tmp_path):
    # a public word list is released too: 10 words for 8 topics are no use either
    words = tmp_path / "words.txt"
    words.write_text("\n".join(DEMO.vocabulary[:10]) + "\n")
    notes = _jsonl(tmp_path / "notes.jsonl", [{"text": t} for t in DEMO.texts])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code, out = run("fit", "--data", notes, "--vocabulary", words, "-k", "8",
                        "--save", tmp_path / "rel")
    assert code == 0, out
    assert "no concern found" not in out
    assert "its vocabulary has only 10 words for K = 8 topics" in out


def test_a_good_measurement_on_public_data_keeps_the_advice_to_publish(always_predicts_poor,
                                                                       tmp_path):
    # the fit expects poor topics, the public held-out split measures them better than word
    # frequencies: the measurement leads, the expectation is a note after it, not a warning
    # (catches: the prediction still warned beside a contradicting measurement, or blocking
    # publication although the measurement is good)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, out = run("fit", "-k", "8", "--save", tmp_path / "rel", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["metrics"]["unigram_ratio"] < 1 and result["concerns"] == []
    assert "prior guide" in result["prior_guide"]
    assert not [w for w in caught if issubclass(w.category, UninformativeModelWarning)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code, out = run("fit", "-k", "8", "--save", tmp_path / "rel2")
    lines = out.splitlines()
    utility = next(i for i, ln in enumerate(lines) if ln.startswith("utility on"))
    assert lines[utility + 1].startswith("note: the fit's rough prior guide")
    ratio = re.search(r"private / unigram = (\d+\.\d\d)x", out).group(1)
    assert (f"The measurement above, on public held-out data, is the one to go by: {ratio}x "
            "the unigram model's perplexity, better than word frequencies") in out
    assert "no concern found" in out and "NOT worth publishing" not in out
    assert "not measured" not in out           # measured on the demo's held-out split


def test_a_poor_measurement_on_public_data_withholds_the_advice(tmp_path):
    # a tiny epsilon on the 720 public training documents: near-flat topics, worse than
    # word frequencies on the held-out split (seeded: a test, so the outcome is fixed)
    with pytest.warns(SeededPrivacyWarning):
        code, out = run("fit", "--epsilon", "0.02", "--seed", "3", "--save", tmp_path / "rel")
    assert code == 0
    ratio = float(re.search(r"private / unigram = (\d+\.\d\d)x", out).group(1))
    assert ratio >= 1
    assert "no concern found" not in out
    assert ("NOT worth publishing as it is: on public held-out data its topics are no better "
            f"than a unigram model (private / unigram = {ratio:.2f}x)") in out


def test_without_a_measurement_the_expectation_is_shown_and_withholds_the_advice(
        always_predicts_poor, tmp_path):
    # private text, no --reference-data: the expectation from public inputs is all there is
    # (catches: the held-back warning dropped when no measurement replaces it)
    words = tmp_path / "words.txt"
    words.write_text("\n".join(DEMO.vocabulary) + "\n")
    notes = _jsonl(tmp_path / "notes.jsonl", [{"text": t} for t in DEMO.texts])
    with pytest.warns(UninformativeModelWarning, match="expects the topics at"):
        code, out = run("fit", "--data", notes, "--vocabulary", words, "-k", "4",
                        "--save", tmp_path / "rel")
    assert code == 0, out
    assert "prior guide" not in out and "no concern found" not in out
    assert "NOT worth publishing as it is: the fit expects its topics to be no better" in out


@pytest.mark.parametrize("flags, concern", [
    (["--delta", "0.5"], r"its guarantee is vacuous \(delta = 0.5 >= 1/n = 1/\d+ documents "
                         r"\(a DP estimate plus 2 noise sd\)"),
    (["--epsilon", "20"], r"its guarantee is vacuous \(epsilon = 20 exceeds 10"),
], ids=["delta", "epsilon"])
def test_a_vacuous_guarantee_withholds_the_advice_to_publish(flags, concern, tmp_path):
    # catches: "no concern found" beside a VacuousGuaranteeWarning of the same run
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code, out = run("fit", *flags, "--save", tmp_path / "rel")
    assert code == 0, out
    assert "no concern found" not in out
    assert re.search(r"NOT worth publishing as it is: " + concern, out), out


# ------------------------------------------------------------------ the clip bound
@pytest.mark.parametrize("raw_text", [False, True], ids=["demo", "dp-vocabulary"])
def test_the_clip_bound_printed_is_the_fits(raw_text, tmp_path, monkeypatch):
    # catches: the line showing another number (sigma, the histogram's bound 1) or missing
    # behind a DP vocabulary (there the pipeline's model_ holds clip_norm_)
    from dptm.models.private_vb import PrivateBatchLDA
    fitted, original = [], PrivateBatchLDA.fit

    def fit(self, *args, **kw):
        fitted.append(self)
        return original(self, *args, **kw)
    monkeypatch.setattr(PrivateBatchLDA, "fit", fit)
    args = ["fit", "-k", "4", "--save", tmp_path / "rel"]
    if raw_text:
        notes = _jsonl(tmp_path / "notes.jsonl", [{"text": t} for t in DEMO.texts])
        args += ["--data", notes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code, out = run(*args)
    assert code == 0, out
    C = re.search(r"clip bound: each document's contribution is clipped to L2 norm "
                  r"C = ([0-9.e+-]+) \(chosen with DP", out).group(1)
    assert len(fitted) == 1 and C == f"{fitted[0].clip_norm_:.6g}"
    # the rule's lowest bin edge is named as such (it is the same on most fits)
    from dptm.models.private_vb import _edges
    smallest = "the smallest candidate bound (one token alone has norm 1)" in out
    assert smallest == (fitted[0].clip_norm_ == _edges()[0])
    if not raw_text:
        # the norm histogram has sensitivity 1; every model release has C
        report = str(Release.load(str(tmp_path / "rel")).privacy)
        sensitivities = re.findall(r"L2 sensitivity=([0-9.e+-]+)", report)
        assert sensitivities[0] == "1" and set(sensitivities[1:]) == {C}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code, out = run(*args, "--json", "--overwrite")       # the same --save DIR again
    assert json.loads(out)["clip_norm"] == fitted[1].clip_norm_


# ------------------------------------------------------------------ the --group-key hint
@pytest.mark.parametrize("name", ["user", "author", "user_id", "userId", "Patient-ID",
                                  "sender", "maintainer", "customer_name"])
def test_user_like_field_names(name):
    assert _looks_like_user(name)


@pytest.mark.parametrize("name", ["text", "body", "id", "title", "usage", "date", "subject",
                                  "authority"])
def test_other_field_names(name):
    # catches: a substring match ("usage", "authority") hinting at every file
    assert not _looks_like_user(name)


def _records(n=200, **extra):
    return [{"text": t, **extra} for t in DEMO.texts[:n]]


def _hint_run(tmp_path, capsys, path, *flags):
    words = tmp_path / "words.txt"
    words.write_text("\n".join(DEMO.vocabulary) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code, out = run("fit", "--data", path, "--vocabulary", words, "-k", "2", *flags)
    assert code == 0, out
    return [ln for ln in out.splitlines() if ln.startswith("hint:")]


def test_jsonl_gets_one_hint_that_names_no_field(tmp_path, capsys):
    # catches: a hint read from a record's keys (adding or removing that record would then
    # change the CLI output between neighbouring data sets)
    with_author = _hint_run(tmp_path, capsys, _jsonl(tmp_path / "a.jsonl", _records(author="a1")))
    without = _hint_run(tmp_path, capsys, _jsonl(tmp_path / "b.jsonl", _records(note="x")))
    assert len(with_author) == 1 and with_author == without
    assert "--group-key FIELD" in with_author[0] and "'author'" not in with_author[0]
    assert "document level" in with_author[0] and "user level" in with_author[0]
    # given --group-key, no hint
    path = _jsonl(tmp_path / "c.jsonl", _records(author="a1"))
    assert _hint_run(tmp_path, capsys, path, "--group-key", "author") == []


def test_the_hint_comes_before_the_topics_and_qualifies_the_verdict(tmp_path):
    # catches: a hint lost at the end of stderr while stdout says a plain "no concern found"
    words = tmp_path / "words.txt"
    words.write_text("\n".join(DEMO.vocabulary) + "\n")
    path = _jsonl(tmp_path / "a.jsonl", _records(author="a1"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code, out = run("fit", "--data", path, "--vocabulary", words, "-k", "2",
                        "--save", tmp_path / "rel")
    assert code == 0, out
    lines = out.splitlines()
    first_topic = next(i for i, ln in enumerate(lines) if ln.startswith("topic "))
    assert any(ln.startswith("hint:") for ln in lines[:first_topic])
    assert "release written to" in lines[-1]
    # the verdict's wording, both ways
    from dptm._cli_report import saved_line
    assert "as a document-level release" in saved_line("rel", [], hinted=True)
    assert "document-level" not in saved_line("rel", [], hinted=False)
    assert "NOT worth publishing" in saved_line("rel", ["a concern"], hinted=True)
    # without a measurement the verdict says so and how to measure
    assert "not measured" in saved_line("rel", []) and "--reference-data" in saved_line("rel", [])
    assert "not measured" not in saved_line("rel", [], metrics={"unigram_ratio": 0.5})


@pytest.mark.parametrize("ratio, concern", [(0.94, None), (0.95, "barely better"),
                                            (0.999, "barely better"), (1.0, "no better")])
def test_a_measured_ratio_within_a_few_percent_of_the_unigram_model_is_a_concern(ratio,
                                                                                 concern):
    # catches: 0.96x the unigram model's perplexity reported as worth publishing
    from dptm._cli_report import publication_concerns
    got = publication_concerns(500, 8, {"unigram_ratio": ratio}, predicted=[])
    if concern is None:
        assert got == []
    else:
        assert len(got) == 1 and concern in got[0] and f"{ratio:.2f}x" in got[0]


def test_the_hint_reads_a_csv_header(tmp_path, capsys):
    path = tmp_path / "notes.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["user_id", "text"])
        w.writerows((f"u{i % 7}", t) for i, t in enumerate(DEMO.texts[:200]))
    hints = _hint_run(tmp_path, capsys, path)
    assert len(hints) == 1 and "--group-key user_id" in hints[0]


def test_a_csv_without_a_user_column_gets_no_hint(tmp_path, capsys):
    # catches: a hint read from values ("user" as a value) or printed for every CSV
    path = tmp_path / "notes.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["note", "text"])
        w.writerows(("user", t) for t in DEMO.texts[:200])
    assert _hint_run(tmp_path, capsys, path) == []


def test_with_reference_data_the_warning_does_not_ask_for_it():
    # catches: the expectation warning telling a user who gave --reference-data to give it
    from dptm.cli import _format_warning
    msg = UninformativeModelWarning(
        "expects the topics at 2.00x ...; measure on public or held-out text with "
        "dptm.guardrails.check_against_unigram before concluding; to do better: more")
    plain = _format_warning(msg, UninformativeModelWarning, "f", 1)
    given = _format_warning(msg, UninformativeModelWarning, "f", 1, reference=True)
    assert "with --reference-data FILE before concluding" in plain
    assert "--reference-data FILE" not in given
    assert "the measurement on --reference-data decides; to do better: more" in given
