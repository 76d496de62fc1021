import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dptm import GibbsLDA
from dptm.datasets import load_demo_corpus, make_lda_corpus
from dptm.metrics import (PROB_FLOOR, align_topics, aligned_l1, aligned_rmse, cv_coherence,
                          kendall_tau_distance, log_likelihood, npmi_coherence, perplexity,
                          umass_coherence)


def _dirichlet(rng, k, n):
    return rng.dirichlet(np.ones(n), size=k)


# ---------------------------------------------------------------- perplexity

def test_uniform_model_has_perplexity_v():
    X, _, _ = make_lda_corpus(30, 17, 3, doc_length=(1, 20), random_state=0)
    theta = np.full((30, 4), 0.25)
    phi = np.full((4, 17), 1 / 17)
    assert perplexity(X, theta, phi) == pytest.approx(17, rel=1e-12)
    assert log_likelihood(X, theta, phi) == pytest.approx(-X.sum() * math.log(17))


def test_log_likelihood_matches_token_loop():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(6, 9))
    theta, phi = _dirichlet(rng, 6, 3), _dirichlet(rng, 3, 9)
    ref = 0.0
    for d in range(6):
        for w in range(9):
            for _ in range(X[d, w]):  # one term per token
                ref += math.log(sum(theta[d, k] * phi[k, w] for k in range(3)))
    assert log_likelihood(X, theta, phi) == pytest.approx(ref, rel=1e-12)
    assert log_likelihood(sp.csr_matrix(X), theta, phi) == pytest.approx(ref, rel=1e-12)
    assert perplexity(X, theta, phi) == pytest.approx(math.exp(-ref / X.sum()), rel=1e-12)


def test_one_topic_one_doc_closed_form():
    X = np.array([[2, 0, 1]])
    phi = np.array([[0.5, 0.25, 0.25]])
    # exp(-(2 log .5 + log .25) / 3) = exp(4 log 2 / 3) = 2^(4/3)
    assert perplexity(X, [[1.0]], phi) == pytest.approx(2 ** (4 / 3))


def test_zero_probability_is_floored():
    X = np.array([[1, 1]])
    phi = np.array([[1.0, 0.0]])
    assert log_likelihood(X, [[1.0]], phi) == pytest.approx(math.log(PROB_FLOOR))
    assert np.isfinite(perplexity(X, [[1.0]], phi))


def test_true_model_beats_wrong_model_on_demo():
    b = load_demo_corpus()
    good = perplexity(b.X, b.doc_topic, b.topic_word)
    V = b.vocabulary.size
    uniform = perplexity(b.X, b.doc_topic, np.full_like(b.topic_word, 1 / V))
    assert good < uniform == pytest.approx(V)
    shuffled = b.topic_word[np.roll(np.arange(len(b.topic_names)), 1)]
    assert good < perplexity(b.X, b.doc_topic, shuffled)


@pytest.mark.parametrize("X, theta, phi, exc, match", [
    (np.ones((2, 3)), np.full((3, 2), .5), np.full((2, 3), 1 / 3), ValueError, "doc_topic"),
    (np.ones((2, 3)), np.full((2, 2), .5), np.full((2, 4), .25), ValueError, "topic_word"),
    (np.ones((2, 3)), np.full((2, 2), .5), np.full((3, 3), 1 / 3), ValueError, "topic_word"),
    (-np.ones((2, 3)), np.full((2, 2), .5), np.full((2, 3), 1 / 3), ValueError, "negative"),
    (np.ones((2, 3)), np.full((2, 2), .6), np.full((2, 3), 1 / 3), ValueError, "sum to 1"),
    (np.ones((2, 3)), [[1.5, -.5]] * 2, np.full((2, 3), 1 / 3), ValueError, "non-negative"),
    (np.ones((2, 3)), np.full((2, 2), .5), np.full((2, 3), np.nan), ValueError, "NaN"),
    (np.ones((2, 3)), np.full(2, .5), np.full((2, 3), 1 / 3), ValueError, "2-D"),
    (np.zeros((2, 3)), np.full((2, 2), .5), np.full((2, 3), 1 / 3), ValueError, "no tokens"),
])
def test_perplexity_rejects_bad_input(X, theta, phi, exc, match):
    with pytest.raises(exc, match=match):
        perplexity(X, theta, phi)


# ---------------------------------------------------------------- UMass coherence

# documents: {a, b}, {a, c}, {a, b, c}, {b}; word d never occurs
_CORPUS = np.array([[1, 2, 0, 0], [3, 0, 1, 0], [1, 1, 1, 0], [0, 4, 0, 0]])


