"""Topic-based attack (papers/zhao2021 Algorithm 3, eq. 24): against a NumPy reference
on a hand-made trace, and the paper's qualitative finding on a real corpus (KOS)."""
import numpy as np
import pytest

from dptm.attacks import topic_based_attack
from dptm.attacks.topic_based import record_gibbs_trace
from dptm.corpus import Corpus
from dptm.datasets import make_lda_corpus
from dptm.models.private_gibbs import NoisyGibbsLDA


def reference_attack(snapshots, topics, smoothing):
    """Eq. (24) with explicit loops: log P(t) = sum_i log(s_i[t, k_i] / sum_t' s_i[t', k_i])."""
    T, n = topics.shape
    V = snapshots[0].shape[0]
    out = np.zeros((n, V))
    for j in range(n):
        for i in range(T):
            if snapshots[i] is None:
                continue
            col = np.maximum(snapshots[i][:, topics[i, j]], 0) + smoothing
            for t in range(V):
                out[j, t] += np.log(col[t] / col.sum())
        out[j] -= np.log(np.exp(out[j] - out[j].max()).sum()) + out[j].max()
    return out


def test_matches_reference_and_scores():
    rng = np.random.default_rng(0)
    V, K, T, n = 7, 3, 5, 4
    snaps = [rng.normal(5, 3, size=(V, K)) for _ in range(T)]
    snaps[2] = None                                      # a plain sweep: no evidence
    topics = rng.integers(0, K, size=(T, n))
    truth = np.array([0, 3, 6, 2])
    res = topic_based_attack({"snapshots": snaps, "topics": topics}, true_words=truth,
                             smoothing=0.5)
    ref = reference_attack(snaps, topics, 0.5)
    np.testing.assert_allclose(res.log_posterior, ref, atol=1e-12)
    np.testing.assert_array_equal(res.predicted, ref.argmax(axis=1))
    np.testing.assert_array_equal(res.iterations, [1, 2, 4, 5])
    np.testing.assert_allclose(res.true_word_probability[-1], np.exp(ref[np.arange(n), truth]))
    assert res.accuracy[-1] == np.mean(ref.argmax(axis=1) == truth)
    assert res.true_word_probability.shape == (4, n)


def test_deterministic_topics_identify_the_word():
    # word 1 is the only word with mass on topic 2: one sighting of topic 2 pins it down
    s = np.array([[5.0, 5.0, 0.0], [0.0, 0.0, 9.0], [5.0, 5.0, 0.0]])
    res = topic_based_attack({"snapshots": [s], "topics": np.array([[2]])},
                             true_words=[1], smoothing=1e-9)
    assert res.predicted[0] == 1 and res.true_word_probability[0, 0] > 0.999


def test_on_fitted_model_and_errors():
    X, _, _ = make_lda_corpus(40, 15, 2, doc_length=20, random_state=0)
    m = NoisyGibbsLDA(2, clip=5, max_iter=4, record_trace=True, trace_tokens=[0, 5],
                      random_state=0).fit(X)
    truth = m.trace_["words"]          # traced tokens are positions in the secret visiting order
    assert truth.shape == (2,)
    res = topic_based_attack(m, true_words=truth)
    assert res.log_posterior.shape == (2, 15)
    np.testing.assert_allclose(np.exp(res.log_posterior).sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="record_trace"):
        topic_based_attack(NoisyGibbsLDA(2, max_iter=2, random_state=0).fit(X))
    with pytest.raises(TypeError):
        topic_based_attack([1, 2, 3])
    with pytest.raises(ValueError, match="one entry per traced token"):
        topic_based_attack(m, true_words=[1, 2, 3])
    last = NoisyGibbsLDA(2, clip=5, noise_schedule="last", max_iter=3, record_trace=True,
                         random_state=0).fit(X)
    assert list(topic_based_attack(last).iterations) == [3]   # only the noisy iteration


def test_topic_attack_kos_grows_for_cgs_stays_low_for_hdp_lda(kos):
    """papers/zhao2021 Fig. 4 on KOS (200 random documents, K = 10, 30 iterations, 300
    random target tokens, alpha = 1): against plain CGS the posterior probability of the
    true word grows with the iterations; against HDP-LDA with eps_I = 2 log(C/beta + 1)
    = 1.39 (C = 1, beta = 1) it stays near its prior level."""
    X, _ = kos
    rng = np.random.default_rng(0)
    docs = np.sort(rng.choice(X.shape[0], 200, replace=False))
    Xs = X[docs]
    Xs = Xs[:, np.asarray(Xs.sum(axis=0)).ravel() > 0]
    corpus = Corpus.from_matrix(Xs)
    tokens = rng.choice(corpus.n_tokens, 300, replace=False)
    truth = corpus.word_ids[tokens]
    T = 30
    plain = topic_based_attack(
        record_gibbs_trace(Xs, 10, max_iter=T, trace_tokens=tokens, doc_topic_prior=1.0,
                           topic_word_prior=0.01, random_state=1),
        true_words=truth, smoothing=0.01).mean_true_word_probability
    hdp = NoisyGibbsLDA(10, epsilon_per_iter=10.0, clip=1.0, topic_word_prior=1.0,
                        doc_topic_prior=1.0, max_iter=T, record_trace=True, trace_tokens=tokens,
                        random_state=1).fit(Xs)
    assert hdp.epsilon_inherent_ == pytest.approx(2 * np.log(2))
    # the private sweep visits tokens in a secret order: its traced positions hold other
    # tokens than the plain trace's, with their own true words
    private = topic_based_attack(hdp, true_words=hdp.trace_["words"]).mean_true_word_probability
    # grows with iterations against CGS (the evidence accumulates) ...
    assert plain[-1] > 3 * plain[4] and plain[-1] > 0.04
    assert np.all(np.diff(plain[[0, 4, 9, 19, 29]]) > 0)
    # ... and stays low and flat against HDP-LDA
    assert private[-1] < plain[-1] / 2.5
    assert private[-1] - private[9] < 0.01
