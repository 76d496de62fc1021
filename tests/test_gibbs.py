"""GibbsLDA and the plain Gibbs kernels: exact agreement with a NumPy reference,
the exact posterior of a tiny model, topic recovery, scikit-learn conventions, errors."""
import itertools
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from scipy.special import gammaln

from dptm import _cgs
from dptm.corpus import Corpus
from dptm.datasets import make_lda_corpus
from dptm.metrics import aligned_l1
from dptm.models.gibbs import GibbsLDA, GibbsState


# ---------------------------------------------------------------- NumPy references
def reference_sweep(corpus, z, n_wk, n_dk, n_k, alpha, beta, rng):
    """The sweep of ``_cgs.gibbs_sweep`` in plain Python, same arithmetic order, drawing
    the same uniforms (``rng.random()`` is the BitGenerator's ``next_double``)."""
    V, K = n_wk.shape
    beta_sum = V * beta
    for d in range(corpus.n_docs):
        for i in range(corpus.doc_ptr[d], corpus.doc_ptr[d + 1]):
            w, k = corpus.word_ids[i], z[i]
            n_wk[w, k] -= 1; n_dk[d, k] -= 1; n_k[k] -= 1
            if K < 32:
                k = reference_scan(n_wk[w], n_dk[d], n_k, alpha, beta, beta_sum, rng.random())
            else:
                k = reference_blocked(n_wk[w], n_dk[d], n_k, alpha, beta, beta_sum, rng.random())
            z[i] = k
            n_wk[w, k] += 1; n_dk[d, k] += 1; n_k[k] += 1


def reference_scan(wrow, drow, n_k, alpha, beta, beta_sum, U):
    """K < 32: running sums of the weights in topic order, first one above u."""
    K = len(wrow)
    cum, total = [], 0.0
    for t in range(K):
        total += (float(wrow[t]) + beta) * (float(drow[t]) + alpha) * (1.0 / (float(n_k[t]) + beta_sum))
        cum.append(total)
    u = U * total
    k = 0
    while k < K - 1 and cum[k] <= u:
        k += 1
    return k


def reference_blocked(wrow, drow, n_k, alpha, beta, beta_sum, U):
    """K >= 32: 8 blocks, topic t in block t % 8; block prefix sums, then the block whose
    cumulative total exceeds u, then the topic within it."""
    K, NB = len(wrow), 8
    x = [(float(wrow[t]) + beta) * ((float(drow[t]) + alpha) / (float(n_k[t]) + beta_sum))
         for t in range(K)]
    P = []                                   # P[b][j] = x[b] + x[b + 8] + ... + x[b + 8 j]
    for b in range(NB):
        acc, row = 0.0, []
        for t in range(b, K, NB):
            acc += x[t]
            row.append(acc)
        P.append(row)
    s = [row[-1] for row in P]
    cum = [s[0]]
    for b in range(1, 4):
        cum.append(cum[-1] + s[b])
    second = [s[4]]
    for b in range(5, 8):
        second.append(second[-1] + s[b])
    cum += [cum[3] + e for e in second]
    u = U * cum[7]
    b = min(sum(c <= u for c in cum), NB - 1)
    r = u - cum[b - 1] if b > 0 else u
    j = min(sum(v <= r for v in P[b]), len(P[b]) - 1)
    return b + NB * j


def small_corpus(seed=0, n_docs=6, n_words=5):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n_docs, n_words))
    X[0, 0] = 1
    return X