def test_umass_by_hand():
    phi = np.array([[.5, .3, .2, 0.],    # top words a, b, c
                    [.1, .3, .6, 0.]])   # top words c, b, a
    # D(a)=3, D(b)=3, D(c)=2, D(a,b)=2, D(a,c)=2, D(b,c)=1
    t0 = math.log(3 / 3) + math.log(3 / 3) + math.log(2 / 3)  # (b|a), (c|a), (c|b)
    t1 = math.log(2 / 2) + math.log(3 / 2) + math.log(3 / 3)  # (b|c), (a|c), (a|b)
    # Mimno's pseudo-count 1; the paper's eq. 4 sums the 3 pairs, "mean" averages them
    np.testing.assert_allclose(umass_coherence(_CORPUS, phi, top_n=3, per_topic=True,
                                               aggregate="sum", smoothing=1), [t0, t1])
    np.testing.assert_allclose(umass_coherence(_CORPUS, phi, top_n=3, per_topic=True,
                                               smoothing=1), [t0 / 3, t1 / 3])
    assert umass_coherence(_CORPUS, phi, top_n=3, smoothing=1) == pytest.approx((t0 + t1) / 6)
    # normalisation of the weights does not matter
    assert umass_coherence(_CORPUS, 7 * phi, top_n=3, smoothing=1) == pytest.approx((t0 + t1) / 6)
    # the default is gensim's: 1e-12 added to the probability D(v, v') / n_docs
    s = 1e-12 * 4
    g0 = 2 * math.log((2 + s) / 3) + math.log((1 + s) / 3)  # D(a,b)=D(a,c)=2, D(b,c)=1
    assert umass_coherence(_CORPUS, phi[:1], top_n=3) == pytest.approx(g0 / 3, rel=1e-12)


def test_umass_word_absent_from_reference_corpus():
    phi = np.array([[.1, 0, 0, .9], [.9, 0, 0, .1]])  # top words (d, a) and (a, d)
    # (a | d): D(d) = 0, the pair scores 0 (gensim's rule); (d | a): log((0 + s) / 3)
    np.testing.assert_allclose(umass_coherence(_CORPUS, phi, top_n=2, per_topic=True,
                                               smoothing=1), [0.0, math.log(1 / 3)])
    np.testing.assert_allclose(umass_coherence(_CORPUS, phi, top_n=2, per_topic=True),
                               [0.0, math.log(4e-12 / 3)])


def test_umass_true_topics_beat_random_on_demo():
    b = load_demo_corpus()
    rng = np.random.default_rng(0)
    assert umass_coherence(b.X, b.topic_word) > umass_coherence(b.X, rng.random(b.topic_word.shape))


def test_umass_errors():
    with pytest.raises(ValueError, match="top_n"):
        umass_coherence(_CORPUS, np.ones((2, 4)), top_n=5)
    with pytest.raises(ValueError, match="topic_word"):
        umass_coherence(_CORPUS, np.ones((2, 3)))
    with pytest.raises(ValueError, match="negative"):
        umass_coherence(_CORPUS, -np.ones((2, 4)), top_n=2)
    with pytest.raises(ValueError, match="aggregate"):
        umass_coherence(_CORPUS, np.ones((2, 4)), top_n=2, aggregate="median")
    with pytest.raises(ValueError, match="smoothing"):
        umass_coherence(_CORPUS, np.ones((2, 4)), top_n=2, smoothing=0)
    with pytest.raises(ValueError, match="top_n"):
        npmi_coherence(_CORPUS, np.ones((2, 4)), top_n=1)


def test_npmi_and_cv_by_hand():
    # NPMI(a, b) with p(a) = p(b) = 3/4, p(a, b) = 2/4 (documents as windows)
    phi = np.array([[.5, .4, .1, 0.]])     # top-2 words a, b
    pab, pa, pb = 0.5, 0.75, 0.75
    npmi = math.log((pab + 1e-12) / (pa * pb)) / -math.log(pab + 1e-12)
    assert npmi_coherence(_CORPUS, phi, top_n=2) == pytest.approx(npmi, rel=1e-12)
    # C_V of two words: vectors (1, n) and (n, 1) against their sum (1 + n, 1 + n):
    # the cosine is (1 + n) / sqrt(2 (1 + n^2)) for both.
    n = npmi
    assert cv_coherence(_CORPUS, phi, top_n=2) == pytest.approx((1 + n) / math.sqrt(2 * (1 + n * n)),
                                                                 rel=1e-9)
    # words that always co-occur are perfectly coherent
    X = np.array([[1, 1, 0], [2, 1, 0], [0, 0, 1]])
    assert npmi_coherence(X, np.array([[.5, .5, 0.]]), top_n=2) == pytest.approx(1.0, abs=1e-9)


