"""TopicDP (papers/wang2022): Algorithm 1 constants, calibration, alignment, the release."""
import itertools
import math
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from scipy.special import log_ndtr
from sklearn.base import BaseEstimator
from sklearn.decomposition import NMF, LatentDirichletAllocation, TruncatedSVD

from _planted import FixedTopics
from dptm import GibbsLDA
from dptm.accounting import calibrate_gaussian, dp_to_rdp
from dptm.datasets import make_lda_corpus
from dptm.mechanisms import discrete_gaussian_pmf, round_to_lattice
from dptm.models.topicdp import (TopicDP, aligned_frobenius, block_distance, gaussian_sigma,
                                keyword_block, mvg_sigma, sample_sensitivities,
                                sensitivity_sample_size, topic_word_matrix)


pytestmark = pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning")


@pytest.fixture(scope="module")
def reference():
    """A public reference corpus over the same 40 columns (another draw of the generator)."""
    X, _, _ = make_lda_corpus(120, 40, 3, doc_length=60, doc_topic_prior=0.1,
                              topic_word_prior=0.05, random_state=2)
    return X


@pytest.fixture(scope="module")
def corpus():
    X, topics, _ = make_lda_corpus(120, 40, 3, doc_length=60, doc_topic_prior=0.1,
                                   topic_word_prior=0.05, random_state=1)
    return X, topics


def nmf():
    return NMF(n_components=3, max_iter=200, init="nndsvda")


# ----------------------------------------------------------------------------- Algorithm 1
@pytest.mark.parametrize("gamma", [0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.9])
def test_sample_size_matches_the_formulas(gamma):
    h, k, rho = sensitivity_sample_size(gamma)
    # rho from the Lambert W expression is the minimiser of log(1/rho) / (2 (gamma - rho)^2)
    f = lambda r: math.log(1 / r) / (2 * (gamma - r) ** 2)
    grid = np.linspace(rho / 50, min(gamma, 0.5) * 0.999, 20001)
    assert f(rho) <= min(f(r) for r in grid) + 1e-9
    assert h == math.ceil(f(rho))
    assert k == min(h, math.ceil(h * (1 - gamma + rho + math.sqrt(math.log(1 / rho) / (2 * h)))))
    # Theorem 1's conditions (3) and (4)
    assert h >= math.log(1 / rho) / (2 * (gamma - rho) ** 2)
    assert k >= h * (1 - gamma + rho + math.sqrt(math.log(1 / rho) / (2 * h))) - 1e-9
    assert 1 <= k <= h


def test_sample_size_golden_values():
    # gamma = 0.1: rho = exp(W_-1(-0.1 / (2 sqrt e)) + 1/2) = 0.0097446..., h = 285
    h, k, rho = sensitivity_sample_size(0.1)
    assert (h, k) == (285, 285)
    assert rho == pytest.approx(0.00974461166524198, rel=1e-10)
    assert sensitivity_sample_size(0.2)[:2] == (61, 61)
    # an explicit, non-optimal rho gives a larger h
    assert sensitivity_sample_size(0.1, rho=0.05)[0] > 285


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_sample_size_rejects_bad_gamma(bad):
    with pytest.raises(ValueError, match="gamma"):
        sensitivity_sample_size(bad)


def test_sample_size_rejects_rho_above_gamma():
    with pytest.raises(ValueError, match="rho"):
        sensitivity_sample_size(0.1, rho=0.2)


# ----------------------------------------------------------------------------- calibration
@pytest.mark.parametrize("eps,delta,alpha", [(1.0, 1e-4, 2.0), (3.0, 1e-4, 2.0),
                                             (5.0, 1e-5, 2.0), (2.0, 1e-3, 3.0)])
def test_sigma_follows_renyi_formula(eps, delta, alpha):
    sigma, eps_r = gaussian_sigma(0.37, eps, delta, "renyi", alpha)
    assert eps_r == dp_to_rdp(eps, delta, alpha)
    assert sigma ** 2 == pytest.approx(alpha * 0.37 ** 2 / (2 * eps_r), rel=1e-12)


