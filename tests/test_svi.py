"""PrivateOnlineLDA (VIPS, papers/park2016): agreement with scikit-learn's online LDA,
the M-step and noise, truncation, privacy accounting, partial_fit, API contract."""
import math
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from scipy.special import gammaln, psi
from sklearn.decomposition import LatentDirichletAllocation

import dptm.models.svi as svi_module
from dptm import PrivateOnlineLDA
from dptm.accounting import (GaussianEvent, PoissonSampledEvent, SelfComposedEvent,
                             calibrate_gaussian, epsilon, recipes)
from dptm.exceptions import NotHardenedWarning, SeededPrivacyWarning
from dptm.models.svi import truncate_documents
from dptm.noise.mechanisms import gaussian_noise
from dptm.noise.releases import GaussianRelease, recording


def block_corpus(seed=5, K=4, V=40, D=600, length=60):
    """Documents from K topics with disjoint 10-word supports (few local optima)."""
    rng = np.random.default_rng(seed)
    topics = np.zeros((K, V))
    w = V // K
    for k in range(K):
        topics[k, k * w:(k + 1) * w] = rng.dirichlet(np.full(w, 5.0))
    theta = rng.dirichlet(np.full(K, 0.3), D)
    X = np.array([rng.multinomial(length, th @ topics) for th in theta])
    return sp.csr_matrix(X)


@pytest.fixture(scope="module")
def corpus():
    X = block_corpus()
    return X[:500], X[500:]


def replaying(model_cls, rs):
    """A subclass drawing the initial lambda and gamma from the RandomState ``rs`` in the
    order scikit-learn draws them (n_jobs=1)."""
    class Replay(model_cls):
        def _init_lambda(self, rng, n_words):
            return rs.gamma(100.0, 0.01, (self.n_components, n_words))

        def _init_gamma(self, rng, n_docs):
            return rs.gamma(100.0, 0.01, (n_docs, self.n_components))
    return Replay


def sklearn_beta_term(lam, eta):
    """scikit-learn's E[log p(beta | eta) - log q(beta | lambda)] (in its _approx_bound)."""
    elog = psi(lam) - psi(lam.sum(axis=1, keepdims=True))
    V = lam.shape[1]
    return (np.sum((eta - lam) * elog) + np.sum(gammaln(lam) - gammaln(eta))
            + np.sum(gammaln(eta * V) - gammaln(lam.sum(axis=1))))


# ------------------------------------------------------------------ agreement with sklearn
def test_matches_sklearn_online_lda_with_same_draws(corpus):
    """Same initial lambda and per-minibatch gamma draws, same minibatch order: the fitted
    lambda agrees with scikit-learn's (its digamma is ~1e-9 accurate, ours ~1e-13), and
    the held-out perplexity agrees far within 1%."""
    Xtr, Xte = corpus
    kw = dict(n_components=4, batch_size=64, learning_offset=5.0, learning_decay=0.8, max_iter=3)
    sk = LatentDirichletAllocation(learning_method="online", random_state=7, n_jobs=1, **kw)
    sk.fit(Xtr.astype(float))
    ours = replaying(PrivateOnlineLDA, np.random.RandomState(7))(sampling="sequential", **kw)
    ours.fit(Xtr)
    assert ours.n_batch_iter_ == sk.n_batch_iter_ == 1 + 3 * math.ceil(500 / 64)
    np.testing.assert_allclose(ours.components_, sk.components_, rtol=1e-5)
    # perplexity: ours is sklearn's bound without the corpus-level beta term
    sk_bound = sk._approx_bound(Xte.astype(float), sk._unnormalized_transform(Xte.astype(float)),
                                sub_sampling=False)
    beta_term = sklearn_beta_term(sk.components_, sk.topic_word_prior_)
    np.testing.assert_allclose(ours.score(Xte), sk_bound - beta_term, rtol=1e-6)
    assert abs(ours.perplexity(Xte) / np.exp(-(sk_bound - beta_term) / Xte.sum()) - 1) < 1e-6
    np.testing.assert_allclose(ours.transform(Xte), sk.transform(Xte.astype(float)), rtol=1e-5)


