"""NoisyGibbsLDA / SubsampledGibbsLDA: kernels against NumPy references, release
semantics, accounting closed forms, an empirical privacy check of the snapshot mechanism,
and the noiseless limit against GibbsLDA."""
import json
import math
import pickle

import numpy as np
import pytest
from scipy import stats

from dptm import GibbsLDA, _cgs
from dptm.accounting import (ComposedEvent, GatedEvent, GaussianEvent, SelfComposedEvent, epsilon,
                             rdp_subsampled_gaussian, rdp_to_dp, recipes, zcdp_to_dp)
from dptm.corpus import Corpus
from dptm.datasets import make_lda_corpus
from dptm.metrics import aligned_l1
from dptm.noise.releases import recording
from dptm.models.gibbs import GibbsState
from dptm.models.private_gibbs import (NoisyGibbsLDA, SubsampledGibbsLDA, inherent_epsilon,
                                       plain_sweep_epsilon)

NO_TABLE = np.zeros((0, 0))

# These tests seed the private models (test mode) and try the floating-point samplers on
# purpose; the warnings themselves are tested in test_private_gibbs_secrets.py.
pytestmark = [pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning"),
              pytest.mark.filterwarnings("ignore::dptm.exceptions.NotHardenedWarning")]


@pytest.fixture(scope="module")
def small():
    X, topic_word, _ = make_lda_corpus(80, 30, 3, doc_length=40, doc_topic_prior=0.3,
                                       topic_word_prior=0.2, random_state=0)
    return X, topic_word


# ----------------------------------------------------------------------------- kernels
def word_mass(F):
    """Row sums of the word factor, accumulated in float64 in topic order (as the kernel)."""
    return np.cumsum(F.astype(np.float64), axis=1)[:, -1].copy()


def reference_word_factor(s, clip, beta):
    pos = np.maximum(s, 0.0)
    return ((np.minimum(pos, clip) + beta) / (pos.sum(axis=0) + s.shape[0] * beta)).astype(np.float32)


@pytest.mark.parametrize("kind,scale,abc", [(0, 0.0, (0, 0, 0)), (1, 1.5, (0, 0, 0)),
                                            (2, 2.0, (0, 0, 0)), (3, 0.0, (3, 2, 0)),
                                            (4, 0.0, (9, 4, 2))])
def test_snapshot_kernel_matches_numpy(kind, scale, abc):
    rng = np.random.default_rng(0)
    n_wk = rng.integers(0, 30, size=(40, 6)).astype(np.int32)
    s = np.empty(n_wk.shape)
    f = np.empty(n_wk.shape, dtype=np.float32)
    m = np.empty(n_wk.shape[0])
    _cgs.noisy_snapshot(n_wk, kind, scale, *abc, 12.0, 0.1, s, f, m,
                        np.random.default_rng(1).bit_generator)
    noise = s - n_wk
    if kind == 0:
        assert np.all(noise == 0)
    if kind in (3, 4):
        assert np.all(noise == np.round(noise)) and np.any(noise != 0)
    if kind in (1, 2):
        assert np.all(noise != 0)
    np.testing.assert_allclose(f, reference_word_factor(s, 12.0, 0.1), rtol=1e-6)
    np.testing.assert_array_equal(m, word_mass(f))


def test_snapshot_noise_distribution():
    # the snapshot kernel draws Laplace(scale) per entry (KS test, false alarm 1e-4)
    n_wk = np.full((300, 100), 7, dtype=np.int32)
    s = np.empty(n_wk.shape)
    f = np.empty(n_wk.shape, dtype=np.float32)
    _cgs.noisy_snapshot(n_wk, 1, 2.5, 0, 0, 0, np.inf, 0.1, s, f, np.empty(300),
                        np.random.default_rng(3).bit_generator)
    assert stats.kstest((s - 7).ravel(), stats.laplace(scale=2.5).cdf).pvalue > 1e-4


