"""Parallel Gibbs sweeps (#16): exactness and n_jobs invariance of the private sweeps,
the AD-LDA semantics of GibbsLDA(n_jobs > 1), the word-bucket search, parallel fold-in and
the validation of n_jobs.

The private sweep on blocks (``_cgs.noisy_gibbs_sweep_blocks``) must equal, block by
block, the token-by-token NumPy reference of ``noisy_gibbs_sweep``'s docstring
(``tests/test_private_gibbs.reference_noisy_sweep``, itself checked against the exact
conditional there) run on each block's documents with that block's generator, whatever
the number of threads.
"""
import math

import numpy as np
import pytest
from scipy import stats

from dptm import GibbsLDA, LocalDPLDA, NoisyGibbsLDA, SubsampledGibbsLDA, _cgs
from dptm.corpus import Corpus
from dptm.datasets import make_lda_corpus
from dptm.models import private_gibbs
from dptm._threads import effective_n_jobs
from dptm.models.gibbs import GibbsState, token_blocks
from dptm.noise.releases import SnapshotRelease, recording

from test_private_gibbs import reference_noisy_sweep, word_mass

NO_TABLE = np.zeros((0, 0))
pytestmark = [pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning"),
              # small test corpora: the guarantees are vacuous, not the point here
              pytest.mark.filterwarnings("ignore::dptm.exceptions.VacuousGuaranteeWarning"),
              pytest.mark.filterwarnings("ignore::dptm.exceptions.TopicCountWarning")]


def ragged_corpus(seed=0, V=23):
    """Documents of very different lengths, empty ones included."""
    lengths = np.array([7, 0, 31, 2, 0, 0, 45, 1, 12, 0, 60, 3, 9, 28, 0, 5])
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    words = np.random.default_rng(seed).integers(0, V, doc_ptr[-1]).astype(np.int32)
    return Corpus(doc_ptr, words, V)


def block_ends(F):
    """The two-level word-bucket table of ``F`` in NumPy: each row's running sums (double,
    topic order) at topics 15, 31, ... and K - 1."""
    K = F.shape[1]
    cum = np.cumsum(F.astype(np.float64), axis=1)
    return np.ascontiguousarray(cum[:, np.minimum(np.arange(15, K + 15, 16), K - 1)])


def state_copy(state):
    return [a.copy() for a in (state.z, state.n_wk, state.n_dk, state.n_k)]


def assert_counts_of(corpus, z, n_wk, n_dk, n_k):
    """The true counts are those of the topic assignments."""
    K = n_wk.shape[1]
    ref_wk = np.zeros_like(n_wk)
    np.add.at(ref_wk, (corpus.word_ids, z), 1)
    ref_dk = np.zeros_like(n_dk)
    np.add.at(ref_dk, (np.repeat(np.arange(corpus.n_docs), corpus.doc_lengths), z), 1)
    np.testing.assert_array_equal(n_wk, ref_wk)
    np.testing.assert_array_equal(n_dk, ref_dk)
    np.testing.assert_array_equal(n_k, np.bincount(z, minlength=K))


# ------------------------------------------------------------ private sweeps on blocks
@pytest.mark.parametrize("K", [4, 70, 150])
@pytest.mark.parametrize("rate,use_table", [(1.0, False), (0.4, False), (0.9, False),
                                            (1.0, True)])
def test_block_sweep_is_the_reference_per_block(K, rate, use_table):
    corpus = ragged_corpus()
    V = corpus.n_words
    F = np.random.default_rng(1).random((V, K)).astype(np.float32)
    F[np.random.default_rng(2).random((V, K)) < 0.3] = 0.0      # zero entries: ties in the sums
    mass = word_mass(F)
    table = (np.random.default_rng(3).random((V, K)) * 0.9) if use_table else NO_TABLE
    alpha = 0.8 if K > 10 else 0.3          # K = 70: the word bucket is drawn often
    block_ptr = token_blocks(corpus.doc_ptr, block_tokens=20)
    n_blocks = block_ptr.size - 1
    assert n_blocks >= 6
    init = GibbsState(corpus, K, np.random.default_rng(4))

    # reference: each block on its own documents, with its own generator
    z, n_wk, n_dk, n_k = state_copy(init)
    ref_gens = [np.random.default_rng([5, b]) for b in range(n_blocks)]
    n_ref = 0
    for b in range(n_blocks):
        lo, hi = block_ptr[b], block_ptr[b + 1]
        n_ref += reference_noisy_sweep(corpus.doc_ptr[lo:hi + 1], corpus.word_ids, z, n_wk,
                                       n_dk[lo:hi], n_k, F, alpha, rate, table, ref_gens[b])
    # the two-level table: the running sums at the end of each block of 16 topics
    blocks = block_ends(F)
    # token positions grouped by word: n_wk updated after the sweep instead of atomically
    word_tokens = np.argsort(corpus.word_ids, kind="stable").astype(np.int64)
    word_ptr = np.concatenate(([0], np.cumsum(np.bincount(corpus.word_ids, minlength=V))))
    for n_threads in (1, 2, 3):
        for blk, by_word in ((None, False), (blocks, False), (None, True), (blocks, True)):
            got = state_copy(init)
            gens = [np.random.default_rng([5, b]) for b in range(n_blocks)]
            extra = (dict(word_ptr=word_ptr.astype(np.int64), word_tokens=word_tokens)
                     if by_word else {})
            n = _cgs.noisy_gibbs_sweep_blocks(corpus.doc_ptr, corpus.word_ids, *got, F, mass,
                                              alpha, rate, table, block_ptr,
                                              [g.bit_generator for g in gens], n_threads,
                                              word_blocks=blk, **extra)
            assert n == n_ref
            for a, b in zip(got, (z, n_wk, n_dk, n_k)):
                np.testing.assert_array_equal(a, b)
            # the same draws, in number too
            assert [g.bit_generator.state for g in gens] == \
                [g.bit_generator.state for g in ref_gens]
    assert_counts_of(corpus, z, n_wk, n_dk, n_k)