def test_perplexity_statistically_matches_sklearn(corpus):
    """Independent random draws (ours from a numpy Generator, sklearn from a RandomState):
    the mean held-out perplexity (our definition, applied to both) over 4 seeds agrees
    within 1%."""
    Xtr, Xte = corpus
    kw = dict(n_components=4, batch_size=50, max_iter=10)
    ours = [PrivateOnlineLDA(sampling="sequential", random_state=s, **kw).fit(Xtr).perplexity(Xte)
            for s in range(4)]
    evaluator = PrivateOnlineLDA(sampling="sequential", random_state=0, **kw).fit(Xtr)
    theirs = []
    for s in range(4):
        sk = LatentDirichletAllocation(learning_method="online", random_state=100 + s, n_jobs=1,
                                       **kw).fit(Xtr.astype(float))
        evaluator._set_lambda_t(sk.components_.T)
        evaluator._sync_public()
        theirs.append(evaluator.perplexity(Xte))
    assert abs(np.mean(ours) / np.mean(theirs) - 1) < 0.01, (ours, theirs)


def test_partial_fit_matches_sklearn_partial_fit(corpus):
    Xtr, _ = corpus
    kw = dict(n_components=4, batch_size=100, total_samples=2000)
    sk = LatentDirichletAllocation(learning_method="online", random_state=3, n_jobs=1, **kw)
    ours = replaying(PrivateOnlineLDA, np.random.RandomState(3))(**kw)
    for b in range(3):
        chunk = Xtr[b * 100:(b + 1) * 100]
        sk.partial_fit(chunk.astype(float))
        ours.partial_fit(chunk)
    np.testing.assert_allclose(ours.components_, sk.components_, rtol=1e-5)
    assert ours.privacy_ is None


# ------------------------------------------------------------------ M-step and noise
def test_private_step_is_noised_clamped_and_scaled(monkeypatch):
    """One private partial_fit step: lambda = (1 - rho) lambda0 + rho (eta + (D / S) max(s~, 0))
    with s~ the released lattice-noised statistic of the E-step statistic s (computed here
    from the truncated corpus the model used) and S the nominal batch size."""
    X = block_corpus(seed=1, D=30)
    truncated = {}
    real_trunc = svi_module.truncate_documents

    def spy_trunc(X, n, rng):
        truncated["X"] = real_trunc(X, n, rng)
        return truncated["X"]

    monkeypatch.setattr(svi_module, "truncate_documents", spy_trunc)
    kw = dict(n_components=3, batch_size=20, total_samples=500, max_doc_length=40,
              noise_multiplier=0.05, learning_offset=2.0, learning_decay=0.6)
    rs = np.random.RandomState(11)
    lam0 = np.random.RandomState(11).gamma(100.0, 0.01, (3, X.shape[1]))
    model = replaying(PrivateOnlineLDA, rs)(random_state=0, **kw)
    with pytest.warns(SeededPrivacyWarning), recording() as draws:
        model.partial_fit(X)
    (d,) = draws
    drawn = dict(x=d.statistic, out=d.noisy, g=d.release.granularity_, eff=d.release.sigma_)
    # reference: E-step on the truncated corpus with the replayed gamma
    gamma0 = np.random.RandomState(11)
    gamma0.gamma(100.0, 0.01, (3, X.shape[1]))
    gamma0 = gamma0.gamma(100.0, 0.01, (X.shape[0], 3))
    g = drawn["g"]
    assert model.sensitivity_ == pytest.approx(40 + g * math.sqrt(3 * 40))
    assert drawn["eff"] == model.sigma_ == pytest.approx(0.05 * model.sensitivity_, rel=1e-9)
    Xt = truncated["X"]
    assert Xt.sum(axis=1).max() <= 40 and (X - Xt).min() >= 0
    elog = psi(lam0) - psi(lam0.sum(axis=1, keepdims=True))
    from test_svi_kernel import reference_e_step
    _, s, _, _ = reference_e_step(Xt, np.exp(elog), gamma0, 1 / 3, 1e-3, 100)
    np.testing.assert_allclose(drawn["x"], s, rtol=1e-9)
    released = drawn["out"]
    assert np.all(released / g == np.rint(released / g))   # on the lattice
    rho = (2.0 + 1) ** -0.6
    assert np.any(released < 0)                     # clamping matters here
    want = (1 - rho) * lam0 + rho * (1 / 3 + (500 / 20) * np.maximum(released, 0.0))
    np.testing.assert_allclose(model.components_, want, rtol=1e-8)


