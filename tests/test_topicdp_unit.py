"""TopicDP's unit of privacy: the report claims the unit the sensitivity was measured on.

With ``reference_X`` the noise is calibrated to distances measured on the public reference
corpus, so the unit removed there (a reference user or a reference document) is the unit
of the guarantee; the private ``groups`` only name the unit the caller asks for."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from dptm.models.topicdp import TopicDP

pytestmark = pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning")

# 15 reference documents of 5 users; the private corpus has its own 6 users
REF_USERS = np.repeat(np.array(["ann", "bob", "cy", "dee", "eve"]), [3, 1, 4, 2, 5])
PRIVATE_USERS = np.repeat(np.arange(6), 5)


class ColumnSums(BaseEstimator):
    """One 'topic': the column sums of X. On the identity matrix it is uniform over the rows
    the fit saw, so the distance to the full fit tells how many rows a refit left out."""

    fits = 0

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X, y=None):
        type(self).fits += 1
        self.components_ = np.asarray(X.sum(axis=0)).reshape(1, -1) + 1e-12
        return self


def _distance_without(n_left_out, n=15):
    """Frobenius distance between uniform over n columns and uniform over n - n_left_out."""
    kept = n - n_left_out
    return float(np.sqrt(kept * (1 / kept - 1 / n) ** 2 + n_left_out / n ** 2))


def _data():
    ref = sp.identity(15, format="csr")
    X = sp.csr_matrix(np.random.default_rng(0).poisson(1.0, size=(30, 15)))
    return X, ref


def test_private_users_without_reference_users_are_refused_before_any_fit():
    # catches the overclaim: groups= made the report say "user" while the noise was
    # calibrated to removing one reference DOCUMENT (reference_groups=None)
    X, ref = _data()
    ColumnSums.fits = 0
    with pytest.raises(ValueError) as err:
        TopicDP(ColumnSums(), gamma=0.5, reference_X=ref, random_state=0).fit(
            X, groups=PRIVATE_USERS)
    msg = str(err.value)
    assert "groups" in msg and "reference_groups" in msg and "user" in msg
    assert ColumnSums.fits == 0             # refused before the base fit and the refits


def test_reference_users_without_private_users_are_refused():
    # the converse mismatch: the noise measured for removing a whole reference user, the
    # report stating document level for the private data
    X, ref = _data()
    with pytest.raises(ValueError, match=r"reference_groups.*groups"):
        TopicDP(ColumnSums(), gamma=0.5, reference_X=ref, reference_groups=REF_USERS,
                random_state=0).fit(X)


def test_reference_groups_without_reference_X_are_refused():
    # reference_groups would otherwise be silently ignored next to a given bound
    X, _ = _data()
    with pytest.raises(ValueError, match=r"reference_groups.*reference_X"):
        TopicDP(ColumnSums(), sensitivity=0.1, reference_groups=REF_USERS,
                random_state=0).fit(X, groups=PRIVATE_USERS)


def test_user_level_sampling_removes_whole_reference_users_and_says_so():
    # every sampled distance is that of removing a whole reference user (3, 1, 4, 2 or 5
    # documents), not a single document; the report names the unit and the user count
    X, ref = _data()
    dp = TopicDP(ColumnSums(), gamma=0.3, reference_X=ref, reference_groups=REF_USERS,
                 random_state=0).fit(X, groups=PRIVATE_USERS)
    allowed = {n: _distance_without(n) for n in (1, 2, 3, 4, 5)}
    d = dp.sensitivity_samples_
    assert all(min(abs(x - v) for v in allowed.values()) < 1e-9 for x in d)
    assert d.max() > allowed[1] + 1e-6      # some refit left out more than one document
    assert dp.privacy_.adjacency == "user"
    text = str(dp.privacy_)
    assert "one uniformly random user (5 users given by reference_groups)" in text
    assert "its users (reference_groups: 5 users)" in dp.privacy_.assumed_public


def test_document_level_sampling_removes_one_reference_document_and_says_so():
    X, ref = _data()
    dp = TopicDP(ColumnSums(), gamma=0.3, reference_X=ref, random_state=0).fit(X)
    np.testing.assert_allclose(dp.sensitivity_samples_, _distance_without(1), atol=1e-12)
    text = str(dp.privacy_)
    assert "one uniformly random document" in text
    assert "every document is its own user" in text
