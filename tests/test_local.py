"""Client-side randomized response (dptm.local) and the server's count estimators
(papers/zhao2021 eqs. 8, 9, 19, Theorems 4-7).

Statistical checks use fixed seeds (deterministic) and thresholds whose false-alarm rate
under a correct implementation is below about 1e-5 per assertion (5-sigma z tests,
chi-square at p = 1e-6).
"""
import itertools
import math
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dptm.accounting import epsilon_from_flip
from dptm.local import (epsilon_from_f, f_from_epsilon, presence_bits, randomize,
                        randomize_matrix)
from dptm.models.local import (bayes_estimate, bayes_weight, check_noisy_bits, moment_estimate,
                               moment_variance, reconstruct)

Z = 5.0           # two-sided 5-sigma: false alarm 5.7e-7 per test
P_CHI2 = 1e-6


# ------------------------------------------------------------------ epsilon <-> f
pytestmark = pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning")


@pytest.mark.parametrize("f", [1e-6, 0.01, 0.2, 0.5, 0.9, 1.0])
def test_epsilon_from_f_closed_form(f):
    eps = math.log((1 - f / 2) / (f / 2))
    assert epsilon_from_f(f) == pytest.approx(eps, abs=1e-12)
    assert epsilon_from_f(f) == pytest.approx(epsilon_from_flip(f), abs=0)
    assert epsilon_from_f(f, n_bits=2) == pytest.approx(2 * eps, abs=1e-12)
    assert epsilon_from_f(f, n_bits=1000) == pytest.approx(1000 * eps, abs=1e-9)


@pytest.mark.parametrize("eps", [0.01, 0.5, 1.0, 3.0, 10.0])
@pytest.mark.parametrize("n_bits", [1, 2, 500])
def test_f_from_epsilon_inverts(eps, n_bits):
    f = f_from_epsilon(eps, n_bits)
    assert 0 < f < 1
    assert epsilon_from_f(f, n_bits) == pytest.approx(eps, rel=1e-10)
    assert f == pytest.approx(2 / (1 + math.exp(eps / n_bits)), rel=1e-12)


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, float("nan")])
def test_epsilon_from_f_rejects_bad_f(bad):
    with pytest.raises(ValueError, match="f"):
        epsilon_from_f(bad)


def test_conversion_errors():
    with pytest.raises(ValueError, match="n_bits"):
        epsilon_from_f(0.5, n_bits=0)
    with pytest.raises(TypeError, match="n_bits"):
        epsilon_from_f(0.5, n_bits=1.5)
    with pytest.raises(ValueError, match="epsilon"):
        f_from_epsilon(0.0)
    with pytest.raises(ValueError, match="epsilon"):
        f_from_epsilon(float("inf"))


# ------------------------------------------------------------------ randomize: inputs
def test_presence_bits_accepts_every_input_form():
    vocab = ["a", "b", "c", "d", "e"]
    expected = np.array([1, 3])
    forms = [
        (["b", "d", "b", "zzz"], vocab),                            # tokens, OOV dropped, repeats
        (["d", "b"], {w: i for i, w in enumerate(vocab)}),           # dict vocabulary
        ([3, 1, 1], 5),                                             # word ids with repeats
        (np.array([False, True, False, True, False]), 5),           # bits
        (sp.csr_matrix(np.array([[0, 2, 0, 1, 0]])), 5),            # sparse count row
    ]
    for doc, vocabulary in forms:
        ids, V = presence_bits(doc, vocabulary)
        assert V == 5
        np.testing.assert_array_equal(ids, expected)
    # the same document in every form gives the same noisy vector with the same seed
    outs = [randomize(doc, vocabulary, 0.3, rng=7).toarray() for doc, vocabulary in forms]
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])
    assert presence_bits([], 5)[0].size == 0


def test_randomize_output_type():
    out = randomize([0, 2], 10, 0.2, rng=1)
    assert sp.issparse(out) and out.shape == (1, 10) and out.dtype == np.int8
    assert set(np.unique(out.data)) <= {1}
    np.testing.assert_array_equal(out.toarray(), randomize([0, 2], 10, 0.2, rng=1).toarray())