@pytest.fixture(scope="module")
def gensim_case():
    """A small corpus and a fitted model, as texts and as a count matrix."""
    gensim = pytest.importorskip("gensim", reason="gensim (test extra) is the reference")
    b = load_demo_corpus()
    X = b.X[:300]
    vocab = np.asarray(b.vocabulary)
    texts = []
    for row in X.toarray() if hasattr(X, "toarray") else X:
        texts.append([w for i in np.flatnonzero(row) for w in [vocab[i]] * int(row[i])])
    phi = GibbsLDA(8, max_iter=40, random_state=0).fit(X).topic_word_
    topics = [list(vocab[np.argsort(-t, kind="stable")[:10]]) for t in phi]
    return gensim, X, phi, texts, topics


@pytest.mark.parametrize("measure", ["u_mass", "c_npmi", "c_v"])
def test_coherence_matches_gensim(gensim_case, measure):
    gensim, X, phi, texts, topics = gensim_case
    from gensim.corpora import Dictionary
    from gensim.models import CoherenceModel
    d = Dictionary(texts)
    longest = max(len(t) for t in texts)
    if measure == "u_mass":
        ref = CoherenceModel(topics=topics, corpus=[d.doc2bow(t) for t in texts], dictionary=d,
                             coherence="u_mass", topn=10).get_coherence()
        ours = umass_coherence(X, phi)              # the default is gensim's smoothing
    else:
        # a window longer than every document makes each document one window
        ref = CoherenceModel(topics=topics, texts=texts, dictionary=d, coherence=measure,
                             topn=10, window_size=longest + 1, processes=1).get_coherence()
        ours = (npmi_coherence if measure == "c_npmi" else cv_coherence)(X, phi)
    assert ours == pytest.approx(ref, rel=1e-9)          # identical up to rounding


def test_umass_on_kos_runs(kos):
    X, _ = kos
    phi = np.asarray(X[:20].sum(0), dtype=float)  # a "topic" = word counts of 20 documents
    score = umass_coherence(X, phi)
    assert -45 * math.log(X.shape[0]) < score < 0


# ---------------------------------------------------------------- alignment and distances

def test_alignment_recovers_permutation():
    rng = np.random.default_rng(2)
    A = _dirichlet(rng, 6, 40)
    perm = rng.permutation(6)
    rows, cols = align_topics(A, A[perm])
    np.testing.assert_array_equal(rows, np.arange(6))
    np.testing.assert_array_equal(perm[cols], np.arange(6))  # B[cols] == A
    assert aligned_l1(A, A[perm]) == 0 and aligned_rmse(A, A[perm]) == 0
    assert kendall_tau_distance(A, A[perm]) == 0
    assert aligned_l1(A, A[perm], align=False) > 0


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_metrics_invariant_under_permutation(seed):
    rng = np.random.default_rng(seed)
    A, B = _dirichlet(rng, 5, 12), _dirichlet(rng, 5, 12)
    p, q = rng.permutation(5), rng.permutation(5)
    assert aligned_l1(A[p], B[q]) == pytest.approx(aligned_l1(A, B))
    assert aligned_rmse(A[p], B[q]) == pytest.approx(aligned_rmse(A, B))
    tau = kendall_tau_distance(A, B, top_n=6)
    assert kendall_tau_distance(A, B[q], top_n=6) == pytest.approx(tau)
    # alignment can only reduce the L1 distance, and it is symmetric
    assert aligned_l1(A, B) <= aligned_l1(A, B, align=False) + 1e-12
    assert aligned_l1(A, B) == pytest.approx(aligned_l1(B, A))


def test_l1_and_rmse_closed_form():
    A = np.array([[.5, .5, 0.], [0., .2, .8]])
    B = np.array([[.5, .3, .2], [0., .2, .8]])
    assert aligned_l1(A, B) == pytest.approx(0.4)
    np.testing.assert_allclose(aligned_l1(A, B, per_topic=True), [0.4, 0.0])
    assert aligned_rmse(A, B) == pytest.approx(math.sqrt((0.04 + 0.04) / 6))
    assert aligned_l1(A, B[::-1]) == pytest.approx(0.4)


def test_rectangular_alignment():
    rng = np.random.default_rng(4)
    B = _dirichlet(rng, 5, 20)
    rows, cols = align_topics(B[[3, 1]], B)
    np.testing.assert_array_equal(cols, [3, 1])
    with pytest.raises(ValueError, match="B has shape"):
        aligned_l1(B[:2], B)