@pytest.mark.parametrize("K", [4, 70])
@pytest.mark.parametrize("n_threads", [2, 3])
def test_block_sweep_with_thread_counts_is_the_serial_sweep(K, n_threads):
    """Per-thread count buffers (thread 0 in ``n_wk``, thread t > 0 in row t - 1 of
    ``thread_counts``, merged after the sweep): two consecutive sweeps give the arrays and
    draws of the one-thread sweep with per-token updates, and leave the buffers zero."""
    corpus = ragged_corpus(seed=3)
    V = corpus.n_words
    F = np.random.default_rng(1).random((V, K)).astype(np.float32)
    mass = word_mass(F)
    block_ptr = token_blocks(corpus.doc_ptr, block_tokens=15)
    n_blocks = block_ptr.size - 1
    init = GibbsState(corpus, K, np.random.default_rng(4))
    ref, got = state_copy(init), state_copy(init)
    ref_gens = [np.random.default_rng([6, b]).bit_generator for b in range(n_blocks)]
    gens = [np.random.default_rng([6, b]).bit_generator for b in range(n_blocks)]
    tc = np.zeros((n_threads - 1, V * K), dtype=np.int32)
    for _ in range(2):
        n_ref = _cgs.noisy_gibbs_sweep_blocks(corpus.doc_ptr, corpus.word_ids, *ref, F, mass,
                                              0.5, 1.0, NO_TABLE, block_ptr, ref_gens, 1)
        n = _cgs.noisy_gibbs_sweep_blocks(corpus.doc_ptr, corpus.word_ids, *got, F, mass, 0.5,
                                          1.0, NO_TABLE, block_ptr, gens, n_threads,
                                          thread_counts=tc)
        assert n == n_ref
        for a, b in zip(got, ref):
            np.testing.assert_array_equal(a, b)
        assert not tc.any()
        assert_counts_of(corpus, *got)
    assert [g.state for g in gens] == [g.state for g in ref_gens]
    with pytest.raises(ValueError, match="thread_counts must be"):
        _cgs.noisy_gibbs_sweep_blocks(corpus.doc_ptr, corpus.word_ids, *got, F, mass, 0.5,
                                      1.0, NO_TABLE, block_ptr, gens, n_threads + 1,
                                      thread_counts=tc)


@pytest.mark.parametrize("K", [4, 70])
def test_block_sweep_counts_move_after_every_block(K):
    """The count update (per-thread buffers merged, or the by-word pass) runs in the same
    parallel region as the blocks, after a barrier: on a corpus of 400 documents of
    uneven lengths (blocks of very different costs, so threads finish at different
    times), three sweeps on 2 and 3 threads give the one-thread sweep's arrays, counts
    consistent with the topics and zeroed buffers."""
    rng = np.random.default_rng(12)
    lengths = rng.choice([1, 5, 40, 300], size=400, p=[0.3, 0.4, 0.25, 0.05])
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    V = 97
    corpus = Corpus(doc_ptr, rng.integers(0, V, doc_ptr[-1]).astype(np.int32), V)
    F = rng.random((V, K)).astype(np.float32)
    mass = word_mass(F)
    block_ptr = token_blocks(corpus.doc_ptr, block_tokens=64)
    n_blocks = block_ptr.size - 1
    init = GibbsState(corpus, K, np.random.default_rng(4))
    word_tokens = np.argsort(corpus.word_ids, kind="stable").astype(np.int64)
    word_ptr = np.concatenate(([0], np.cumsum(np.bincount(corpus.word_ids, minlength=V))))

    def sweeps(n_threads, mode):
        st = state_copy(init)
        gens = [np.random.default_rng([9, b]).bit_generator for b in range(n_blocks)]
        tc = np.zeros((max(n_threads - 1, 1), V * K), dtype=np.int32)
        extra = {"plain": {},
                 "by_word": dict(word_ptr=word_ptr.astype(np.int64), word_tokens=word_tokens),
                 "buffers": dict(thread_counts=tc)}[mode]
        for _ in range(3):
            _cgs.noisy_gibbs_sweep_blocks(corpus.doc_ptr, corpus.word_ids, *st, F, mass, 0.5,
                                          1.0, NO_TABLE, block_ptr, gens, n_threads, **extra)
            assert not tc.any()
            assert_counts_of(corpus, *st)
        return st
    ref = sweeps(1, "plain")
    for n_threads in (2, 3):
        for mode in ("plain", "by_word", "buffers"):
            for a, b in zip(sweeps(n_threads, mode), ref):
                np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("K", [4, 70])
def test_fit_thread_counts_or_by_word_give_the_same_model(K, monkeypatch):
    """On several threads with short rows a fit keeps per-thread count buffers unless they
    would exceed _THREAD_COUNTS_MAX_BYTES (then the by-word update): the same model."""
    X, _, _ = make_lda_corpus(30, 25, 4, random_state=2)
    fits = []
    for cap in (1 << 28, 0):
        monkeypatch.setattr(private_gibbs, "_THREAD_COUNTS_MAX_BYTES", cap)
        m = NoisyGibbsLDA(K, epsilon_per_iter=1.0, clip=20, max_iter=3, random_state=5,
                          n_jobs=2).fit(X)
        fits.append((m.components_, m.doc_topic_))
    for a, b in zip(*fits):
        np.testing.assert_array_equal(a, b)


def test_one_block_is_the_serial_sweep():
    corpus = ragged_corpus(seed=1)
    K = 6
    F = np.random.default_rng(1).random((corpus.n_words, K)).astype(np.float32)
    init = GibbsState(corpus, K, np.random.default_rng(2))
    a, b = state_copy(init), state_copy(init)
    g1, g2 = np.random.default_rng(7), np.random.default_rng(7)
    n1 = _cgs.noisy_gibbs_sweep(corpus.doc_ptr, corpus.word_ids, *a, F, word_mass(F), 0.2,
                                0.6, NO_TABLE, g1.bit_generator)
    n2 = _cgs.noisy_gibbs_sweep_blocks(corpus.doc_ptr, corpus.word_ids, *b, F, word_mass(F),
                                       0.2, 0.6, NO_TABLE,
                                       np.array([0, corpus.n_docs], dtype=np.int64),
                                       [g2.bit_generator], 2)
    assert n1 == n2
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_word_search_draw_is_the_exact_conditional():
    """K = 80 with a large alpha (the word bucket, found by binary search in the running
    sums at the 16-topic block ends, is drawn about half the time): one token's new topic
    against
    p_t ∝ F[w, t] (n_dk^-[t] + alpha), chi-square over 40000 draws (false alarm 1e-6)."""
    K, alpha, R = 80, 2.0, 40000
    words = np.array([0, 1, 0, 2], dtype=np.int32)
    z0 = np.array([5, 5, 17, 63], dtype=np.int32)
    doc_ptr = np.array([0, 4], dtype=np.int64)
    F = np.random.default_rng(0).random((3, K)).astype(np.float32) ** 3
    blocks = block_ends(F)
    table = np.zeros((3, K))
    table[2, 63] = 1.0                      # only token 3 is resampled
    gen = np.random.default_rng(11)
    counts = np.zeros(K)
    for _ in range(R):
        z = z0.copy()
        n_wk = np.zeros((3, K), dtype=np.int32)
        np.add.at(n_wk, (words, z), 1)
        n_dk = np.bincount(z, minlength=K).astype(np.int32)[None, :].copy()
        n_k = n_wk.sum(axis=0).astype(np.int64)
        _cgs.noisy_gibbs_sweep_blocks(doc_ptr, words, z, n_wk, n_dk, n_k, F, word_mass(F),
                                      alpha, 1.0, table, np.array([0, 1], dtype=np.int64),
                                      [gen.bit_generator], 1, word_blocks=blocks)
        counts[z[3]] += 1
    p = F[2].astype(np.float64) * (np.bincount(z0[:3], minlength=K) + alpha)
    expected = p / p.sum() * R
    # pool the topics of small expectation into one cell (chi-square validity)
    small = expected < 5
    obs = np.append(counts[~small], counts[small].sum())
    exp = np.append(expected[~small], expected[small].sum())
    assert stats.chisquare(obs, exp).pvalue > 1e-6