@pytest.mark.parametrize("doc, vocabulary, exc, match", [
    ("a b c", ["a", "b"], TypeError, "token list"),
    ([0, 5], 5, ValueError, r"\[0, 5\)"),
    ([-1], 5, ValueError, "word ids"),
    (np.zeros(4, dtype=bool), 5, ValueError, "presence bits"),
    (["a"], 5, TypeError, "vocabulary"),
    ([0.5], 5, TypeError, "dtype"),
    ([[0, 1]], 5, ValueError, "1-D"),
    ([0], 0, ValueError, "vocabulary size"),
    ([0], ["a", "a"], ValueError, "duplicate"),
    ([0], [], ValueError, "empty"),
    ([0], {"a": 3}, ValueError, "ids 0..V-1"),
    (["a"], {"a": 0, "b": 2}, ValueError, "ids 0..V-1"),    # a gap: id V (fresh round 6, M18)
    (["a"], {"a": 0, "b": 0}, ValueError, "ids 0..V-1"),    # two words, one id
])
def test_randomize_input_errors(doc, vocabulary, exc, match):
    with pytest.raises(exc, match=match):
        randomize(doc, vocabulary, 0.5, rng=0)


@pytest.mark.parametrize("bad", [0.0, 1.01, -0.5])
def test_randomize_rejects_bad_f(bad):
    with pytest.raises(ValueError, match="f must be in"):
        randomize([0], 3, bad, rng=0)
    with pytest.raises(ValueError, match="f must be in"):
        randomize_matrix(np.eye(3), bad, random_state=0)


# ------------------------------------------------------------------ randomize: distribution
@pytest.mark.parametrize("f", [0.05, 0.3, 0.8])
def test_randomize_keep_and_flip_frequencies(f):
    """P(noisy=1 | true=1) = 1 - f/2 and P(noisy=1 | true=0) = f/2 (papers/zhao2021 V-A)."""
    V = 60_000
    rng = np.random.default_rng(11)
    truth = rng.random(V) < 0.4
    noisy = randomize(truth, V, f, rng=12).toarray().ravel().astype(bool)
    for cond, p in ((truth, 1 - f / 2), (~truth, f / 2)):
        n = cond.sum()
        hat = noisy[cond].mean()
        assert abs(hat - p) < Z * math.sqrt(p * (1 - p) / n)
    # the simulator draws the same distribution
    X = sp.csr_matrix(np.tile(truth[:2000], (30, 1)))
    noisy_m = randomize_matrix(X, f, random_state=13).toarray().astype(bool)
    cond_m = np.tile(truth[:2000], (30, 1))
    for cond, p in ((cond_m, 1 - f / 2), (~cond_m, f / 2)):
        n = cond.sum()
        assert abs(noisy_m[cond].mean() - p) < Z * math.sqrt(p * (1 - p) / n)


def _exact_output_probabilities(x, f):
    """P(y | x) for every y in {0,1}^len(x), closed form: each bit flips w.p. f/2."""
    probs = {}
    for y in itertools.product([0, 1], repeat=len(x)):
        h = sum(a != b for a, b in zip(x, y))
        probs[y] = (f / 2) ** h * (1 - f / 2) ** (len(x) - h)
    return probs


def _chi2_pvalue(observed_rows, x, f):
    exact = _exact_output_probabilities(x, f)
    keys = list(exact)
    codes = observed_rows @ (1 << np.arange(len(x))[::-1])
    counts = np.bincount(codes, minlength=len(keys))
    expected = np.array([exact[k] for k in keys]) * observed_rows.shape[0]
    return stats.chisquare(counts, expected).pvalue


def test_randomize_exact_distribution_tiny_vocabulary():
    """All 2^3 outputs of one document drawn with the product law (chi-square)."""
    x, f, n = (1, 0, 1), 0.5, 20_000
    rng = np.random.default_rng(3)
    rows = np.vstack([randomize(np.array(x, dtype=bool), 3, f, rng=rng).toarray()
                      for _ in range(n)])
    assert _chi2_pvalue(rows, x, f) > P_CHI2
    X = sp.csr_matrix(np.tile(np.array(x), (n, 1)))
    rows_m = randomize_matrix(X, f, random_state=4).toarray()
    assert _chi2_pvalue(rows_m, x, f) > P_CHI2


