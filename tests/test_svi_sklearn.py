"""scikit-learn's estimator checks on the non-private PrivateOnlineLDA.

As in test_sklearn_compat.py, the generic checks feed continuous features while dptm's
models take integer counts: a test-only subclass rounds each input to counts before it
reaches the real code path.
"""
import numpy as np
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

from dptm.models.svi import PrivateOnlineLDA


def _to_counts(X):
    if sp.issparse(X):
        X = sp.csr_matrix(X, copy=True)
        X.data = np.rint(X.data)
        return X
    X = np.asarray(X)
    if X.dtype.kind in "fO":
        try:
            return np.rint(X.astype(float))
        except (TypeError, ValueError):  # non-numeric objects: let fit reject them
            return X
    return X


class RoundedOnlineLDA(PrivateOnlineLDA):
    def fit(self, X, y=None):
        return super().fit(_to_counts(X), y)

    def partial_fit(self, X, y=None):
        return super().partial_fit(_to_counts(X), y)

    def transform(self, X):
        return super().transform(_to_counts(X))

    def perplexity(self, X):
        return super().perplexity(_to_counts(X))

    def score(self, X, y=None):
        return super().score(_to_counts(X), y)


@parametrize_with_checks([RoundedOnlineLDA(n_components=3, batch_size=20, max_iter=3, random_state=0)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