@pytest.mark.parametrize("K", [3, 31, 32, 37, 45])
def test_sweep_matches_numpy_reference_exactly(K):
    """Both draws: the sequential scan (K < 32) and the blocked search (K >= 32, with and
    without a partial last row of blocks)."""
    X = small_corpus() if K < 32 else make_lda_corpus(12, 15, 3, doc_length=25, random_state=4)[0]
    corpus = Corpus.from_matrix(X)
    alpha, beta = 0.3, 0.2
    state = GibbsState(corpus, K, np.random.default_rng(1))
    ref = [a.copy() for a in (state.z, state.n_wk, state.n_dk, state.n_k)]
    rng_c, rng_py = np.random.default_rng(7), np.random.default_rng(7)
    for _ in range(5):
        _cgs.gibbs_sweep(corpus.doc_ptr, corpus.word_ids, state.z, state.n_wk, state.n_dk,
                         state.n_k, alpha, beta, rng_c.bit_generator)
        reference_sweep(corpus, *ref, alpha, beta, rng_py)
    np.testing.assert_array_equal(state.z, ref[0])
    np.testing.assert_array_equal(state.n_wk, ref[1])
    np.testing.assert_array_equal(state.n_dk, ref[2])
    np.testing.assert_array_equal(state.n_k, ref[3])
    assert rng_c.random() == rng_py.random()          # one uniform per token, no more


def test_blocked_draw_follows_the_conditional():
    """A one-token corpus on top of fixed pseudo-counts: every sweep removes the token and
    redraws it from the same conditional p_t, here with K = 45 (blocked search, partial last
    row). 60,000 draws against p (chi-square, false-alarm 1e-3)."""
    K, V, alpha, beta = 45, 4, 0.2, 0.1
    rng = np.random.default_rng(5)
    corpus = Corpus.from_matrix(np.array([[0, 0, 1, 0]]))
    n_wk = rng.integers(0, 6, size=(V, K)).astype(np.int32)
    n_dk = rng.integers(0, 4, size=(1, K)).astype(np.int32)
    n_wk[2, 0] += 1; n_dk[0, 0] += 1                     # the token, topic 0
    n_k = n_wk.sum(axis=0, dtype=np.int64) + rng.integers(0, 10, size=K)   # other words
    z = np.zeros(1, dtype=np.int32)
    base = [n_wk[2].copy(), n_dk[0].copy(), n_k.copy()]
    base[0][0] -= 1; base[1][0] -= 1; base[2][0] -= 1
    p = (base[0] + beta) * (base[1] + alpha) / (base[2] + V * beta)
    p /= p.sum()
    n_draws = 60000
    counts = np.zeros(K)
    for _ in range(n_draws):
        _cgs.gibbs_sweep(corpus.doc_ptr, corpus.word_ids, z, n_wk, n_dk, n_k, alpha, beta,
                         rng.bit_generator)
        counts[z[0]] += 1
    assert stats.chisquare(counts, p * n_draws).pvalue > 1e-3
    # and the test has power: the same p shifted by one topic is rejected
    assert stats.chisquare(counts, np.roll(p, 1) * n_draws).pvalue < 1e-6


def test_sweep_keeps_counts_consistent():
    X, _, _ = make_lda_corpus(40, 30, 4, doc_length=20, random_state=3)
    corpus = Corpus.from_matrix(X)
    state = GibbsState(corpus, 4, np.random.default_rng(0))
    rng = np.random.default_rng(0)
    for _ in range(3):
        _cgs.gibbs_sweep(corpus.doc_ptr, corpus.word_ids, state.z, state.n_wk, state.n_dk,
                         state.n_k, 0.1, 0.1, rng.bit_generator)
    doc_of_token = np.repeat(np.arange(corpus.n_docs), corpus.doc_lengths)
    n_wk = np.zeros_like(state.n_wk); np.add.at(n_wk, (corpus.word_ids, state.z), 1)
    n_dk = np.zeros_like(state.n_dk); np.add.at(n_dk, (doc_of_token, state.z), 1)
    np.testing.assert_array_equal(n_wk, state.n_wk)
    np.testing.assert_array_equal(n_dk, state.n_dk)
    np.testing.assert_array_equal(state.n_k, n_wk.sum(axis=0))