def test_randomize_likelihood_ratio_bounded_per_word_and_tight_per_document():
    """Empirical P(y|x) / P(y|x') <= e^eps_w for inputs differing in one bit (per word,
    Theorem 4), attained; and e^(V eps_w) is attained for inputs differing in all V bits."""
    f, V, n = 0.6, 3, 200_000
    eps_w = epsilon_from_f(f)
    inputs = list(itertools.product([0, 1], repeat=V))
    X = sp.csr_matrix(np.repeat(np.array(inputs), n, axis=0))
    Y = randomize_matrix(X, f, random_state=21).toarray()
    codes = (Y @ (1 << np.arange(V)[::-1])).reshape(len(inputs), n)
    counts = np.array([np.bincount(c, minlength=2 ** V) for c in codes])   # input x output
    max_lr, max_lr_full = -np.inf, -np.inf
    for i, j in itertools.permutations(range(len(inputs)), 2):
        h = sum(a != b for a, b in zip(inputs[i], inputs[j]))
        log_ratio = np.log(counts[i]) - np.log(counts[j])
        se = np.sqrt(1.0 / counts[i] + 1.0 / counts[j])
        assert np.all(log_ratio <= h * eps_w + Z * se)      # never exceeds e^(h eps_w)
        if h == 1:
            max_lr = max(max_lr, np.max(log_ratio + Z * se))
        if h == V:
            max_lr_full = max(max_lr_full, np.max(log_ratio + Z * se))
    assert max_lr >= eps_w                     # the per-word bound is attained
    assert max_lr_full >= V * eps_w            # and the document bound V * eps_w too


def test_randomize_matrix_flips_every_position_including_the_last():
    # Catches the geometric-gap sampler dropping the last position of the flattened bit
    # matrix (fresh round 4, H18): that bit of the last row would be sent unflipped. The
    # aggregate tests above cannot see one cell; here every cell of a 1 x 3 matrix is
    # checked on its own, over 2000 calls (flip rate 1/2: 5 sigma = 112).
    rng = np.random.default_rng(8)
    X = sp.csr_matrix((1, 3), dtype=np.int64)
    flips = sum(randomize_matrix(X, 1.0, random_state=rng).toarray()[0].astype(np.int64)
                for _ in range(2000))
    assert np.all(np.abs(flips - 1000) < Z * math.sqrt(2000 * 0.25)), flips


def test_randomize_matrix_uses_presence_only_and_is_reproducible():
    rng = np.random.default_rng(0)
    counts = sp.random(50, 80, density=0.1, format="csr", random_state=1,
                       data_rvs=lambda k: rng.integers(1, 5, size=k))
    bits = counts.copy()
    bits.data[:] = 1
    a = randomize_matrix(counts, 0.2, random_state=5)
    b = randomize_matrix(bits, 0.2, random_state=5)
    assert a.dtype == np.int8 and a.shape == (50, 80)
    assert (a != b).nnz == 0
    assert (a != randomize_matrix(counts, 0.2, random_state=6)).nnz > 0
    with pytest.raises(ValueError, match="non-negative"):
        randomize_matrix(-counts, 0.2, random_state=0)
    # explicitly stored zeros are absent words: the same bits as without them (catches the
    # sparse structure, not the counts, deciding a word's presence: fresh round 5, J28)
    stored = counts.copy()
    stored.data[::3] = 0
    clean = stored.copy()
    clean.eliminate_zeros()
    assert stored.nnz > clean.nnz
    assert (randomize_matrix(stored, 0.2, random_state=5)
            != randomize_matrix(clean, 0.2, random_state=5)).nnz == 0


# ------------------------------------------------------------------ estimators
def _stacked_trials(bits, f, T, seed):
    """Noisy column sums of T independent randomizations of the M x V bit matrix."""
    M, V = bits.shape
    noisy = randomize_matrix(sp.csr_matrix(np.tile(bits, (T, 1))), f, random_state=seed)
    return noisy.toarray().reshape(T, M, V).sum(axis=1)


@pytest.fixture(scope="module")
def fixed_bits():
    rng = np.random.default_rng(2021)
    M, V = 100, 30
    p = np.linspace(0.02, 0.9, V)
    return (rng.random((M, V)) < p).astype(np.int8)


