"""The ``dptm`` command: the main job on the embedded corpus, every model, what a private
model prints and publishes, data files, errors."""
import gzip
import io
import json
import os
import re
import subprocess
import sys

import pytest

from dptm import Release
from dptm.cli import MODELS, main
from dptm.exceptions import SeededPrivacyWarning


def run(*argv):
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def _topics(out):
    return [line.split(":", 1)[1].split() for line in out.splitlines() if line.startswith("topic ")]


def test_main_job_on_demo_corpus():
    # `dptm` alone: the recommended private model (no longer non-private GibbsLDA) at a
    # non-vacuous total epsilon, its utility against non-private on the public held-out split
    code, out = run()
    assert code == 0
    assert out.startswith("dptm: batch-vb") and "embedded demo corpus" in out
    topics = _topics(out)
    assert len(topics) == 8 and all(len(t) == 10 for t in topics)
    m = re.search(r"held-out perplexity (\d+\.\d\d) \(80 public documents\); a unigram model "
                  r"of those documents: (\d+\.\d\d) \(private / unigram = (\d+\.\d\d)x, "
                  r"below 1 is better than word frequencies; both over the release's 232 "
                  r"words\); non-private "
                  r"GibbsLDA on the same public documents: (\d+\.\d\d) \(private / non-private "
                  r"= (\d+\.\d\d)x\)", out)
    assert m and abs(float(m.group(1)) / float(m.group(4)) - float(m.group(5))) < 0.01
    assert abs(float(m.group(1)) / float(m.group(2)) - float(m.group(3))) < 0.01
    # the planted themes are far better than word frequencies, even privately at eps 4
    assert float(m.group(3)) < 0.8
    total = float(re.search(r"total epsilon = ([\d.]+) at delta = 1e-05", out).group(1))
    assert 3.9 < total <= 4.0 and "NOT PRIVATE" not in out


def test_non_private_main_job_on_demo_corpus():
    code, out = run("--non-private")
    assert code == 0
    topics = _topics(out)
    # the 8 planted themes are recovered: no word is a top-3 word of two topics
    tops = [w for t in topics for w in t[:3]]
    assert len(topics) == 8 and len(set(tops)) == len(tops)
    assert re.search(r"held-out perplexity \(80 documents\): \d+\.\d\d", out)
    assert re.search(r"UMass -?\d\.\d{3} \(mean over word pairs\), NPMI -?\d\.\d{3}", out)
    assert "privacy: NONE. NOT PRIVATE" in out


# Per model: arguments giving a quick run, and the epsilon the report may not exceed.
PRIVATE = {
    "hdp-lda": (["--epsilon-per-iter", "1"], None),
    "cdp-lda+": (["--epsilon-per-iter", "1"], None),
    "zhu-lda": (["--epsilon-per-iter", "1"], None),
    "sub-lda": (["--noise-multiplier", "2"], None),
    "batch-vb": (["--epsilon", "4"], 4.0),
    "vips": (["--epsilon", "4"], 4.0),
    "lp-lda": (["--epsilon", "3"], 3.0),        # the total per document (#18)
    "olp-lda": (["--epsilon", "3"], 3.0),
    "topicdp": (["--epsilon", "2", "--sensitivity", "0.05"], 2.0),
    "fdptm": (["--epsilon", "3", "--vocab-epsilon", "1"], 3.0),     # --epsilon is the total
}


def test_every_private_model_is_listed():
    assert set(PRIVATE) == set(MODELS) - {"gibbs"}


def test_verbose_prints_the_reports_notes_in_full(tmp_path):
    # without -v the notes are one line (the test above); -v must not lose any of them
    save = tmp_path / "release"
    code, out = run("fit", "--model", "vips", "--iterations", "3", "-k", "4", "--epsilon", "4", "-v",
                    "--save", str(save))
    assert code == 0, out
    report = Release.load(str(save)).privacy
    assert report.notes and str(report) in out and "  notes      :" not in out


