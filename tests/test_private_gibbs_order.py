"""The secret token order keeps one sweep within eps_I; the word-sorted order does not.

One sweep of the snapshot sampler (``_cgs.noisy_gibbs_sweep`` with every token selected)
visits a document's tokens in array order and draws each from
``p_t ∝ F[w, t] (n_dk[d, t] + alpha)`` with the word factor F fixed. For a two-token
document the whole output distribution (the topics by position) is enumerated exactly with
a NumPy reference of that conditional, validated against the kernel by chi-square. On the
neighbours ``[[1, 1, 0]]`` / ``[[0, 1, 1]]`` (the replaced token moves past word 1 in
word-id order) and an adversarial snapshot, the exact log-ratio of the output
probabilities stays within eps_I = 2 log(C / beta + 1) when the order is uniformly random
(what the estimators do) and exceeds it when the order is word-sorted (the old behaviour).
"""
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dptm import NoisyGibbsLDA, SubsampledGibbsLDA, _cgs
from dptm.corpus import Corpus
from dptm.models.private_gibbs import _visiting_order, inherent_epsilon

NO_TABLE = np.zeros((0, 0))
D0 = np.array([[1, 1, 0]])          # tokens: word 0 (replaced), word 1
D1 = np.array([[0, 1, 1]])          # tokens: word 1, word 2 (the replacement)


def kernel_word_factor(snapshot, clip, beta):
    """The word factor the estimators sample from, computed by the real snapshot kernel
    (kind 0: no noise, so the snapshot is exactly ``snapshot``)."""
    n_wk = np.ascontiguousarray(snapshot, dtype=np.int32)
    s = np.empty(n_wk.shape)
    f = np.empty(n_wk.shape, dtype=np.float32)
    m = np.empty(n_wk.shape[0])
    _cgs.noisy_snapshot(n_wk, 0, 0.0, 0, 0, 0, clip, beta, s, f, m,
                        np.random.default_rng(0).bit_generator)
    return f, m


def reference_conditional(F, w, n_dk_minus, alpha):
    """The kernel's conditional in NumPy: p_t ∝ F[w, t] (n_dk^{-i}[t] + alpha)."""
    p = F[w].astype(np.float64) * (n_dk_minus + alpha)
    return p / p.sum()


def sweep_distribution(words, z0, F, alpha):
    """Exact P(final topics by position) of one sweep over a one-document corpus whose
    tokens are visited in the order of ``words``, from topics ``z0``."""
    K = F.shape[1]
    out = {}

    def visit(i, z, p):
        if i == len(words):
            out[tuple(z)] = out.get(tuple(z), 0.0) + p
            return
        n_minus = np.bincount(np.delete(np.asarray(z), i), minlength=K)
        q = reference_conditional(F, words[i], n_minus, alpha)
        for t in range(K):
            visit(i + 1, z[:i] + [t] + z[i + 1:], p * q[t])

    visit(0, list(z0), 1.0)
    return out


def order_distribution(X, order):
    """The visiting orders of ``X``'s single document with their probabilities: uniform over
    the permutations ('random', as ``_visiting_order`` draws them; its uniformity is tested
    below and in test_secret_randomness.py) or the one word-sorted order ('sorted')."""
    corpus = Corpus.from_matrix(X)
    if order == "sorted":
        return [(tuple(_visiting_order(corpus, None, "sorted").word_ids), 1.0)]
    perms = sorted(set(itertools.permutations(corpus.word_ids.tolist())))
    return [(p, 1.0 / len(perms)) for p in perms]


def mechanism_distribution(X, order, z0, F, alpha):
    out = {}
    for words, weight in order_distribution(X, order):
        for z, p in sweep_distribution(list(words), z0, F, alpha).items():
            out[z] = out.get(z, 0.0) + weight * p
    return out


def adversarial_snapshot(K, C):
    """Word 0 and word 2 on topic 1, word 1 on topic 0 (found by searching snapshots with
    entries in {0, C}: the worst for the sorted order)."""
    s = np.zeros((3, K))
    s[0, 1] = s[2, 1] = s[1, 0] = C
    return s


def max_log_ratio(order, K, alpha, C, beta=1.0):
    F, _ = kernel_word_factor(adversarial_snapshot(K, C), C, beta)
    worst = 0.0
    for z0 in itertools.product(range(K), repeat=2):     # any previous state
        p0 = mechanism_distribution(D0, order, z0, F, alpha)
        p1 = mechanism_distribution(D1, order, z0, F, alpha)
        assert set(p0) == set(p1) and abs(sum(p0.values()) - 1) < 1e-12
        worst = max(worst, max(abs(math.log(p0[z] / p1[z])) for z in p0))
    return worst


CASES = [(K, alpha, C) for K in (2, 3) for alpha in (0.01, 0.1, 1.0) for C in (1.0, 5.0)]


