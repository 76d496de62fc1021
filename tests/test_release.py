"""Release: what a user publishes; plain-file round trip; the report's test-mode line."""
import json
import os

import numpy as np
import pytest

from dptm import GibbsLDA, Release
from dptm.accounting import PrivacyReport
from dptm.accounting.events import (ComposedEvent, GatedEvent, GaussianEvent, LaplaceEvent,
                                    PoissonSampledEvent, PureDPEvent, SelfComposedEvent)
from dptm.accounting.report import PaperClaim, event_from_dict, event_to_dict
from dptm.datasets import load_demo_corpus


@pytest.fixture(scope="module")
def demo():
    return load_demo_corpus()


@pytest.fixture(scope="module")
def fitted(demo):
    return GibbsLDA(8, max_iter=30, random_state=0).fit(demo.X)


def _report(seeded=False):
    event = ComposedEvent((
        SelfComposedEvent(LaplaceEvent(2.0, 2.0, discrete=True, label="snapshot"), 10),
        PoissonSampledEvent(GaussianEvent(3.0, 1.5, discrete=True), 0.1, label="step"),
        GatedEvent(PureDPEvent(1.2), 0.3)))
    return PrivacyReport(event, "word", description="test release", notes=("a caveat",),
                         paper_claim=PaperClaim("Huang et al. 2022", "huang2022_epsilon",
                                                {"alpha": 8, "gamma": 0.1, "iterations": 10,
                                                 "sigma": 2.0}),
                         seeded=seeded, assumed_public=("number of documents D = 800",),
                         vocabulary="public (given)")


def test_event_tree_round_trip_is_exact():
    report = _report()
    assert event_from_dict(json.loads(json.dumps(event_to_dict(report.event)))) == report.event


@pytest.mark.parametrize("seeded", [False, True])
def test_report_state_round_trip_keeps_epsilon(tmp_path, seeded):
    # every field survives, test mode included: a saved seeded release must load with its
    # TEST MODE line
    report = _report(seeded=seeded)
    again = PrivacyReport.from_state(json.loads(json.dumps(report.to_state())))
    assert again == report and again.seeded is seeded
    assert again.epsilon(1e-5) == report.epsilon(1e-5)
    path = Release(np.full((2, 3), 1 / 3), doc_topic_prior=0.5, privacy=report).save(
        str(tmp_path / "r"))
    loaded = Release.load(path).privacy
    assert loaded == report and str(loaded).startswith("TEST MODE") is seeded


@pytest.mark.parametrize("bad", [{"__event__": "Nope"}, {"sigma": 1.0}, {"__event__": "os"}])
def test_event_from_dict_refuses_unknown(bad):
    with pytest.raises(ValueError):
        event_from_dict(bad)


def test_report_states_test_mode_first_and_assumptions():
    text = str(_report(seeded=True)).splitlines()
    assert text[0].startswith("TEST MODE (seeded)") and "seed stays secret" in text[0]
    assert not str(_report()).startswith("TEST MODE")
    body = str(_report())
    assert "assumed public : number of documents D = 800" in body
    assert "vocabulary : public (given)" in body
    d = _report(seeded=True).to_dict()
    assert d["seeded"] is True and d["assumed_public"] == ["number of documents D = 800"]


def test_floating_point_leaves_are_labelled_not_hardened():
    exact = PrivacyReport(GaussianEvent(1.0, discrete=True), "document")
    fp = PrivacyReport(GaussianEvent(1.0), "document")
    assert "not hardened" not in str(exact)
    assert "not hardened" in str(fp)
    assert "not hardened" in str(PrivacyReport(LaplaceEvent(1.0), "word"))