def test_moment_estimator_unbiased_and_conditional_variance(fixed_bits):
    """Given the clients' bits, N_hat (eq. 8) is unbiased and its variance is the first
    term of eq. (9), f (2 - f) M / (4 (1 - f)^2), for every word."""
    f, T = 0.4, 3000
    M, V = fixed_bits.shape
    N = fixed_bits.sum(axis=0)
    n = _stacked_trials(fixed_bits, f, T, seed=8)
    n_hat = moment_estimate(n, M, f)
    var_c = moment_variance(N, M, f, conditional=True)
    np.testing.assert_allclose(var_c, (2 - f) * f * M / (4 * (1 - f) ** 2))
    assert np.all(np.abs(n_hat.mean(axis=0) - N) < Z * np.sqrt(var_c / T))
    emp = n_hat.var(axis=0, ddof=1)
    pooled = emp.sum() / var_c.sum()
    assert abs(pooled - 1) < Z * math.sqrt(2 / (T * V))
    # eq. (9)'s second term is not part of the variance when the bits are fixed
    full = moment_variance(N, M, f)
    middle = (N > 0.3 * M) & (N < 0.7 * M)
    assert emp[middle].sum() / full[middle].sum() < 0.8


def test_moment_estimator_matches_eq9_when_documents_are_iid():
    """Eq. (9) exactly: documents drawn i.i.d. with presence probability p_t = N_t / M, then
    randomized; Var(N_hat) = f(2-f)M / (4(1-f)^2) + (M - N_t) N_t / M with N_t = M p_t."""
    f, T, M, V = 0.3, 4000, 100, 20
    rng = np.random.default_rng(99)
    p = np.linspace(0.05, 0.95, V)
    truth = (rng.random((T * M, V)) < p).astype(np.int8)
    noisy = randomize_matrix(sp.csr_matrix(truth), f, random_state=100)
    n = noisy.toarray().reshape(T, M, V).sum(axis=1)
    n_hat = moment_estimate(n, M, f)
    theory = moment_variance(M * p, M, f)
    assert np.all(np.abs(n_hat.mean(axis=0) - M * p) < Z * np.sqrt(theory / T))
    emp = n_hat.var(axis=0, ddof=1)
    # per word: the sample variance of T normal draws has relative s.e. sqrt(2/T)
    assert np.all(np.abs(emp / theory - 1) < Z * math.sqrt(2 / T))
    assert abs(emp.sum() / theory.sum() - 1) < Z * math.sqrt(2 / (T * V))


def test_bayes_estimator_variance_is_one_minus_omega_squared(fixed_bits):
    """Theorem 7: Var(B) = (1 - omega)^2 Var(N_hat); B is biased towards the prior mean."""
    f, T = 0.4, 3000
    M, V = fixed_bits.shape
    N = fixed_bits.sum(axis=0)
    mu = N + 7.0                                   # a prior mean off by 7
    omega = bayes_weight(M, f, prior_variance=25.0)
    assert omega == pytest.approx(M * f * (2 - f) / (M * f * (2 - f) + 4 * 25.0 * (1 - f) ** 2))
    n = _stacked_trials(fixed_bits, f, T, seed=9)
    b = bayes_estimate(n, M, f, mu, omega)
    n_hat = moment_estimate(n, M, f)
    np.testing.assert_allclose(b.var(axis=0), (1 - omega) ** 2 * n_hat.var(axis=0), rtol=1e-9)
    var_b = (1 - omega) ** 2 * moment_variance(N, M, f, conditional=True)
    assert abs(b.var(axis=0, ddof=1).sum() / var_b.sum() - 1) < Z * math.sqrt(2 / (T * V))
    assert np.all(np.abs(b.mean(axis=0) - (omega * mu + (1 - omega) * N)) < Z * np.sqrt(var_b / T))
    assert bayes_estimate(n, M, f, mu, 0.0) == pytest.approx(n_hat)