def reference_noisy_sweep(doc_ptr, words, z, n_wk, n_dk, n_k, F, alpha, rate, table, rng,
                          events=None):
    """Token by token, the kernel's docstring in NumPy/Python, drawing the same numbers from
    the same generator in the same order (Generator.random() is next_double,
    Generator.standard_exponential() the ziggurat exponential; the next selected token is
    located before the current one is sampled): document bucket over the non-zero topics
    (with K > 128, the count the previous draw added, if it came from the document bucket,
    as an entry of its own after the list), word bucket alpha F[w] searched on F[w] at
    (u - Q) / alpha.
    ``events`` (a dict): counts of the owed count's cases (cancelled, moved with the list's
    last entry, drawn, given up for the word bucket)."""
    events = {} if events is None else events

    def seen(name):
        events[name] = events.get(name, 0) + 1

    K = n_wk.shape[1]
    owe = K > 128
    mass = word_mass(F)
    use_table = table.shape[0] > 0
    if use_table or rate >= 1:
        mode = "table" if use_table else "all"
    elif not rate > 0:
        return 0
    else:
        mode = "gaps" if rate <= 0.75 else "runs"
    scale = 0.0
    if mode == "gaps":
        scale = -1.0 / math.log1p(-rate)
    elif mode == "runs":
        scale = -1.0 / math.log(rate)
    start, end = int(doc_ptr[0]), int(doc_ptr[-1])

    def geometric(cap):
        return min(math.floor(rng.standard_exponential() * scale), cap)

    sel_left = [geometric(end - start) if mode == "runs" and start < end else 0]

    def next_selected(p):
        if p >= end:
            return end
        if mode == "gaps":
            return p + geometric(end - p)
        if mode == "runs":
            while sel_left[0] == 0:
                p += 1
                if p >= end:
                    return end
                sel_left[0] = geometric(end - p)
            sel_left[0] -= 1
        return p

    doc_of = np.repeat(np.arange(len(doc_ptr) - 1), np.diff(doc_ptr))
    n, d_loaded, nz = 0, -1, None
    jp = -1                 # the list entry owed the count of the previous draw (-1: none)
    i = next_selected(start)
    while i < end:
        cur, i = i, next_selected(i + 1)
        w, k = words[cur], z[cur]
        if use_table and rng.random() >= table[w, k]:
            continue
        d = doc_of[cur - start]
        drow = n_dk[d]
        if d != d_loaded:
            nz, d_loaded, jp = [t for t in range(K) if drow[t] > 0], d, -1
        n += 1
        drow[k] -= 1
        jk = nz.index(k)
        if jk == jp:
            jp = -1                                     # the owed count cancels
            seen("cancelled")
        elif drow[k] == 0:
            last = nz.pop()
            if jk < len(nz):
                nz[jk] = last
                if jp == len(nz):
                    jp = jk
                    seen("moved")
        q, cum = 0.0, []
        for j, t in enumerate(nz):
            q += float(F[w, t]) * float(int(drow[t]) - (j == jp))
            cum.append(q)
        if jp >= 0:
            q += float(F[w, nz[jp]])
            cum.append(q)
        u = rng.random() * (q + alpha * mass[w])
        if u < q:
            j = 0
            while j < len(cum) - 1 and cum[j] <= u:
                j += 1
            if j >= len(nz):
                j = jp
                seen("drawn")
            knew, jp = nz[j], (j if owe else -1)
        else:
            if jp >= 0:
                seen("word bucket")
            jp = -1
            u = (u - q) / alpha
            acc, knew = 0.0, K - 1
            for t in range(K):
                acc += float(F[w, t])
                if acc > u:
                    knew = t
                    break
        drow[knew] += 1
        if drow[knew] == 1:
            nz.append(knew)
        if knew != k:
            z[cur] = knew
            n_wk[w, k] -= 1; n_wk[w, knew] += 1
            n_k[k] -= 1; n_k[knew] += 1
    return n


def test_noisy_sweep_conditional_distribution():
    """One selected token: the kernel's draws follow p_t ∝ F[w, t] (n_dk[d, t] + alpha)
    exactly (chi-square over 20000 independent repetitions from the same state)."""
    corpus = Corpus(np.array([0, 6]), np.array([0, 1, 1, 2, 0, 1], dtype=np.int32), 3)
    K, alpha = 4, 0.7
    z0 = np.array([0, 0, 1, 3, 3, 2], dtype=np.int32)
    F = np.array([[0.5, 0.1, 0.2, 0.9], [0.3, 0.3, 0.05, 0.2], [0.1, 0.4, 0.4, 0.1]], dtype=np.float32)
    table = np.zeros((3, K))
    table[2, 3] = 1.0        # only token 3 (word 2, topic 3) is resampled
    counts = np.zeros(K)
    gen = np.random.default_rng(12)
    for _ in range(20000):
        z = z0.copy()
        n_wk = np.zeros((3, K), dtype=np.int32); np.add.at(n_wk, (corpus.word_ids, z), 1)
        n_dk = np.bincount(z, minlength=K).astype(np.int32)[None, :].copy()
        n_k = n_wk.sum(axis=0).astype(np.int64)
        _cgs.noisy_gibbs_sweep(corpus.doc_ptr, corpus.word_ids, z, n_wk, n_dk, n_k, F,
                               word_mass(F), alpha, 1.0, table, gen.bit_generator)
        counts[z[3]] += 1
    dk = np.bincount(np.delete(z0, 3), minlength=K)
    p = F[2].astype(float) * (dk + alpha)
    p /= p.sum()
    assert stats.chisquare(counts, p * counts.sum()).pvalue > 1e-4