@pytest.mark.parametrize("K", [1, 7, 37])
def test_counts_kernel_matches_np_add_at_for_any_threads(K):
    # the start's counts, into arrays full of garbage (the kernel overwrites them), with
    # empty documents and unused words, on 1-3 threads: the integers of np.add.at
    X, _, _ = make_lda_corpus(45, 40, 3, doc_length=15, random_state=4)
    X = np.vstack([np.zeros((1, 40), np.int64), X.toarray(), np.zeros((2, 40), np.int64)])
    X[:, 39] = 0
    corpus = Corpus.from_matrix(X)
    z = np.random.default_rng(K).integers(0, K, corpus.n_tokens, dtype=np.int32)
    doc_of_token = np.repeat(np.arange(corpus.n_docs), corpus.doc_lengths)
    n_wk = np.zeros((40, K), np.int32); np.add.at(n_wk, (corpus.word_ids, z), 1)
    n_dk = np.zeros((corpus.n_docs, K), np.int32); np.add.at(n_dk, (doc_of_token, z), 1)
    for n_threads in (1, 2, 3):
        wk = np.full((40, K), -7, np.int32)
        dk = np.full((corpus.n_docs, K), -7, np.int32)
        nk = np.full(K, -7, np.int64)
        _cgs.gibbs_counts(corpus.doc_ptr, corpus.word_ids, z, wk, dk, nk, n_threads)
        np.testing.assert_array_equal(wk, n_wk)
        np.testing.assert_array_equal(dk, n_dk)
        np.testing.assert_array_equal(nk, np.bincount(z, minlength=K))
    # GibbsState counts the same on any number of threads, from the same z
    a = GibbsState(corpus, K, np.random.default_rng(9))
    b = GibbsState(corpus, K, np.random.default_rng(9), n_threads=2)
    np.testing.assert_array_equal(a.z, b.z)
    np.testing.assert_array_equal(a.n_wk, b.n_wk)
    wk = np.zeros((40, K), np.int32); np.add.at(wk, (corpus.word_ids, a.z), 1)
    np.testing.assert_array_equal(a.n_wk, wk)


def test_counts_kernel_rejects_out_of_range_tokens():
    doc_ptr = np.array([0, 2, 3], np.int64)
    words = np.array([0, 1, 2], np.int32)
    n_wk, n_dk, n_k = np.empty((3, 2), np.int32), np.empty((2, 2), np.int32), np.empty(2, np.int64)
    with pytest.raises(ValueError, match="token 1: word 1 or topic 2 out of range"):
        _cgs.gibbs_counts(doc_ptr, words, np.array([0, 2, 1], np.int32), n_wk, n_dk, n_k)
    with pytest.raises(ValueError, match="token 2: word 3"):
        _cgs.gibbs_counts(doc_ptr, np.array([0, 1, 3], np.int32), np.zeros(3, np.int32),
                          n_wk, n_dk, n_k)
    with pytest.raises(ValueError, match="need n_dk"):
        _cgs.gibbs_counts(doc_ptr, words, np.zeros(3, np.int32), n_wk, n_dk[:1], n_k)
    with pytest.raises(ValueError, match="one entry per token"):
        _cgs.gibbs_counts(doc_ptr, words, np.zeros(2, np.int32), n_wk, n_dk, n_k)


@pytest.mark.parametrize("K", [1, 16, 37])
def test_outputs_kernel_is_the_closed_form_for_any_threads(K):
    # components = n_wk.T + beta, topic_word = components / (count total + V beta),
    # doc_topic = (n_dk + alpha) / (length + K alpha): bit for bit, for 1-3 threads,
    # whatever the output arrays held; K not a multiple of the 16-topic block
    rng = np.random.default_rng(K)
    V, D, alpha, beta = 53, 11, 0.3, 0.07
    n_wk = rng.integers(0, 9, (V, K)).astype(np.int32)
    n_dk = rng.integers(0, 5, (D, K)).astype(np.int32)
    n_dk[3] = 0                                            # an empty document
    comp = n_wk.T + beta
    topic_word = comp / (n_wk.sum(axis=0, dtype=np.int64) + V * beta)[:, None]
    doc_topic = (n_dk + alpha) / (n_dk.sum(axis=1, dtype=np.int64) + K * alpha)[:, None]
    for n_threads in (1, 2, 3):
        out = [np.full((K, V), np.nan), np.full((K, V), np.nan), np.full((D, K), np.nan)]
        _cgs.gibbs_outputs(n_wk, n_dk, alpha, beta, *out, n_threads)
        np.testing.assert_array_equal(out[0], comp)
        np.testing.assert_array_equal(out[1], topic_word)
        np.testing.assert_array_equal(out[2], doc_topic)
    np.testing.assert_allclose(out[1].sum(axis=1), 1.0, rtol=1e-14)
    np.testing.assert_allclose(out[2][3], 1.0 / K)
    with pytest.raises(ValueError, match="need components and topic_word"):
        _cgs.gibbs_outputs(n_wk, n_dk, alpha, beta, np.empty((K, V - 1)), out[1], out[2])


