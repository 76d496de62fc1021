"""audit(): the experiment itself, end to end - who trains the target, which vocabulary,
and whether a planted leak is found."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from _planted import Memorizer
from dptm.attacks import audit, auc


class _Recorder(BaseEstimator):
    """Remembers the documents it was trained on; topics independent of the data."""

    def __init__(self, n_components=3, random_state=None):
        self.n_components = n_components
        self.random_state = random_state

    def fit(self, X, y=None):
        self.X_fit_ = sp.csr_matrix(X, copy=True)
        rng = np.random.default_rng(self.random_state)
        self.topic_word_ = rng.dirichlet(np.ones(X.shape[1]), size=self.n_components)
        return self


@pytest.fixture(scope="module")
def corpus():
    # 80 documents; each has 2 words of its own (only it uses them) and 6 shared ones, so
    # the vocabulary of any half of the documents differs from the full vocabulary.
    rng = np.random.default_rng(0)
    D, shared = 80, 30
    X = np.zeros((D, shared + 2 * D), dtype=np.int64)
    for d in range(D):
        X[d, rng.choice(shared, 6, replace=False)] += 2
        X[d, shared + 2 * d: shared + 2 * d + 2] = 3
    return sp.csr_matrix(X)


@pytest.fixture(scope="module")
def recorded(corpus):
    return audit(_Recorder(), corpus, n_shadows=4, baselines=False, random_state=1)


def test_target_is_trained_on_exactly_the_members(corpus, recorded):
    members = recorded.labels.astype(bool)
    assert 0 < members.sum() < corpus.shape[0]
    Xv = corpus[:, np.flatnonzero(recorded.vocabulary_mask)]
    trained = recorded.target.X_fit_
    assert trained.shape == Xv[members].shape
    assert (trained != Xv[members]).nnz == 0


def test_vocabulary_is_that_of_the_members_documents(corpus, recorded):
    members = recorded.labels.astype(bool)
    expected = np.asarray(corpus[members].sum(axis=0)).ravel() > 0
    assert np.array_equal(recorded.vocabulary_mask, expected)
    # and it is smaller than the whole corpus' (the non-members' own words are out)
    assert recorded.vocabulary_mask.sum() < corpus.shape[1]


def test_planted_leak_is_detected_and_a_blind_model_is_not(corpus):
    leak = audit(Memorizer(), corpus, n_shadows=8, baselines=False, random_state=2)
    blind = audit(_Recorder(), corpus, n_shadows=8, baselines=False, random_state=2)
    members = leak.labels.astype(bool)
    for name, s in leak.scores.items():
        assert auc(members, s) > 0.9, name
    for name, s in blind.scores.items():
        assert auc(blind.labels.astype(bool), s) < 0.75, name


def test_audit_result_plots_its_roc_curves(corpus, recorded):
    matplotlib = pytest.importorskip("matplotlib", reason="matplotlib (test extra) for plots")
    matplotlib.use("Agg")
    ax = recorded.plot()
    labels = [line.get_label() for line in ax.get_lines()]
    assert len(labels) == len(recorded.scores) + 1            # one curve per attack + chance
    assert all(any(name in lab for lab in labels) for name in recorded.scores)
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="not in this result"):
        recorded.plot(attacks=["nope"])