def test_bayes_estimate_is_the_gaussian_posterior_mean():
    """Eq. (19) equals the posterior mean of N under the prior N(mu, s2) and the Gaussian
    likelihood n ~ N(M f / 2 + N (1 - f), M (f/2)(1 - f/2)), computed on a grid."""
    M, f, mu, s2 = 500, 0.3, 120.0, 400.0
    grid = np.linspace(-400, 700, 200_001)
    for n_obs in (100.0, 160.0, 240.0):
        var_l = M * (f / 2) * (1 - f / 2)
        log_post = (-(grid - mu) ** 2 / (2 * s2)
                    - (n_obs - M * f / 2 - grid * (1 - f)) ** 2 / (2 * var_l))
        w = np.exp(log_post - log_post.max())
        post_mean = (grid * w).sum() / w.sum()
        est = bayes_estimate(n_obs, M, f, mu, bayes_weight(M, f, s2))
        assert est == pytest.approx(post_mean, abs=1e-6)


def test_estimator_argument_errors():
    with pytest.raises(ValueError, match="f must be in"):
        moment_estimate([1, 2], 10, 1.0)
    with pytest.raises(ValueError, match="n_docs"):
        moment_estimate([1, 2], 0, 0.5)
    with pytest.raises(ValueError, match="prior_variance"):
        bayes_weight(10, 0.5, 0.0)
    with pytest.raises(ValueError, match="omega"):
        bayes_estimate([1], 10, 0.5, [1], 1.5)


# ------------------------------------------------------------------ reconstruction
def test_reconstruct_hits_targets_and_moves_bits_in_the_right_direction():
    rng = np.random.default_rng(4)
    X = sp.csr_matrix((rng.random((200, 40)) < 0.3).astype(np.int8))
    n = np.asarray(X.sum(axis=0)).ravel()
    target = n + rng.integers(-20, 21, size=40)
    target[:3] = [-5, 250, n[2]]                     # clipped to [0, M]; unchanged
    R = reconstruct(X, target.astype(float), random_state=1)
    sums = np.asarray(R.sum(axis=0)).ravel()
    np.testing.assert_array_equal(sums, np.clip(target, 0, 200))
    assert R.dtype == np.int64 and R.max() == 1
    D = R.toarray().astype(int) - X.toarray().astype(int)
    grow = target > n
    assert np.all(D[:, grow] >= 0) and np.all(D[:, ~grow] <= 0)   # only 0->1 or only 1->0


def test_reconstruct_chooses_uniformly_and_rounds_unbiasedly():
    """Removed / added bits are uniform over the eligible vectors; fractional targets are
    rounded stochastically with the right mean."""
    col_remove = np.array([1, 1, 1, 1, 1, 1, 0, 0, 0, 0])   # 6 ones, keep 3
    col_add = np.array([1, 1, 0, 0, 0, 0, 0, 0, 0, 0])      # 2 ones, grow to 5
    col_frac = np.zeros(10, dtype=int)                     # target 2.25
    X = sp.csr_matrix(np.column_stack([col_remove, col_add, col_frac]))
    T = 2000
    rng = np.random.default_rng(5)
    kept = np.zeros(10)
    added = np.zeros(10)
    frac = []
    for _ in range(T):
        R = reconstruct(X, np.array([3.0, 5.0, 2.25]), random_state=rng).toarray()
        kept += R[:, 0]
        added += R[:, 1] * (1 - col_add)
        frac.append(R[:, 2].sum())
        assert np.all(R[:, 1] >= col_add)
    assert stats.chisquare(kept[:6], np.full(6, T * 3 / 6)).pvalue > P_CHI2
    assert kept[6:].sum() == 0
    assert stats.chisquare(added[2:], np.full(8, T * 3 / 8)).pvalue > P_CHI2
    frac = np.array(frac)
    assert set(frac) <= {2, 3}
    assert abs(frac.mean() - 2.25) < Z * math.sqrt(0.25 * 0.75 / T)


def test_check_noisy_bits():
    assert check_noisy_bits(np.zeros((2, 3))).nnz == 0          # all-zero is allowed
    with pytest.raises(ValueError, match="0 or 1"):
        check_noisy_bits(np.array([[0, 2, 1]]))
    with pytest.raises(ValueError, match="2-D"):
        check_noisy_bits(np.array([0, 1]))
    with pytest.raises(ValueError, match="no rows"):
        check_noisy_bits(np.zeros((0, 3)))
    with pytest.raises(TypeError, match="object"):
        check_noisy_bits(np.array([[None]]))


def test_noisy_vectors_pickle():
    out = randomize_matrix(np.eye(4), 0.3, random_state=0)
    assert (pickle.loads(pickle.dumps(out)) != out).nnz == 0
