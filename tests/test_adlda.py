"""AD-LDA sweeps of GibbsLDA (#16): ``_cgs.ADLDAWorkspace``, the buffers the partitioned
sweeps (dense ``gibbs_sweep_parallel``, SparseLDA ``gibbs_sweep_sparse``) keep between
sweeps, must not change a single draw; the sparse partitioned draw is the collapsed
conditional of the stale counts of the start of the sweep; the estimator's fit is the
kernel loop without a workspace (so ``n_jobs=1`` is the serial sampler it always was).

Without a workspace each sweep copies the counts afresh, which is the AD-LDA definition
(``tests/test_parallel_gibbs.py`` checks it); with one, the merge at the end of a sweep
writes the next sweep's copies and word lists instead.
"""
import itertools
from functools import partial

import numpy as np
import pytest
from scipy import stats

from dptm import GibbsLDA, _cgs
from dptm._utils import check_random_state, spawn_generators
from dptm.corpus import Corpus
from dptm.datasets import make_lda_corpus
from dptm.models import gibbs
from dptm.models.gibbs import GibbsState, round_blocks, token_blocks

from test_parallel_gibbs import assert_counts_of, ragged_corpus, state_copy

KERNELS = {"dense": _cgs.gibbs_sweep_parallel, "sparse": _cgs.gibbs_sweep_sparse}


def _one_word_conditional(others, K, V, alpha, beta):
    """Exact conditional of the topic of a one-token document whose word's other tokens
    have topics ``others`` (every document holds one token of the same word)."""
    nw = np.bincount(others, minlength=K)
    p = (nw + beta) * alpha / (nw + V * beta)
    return p / p.sum()


def pooled_pvalue(counts, expected):
    """Chi-square p-value with the cells expected below 5 pooled into one."""
    counts, expected = np.ravel(counts), np.ravel(expected)
    small = expected < 5
    if not small.any():
        return stats.chisquare(counts, expected).pvalue
    return stats.chisquare(np.append(counts[~small], counts[small].sum()),
                           np.append(expected[~small], expected[small].sum())).pvalue


def gens_for(parts, seed):
    return [np.random.default_rng([seed, p]).bit_generator for p in range(parts.size - 1)]


# ------------------------------------------------------------------ same draws
@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("K", [6, 40])
@pytest.mark.parametrize("parts", [[0, 16], [0, 7, 16], [0, 3, 3, 11, 16]])
def test_workspace_sweeps_equal_fresh_sweeps(kind, K, parts):
    """Six sweeps of one state with one workspace (1, 2 and 3 threads) equal six sweeps
    that copy the counts afresh, array for array after every sweep (partitions of one
    document, empty documents, an empty partition)."""
    corpus = ragged_corpus(seed=11)
    parts = np.array(parts, dtype=np.int64)
    kernel = KERNELS[kind]
    init = GibbsState(corpus, K, np.random.default_rng(5))
    fresh = state_copy(init)
    g_fresh = gens_for(parts, 3)
    ref = []
    for _ in range(6):
        kernel(corpus.doc_ptr, corpus.word_ids, *fresh, 0.2, 0.05, parts, g_fresh, 1)
        ref.append([a.copy() for a in fresh])
    for n_threads in (1, 2, 3):
        s = state_copy(init)
        g = gens_for(parts, 3)
        ws = _cgs.ADLDAWorkspace(parts.size - 1, corpus.n_words, K, kind == "sparse")
        for sweep in range(6):
            kernel(corpus.doc_ptr, corpus.word_ids, *s, 0.2, 0.05, parts, g, n_threads, ws)
            assert_counts_of(corpus, *s)
            for x, y in zip(s, ref[sweep]):
                np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("parts", [[0, 16], [0, 7, 16]])
