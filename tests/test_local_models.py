"""LP-LDA (dptm.LocalDPLDA) and OLP-LDA (dptm.OnlineLocalDPLDA) on synthetic corpora."""
import math
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import dptm
from dptm import GibbsLDA, LocalDPLDA, OnlineLocalDPLDA
from dptm.datasets import make_lda_corpus
from dptm.local import epsilon_from_f, f_from_epsilon, randomize_matrix
from dptm.models.local import bayes_weight, moment_estimate

K = 5


pytestmark = pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning")


@pytest.fixture(scope="module")
def corpus():
    X, topic_word, _ = make_lda_corpus(1400, 200, K, doc_length=(40, 120), random_state=0)
    return X[:1200], X[1200:]


def _bits(X):
    B = sp.csr_matrix(X, copy=True)
    B.data[:] = 1
    return B


# ------------------------------------------------------------------ LP-LDA
def test_lazy_exports():
    assert dptm.LocalDPLDA is LocalDPLDA
    assert dptm.OnlineLocalDPLDA is OnlineLocalDPLDA
    assert dptm.local.randomize is not None


def test_lp_lda_perplexity_improves_with_epsilon_towards_non_private(corpus):
    """Fig. 6 trend: less noise (larger local epsilon) gives lower held-out perplexity, and
    at a small f LP-LDA is close to Gibbs LDA on the clean presence bits."""
    Xtr, Xte = corpus
    clean = GibbsLDA(K, max_iter=80, random_state=0).fit(_bits(Xtr)).perplexity(Xte)
    perp = {}
    for f in (0.01, 0.3, 0.6):
        noisy = randomize_matrix(Xtr, f, random_state=1)
        model = LocalDPLDA(K, flip_probability=f, max_iter=80, random_state=0).fit(noisy)
        perp[f] = model.perplexity(Xte)
    assert perp[0.01] < 1.1 * clean
    assert perp[0.01] < perp[0.3] < perp[0.6]


def test_lp_lda_attributes_and_estimates(corpus):
    Xtr, _ = corpus
    f = 0.2
    noisy = randomize_matrix(Xtr, f, random_state=2)
    model = LocalDPLDA(K, flip_probability=f, max_iter=5, random_state=0).fit(noisy)
    M, V = Xtr.shape
    n = np.asarray(noisy.sum(axis=0)).ravel()
    np.testing.assert_array_equal(model.noisy_counts_, n)
    np.testing.assert_allclose(model.estimated_counts_, (2 * n - f * M) / (2 * (1 - f)))
    assert model.estimate_std_ == pytest.approx(math.sqrt(f * (2 - f) * M) / (2 * (1 - f)))
    assert model.components_.shape == (K, V) and np.all(model.components_ > 0)
    np.testing.assert_allclose(model.topic_word_.sum(axis=1), 1.0)
    assert model.doc_topic_.shape == (M, K)
    assert model.transform(Xtr[:3]).shape == (3, K)
    # the reconstruction has about as many tokens as there are true (document, word) pairs
    true_pairs = _bits(Xtr).nnz
    assert abs(model.n_reconstructed_tokens_ - model.estimated_counts_.clip(0, M).sum()) < 0.05 * true_pairs


@pytest.mark.parametrize("neighbouring, bits", [("document", 200), ("word", 1), ("word_replacement", 2)])
def test_lp_lda_privacy_report(corpus, neighbouring, bits):
    Xtr, _ = corpus
    f = 0.3
    model = LocalDPLDA(K, flip_probability=f, neighbouring=neighbouring, max_iter=2,
                       random_state=0).fit(randomize_matrix(Xtr, f, random_state=0))
    rep = model.privacy_
    eps_w = math.log((1 - f / 2) / (f / 2))
    assert rep.adjacency == "local"
    assert rep.epsilon(0.0) == pytest.approx(bits * eps_w)
    assert rep.paper_epsilon() == pytest.approx(eps_w)         # the paper's per-word level
    text = str(rep)
    assert "local" in text and "no word counts" in text and "V=200" in text
    assert pickle.loads(pickle.dumps(rep)).epsilon(0.0) == pytest.approx(bits * eps_w)