@pytest.mark.filterwarnings("ignore::dptm.exceptions.TopicCountWarning")
def test_fit_outputs_are_the_final_counts():
    # the released arrays of a fit are the closed forms of its final state (the sweeps
    # replayed from the same seed) for serial, AD-LDA and sparse fits
    X, _, _ = make_lda_corpus(40, 30, 4, doc_length=20, random_state=3)
    for K, n_jobs in ((4, 1), (4, 2), (200, 1)):
        model = GibbsLDA(n_components=K, max_iter=3, random_state=2, n_jobs=n_jobs).fit(X)
        alpha, beta = model.doc_topic_prior_, model.topic_word_prior_
        n_kw = np.rint(model.components_ - beta).astype(np.int64)
        np.testing.assert_array_equal(model.components_, n_kw + beta)
        assert n_kw.sum() == X.sum() and (n_kw.sum(axis=0) == np.asarray(X.sum(axis=0))[0]).all()
        np.testing.assert_array_equal(
            model.topic_word_, model.components_ / (n_kw.sum(axis=1) + X.shape[1] * beta)[:, None])
        n_dk = np.rint(model.doc_topic_ * (np.asarray(X.sum(axis=1)) + K * alpha) - alpha)
        np.testing.assert_allclose(n_dk.sum(axis=1), np.asarray(X.sum(axis=1))[:, 0])
        np.testing.assert_allclose(model.doc_topic_.sum(axis=1), 1.0)
        assert model.components_.flags.c_contiguous and model.topic_word_.flags.c_contiguous


def test_fold_in_matches_numpy_reference():
    rng = np.random.default_rng(0)
    K, V = 3, 4
    phi = rng.dirichlet(np.ones(V), size=K)
    corpus = Corpus.from_matrix(np.array([[2, 1, 0, 1], [0, 0, 3, 1]]))
    word_factor = np.ascontiguousarray(phi.T)
    alpha, n_iter, burn_in = 0.5, 6, 3
    got = _cgs.fold_in(corpus.doc_ptr, corpus.word_ids, word_factor, alpha, n_iter, burn_in,
                       [np.random.default_rng(s).bit_generator for s in (11, 12)])
    for d, seed in enumerate((11, 12)):
        r = np.random.default_rng(seed)
        words = corpus.word_ids[corpus.doc_ptr[d]:corpus.doc_ptr[d + 1]]
        z = [min(int(r.random() * K), K - 1) for _ in words]
        n_dk = np.bincount(z, minlength=K).astype(float)
        acc = np.zeros(K)
        for it in range(n_iter):
            for i, w in enumerate(words):
                n_dk[z[i]] -= 1
                cum, total = [], 0.0
                for t in range(K):
                    total += word_factor[w, t] * (n_dk[t] + alpha)
                    cum.append(total)
                u, k = r.random() * total, 0
                while k < K - 1 and cum[k] <= u:
                    k += 1
                z[i] = k
                n_dk[k] += 1
            if it >= burn_in:
                acc += n_dk
        np.testing.assert_allclose(got[d], acc / (n_iter - burn_in), rtol=0, atol=1e-12)