def test_release_round_trip(fitted, demo, tmp_path):
    rel = fitted.release(vocabulary=demo.vocabulary)
    path = rel.save(str(tmp_path / "rel"))
    assert sorted(os.listdir(path)) == ["release.json", "topics.npz"]
    back = Release.load(path)
    assert back == rel
    assert np.array_equal(back.topic_word, fitted.topic_word_)
    X = demo.X[:20]
    assert np.array_equal(back.transform(X), rel.transform(X))
    assert np.array_equal(rel.transform(X), fitted.transform(X))
    assert back.perplexity(X) == pytest.approx(fitted.perplexity(X), rel=1e-12)
    assert back.top_words(3, as_frame=False)[0] == \
        [demo.vocabulary[i] for i in np.argsort(-fitted.topic_word_[0])[:3]]


def test_release_top_words_is_what_the_model_gives(fitted, demo):
    pd = pytest.importorskip("pandas")
    rel = fitted.release(vocabulary=demo.vocabulary)
    ours, model = rel.top_words(4), fitted.top_words(4, vocabulary=demo.vocabulary)
    assert isinstance(ours, pd.DataFrame)
    pd.testing.assert_frame_equal(ours, model)
    assert rel.top_words(4, as_frame=False) == model.values.tolist() == \
        fitted.top_words(4, vocabulary=demo.vocabulary, as_frame=False)
    # without a vocabulary: word ids, as the model gives them
    pd.testing.assert_frame_equal(fitted.release().top_words(2), fitted.top_words(2))
    with pytest.raises(TypeError, match="as_frame"):
        rel.top_words(2, as_frame="yes")


def test_release_with_privacy_round_trip(demo, tmp_path):
    rel = Release(np.full((2, 3), 1 / 3), doc_topic_prior=0.5, privacy=_report(),
                  vocabulary=["a", "b", "c"], model="X", hyperparameters={"k": 2})
    back = Release.load(rel.save(str(tmp_path / "r")))
    assert back == rel and back.privacy.epsilon(1e-5) == rel.privacy.epsilon(1e-5)
    assert back.vocabulary_provenance == "public (given)"


def test_release_holds_no_seed_and_no_runtime_options(fitted, tmp_path):
    rel = fitted.release()
    assert "random_state" not in rel.hyperparameters and "verbose" not in rel.hyperparameters
    with open(os.path.join(rel.save(str(tmp_path / "r")), "release.json")) as f:
        meta = json.load(f)
    assert "random_state" not in json.dumps(meta)


def test_release_validation():
    with pytest.raises(ValueError, match="topic_word"):
        Release(np.array([[0.5, -0.5]]), doc_topic_prior=1.0)
    with pytest.raises(ValueError, match="vocabulary"):
        Release(np.ones((1, 3)), doc_topic_prior=1.0, vocabulary=["a"])
    with pytest.raises(TypeError, match="privacy"):
        Release(np.ones((1, 3)), doc_topic_prior=1.0, privacy="eps=1")
    rel = Release(np.ones((2, 3)), doc_topic_prior=1.0)
    with pytest.raises(ValueError, match="3 words"):
        rel.transform(np.ones((1, 4), dtype=int))


def test_release_owns_its_topics():
    # catches an already normalised float64 topic_word kept by reference: the caller's later
    # edits would change the release (fresh round 5, J60); the caller's array is not written
    tw = np.full((2, 4), 0.25)
    rel = Release(tw, doc_topic_prior=1.0)
    tw[0, 0] = 7.0
    np.testing.assert_array_equal(rel.topic_word, np.full((2, 4), 0.25))
    raw = np.ones((2, 4))
    Release(raw, doc_topic_prior=1.0)
    np.testing.assert_array_equal(raw, np.ones((2, 4)))


def test_load_errors_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="release.json"):
        Release.load(str(tmp_path))
    (tmp_path / "release.json").write_text("{not json")
    with pytest.raises(ValueError, match="release.json"):
        Release.load(str(tmp_path))
    (tmp_path / "release.json").write_text('{"format": "other"}')
    with pytest.raises(ValueError, match="not a dptm release"):
        Release.load(str(tmp_path))