def test_noisy_sweep_joint_distribution_with_owed_counts():
    """A whole sweep of one 6-token document (every token resampled; K = 130, long rows,
    with F zero past topic 2, so three topics are live): the kernel's joint distribution of
    the final topics is the exact one of sequential draws from
    p_t ∝ F[w, t] (n_dk^{-i}[t] + alpha) (chi-square over the 3^6 outputs, cells of small
    expectation pooled, false alarm 1e-6). Each token's document bucket holds the count the
    previous draw added as an entry of its own after the list; the reference, which draws
    the kernel's numbers from the same generator, shows every case of that owed count
    taking place in such sweeps (cancelled by the next token leaving the topic, moved with
    the list's last entry when an emptied topic leaves the list, drawn, given up when the
    word bucket draws)."""
    from test_private_gibbs_order import sweep_distribution
    K, alpha, runs = 130, 0.15, 40000
    words = np.array([0, 1, 2, 0, 2, 1], dtype=np.int32)
    z0 = np.array([2, 0, 1, 1, 2, 0], dtype=np.int32)
    F3 = np.array([[0.9, 0.05, 0.3], [0.2, 0.6, 0.1], [0.05, 0.3, 0.8]], dtype=np.float32)
    F = np.zeros((3, K), dtype=np.float32)
    F[:, :3] = F3
    doc_ptr = np.array([0, 6], dtype=np.int64)

    def state():
        z = z0.copy()
        n_wk = np.zeros((3, K), dtype=np.int32)
        np.add.at(n_wk, (words, z), 1)
        n_dk = np.bincount(z, minlength=K).astype(np.int32)[None, :].copy()
        return z, n_wk, n_dk, n_wk.sum(axis=0).astype(np.int64)

    events = {}
    for seed in range(300):
        reference_noisy_sweep(doc_ptr, words, *state(), F, alpha, 1.0, NO_TABLE,
                              np.random.default_rng(seed), events)
    assert set(events) == {"cancelled", "moved", "drawn", "word bucket"}, events
    # topics past 2 weigh 0: the exact distribution is that of the three live topics
    exact = sweep_distribution(words.tolist(), z0.tolist(), F3, alpha)
    gen = np.random.default_rng(99)
    counts = {}
    for _ in range(runs):
        z, n_wk, n_dk, n_k = state()
        _cgs.noisy_gibbs_sweep(doc_ptr, words, z, n_wk, n_dk, n_k, F, word_mass(F), alpha, 1.0,
                               NO_TABLE, gen.bit_generator)
        counts[tuple(z)] = counts.get(tuple(z), 0) + 1
    keys = sorted(exact)
    assert set(counts) <= set(keys)
    observed = np.array([counts.get(k, 0) for k in keys], dtype=float)
    expected = np.array([exact[k] for k in keys]) * runs
    small = expected < 5
    observed = np.append(observed[~small], observed[small].sum())
    expected = np.append(expected[~small], expected[small].sum())
    assert stats.chisquare(observed, expected).pvalue > 1e-6


@pytest.mark.parametrize("K", [4, 150])
@pytest.mark.parametrize("rate,use_table", [(1.0, False), (0.4, False), (0.05, False), (1.0, True),
                                            (0.75, False), (0.8, False), (0.97, False)])
def test_noisy_sweep_matches_reference(small, rate, use_table, K):
    X, _ = small
    corpus = Corpus.from_matrix(X)
    st1 = GibbsState(corpus, K, np.random.default_rng(5))
    st2 = GibbsState(corpus, K, np.random.default_rng(5))
    F = np.random.default_rng(6).random((corpus.n_words, K)).astype(np.float32)
    table = (np.random.default_rng(7).random((corpus.n_words, K)) * 0.8) if use_table else NO_TABLE
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    n1 = _cgs.noisy_gibbs_sweep(corpus.doc_ptr, corpus.word_ids, st1.z, st1.n_wk, st1.n_dk,
                                st1.n_k, F, word_mass(F), 0.3, rate, table, g1.bit_generator)
    n2 = reference_noisy_sweep(corpus.doc_ptr, corpus.word_ids, st2.z, st2.n_wk, st2.n_dk,
                               st2.n_k, F, 0.3, rate, table, g2)
    assert n1 == n2
    assert g1.bit_generator.state == g2.bit_generator.state      # the same draws, in number too
    np.testing.assert_array_equal(st1.z, st2.z)
    # count invariants: the true counts are those of z
    n_wk = np.zeros_like(st1.n_wk)
    np.add.at(n_wk, (corpus.word_ids, st1.z), 1)
    np.testing.assert_array_equal(st1.n_wk, n_wk)
    doc = np.repeat(np.arange(corpus.n_docs), corpus.doc_lengths)
    n_dk = np.zeros_like(st1.n_dk)
    np.add.at(n_dk, (doc, st1.z), 1)
    np.testing.assert_array_equal(st1.n_dk, n_dk)
    np.testing.assert_array_equal(st1.n_k, n_wk.sum(axis=0))
    if rate < 1:
        # Poisson subsampling: the number resampled is Binomial(N, rate)
        N = corpus.n_tokens
        assert abs(n1 - rate * N) < 5 * math.sqrt(N * rate * (1 - rate))