def test_word_lists_sized_by_word_counts_give_the_same_draws(parts):
    """Word lists with room for min(K, the word's tokens) pairs (``word_counts``; words
    with one token, words with none) draw exactly as K-pair lists, merged and rounds
    kernels, 1-2 threads; a state with more tokens of a word than its room is refused."""
    base = ragged_corpus(seed=17)
    words = np.random.default_rng(17).integers(1, 21, base.n_tokens).astype(np.int32)
    words[::3] = 0                                    # 68 tokens: room for K pairs
    words[5] = 21                                     # one token; word 22 has none
    corpus = Corpus(base.doc_ptr, words, 23)
    K = 40
    parts = np.array(parts, dtype=np.int64)
    counts = np.bincount(corpus.word_ids, minlength=corpus.n_words)
    assert counts[0] > K and counts[21] == 1 and counts[22] == 0 and (counts[1:] < K).all()
    rounds = round_blocks(corpus.doc_ptr, parts, 3)
    init = GibbsState(corpus, K, np.random.default_rng(3))
    for n_threads in (1, 2):
        for rounds_kernel in (False, True):
            a, b = state_copy(init), state_copy(init)
            ga, gb = gens_for(parts, 4), gens_for(parts, 4)
            wa = _cgs.ADLDAWorkspace(parts.size - 1, corpus.n_words, K, True)
            wb = _cgs.ADLDAWorkspace(parts.size - 1, corpus.n_words, K, True, counts)
            for _ in range(4):
                for s, g, ws in ((a, ga, wa), (b, gb, wb)):
                    if rounds_kernel:
                        _cgs.gibbs_sweep_rounds(corpus.doc_ptr, corpus.word_ids, *s, 0.2,
                                                0.05, rounds, g, n_threads, True, ws, 2)
                    else:
                        _cgs.gibbs_sweep_sparse(corpus.doc_ptr, corpus.word_ids, *s, 0.2,
                                                0.05, parts, g, n_threads, ws)
                assert_counts_of(corpus, *b)
                for x, y in zip(a, b):
                    np.testing.assert_array_equal(x, y)
    w = 1 + int(np.argmax(counts[1:]))               # a word with fewer tokens than K
    small = counts.copy()
    small[w] -= 1
    ws = _cgs.ADLDAWorkspace(parts.size - 1, corpus.n_words, K, True, small)
    s = state_copy(init)
    with pytest.raises(ValueError, match=f"word {w} has more tokens"):
        _cgs.gibbs_sweep_sparse(corpus.doc_ptr, corpus.word_ids, *s, 0.2, 0.05, parts,
                                gens_for(parts, 4), 1, ws)
    with pytest.raises(ValueError, match=f"word {w} has more tokens"):
        _cgs.gibbs_sweep_rounds(corpus.doc_ptr, corpus.word_ids, *s, 0.2, 0.05, rounds,
                                gens_for(parts, 4), 1, True, ws, 2)
    with pytest.raises(ValueError, match="word_counts must have"):
        _cgs.ADLDAWorkspace(1, corpus.n_words, K, True, counts[1:])


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_workspace_follows_a_changed_state(kind):
    """A workspace swept with one state, then given another state (detected: another
    array), a state whose topic totals were changed (detected), or whose word counts were
    changed in place with ``invalidate()`` called, sweeps as a fresh copy does."""
    corpus = ragged_corpus(seed=12)
    K, parts = 8, np.array([0, 6, 11, 16], dtype=np.int64)
    kernel = KERNELS[kind]
    ws = _cgs.ADLDAWorkspace(3, corpus.n_words, K, kind == "sparse")

    def both(state, seed, ws_call=None):
        a, b = [x.copy() for x in state], state
        kernel(corpus.doc_ptr, corpus.word_ids, *a, 0.3, 0.1, parts, gens_for(parts, seed), 2)
        (ws_call or (lambda: None))()
        kernel(corpus.doc_ptr, corpus.word_ids, *b, 0.3, 0.1, parts, gens_for(parts, seed), 2,
               ws)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)

    first = state_copy(GibbsState(corpus, K, np.random.default_rng(1)))
    for seed in (1, 2):
        both(first, seed)
    other = state_copy(GibbsState(corpus, K, np.random.default_rng(2)))
    both(other, 3)                                   # another n_wk array
    other[3][0] += 5                                 # n_k changed: detected
    both(other, 4)
    w = corpus.word_ids[0]
    other[1][w, 0] += 2                              # n_wk alone changed: invalidate()
    both(other, 5, ws.invalidate)


def test_workspace_of_another_shape_is_refused():
    corpus = ragged_corpus(seed=1)
    s = state_copy(GibbsState(corpus, 5, np.random.default_rng(0)))
    parts = np.array([0, 8, 16], dtype=np.int64)
    for ws in (_cgs.ADLDAWorkspace(3, corpus.n_words, 5, False),
               _cgs.ADLDAWorkspace(2, corpus.n_words + 1, 5, False),
               _cgs.ADLDAWorkspace(2, corpus.n_words, 4, False),
               _cgs.ADLDAWorkspace(2, corpus.n_words, 5, True)):
        with pytest.raises(ValueError, match="workspace is for"):
            _cgs.gibbs_sweep_parallel(corpus.doc_ptr, corpus.word_ids, *s, 0.1, 0.1, parts,
                                      gens_for(parts, 0), 1, ws)
    with pytest.raises(ValueError, match="n_parts"):
        _cgs.ADLDAWorkspace(0, 3, 5, True)