# kind, (scale, a, b, c): none, Laplace, Gaussian, discrete Laplace (CKS20 and dyadic),
# discrete Gaussian
SNAPSHOT_KINDS = [(0, (0.0, 0, 0, 0)), (1, (2.0, 0, 0, 0)), (2, (1.5, 0, 0, 0)),
                  (3, (3.0, 3, 1, 0)), (4, (4.0, 4, 1, 3)), (5, (2.0, 1633000, 0, 0))]


@pytest.mark.parametrize("kind,params", SNAPSHOT_KINDS)
def test_snapshot_blocks(kind, params):
    """Row blocks: block j's rows hold exactly the noise the single-generator kernel draws
    for those rows from generator j; one block is the single-generator kernel bit for bit;
    the result is the same on 1, 2 or 3 threads; word factor and mass follow the
    docstring's NumPy formula from the snapshot."""
    V, K, clip, beta = 23, 7, 6.0, 0.1
    n_wk = np.random.default_rng(0).integers(0, 9, (V, K)).astype(np.int32)
    scale, a, b, c = params

    def run(gens, n_threads=1, rows=None):
        m = n_wk if rows is None else np.ascontiguousarray(n_wk[rows])
        out = (np.empty(m.shape), np.empty(m.shape, dtype=np.float32), np.empty(m.shape[0]))
        _cgs.noisy_snapshot(m, kind, scale, a, b, c, clip, beta, *out, gens, n_threads)
        return out
    single = run(np.random.default_rng(1).bit_generator)
    listed = run([np.random.default_rng(1).bit_generator], 2)
    for x, y in zip(single, listed):
        np.testing.assert_array_equal(x, y)
    B = 4                                           # blocks of 6, 6, 6, 5 rows
    outs = [run([np.random.default_rng([2, j]).bit_generator for j in range(B)], t)
            for t in (1, 2, 3)]
    for o in outs[1:]:
        for x, y in zip(o, outs[0]):
            np.testing.assert_array_equal(x, y)
    s, f, m = outs[0]
    for j in range(B):
        rows = slice(6 * j, min(V, 6 * j + 6))
        ref = run(np.random.default_rng([2, j]).bit_generator, rows=rows)
        np.testing.assert_array_equal(s[rows], ref[0])
    pos = np.maximum(s, 0)
    wf = ((np.minimum(pos, clip) + beta) / (pos.sum(axis=0) + V * beta)).astype(np.float32)
    np.testing.assert_allclose(f, wf, rtol=1e-6)
    np.testing.assert_array_equal(m, np.cumsum(f.astype(np.float64), axis=1)[:, -1])


@pytest.mark.parametrize("kind,params", SNAPSHOT_KINDS)
def test_snapshot_counts_rows_from_topics(kind, params):
    """``noisy_snapshot(topics=, word_ptr=, word_tokens=)``: each row counted from its
    word's topics as its noise is drawn, ``n_wk`` not read: the snapshot, word factor,
    masses, search table and clipped counts of the same call on the counts of those topics,
    bit for bit, on 1, 2 or 3 threads, in blocks of rows (rows of words without tokens
    included: zero counts)."""
    V, K, N, clip, beta = 23, 40, 400, 6.0, 0.1
    rng = np.random.default_rng(3)
    words = rng.integers(0, V - 3, N).astype(np.int32)        # the last 3 words: no token
    z = rng.integers(0, K, N).astype(np.int32)
    counts = np.zeros((V, K), dtype=np.int32)
    np.add.at(counts, (words, z), 1)
    word_tokens = np.argsort(words, kind="stable").astype(np.int64)
    word_ptr = np.concatenate(([0], np.cumsum(np.bincount(words, minlength=V)))).astype(np.int64)
    garbage = rng.integers(-5, 50, (V, K)).astype(np.int32)
    scale, a, b, c = params

    def run(n_wk, n_threads, clipped, **recount):
        out = (np.empty((V, K)), np.empty((V, K), dtype=np.float32), np.empty(V))
        blocks = np.empty((V, 3))
        cl = np.empty((V, K), dtype=np.int32) if clipped else None
        gens = [np.random.default_rng([4, j]).bit_generator for j in range(5)]
        _cgs.noisy_snapshot(n_wk, kind, scale, a, b, c, clip, beta, *out, gens, n_threads,
                            word_blocks=blocks, clipped=cl, **recount)
        return out[1:] + (blocks,) + ((cl,) if clipped else (out[0],))
    for clipped in ((False, True) if kind in (3, 4, 5) else (False,)):
        ref = run(counts, 1, clipped)
        for n_threads in (1, 2, 3):
            got = run(garbage, n_threads, clipped, topics=z, word_ptr=word_ptr,
                      word_tokens=word_tokens)
            for x, y in zip(got, ref):
                np.testing.assert_array_equal(x, y)
    with pytest.raises(ValueError, match="go together"):
        run(counts, 1, False, topics=z, word_ptr=word_ptr)
    with pytest.raises(ValueError, match="group the token positions"):
        run(counts, 1, False, topics=z[:-1], word_ptr=word_ptr, word_tokens=word_tokens)