# ---------------------------------------------------------------- exact posterior
def log_joint(z, words, docs, K, V, alpha, beta):
    """log p(w, z) of collapsed LDA (Griffiths & Steyvers 2004, eqs. 2-3), up to a constant."""
    n_wk = np.zeros((V, K)); n_dk = np.zeros((docs.max() + 1, K))
    np.add.at(n_wk, (words, z), 1); np.add.at(n_dk, (docs, z), 1)
    return (gammaln(n_wk + beta).sum() - gammaln(n_wk.sum(0) + V * beta).sum()
            + gammaln(n_dk + alpha).sum())


def test_sampler_matches_exact_posterior():
    """Independent chains of 15 sweeps each: the distribution of the final topic assignment
    matches the posterior enumerated over all K^N states (chi-square, false-alarm 1e-3)."""
    X = np.array([[2, 1, 0], [0, 1, 2]])
    corpus = Corpus.from_matrix(X)
    K, V, alpha, beta = 2, 3, 0.5, 0.5
    words = corpus.word_ids
    docs = np.repeat(np.arange(2), corpus.doc_lengths)
    states = list(itertools.product(range(K), repeat=corpus.n_tokens))
    logp = np.array([log_joint(np.array(s), words, docs, K, V, alpha, beta) for s in states])
    exact = np.exp(logp - logp.max()); exact /= exact.sum()

    n_chains, n_sweeps = 20000, 15
    rng = np.random.default_rng(2024)
    index = {s: i for i, s in enumerate(states)}
    counts = np.zeros(len(states))
    for _ in range(n_chains):
        state = GibbsState(corpus, K, rng)
        for _ in range(n_sweeps):
            _cgs.gibbs_sweep(corpus.doc_ptr, corpus.word_ids, state.z, state.n_wk, state.n_dk,
                             state.n_k, alpha, beta, rng.bit_generator)
        counts[index[tuple(state.z)]] += 1
    chi2, p = stats.chisquare(counts, exact * n_chains)
    assert p > 1e-3, (chi2, p)
    # and the test has power: a wrong prior gives a clearly different distribution
    logp_wrong = np.array([log_joint(np.array(s), words, docs, K, V, 5.0, 0.05) for s in states])
    wrong = np.exp(logp_wrong - logp_wrong.max()); wrong /= wrong.sum()
    assert stats.chisquare(counts, wrong * n_chains).pvalue < 1e-6


# ---------------------------------------------------------------- estimator
def test_recovers_planted_topics():
    X, topic_word, _ = make_lda_corpus(400, 60, 4, doc_length=80, doc_topic_prior=0.2,
                                       topic_word_prior=0.05, random_state=1)
    model = GibbsLDA(n_components=4, max_iter=150, random_state=0).fit(X)
    np.testing.assert_allclose(model.topic_word_.sum(axis=1), 1.0)
    l1 = aligned_l1(model.topic_word_, topic_word)
    # L1 distance between the aligned matrices, summed over topics (at most 2 per topic)
    assert l1 < 0.15, l1


def test_same_seed_same_model_and_transform_determinism():
    X, _, _ = make_lda_corpus(60, 25, 3, doc_length=30, random_state=0)
    a = GibbsLDA(n_components=3, max_iter=20, random_state=5).fit(X)
    b = GibbsLDA(n_components=3, max_iter=20, random_state=5).fit(X)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    c = GibbsLDA(n_components=3, max_iter=20, random_state=6).fit(X)
    assert not np.array_equal(a.components_, c.components_)
    # a document's theta does not depend on the batch it comes in
    np.testing.assert_array_equal(a.transform(X[5:9]), a.transform(X)[5:9])


def test_pickle_round_trip_identical_outputs():
    X, _, _ = make_lda_corpus(50, 20, 3, doc_length=25, random_state=0)
    model = GibbsLDA(n_components=3, max_iter=10, random_state=0).fit(X)
    clone = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(model.components_, clone.components_)
    np.testing.assert_array_equal(model.transform(X), clone.transform(X))
    assert model.perplexity(X) == clone.perplexity(X)