# ------------------------------------------------------- the sparse partitioned draw
def test_sparse_ad_lda_samples_from_the_stale_counts():
    """Two partitions, one one-token document each, same word, over background counts
    with many zeros (word, document and smoothing buckets all reachable): after a sweep
    the two topics are independent draws, each from the collapsed conditional of the
    counts of the start of the sweep without its own token (AD-LDA: partition 1 does not
    see partition 0's move). 40000 sweeps through one workspace (invalidated when the
    state is reset), chi-square of the joint outcome with small cells pooled (false alarm
    1e-6); power: the conditional shifted by one topic is rejected."""
    K, V, alpha, beta, R, w = 24, 5, 0.3, 0.2, 40000, 3
    rng = np.random.default_rng(24)
    doc_ptr = np.array([0, 1, 2], dtype=np.int64)
    words = np.array([w, w], dtype=np.int32)
    z0 = np.array([2, 7], dtype=np.int32)
    bg_wk = (rng.integers(1, 6, size=(V, K)) * (rng.random((V, K)) < 0.25)).astype(np.int32)
    bg_dk = (rng.integers(1, 4, size=(2, K)) * (rng.random((2, K)) < 0.25)).astype(np.int32)
    n_wk0 = bg_wk.copy(); np.add.at(n_wk0, (words, z0), 1)
    n_dk0 = bg_dk.copy(); n_dk0[[0, 1], z0] += 1
    n_k0 = n_wk0.sum(axis=0, dtype=np.int64) + rng.integers(0, 8, size=K)
    parts = np.array([0, 1, 2], dtype=np.int64)
    gens = gens_for(parts, 9)
    ws = _cgs.ADLDAWorkspace(2, V, K, True)
    z, n_wk, n_dk, n_k = z0.copy(), n_wk0.copy(), n_dk0.copy(), n_k0.copy()
    counts = np.zeros((K, K))
    for _ in range(R):
        z[:] = z0; n_wk[:] = n_wk0; n_dk[:] = n_dk0; n_k[:] = n_k0
        ws.invalidate()
        _cgs.gibbs_sweep_sparse(doc_ptr, words, z, n_wk, n_dk, n_k, alpha, beta, parts, gens,
                                1, ws)
        counts[z[0], z[1]] += 1

    def cond(d):
        nw, nd, nk = n_wk0[w].copy(), n_dk0[d].copy(), n_k0.copy()
        nw[z0[d]] -= 1; nd[z0[d]] -= 1; nk[z0[d]] -= 1
        p = (nw + beta) * (nd + alpha) / (nk + V * beta)
        return p / p.sum()
    p0, p1 = cond(0), cond(1)
    assert pooled_pvalue(counts, np.outer(p0, p1) * R) > 1e-6
    assert pooled_pvalue(counts, np.outer(np.roll(p0, 1), p1) * R) < 1e-6
    assert pooled_pvalue(counts, np.outer(p0, np.roll(p1, 1)) * R) < 1e-6


def _sweep_transition(words, docs, z0, n_wk0, n_dk0, n_k0, K, V, alpha, beta, sequential):
    """Exact probability of every outcome of one serial sweep from the given state: the
    product of each token's collapsed conditional given the tokens before it
    (``sequential``), or of the conditionals of the start of the sweep (the wrong,
    stale-count sampler: the alternative for power)."""
    N = len(words)
    out = np.zeros((K,) * N)
    for outcome in itertools.product(range(K), repeat=N):
        nw, nd, nk = n_wk0.copy(), n_dk0.copy(), n_k0.copy()
        prob = 1.0
        for i, (w, d, knew) in enumerate(zip(words, docs, outcome)):
            base = (nw, nd, nk) if sequential else (n_wk0.copy(), n_dk0.copy(), n_k0.copy())
            bw, bd, bk = base
            bw[w, z0[i]] -= 1; bd[d, z0[i]] -= 1; bk[z0[i]] -= 1
            p = (bw[w] + beta) * (bd[d] + alpha) / (bk + V * beta)
            prob *= p[knew] / p.sum()
            if sequential:
                nw[w, knew] += 1; nd[d, knew] += 1; nk[knew] += 1
        out[outcome] = prob
    return out


def test_sparse_sweep_follows_the_sequential_conditionals_within_documents():
    """The serial SparseLDA sweep keeps the smoothing and document masses as running sums
    within a document, the q coefficients for the document's topics only and (topic,
    count) word lists: one sweep of two documents (3 tokens then 1, words shared, over
    background counts with zeros so the three buckets and list insertions and removals
    all occur) from a fixed state, 60000 times through one workspace; chi-square of the
    joint outcome (6^4 cells, small ones pooled, false alarm 1e-6) against the product of
    the exact sequential conditionals. Power: the stale-count sweep is rejected."""
    K, V, alpha, beta, R = 6, 4, 0.4, 0.3, 60000
    rng = np.random.default_rng(31)
    doc_ptr = np.array([0, 3, 4], dtype=np.int64)
    words = np.array([1, 2, 1, 2], dtype=np.int32)
    docs = np.array([0, 0, 0, 1])
    z0 = np.array([0, 3, 3, 5], dtype=np.int32)
    bg_wk = (rng.integers(1, 4, size=(V, K)) * (rng.random((V, K)) < 0.3)).astype(np.int32)
    bg_dk = (rng.integers(1, 3, size=(2, K)) * (rng.random((2, K)) < 0.3)).astype(np.int32)
    n_wk0 = bg_wk.copy(); np.add.at(n_wk0, (words, z0), 1)
    n_dk0 = bg_dk.copy(); np.add.at(n_dk0, (docs, z0), 1)
    n_k0 = n_wk0.sum(axis=0, dtype=np.int64) + rng.integers(0, 5, size=K)
    parts = np.array([0, 2], dtype=np.int64)
    gen = np.random.default_rng(5).bit_generator
    ws = _cgs.ADLDAWorkspace(1, V, K, True)
    z, n_wk, n_dk, n_k = z0.copy(), n_wk0.copy(), n_dk0.copy(), n_k0.copy()
    counts = np.zeros((K,) * 4)
    for _ in range(R):
        z[:] = z0; n_wk[:] = n_wk0; n_dk[:] = n_dk0; n_k[:] = n_k0
        ws.invalidate()
        _cgs.gibbs_sweep_sparse(doc_ptr, words, z, n_wk, n_dk, n_k, alpha, beta, parts,
                                [gen], 1, ws)
        counts[tuple(z)] += 1
    args = (words, docs, z0, n_wk0, n_dk0, n_k0, K, V, alpha, beta)
    exact = _sweep_transition(*args, sequential=True)
    assert np.isclose(exact.sum(), 1.0)
    assert pooled_pvalue(counts, exact * R) > 1e-6
    assert pooled_pvalue(counts, _sweep_transition(*args, sequential=False) * R) < 1e-6


