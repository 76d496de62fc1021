"""``dptm fit`` on a newcomer's raw text: a folder, JSONL and CSV of 3,000 real documents
give a private release by default, over a useful DP vocabulary, with ``--epsilon`` the
total (vocabulary included) and the printed total the report's; a non-private run is
marked NOT PRIVATE; the inputs that would silently change the unit protected, or a proof's
assumptions, are refused with a message."""
import csv
import io
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from dptm import Release
from dptm.cli import MODELS, main
from dptm.datasets import shared_data_dir

N_DOCS, K = 3000, 5


def run(*argv):
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


@pytest.fixture(scope="module")
def tweets():
    root = shared_data_dir()
    path = None if root is None else root / "tweetrumors" / "tweetrumors_clean.json"
    if path is None or not path.is_file():
        pytest.skip("the shared data folder with tweetrumors/tweetrumors_clean.json is absent "
                    "(set DPTM_DATA)")
    texts = json.loads(path.read_text())["text"]
    assert len(texts) >= N_DOCS
    return texts[:N_DOCS]


@pytest.fixture(scope="module")
def inputs(tweets, tmp_path_factory):
    """The same 3,000 documents as a folder (one file each, in sub-folders), JSONL, CSV."""
    root = tmp_path_factory.mktemp("raw")
    folder = root / "texts"
    for i, t in enumerate(tweets):
        sub = folder / f"part{i % 3}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"{i:05d}.txt").write_text(t)
    jsonl = root / "texts.jsonl"
    jsonl.write_text("".join(json.dumps({"id": i, "body": t}) + "\n" for i, t in enumerate(tweets)))
    csv_path = root / "texts.csv"
    with open(csv_path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "text"])
        w.writerows(enumerate(tweets))
    return {"folder": [str(folder)], "jsonl": [str(jsonl), "--text-key", "body"],
            "csv": [str(csv_path)], "root": root}


def _topics(out):
    return [ln.split(":", 1)[1].split() for ln in out.splitlines() if ln.startswith("topic ")]


@pytest.mark.parametrize("fmt", ["folder", "jsonl", "csv"])
def test_raw_text_gives_a_private_release_with_the_total_epsilon(inputs, fmt, tmp_path):
    save = tmp_path / "rel"
    code, out = run("fit", "--data", *inputs[fmt], "--epsilon", "4", "-k", str(K),
                    "--save", str(save))
    assert code == 0, out
    release = Release.load(str(save))
    report = release.privacy
    # the recommended private model by default, behind a DP vocabulary
    assert out.startswith("dptm: batch-vb") and release.private
    assert release.model == "FullyPrivateTopicModel(PrivateBatchLDA)"
    assert release.vocabulary_provenance.startswith("DP-selected (epsilon=2, delta=5e-06")
    # a useful vocabulary: at least 10 x K words, and no warning that it is too small
    assert len(release.vocabulary) >= 10 * K and "WARNING" not in out
    assert f"private vocabulary: {len(release.vocabulary)} words released" in out
    # both shares and the composed total printed; the total is the report's, <= --epsilon
    assert ("split into a DP vocabulary (epsilon 2, delta 5e-06; at most 10 distinct words "
            "per document) and the model (epsilon 2, delta 5e-06)") in out
    m = re.search(r"epsilon: DP vocabulary (\S+) \+ model (\S+); composed total epsilon = (\S+) "
                  r"at delta = (\S+)\n", out)
    assert m, out
    eps_v, eps_m, total, delta = (float(g) for g in m.groups())
    assert delta == 1e-5 == report.default_delta
    assert m.group(3) == f"{report.epsilon(report.default_delta):.6g}"
    assert total <= 4.0 and abs(eps_v + eps_m - total) < 1e-5 and eps_v <= 2.0
    assert report.format(notes=False) in out and _topics(out) == release.top_words(10, as_frame=False)
    # no metric, count or timing of the private data
    head = out.split("Privacy report")[0]
    for leak in ("perplexity ", "coherence", "trained in", "tokens", "documents,"):
        assert leak not in head


