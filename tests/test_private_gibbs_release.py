"""What the private Gibbs samplers publish: ``release()`` on word-level neighbours.

Fitted in test mode with the same seed on two corpora that differ in one token's word,
every field of the release that is not a privatized value (model, hyperparameters, priors,
the transform seed, the whole privacy report) is identical, and the released arrays are
recomputed exactly from the recorded final snapshot.
"""
import numpy as np
import pytest

from dptm import NoisyGibbsLDA, Release, SubsampledGibbsLDA

from _neighbours import word_replaced

pytestmark = pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning")

CASES = [
    (NoisyGibbsLDA, {"clip": 8.0}),
    (NoisyGibbsLDA, {}),                                            # clip = N, listed public
    (NoisyGibbsLDA, {"noise_schedule": "first", "clip": 8.0}),
    (NoisyGibbsLDA, {"noise_schedule": "last", "clip": 8.0}),
    (NoisyGibbsLDA, {"target_epsilon": 200.0, "clip": 4.0, "topic_word_prior": 0.5}),
    (SubsampledGibbsLDA, {"sample_rate": 0.4, "clip": 8.0}),
    (SubsampledGibbsLDA, {"sample_rate": 0.4, "clip": 8.0, "target_epsilon": 300.0}),
    (SubsampledGibbsLDA, {"sample_rate": 0.4, "adaptive": True, "adaptive_v": 2.0,
                          "adaptive_q": 0.5, "accounting": "paper", "clip": 8.0}),
]


@pytest.fixture(scope="module")
def neighbours():
    X, Xp = word_replaced(50)
    assert np.abs(X - Xp).sum() == 2 and (X.sum(axis=1) == Xp.sum(axis=1)).all()
    return X, Xp


def _public(release):
    """Every field of a release that is not a privatized array."""
    return {"model": release.model, "hyperparameters": release.hyperparameters,
            "doc_topic_prior": release.doc_topic_prior, "transform_seed": release.transform_seed,
            "transform_max_iter": release.transform_max_iter, "vocabulary": release.vocabulary,
            "provenance": release.vocabulary_provenance, "report": str(release.privacy),
            "report_dict": release.privacy.to_dict(), "report_state": release.privacy.to_state()}


@pytest.mark.parametrize("cls,kw", CASES)
def test_release_is_neighbour_invariant_except_the_privatized_arrays(neighbours, cls, kw, tmp_path):
    X, Xp = neighbours
    vocab = [f"w{i}" for i in range(X.shape[1])]
    fits = [cls(3, max_iter=4, record_trace=True, random_state=7, **kw).fit(data) for data in (X, Xp)]
    releases = [m.release(vocabulary=vocab) for m in fits]
    p0, p1 = _public(releases[0]), _public(releases[1])
    for key in p0:
        assert p0[key] == p1[key], key
    assert releases[0].privacy == releases[1].privacy
    for m, r in zip(fits, releases):
        beta = m.topic_word_prior_
        final = m.trace_["snapshots"][-1]
        np.testing.assert_array_equal(m.snapshot_, final)
        # the released arrays, recomputed from the recorded privatized snapshot alone
        np.testing.assert_array_equal(r.components, np.maximum(final, 0).T + beta)
        np.testing.assert_array_equal(r.topic_word, cls.topic_word_from_snapshot(final, beta))
        assert "random_state" not in r.hyperparameters
        assert any("vocabulary (V = 25 words)" in a for a in r.privacy.assumed_public)
        if kw.get("clip") is None:
            assert any("number of tokens N" in a for a in r.privacy.assumed_public)
        # round trip through plain files
        path = r.save(tmp_path / f"{cls.__name__}-{id(r)}")
        loaded = Release.load(path)
        assert loaded == r
        np.testing.assert_array_equal(loaded.transform(X[:4]), r.transform(X[:4]))


def test_early_stopping_report_is_neighbour_invariant(neighbours):
    X, Xp = neighbours
    held_out = X[40:]
    fits = [SubsampledGibbsLDA(3, sample_rate=0.5, convergence_tol=1e9, convergence_window=2,
                               max_iter=30, transform_max_iter=4, random_state=3)
            .fit(data[:40], eval_X=held_out) for data in (X, Xp)]
    assert all(m.n_iter_ < 30 for m in fits)
    assert str(fits[0].privacy_) == str(fits[1].privacy_)
    assert fits[0].privacy_.events[0][1] == 30                  # accounted at max_iter


def test_release_uses_the_topic_word_prior_not_the_document_prior(neighbours):
    X, _ = neighbours
    m = NoisyGibbsLDA(3, doc_topic_prior=0.3, topic_word_prior=0.05, clip=8.0, max_iter=3,
                      random_state=0).fit(X)
    r = m.release()
    np.testing.assert_array_equal(r.components, np.maximum(m.snapshot_, 0).T + 0.05)
    np.testing.assert_array_equal(m.components_, np.maximum(m.snapshot_, 0).T + 0.05)
    np.testing.assert_array_equal(m.topic_word_, NoisyGibbsLDA.topic_word_from_snapshot(m.snapshot_, 0.05))
    assert r.doc_topic_prior == 0.3