def test_sparse_sampler_with_workspace_matches_exact_posterior():
    """tests/test_parallel_gibbs.py's exact-posterior test for the serial SparseLDA sweep
    as GibbsLDA runs it, through a workspace kept for the 15 sweeps of each chain (word
    lists refreshed by the merge, not rebuilt at the start): chi-square of the final
    assignment against the enumerated posterior (false alarm 1e-4), a wrong prior
    rejected."""
    from test_gibbs import log_joint
    X = np.array([[2, 1, 0], [0, 1, 2]])
    corpus = Corpus.from_matrix(X)
    K, V, alpha, beta = 2, 3, 0.5, 0.5
    docs = np.repeat(np.arange(2), corpus.doc_lengths)
    states = list(itertools.product(range(K), repeat=corpus.n_tokens))
    index = {s: i for i, s in enumerate(states)}

    def posterior(a, b):
        logp = np.array([log_joint(np.array(s), corpus.word_ids, docs, K, V, a, b)
                         for s in states])
        p = np.exp(logp - logp.max())
        return p / p.sum()
    rng = np.random.default_rng(17)
    parts = np.array([0, 2], dtype=np.int64)
    ws = _cgs.ADLDAWorkspace(1, V, K, True)
    n_chains = 10000
    counts = np.zeros(len(states))
    for _ in range(n_chains):
        st = GibbsState(corpus, K, rng)
        for _ in range(15):
            _cgs.gibbs_sweep_sparse(corpus.doc_ptr, corpus.word_ids, st.z, st.n_wk, st.n_dk,
                                    st.n_k, alpha, beta, parts, [rng.bit_generator], 1, ws)
        counts[index[tuple(st.z)]] += 1
    assert stats.chisquare(counts, posterior(alpha, beta) * n_chains).pvalue > 1e-4
    assert stats.chisquare(counts, posterior(5.0, 0.05) * n_chains).pvalue < 1e-6


# ------------------------------------------------------------------ the estimator
@pytest.fixture(scope="module")
def corpus_x():
    X, _, _ = make_lda_corpus(60, 40, 3, doc_length=30, random_state=0)
    return X


def kernel_loop(X, K, n_jobs, sweeps, sparse, seed=0):
    """GibbsLDA.fit's sweeps written out with the kernels: one thread, no workspace when
    serial, the first sweep dense (here on a dense workspace of its own; the fit runs it
    on its sparse workspace, the same draws)."""
    corpus = Corpus.from_matrix(X)
    rng = check_random_state(seed)
    rng.integers(2**63)                                  # transform_seed_
    st = GibbsState(corpus, K, rng)
    alpha = beta = 1.0 / K
    if n_jobs > 1:
        parts = token_blocks(corpus.doc_ptr, n_parts=n_jobs)
        gens = [g.bit_generator for g in spawn_generators(rng, parts.size - 1)]
        rounds = round_blocks(corpus.doc_ptr, parts, gibbs._SYNC_ROUNDS)
        ws = _cgs.ADLDAWorkspace(parts.size - 1, corpus.n_words, K, sparse)
    else:
        parts = np.array([0, corpus.n_docs], dtype=np.int64)
        gens = [rng.bit_generator]
    for it in range(sweeps):
        first = sparse and it == 0               # the first sweep is dense
        if n_jobs > 1:                           # the rounds kernel needs a workspace
            _cgs.gibbs_sweep_rounds(
                corpus.doc_ptr, corpus.word_ids, st.z, st.n_wk, st.n_dk, st.n_k, alpha, beta,
                rounds, gens, 1, sparse and not first,
                _cgs.ADLDAWorkspace(parts.size - 1, corpus.n_words, K, False) if first else ws,
                gibbs._SYNC_LAG)
        elif sparse and not first:
            _cgs.gibbs_sweep_sparse(corpus.doc_ptr, corpus.word_ids, st.z, st.n_wk, st.n_dk,
                                    st.n_k, alpha, beta, parts, gens, 1)
        else:
            _cgs.gibbs_sweep(corpus.doc_ptr, corpus.word_ids, st.z, st.n_wk, st.n_dk,
                             st.n_k, alpha, beta, gens[0])
    return st.n_wk.T + beta