def test_floating_point_gaussian_only_explicitly():
    """mechanism="gaussian": NotHardenedWarning, continuous noise of sigma = z N (no
    rounding slack), event discrete=False, labelled not hardened in the report."""
    X = block_corpus(seed=1, D=30)
    m = PrivateOnlineLDA(3, batch_size=20, total_samples=500, max_doc_length=40,
                         noise_multiplier=0.05, mechanism="gaussian")
    with pytest.warns(NotHardenedWarning), recording() as draws:
        m.partial_fit(X)
    (d,) = draws
    assert isinstance(d.release, GaussianRelease) and d.event == m.privacy_.event.event
    assert d.release.sigma == pytest.approx(0.05 * 40) == m.sigma_
    assert not np.array_equal(d.noisy, np.rint(d.noisy))       # continuous noise
    assert m.sensitivity_ == 40 and m.granularity_ is None
    assert m.privacy_.event.event.discrete is False
    assert "not hardened" in str(m.privacy_)


def test_noise_is_gaussian_with_stated_sigma():
    """The noise helper's draws are N(0, sigma^2): KS test (fixed seed, so deterministic;
    false-alarm rate 1e-4 for a fresh seed)."""
    rng = np.random.default_rng(123)
    z = gaussian_noise((50, 200), 3.5, rng)
    assert z.shape == (50, 200)
    assert stats.kstest(z.ravel() / 3.5, "norm").pvalue > 1e-4


def test_poisson_minibatches_have_rate_q():
    """Each step keeps each document with probability q = S / D: the total number of
    documents seen over all steps is Binomial(T D, q) (|z| < 5)."""
    X = block_corpus(seed=2, D=200)
    sizes = []

    class Spy(PrivateOnlineLDA):
        def _step(self, indptr, indices, counts, rows, scale, rng):
            sizes.append(rows.size)
            assert scale == pytest.approx(200 / 25)       # expected size, not realised
            assert np.all(np.diff(rows) > 0)
            return super()._step(indptr, indices, counts, rows, scale, rng)

    Spy(n_components=3, batch_size=25, max_iter=4, random_state=0).fit(X)
    T = 4 * 8
    assert len(sizes) == T
    n, q = T * 200, 25 / 200
    z = (sum(sizes) - n * q) / math.sqrt(n * q * (1 - q))
    assert abs(z) < 5
    assert len(set(sizes)) > 1


def test_shuffle_and_sequential_cover_each_document_once_per_epoch():
    X = block_corpus(seed=2, D=103)
    for sampling in ("shuffle", "sequential"):
        seen = []

        class Spy(PrivateOnlineLDA):
            def _step(self, indptr, indices, counts, rows, scale, rng):
                seen.append(rows.copy())
                assert scale == pytest.approx(103 / rows.size)
                return super()._step(indptr, indices, counts, rows, scale, rng)

        Spy(n_components=3, batch_size=25, max_iter=2, sampling=sampling, random_state=0).fit(X)
        assert len(seen) == 2 * 5
        for e in range(2):
            epoch = np.concatenate(seen[5 * e:5 * (e + 1)])
            assert sorted(epoch) == list(range(103))
        if sampling == "sequential":
            np.testing.assert_array_equal(seen[0], np.arange(25))
        else:
            assert not np.array_equal(np.concatenate(seen[:5]), np.concatenate(seen[5:]))