def test_lp_lda_epsilon_parameter_sets_f(corpus):
    Xtr, _ = corpus
    eps = 2.5
    f = f_from_epsilon(eps)
    noisy = randomize_matrix(Xtr, f, random_state=0)
    a = LocalDPLDA(K, epsilon=eps, neighbouring="word", max_iter=3, random_state=4).fit(noisy)
    b = LocalDPLDA(K, flip_probability=f, neighbouring="word", max_iter=3, random_state=4).fit(noisy)
    assert a.flip_probability_ == pytest.approx(f)
    np.testing.assert_array_equal(a.components_, b.components_)
    assert a.privacy_.epsilon(0.0) == pytest.approx(eps)


def test_lp_lda_reproducible_and_picklable(corpus):
    Xtr, Xte = corpus
    noisy = randomize_matrix(Xtr[:300], 0.2, random_state=0)
    a = LocalDPLDA(K, flip_probability=0.2, max_iter=5, random_state=3).fit(noisy)
    b = clone(a).fit(noisy)
    np.testing.assert_array_equal(a.components_, b.components_)
    c = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(a.transform(Xte[:5]), c.transform(Xte[:5]))
    d = LocalDPLDA(K, flip_probability=0.2, max_iter=5, random_state=4).fit(noisy)
    assert not np.array_equal(a.components_, d.components_)


@pytest.mark.parametrize("params, exc, match", [
    ({}, ValueError, "exactly one of flip_probability"),
    ({"flip_probability": 0.2, "epsilon": 1.0}, ValueError, "exactly one of"),
    ({"flip_probability": 1.0}, ValueError, "flip_probability must be in"),
    ({"flip_probability": 0.0}, ValueError, "flip_probability must be in"),
    ({"epsilon": -1.0}, ValueError, "epsilon must be > 0"),
    ({"flip_probability": 0.2, "neighbouring": "user"}, ValueError, "neighbouring"),
    ({"flip_probability": 0.2, "n_components": 0}, ValueError, "n_components"),
    ({"flip_probability": 0.2, "max_iter": 0}, ValueError, "max_iter"),
    ({"flip_probability": "0.2"}, TypeError, "flip_probability"),
])
def test_lp_lda_parameter_errors(params, exc, match):
    noisy = randomize_matrix(np.eye(6, dtype=int), 0.2, random_state=0)
    params = {"n_components": 2, **params}
    with pytest.raises(exc, match=match):
        LocalDPLDA(**params).fit(noisy)


def test_lp_lda_rejects_counts():
    with pytest.raises(ValueError, match="noisy presence bits"):
        LocalDPLDA(2, flip_probability=0.2).fit(np.array([[0, 3, 1], [1, 0, 0]]))


# ------------------------------------------------------------------ OLP-LDA
def _olp(**kw):
    params = dict(flip_probability=0.1, batch_size=100, max_iter=15, random_state=0)
    params.update(kw)
    return OnlineLocalDPLDA(K, **params)


def test_olp_fit_equals_prior_then_partial_fits(corpus):
    Xtr, _ = corpus
    noisy = randomize_matrix(Xtr[200:500], 0.1, random_state=1)
    a = _olp().fit(noisy, X_prior=Xtr[:200])
    b = _olp().fit_prior(Xtr[:200])
    for s in range(0, 300, 100):
        b.partial_fit(noisy[s:s + 100])
    np.testing.assert_array_equal(a.components_, b.components_)
    assert a.n_batches_ == 3 and a.n_docs_seen_ == 300 and a.n_prior_docs_ == 200