def test_perplexity_and_score_consistent():
    X, _, _ = make_lda_corpus(80, 30, 3, doc_length=40, random_state=2)
    model = GibbsLDA(n_components=3, max_iter=40, random_state=0).fit(X)
    n_tokens = X.sum()
    np.testing.assert_allclose(np.log(model.perplexity(X)) * n_tokens, -model.score(X), rtol=1e-12)
    # a trained model beats the uniform model (perplexity V)
    assert model.perplexity(X) < X.shape[1]


def test_empty_documents_are_harmless():
    X, _, _ = make_lda_corpus(30, 20, 2, doc_length=20, random_state=0)
    X = sp.vstack([X, sp.csr_matrix((2, 20), dtype=np.int64)]).tocsr()
    model = GibbsLDA(n_components=2, max_iter=5, random_state=0).fit(X)
    theta = model.transform(X)
    np.testing.assert_allclose(theta[-2:], 0.5)
    np.testing.assert_allclose(model.doc_topic_[-1], 0.5)


def test_sparse_and_dense_inputs_agree():
    X, _, _ = make_lda_corpus(30, 20, 2, doc_length=20, random_state=0)
    a = GibbsLDA(n_components=2, max_iter=5, random_state=1).fit(X)
    b = GibbsLDA(n_components=2, max_iter=5, random_state=1).fit(X.toarray().astype(float))
    np.testing.assert_array_equal(a.components_, b.components_)


def test_verbose_reports_progress(caplog):
    # progress goes to the "dptm" logger (dptm._progress)
    X, _, _ = make_lda_corpus(20, 10, 2, doc_length=10, random_state=0)
    GibbsLDA(n_components=2, max_iter=20, verbose=1, random_state=0).fit(X)
    assert caplog.messages == ["[GibbsLDA] iteration 10/20", "[GibbsLDA] iteration 20/20"]
    caplog.clear()
    GibbsLDA(n_components=2, max_iter=3, verbose=2, random_state=0).fit(X)
    assert "log-likelihood" in caplog.text
    caplog.clear()
    GibbsLDA(n_components=2, max_iter=3, random_state=0).fit(X)
    assert caplog.messages == []


def test_callback_called_every_sweep():
    X, _, _ = make_lda_corpus(20, 10, 2, doc_length=10, random_state=0)
    seen = []
    GibbsLDA(n_components=2, max_iter=4, random_state=0,
             callback=lambda model, it: seen.append(it)).fit(X)
    assert seen == [1, 2, 3, 4]


@pytest.mark.parametrize("X, match", [
    (np.array([[1, -1], [2, 0]]), "Negative values"),
    (np.array([[1.5, 1], [2, 0]]), "integer counts"),
    (np.array([[np.nan, 1], [2, 0]]), "NaN"),
    (np.zeros((0, 3)), "0 sample"),
    (np.zeros((2, 0)), "0 feature"),
    (np.zeros((2, 3)), "no tokens"),
    (np.array([1, 2, 3]), "2D array"),
])
def test_bad_input_raises(X, match):
    with pytest.raises(ValueError, match=match):
        GibbsLDA(n_components=2, max_iter=2).fit(X)


@pytest.mark.parametrize("params, match", [
    ({"n_components": 0}, "n_components must be >= 1"),
    ({"n_components": 2.5}, "n_components must be an integer"),
    ({"doc_topic_prior": 0.0}, "doc_topic_prior must be > 0"),
    ({"topic_word_prior": -1.0}, "topic_word_prior must be > 0"),
    ({"max_iter": 0}, "max_iter must be >= 1"),
    ({"random_state": "seed"}, "random_state must be"),
])
def test_bad_params_raise(params, match):
    X = np.array([[1, 2], [2, 0]])
    with pytest.raises((ValueError, TypeError), match=match):
        GibbsLDA(**{"max_iter": 2, **params}).fit(X)


def test_transform_checks_vocabulary_size():
    model = GibbsLDA(n_components=2, max_iter=2, random_state=0).fit(np.array([[1, 2], [2, 0]]))
    with pytest.raises(ValueError, match="X has 3 features"):
        model.transform(np.array([[1, 2, 3]]))