@pytest.mark.parametrize("n_jobs", [1, 2, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_fit_is_the_kernel_loop(corpus_x, monkeypatch, n_jobs, sparse):
    """GibbsLDA's fit is the kernel loop on one thread (its workspace changes no draw when
    serial; with ``n_jobs > 1``, the rounds kernel, whose result does not depend on the
    threads): the same seed and ``n_jobs`` give the same counts, and ``n_jobs=1`` is the
    serial sampler (dense below the SparseLDA threshold, SparseLDA from it; threshold
    lowered to 5 here)."""
    monkeypatch.setattr(gibbs, "_SPARSE_MIN_TOPICS", 5)
    K = 6 if sparse else 4
    m = GibbsLDA(K, max_iter=4, random_state=0, n_jobs=n_jobs).fit(corpus_x)
    np.testing.assert_array_equal(m.components_,
                                  kernel_loop(corpus_x, K, n_jobs, 4, sparse))


# ------------------------------------------------------------------ the rounds kernel
@pytest.mark.parametrize("K", [6, 40])
def test_rounds_one_exchange_is_the_merged_sweep(K):
    """Dense draws depend on the counts only: with one round per partition the rounds
    kernel is ``gibbs_sweep_parallel``, array for array, sweep after sweep (1-3 threads);
    SparseLDA's first sweep from a fresh workspace too (its lists start sorted)."""
    corpus = ragged_corpus(seed=13)
    parts = np.array([0, 3, 3, 11, 16], dtype=np.int64)
    rounds = np.stack([parts[:-1], parts[1:]], axis=1).copy()
    init = GibbsState(corpus, K, np.random.default_rng(6))
    ref = state_copy(init)
    g_ref = gens_for(parts, 2)
    refs = []
    for _ in range(4):
        _cgs.gibbs_sweep_parallel(corpus.doc_ptr, corpus.word_ids, *ref, 0.2, 0.05, parts,
                                  g_ref, 1)
        refs.append([a.copy() for a in ref])
    for n_threads in (1, 2, 3):
        s, g = state_copy(init), gens_for(parts, 2)
        ws = _cgs.ADLDAWorkspace(4, corpus.n_words, K, False)
        for sweep in range(4):
            _cgs.gibbs_sweep_rounds(corpus.doc_ptr, corpus.word_ids, *s, 0.2, 0.05, rounds, g,
                                    n_threads, False, ws)
            for x, y in zip(s, refs[sweep]):
                np.testing.assert_array_equal(x, y)
    a, b = state_copy(init), state_copy(init)
    _cgs.gibbs_sweep_sparse(corpus.doc_ptr, corpus.word_ids, *a, 0.2, 0.05, parts,
                            gens_for(parts, 4), 1)
    _cgs.gibbs_sweep_rounds(corpus.doc_ptr, corpus.word_ids, *b, 0.2, 0.05, rounds,
                            gens_for(parts, 4), 2, True,
                            _cgs.ADLDAWorkspace(4, corpus.n_words, K, True))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("sparse", [False, True])
def test_rounds_consistent_and_thread_invariant(sparse):
    """Several rounds (some empty), several sweeps: the counts stay those of ``z`` and the
    result does not depend on the threads."""
    corpus = ragged_corpus(seed=14)
    K = 7
    rounds = np.array([[0, 2, 2, 5, 7], [7, 9, 12, 12, 16]], dtype=np.int64)
    init = GibbsState(corpus, K, np.random.default_rng(8))
    out = []
    for n_threads in (1, 2, 3):
        s, g = state_copy(init), gens_for(np.arange(3), 5)
        ws = _cgs.ADLDAWorkspace(2, corpus.n_words, K, sparse)
        for _ in range(5):
            _cgs.gibbs_sweep_rounds(corpus.doc_ptr, corpus.word_ids, *s, 0.3, 0.1, rounds, g,
                                    n_threads, sparse, ws)
            assert_counts_of(corpus, *s)
        out.append(s)
    for s in out[1:]:
        for x, y in zip(s, out[0]):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_rounds_sparse_workspace_serves_dense_sweeps(n_threads):
    """GibbsLDA's first sweep is dense on its sparse workspace: the same draws as on a
    dense workspace; the sparse sweeps after it rebuild the word lists (a dense sweep
    leaves them stale), and then equal sparse sweeps that had a dense workspace for the
    dense ones; a dense workspace is refused for a sparse sweep."""
    corpus = ragged_corpus(seed=21)
    K = 9
    parts = np.array([0, 7, 16], dtype=np.int64)
    rounds = round_blocks(corpus.doc_ptr, parts, 3)
    init = GibbsState(corpus, K, np.random.default_rng(2))
    a, b = state_copy(init), state_copy(init)
    ga, gb = gens_for(parts, 3), gens_for(parts, 3)
    shared = _cgs.ADLDAWorkspace(2, corpus.n_words, K, True)
    sparse_ws = _cgs.ADLDAWorkspace(2, corpus.n_words, K, True)
    for sparse in (False, True, True, False, True):
        _cgs.gibbs_sweep_rounds(corpus.doc_ptr, corpus.word_ids, *a, 0.2, 0.05, rounds, ga,
                                n_threads, sparse, shared, 2)
        _cgs.gibbs_sweep_rounds(corpus.doc_ptr, corpus.word_ids, *b, 0.2, 0.05, rounds, gb,
                                n_threads, sparse, sparse_ws if sparse else
                                _cgs.ADLDAWorkspace(2, corpus.n_words, K, False), 2)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    with pytest.raises(ValueError, match="workspace is for"):
        _cgs.gibbs_sweep_rounds(corpus.doc_ptr, corpus.word_ids, *a, 0.2, 0.05, rounds, ga,
                                1, True, _cgs.ADLDAWorkspace(2, corpus.n_words, K, False), 2)


def test_rounds_kernel_rejects_bad_rounds():
    corpus = ragged_corpus(seed=1)
    s = state_copy(GibbsState(corpus, 5, np.random.default_rng(0)))
    ws = _cgs.ADLDAWorkspace(2, corpus.n_words, 5, False)
    g = gens_for(np.arange(3), 0)
    for bad, msg in [([[0, 8], [9, 16]], "p \\+ 1 starts"), ([[1, 8], [8, 16]], "start at 0"),
                     ([[0, 5, 4], [4, 9, 16]], "non-decreasing")]:
        with pytest.raises(ValueError, match=msg):
            _cgs.gibbs_sweep_rounds(corpus.doc_ptr, corpus.word_ids, *s, 0.1, 0.1,
                                    np.array(bad, dtype=np.int64), g, 1, False, ws)
    with pytest.raises(ValueError, match="ADLDAWorkspace"):
        _cgs.gibbs_sweep_rounds(corpus.doc_ptr, corpus.word_ids, *s, 0.1, 0.1,
                                np.array([[0, 8], [8, 16]], dtype=np.int64), g, 1, False, None)


@pytest.mark.parametrize("sparse", [False, True])
def test_rounds_see_the_other_parts_earlier_rounds(sparse):
    """Two parts, two rounds, four one-token documents of one word (part p: document 2p in
    round 0, 2p + 1 in round 1). Round 0's two draws are independent, each from the
    conditional of the starting counts; the round-1 draw of part 0 is from the conditional
    of the counts after round 0, the other part's round-0 move included, and the other
    part's round-1 document still at its old topic. 20000 sweeps; observed against the
    summed conditional probabilities (chi-square, conservative for unequal
    probabilities; false alarm 1e-6); the stale alternative (not seeing the other part's
    round-0 move) is rejected."""
    K, V, alpha, beta, R = 3, 2, 0.5, 0.1, 20000
    doc_ptr = np.arange(5, dtype=np.int64)
    words = np.ones(4, dtype=np.int32)
    z0 = np.array([0, 1, 2, 0], dtype=np.int32)
    rounds = np.array([[0, 1, 2], [2, 3, 4]], dtype=np.int64)
    gens = gens_for(np.arange(3), 11)
    ws = _cgs.ADLDAWorkspace(2, V, K, sparse)

    cond = partial(_one_word_conditional, K=K, V=V, alpha=alpha, beta=beta)
    round0 = np.zeros((K, K))
    obs, exp_true, exp_stale = np.zeros(K), np.zeros(K), np.zeros(K)
    for _ in range(R):
        z = z0.copy()
        n_wk = np.zeros((V, K), dtype=np.int32); np.add.at(n_wk, (words, z), 1)
        n_dk = np.zeros((4, K), dtype=np.int32); n_dk[np.arange(4), z] = 1
        n_k = np.bincount(z, minlength=K).astype(np.int64)
        ws.invalidate()
        _cgs.gibbs_sweep_rounds(doc_ptr, words, z, n_wk, n_dk, n_k, alpha, beta, rounds,
                                gens, 1, sparse, ws)
        round0[z[0], z[2]] += 1
        obs[z[1]] += 1
        exp_true += cond([z[0], z[2], z0[3]])
        exp_stale += cond([z[0], z0[2], z0[3]])
    expected0 = np.outer(cond([z0[1], z0[2], z0[3]]), cond([z0[0], z0[1], z0[3]])) * R
    assert pooled_pvalue(round0, expected0) > 1e-6
    assert pooled_pvalue(obs, exp_true) > 1e-6
    assert pooled_pvalue(obs, exp_stale) < 1e-6


@pytest.mark.parametrize("K", [6, 40])
def test_rounds_lag_past_the_last_round_is_the_merged_sweep(K):
    """With ``lag >= S`` no part sees another's move until the sweep ends: dense draws
    depend on the counts only, so the rounds kernel is ``gibbs_sweep_parallel``, array for
    array, sweep after sweep, on 1-3 threads (4 parts: threads take several parts)."""
    corpus = ragged_corpus(seed=13)
    parts = np.array([0, 3, 3, 11, 16], dtype=np.int64)
    rounds = round_blocks(corpus.doc_ptr, parts, 3)
    init = GibbsState(corpus, K, np.random.default_rng(6))
    ref, g_ref, refs = state_copy(init), gens_for(parts, 2), []
    for _ in range(3):
        _cgs.gibbs_sweep_parallel(corpus.doc_ptr, corpus.word_ids, *ref, 0.2, 0.05, parts,
                                  g_ref, 1)
        refs.append([a.copy() for a in ref])
    for n_threads, lag in [(1, 3), (2, 3), (3, 5), (2, 7)]:
        s, g = state_copy(init), gens_for(parts, 2)
        ws = _cgs.ADLDAWorkspace(4, corpus.n_words, K, False)
        for sweep in range(3):
            _cgs.gibbs_sweep_rounds(corpus.doc_ptr, corpus.word_ids, *s, 0.2, 0.05, rounds, g,
                                    n_threads, False, ws, lag)
            for x, y in zip(s, refs[sweep]):
                np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("lag", [2, 3])
def test_rounds_with_lag_consistent_and_thread_invariant(sparse, lag):
    """Parts lagging by ``lag`` rounds (some rounds empty), several sweeps, 2 and 4 parts
    on 1-3 threads (fewer threads than parts: a thread runs several, none deadlocks): the
    counts stay those of ``z`` and the result does not depend on the threads; it differs
    from ``lag = 1`` (the lag changes what a part sees)."""
    corpus = ragged_corpus(seed=14)
    K = 7
    init = GibbsState(corpus, K, np.random.default_rng(8))
    for parts in (np.array([0, 7, 16]), np.array([0, 3, 7, 11, 16])):
        parts = parts.astype(np.int64)
        rounds = round_blocks(corpus.doc_ptr, parts, 4)
        out = []
        for n_threads, use_lag in [(1, lag), (2, lag), (3, lag), (2, 1)]:
            s, g = state_copy(init), gens_for(parts, 5)
            ws = _cgs.ADLDAWorkspace(parts.size - 1, corpus.n_words, K, sparse)
            for _ in range(5):
                _cgs.gibbs_sweep_rounds(corpus.doc_ptr, corpus.word_ids, *s, 0.3, 0.1, rounds,
                                        g, n_threads, sparse, ws, use_lag)
                assert_counts_of(corpus, *s)
            out.append(s)
        for s in out[1:3]:
            for x, y in zip(s, out[0]):
                np.testing.assert_array_equal(x, y)
        assert not np.array_equal(out[3][0], out[0][0])


def test_rounds_kernel_rejects_lag_zero():
    corpus = ragged_corpus(seed=1)
    s = state_copy(GibbsState(corpus, 5, np.random.default_rng(0)))
    ws = _cgs.ADLDAWorkspace(2, corpus.n_words, 5, False)
    with pytest.raises(ValueError, match="lag must be >= 1"):
        _cgs.gibbs_sweep_rounds(corpus.doc_ptr, corpus.word_ids, *s, 0.1, 0.1,
                                np.array([[0, 8], [8, 16]], dtype=np.int64),
                                gens_for(np.arange(3), 0), 1, False, ws, 0)


@pytest.mark.parametrize("sparse", [False, True])
def test_rounds_lag_two_sees_the_round_before_last(sparse):
    """Two parts, three rounds, six one-token documents of one word (part p: documents
    3p, 3p + 1, 3p + 2 in rounds 0, 1, 2), lag 2 (one thread: the draws do not depend on
    the threads, see above). Part 0's round-2 draw is from
    the conditional of its own moves plus the other part's round-0 move, with the other
    part's round-1 and round-2 documents at their old topics. 20000 sweeps, chi-square
    against the summed conditional probabilities (false alarm 1e-6); the lag-1 alternative
    (also seeing the other part's round-1 move) is rejected."""
    K, V, alpha, beta, R = 3, 2, 0.5, 0.1, 20000
    doc_ptr = np.arange(7, dtype=np.int64)
    words = np.ones(6, dtype=np.int32)
    z0 = np.array([0, 1, 2, 2, 0, 1], dtype=np.int32)
    rounds = np.array([[0, 1, 2, 3], [3, 4, 5, 6]], dtype=np.int64)
    gens = gens_for(np.arange(3), 12)
    ws = _cgs.ADLDAWorkspace(2, V, K, sparse)

    cond = partial(_one_word_conditional, K=K, V=V, alpha=alpha, beta=beta)
    obs, exp_lag2, exp_lag1 = np.zeros(K), np.zeros(K), np.zeros(K)
    for _ in range(R):
        z = z0.copy()
        n_wk = np.zeros((V, K), dtype=np.int32)
        n_wk[1] = np.bincount(z, minlength=K)
        n_dk = np.zeros((6, K), dtype=np.int32)
        n_dk[np.arange(6), z] = 1
        n_k = np.bincount(z, minlength=K).astype(np.int64)
        ws.invalidate()
        _cgs.gibbs_sweep_rounds(doc_ptr, words, z, n_wk, n_dk, n_k, alpha, beta, rounds,
                                gens, 1, sparse, ws, 2)
        assert n_wk[1].tolist() == np.bincount(z, minlength=K).tolist()
        obs[z[2]] += 1
        exp_lag2 += cond([z[0], z[1], z[3], z0[4], z0[5]])
        exp_lag1 += cond([z[0], z[1], z[3], z[4], z0[5]])
    assert pooled_pvalue(obs, exp_lag2) > 1e-6
    assert pooled_pvalue(obs, exp_lag1) < 1e-6


def test_round_blocks_cut_each_part():
    doc_ptr = np.concatenate([[0], np.cumsum([5, 5, 5, 5, 1, 9, 10])]).astype(np.int64)
    parts = np.array([0, 4, 7], dtype=np.int64)
    r = round_blocks(doc_ptr, parts, 2)
    np.testing.assert_array_equal(r, [[0, 2, 4], [4, 6, 7]])
    r = round_blocks(doc_ptr, parts, 5)                 # fewer documents than rounds
    assert r.shape == (2, 6) and np.all(np.diff(r, axis=1) >= 0)
    assert r[0, 0] == 0 and r[0, -1] == 4 and r[1, 0] == 4 and r[1, -1] == 7


# ------------------------------------------- word lists edited through positions (#16)
def _random_list_moves(rng, K, n_start, n_ops):
    """A word list of ``n_start`` >= 1 distinct topics (random counts, random order) and
    ``n_ops`` random moves a -> b of its tokens (a in the list), biased towards emptying
    and refilling topics (where the pair order changes)."""
    topics = rng.permutation(K)[:n_start]
    counts = np.zeros(K, dtype=np.int64)
    counts[topics] = rng.integers(1, 4, size=n_start)
    pairs = np.column_stack([topics, counts[topics]]).astype(np.int32).ravel()
    moves = []
    for _ in range(n_ops):
        present = np.flatnonzero(counts)
        a = rng.choice(present)
        # often a topic that was emptied before (or one never seen)
        b = rng.choice([t for t in range(K) if t != a])
        counts[a] -= 1
        counts[b] += 1
        moves.append((a, b))
    return pairs, np.array(moves, dtype=np.int32).reshape(-1, 2), counts


def _reference_moves(pairs, moves):
    """The list semantics in Python: the old topic's pair loses a count and, emptied, is
    replaced by the list's last pair; the new topic's pair gains one, or is appended."""
    lst = [list(x) for x in np.asarray(pairs).reshape(-1, 2)]
    for a, b in moves:
        ja = next(i for i, x in enumerate(lst) if x[0] == a)
        lst[ja][1] -= 1
        if lst[ja][1] == 0:
            last = lst.pop()
            if ja < len(lst):
                lst[ja] = last
        jb = next((i for i, x in enumerate(lst) if x[0] == b), None)
        if jb is None:
            lst.append([b, 1])
        else:
            lst[jb][1] += 1
    return np.array(lst, dtype=np.int32).reshape(-1, 2)


@pytest.mark.parametrize("K", [2, 3, 7, 40])
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_list_edits_through_positions_are_the_searched_edits(K, mode):
    """Every edit of a SparseLDA word list is ``dptm_list_move_at``: through each topic's
    position (mode 0: the 2-part rounds' exchange of the other parts' moves; 1: the
    sampler's draw, the new topic's index known when it is in the list) or by searching
    (2: the serial sampler). The same list, pair for pair, as the searched reference (the
    sampler draws by a running sum in list order), whatever the positions of absent
    topics hold; and the positions stay those of the list."""
    rng = np.random.default_rng(K)
    for trial in range(300):
        n_start = int(rng.integers(1, K + 1))
        pairs, moves, counts = _random_list_moves(rng, K, n_start, int(rng.integers(1, 60)))
        # what memory held: garbage, often indices inside the list, or the true ones
        fill = rng.integers(-2, K + 2, size=K).astype(np.int32)
        searched = _reference_moves(pairs, moves)
        positioned, pos = _cgs._list_moves(pairs, moves, K, fill, mode)
        np.testing.assert_array_equal(positioned, searched)
        assert (positioned[:, 1] > 0).all()
        back = np.zeros(K, dtype=np.int64)
        back[positioned[:, 0]] = positioned[:, 1]
        np.testing.assert_array_equal(back, counts)
        if mode < 2:
            np.testing.assert_array_equal(pos[positioned[:, 0]], np.arange(len(positioned)))


@pytest.mark.parametrize("n_parts,lag", [(2, 1), (2, 2), (3, 1), (3, 2)])
def test_sparse_rounds_lists_are_the_counts_every_sweep(n_parts, lag):
    """Sparse rounds sweeps in step (no list rebuilt between them, the moves applied
    through positions kept from sweep to sweep): every sweep ends with the counts of
    ``z``, on 1 and 3 threads alike, dense sweeps in between included."""
    corpus = ragged_corpus(seed=21)
    K = 9
    parts = token_blocks(corpus.doc_ptr, n_parts=n_parts)
    rounds = round_blocks(corpus.doc_ptr, parts, 3)
    init = GibbsState(corpus, K, np.random.default_rng(3))
    out = []
    for n_threads in (1, 3):
        s, g = state_copy(init), gens_for(parts, 11)
        ws = _cgs.ADLDAWorkspace(parts.size - 1, corpus.n_words, K, True,
                                 np.bincount(corpus.word_ids, minlength=corpus.n_words))
        for sparse in (False, True, True, True, False, True, True):
            _cgs.gibbs_sweep_rounds(corpus.doc_ptr, corpus.word_ids, *s, 0.3, 0.1, rounds, g,
                                    n_threads, sparse, ws, lag)
            assert_counts_of(corpus, *s)
        out.append(s)
    for x, y in zip(out[1], out[0]):
        np.testing.assert_array_equal(x, y)