@pytest.mark.parametrize("model", sorted(PRIVATE))
def test_private_model_prints_exactly_what_it_publishes(model, tmp_path):
    args, eps_max = PRIVATE[model]
    save = tmp_path / "release"
    code, out = run("fit", "--model", model, "--iterations", "3", "-k", "4", *args,
                    "--save", str(save))
    assert code == 0, out
    release = Release.load(str(save))
    # the printed report and topics are those of the saved release, character for character
    # (its notes folded into one line without -v; with -v below, in full)
    assert release.privacy.format(notes=False) in out
    n = len(release.privacy.notes)
    assert (f"  notes      : {n} (" in out) == (n > 0) and "  note       :" not in out
    assert _topics(out) == release.top_words(10, as_frame=False)
    # no metric of the training data, no timing, no count of the training data; the demo
    # corpus is public, so its public held-out split's utility line is the one metric shown
    head = out.split("Privacy report")[0]
    utility = [ln for ln in head.splitlines() if ln.startswith("utility on the demo corpus' "
                                                               "held-out split (public)")]
    assert len(utility) == 1
    head = head.replace(utility[0], "")
    for leak in ("perplexity", "coherence", "trained in", "tokens", "training documents"):
        assert leak not in head
    assert not str(release.privacy).startswith("TEST MODE")
    if eps_max is not None:
        assert release.privacy.epsilon(release.privacy.default_delta) <= eps_max * (1 + 1e-9)


def test_seed_puts_a_private_model_in_test_mode():
    with pytest.warns(SeededPrivacyWarning):
        code, out = run("fit", "--model", "hdp-lda", "--epsilon-per-iter", "1", "--iterations", "2",
                        "-k", "3", "--seed", "4")
    assert code == 0
    report = out[out.index("TEST MODE"):]
    assert report.splitlines()[1] == "Privacy report"


@pytest.fixture
def raw_text(tmp_path):
    path = tmp_path / "notes.txt"
    docs = (["storm flood rain warning river", "election vote poll candidate",
             "flood rain river dam", "vote poll senate candidate"] * 120
            + ["zyxwv unique secret words here"])
    path.write_text("\n".join(docs))
    return path


def test_private_model_on_raw_text_uses_a_dp_vocabulary(raw_text, tmp_path):
    save = tmp_path / "rel"
    code, out = run("fit", "--model", "vips", "--epsilon", "2", "--data", str(raw_text),
                    "--one-per-line", "--total-samples", "500", "-k", "2", "--iterations", "3",
                    "--save", str(save))
    assert code == 0, out
    release = Release.load(str(save))
    vocabulary = set(release.vocabulary)
    assert release.vocabulary_provenance.startswith("DP-selected")
    assert not {"zyxwv", "unique", "secret", "words"} & vocabulary
    assert all(set(t) <= vocabulary for t in _topics(out))
    assert "assumed public" in out and "vocabulary : DP-selected" in out


def test_public_vocabulary_file(raw_text, tmp_path):
    vocab = tmp_path / "public_words.txt"
    vocab.write_text("flood\nrain\nriver\nvote\npoll\ncandidate\n")
    save = tmp_path / "rel"
    code, out = run("fit", "--model", "vips", "--epsilon", "2", "--data", str(raw_text),
                    "--one-per-line", "--vocabulary", str(vocab), "--total-samples", "500",
                    "-k", "2", "--iterations", "2",
                    "--save", str(save))
    assert code == 0, out
    release = Release.load(str(save))
    assert release.vocabulary == ["flood", "rain", "river", "vote", "poll", "candidate"]
    assert release.privacy.vocabulary == f"public (given: {vocab.name})"
    # the published report names the file, not where it lies on the machine
    assert str(vocab.parent) not in (save / "release.json").read_text()


def test_local_models_need_a_public_vocabulary_on_raw_text(raw_text, capsys):
    code, _ = run("fit", "--model", "lp-lda", "--data", str(raw_text), "--one-per-line")
    assert code == 2
    assert "pass --vocabulary FILE" in capsys.readouterr().err