# ------------------------------------------------------------------ truncation
def test_truncation_caps_and_subsets():
    X = block_corpus(seed=3, D=50, length=80)
    X = sp.vstack([X, sp.csr_matrix(np.ones((1, X.shape[1]), dtype=np.int64))]).tocsr()
    Xt = truncate_documents(X.astype(np.int64), 30, np.random.default_rng(0))
    lengths = np.asarray(Xt.sum(axis=1)).ravel()
    assert np.all(lengths == np.minimum(np.asarray(X.sum(axis=1)).ravel(), 30))
    assert (Xt - X).max() <= 0 and Xt.min() >= 0
    assert Xt.dtype == np.int64
    short = sp.csr_matrix(np.array([[1, 2, 0], [0, 0, 3]], dtype=np.int64))
    assert (truncate_documents(short, 5, np.random.default_rng(0)) != short).nnz == 0


def test_truncation_is_uniform_over_token_subsets():
    """A document with counts (3, 1) truncated to 2 tokens keeps (2, 0) or (1, 1), each
    with probability 1/2 (hypergeometric); chi-square over 4000 documents, threshold at a
    false-alarm rate of 1e-6."""
    X = sp.csr_matrix(np.tile([[3, 1, 0]], (4000, 1)).astype(np.int64))
    Xt = truncate_documents(X, 2, np.random.default_rng(2024)).toarray()
    kept_first = Xt[:, 0]
    assert set(kept_first) <= {1, 2} and np.all(Xt.sum(axis=1) == 2)
    observed = np.array([(kept_first == 2).sum(), (kept_first == 1).sum()])
    chi2 = ((observed - 2000) ** 2 / 2000).sum()
    assert chi2 < stats.chi2.ppf(1 - 1e-6, df=1)


# ------------------------------------------------------------------ privacy accounting
def test_privacy_report_poisson(corpus):
    Xtr, _ = corpus
    model = PrivateOnlineLDA(4, batch_size=50, max_iter=2, max_doc_length=40, target_epsilon=1.0,
                             target_delta=1e-5, total_samples=500, random_state=0).fit(Xtr)
    T, q = 2 * 10, 50 / 500
    rep = model.privacy_
    assert rep.adjacency == "document"
    slack = model.granularity_ * math.sqrt(4 * 40)       # lattice rounding, K x N coords
    assert rep.event == SelfComposedEvent(PoissonSampledEvent(
        GaussianEvent(model.sigma_, sensitivity=40 + slack, discrete=True,
                      label=rep.event.event.event.label), q), T, label="fit")
    assert model.sensitivity_ == 40 + slack
    eps = rep.epsilon(1e-5, method="rdp")
    assert 0.99 <= eps <= 1.0          # calibration (by RDP) never overshoots and is tight
    assert rep.epsilon(1e-5) <= eps    # the report's tightest route (PLD when installed)
    z = calibrate_gaussian(1.0, 1e-5, sampling_probability=q, steps=T)
    assert model.noise_multiplier_ == pytest.approx(z)
    text = str(rep)
    assert "N = 40" in text and "q=0.1" in text and "count=20" in text
    # the declared total_samples, never the number of documents (not public under add/remove)
    assert rep.assumed_public == ("total_samples = 500 (declared: sets q = S / total_samples, the "
                                  "step count and sigma; the number of documents is not used)",
                                  "vocabulary size V = 40 (the vocabulary is not "
                                  "taken from the private text)", "max_doc_length N = 40")


@pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning")
def test_private_poisson_fit_needs_a_declared_total_samples(corpus):
    """Add/remove adjacency changes the number of documents, so a private Poisson fit without
    a declared total_samples (which would plan q = S / D, the steps and sigma from the rows of
    X) is refused before X is read; the plans whose sizes are public keep working."""
    Xtr, _ = corpus
    for budget in (dict(noise_multiplier=2.0), dict(target_epsilon=1.0, target_delta=1e-5)):
        m = PrivateOnlineLDA(4, batch_size=50, max_iter=1, max_doc_length=40, random_state=0,
                             **budget)
        # an X that fails validation: the refusal comes first, so it reads no data
        for X in (Xtr, "not a matrix"):
            with pytest.raises(ValueError, match=r"total_samples is required.*Pass "
                               r"total_samples= a PUBLIC number of documents") as err:
                m.fit(X)
            assert "500" not in str(err.value)
        assert not hasattr(m, "components_") and not hasattr(m, "privacy_")
    kw = dict(batch_size=50, max_iter=1, max_doc_length=40, noise_multiplier=2.0, random_state=0)
    # replace-one adjacency: D is public and plans the steps (ceil(500 / 50) = 10)
    for sampling in ("shuffle", "sequential"):
        m = PrivateOnlineLDA(4, sampling=sampling, **kw).fit(Xtr)
        assert m.n_batch_iter_ == 11
        assert m.privacy_.assumed_public[0].startswith("number of documents D = 500 (replace-one")
    # non-private: the rows of X, as scikit-learn
    m = PrivateOnlineLDA(4, batch_size=50, max_iter=1, random_state=0).fit(Xtr)
    assert m.n_batch_iter_ == 11 and m.privacy_ is None
    # partial_fit: the caller's minibatch, scaled by total_samples / S with 1e6 for None
    m = PrivateOnlineLDA(4, **kw).partial_fit(Xtr[:50])
    assert m.total_samples_ == 1e6 and m.privacy_.event.count == 1


def test_tight_accounting_adds_less_noise_than_paper_recipes(corpus):
    """At equal (epsilon, delta): rdp < zcdp-paper < advanced, linear noise (advanced vs
    linear depends on the number of steps: linear wins for few steps); the paper's
    claim equals the target for its own recipe; the sound epsilon of the paper-calibrated
    noise is below the target (more noise than needed)."""
    Xtr, _ = corpus
    sig, sens = {}, {}
    for acc in ("rdp", "zcdp-paper", "advanced", "linear"):
        m = PrivateOnlineLDA(4, batch_size=25, max_iter=1, max_doc_length=40, target_epsilon=1.0,
                             target_delta=1e-5, accounting=acc, total_samples=500,
                             random_state=0).fit(Xtr)
        sig[acc], sens[acc] = m.sigma_, m.sensitivity_
        assert m.privacy_.epsilon(1e-5) <= 1.0 + 1e-9
        if acc == "rdp":
            assert m.privacy_.paper_claim is None
        else:
            assert m.privacy_.paper_claim is not None
            assert m.privacy_.epsilon(1e-5) < 0.9
            # the paper's claim for the noise drawn: its sigma / N, slightly above the
            # recipe's (sigma is scaled with the rounding slack of the lattice)
            assert 0.95 <= m.privacy_.paper_epsilon(1e-5) <= 1.0
            assert "as claimed by Park" in str(m.privacy_)
    assert sig["rdp"] < sig["zcdp-paper"] < min(sig["advanced"], sig["linear"])
    z = recipes.park2016_noise_multiplier(1.0, 1e-5, 500, 25, 20 * 25, "zcdp")
    assert sig["zcdp-paper"] == pytest.approx(z * sens["zcdp-paper"], rel=1e-9)