@pytest.mark.parametrize("K", [4, 150])
def test_block_sweep_recount_leaves_the_counts_to_the_snapshot(K):
    """``noisy_gibbs_sweep_blocks(recount=True)``: the sweep of the by-word update (same
    topics, document counts, totals and draws) with ``n_wk`` left as it was, on 1, 2 or 3
    threads; the snapshot counting from the new topics then sees the by-word counts."""
    corpus = ragged_corpus(seed=5)
    V = corpus.n_words
    F = np.random.default_rng(1).random((V, K)).astype(np.float32)
    mass = word_mass(F)
    block_ptr = token_blocks(corpus.doc_ptr, block_tokens=20)
    init = GibbsState(corpus, K, np.random.default_rng(4))
    word_tokens = np.argsort(corpus.word_ids, kind="stable").astype(np.int64)
    word_ptr = np.concatenate(([0], np.cumsum(np.bincount(corpus.word_ids, minlength=V)))
                              ).astype(np.int64)

    def sweep(n_threads, **extra):
        st = state_copy(init)
        gens = [np.random.default_rng([7, b]).bit_generator for b in range(block_ptr.size - 1)]
        _cgs.noisy_gibbs_sweep_blocks(corpus.doc_ptr, corpus.word_ids, *st, F, mass, 0.5, 1.0,
                                      NO_TABLE, block_ptr, gens, n_threads, **extra)
        return st, [g.state for g in gens]
    (ref, ref_gens) = sweep(1, word_ptr=word_ptr, word_tokens=word_tokens)
    for n_threads in (1, 2, 3):
        got, gens = sweep(n_threads, recount=True)
        assert gens == ref_gens
        for i in (0, 2, 3):
            np.testing.assert_array_equal(got[i], ref[i])
        np.testing.assert_array_equal(got[1], init.n_wk)         # not touched
        out = (np.empty((V, K)), np.empty((V, K), dtype=np.float32), np.empty(V))
        _cgs.noisy_snapshot(got[1], 0, 0.0, 0, 0, 0, 1e9, 0.1, *out,
                            np.random.default_rng(0).bit_generator, topics=got[0],
                            word_ptr=word_ptr, word_tokens=word_tokens)
        np.testing.assert_array_equal(out[0], ref[1])
    with pytest.raises(ValueError, match="recount takes neither"):
        sweep(1, recount=True, word_ptr=word_ptr, word_tokens=word_tokens)