@pytest.mark.parametrize("K,alpha,C", CASES)
def test_one_sweep_within_eps_i_with_the_secret_order(K, alpha, C):
    eps_i = inherent_epsilon(C, 1.0)
    assert max_log_ratio("random", K, alpha, C) <= eps_i + 1e-9


@pytest.mark.parametrize("K,alpha,C", CASES)
def test_one_sweep_breaks_eps_i_with_the_word_sorted_order(K, alpha, C):
    # the same exact computation, visiting by word id: the bound fails (by 1.2x at
    # alpha = 1 to 2x at alpha = 0.01)
    eps_i = inherent_epsilon(C, 1.0)
    assert max_log_ratio("sorted", K, alpha, C) > 1.15 * eps_i


@pytest.mark.parametrize("K,alpha,C", [(2, 0.1, 1.0), (3, 0.01, 5.0)])
def test_each_coupled_order_is_within_eps_i(K, alpha, C):
    # The composition over sweeps rests on this: for every order of D0, the order of D1
    # with the replaced token in the same place gives a ratio within eps_I.
    F, _ = kernel_word_factor(adversarial_snapshot(K, C), C, 1.0)
    eps_i = inherent_epsilon(C, 1.0)
    for w0, w1 in [([0, 1], [2, 1]), ([1, 0], [1, 2])]:
        for z0 in itertools.product(range(K), repeat=2):
            p0, p1 = sweep_distribution(w0, z0, F, alpha), sweep_distribution(w1, z0, F, alpha)
            assert max(abs(math.log(p0[z] / p1[z])) for z in p0) <= eps_i + 1e-9


@pytest.mark.parametrize("words,z0", [([0, 1], (1, 0)), ([1, 2], (2, 2)), ([2, 0, 1], (0, 2, 1))])
def test_reference_matches_the_kernel(words, z0):
    """The exact enumeration is the kernel's distribution: 20000 one-sweep runs of
    ``noisy_gibbs_sweep`` from the same state, chi-square over all K^n outputs (false-alarm
    rate 1e-6)."""
    K, alpha, C = 3, 0.1, 5.0
    s = adversarial_snapshot(K, C)
    s[1, 2] = 2.0
    F, mass = kernel_word_factor(s, C, 1.0)
    exact = sweep_distribution(words, z0, F, alpha)
    doc_ptr = np.array([0, len(words)], dtype=np.int64)
    w = np.array(words, dtype=np.int32)
    gen = np.random.default_rng(2024)
    counts = {}
    runs = 20000
    for _ in range(runs):
        z = np.array(z0, dtype=np.int32)
        n_wk = np.zeros((3, K), dtype=np.int32)
        np.add.at(n_wk, (w, z), 1)
        n_dk = np.bincount(z, minlength=K).astype(np.int32)[None, :].copy()
        n_k = n_wk.sum(axis=0).astype(np.int64)
        _cgs.noisy_gibbs_sweep(doc_ptr, w, z, n_wk, n_dk, n_k, F, mass, alpha, 1.0, NO_TABLE,
                               gen.bit_generator)
        counts[tuple(z)] = counts.get(tuple(z), 0) + 1
    keys = sorted(exact)
    assert set(counts) <= set(keys)
    observed = np.array([counts.get(k, 0) for k in keys])
    expected = np.array([exact[k] for k in keys]) * runs
    assert stats.chisquare(observed, expected).pvalue > 1e-6


@pytest.mark.parametrize("model", [NoisyGibbsLDA, SubsampledGibbsLDA])
def test_estimators_visit_tokens_in_a_uniformly_random_order(model):
    """``trace_tokens`` index the visiting order: position 0 of ``[[1, 1, 0]]`` holds
    word 0 or word 1 with probability 1/2 each over fits (binomial test, false alarm
    1e-6); the word-sorted order would always put word 0 there."""
    n = 300
    first = [model(2, clip=1.0, max_iter=1, record_trace=True, trace_tokens=[0]).fit(D0)
             .trace_["words"][0] for _ in range(n)]
    assert set(first) <= {0, 1}
    assert stats.binomtest(int(np.sum(first)), n, 0.5).pvalue > 1e-6


def test_visiting_order_keeps_documents_and_words():
    X = np.array([[3, 0, 1, 2], [0, 0, 0, 0], [1, 4, 0, 0]])
    corpus = Corpus.from_matrix(X)
    shuffled = _visiting_order(corpus, np.random.default_rng(0))
    np.testing.assert_array_equal(shuffled.doc_ptr, corpus.doc_ptr)
    assert (shuffled.to_matrix() != corpus.to_matrix()).nnz == 0
    assert not np.array_equal(shuffled.word_ids, corpus.word_ids)   # 6! x 5! orders: not sorted
    with pytest.raises(ValueError, match="order"):
        _visiting_order(corpus, np.random.default_rng(0), "reversed")
