"""scikit-learn's estimator checks on the non-private estimators (GibbsLDA, and
PrivateOnlineLDA without noise, which is plain online LDA).

The generic checks feed continuous features, but dptm's models take integer counts and
reject fractional input by design. The checks therefore run on a test-only subclass that
rounds each input to counts before it reaches the real ``fit``/``transform``; everything
else (cloning, params, fitted state, pickling, n_features_in_, idempotence, subset and
order invariance, sparse input) is checked on the real code path.
"""
import numpy as np
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

from dptm.models.gibbs import GibbsLDA
from dptm.models.svi import PrivateOnlineLDA


def _to_counts(X):
    """Round to counts; a read-only input (check_readonly_memmap_input) stays read-only, so
    that check still exercises the estimator's handling of read-only data."""
    if sp.issparse(X):
        data = getattr(X, "data", None)
        readonly = isinstance(data, np.ndarray) and not data.flags.writeable
        X = sp.csr_matrix(X, copy=True)
        X.data = np.rint(X.data)
        if readonly:
            for a in (X.data, X.indices, X.indptr):
                a.flags.writeable = False
        return X
    readonly = isinstance(X, np.ndarray) and not X.flags.writeable
    X = np.asarray(X)
    if X.dtype.kind in "fO":
        try:
            X = np.rint(X.astype(float))
        except (TypeError, ValueError):  # non-numeric objects: let fit reject them
            return X
        X.flags.writeable = not readonly
    return X


class _CountsMixin:
    """Rounds the generic checks' inputs to counts before the real methods run."""

    def fit(self, X, y=None):
        return super().fit(_to_counts(X), y)

    def transform(self, X):
        return super().transform(_to_counts(X))

    def perplexity(self, X):
        return super().perplexity(_to_counts(X))

    def score(self, X, y=None):
        return super().score(_to_counts(X), y)


class RoundedGibbsLDA(_CountsMixin, GibbsLDA):
    pass


class RoundedOnlineLDA(_CountsMixin, PrivateOnlineLDA):
    """PrivateOnlineLDA without noise parameters is plain online LDA."""

    def partial_fit(self, X, y=None):
        return super().partial_fit(_to_counts(X), y)


@parametrize_with_checks([
    RoundedGibbsLDA(n_components=3, max_iter=5, random_state=0),
    RoundedOnlineLDA(n_components=3, batch_size=20, max_iter=3, random_state=0),
])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