def test_shuffle_accounting_is_per_epoch_substitution(corpus):
    Xtr, _ = corpus
    m = PrivateOnlineLDA(4, batch_size=50, max_iter=3, max_doc_length=40, sampling="shuffle",
                         noise_multiplier=2.0, random_state=0).fit(Xtr)
    # substitution: sqrt(2) N, plus the rounding slack over the union of two documents'
    # words (K x min(2N, V) coordinates)
    assert m.sensitivity_ == pytest.approx(math.sqrt(2) * 40 + m.granularity_ * math.sqrt(4 * 40))
    assert m.sigma_ == pytest.approx(2.0 * m.sensitivity_, rel=1e-9)
    assert m.privacy_.event == SelfComposedEvent(
        GaussianEvent(m.sigma_, sensitivity=m.sensitivity_, discrete=True,
                      label=m.privacy_.event.event.label), 3, label="fit")
    # three Gaussian releases with noise multiplier 2, whatever the number of steps
    want = epsilon(SelfComposedEvent(GaussianEvent(2.0), 3), 1e-5)
    assert epsilon(m.privacy_.event, 1e-5) == pytest.approx(want)     # built-in routes
    assert m.privacy_.epsilon(1e-5) <= want                            # PLD when installed
    assert "REPLACING" in str(m.privacy_)
    assert m.privacy_.adjacency == "document-replace"


def test_partial_fit_composes_each_call(corpus):
    Xtr, _ = corpus
    m = PrivateOnlineLDA(4, batch_size=50, max_doc_length=40, noise_multiplier=3.0,
                         total_samples=500, random_state=0)
    eps = []
    for b in range(3):
        m.partial_fit(Xtr[b * 50:(b + 1) * 50])
        assert m.sigma_ == pytest.approx(3.0 * m.sensitivity_, rel=1e-9)
        assert m.sensitivity_ == 40 + m.granularity_ * math.sqrt(4 * 40)
        assert m.privacy_.event == SelfComposedEvent(
            GaussianEvent(m.sigma_, sensitivity=m.sensitivity_, discrete=True,
                          label=m.privacy_.event.event.label), b + 1, label="partial_fit")
        eps.append(m.privacy_.epsilon(1e-5))
    assert eps[0] < eps[1] < eps[2]
    # fit then partial_fit: both releases are in the report
    m2 = PrivateOnlineLDA(4, batch_size=50, max_iter=1, max_doc_length=40, noise_multiplier=3.0,
                          total_samples=500, random_state=0).fit(Xtr)
    e_fit = m2.privacy_.epsilon(1e-5)
    m2.partial_fit(Xtr[:50])
    assert len(m2.privacy_.event.events) == 2
    assert m2.privacy_.epsilon(1e-5) > e_fit


def test_partial_fit_target_epsilon_warns_past_planned_calls(corpus):
    Xtr, _ = corpus
    m = PrivateOnlineLDA(4, batch_size=50, max_iter=2, max_doc_length=40, target_epsilon=2.0,
                         target_delta=1e-5, random_state=0)
    m.partial_fit(Xtr[:50])
    m.partial_fit(Xtr[50:100])
    assert m.privacy_.epsilon(1e-5) <= 2.0
    with pytest.warns(UserWarning, match="calibrated for max_iter=2"):
        m.partial_fit(Xtr[100:150])
    assert m.privacy_.epsilon(1e-5) > 2.0


def test_released_topics_do_not_depend_on_data_beyond_noise():
    """Two corpora on disjoint halves of the vocabulary: without noise the topics put
    almost all their mass on the corpus's half; with huge noise (same seed, so the same
    noise) the released topics are nearly identical for both corpora."""
    full = block_corpus(seed=10, D=200).toarray()
    A, B = full.copy(), full.copy()
    A[:, 20:] = 0
    B[:, :20] = 0
    kw = dict(n_components=2, batch_size=50, max_iter=1, max_doc_length=60, total_samples=200,
              random_state=0)
    clean = [PrivateOnlineLDA(**kw).fit(X).topic_word_[:, :20].sum(axis=1) for X in (A, B)]
    assert clean[0].min() > 0.9 and clean[1].max() < 0.1
    noisy = [PrivateOnlineLDA(noise_multiplier=500, **kw).fit(X).topic_word_ for X in (A, B)]
    assert np.abs(noisy[0] - noisy[1]).sum(axis=1).max() < 0.01