@pytest.mark.parametrize("B", [9, 23, 30])
def test_snapshot_many_row_blocks_any_threads(B):
    """More row blocks than threads, handed out as threads free up (B = 9: blocks of 3 rows
    and an empty last one; 23: one row each; 30: seven empty): block j's rows hold the
    noise generator j draws for them alone, and the snapshot, word factor and mass are
    the same on 1, 2 and 3 threads."""
    V, K, a = 23, 5, 1633000
    n_wk = np.random.default_rng(1).integers(0, 9, (V, K)).astype(np.int32)

    def run(n_threads, rows=None):
        m = n_wk if rows is None else np.ascontiguousarray(n_wk[rows])
        out = (np.empty(m.shape), np.empty(m.shape, np.float32), np.empty(m.shape[0]))
        gens = ([np.random.default_rng([8, j]).bit_generator for j in range(B)]
                if rows is None else np.random.default_rng([8, rows.start // rpb]).bit_generator)
        _cgs.noisy_snapshot(m, 5, 2.0, a, 0, 0, 6.0, 0.1, *out, gens, n_threads)
        return out
    rpb = -(-V // B)
    outs = [run(t) for t in (1, 2, 3)]
    for o in outs[1:]:
        for x, y in zip(o, outs[0]):
            np.testing.assert_array_equal(x, y)
    for lo in range(0, V, rpb):
        rows = slice(lo, min(V, lo + rpb))
        np.testing.assert_array_equal(outs[0][0][rows], run(1, rows)[0])


def test_dyadic_snapshot_noise_is_fill_discrete_laplace_dyadic():
    """The default noise is drawn row by row inside the snapshot kernel (no V x K buffer):
    block j's noise is, bit for bit, ``fill_discrete_laplace_dyadic`` over block j's counts
    in row order from generator j (so its distribution and ledger event are that
    sampler's), on 1 or 2 threads; rows of 3 entries make the trial stream run across rows."""
    V, K, a = 11, 3, 1633000
    n_wk = np.random.default_rng(0).integers(0, 9, (V, K)).astype(np.int32)
    for B, t in ((1, 1), (3, 1), (3, 2)):           # blocks of 4, 4, 3 rows
        s = np.empty((V, K))
        _cgs.noisy_snapshot(n_wk, 5, 2.0, a, 0, 0, 6.0, 0.1, s, np.empty((V, K), np.float32),
                            np.empty(V), [np.random.default_rng([5, j]).bit_generator
                                          for j in range(B)], t)
        rows = -(-V // B)
        for j in range(B):
            ref = np.empty(K * (min(V, rows * (j + 1)) - rows * j), dtype=np.int64)
            _cgs.fill_discrete_laplace_dyadic(ref, a, np.random.default_rng([5, j]).bit_generator)
            got = s[rows * j:rows * (j + 1)] - n_wk[rows * j:rows * (j + 1)]
            np.testing.assert_array_equal(got.ravel(), ref)


@pytest.mark.parametrize("K", [1, 15, 16, 17, 91])
def test_word_block_sums_are_cumsum_columns(K):
    """The two-level table is the rows' running sums (double, topic order) at topics 15,
    31, ... and K - 1, bit for bit, on 1 or 2 threads; a wrong shape is refused."""
    F = np.random.default_rng(K).random((37, K)).astype(np.float32)
    cols = np.minimum(np.arange(15, K + 15, 16), K - 1)
    for n in (1, 2):
        out = np.empty((37, -(-K // 16)))
        _cgs.word_block_sums(F, out, n)
        np.testing.assert_array_equal(out, np.cumsum(F.astype(np.float64), axis=1)[:, cols])
    with pytest.raises(ValueError, match="shape"):
        _cgs.word_block_sums(F, np.empty((37, -(-K // 16) + 1)))


def test_block_sweep_word_blocks_refused_with_wrong_shape():
    corpus = ragged_corpus()
    K = 40
    st = GibbsState(corpus, K, np.random.default_rng(0))
    F = np.ones((corpus.n_words, K), np.float32)
    with pytest.raises(ValueError, match="word_blocks"):
        _cgs.noisy_gibbs_sweep_blocks(corpus.doc_ptr, corpus.word_ids, st.z, st.n_wk, st.n_dk,
                                      st.n_k, F, word_mass(F), 0.5, 1.0, NO_TABLE,
                                      np.array([0, corpus.n_docs], np.int64),
                                      [np.random.default_rng(0).bit_generator], 1,
                                      word_blocks=np.empty((corpus.n_words, K)))


def test_snapshot_fills_the_search_table():
    """noisy_snapshot's optional two-level table is word_block_sums of its word factor (the
    rows' running sums at the 16-topic block ends), bit for bit, on 1 or 2 threads, and
    the snapshot, factor and masses are those drawn without it; a wrong shape is refused."""
    V, K = 29, 70
    n_wk = np.random.default_rng(0).integers(0, 9, (V, K)).astype(np.int32)
    for t in (1, 2):
        out = (np.empty((V, K)), np.empty((V, K), np.float32), np.empty(V))
        _cgs.noisy_snapshot(n_wk, 5, 2.0, 1633000, 0, 0, 6.0, 0.1, *out,
                            [np.random.default_rng([3, j]).bit_generator for j in range(3)], t)
        out2 = (np.empty((V, K)), np.empty((V, K), np.float32), np.empty(V))
        blk = np.empty((V, 5))
        _cgs.noisy_snapshot(n_wk, 5, 2.0, 1633000, 0, 0, 6.0, 0.1, *out2,
                            [np.random.default_rng([3, j]).bit_generator for j in range(3)], t,
                            word_blocks=blk)
        for a, b in zip(out2, out):
            np.testing.assert_array_equal(a, b)
        cum = np.cumsum(out[1].astype(np.float64), axis=1)
        np.testing.assert_array_equal(blk, cum[:, [15, 31, 47, 63, 69]])
        np.testing.assert_array_equal(cum[:, -1], out[2])
        ref = np.empty((V, 5))
        _cgs.word_block_sums(out[1], ref, t)
        np.testing.assert_array_equal(blk, ref)
    with pytest.raises(ValueError, match="word_blocks"):
        _cgs.noisy_snapshot(n_wk, 5, 2.0, 1633000, 0, 0, 6.0, 0.1, *out,
                            np.random.default_rng(0).bit_generator, word_blocks=np.empty((V, 4)))


@pytest.mark.parametrize("model", [
    lambda: NoisyGibbsLDA(5, epsilon_per_iter=1.0, clip=20, max_iter=4, random_state=3),
    lambda: NoisyGibbsLDA(5, epsilon_per_iter=1.0, clip=20, max_iter=4, noise_schedule="first",
                          random_state=3),
    lambda: SubsampledGibbsLDA(5, sample_rate=0.6, clip=20, max_iter=4, random_state=3)])
def test_fit_search_table_follows_every_snapshot(model, monkeypatch):
    """A fit that finds the word bucket by binary search in the table the snapshot kernel
    fills gives the same model as the linear scan (so the table is the current snapshot's
    in every iteration, never a stale one)."""
    X, _, _ = make_lda_corpus(40, 30, 5, random_state=1)
    fits = []
    for threshold in (10 ** 9, 1):
        monkeypatch.setattr(private_gibbs, "_WORD_SEARCH_MIN_TOPICS", threshold)
        m = model().fit(X)
        fits.append((m.components_, m.doc_topic_))
    for a, b in zip(*fits):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("model", [
    lambda j: NoisyGibbsLDA(5, epsilon_per_iter=1.0, clip=7.5, max_iter=4, random_state=3,
                            n_jobs=j),
    lambda j: NoisyGibbsLDA(70, noise_multiplier=2.0, clip=20, max_iter=3, random_state=4,
                            mechanism="discrete_gaussian", n_jobs=j),
    lambda j: SubsampledGibbsLDA(5, sample_rate=0.6, clip=7.5, max_iter=4, random_state=3,
                                 n_jobs=j)])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_fit_clipped_snapshots_give_the_same_model(model, n_jobs, monkeypatch):
    """The snapshots a fit does not release keep int32 clipped counts instead of the double
    snapshot: the model (released snapshot, topics, doc-topic means) is the one of a fit
    that writes every double snapshot, and the int32 path was taken."""
    X, _, _ = make_lda_corpus(40, 30, 5, random_state=1)
    with recording() as draws:         # a clipped snapshot writes no double snapshot
        ref = model(n_jobs).fit(X)
    assert [d.noisy is None for d in draws] == [True] * (ref.n_iter_ - 1) + [False]
    monkeypatch.setattr(SnapshotRelease, "clipped_buffer", lambda self, shape, clip: None)
    with recording() as draws:
        got = model(n_jobs).fit(X)
    assert len(draws) == got.n_iter_ and not any(d.noisy is None for d in draws)
    for a, b in ((got.snapshot_, ref.snapshot_), (got.components_, ref.components_),
                 (got.doc_topic_, ref.doc_topic_)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("model", ["every", "first", "last", "sub"])
def test_fit_deferred_counts_give_the_same_model(n_jobs, model, monkeypatch):
    """Above _DEFERRED_COUNTS_MIN_TOPICS a fit counts the true counts word by word, after
    each sweep or, where every sweep follows a snapshot (schedule 'every', SUB-LDA), in the
    next snapshot's pass; the model is the one of the per-token updates (same integer
    counts, so the same snapshots and draws)."""
    X, _, _ = make_lda_corpus(30, 25, 4, random_state=2)
    fits = []
    for threshold in (10 ** 9, 0):
        monkeypatch.setattr(private_gibbs, "_DEFERRED_COUNTS_MIN_TOPICS", threshold)
        if model == "sub":
            est = SubsampledGibbsLDA(6, sample_rate=0.6, clip=20, max_iter=4, random_state=5,
                                     n_jobs=n_jobs)
        else:
            est = NoisyGibbsLDA(6, epsilon_per_iter=1.0, clip=20, max_iter=4, random_state=5,
                                noise_schedule=model, n_jobs=n_jobs)
        m = est.fit(X)
        fits.append((m.components_, m.doc_topic_))
    for a, b in zip(*fits):
        np.testing.assert_array_equal(a, b)


def test_block_kernel_rejects_bad_blocks():
    corpus = ragged_corpus()
    st = GibbsState(corpus, 3, np.random.default_rng(0))
    F = np.ones((corpus.n_words, 3), dtype=np.float32)
    gens = [np.random.default_rng(0).bit_generator]
    args = (corpus.doc_ptr, corpus.word_ids, st.z, st.n_wk, st.n_dk, st.n_k, F, word_mass(F),
            0.1, 1.0, NO_TABLE)
    with pytest.raises(ValueError, match="block_ptr"):
        _cgs.noisy_gibbs_sweep_blocks(*args, np.array([0, 3], dtype=np.int64), gens, 1)
    with pytest.raises(ValueError, match="one bit generator per block"):
        _cgs.noisy_gibbs_sweep_blocks(*args, np.array([0, 3, corpus.n_docs], dtype=np.int64),
                                      gens, 1)
    with pytest.raises(ValueError, match="n_threads"):
        _cgs.noisy_gibbs_sweep_blocks(*args, np.array([0, corpus.n_docs], dtype=np.int64),
                                      gens, 0)


def test_token_blocks_depend_on_lengths_only():
    corpus = ragged_corpus()
    lengths = corpus.doc_lengths
    for B in (1, 10, 50, 10**6):
        ptr = token_blocks(corpus.doc_ptr, block_tokens=B)
        assert ptr[0] == 0 and ptr[-1] == corpus.n_docs and np.all(np.diff(ptr) > 0)
        sizes = np.add.reduceat(lengths, ptr[:-1])
        assert sizes.max() <= B + lengths.max()
    ptr = token_blocks(corpus.doc_ptr, n_parts=2)
    halves = np.add.reduceat(lengths, ptr[:-1])
    assert ptr.size == 3 and abs(halves[0] - halves[1]) <= lengths.max()


# ------------------------------------------------------------------- estimators
@pytest.fixture(scope="module")
def corpus_x():
    X, _, _ = make_lda_corpus(60, 40, 3, doc_length=30, random_state=0)
    return X


@pytest.mark.parametrize("cls,kw", [
    (NoisyGibbsLDA, dict(clip=20.0)),
    (NoisyGibbsLDA, dict(noise_schedule="first", clip=20.0)),
    (SubsampledGibbsLDA, dict(sample_rate=0.4)),
    (SubsampledGibbsLDA, dict(sample_rate=0.9, clip=10.0))])
@pytest.mark.parametrize("K", [3, 70])
def test_private_fit_is_the_same_for_any_n_jobs(corpus_x, monkeypatch, cls, kw, K):
    monkeypatch.setattr(private_gibbs, "_BLOCK_TOKENS", 100)   # ~18 blocks
    monkeypatch.setattr(private_gibbs, "_SNAPSHOT_BLOCK_ENTRIES", 7 * K)   # 6 row blocks
    fits = [cls(K, max_iter=3, random_state=9, n_jobs=j, record_trace=True,
                trace_tokens=[0, 500, 1799], **kw).fit(corpus_x) for j in (None, 2, 3, -1)]
    for m in fits[1:]:
        np.testing.assert_array_equal(m.snapshot_, fits[0].snapshot_)
        np.testing.assert_array_equal(m.doc_topic_, fits[0].doc_topic_)
        np.testing.assert_array_equal(m.trace_["topics"], fits[0].trace_["topics"])
        np.testing.assert_array_equal(m.transform(corpus_x[:5]), fits[0].transform(corpus_x[:5]))
        assert m.privacy_.epsilon() == fits[0].privacy_.epsilon()
    # a run-time option: not published
    assert "n_jobs" not in fits[1].release().hyperparameters


def test_gibbs_lda_n_jobs_reproducible_and_consistent(corpus_x):
    a = GibbsLDA(4, max_iter=5, random_state=0, n_jobs=2).fit(corpus_x)
    b = GibbsLDA(4, max_iter=5, random_state=0, n_jobs=2).fit(corpus_x)
    np.testing.assert_array_equal(a.components_, b.components_)
    # every token counted once
    assert np.isclose(a.components_.sum() - a.topic_word_prior_ * a.components_.size,
                      corpus_x.sum())
    serial = GibbsLDA(4, max_iter=5, random_state=0).fit(corpus_x)
    serial1 = GibbsLDA(4, max_iter=5, random_state=0, n_jobs=1).fit(corpus_x)
    np.testing.assert_array_equal(serial.components_, serial1.components_)
    # transform: the same for any n_jobs (per-document streams)
    a.n_jobs = 1
    t1 = a.transform(corpus_x)
    a.n_jobs = 2
    np.testing.assert_array_equal(a.transform(corpus_x), t1)


def test_ad_lda_one_partition_is_the_serial_sweep():
    corpus = ragged_corpus(seed=3)
    for K in (5, 40):                      # sequential scan and blocked search
        init = GibbsState(corpus, K, np.random.default_rng(1))
        a, b = state_copy(init), state_copy(init)
        g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
        _cgs.gibbs_sweep(corpus.doc_ptr, corpus.word_ids, *a, 0.1, 0.05, g1.bit_generator)
        _cgs.gibbs_sweep_parallel(corpus.doc_ptr, corpus.word_ids, *b, 0.1, 0.05,
                                  np.array([0, corpus.n_docs], dtype=np.int64),
                                  [g2.bit_generator], 2)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


def test_ad_lda_partitions_independent_of_threads():
    corpus = ragged_corpus(seed=4)
    K = 7
    parts = token_blocks(corpus.doc_ptr, n_parts=3)
    init = GibbsState(corpus, K, np.random.default_rng(1))
    out = []
    for n_threads in (1, 2, 3):
        s = state_copy(init)
        gens = [np.random.default_rng([8, p]).bit_generator for p in range(3)]
        for _ in range(3):
            _cgs.gibbs_sweep_parallel(corpus.doc_ptr, corpus.word_ids, *s, 0.2, 0.1, parts,
                                      gens, n_threads)
        assert_counts_of(corpus, *s)
        out.append(s)
    for s in out[1:]:
        for x, y in zip(s, out[0]):
            np.testing.assert_array_equal(x, y)


def test_ad_lda_samples_from_the_stale_counts():
    """Two one-token documents in two partitions, same word: each token is drawn from the
    collapsed conditional with the *other* token's topic of the start of the sweep (AD-LDA),
    independently. Chi-square of the joint outcome over 10000 sweeps (false alarm 1e-6; one
    thread: the result does not depend on it, see above)."""
    K, alpha, beta, V, R = 3, 0.5, 0.3, 2, 10000
    doc_ptr = np.array([0, 1, 2], dtype=np.int64)
    words = np.array([1, 1], dtype=np.int32)
    z0 = np.array([0, 2], dtype=np.int32)
    parts = np.array([0, 1, 2], dtype=np.int64)
    gens = [np.random.default_rng([3, p]).bit_generator for p in range(2)]
    counts = np.zeros((K, K))
    for _ in range(R):
        z = z0.copy()
        n_wk = np.zeros((V, K), dtype=np.int32)
        np.add.at(n_wk, (words, z), 1)
        n_dk = np.zeros((2, K), dtype=np.int32)
        n_dk[[0, 1], z] = 1
        n_k = np.bincount(z, minlength=K).astype(np.int64)
        _cgs.gibbs_sweep_parallel(doc_ptr, words, z, n_wk, n_dk, n_k, alpha, beta, parts, gens, 1)
        counts[z[0], z[1]] += 1

    def cond(other):
        nw = np.bincount([other], minlength=K)
        p = (nw + beta) * alpha / (nw + V * beta)
        return p / p.sum()
    expected = np.outer(cond(z0[1]), cond(z0[0])) * R
    assert stats.chisquare(counts.ravel(), expected.ravel()).pvalue > 1e-6


def test_fold_in_kernel_threads_invariant():
    corpus = ragged_corpus(seed=5)
    K = 6
    wf = np.random.default_rng(0).random((corpus.n_words, K))
    res = []
    for n in (1, 2, 4):
        gens = [np.random.default_rng([1, d]).bit_generator for d in range(corpus.n_docs)]
        res.append(_cgs.fold_in(corpus.doc_ptr, corpus.word_ids, wf, 0.3, 12, 6, gens, n))
    for r in res[1:]:
        np.testing.assert_array_equal(r, res[0])
    empty = corpus.doc_lengths == 0
    assert np.all(res[0][empty] == 0) and np.allclose(res[0][~empty].sum(axis=1),
                                                      corpus.doc_lengths[~empty])


# ------------------------------------------------------------------- n_jobs validation
@pytest.mark.parametrize("cls,kw", [(GibbsLDA, {}), (NoisyGibbsLDA, {"clip": 5.0}),
                                    (SubsampledGibbsLDA, {}),
                                    (LocalDPLDA, {"flip_probability": 0.1})])
@pytest.mark.parametrize("bad,exc", [(0, ValueError), (1.5, TypeError), (True, TypeError),
                                     ("2", TypeError)])
def test_bad_n_jobs_raises_naming_it(corpus_x, cls, kw, bad, exc):
    X = (corpus_x > 0).astype(np.int64) if cls is LocalDPLDA else corpus_x
    with pytest.raises(exc, match="n_jobs"):
        cls(3, max_iter=1, random_state=0, n_jobs=bad, **kw).fit(X)


def test_effective_n_jobs():
    from joblib import cpu_count
    assert effective_n_jobs(None) == 1 and effective_n_jobs(3) == 3
    assert effective_n_jobs(-1) == cpu_count()
    assert effective_n_jobs(-10**6) == 1
    assert effective_n_jobs(np.int64(2)) == 2
    assert math.isfinite(effective_n_jobs(-2))


# ------------------------------------------------------------------- SparseLDA sweeps
ONE = np.array([0, 1], dtype=np.int64)


@pytest.mark.parametrize("K,alpha,beta", [(45, 0.2, 0.1), (300, 0.05, 0.5), (7, 3.0, 0.01)])
def test_sparse_draw_follows_the_conditional(K, alpha, beta):
    """As tests/test_gibbs.py's one-token test, for ``gibbs_sweep_sparse``: the token is
    redrawn from p_t ∝ (n_wk + beta)(n_dk + alpha)/(n_k + V beta) (word, document and
    smoothing buckets all reachable; many zero counts). 40000 draws, chi-square with
    small cells pooled (false alarm 1e-6), and power: p shifted by one topic is rejected."""
    V = 4
    rng = np.random.default_rng(K)
    corpus = Corpus.from_matrix(np.array([[0, 0, 1, 0]]))
    n_wk = (rng.integers(0, 6, size=(V, K)) * (rng.random((V, K)) < 0.3)).astype(np.int32)
    n_dk = (rng.integers(0, 4, size=(1, K)) * (rng.random((1, K)) < 0.3)).astype(np.int32)
    n_wk[2, 0] += 1; n_dk[0, 0] += 1                     # the token, topic 0
    n_k = n_wk.sum(axis=0, dtype=np.int64) + rng.integers(0, 10, size=K)
    z = np.zeros(1, dtype=np.int32)
    base = [n_wk[2].copy(), n_dk[0].copy(), n_k.copy()]
    base[0][0] -= 1; base[1][0] -= 1; base[2][0] -= 1
    p = (base[0] + beta) * (base[1] + alpha) / (base[2] + V * beta)
    p /= p.sum()
    R = 40000
    counts = np.zeros(K)
    for _ in range(R):
        _cgs.gibbs_sweep_sparse(corpus.doc_ptr, corpus.word_ids, z, n_wk, n_dk, n_k, alpha,
                                beta, ONE, [rng.bit_generator], 1)
        counts[z[0]] += 1

    def pvalue(q):
        e = q * R
        small = e < 5
        if not small.any():
            return stats.chisquare(counts, e).pvalue
        return stats.chisquare(np.append(counts[~small], counts[small].sum()),
                               np.append(e[~small], e[small].sum())).pvalue
    assert pvalue(p) > 1e-6
    assert pvalue(np.roll(p, 1)) < 1e-6


def _random_list(rng, n, K, kold_count, jk):
    """n (topic, count) pairs of distinct topics < K, the old topic (pair jk's) with count
    kold_count; returns the pairs and kold."""
    topics = rng.choice(K, size=n, replace=False).astype(np.int32)
    counts = rng.integers(1, 4, size=n).astype(np.int32)
    counts[jk] = kold_count
    return np.stack([topics, counts], axis=1).ravel(), int(topics[jk])


def test_sparse_word_bucket_lanes():
    """The word bucket's 4 lanes (pair j in lane j % 4, the token's old topic weighing its
    count - 1) and its search, on lists of 1..17 pairs: the old topic's index is found; the
    midpoint of every pair's interval (the pairs in lane-major order, intervals from the
    exact weights) draws that pair; u = 0 draws the first pair of positive weight; u at
    each lane's start draws a pair of that lane; u just below each lane's end (where the
    lane's own sums can overshoot by rounding, so the search clamps to the lane's last
    pair) draws a pair of that lane with positive weight, also when the lane's last pair
    is the old topic's with count 1 (weight 0); the clamp must happen in some cases."""
    rng = np.random.default_rng(16)
    K = 40
    clamped = zero_last = 0
    for n in range(1, 18):
        for rep in range(200):
            # the old topic: count 2, count 1, count 1 as the last pair of a lane
            b = int(rng.integers(min(n, 4)))
            jk_true = b + 4 * ((n - 1 - b) // 4) if rep % 3 == 2 else int(rng.integers(n))
            pairs, kold = _random_list(rng, n, K, 2 if rep % 3 == 0 else 1, jk_true)
            c = rng.uniform(0.1, 2.0, size=K)
            t, cnt = pairs[0::2], pairs[1::2].astype(float)
            w = (cnt - (t == kold)) * c[t]
            q, cum, jk, j = _cgs._word_draw(pairs, c, kold, 0.0)
            assert jk == jk_true
            assert math.isclose(q, math.fsum(w), rel_tol=1e-13)
            assert np.all(np.diff(cum) >= 0) and cum[3] == q
            if q == 0.0:
                assert j == -1                   # only the old topic, count 1: weight 0
                continue
            order = [i for b in range(4) for i in range(b, n, 4)]
            edges = np.cumsum([0.0] + [w[i] for i in order])
            for pos, i in enumerate(order):
                if w[i] > 0:
                    u = 0.5 * (edges[pos] + edges[pos + 1]) * q / edges[-1]
                    assert _cgs._word_draw(pairs, c, kold, u)[3] == i, (n, rep, i)
            assert _cgs._word_draw(pairs, c, kold, 0.0)[3] == next(i for i in order if w[i] > 0)
            lane = [math.fsum(w[b::4]) for b in range(4)]
            for b in range(4):
                if lane[b] == 0.0:
                    continue
                lo = cum[b - 1] if b > 0 else 0.0
                for u in (lo, np.nextafter(cum[b], 0.0)):
                    j = _cgs._word_draw(pairs, c, kold, u)[3]
                    assert 0 <= j < n and j % 4 == b and w[j] > 0, (n, rep, b, u)
                # the lane's own running sum (the kernel's order) against u's offset
                acc = 0.0
                for i in range(b, n, 4):
                    acc += w[i]
                if b > 0 and np.nextafter(cum[b], 0.0) - cum[b - 1] >= acc:
                    clamped += 1
                    zero_last += w[b + 4 * ((n - 1 - b) // 4)] == 0
    assert clamped >= 50 and zero_last >= 3, (clamped, zero_last)     # 129, 8 (seed 16)


def test_sparse_draw_lists_of_every_length():
    """One token's SparseLDA draw against the exact conditional (chi-square, small cells
    pooled, false alarm 1e-6 per length) with its word's list holding 1..17 topics (every
    remainder modulo the 4 lanes), its old topic's count 1 (the list loses the pair when
    the token moves) or 2, in the word bucket mostly (small alpha and beta)."""
    K, V, alpha, beta, R = 24, 3, 0.05, 0.02, 3000
    rng = np.random.default_rng(17)
    corpus = Corpus.from_matrix(np.array([[0, 1, 0]]))
    for L in range(1, 18):
        n_wk = np.zeros((V, K), dtype=np.int32)
        topics = rng.choice(K, size=L, replace=False)
        n_wk[1, topics] = rng.integers(1, 5, size=L)
        z0 = int(topics[rng.integers(L)])
        n_wk[1, z0] = 1 if L % 2 else 2
        n_wk[0] = rng.integers(0, 3, size=K)
        n_dk = np.zeros((1, K), dtype=np.int32)
        n_dk[0, z0] = 1
        n_k = n_wk.sum(axis=0, dtype=np.int64)
        base = [n_wk[1].copy(), n_dk[0].copy(), n_k.copy()]
        base[0][z0] -= 1; base[1][z0] -= 1; base[2][z0] -= 1
        p = (base[0] + beta) * (base[1] + alpha) / (base[2] + V * beta)
        p /= p.sum()
        counts = np.zeros(K)
        z = np.zeros(1, dtype=np.int32)
        for _ in range(R):
            z[0] = z0
            a = [n_wk.copy(), n_dk.copy(), n_k.copy()]
            _cgs.gibbs_sweep_sparse(corpus.doc_ptr, corpus.word_ids, z, *a, alpha, beta, ONE,
                                    [rng.bit_generator], 1)
            counts[z[0]] += 1
            assert a[0][1, z[0]] == base[0][z[0]] + 1 and a[0][1].sum() == base[0].sum() + 1
        e = p * R
        small = e < 5
        obs, exp = counts[~small], e[~small]
        if small.any():
            obs, exp = np.append(obs, counts[small].sum()), np.append(exp, e[small].sum())
        assert stats.chisquare(obs, exp).pvalue > 1e-6, L


def test_sparse_sampler_matches_exact_posterior():
    """tests/test_gibbs.py's exact-posterior test for ``gibbs_sweep_sparse``: the final
    assignment of independent 15-sweep chains against the posterior enumerated over all
    K^N states (chi-square, false alarm 1e-4), and a wrong prior is rejected."""
    import itertools
    from test_gibbs import log_joint
    X = np.array([[2, 1, 0], [0, 1, 2]])
    corpus = Corpus.from_matrix(X)
    K, V, alpha, beta = 2, 3, 0.5, 0.5
    docs = np.repeat(np.arange(2), corpus.doc_lengths)
    states = list(itertools.product(range(K), repeat=corpus.n_tokens))
    logp = np.array([log_joint(np.array(s), corpus.word_ids, docs, K, V, alpha, beta)
                     for s in states])
    exact = np.exp(logp - logp.max()); exact /= exact.sum()
    rng = np.random.default_rng(7)
    index = {s: i for i, s in enumerate(states)}
    counts = np.zeros(len(states))
    parts = np.array([0, 2], dtype=np.int64)
    n_chains = 10000
    for _ in range(n_chains):
        st = GibbsState(corpus, K, rng)
        for _ in range(15):
            _cgs.gibbs_sweep_sparse(corpus.doc_ptr, corpus.word_ids, st.z, st.n_wk, st.n_dk,
                                    st.n_k, alpha, beta, parts, [rng.bit_generator], 1)
        counts[index[tuple(st.z)]] += 1
    assert stats.chisquare(counts, exact * n_chains).pvalue > 1e-4
    logp_wrong = np.array([log_joint(np.array(s), corpus.word_ids, docs, K, V, 5.0, 0.05)
                           for s in states])
    wrong = np.exp(logp_wrong - logp_wrong.max()); wrong /= wrong.sum()
    assert stats.chisquare(counts, wrong * n_chains).pvalue < 1e-6


def test_sparse_partitions_consistent_and_thread_invariant():
    corpus = ragged_corpus(seed=6)
    K = 9
    parts = token_blocks(corpus.doc_ptr, n_parts=3)
    init = GibbsState(corpus, K, np.random.default_rng(2))
    out = []
    for n_threads in (1, 3):
        s = state_copy(init)
        gens = [np.random.default_rng([4, p]).bit_generator for p in range(parts.size - 1)]
        for _ in range(4):
            _cgs.gibbs_sweep_sparse(corpus.doc_ptr, corpus.word_ids, *s, 0.1, 0.05, parts,
                                    gens, n_threads)
            assert_counts_of(corpus, *s)
        out.append(s)
    for x, y in zip(*out):
        np.testing.assert_array_equal(x, y)


def test_gibbs_lda_uses_sparse_sweeps_above_threshold(corpus_x, monkeypatch):
    from dptm.models import gibbs
    monkeypatch.setattr(gibbs, "_SPARSE_MIN_TOPICS", 4)
    calls = []
    real, real_rounds = _cgs.gibbs_sweep_sparse, _cgs.gibbs_sweep_rounds
    real_dense = _cgs.gibbs_sweep
    monkeypatch.setattr(gibbs._cgs, "gibbs_sweep",
                        lambda *a: calls.append(0) or real_dense(*a), raising=True)
    monkeypatch.setattr(gibbs._cgs, "gibbs_sweep_sparse",
                        lambda *a: calls.append(1) or real(*a), raising=True)
    # n_jobs > 1: the rounds kernel, its 12th argument the SparseLDA switch
    monkeypatch.setattr(gibbs._cgs, "gibbs_sweep_rounds",
                        lambda *a: calls.append(int(a[11])) or real_rounds(*a), raising=True)
    for n_jobs in (1, 2):
        m = GibbsLDA(5, max_iter=3, random_state=0, n_jobs=n_jobs).fit(corpus_x)
        m2 = GibbsLDA(5, max_iter=3, random_state=0, n_jobs=n_jobs).fit(corpus_x)
        np.testing.assert_array_equal(m.components_, m2.components_)
        assert np.isclose(m.components_.sum() - m.topic_word_prior_ * m.components_.size,
                          corpus_x.sum())
    # the first sweep of each fit is dense (from the uniform start the lists are full)
    assert calls == [0, 1, 1] * 4
