"""The release boundary against hostile files and a report that must be true: Release.load
never unpickles and refuses negative topic-word entries; TopicDP's rows are really in a
random order when its report says so."""
import os
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from dptm.models.topicdp import TopicDP
from dptm.release import Release


class _Fixed(BaseEstimator):
    def __init__(self, topics=None, random_state=None):
        self.topics = topics
        self.random_state = random_state

    def fit(self, X, y=None):
        self.components_ = np.asarray(self.topics, dtype=float)
        return self


def _saved(tmp_path):
    tw = np.random.default_rng(0).dirichlet(np.ones(6), size=3)
    path = str(tmp_path / "rel")
    Release(tw, doc_topic_prior=0.5, model="x").save(path)
    return path, tw


def test_load_never_unpickles(tmp_path):
    path, tw = _saved(tmp_path)
    # an object array (what a pickle payload needs) in place of the topics
    np.savez(os.path.join(path, "topics.npz"), topic_word=tw.astype(object))
    with pytest.raises(ValueError, match="[Oo]bject arrays|allow_pickle|must be a float64 array"):
        Release.load(path)


def test_load_refuses_negative_topic_word_entries(tmp_path):
    path, tw = _saved(tmp_path)
    bad = tw.copy()
    bad[0, 0], bad[0, 1] = -0.25, bad[0, 1] + bad[0, 0] + 0.25      # row sum still 1
    np.savez(os.path.join(path, "topics.npz"), topic_word=bad)
    with pytest.raises(ValueError, match="topic_word"):
        Release.load(path)
    with pytest.raises(ValueError, match="non-negative"):
        Release(bad, doc_topic_prior=0.5)


def test_topicdp_rows_are_in_a_random_order_as_reported():
    # 8 distinct topics, noise tiny against their differences: each released row is
    # matched to its base topic. The report says "rows in random order"; three default
    # fits all in the base order would happen with probability (1/8!)^3 < 2e-14.
    rng = np.random.default_rng(3)
    topics = rng.dirichlet(np.ones(30) * 0.3, size=8)
    X = rng.poisson(2.0, size=(40, 30))
    orders = []
    for _ in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = TopicDP(_Fixed(topics), target_epsilon=50.0, sensitivity=1e-4).fit(X)
        assert "rows in random order" in str(m.privacy_)
        base = topics / topics.sum(axis=1, keepdims=True)
        d = ((m.topic_word_[:, None, :] - base[None, :, :]) ** 2).sum(axis=2)
        match = d.argmin(axis=1)
        assert sorted(match.tolist()) == list(range(8))         # a permutation of the topics
        orders.append(tuple(match.tolist()))
    assert any(o != tuple(range(8)) for o in orders)