def test_non_private_output_is_marked_on_screen_and_in_the_file(inputs, tmp_path):
    save = tmp_path / "np"
    code, out = run("fit", "--non-private", "--data", *inputs["folder"], "-k", str(K),
                    "--iterations", "20", "--save", str(save))
    assert code == 0, out
    assert f"NOT PRIVATE, {int(N_DOCS - round(0.1 * N_DOCS))} training documents" in out
    assert "privacy: NONE. NOT PRIVATE" in out and "NOT PRIVATE: output written to" in out
    assert "no concern found" not in out
    meta = json.loads((save / "release.json").read_text())
    assert meta["private"] is False and meta["privacy"] is None
    assert meta["privacy_summary"].startswith("NOT PRIVATE")
    release = Release.load(str(save))
    assert release.private is False and "NOT PRIVATE" in repr(release)
    # a file claiming privacy without a report is refused
    meta["private"] = True
    (save / "release.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="'private' is True but the release has no privacy"):
        Release.load(str(save))


def test_refusals_name_what_to_do(inputs, tmp_path, capsys, tweets):
    def refused(*argv):
        code, out = run(*argv)
        err = capsys.readouterr().err
        assert code == 2 and out == "" and "Traceback" not in err, (argv, out, err)
        return err
    folder = inputs["folder"]
    # a non-private model needs --non-private
    err = refused("fit", "--model", "gibbs", "--data", *folder)
    assert "--model gibbs is NOT private" in err and "--non-private" in err
    assert "--non-private was given with the private --model vips" in refused(
        "fit", "--model", "vips", "--non-private")
    # `cat texts/* > all.txt`: each line would become a document
    cat = tmp_path / "all.txt"
    cat.write_text("\n".join(tweets[:50]))
    err = refused("fit", "--data", str(cat))
    assert "read as one document per line only with --one-per-line" in err and "all.txt" in err
    # word-level proofs do not cover a vocabulary selected from the same text
    for model in ("hdp-lda", "cdp-lda+", "zhu-lda", "sub-lda"):
        err = refused("fit", "--model", model, "--data", *folder)
        assert f"--model {model} is word-level DP" in err and "--vocabulary FILE" in err
    # vips' sampling rate needs a public number of documents, not the private count
    assert "give --total-samples N, a public number of documents" in refused(
        "fit", "--model", "vips", "--data", *folder)
    # a vocabulary chosen by counts in the private text is not covered
    assert "--min-df chooses words by their counts in the private text" in refused(
        "fit", "--data", *folder, "--min-df", "3")
    # the vocabulary's share must leave some budget to the model
    assert "--vocab-epsilon 4 must be below the total --epsilon 4" in refused(
        "fit", "--data", *folder, "--vocab-epsilon", "4")


def test_word_level_models_are_refused_on_raw_text_before_anything_is_printed(tmp_path,
                                                                              capsys):
    # The data-free twin of the word-level part of test_refusals_name_what_to_do (which
    # needs the tweet corpus, absent from most checkouts). Catches a word-level model
    # dropped from WORD_LEVEL: the vocabulary pipeline would still refuse it, but only
    # after the header and the budget split were printed, with a message naming no flag.
    from dptm._cli_data import WORD_LEVEL
    word_level = {m for m, (desc, _) in MODELS.items() if desc.startswith("word-level")}
    assert set(WORD_LEVEL) == word_level == {"hdp-lda", "cdp-lda+", "zhu-lda", "sub-lda"}
    rng = np.random.default_rng(3)
    words = ["storm", "flood", "rain", "river", "vote", "poll", "senate", "candidate"]
    path = tmp_path / "private.jsonl"
    path.write_text("".join(json.dumps({"body": " ".join(rng.choice(words, size=8))}) + "\n"
                            for _ in range(50)))
    for model in sorted(word_level):
        code, out = run("fit", "--model", model, "--data", str(path), "--text-key", "body")
        err = capsys.readouterr().err
        assert code == 2 and out == "", (model, out)
        assert f"--model {model} is word-level DP" in err and "--vocabulary FILE" in err


def test_too_small_a_dp_vocabulary_is_flagged_loudly(tweets, tmp_path, capsys):
    from dptm.exceptions import UtilityWarning
    few = tmp_path / "few.jsonl"
    few.write_text("".join(json.dumps(t) + "\n" for t in tweets[:400]))
    with pytest.warns(UtilityWarning, match=r"fewer than 10 x K = 100"):
        code, out = run("fit", "--data", str(few), "-k", "10", "--epsilon", "4")
    if code == 2:        # no word at all passed: refused, with the flags that help
        assert "a larger --epsilon or --vocab-share, or a public --vocabulary" in capsys.readouterr().err
        return
    n = int(re.search(r"private vocabulary: (\d+) words?", out).group(1))
    assert n < 100 and f"WARNING: the DP vocabulary has only {n} word" in out


def test_an_empty_dp_vocabulary_says_which_flags_help(tweets, tmp_path, capsys):
    few = tmp_path / "few.jsonl"
    few.write_text("".join(json.dumps(t) + "\n" for t in tweets[:100]))
    code, out = run("fit", "--data", str(few), "-k", "2", "--epsilon", "0.2")
    assert code == 2
    err = capsys.readouterr().err
    assert "the private vocabulary is empty" in err and "--vocab-share" in err


def test_public_vocabulary_gives_all_of_epsilon_to_the_model(inputs, tmp_path):
    vocab = tmp_path / "words.txt"
    vocab.write_text("\n".join(["ottawa", "shooting", "paris", "charlie", "crash", "plane",
                                "police", "hostage", "germanwings", "parliament"]) + "\n")
    save = tmp_path / "rel"
    code, out = run("fit", "--data", *inputs["csv"], "--vocabulary", str(vocab), "-k", "2",
                    "--epsilon", "3", "--save", str(save))
    assert code == 0, out
    report = Release.load(str(save)).privacy
    assert report.vocabulary == f"public (given: {vocab.name})"
    assert "split into a DP vocabulary" not in out
    assert f"total epsilon = {report.epsilon(report.default_delta):.6g} at delta = 1e-05" in out
    assert 2.9 < report.epsilon(1e-5) <= 3.0


def test_help_shows_defaults_and_every_model():
    proc = subprocess.run([sys.executable, "-m", "dptm", "fit", "--help"], capture_output=True,
                          text=True)
    assert proc.returncode == 0
    text = " ".join(re.sub(r"-\n\s+", "-", proc.stdout).split())   # argparse wraps at hyphens
    for name, (desc, _) in MODELS.items():
        assert f"{name} {' '.join(desc.split())}" in text
    assert "(default: 4.0)" in text and "(default: 1e-05)" in text and "default: batch-vb" in text


def test_warnings_print_one_line_without_source():
    proc = subprocess.run([sys.executable, "-m", "dptm", "fit", "--model", "hdp-lda",
                           "--epsilon-per-iter", "1", "--iterations", "2", "-k", "3"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines and all(ln.startswith("warning: ") for ln in lines), proc.stderr
    assert any(ln.startswith("warning: VacuousGuaranteeWarning: vacuous privacy guarantee")
               for ln in lines)
    assert "warnings.warn" not in proc.stderr and ".py:" not in proc.stderr


def test_audit_runs_the_recommended_model():
    code, out = run("audit", "--model", "batch-vb", "--shadows", "4", "-k", "3")
    assert code == 0, out
    assert "dptm audit: batch-vb trainer" in out and "AUC" in out and "Privacy report" in out


def test_nltk_is_imported_only_for_stop_words_or_lemmas():
    code = ("import sys, dptm, dptm.cli, dptm.text, dptm.datasets; "
            "from dptm.text import preprocess; preprocess(['cats sat'], stop_words='sklearn'); "
            "print('nltk' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stderr


def test_private_cli_header_is_the_same_on_neighbouring_corpora(tmp_path):
    # What `dptm fit` prints before the topics (model, data name, budget) must not depend on
    # the private corpus: D and D + 1 documents give the same lines (a printed document or
    # token count would tell them apart).
    rng = np.random.default_rng(3)
    words = ["storm", "flood", "rain", "river", "vote", "poll", "senate", "candidate"]
    docs = [" ".join(rng.choice(words, size=8)) for _ in range(201)]
    heads = []
    for n in (200, 201):
        path = tmp_path / f"private{n}.jsonl"
        path.write_text("".join(json.dumps({"body": t}) + "\n" for t in docs[:n]))
        out = io.StringIO()
        code = main(["fit", "--data", str(path), "--text-key", "body", "-k", "2",
                     "--iterations", "2"], out=out)
        assert code == 0, out.getvalue()
        text = out.getvalue().replace(str(path), "DATA")
        heads.append(text.split("\n\n")[0])
    assert heads[0] == heads[1]
    assert "200" not in heads[0] and "201" not in heads[1]


def test_raw_text_cli_guarantee_stays_within_the_requested_budget(tmp_path):
    # On raw text the command splits --epsilon and --delta between the DP vocabulary and the
    # model; the printed guarantee of the composition must be within (--epsilon, --delta) and
    # finite (the stages' deltas add up under basic composition).
    from argparse import Namespace

    from dptm._cli_data import budget_split
    e_v, d_v, e_m, d_m = budget_split(Namespace(vocab_epsilon=None, vocab_share=0.5,
                                                epsilon=4.0, delta=1e-5))
    assert e_v + e_m == pytest.approx(4.0) and d_v + d_m == pytest.approx(1e-5)
    rng = np.random.default_rng(3)
    words = ["storm", "flood", "rain", "river", "vote", "poll", "senate", "candidate"]
    path = tmp_path / "private.jsonl"
    path.write_text("".join(json.dumps({"body": " ".join(rng.choice(words, size=8))}) + "\n"
                            for _ in range(200)))
    out = io.StringIO()
    code = main(["fit", "--data", str(path), "--text-key", "body", "-k", "2", "--iterations",
                 "2", "--epsilon", "4", "--delta", "1e-5"], out=out)
    assert code == 0, out.getvalue()
    m = re.search(r"guarantee  : epsilon = (\S+) at delta = (\S+) ", out.getvalue())
    eps, delta = float(m.group(1)), float(m.group(2))
    assert 0 < eps <= 4.0 and delta <= 1e-5 * (1 + 1e-9)


def test_text_key_with_a_folder_is_refused_naming_both_flags(tmp_path, capsys):
    # catches: --text-key silently ignored on a folder (the user meant another input)
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text("rain flood river storm")
    code = main(["fit", "--data", str(folder), "--text-key", "body"], out=io.StringIO())
    err = capsys.readouterr().err
    assert code == 2 and "--text-key" in err and f"--data {folder}" in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_stop_words_file_drops_public_words_before_the_vocabulary_is_selected(tmp_path):
    # catches: --stop-words read but not applied (to the private text or the reference)
    folder = tmp_path / "notes"
    folder.mkdir()
    for i in range(300):
        (folder / f"a{i}.txt").write_text("package library rain flood river storm water")
        (folder / f"b{i}.txt").write_text("package library vote poll election senate ballot")
    stop = tmp_path / "stop.txt"
    stop.write_text("Package\nlibrary\n")
    vocabularies = []
    for extra in ([], ["--stop-words", str(stop)]):
        with pytest.warns(Warning):
            code, out = run("fit", "--data", str(folder), "-k", "2", "--seed", "0",
                            "--save", str(tmp_path / f"rel{len(extra)}"), *extra)
        assert code == 0, out
        vocabularies.append(set(Release.load(tmp_path / f"rel{len(extra)}").vocabulary))
    assert {"package", "library"} <= vocabularies[0]
    assert not {"package", "library"} & vocabularies[1] and "flood" in vocabularies[1]
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    code, _ = run("fit", "--data", str(folder), "--stop-words", str(empty))
    assert code == 2


def test_public_word_lists_are_checked_like_reference_data(tmp_path, capsys):
    # catches: a missing or misplaced word list ignored, or read from the private text
    folder = tmp_path / "notes"
    folder.mkdir()
    for i in range(40):
        (folder / f"a{i}.txt").write_text("rain flood river storm the water")
    words = tmp_path / "words.txt"
    words.write_text("rain\nflood\nthe\nriver\n")
    cases = [(["--stop-words", str(tmp_path / "missing.txt")], "--stop-words: no such file"),
             (["--vocabulary", str(folder / "a0.txt")], "overlaps --data"),
             (["--stop-words", str(folder / "a1.txt")], "overlaps --data"),
             (["--stop-words", str(words), "--non-private", "--data", "demo"],
              "--stop-words applies to raw text")]
    for extra, message in cases:
        argv = ["fit", "--data", str(folder), *extra] if "--data" not in extra else ["fit", *extra]
        assert main(argv, out=io.StringIO()) == 2
        assert message in capsys.readouterr().err
    # a stop word of a public vocabulary never occurs in the tokens: left out, and said so
    with pytest.warns(Warning):
        code, out = run("fit", "--data", str(folder), "--vocabulary", str(words), "-k", "2",
                        "--seed", "0", "--save", str(tmp_path / "rel"))
    assert code == 0, out
    assert list(Release.load(tmp_path / "rel").vocabulary) == ["rain", "flood", "river"]
    assert "its 1 stop word left out" in out


def test_reference_data_without_a_word_of_the_vocabulary_is_named_not_asked_for(tmp_path):
    # catches: "give public text with --reference-data" when it was given but unusable
    folder = tmp_path / "notes"
    folder.mkdir()
    vocabulary = [f"word{chr(97 + i)}" for i in range(20)]   # 10 x K words: no size concern
    for i in range(40):
        (folder / f"a{i}.txt").write_text(" ".join(vocabulary))
    words = tmp_path / "words.txt"
    words.write_text("\n".join(vocabulary) + "\n")
    ref = tmp_path / "ref.jsonl"
    ref.write_text('{"text": "election vote poll"}\n' * 5)
    with pytest.warns(Warning):
        code, out = run("fit", "--data", str(folder), "--vocabulary", str(words), "-k", "2",
                        "--reference-data", str(ref), "--seed", "0", "--save", str(tmp_path / "r"))
    assert code == 0, out
    assert "no measurement: no document of --reference-data" in out
    last = out.strip().splitlines()[-1]
    assert "no document of --reference-data has a word" in last
    assert "give public text" not in last


def test_text_key_with_plain_text_is_refused_naming_both_flags(tmp_path, capsys):
    # catches: --text-key silently ignored on a .txt file (the user meant a records file)
    path = tmp_path / "notes.txt"
    path.write_text("rain flood river storm\nvote poll\n")
    code = main(["fit", "--data", str(path), "--one-per-line", "--text-key", "body"],
                out=io.StringIO())
    err = capsys.readouterr().err
    assert code == 2 and "--text-key" in err and f"--data {path} is plain text" in err
    assert err.count("\n") == 1
    # a records file with its own field name is still read
    rec = tmp_path / "notes.jsonl"
    rec.write_text("".join('{"body": "rain flood river storm %d"}\n' % i for i in range(60)))
    assert main(["fit", "--data", str(rec), "--text-key", "body", "--non-private", "-k", "2",
                 "--iterations", "5"], out=io.StringIO()) == 0
