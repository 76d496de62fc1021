"""Trainers of known behaviour for the privacy tests: a planted leak (LiRA, the audit) and
topics that ignore the data (TopicDP)."""
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator


class Memorizer(BaseEstimator):
    """A planted leak: one topic per training document (its smoothed word frequencies)."""

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X, y=None):
        counts = np.asarray(sp.csr_matrix(X).todense(), dtype=float) + 1e-3
        self.topic_word_ = counts / counts.sum(axis=1, keepdims=True)
        return self


class FixedTopics(BaseEstimator):
    """A 'model' whose topics do not depend on the data (``topics``, positive entries)."""

    def __init__(self, topics=None, random_state=None):
        self.topics = topics
        self.random_state = random_state

    def fit(self, X, y=None):
        self.components_ = np.asarray(self.topics)
        return self
