"""PrivateBatchLDA's privacy, checked from outside the accountant: the default schedule's
epsilon is the closed-form zCDP composition of its recorded sigmas (the norm histogram's
included), the plan does not depend on the corpus size, and one document's contribution stays within clip_norm (subnormal
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

from _releases import force_lattice_releases


def _zcdp_epsilon(rho, delta):
    """(epsilon, delta) of rho-zCDP, computed here (not by dptm.accounting): the RDP
    conversion of Canonne, Kamath & Steinke 2020 Prop. 12 (Balle et al. 2020 Thm. 21),
    minimised over continuous orders alpha > 1."""
    def f(a):
        return a * rho + math.log1p(-1 / a) - (math.log(delta) + math.log(a)) / (a - 1)
    return minimize_scalar(f, bounds=(1 + 1e-6, 1e5), method="bounded",
                           options={"xatol": 1e-10}).fun


# model releases of the default plan (search releases + the count release), by epsilon
_N_MODEL = {2.0: 4, 4.0: 9, 8.0: 13}


@pytest.mark.parametrize("eps", [2.0, 4.0, 8.0])
@pytest.mark.parametrize("clip_norm", [1.0, 7.3, None])
def test_default_schedule_epsilon_is_the_closed_form_of_its_sigmas(eps, clip_norm):
    # The recorded releases are Gaussians: the model releases (search releases of equal
    # share, one count release of share 0.4) of L2 sensitivity C = clip_norm_ and, unless
    # clip_norm is public, first the norm histogram (share 0.02) of sensitivity 1:
    # rho = 1 / (2 sigma_h^2) + sum C^2 / (2 sigma_i^2), computed here from release_sigmas_,
    # clip_norm_ and the histogram's sigma. The report states that composition (never
    # less), it meets the target, and every noise multiplier is in the plan's proportions
    # z_i ~ 1 / sqrt(share_i), the histogram's included. A composition the shared
    # accountant got wrong in calibration and report alike (e.g. the discrete Gaussian's
    # RDP, a run of equal releases counted once, or the histogram left out of the report)
    # would pass the tests that compare it with itself.
    X = sp.csr_matrix(np.random.default_rng(0).poisson(0.8, (30, 12)).astype(np.int64))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = PrivateBatchLDA(3, target_epsilon=eps, clip_norm=clip_norm, random_state=0).fit(X)
    hist = clip_norm is None
    assert [r.statistic == "norm-histogram" for r in m.plan_] == [hist] + [False] * (
        len(m.plan_) - 1)
    model = m.plan_[1:] if hist else m.plan_
    assert m.n_iter_ == len(model) == len(m.release_sigmas_) == _N_MODEL[eps]
    C = m.clip_norm_
    if not hist:
        assert C == clip_norm
    leaves = m.privacy_.to_dict()["mechanisms"]
    # the report's Gaussians, expanded: the histogram (sensitivity 1) first, then one per
    # model release with exactly the recorded sigma and sensitivity C
    expanded = [(x["sigma"], x["sensitivity"]) for x in leaves for _ in range(x["count"])]
    assert len(expanded) == len(m.plan_)
    if hist:
        sigma_h, sens_h = expanded.pop(0)
        assert sens_h == 1.0
        assert sigma_h == pytest.approx(m.plan_[0].z, rel=1e-6)
    assert expanded == [(x, C) for x in m.release_sigmas_]
    s = np.array(m.release_sigmas_)
    z = [x / C for x in s] + ([sigma_h] if hist else [])
    shares = [r.share for r in model] + ([m.plan_[0].share] if hist else [])
    np.testing.assert_allclose(np.array(z) * np.sqrt(shares), z[0] * math.sqrt(shares[0]),
                               rtol=1e-5)
    assert math.fsum(shares) == pytest.approx(1.0, abs=1e-12)
    assert (m.plan_[0].share == pytest.approx(0.02)) == hist
    rho = sum(C ** 2 / (2 * x * x) for x in s) + (1 / (2 * sigma_h ** 2) if hist else 0.0)
    want = _zcdp_epsilon(rho, 1e-5)
    got = m.privacy_.epsilon(1e-5)
    assert want - 1e-9 <= got <= want + 1e-3
    assert got <= eps
    assert f"count={len(model) - 1}" in str(m.privacy_)         # the search releases
    # leaving the histogram out would claim less than what was spent
    if hist:
        assert _zcdp_epsilon(rho - 1 / (2 * sigma_h ** 2), 1e-5) < want - 1e-3


def _force_the_norm_histogram(monkeypatch):
    """The norm-histogram release forced to one value (its noise still drawn): the clip
    bound, the sigmas, the noisy count and the report are its post-processing."""
    n = P._BINS_PER_OCTAVE * P._OCTAVES
    value = np.full((1, n), 1000.0 * (np.arange(n) < 12))

    def forced(release, stat, noisy):
        if stat.shape == (1, n) and release.granularity == 1.0:
            return value.copy()
        return None
    force_lattice_releases(monkeypatch, forced)


def test_default_schedule_does_not_depend_on_the_corpus_size(monkeypatch):
    # The plan (number of releases, their statistics, shares and noise multipliers, so
    # n_iter_) is a function of the PUBLIC epsilon only, not of the number of documents,
    # which PrivateBatchLDA neither uses nor publishes but through the noisy histogram:
    # the search releases were measured to help large corpora and hurt small ones, so
    # choosing them by corpus size would be the tempting (leaking) change. With a public
    # clip_norm, or with the histogram release forced to one value, the sigmas, the clip
    # bound and the report are the same too.
    rng = np.random.default_rng(1)
    small = sp.csr_matrix(rng.poisson(0.8, (3, 10)).astype(np.int64))
    large = sp.csr_matrix(rng.poisson(0.8, (600, 10)).astype(np.int64))

    def fits(**kw):
        out = []
        for X in (small, large):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(PrivateBatchLDA(2, target_epsilon=eps, random_state=3, **kw).fit(X))
        return out

    for eps in (1.0, 3.9, 4.0, 8.0):
        for m in fits():                                    # the default path, unforced
            assert m.plan_ == P.fit_plan(eps, 1e-5, 2, 10)
            assert m.n_iter_ == len(m.plan_) - 1
        seen = [(m.n_iter_, m.plan_, m.release_sigmas_, m.clip_norm_, str(m.privacy_))
                for m in fits(clip_norm=2.0)]
        assert seen[0] == seen[1]
        assert seen[0][1] == P.fit_plan(eps, 1e-5, 2, 10, clip_norm=2.0)
    _force_the_norm_histogram(monkeypatch)
    for eps in (1.0, 3.9, 4.0, 8.0):
        seen = [(m.n_iter_, m.plan_, m.release_sigmas_, m.clip_norm_, m.n_documents_estimate_,
                 str(m.privacy_)) for m in fits()]
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