def _exact_gaussian_delta(noise_multiplier, eps):
    """Exact delta(eps) of the Gaussian mechanism (Balle & Wang 2018, Theorem 8)."""
    a, c = 0.5 / noise_multiplier, eps * noise_multiplier
    return math.exp(log_ndtr(a - c)) - math.exp(eps + log_ndtr(-a - c))


@pytest.mark.parametrize("calibration", ["renyi", "gaussian"])
@pytest.mark.parametrize("eps,delta", [(0.5, 1e-3), (1.0, 1e-4), (3.0, 1e-4), (10.0, 1e-6)])
def test_calibrated_noise_meets_the_target_exactly(calibration, eps, delta):
    # whatever the route, the Gaussian mechanism with this sigma is (eps, delta)-DP at the
    # sampled sensitivity: checked against the exact privacy profile, not the accountant
    sigma, _ = gaussian_sigma(1.0, eps, delta, calibration)
    assert _exact_gaussian_delta(sigma, eps) <= delta


def test_renyi_route_reports_a_smaller_epsilon_than_the_target(corpus):
    X, _ = corpus
    dp = TopicDP(nmf(), target_epsilon=3.0, target_delta=1e-4, sensitivity=0.05,
                 calibration="renyi", random_state=0).fit(X)
    eps = dp.privacy_.epsilon(1e-4)
    assert 0 < eps <= 3.0
    # the default calibration is the tight one
    tight = TopicDP(nmf(), target_epsilon=3.0, target_delta=1e-4, sensitivity=0.05,
                    random_state=0).fit(X)
    assert tight.noise_scale_ < dp.noise_scale_
    assert tight.privacy_.epsilon(1e-4, method="rdp") == pytest.approx(3.0, rel=2e-3)
    assert tight.privacy_.epsilon(1e-4) <= tight.privacy_.epsilon(1e-4, method="rdp")


def test_mvg_sigma_closed_form_1x1():
    s, eps, delta, gam = 0.2, 1.0, 1e-4, 1.0
    zeta = math.sqrt(2 * math.sqrt(-math.log(delta)) - 2 * math.log(delta) + 1)
    a = 2 * gam ** 2 + 2 * gam * s
    b = 2 * zeta * s
    bound = (-b + math.sqrt(b * b + 8 * a * eps)) ** 2 / (4 * a * a)
    assert mvg_sigma((1, 1), s, eps, delta) == pytest.approx(math.sqrt(1 / bound), rel=1e-12)
    # more privacy budget, less noise; larger matrices need more noise per entry
    assert mvg_sigma((5, 5), s, 2.0, delta) < mvg_sigma((5, 5), s, 1.0, delta)
    assert mvg_sigma((10, 10), s, 1.0, delta) > mvg_sigma((5, 5), s, 1.0, delta)


# ----------------------------------------------------------------------------- alignment
def test_aligned_frobenius_is_the_best_permutation():
    rng = np.random.default_rng(0)
    for _ in range(20):
        A, B = rng.random((4, 7)), rng.random((4, 7))
        brute = min(np.linalg.norm(A - B[list(p)]) for p in itertools.permutations(range(4)))
        assert aligned_frobenius(A, B) == pytest.approx(brute, rel=1e-10)
    assert aligned_frobenius(A, A[[2, 0, 3, 1]]) == pytest.approx(0.0, abs=1e-7)
    assert aligned_frobenius(A, A[[2, 0, 3, 1]], align=False) > 0.5