# ------------------------------------------------------------------ API contract
def test_determinism_and_seeds(corpus):
    Xtr, _ = corpus
    kw = dict(n_components=4, batch_size=50, max_iter=2, max_doc_length=50, noise_multiplier=1.0,
              total_samples=500)
    a = PrivateOnlineLDA(random_state=3, **kw).fit(Xtr).components_
    b = PrivateOnlineLDA(random_state=3, **kw).fit(Xtr).components_
    c = PrivateOnlineLDA(random_state=4, **kw).fit(Xtr).components_
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_pickle_round_trip(corpus):
    Xtr, Xte = corpus
    m = PrivateOnlineLDA(4, batch_size=50, max_iter=1, max_doc_length=50, target_epsilon=3.0,
                         target_delta=1e-5, total_samples=500, random_state=0).fit(Xtr)
    m2 = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(m2.transform(Xte), m.transform(Xte))
    assert m2.perplexity(Xte) == m.perplexity(Xte)
    assert m2.privacy_.epsilon(1e-5) == m.privacy_.epsilon(1e-5)
    m.partial_fit(Xte)
    m2.partial_fit(Xte)
    np.testing.assert_array_equal(m2.components_, m.components_)


def test_transform_and_topics(corpus):
    Xtr, Xte = corpus
    m = PrivateOnlineLDA(4, batch_size=50, max_iter=3, random_state=0).fit(Xtr)
    theta = m.transform(Xte)
    assert theta.shape == (100, 4)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)
    np.testing.assert_allclose(m.topic_word_.sum(axis=1), 1.0)
    # per-document: transform of a subset equals the subset of transform
    np.testing.assert_allclose(m.transform(Xte[:10]), theta[:10], rtol=1e-12)
    # planted block topics are recovered by the best of 3 restarts (online LDA has local
    # optima): each topic puts > 90% of its mass on its own block
    best = min((PrivateOnlineLDA(4, batch_size=50, max_iter=10, random_state=s).fit(Xtr)
                for s in range(3)), key=lambda model: model.perplexity(Xte))
    blocks = best.topic_word_.reshape(4, 4, 10).sum(axis=2)
    assert sorted(blocks.argmax(axis=1)) == [0, 1, 2, 3]
    assert blocks.max(axis=1).min() > 0.9
    assert m.perplexity(Xte) > 1 and np.isfinite(m.score(Xte))


@pytest.mark.parametrize("params,exc,match", [
    (dict(n_components=0), ValueError, "n_components"),
    (dict(batch_size=0), ValueError, "batch_size"),
    (dict(batch_size=2.5), TypeError, "batch_size"),
    (dict(learning_decay=1.5), ValueError, "learning_decay"),
    (dict(learning_offset=-1.0), ValueError, "learning_offset"),
    (dict(max_iter=0), ValueError, "max_iter"),
    (dict(sampling="bernoulli"), ValueError, "sampling"),
    (dict(accounting="pld"), ValueError, "accounting"),
    (dict(noise_multiplier=1.0), ValueError, "max_doc_length"),
    (dict(noise_multiplier=-1.0, max_doc_length=5), ValueError, "noise_multiplier"),
    (dict(noise_multiplier=1.0, target_epsilon=1.0, target_delta=1e-5, max_doc_length=5),
     ValueError, "either noise_multiplier or target_epsilon"),
    (dict(target_epsilon=1.0, max_doc_length=5), ValueError, "target_delta"),
    (dict(target_epsilon=0.0, target_delta=1e-5, max_doc_length=5), ValueError, "target_epsilon"),
    (dict(target_epsilon=1.0, target_delta=1.0, max_doc_length=5), ValueError, "target_delta"),
    (dict(max_doc_length=0), ValueError, "max_doc_length"),
    (dict(doc_topic_prior=0.0), ValueError, "doc_topic_prior"),
    (dict(total_samples=0), ValueError, "total_samples"),
])
def test_bad_parameters(params, exc, match):
    X = block_corpus(seed=0, D=20)
    with pytest.raises(exc, match=match):
        PrivateOnlineLDA(**params).fit(X)