def test_olp_beta_update_eq10_and_prior_update_eq21(corpus):
    """beta^l = beta^{l-1} + lambda N^{l-1} (eq. 10), components = N^l + beta^l (eq. 13),
    mu^l = (mu^{l-1} + eta^{l-1}) / 2 * M_l / M_{l-1} (eq. 21), mu^0 = eta^0 = the prior
    documents containing each word."""
    Xtr, _ = corpus
    lam, beta = 0.3, 0.05
    f = 0.15
    noisy = randomize_matrix(Xtr[300:700], f, random_state=3)
    model = _olp(flip_probability=f, correlation_factor=lam, topic_word_prior=beta)
    model.fit_prior(Xtr[:300])
    N0 = model.batch_topic_word_counts_
    mu0 = np.asarray(_bits(Xtr[:300]).sum(axis=0), dtype=float).ravel()
    np.testing.assert_array_equal(model.components_, N0 + beta)
    assert N0.sum() == _bits(Xtr[:300]).nnz          # one token per present word
    expected_beta = beta + lam * N0
    prev_mu, prev_eta, prev_m = mu0, mu0, 300
    for sl in (slice(0, 80), slice(80, 230), slice(230, 400)):   # unequal batch sizes
        batch = noisy[sl]
        m = batch.shape[0]
        model.partial_fit(batch)
        np.testing.assert_allclose(model.topic_word_prior_matrix_, expected_beta)
        np.testing.assert_allclose(model.components_, model.batch_topic_word_counts_ + expected_beta)
        mu = (prev_mu + prev_eta) / 2 * m / prev_m
        np.testing.assert_allclose(model.prior_mean_, mu)
        n = np.asarray(batch.sum(axis=0)).ravel()
        eta = np.clip(0.4 * mu + 0.6 * moment_estimate(n, m, f), 0, m)
        np.testing.assert_allclose(model.batch_estimate_, eta, atol=1e-12)  # clip at 0
        expected_beta = expected_beta + lam * model.batch_topic_word_counts_
        prev_mu, prev_eta, prev_m = mu, eta, m


def test_olp_without_prior_starts_with_moment_estimator(corpus):
    Xtr, _ = corpus
    f = 0.2
    noisy = randomize_matrix(Xtr[:200], f, random_state=5)
    model = _olp(flip_probability=f, correlation_factor=0.0)
    model.partial_fit(noisy[:100])
    n = np.asarray(noisy[:100].sum(axis=0)).ravel()
    assert model.omega_ == 0.0 and model.prior_mean_ is None
    np.testing.assert_allclose(model.batch_estimate_, np.clip(moment_estimate(n, 100, f), 0, 100))
    eta1 = model.batch_estimate_
    model.partial_fit(noisy[100:150])
    # eq. 21 with mu^1 := eta^1 (no prior before batch 1): mu^2 = eta^1 * M_2 / M_1
    np.testing.assert_allclose(model.prior_mean_, eta1 * 50 / 100)
    # correlation_factor = 0: the prior never moves (eq. 10 with lambda = 0)
    np.testing.assert_allclose(model.topic_word_prior_matrix_, model.topic_word_prior_)


def test_olp_auto_omega(corpus):
    Xtr, _ = corpus
    f, s2 = 0.2, 50.0
    noisy = randomize_matrix(Xtr[100:300], f, random_state=6)
    model = _olp(flip_probability=f, prior_weight="auto", prior_variance=s2)
    model.fit(noisy, X_prior=Xtr[:100])
    assert model.omega_ == pytest.approx(bayes_weight(100, f, s2))


def test_olp_improves_with_batches_and_with_prior_size(corpus):
    """Figs. 8-9 trends: perplexity falls as batches arrive (no prior), and a larger clean
    prior data set gives a better final model."""
    Xtr, Xte = corpus
    f = 0.1
    noisy = randomize_matrix(Xtr[400:], f, random_state=7)
    model = _olp(flip_probability=f, max_iter=20)
    curve = []
    for s in range(0, 800, 100):
        model.partial_fit(noisy[s:s + 100])
        curve.append(model.perplexity(Xte))
    assert curve[-1] < 0.95 * curve[0]
    small = _olp(flip_probability=f, max_iter=20).fit(noisy, X_prior=Xtr[:20]).perplexity(Xte)
    large = _olp(flip_probability=f, max_iter=20).fit(noisy, X_prior=Xtr[:400]).perplexity(Xte)
    assert large < small


def test_olp_pickle_mid_stream_continues_identically(corpus):
    Xtr, _ = corpus
    noisy = randomize_matrix(Xtr[100:400], 0.1, random_state=8)
    a = _olp().fit_prior(Xtr[:100])
    a.partial_fit(noisy[:100])
    b = pickle.loads(pickle.dumps(a))
    for m in (a, b):
        m.partial_fit(noisy[100:200])
        m.partial_fit(noisy[200:])
    np.testing.assert_array_equal(a.components_, b.components_)