def test_block_distance_against_brute_force():
    rng = np.random.default_rng(1)
    W, W2 = rng.dirichlet(np.ones(12), 4), rng.dirichlet(np.ones(12), 5)
    topics, ids, values = keyword_block(W, np.arange(4), 3, 5)
    assert list(topics) == [3, 2, 1]
    assert np.all(np.diff(values, axis=1) <= 0)
    brute = min(math.sqrt(sum(((values[i] - W2[p[i], ids[i]]) ** 2).sum() for i in range(3)))
                for p in itertools.permutations(range(5), 3))
    assert block_distance(W, topics, ids, W2) == pytest.approx(brute, rel=1e-10)
    assert block_distance(W, topics, ids, W[[1, 3, 0, 2]]) == pytest.approx(0.0, abs=1e-12)


def test_alignment_makes_a_refit_on_the_same_data_near_zero(corpus):
    # NMF from random starts on the same data: the same topics in a seed-dependent order
    X, _ = corpus
    fit = lambda s: topic_word_matrix(NMF(3, init="random", random_state=s, max_iter=500).fit(X))
    W1 = fit(1)
    unaligned = []
    for seed in range(2, 8):
        W2 = fit(seed)
        assert aligned_frobenius(W1, W2) < 0.005
        unaligned.append(aligned_frobenius(W1, W2, align=False))
    assert min(unaligned) > 1.0


# ----------------------------------------------------------------------------- sampling
class RowRecorder(BaseEstimator):
    """Its 'topic' matrix is the column sums of X: with X = identity it records the rows."""

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X, y=None):
        self.components_ = np.asarray(X.sum(axis=0)).reshape(1, -1) + 1e-9
        return self


def _present(ref, W):
    return W[0] > 0.5 / W.shape[1]


def test_sampling_removes_exactly_one_whole_user():
    groups = np.repeat(np.array(["ann", "bob", "cy", "dee", "eve"]), [3, 1, 4, 2, 5])
    X = sp.identity(15, format="csr")
    present, users = sample_sensitivities(RowRecorder(), X, None, 40, groups=groups,
                                          distance=_present, random_state=0)
    names = np.unique(groups)
    assert set(users) <= set(range(5)) and len(set(users)) == 5
    for row, u in zip(present, users):
        assert np.array_equal(~row.astype(bool), groups == names[u])


def test_sampling_is_reproducible_for_any_n_jobs(corpus):
    X, _ = corpus
    W = topic_word_matrix(nmf().fit(X))
    est = NMF(3, init="random", max_iter=50)
    a, ua = sample_sensitivities(est, X, W, 6, random_state=3, n_jobs=1)
    b, ub = sample_sensitivities(est, X, W, 6, random_state=3, n_jobs=2)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ua, ub)


# ----------------------------------------------------------------------------- the release
@pytest.mark.parametrize("estimator", [nmf(), TruncatedSVD(3, random_state=0),
                                       LatentDirichletAllocation(3, max_iter=3),
                                       GibbsLDA(3, max_iter=20)],
                         ids=["NMF", "TruncatedSVD", "LDA", "dptm-GibbsLDA"])
def test_runs_with_sklearn_models(corpus, reference, estimator):
    X, _ = corpus
    dp = TopicDP(estimator, target_epsilon=3.0, gamma=0.4, reference_X=reference,
                 random_state=0).fit(X)
    assert dp.n_samples_ == 13 and dp.order_statistic_ == 13
    # sorted increasing: the k-th smallest is the bound (catches a decreasing sort reading
    # a low quantile, fresh round 6, M33)
    d = dp.sensitivity_samples_
    assert np.all(np.diff(d) >= 0) and d[0] < d[-1]
    assert dp.sensitivity_ == d[-1] > 0
    assert dp.topic_word_.shape == (3, X.shape[1])
    assert np.all(dp.topic_word_ >= 0)
    np.testing.assert_allclose(dp.topic_word_.sum(axis=1), 1.0)
    rep = dp.privacy_
    # no groups: each document its own user, so the headline unit is the document, not a
    # user's documents (it said "user-level: all documents of one user" on the CLI)
    assert rep.adjacency == "document" and rep.gamma == 0.4
    text = str(rep)
    assert "random DP" in text and "NOT DP" in text and "Delta_s" in text
    theta = dp.transform(X[:5])
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)