def test_report_uses_pld_when_installed_and_tighter():
    pytest.importorskip("dp_accounting", reason="dp-accounting (test extra) for the PLD route")
    from dptm.accounting import epsilon_and_method
    from dptm.accounting.pld import PLDAccountant
    event = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(1.0), 0.01), 500)
    report = PrivacyReport(event, "document")
    eps, route = report.epsilon_and_method(1e-5)
    rdp_eps, _ = epsilon_and_method(event, 1e-5)
    assert route == "pld" and eps < rdp_eps
    assert eps == PLDAccountant().compose(event).get_epsilon(1e-5)
    assert "accountant: pld" in str(report)
    # the discrete Gaussian has no PLD here (its privacy loss is not the continuous one's)
    discrete = PrivacyReport(SelfComposedEvent(GaussianEvent(2.0, discrete=True), 5), "document")
    assert discrete.epsilon_and_method(1e-5)[1] != "pld"


def test_pyldavis_data_is_the_release_and_the_declared_documents(fitted, demo):
    rel = fitted.release(vocabulary=demo.vocabulary)
    public = demo.X[:40]
    with pytest.raises(ValueError, match="documents must be"):
        rel.pyldavis_data(public, documents=True)
    with pytest.raises(TypeError):
        rel.pyldavis_data(public)                     # no default declaration
    data = rel.pyldavis_data(public, documents="held-out")
    assert np.array_equal(data["topic_term_dists"], rel.topic_word)
    assert np.array_equal(data["doc_topic_dists"], rel.transform(public))
    assert np.array_equal(data["doc_lengths"], np.asarray(public.sum(axis=1)).ravel())
    assert np.array_equal(data["term_frequency"], np.asarray(public.sum(axis=0)).ravel())
    assert data["vocab"] == list(demo.vocabulary)
    assert fitted.release().pyldavis_data(public, documents="public")["vocab"][:2] == ["0", "1"]
    # the core never imports pyLDAvis
    import subprocess
    import sys
    code = ("import sys, dptm, dptm.release; "
            "assert not [m for m in sys.modules if m.lower().startswith('pyldavis')]")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_pyldavis_prepares_the_export(fitted, demo):
    pyLDAvis = pytest.importorskip("pyLDAvis")
    rel = fitted.release(vocabulary=demo.vocabulary)
    data = rel.pyldavis_data(demo.X[:40], documents="public")
    assert (data["term_frequency"] == 0).any()      # words unseen in X are fine
    vis = pyLDAvis.prepare(**data, sort_topics=False, n_jobs=1)
    assert vis.topic_coordinates.shape[0] == rel.n_components


def test_save_never_replaces_a_release_by_accident(tmp_path):
    # catches the silent overwrite of an earlier release (os.makedirs(exist_ok=True) and
    # the files written over), and an overwrite=True that deletes the directory's other files
    first = Release(np.full((2, 3), 1 / 3), doc_topic_prior=0.5, model="first")
    second = Release(np.full((3, 3), 1 / 3), doc_topic_prior=0.5, model="second")
    path = str(tmp_path / "rel")
    first.save(path)
    with pytest.raises(FileExistsError, match=r"rel: the directory is not empty; pass "
                                              r"overwrite=True"):
        second.save(path)
    assert Release.load(path) == first
    with open(os.path.join(path, "NOTES.txt"), "w") as f:
        f.write("mine")
    assert Release.load(second.save(path, overwrite=True)) == second
    assert sorted(os.listdir(path)) == ["NOTES.txt", "release.json", "topics.npz"]
    os.mkdir(tmp_path / "empty")                 # an empty directory holds nothing to lose
    assert Release.load(first.save(tmp_path / "empty")) == first
    (tmp_path / "file").write_text("x")
    for overwrite in (False, True):
        with pytest.raises(FileExistsError, match="exists and is not a directory"):
            first.save(tmp_path / "file", overwrite=overwrite)
    with pytest.raises(TypeError, match="overwrite must be True or False"):
        first.save(tmp_path / "new", overwrite="yes")
    assert not (tmp_path / "new").exists()