@pytest.mark.parametrize("rate", [0.1, 0.5, 0.75, 0.8, 0.95])
def test_noisy_sweep_selection_is_independent_bernoulli(rate):
    """Poisson subsampling by geometric gaps (rate <= 0.75) or runs (rate > 0.75): made
    observable with K = 2 and F[:, 1] = 0 (a selected token always moves from topic 1 to 0),
    each token is selected with probability rate (chi-square over positions), and disjoint
    pairs of neighbouring tokens, across document boundaries and empty documents too, are
    selected together with probability rate^2 (false alarm ~1e-5 per check)."""
    lengths = np.array([5, 0, 40, 1, 0, 3, 90, 0, 2, 59])
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    N, D, V = int(doc_ptr[-1]), len(lengths), 7
    words = np.random.default_rng(0).integers(0, V, N).astype(np.int32)
    doc = np.repeat(np.arange(D), lengths)
    F = np.zeros((V, 2), dtype=np.float32)
    F[:, 0] = 1.0
    gen = np.random.default_rng(1)
    R = 400
    sel = np.zeros((R, N), dtype=bool)
    for r in range(R):
        z = np.ones(N, dtype=np.int32)
        n_wk = np.zeros((V, 2), dtype=np.int32); n_wk[:, 1] = np.bincount(words, minlength=V)
        n_dk = np.zeros((D, 2), dtype=np.int32); n_dk[:, 1] = lengths
        n_k = np.array([0, N], dtype=np.int64)
        n = _cgs.noisy_gibbs_sweep(doc_ptr, words, z, n_wk, n_dk, n_k, F, word_mass(F), 0.5, rate,
                                   NO_TABLE, gen.bit_generator)
        sel[r] = z == 0
        assert n == sel[r].sum()
        np.testing.assert_array_equal(n_dk[:, 0], np.bincount(doc, weights=sel[r], minlength=D))
    counts = sel.sum(axis=0)
    chi2 = ((counts - R * rate) ** 2 / (R * rate * (1 - rate))).sum()
    assert stats.chi2.sf(chi2, N) > 1e-5
    both = (sel[:, 0:N - 1:2] & sel[:, 1:N:2]).sum()
    m = R * (N // 2)
    assert abs(both - m * rate ** 2) < 4.4 * math.sqrt(m * rate ** 2 * (1 - rate ** 2))


def test_zero_rate_changes_nothing(small):
    X, _ = small
    corpus = Corpus.from_matrix(X)
    st = GibbsState(corpus, 3, np.random.default_rng(0))
    z0 = st.z.copy()
    F = np.ones((corpus.n_words, 3), dtype=np.float32)
    n = _cgs.noisy_gibbs_sweep(corpus.doc_ptr, corpus.word_ids, st.z, st.n_wk, st.n_dk, st.n_k,
                               F, word_mass(F), 0.1, 0.0, NO_TABLE,
                               np.random.default_rng(1).bit_generator)
    assert n == 0 and np.array_equal(st.z, z0)


# ------------------------------------------------------------------ release semantics
@pytest.mark.parametrize("cls", [NoisyGibbsLDA, SubsampledGibbsLDA])
def test_callback_sees_no_partial_release(small, cls):
    # the documented callback contract: catches a fit that sets released attributes
    # part-way, which a fit stopped by its callback would then leave behind
    seen = []

    def callback(model, it):
        seen.append([a for a in ("components_", "snapshot_", "privacy_", "transform_seed_")
                     if hasattr(model, a)])
    model = cls(3, clip=20, max_iter=3, random_state=0, callback=callback).fit(small[0])
    assert seen == [[], [], []]
    assert all(hasattr(model, a) for a in ("components_", "snapshot_", "privacy_"))


@pytest.mark.parametrize("mechanism,kw", [("laplace", {}), ("discrete_laplace", {}),
                                          ("gaussian", {"noise_multiplier": 1.5}),
                                          ("discrete_gaussian", {"noise_multiplier": 1.5})])
def test_release_is_function_of_final_snapshot(small, mechanism, kw):
    X, _ = small
    m = NoisyGibbsLDA(3, mechanism=mechanism, clip=20, max_iter=8, record_trace=True,
                      random_state=0, **kw).fit(X)
    beta = m.topic_word_prior_
    final = m.trace_["snapshots"][-1]
    np.testing.assert_array_equal(m.snapshot_, final)
    np.testing.assert_array_equal(m.components_, np.maximum(final, 0).T + beta)
    np.testing.assert_allclose(m.topic_word_, NoisyGibbsLDA.topic_word_from_snapshot(final, beta))
    np.testing.assert_allclose(m.topic_word_.sum(axis=1), 1.0)
    assert len(m.trace_["snapshots"]) == 8 and m.trace_["topics"].shape == (8, 1)
    if mechanism.startswith("discrete"):
        # integer noise on integer counts: the snapshot is integer valued
        assert np.all(final == np.round(final))
    # the released matrix is not the true counts: the noise is really there
    corpus = Corpus.from_matrix(X)
    assert not np.all(final == np.round(final)) or mechanism.startswith("discrete")
    assert m.snapshot_.shape == (corpus.n_words, 3)


def test_schedules(small):
    X, _ = small
    first = NoisyGibbsLDA(3, noise_schedule="first", clip=20, max_iter=5, record_trace=True,
                          random_state=1).fit(X)
    snaps = first.trace_["snapshots"]
    assert all(s is snaps[0] for s in snaps)            # one privatized snapshot, reused
    assert list(first.trace_["noisy"]) == [True, False, False, False, False]
    np.testing.assert_array_equal(first.snapshot_, snaps[0])
    last = NoisyGibbsLDA(3, noise_schedule="last", clip=20, max_iter=5, record_trace=True,
                         random_state=1).fit(X)
    assert last.trace_["snapshots"][:4] == [None] * 4   # plain sweeps expose no counts
    np.testing.assert_array_equal(last.snapshot_, last.trace_["snapshots"][-1])


def test_same_seed_same_model_and_pickle(small):
    X, _ = small
    a = NoisyGibbsLDA(3, clip=10, max_iter=5, random_state=3).fit(X)
    b = NoisyGibbsLDA(3, clip=10, max_iter=5, random_state=3).fit(X)
    c = NoisyGibbsLDA(3, clip=10, max_iter=5, random_state=4).fit(X)
    np.testing.assert_array_equal(a.components_, b.components_)
    assert not np.array_equal(a.components_, c.components_)
    a2 = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(a2.components_, a.components_)
    assert a2.privacy_ == a.privacy_
    assert a2.privacy_.epsilon(1e-5) == a.privacy_.epsilon(1e-5)
    np.testing.assert_allclose(a2.transform(X[:5]), a.transform(X[:5]))


# --------------------------------------------------------------------------- accounting
@pytest.mark.parametrize("schedule", ["every", "first", "last"])
def test_accounting_closed_forms(small, schedule):
    X, _ = small
    T, eps_l, C = 6, 0.7, 15.0
    m = NoisyGibbsLDA(3, epsilon_per_iter=eps_l, clip=C, noise_schedule=schedule, max_iter=T,
                      random_state=0).fit(X)
    beta = m.topic_word_prior_
    eps_i = 2 * math.log(C / beta + 1)
    assert m.epsilon_inherent_ == pytest.approx(eps_i)
    # the exact sampler rounds the scale up (by < 1e-5 relative): eps_L as drawn
    assert eps_l * (1 - 1e-5) <= m.epsilon_per_iter_ <= eps_l
    eps_l = m.epsilon_per_iter_
    N = Corpus.from_matrix(X).n_tokens
    if schedule == "every":
        pure = T * (eps_l + eps_i)
        rho = T * (eps_l ** 2 + eps_i ** 2) / 2
        assert m.privacy_.paper_epsilon() == pytest.approx(pure)
        assert m.privacy_.epsilon(1e-6, method="zcdp") == pytest.approx(zcdp_to_dp(rho, 1e-6))
    elif schedule == "first":
        pure = eps_l + T * eps_i
    else:
        eps_plain = 2 * math.log(N / beta + 1) + 2 * (N - 1) * math.log(1 + 1 / beta)
        assert plain_sweep_epsilon(N, beta) == pytest.approx(eps_plain)
        pure = (T - 1) * eps_plain + eps_l + eps_i
    assert m.privacy_.epsilon(0.0) == pytest.approx(pure)
    assert m.privacy_.epsilon(1e-5) <= pure * (1 + 1e-12)
    assert m.privacy_.adjacency == "word"
    text = str(m.privacy_)
    assert "snapshot" in text and "word" in text


def test_no_clip_means_clip_at_token_count(small):
    X, _ = small
    m = NoisyGibbsLDA(3, max_iter=2, random_state=0).fit(X)
    N = Corpus.from_matrix(X).n_tokens
    assert m.clip_ == N
    assert m.epsilon_inherent_ == pytest.approx(inherent_epsilon(N, m.topic_word_prior_))


def test_target_epsilon_calibration_never_overshoots(small):
    X, _ = small
    for mech, kw in [("laplace", {}), ("gaussian", {})]:
        m = NoisyGibbsLDA(3, mechanism=mech, clip=2.0, topic_word_prior=1.0, max_iter=10,
                          target_epsilon=60.0, target_delta=1e-6, random_state=0, **kw).fit(X)
        eps = m.privacy_.epsilon(1e-6)
        assert eps <= 60.0 and eps > 60.0 * 0.99
    with pytest.raises(ValueError, match="sampling steps alone"):
        NoisyGibbsLDA(3, clip=100.0, max_iter=10, target_epsilon=1.0).fit(X)


def test_gaussian_event_sensitivity(small):
    X, _ = small
    m = NoisyGibbsLDA(3, mechanism="gaussian", noise_multiplier=2.0, clip=5, max_iter=3,
                      random_state=0).fit(X)
    leaf = m.privacy_.events[0][0]
    assert leaf.sigma == pytest.approx(2.0 * math.sqrt(2)) and leaf.sensitivity == pytest.approx(math.sqrt(2))
    assert m.noise_scale_ == pytest.approx(2.0 * math.sqrt(2))


# ------------------------------------------------------ empirical privacy of a snapshot
def _cp(k, n, conf):
    """Two-sided Clopper-Pearson bounds of a binomial proportion at level conf."""
    a = 1 - conf
    lo = stats.beta.ppf(a / 2, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(1 - a / 2, k + 1, n - k) if k < n else 1.0
    return lo, hi


@pytest.mark.parametrize("kind", [1, 3])
def test_empirical_privacy_of_snapshot_mechanism(kind):
    """Two corpora differing in one word (t -> t'): estimate the privacy loss of the
    snapshot on the most distinguishing event and check eps_L is respected (with
    confidence 1 - 1e-6) and tight (the loss clearly exceeds 0.85 eps_L)."""
    eps_l = 1.0
    # document 0: words [0, 0, 1, 2]  vs  [0, 1, 1, 2] (the second token replaced 0 -> 1)
    X = np.array([[2, 1, 1], [1, 2, 0]])
    Xp = np.array([[1, 2, 1], [1, 2, 0]])
    c, cp = Corpus.from_matrix(X), Corpus.from_matrix(Xp)
    st = GibbsState(c, 2, np.random.default_rng(0))
    stp = GibbsState(cp, 2, np.random.default_rng(0))     # same topics for the same positions
    diff = st.n_wk - stp.n_wk
    assert np.abs(diff).sum() == 2                        # L1 sensitivity 2
    (t, k), (tp, _) = np.argwhere(diff == 1)[0], np.argwhere(diff == -1)[0]
    scale = 2.0 / eps_l
    a = b = 0
    if kind == 3:
        from dptm.mechanisms import discrete_laplace_parameters
        a, b, scale = discrete_laplace_parameters(scale)
    runs = 60000
    s = np.empty(st.n_wk.shape)
    f = np.empty(st.n_wk.shape, dtype=np.float32)
    m = np.empty(st.n_wk.shape[0])

    def event_freq(n_wk, seed):
        gen = np.random.default_rng(seed)
        hits = 0
        for _ in range(runs):
            _cgs.noisy_snapshot(n_wk, kind, scale, a, b, 0, np.inf, 0.1, s, f, m, gen.bit_generator)
            hits += (s[t, k] >= st.n_wk[t, k]) and (s[tp, k] <= st.n_wk[tp, k])
        return hits

    h, hp = event_freq(st.n_wk, 1), event_freq(stp.n_wk, 2)
    conf = 1 - 1e-6
    lo, hi = _cp(h, runs, conf)
    lop, hip = _cp(hp, runs, conf)
    eps_lower = math.log(lo / hip)       # a lower confidence bound on the privacy loss
    eps_hat = math.log(h / hp)
    assert eps_lower <= eps_l            # never exceeds the claimed eps_L
    assert eps_lower > 0.85 * eps_l      # and a smaller epsilon would be violated
    assert abs(eps_hat - eps_l) < 0.1


# ------------------------------------------------------ noiseless limit equals GibbsLDA
def test_noiseless_unclipped_limit_matches_gibbs():
    """Noise scale -> 0 and C -> infinity: the distribution of a label-invariant
    statistic of the sampler's state after burn-in (aligned L1 distance of the topics to
    the planted ones, over 30 independent chains) matches GibbsLDA's (two-sample KS test,
    false alarm 1e-3), while strong noise and clipping visibly change it."""
    X, topic_word, _ = make_lda_corpus(60, 20, 3, doc_length=30, doc_topic_prior=0.3,
                                       topic_word_prior=0.2, random_state=3)
    kw = dict(doc_topic_prior=0.3, topic_word_prior=0.2, max_iter=60)
    R = 30
    gibbs = [aligned_l1(GibbsLDA(3, random_state=s, **kw).fit(X).topic_word_, topic_word)
             for s in range(R)]
    noiseless = [aligned_l1(NoisyGibbsLDA(3, epsilon_per_iter=1e7, random_state=100 + s, **kw)
                            .fit(X).topic_word_, topic_word) for s in range(R)]
    noisy = [aligned_l1(NoisyGibbsLDA(3, epsilon_per_iter=0.5, clip=3, random_state=200 + s, **kw)
                        .fit(X).topic_word_, topic_word) for s in range(R)]
    assert stats.ks_2samp(gibbs, noiseless).pvalue > 1e-3
    assert stats.ks_2samp(gibbs, noisy).pvalue < 1e-6


# ------------------------------------------------------------------------------ SUB-LDA
def test_sublda_subsampling_and_release(small):
    X, _ = small
    N = Corpus.from_matrix(X).n_tokens
    m = SubsampledGibbsLDA(3, sample_rate=0.3, noise_multiplier=1.0, clip=20, max_iter=6,
                           record_trace=True, random_state=0).fit(X)
    # the number of resampled tokens depends on the secret selection: not exposed
    assert not hasattr(m, "n_resampled_")
    assert N > 0
    np.testing.assert_array_equal(m.components_, np.maximum(m.trace_["snapshots"][-1], 0).T
                                  + m.topic_word_prior_)
    # sound accounting: T x (Gaussian sigma, sensitivity sqrt 2, not amplified
    #                       + eps_I run with probability gamma)
    events = m.privacy_.events
    assert len(events) == 2 and all(c == 6 and q == 1.0 for _, c, q, _ in events)
    gauss = [e for e, _, _, _ in events if isinstance(e, GaussianEvent)][0]
    assert gauss.sensitivity == pytest.approx(math.sqrt(2)) and gauss.sigma == m.noise_scale_
    gated = [e for e, _, _, _ in events if isinstance(e, GatedEvent)][0]
    assert gated.probability == 0.3 and gated.event.epsilon == pytest.approx(m.epsilon_inherent_)
    ungated = SelfComposedEvent(ComposedEvent((gauss, gated.event)), 6)
    assert m.privacy_.epsilon(1e-5) < epsilon(ungated, 1e-5)
    assert "run with probability 0.3, else an output equal on neighbours" in str(m.privacy_)
    mech = json.loads(json.dumps(m.privacy_.to_dict()))["mechanisms"]
    assert mech[1]["mechanism"] == "GatedEvent" and mech[1]["probability"] == 0.3
    assert mech[1]["event"] == {"mechanism": "PureDPEvent", "epsilon": m.epsilon_inherent_}
    assert m.eps_subsample_ == pytest.approx(recipes.huang2022_eps_subsample(14, 0.3, m.noise_scale_))
    assert m.efficiency_privacy_ == pytest.approx(
        0.3 * math.exp(13 * recipes.huang2022_eps_subsample(14, 0.3, m.noise_scale_)))
    # the paper's RDP total at order 14, converted at the report's delta (Mironov 2017)
    assert m.privacy_.paper_epsilon(1e-5) == pytest.approx(6 * m.eps_subsample_
                                                           + math.log(1e5) / 13)


def test_sublda_paper_accounting_prints_the_sound_guarantee(small):
    """accounting='paper': same algorithm, same sound epsilon and printed guarantee; the
    paper's (smaller, unsound) figure only via paper_epsilon(), labelled."""
    X, _ = small
    sound = SubsampledGibbsLDA(3, sample_rate=0.2, noise_multiplier=2.0, clip=20, max_iter=5,
                               random_state=0).fit(X)
    paper = SubsampledGibbsLDA(3, sample_rate=0.2, noise_multiplier=2.0, clip=20, max_iter=5,
                               accounting="paper", random_state=0).fit(X)
    np.testing.assert_array_equal(sound.components_, paper.components_)   # same algorithm
    assert paper.privacy_.epsilon() == sound.privacy_.epsilon()
    assert paper.privacy_.event == sound.privacy_.event
    sigma = paper.noise_scale_
    claimed = paper.privacy_.paper_epsilon(1e-5)
    assert claimed == pytest.approx(5 * recipes.huang2022_eps_subsample(14, 0.2, sigma)
                                    + math.log(1e5) / 13)
    assert claimed < paper.privacy_.epsilon()            # the paper's figure is smaller ...
    text = str(paper.privacy_)
    guarantee = [ln for ln in text.splitlines() if ln.lstrip().startswith("guarantee")]
    assert guarantee and all(f"{claimed:.6g}" not in ln for ln in guarantee)   # ... never printed as it
    assert f"epsilon = {paper.privacy_.epsilon():.6g} at delta" in text
    assert "NOT sound" in text and "as claimed by Huang et al. 2022" in text
    # the unit-sensitivity subsampled Gaussian that the paper amplifies is below the sound value
    orders = np.arange(2, 64, dtype=float)
    rdp = 5 * rdp_subsampled_gaussian(0.2, sigma, orders)
    assert rdp_to_dp(rdp, orders, 1e-5)[0] < paper.privacy_.epsilon()


def test_sublda_target_is_never_exceeded_in_paper_mode(small):
    X, _ = small
    m = SubsampledGibbsLDA(3, sample_rate=0.5, clip=1.0, topic_word_prior=1.0, max_iter=5,
                           accounting="paper", target_epsilon=20.0, random_state=0).fit(X)
    assert 19.8 < m.privacy_.epsilon(1e-5) <= 20.0
    with pytest.raises(ValueError, match="smallest reachable total is inf"):
        SubsampledGibbsLDA(3, sample_rate=0.3, adaptive=True, adaptive_v=2.0, adaptive_q=0.5,
                           accounting="paper", target_epsilon=1e3, clip=20, max_iter=4,
                           random_state=0).fit(X)
    with pytest.raises(ValueError, match="smallest reachable total is [0-9.]+ "):
        SubsampledGibbsLDA(3, clip=100.0, max_iter=10, target_epsilon=1.0).fit(X)


def test_sublda_adaptive_table_from_noisy_snapshot():
    s = np.array([[10., 0.], [5., 3.], [-2., 3.], [1., 4.]])
    m = SubsampledGibbsLDA(2)
    table = m._adaptive_table(s, 0.2, 2.0, 0.6)
    # topic 0: mass 16 (clamped), top words 0 (10) reach 0.6*16 = 9.6 -> {0}
    # topic 1: mass 10, top words 3 (4), 1/2 (3) -> need 6 -> {3, 1}
    expected = np.array([[0.4, 0.0], [0.0, 0.4], [0.0, 0.0], [0.0, 0.4]])
    np.testing.assert_allclose(table, expected)


def test_sublda_adaptive_table_is_computed_from_each_released_snapshot(small):
    # the frequent-word sets of adaptive subsampling come from the noisy snapshot the
    # sweep reads (post-processing), never from the true counts: every table's input is
    # the snapshot its release object wrote
    X, _ = small
    seen = []

    class Spy(SubsampledGibbsLDA):
        def _adaptive_table(self, s, *args):
            seen.append(np.array(s))
            return super()._adaptive_table(s, *args)
    with recording() as draws:
        Spy(3, sample_rate=0.3, adaptive=True, adaptive_v=2.0, adaptive_q=0.5,
            accounting="paper", clip=20, max_iter=4, random_state=0).fit(X)
    assert len(seen) == len(draws) == 4
    for s, d in zip(seen, draws):
        np.testing.assert_array_equal(s, d.noisy)


def test_sublda_adaptive_and_convergence(small):
    X, _ = small
    m = SubsampledGibbsLDA(3, sample_rate=0.3, adaptive=True, adaptive_v=2.0, adaptive_q=0.5,
                           accounting="paper", clip=20, max_iter=4, random_state=0).fit(X)
    assert not hasattr(m, "n_resampled_")             # data-dependent: not exposed
    with pytest.raises(ValueError, match="no accountant"):
        m.privacy_.epsilon()                          # no finite sound guarantee ...
    assert m.privacy_.paper_epsilon() < math.inf      # ... only the paper's labelled figure
    assert "guarantee  : epsilon = inf" in str(m.privacy_)
    assert m.privacy_.to_dict()["epsilon"] == math.inf
    c = SubsampledGibbsLDA(3, sample_rate=0.5, noise_multiplier=0.5, convergence_tol=1e9,
                           convergence_window=2, max_iter=50, transform_max_iter=4,
                           random_state=0).fit(X[:60], eval_X=X[60:])
    assert c.n_iter_ == 3 and len(c.perplexity_history_) == 3        # stops by eq. (9)
    assert c.privacy_.events[0][1] == 50                              # accounted at max_iter
    full = SubsampledGibbsLDA(3, sample_rate=0.5, noise_multiplier=0.5, max_iter=50,
                              random_state=0).fit(X[:60])
    assert c.privacy_.epsilon() == full.privacy_.epsilon()
    assert c.privacy_.paper_epsilon() == full.privacy_.paper_epsilon()


def test_sublda_target_epsilon(small):
    X, _ = small
    m = SubsampledGibbsLDA(3, sample_rate=0.5, clip=1.0, topic_word_prior=1.0, max_iter=5,
                           target_epsilon=20.0, target_delta=1e-5, random_state=0).fit(X)
    assert 19.8 < m.privacy_.epsilon(1e-5) <= 20.0


# ---------------------------------------------------------------------------- errors
@pytest.mark.parametrize("kw,match", [
    ({"mechanism": "cauchy"}, "mechanism"),
    ({"noise_schedule": "sometimes"}, "noise_schedule"),
    ({"clip": 0}, "clip"),
    ({"clip": -1.0}, "clip"),
    ({"epsilon_per_iter": 0.0}, "epsilon_per_iter"),
    ({"target_epsilon": -1.0}, "target_epsilon"),
    ({"target_delta": 1.0}, "target_delta"),
    ({"mechanism": "gaussian"}, "noise_multiplier"),
    ({"n_components": 0}, "n_components"),
    ({"max_iter": 0}, "max_iter"),
    ({"record_trace": True, "trace_tokens": [10 ** 9]}, "trace_tokens"),
])
def test_noisy_bad_params(small, kw, match):
    X, _ = small
    with pytest.raises((ValueError, TypeError), match=match):
        NoisyGibbsLDA(**{"n_components": 2, "max_iter": 2, **kw}).fit(X)


def test_trace_tokens_end_one_before_the_token_count(small):
    # index N (one past the last token) is refused naming the range, N - 1 is traced
    # (catches the bound off by one, fresh round 6, M26: an IndexError from the trace)
    X, _ = small
    N = int(X.sum())
    with pytest.raises(ValueError, match=rf"trace_tokens must lie in \[0, n_tokens={N}\)"):
        NoisyGibbsLDA(2, max_iter=1, record_trace=True, trace_tokens=[N]).fit(X)
    m = NoisyGibbsLDA(2, max_iter=1, record_trace=True, trace_tokens=[N - 1]).fit(X)
    assert m.trace_ is not None


@pytest.mark.parametrize("kw,match", [
    ({"sample_rate": 0.0}, "sample_rate"),
    ({"sample_rate": 1.5}, "sample_rate"),
    ({"mechanism": "laplace"}, "mechanism"),
    ({"accounting": "optimistic"}, "accounting"),
    ({"adaptive": True, "adaptive_v": 2, "adaptive_q": 0.5}, "no finite word-level guarantee"),
    ({"adaptive": True, "accounting": "paper", "adaptive_v": 5, "adaptive_q": 0.5}, "adaptive_v"),
    ({"adaptive": True, "accounting": "paper"}, "adaptive_v and adaptive_q"),
    ({"convergence_tol": 1.0}, "eval_X"),
    ({"noise_multiplier": 0.0}, "noise_multiplier"),
])
def test_sublda_bad_params(small, kw, match):
    X, _ = small
    with pytest.raises((ValueError, TypeError), match=match):
        SubsampledGibbsLDA(**{"n_components": 2, "max_iter": 2, **kw}).fit(X)


def test_bad_corpus():
    with pytest.raises(ValueError, match="negative"):
        NoisyGibbsLDA(2, max_iter=1).fit(np.array([[1, -1]]))
    with pytest.raises(ValueError, match="no tokens"):
        SubsampledGibbsLDA(2, max_iter=1).fit(np.zeros((2, 3)))