def test_vacuous_guarantee_is_flagged():
    from dptm.exceptions import VacuousGuaranteeWarning
    with pytest.warns(VacuousGuaranteeWarning, match="exceeds 10"):
        code, _ = run("fit", "--model", "hdp-lda", "--epsilon-per-iter", "1", "--iterations", "2",
                      "-k", "3")
    assert code == 0


def test_unreachable_total_explains_the_smallest_one(capsys, tmp_path):
    code, _ = run("fit", "--model", "hdp-lda", "--epsilon", "8")
    assert code == 2
    err = capsys.readouterr().err
    m = re.search(r"smallest reachable total is ([\d.]+)", err)
    assert m and float(m.group(1)) > 8 and "lower --clip or --iterations" in err
    # ... and how to get there with the CLI's own flags: the suggestion reaches a total of 8
    suggestions = re.findall(r"dptm fit (--model hdp-lda [^\n]*--epsilon 8)", err)
    assert len(suggestions) == 3
    flags = suggestions[-1].split()                      # the fewest sweeps
    assert flags[flags.index("--iterations") + 1] == "10"
    code, out = run("fit", *flags, "-k", "3", "--save", str(tmp_path / "rel"))
    assert code == 0, out
    report = Release.load(str(tmp_path / "rel")).privacy
    assert 7.5 < report.epsilon(1e-5) <= 8.0


