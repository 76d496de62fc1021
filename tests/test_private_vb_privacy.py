"""PrivateBatchLDA's privacy, checked from outside the accountant: the default schedule's
epsilon is the closed-form zCDP composition of its recorded sigmas, the schedule does not
depend on the corpus size, and one document's contribution stays within clip_norm (subnormal
squares, exact lattice norms, duplicate CSR entries)."""
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar

from dptm.models import private_vb as P
from dptm.models.private_vb import PrivateBatchLDA, _expected_counts, _within_norm


def _zcdp_epsilon(rho, delta):
    """(epsilon, delta) of rho-zCDP, computed here (not by dptm.accounting): the RDP
    conversion of Canonne, Kamath & Steinke 2020 Prop. 12 (Balle et al. 2020 Thm. 21),
    minimised over continuous orders alpha > 1."""
    def f(a):
        return a * rho + math.log1p(-1 / a) - (math.log(delta) + math.log(a)) / (a - 1)
    return minimize_scalar(f, bounds=(1 + 1e-6, 1e5), method="bounded",
                           options={"xatol": 1e-10}).fun


@pytest.mark.parametrize("eps", [2.0, 4.0, 8.0])
@pytest.mark.parametrize("clip_norm", [1.0, 7.3])
def test_default_schedule_epsilon_is_the_closed_form_of_its_sigmas(eps, clip_norm):
    # The recorded releases (eight presence releases of share 0.075 and one count release
    # of 0.4 from eps 4) are Gaussians of L2 sensitivity clip_norm: rho = sum C^2 / (2
    # sigma_i^2), computed here from release_sigmas_ alone. The report states that
    # composition (never less), it meets the target, and the sigmas are in the schedule's
    # proportions sigma_i ~ 1 / sqrt(share_i). A composition the shared accountant got
    # wrong in calibration and report alike (e.g. the discrete Gaussian's RDP, or a run of
    # equal releases counted once) would pass the tests that compare it with itself.
    X = sp.csr_matrix(np.random.default_rng(0).poisson(0.8, (30, 12)).astype(np.int64))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = PrivateBatchLDA(3, target_epsilon=eps, clip_norm=clip_norm, random_state=0).fit(X)
    shares = [w for _, w in P.default_schedule(eps)]
    assert m.n_iter_ == len(shares) == (9 if eps >= 4 else 5)
    s = np.array(m.release_sigmas_)
    np.testing.assert_allclose(s * np.sqrt(shares), s[-1] * math.sqrt(shares[-1]), rtol=1e-5)
    rho = sum(clip_norm ** 2 / (2 * x * x) for x in s)
    want = _zcdp_epsilon(rho, 1e-5)
    got = m.privacy_.epsilon(1e-5)
    assert want - 1e-9 <= got <= want + 1e-3
    assert got <= eps
    assert f"count={len(shares) - 1}" in str(m.privacy_)         # the presence releases


def test_default_schedule_does_not_depend_on_the_corpus_size():
    # The schedule (and so n_iter_, release_sigmas_ and the report) is a function of the
    # PUBLIC epsilon only, not of the number of documents, which PrivateBatchLDA neither
    # uses nor publishes: the eight releases were measured to help large corpora and hurt
    # small ones, so choosing them by corpus size would be the tempting (leaking) change.
    rng = np.random.default_rng(1)
    small = sp.csr_matrix(rng.poisson(0.8, (3, 10)).astype(np.int64))
    large = sp.csr_matrix(rng.poisson(0.8, (600, 10)).astype(np.int64))
    for eps in (1.0, 3.9, 4.0, 8.0):
        seen = []
        for X in (small, large):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = PrivateBatchLDA(2, target_epsilon=eps, random_state=3).fit(X)
            seen.append((m.n_iter_, m.release_sigmas_, str(m.privacy_)))
        assert seen[0] == seen[1]


# ------------------------------------------------ per-document sensitivity
def _dead_word_document(K, seed=1):
    """Topics thresholded to the prior except three live rows, and a document whose words
    are all outside the live entries: every pair's normaliser sits at its 1e-100 floor."""
    rng = np.random.default_rng(seed)
    V = 40
    beta = np.full((K, V), 1.0 / K)
    beta[rng.integers(0, K, size=3), :10] += rng.random((3, 10)) * 1e4
    x = np.zeros((1, V))
    x[0, rng.choice(np.arange(10, V), size=5, replace=False)] = rng.integers(1, 4, size=5)
    return sp.csr_matrix(x), beta


@pytest.mark.parametrize("K", [300, 350])
def test_contribution_norm_never_exceeds_the_clip_with_subnormal_squares(K):
    # Before the fix the sum of squares was subnormal (~1e-311) and the scaled document
    # had norm 1 + 4.7e-11 > clip_norm = 1 (K = 300): its sensitivity was exceeded.
    X, beta = _dead_word_document(K)
    stat = _expected_counts(X, beta, 1.0 / K, 1.0)
    assert stat.max() > 0                                    # the document does contribute
    assert math.fsum((stat * stat).ravel()) <= 1.0


def test_lattice_contributions_checked_exactly():
    # _within_norm: integer sum of squares against floor(bound^2), exactly, at the edge
    bound = 1000.5                                   # bound^2 = 1001000.25
    assert math.floor(Fraction(bound) ** 2) == 1001000
    on = np.array([[1000.0, 30.0], [10.0, 0.0]])     # 1000^2 + 30^2 + 10^2 = 1001000
    over = np.array([[1000.0, 30.0], [10.0, 1.0]])   # 1001001: one unit above
    far = 2.0 * over
    m = np.vstack([on, over, far])
    indptr = np.array([0, 2, 4, 6])
    np.testing.assert_array_equal(_within_norm(m, indptr, bound), [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="noise too small"):
        _within_norm(m, indptr, 2.0 ** 31)


def test_duplicate_entries_do_not_multiply_the_sensitivity():
    # a non-canonical CSR row storing word 1 twice: before the fix its contribution had
    # norm sqrt(2) (the norm was taken per stored pair, the sum per cell)
    K, V = 3, 5
    beta = 1.0 + np.random.default_rng(0).random((K, V))
    X = sp.csr_matrix((np.array([2.0, 2.0]), np.array([1, 1]), np.array([0, 2])), shape=(1, V))
    assert not X.has_canonical_format
    data = X.data.copy()
    for g in (None, 2.0 ** -12):
        stat = _expected_counts(X, beta, 0.3, 1.0, granularity=g)
        assert math.fsum((stat * stat).ravel()) <= 1.0
    np.testing.assert_array_equal(X.data, data)             # the caller's matrix untouched
    assert not X.has_canonical_format
    canon = sp.csr_matrix(np.array([[0.0, 4.0, 0.0, 0.0, 0.0]]))
    np.testing.assert_allclose(_expected_counts(X, beta, 0.3, 1.0),
                               _expected_counts(canon, beta, 0.3, 1.0), rtol=1e-12)