def test_bad_input():
    from sklearn.exceptions import NotFittedError
    X = block_corpus(seed=0, D=20)
    with pytest.raises(NotFittedError):
        PrivateOnlineLDA().transform(X)
    with pytest.raises(ValueError, match="negative"):
        PrivateOnlineLDA().fit(-X.toarray())
    with pytest.raises(ValueError, match="empty corpus|0 sample"):
        PrivateOnlineLDA().fit(np.zeros((0, 5)))
    m = PrivateOnlineLDA(2, max_iter=1, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        m.transform(X[:, :10])
    with pytest.raises(ValueError, match="features"):
        m.partial_fit(X[:, :10])


def _truncation_draws(monkeypatch, random_state):
    """The first draws of the generator a private VIPS fit truncates documents with."""
    import copy
    import warnings

    import scipy.sparse as sp

    import dptm.models.svi as svi_module
    from dptm import PrivateOnlineLDA

    seen = []
    real = svi_module.truncate_documents

    def spy(X, n, rng):
        seen.append(copy.deepcopy(rng).random(4))
        return real(X, n, rng)

    monkeypatch.setattr(svi_module, "truncate_documents", spy)
    X = sp.csr_matrix(np.random.default_rng(3).poisson(2.0, size=(30, 20)))   # rows of ~40
    model = PrivateOnlineLDA(n_components=2, batch_size=10, total_samples=30, max_doc_length=8,
                             noise_multiplier=1.0, max_iter=1, random_state=random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X)
    assert len(seen) == 1
    return seen[0]


def test_vips_truncation_draws_from_the_fits_secret_generator(monkeypatch):
    # Which tokens a long document keeps must be as secret as the noise: a fixed public
    # generator would let the adversary replay the truncation; the fit's generator (or the
    # seed, in test mode) decides it.
    a = _truncation_draws(monkeypatch, None)
    b = _truncation_draws(monkeypatch, None)
    assert not np.array_equal(a, b)
    assert np.array_equal(_truncation_draws(monkeypatch, 5), _truncation_draws(monkeypatch, 5))
    assert not np.array_equal(_truncation_draws(monkeypatch, 5), _truncation_draws(monkeypatch, 6))


def test_callback_sees_each_epochs_topics_and_the_report_only_after_the_fit(corpus):
    # catches a fit whose callback sees stale topics (lambda not synced before the call),
    # or a report set part-way through the fit instead of with the final attributes
    X = corpus[0][:200]
    seen = []

    def callback(model, epoch):
        seen.append((epoch, model.n_iter_, model.components_.copy(),
                     model.exp_dirichlet_component_.copy(), model.privacy_))
    model = PrivateOnlineLDA(3, batch_size=50, max_iter=3, total_samples=200,
                             noise_multiplier=1.0, max_doc_length=60, random_state=0,
                             callback=callback)
    with pytest.warns(SeededPrivacyWarning):
        model.fit(X)
    assert [(e, n) for e, n, *_ in seen] == [(1, 1), (2, 2), (3, 3)]
    assert not np.array_equal(seen[0][2], seen[1][2])
    np.testing.assert_array_equal(seen[-1][2], model.components_)
    np.testing.assert_array_equal(seen[-1][3], model.exp_dirichlet_component_)
    assert all(report is None for *_, report in seen)
    assert model.privacy_ is not None and model.privacy_.seeded