def test_same_seed_same_release_for_any_n_jobs(corpus, reference):
    X, _ = corpus
    kw = dict(target_epsilon=2.0, gamma=0.5, random_state=11, reference_X=reference)
    est = LatentDirichletAllocation(3, max_iter=3)
    a = TopicDP(est, n_jobs=1, **kw).fit(X)
    b = TopicDP(est, n_jobs=2, **kw).fit(X)
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)
    np.testing.assert_array_equal(a.sensitivity_samples_, b.sensitivity_samples_)
    c = TopicDP(est, n_jobs=1, **{**kw, "random_state": 12}).fit(X)
    assert not np.array_equal(a.topic_word_, c.topic_word_)


def test_shared_seed_isolates_the_user_effect(corpus, reference):
    X, _ = corpus
    kw = dict(target_epsilon=2.0, gamma=0.5, random_state=5, reference_X=reference)
    est = LatentDirichletAllocation(3, max_iter=10)
    shared = TopicDP(est, refit_seed="shared", **kw).fit(X)
    indep = TopicDP(est, **kw).fit(X)
    # removing one of 120 documents moves the topics much less than a new seed does
    assert np.median(shared.sensitivity_samples_) < np.median(indep.sensitivity_samples_)


def test_noise_has_the_stated_scale(corpus):
    # Noise against the ledger: a data-independent 3 x 2000 "model" with entries far above
    # the noise (nothing clamped). released - round(true) is g times the integer noise; its
    # distribution is tested against the discrete Gaussian whose sigma is read from the
    # recorded event (chi-square over 25 equiprobable cells, false-alarm rate 1e-6), and its
    # variance against sigma^2 (two-sided chi-square, 1e-6).
    X, _ = corpus
    rng = np.random.default_rng(0)
    W = rng.dirichlet(np.full(2000, 50.0), size=3)
    dp = TopicDP(FixedTopics(W), target_epsilon=5.0, target_delta=1e-4, sensitivity=1e-6,
                 calibration="renyi", random_state=2).fit(X)
    ev = dp.privacy_.event
    g = dp.lattice_granularity_
    assert ev.discrete and ev.sigma == dp.noise_scale_
    # papers/wang2022: sigma_R^2 = alpha Delta^2 / (2 eps_R), alpha = 2, Delta including the
    # lattice's rounding slack g sqrt(m V); the event's sigma is the sampled (effective) one
    assert ev.sensitivity == pytest.approx(1e-6 + g * math.sqrt(W.size), rel=1e-12)
    # ... rounded up to a whole number of lattice steps (sigma / g an integer in [8192, 16384))
    sigma_r = math.sqrt(2 * ev.sensitivity ** 2 / (2 * dp.eps_renyi_))
    assert sigma_r <= ev.sigma < sigma_r + g and 16384 > ev.sigma / g == int(ev.sigma / g) >= 8192
    assert np.all(dp.components_ > 0)
    rows, cols = aligned_rows(W, dp.components_)
    k = (dp.components_[cols] - round_to_lattice(W[rows], g)) / g
    assert np.array_equal(k, np.rint(k))
    k = k.ravel()
    s_units = ev.sigma / g
    stat = (k ** 2).sum() / s_units ** 2              # ~ chi-square with n degrees of freedom
    assert 2 * min(stats.chi2.cdf(stat, k.size), stats.chi2.sf(stat, k.size)) > 1e-6
    edges = stats.norm.ppf(np.linspace(0, 1, 26)[1:-1]) * s_units
    support = np.arange(-int(12 * s_units), int(12 * s_units) + 1)
    pmf = discrete_gaussian_pmf(support, s_units, support=support)
    expected = np.bincount(np.searchsorted(edges, support), weights=pmf, minlength=25)
    observed = np.bincount(np.searchsorted(edges, k), minlength=25)
    assert stats.chisquare(observed, expected / expected.sum() * k.size).pvalue > 1e-6
    tight = TopicDP(FixedTopics(W), target_epsilon=5.0, target_delta=1e-4, sensitivity=1e-6,
                    random_state=2).fit(X)
    sigma_t = calibrate_gaussian(5.0, 1e-4) * tight.privacy_.event.sensitivity
    assert sigma_t <= tight.noise_scale_ < sigma_t + tight.lattice_granularity_
    # a data-independent model has sampled sensitivity 0 (the paper's mode): floored at 1e-9
    dp0 = TopicDP(FixedTopics(W), gamma=0.5, sensitivity="sample-private", random_state=0).fit(X)
    assert dp0.sensitivity_ == 1e-9 and "floored" in str(dp0.privacy_)