def test_kendall_tau_by_hand():
    A = np.array([[.5, .3, .2, 0.]])
    assert kendall_tau_distance(A, np.array([[.4, .35, .25, 0.]]), top_n=3) == 0
    assert kendall_tau_distance(A, np.array([[.1, .2, .7, 0.]]), top_n=3) == 1
    assert kendall_tau_distance(A, np.array([[.3, .4, .2, .1]]), top_n=3) == pytest.approx(1 / 3)
    # ties in B count one half: pairs (0,1) tied, (0,2) and (1,2) discordant
    assert kendall_tau_distance(A, np.array([[.3, .3, .4, 0.]]), top_n=3) == pytest.approx(2.5 / 3)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_kendall_tau_matches_scipy_without_ties(seed):
    rng = np.random.default_rng(seed)
    A, B = rng.random((1, 15)), rng.random((1, 15))
    top = np.argsort(-A[0])[:8]
    tau = stats.kendalltau(A[0, top], B[0, top]).statistic
    assert kendall_tau_distance(A, B, top_n=8) == pytest.approx((1 - tau) / 2)


def test_distance_errors():
    A = np.full((2, 3), 1 / 3)
    with pytest.raises(ValueError, match="top_n"):
        kendall_tau_distance(A, A, top_n=4)
    with pytest.raises(ValueError, match="top_n"):
        kendall_tau_distance(A, A, top_n=1)
    with pytest.raises(ValueError, match="negative"):
        aligned_rmse(A, -A)
    with pytest.raises(ValueError, match="B has shape"):
        aligned_rmse(A, np.ones((2, 4)))
    with pytest.raises(TypeError, match="numeric"):
        aligned_l1(A, np.array([["a"] * 3] * 2))


def test_top_words_on_demo():
    from dptm.metrics import top_words

    b = load_demo_corpus()
    words = top_words(b.topic_word, b.vocabulary, top_n=3)
    assert len(words) == len(b.topic_names) and all(len(w) == 3 for w in words)
    assert words[b.topic_names.index("medicine")][:2] == ["patient", "doctor"]
    with pytest.raises(ValueError, match="topic_word"):
        top_words(b.topic_word, b.vocabulary[:-1])


def test_npmi_with_a_top_word_absent_from_the_reference_text_is_finite():
    import scipy.sparse as sp
    from dptm.metrics import npmi_coherence
    X = sp.csr_matrix(np.array([[1, 1, 0], [1, 1, 0], [0, 1, 0]]))
    tw = np.array([[0.5, 0.3, 0.2]])
    per_pair = npmi_coherence(X, tw, top_n=3, per_topic=True)
    # pairs (0,1): co-occur in 2 of 3 documents; (0,2), (1,2): word 2 never appears -> -1
    p01 = 2 / 3
    want01 = np.log(p01 / (2 / 3 * 1.0)) / -np.log(p01)
    assert np.isfinite(per_pair).all()
    assert per_pair[0] == pytest.approx((want01 - 2) / 3, abs=1e-9)


def test_umass_default_matches_gensim_on_private_topics_and_unseen_words(gensim_case):
    """gensim's u_mass on the topics of a private release, scored on a reference corpus
    where some top words never occur (gensim scores such a pair 0): the default
    smoothing gives gensim's value; Mimno's smoothing=1 does not."""
    gensim, X, phi, texts, topics = gensim_case
    from gensim.corpora import Dictionary
    from gensim.models import CoherenceModel
    from dptm import PrivateBatchLDA
    b = load_demo_corpus()
    vocab = np.asarray(b.vocabulary)
    from dptm.exceptions import SeededPrivacyWarning
    with pytest.warns(SeededPrivacyWarning):
        release = PrivateBatchLDA(6, target_epsilon=4, random_state=0).fit(b.X[300:]).release()
    tw = release.topic_word
    ref = X[:4]
    ref_texts = texts[:4]
    dictionary = Dictionary(texts)             # ids for every word of the 300 documents
    present = np.asarray((ref > 0).sum(axis=0)).ravel() > 0
    private_topics = [list(vocab[np.argsort(-t, kind="stable")[:10]]) for t in tw]
    keep = [all(w in dictionary.token2id for w in t) for t in private_topics]
    assert sum(keep) >= 2
    tw_kept = tw[np.flatnonzero(keep)]
    ranked = np.argsort(-tw_kept, axis=1, kind="stable")[:, :10]
    assert not present[ranked].all()           # some top words are unseen in the reference
    expected = CoherenceModel(topics=[t for t, k in zip(private_topics, keep) if k],
                              corpus=[dictionary.doc2bow(t) for t in ref_texts],
                              dictionary=dictionary, coherence="u_mass", topn=10).get_coherence()
    assert umass_coherence(ref, tw_kept) == pytest.approx(expected, rel=1e-9)
    assert umass_coherence(ref, tw_kept, smoothing=1) != pytest.approx(expected, rel=1e-3)