def test_olp_privacy_report_notes_unprotected_prior(corpus):
    Xtr, _ = corpus
    f = 0.1
    model = _olp(flip_probability=f).fit(randomize_matrix(Xtr[50:250], f, random_state=0),
                                         X_prior=Xtr[:50])
    rep = model.privacy_
    assert rep.adjacency == "local"
    assert rep.epsilon(0.0) == pytest.approx(200 * epsilon_from_f(f))
    assert "NOT protected" in str(rep) and "2 mini-batch" in str(rep)


@pytest.mark.parametrize("params, match", [
    ({"prior_weight": 1.5}, "prior_weight"),
    ({"prior_weight": "fixed"}, "prior_weight"),
    ({"prior_weight": "auto"}, "prior_variance"),
    ({"prior_weight": "auto", "prior_variance": -1.0}, "prior_variance"),
    ({"correlation_factor": -0.1}, "correlation_factor"),
    ({"correlation_factor": 1.5}, "correlation_factor"),
    ({"batch_size": 0}, "batch_size"),
    ({"prior_max_iter": 0}, "prior_max_iter"),
    ({"flip_probability": None}, "exactly one of"),
])
def test_olp_parameter_errors(params, match):
    noisy = randomize_matrix(np.eye(6, dtype=int), 0.2, random_state=0)
    with pytest.raises(ValueError, match=match):
        _olp(**params).fit(noisy)


def test_olp_vocabulary_mismatch(corpus):
    Xtr, _ = corpus
    model = _olp().fit_prior(Xtr[:50])
    with pytest.raises(ValueError, match="words"):
        model.partial_fit(np.zeros((3, 7), dtype=int))
    with pytest.raises(ValueError, match="X_prior"):
        _olp().fit(np.zeros((3, 7), dtype=int), X_prior=Xtr[:50])


def test_olp_sampler_with_matrix_prior_has_the_exact_posterior():
    """The batch sampler (kernel + fixed pseudo-counts for beta^l) targets
    p(z | w) proportional to prod_k [prod_t Gamma(n_kt + beta_kt) / Gamma(n_k + sum_t beta_kt)]
    * prod_{d,k} Gamma(n_dk + alpha): chi-square over the 8 states of a 3-token corpus,
    from 3000 independent chains."""
    from itertools import product
    from scipy import stats
    from scipy.special import gammaln

    alpha, beta = 0.7, 0.5
    pseudo = np.array([[3.0, 0.0], [0.0, 2.0]])          # lambda * N^{<l}, K x V
    docs, words = np.array([0, 0, 1]), np.array([0, 1, 0])
    R = sp.csr_matrix(np.array([[1, 1], [1, 0]]))
    b = beta + pseudo
    probs = {}
    for z in product([0, 1], repeat=3):
        n_kt = np.zeros((2, 2))
        n_dk = np.zeros((2, 2))
        for d, w, k in zip(docs, words, z):
            n_kt[k, w] += 1
            n_dk[d, k] += 1
        logp = (gammaln(n_kt + b).sum() - gammaln(n_kt.sum(1) + b.sum(1)).sum()
                + gammaln(n_dk + alpha).sum())
        key = tuple(n_kt.astype(int).ravel())
        probs[key] = probs.get(key, 0.0) + np.exp(logp)
    total = sum(probs.values())
    keys = sorted(probs)
    model = OnlineLocalDPLDA(2, flip_probability=0.1)
    model.doc_topic_prior_, model.topic_word_prior_ = alpha, beta
    parent = np.random.default_rng(17)
    counts = dict.fromkeys(keys, 0)
    T = 3000
    for rng in parent.spawn(T):
        N = model._sweeps(R, 15, rng, pseudo)
        counts[tuple(N.ravel())] += 1
    observed = np.array([counts[k] for k in keys])
    expected = np.array([probs[k] / total for k in keys]) * T
    assert stats.chisquare(observed, expected).pvalue > 1e-6