def aligned_rows(A, B):
    from scipy.optimize import linear_sum_assignment
    cost = ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2)
    return linear_sum_assignment(cost)


def test_laplace_baseline_is_pure_dp_with_global_sensitivity(corpus):
    X, _ = corpus
    dp = TopicDP(nmf(), target_epsilon=2.0, mechanism="laplace", random_state=0).fit(X)
    ev = dp.privacy_.event
    # L1 sensitivity 2m plus the lattice's rounding slack g per released coordinate (<= 0.1%)
    assert ev.sensitivity == 6.0 + dp.lattice_granularity_ * 3 * X.shape[1]
    assert ev.sensitivity < 6.0 * (1 + 1e-3) and ev.discrete
    assert dp.noise_scale_ == pytest.approx(ev.sensitivity / 2.0, rel=1e-6)
    assert dp.sensitivity_ is None and dp.privacy_.gamma is None
    assert dp.privacy_.epsilon(0.0) == pytest.approx(2.0, rel=1e-6)


def test_mvg_baseline_uses_the_sampled_sensitivity(corpus):
    X, _ = corpus
    dp = TopicDP(nmf(), target_epsilon=2.0, mechanism="mvg", output="keywords",
                 n_top_topics=3, n_top_words=3, sensitivity=0.01, random_state=0).fit(X)
    slack = dp.lattice_granularity_ * 3
    sigma = mvg_sigma((3, 3), 0.01 + slack, 2.0, 1e-4)
    assert sigma <= dp.noise_scale_ < sigma + dp.lattice_granularity_
    assert dp.privacy_.gamma is None          # a given bound: no sampling, no gamma


def test_keyword_release_states_the_unprotected_ids(corpus, reference):
    X, _ = corpus
    dp = TopicDP(nmf(), target_epsilon=3.0, gamma=0.4, output="keywords", n_top_topics=2,
                 n_top_words=5, reference_X=reference, random_state=0).fit(X)
    assert dp.keyword_ids_.shape == (2, 5) and dp.keyword_weights_.shape == (2, 5)
    assert dp.topic_word_.shape == (2, X.shape[1])
    for i in range(2):
        support = np.flatnonzero(dp.topic_word_[i])
        assert set(support) <= set(dp.keyword_ids_[i])
    assert "NOT covered" in str(dp.privacy_)


def test_pickle_round_trip(corpus):
    X, _ = corpus
    dp = TopicDP(nmf(), target_epsilon=3.0, sensitivity=0.02, random_state=0).fit(X)
    dp2 = pickle.loads(pickle.dumps(dp))
    np.testing.assert_array_equal(dp.topic_word_, dp2.topic_word_)
    assert dp2.privacy_.epsilon(1e-4) == dp.privacy_.epsilon(1e-4)