def test_fit_plot_saves_the_top_words(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib: the optional extra dptm[plot]")
    png = tmp_path / "topics.png"
    code, out = run("fit", "--model", "vips", "--epsilon", "2", "--iterations", "2", "-k", "3",
                    "--plot", str(png))
    assert code == 0, out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"top words of each topic plotted to {png}" in out


def test_fit_epsilons_draws_the_privacy_utility_curve(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib: the optional extra dptm[plot]")
    png = tmp_path / "curve.png"
    code, out = run("fit", "--model", "vips", "--epsilons", "1,4", "--iterations", "1",
                    "-k", "3", "--plot", str(png), "--json")
    assert code == 0, out
    curve = json.loads(out)["curve"]
    assert curve["epsilon"] == [1.0, 4.0]
    assert all(r <= e * (1 + 1e-9) for r, e in zip(curve["epsilon_reported"], curve["epsilon"]))
    assert 4.0 < curve["total_epsilon"][-1] <= 5.0 * (1 + 1e-9)     # both fits composed
    assert curve["uniform_perplexity"][0] == 232.0                  # V of the demo corpus
    assert png.exists()
    # on private data the held-out metric needs public text
    data = tmp_path / "texts.txt"
    data.write_text("\n".join(["rain storm flood", "vote poll election"] * 50))
    vocab = tmp_path / "words.txt"
    vocab.write_text("rain\nstorm\nflood\nvote\npoll\nelection\n")
    code, _ = run("fit", "--model", "vips", "--epsilons", "1,4", "--data", str(data),
                  "--one-per-line", "--vocabulary", str(vocab))
    assert code == 2
    code, _ = run("fit", "--non-private", "--epsilons", "1,4")     # gibbs: not private
    assert code == 2
    assert main(["fit", "--epsilons", "1,-4"]) == 2


def test_json_and_version(capsys):
    code, out = run("fit", "--non-private", "--json", "--iterations", "20")
    assert code == 0
    result = json.loads(out)
    assert result["model"] == "gibbs" and len(result["top_words"]) == 8
    assert set(result["metrics"]) == {"heldout_perplexity", "umass", "npmi"}
    code, out = run("fit", "--model", "vips", "--json", "--iterations", "2", "-k", "3")
    result = json.loads(out)
    # a private model on the public demo corpus: utility on its public held-out split only
    assert set(result["metrics"]) == {"heldout_perplexity", "unigram_perplexity",
                                      "unigram_ratio", "nonprivate_perplexity", "ratio"}
    assert result["privacy"]["adjacency"] == "document" and result["private"] is True
    assert main(["--version"]) == 0
    assert re.match(r"dptm \d+\.\d+", capsys.readouterr().out)


def test_uci_and_json_inputs(tmp_path):
    docword = tmp_path / "docword.toy.txt.gz"
    rows = [(1, 1, 3), (1, 2, 1), (2, 2, 2), (2, 3, 4), (3, 1, 1), (3, 3, 2)]
    with gzip.open(docword, "wt") as fh:
        fh.write(f"3\n3\n{len(rows)}\n" + "".join(f"{d} {w} {c}\n" for d, w, c in rows))
    vocab = tmp_path / "vocab.toy.txt"
    vocab.write_text("apple\nbanana\ncherry\n")
    code, out = run("fit", "--non-private", "--data", str(docword), "--vocab", str(vocab), "-k", "2",
                    "--iterations", "5", "--test-fraction", "0")
    assert code == 0 and "3 words" in out and "cherry" in out
    texts = tmp_path / "texts.json"
    texts.write_text(json.dumps(["the cat sat on the mat", "dogs chase cats", "mat and hat"]))
    code, out = run("fit", "--non-private", "--data", str(texts), "-k", "2", "--iterations", "5",
                    "--test-fraction", "0")
    assert code == 0 and "mat" in out


def test_errors_are_reported_not_raised(tmp_path, capsys):
    code, _ = run("fit", "--data", str(tmp_path / "missing.txt"))
    assert code == 2
    assert "no such file" in capsys.readouterr().err
    code, _ = run("fit", "-k", "0")
    assert code == 2
    assert "argument -k/--topics: must be an integer >= 1, got 0" in capsys.readouterr().err


def test_newcomers_mistakes_get_messages_naming_the_flag(tmp_path, capsys):
    # catches: a missing folder reported as "path: ...", the training file accepted as
    # public reference data (a "held-out" metric of the private documents), a vocabulary
    # sharing no word with the text reported as "X has no tokens", a tiny epsilon reported
    # as the exact sampler's internal range
    notes = tmp_path / "notes.txt"
    notes.write_text("".join(f"garden river {w} stone forest meadow\n"
                             for w in ("apple", "pear", "plum") * 40))
    words = tmp_path / "words.txt"
    words.write_text("zebra\nquartz\n")
    hard = tmp_path / "elsewhere" / "public.txt"        # a hard link to the training file
    hard.parent.mkdir()
    os.link(notes, hard)
    cases = [
        (["--data", str(tmp_path / "notes") + "/"], "--data: no such file or folder: "),
        (["--data", notes, "--one-per-line", "--reference-data", notes],
         "overlaps --data"),
        (["--data", tmp_path, "--reference-data", notes], "overlaps --data"),
        (["--data", notes, "--one-per-line", "--reference-data", hard], "overlaps --data"),
        (["--data", notes, "--one-per-line", "--reference-data", tmp_path / "pub.txt"],
         "--reference-data: no such file or folder"),
        (["--data", notes, "--one-per-line", "--vocabulary", words],
         f"no word of --vocabulary {words} occurs in {notes}"),
        (["--data", notes, "--one-per-line", "--epsilon", "1e-9"],
         "--epsilon 1e-09 is too small"),
    ]
    for argv, message in cases:
        code, _ = run("fit", *map(str, argv))
        err = capsys.readouterr().err
        assert code == 2 and message in err, (argv, err)


def test_topicdp_base_model_carries_no_public_seed():
    # catches the CLI's TopicDP handing its inner Gibbs model the fixed non-private seed
    # (fresh round 5, J52): the private fit's base sampler would be reproducible by anyone;
    # without --seed it must be None (TopicDP then seeds it from its secret generator)
    from dptm.cli import build_parser
    a = build_parser().parse_args(["fit", "--model", "topicdp"])
    a.reference_X = None
    model = MODELS["topicdp"][1](a)
    assert model.estimator.random_state is None and model.random_state is None
    a = build_parser().parse_args(["fit", "--model", "topicdp", "--seed", "4"])
    a.reference_X = None
    assert MODELS["topicdp"][1](a).estimator.random_state == 4


def test_python_dash_m_entry_point():
    proc = subprocess.run([sys.executable, "-m", "dptm", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "fit" in proc.stdout


def test_audit_command_prints_attack_table_and_privacy(tmp_path):
    save = tmp_path / "lira.npz"
    code, out = run("audit", "--model", "hdp-lda", "--shadows", "4", "--iterations", "5",
                    "-k", "4", "--epsilon-per-iter", "1", "--save", str(save),
                    "--plot", str(tmp_path / "roc.png"))
    assert code == 0, out
    assert (tmp_path / "roc.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "LiRA online (zeta)" in out and "LiRA offline (zeta)" in out and "AUC" in out
    assert "Privacy report" in out
    assert save.exists()


def test_topicdp_samples_its_sensitivity_on_a_public_reference(raw_text, tmp_path):
    vocab = tmp_path / "public_words.txt"
    vocab.write_text("flood\nrain\nriver\nvote\npoll\ncandidate\n")
    reference = tmp_path / "public.txt"
    reference.write_text("\n".join(["flood rain river", "vote poll candidate"] * 40))
    save = tmp_path / "rel"
    code, out = run("fit", "--model", "topicdp", "--data", str(raw_text), "--one-per-line",
                    "--vocabulary",
                    str(vocab), "--reference-data", str(reference), "--gamma", "0.5",
                    "-k", "2", "--iterations", "5", "--save", str(save))
    assert code == 0, out
    report = Release.load(str(save)).privacy
    assert report.gamma == 0.5 and "reference" in " ".join(report.assumed_public + report.notes)


def test_batch_vb_model_splits_the_total_across_its_releases():
    code, out = run("fit", "--model", "batch-vb", "--epsilon", "2", "-k", "4", "--json")
    assert code == 0
    res = json.loads(out)
    assert 1.9 < res["privacy"]["epsilon"] <= 2.0 * (1 + 1e-6)
    assert len(res["top_words"]) == 4
    # the default plan: the norm histogram (sensitivity 1, sets the clip bound C), three
    # presence releases, then one count release with more budget (sensitivity C); the
    # noise multipliers are the public plan's (a function of epsilon and K only)
    from dptm.models.private_vb import fit_plan
    plan = fit_plan(2.0, 1e-5, 4, 1)
    assert [r.statistic for r in plan] == ["norm-histogram"] + ["presence"] * 3 + ["counts"]
    mech = res["privacy"]["mechanisms"]
    assert [m["count"] for m in mech] == [1, 3, 1]
    assert mech[0]["sensitivity"] == 1.0
    assert mech[1]["sensitivity"] == mech[2]["sensitivity"] > 0
    assert mech[1]["sigma"] > mech[2]["sigma"]
    for m, r in zip(mech, (plan[0], plan[1], plan[-1])):
        assert m["sigma"] / m["sensitivity"] == pytest.approx(r.z, rel=1e-6)


def test_a_plain_text_reference_is_one_document_per_line_whatever_the_data(raw_text, tmp_path):
    # catches: public --reference-data refused (or read as one document) because the private
    # data is a folder, where --one-per-line is not given
    folder = tmp_path / "notes"
    folder.mkdir()
    for i, line in enumerate(raw_text.read_text().splitlines()):
        (folder / f"{i}.txt").write_text(line)
    reference = tmp_path / "public.txt"
    reference.write_text("\n".join(["flood rain river", "vote poll candidate"] * 40))
    code, out = run("fit", "--data", str(folder), "--reference-data", str(reference), "-k", "2")
    assert code == 0, out
    assert "(80 public documents)" in out, out