@pytest.mark.parametrize("params,match", [
    (dict(target_epsilon=0), "target_epsilon"), (dict(target_epsilon=-1), "target_epsilon"),
    (dict(target_delta=1.0), "target_delta"), (dict(target_delta=0), "target_delta"),
    (dict(gamma=1.0), "gamma"), (dict(mechanism="exp"), "mechanism"),
    (dict(output="top"), "output"), (dict(calibration="x"), "calibration"),
    (dict(sensitivity="sample"), "sensitivity"), (dict(max_refits=0), "max_refits"),
    (dict(sensitivity=0.1, reference_X=np.ones((3, 40))), "not both"),
    (dict(sensitivity="sample-private", reference_X=np.ones((3, 40))), "reference_X"),
    (dict(refit_seed="x"), "refit_seed"), (dict(n_top_words=0), "n_top_words"),
    (dict(calibration="renyi", renyi_order=1.0), "renyi_order"), (dict(sensitivity=-1.0), "sensitivity"),
])
def test_bad_parameters(corpus, params, match):
    X, _ = corpus
    params = {"sensitivity": 0.1, **params}
    with pytest.raises(ValueError, match=match):
        TopicDP(nmf(), **params).fit(X)


def test_bad_inputs(corpus):
    X, _ = corpus
    with pytest.raises(ValueError, match="groups"):
        TopicDP(nmf(), gamma=0.5, sensitivity=0.1).fit(X, groups=np.zeros(3))
    with pytest.raises(ValueError, match="at least 2 users"):
        TopicDP(nmf(), gamma=0.5, sensitivity="sample-private").fit(X, groups=np.zeros(X.shape[0]))
    with pytest.raises(ValueError, match="reference_X has 5 columns"):
        TopicDP(nmf(), reference_X=np.ones((4, 5))).fit(X)
    with pytest.raises(ValueError, match="reference_groups must contain at least 2 users"):
        TopicDP(nmf(), reference_X=X, reference_groups=np.zeros(X.shape[0])).fit(
            X, groups=np.arange(X.shape[0]))
    with pytest.raises(TypeError, match="estimator"):
        TopicDP(object(), sensitivity=0.1).fit(X)

    class NoTopics(BaseEstimator):
        def fit(self, X, y=None):
            return self

    with pytest.raises(TypeError, match="topic-word"):
        TopicDP(NoTopics(), gamma=0.5, sensitivity=0.1).fit(X)


def test_reuters_c50_user_level(reuters_c50):
    from sklearn.feature_extraction.text import CountVectorizer
    texts, authors = reuters_c50
    authors = np.asarray(authors)
    keep = np.flatnonzero(np.isin(authors, np.unique(authors)[:8]))[::5][:80]
    X = CountVectorizer(max_features=400, stop_words="english").fit_transform(
        [texts[i] for i in keep])
    groups = authors[keep]
    dp = TopicDP(NMF(4, max_iter=100, init="nndsvda"), target_epsilon=5.0, gamma=0.4,
                 sensitivity="sample-private", random_state=0).fit(X, groups=groups)
    assert dp.privacy_.adjacency == "user" and "NOT DP" in str(dp.privacy_)
    # removing a whole author moves the topics more than removing one of its documents
    per_doc = TopicDP(NMF(4, max_iter=100, init="nndsvda"), target_epsilon=5.0, gamma=0.4,
                      sensitivity="sample-private", random_state=0).fit(X)
    assert np.median(dp.sensitivity_samples_) > np.median(per_doc.sensitivity_samples_)


def test_old_module_name_is_the_same_module():
    # dptm.models.output was TopicDP's module before the rename: old imports and patches still work
    import importlib
    from dptm.models import topicdp
    old = importlib.import_module("dptm.models.output")
    assert old is topicdp
    from dptm.models.output import TopicDP as Old
    assert Old is TopicDP and TopicDP.__module__ == "dptm.models.topicdp"


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
            m = TopicDP(FixedTopics(topics), target_epsilon=50.0, sensitivity=1e-4).fit(X)
        assert "rows in random order" in str(m.privacy_)
        base = topics / topics.sum(axis=1, keepdims=True)
        d = ((m.topic_word_[:, None, :] - base[None, :, :]) ** 2).sum(axis=2)
        match = d.argmin(axis=1)
        assert sorted(match.tolist()) == list(range(8))         # a permutation of the topics
        orders.append(tuple(match.tolist()))
    assert any(o != tuple(range(8)) for o in orders)
