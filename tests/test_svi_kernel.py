"""The SVI E-step kernels of dptm._svi against NumPy/SciPy references and scikit-learn,
and the sensitivity bound behind PrivateOnlineLDA's noise (hypothesis)."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.special import psi

from dptm import _svi


def _csr(X):
    X = sp.csr_matrix(X)
    return X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data.astype(np.float64)


def reference_e_step(X, B, gamma0, alpha, tol, max_iter):
    """NumPy transcription of online LDA's E-step (scikit-learn's _update_doc_distribution
    with the exact digamma). B is exp(E[log beta]) as K x V."""
    X = sp.csr_matrix(X)
    eps = np.finfo(np.float64).eps
    gammas, sstats, bounds, iters = [], np.zeros_like(B), [], []
    for d in range(X.shape[0]):
        ids = X.indices[X.indptr[d]:X.indptr[d + 1]]
        c = X.data[X.indptr[d]:X.indptr[d + 1]].astype(float)
        g = gamma0[d].copy()
        et = np.exp(psi(g) - psi(g.sum()))
        Bd = B[:, ids]
        n = 0
        for _ in range(max_iter):
            last = g
            norm_phi = et @ Bd + eps
            g = et * ((c / norm_phi) @ Bd.T) + alpha
            et = np.exp(psi(g) - psi(g.sum()))
            n += 1
            if np.mean(np.abs(last - g)) < tol:
                break
        gammas.append(g)
        iters.append(n)
        p = et @ Bd
        sstats[:, ids] += np.outer(et, c / (p + eps)) * Bd
        bounds.append(c @ np.log(p))
    return np.array(gammas), sstats, np.array(bounds), np.array(iters)


def _problem(seed, D=25, V=40, K=6, density=0.3, max_count=6):
    rng = np.random.default_rng(seed)
    X = sp.random(D, V, density=density, random_state=seed, format="csr",
                  data_rvs=lambda n: rng.integers(1, max_count, n)).astype(np.float64)
    lam = rng.gamma(2.0, 1.0, (K, V)) + 0.05
    B = np.exp(psi(lam) - psi(lam.sum(axis=1, keepdims=True)))
    gamma0 = rng.gamma(100.0, 0.01, (D, K))
    return X, lam, B, gamma0


# ------------------------------------------------------------------ digamma
def test_digamma_matches_scipy():
    rng = np.random.default_rng(0)
    x = np.concatenate([np.logspace(-10, -3, 200), rng.uniform(1e-3, 30, 3000),
                        np.logspace(1.5, 12, 200), [1.4616321449683622, 1.0, 0.5, 6.0, 5.999999]])
    got = _svi.digamma_array(x)
    want = psi(x)
    # relative to max(1, |psi|): absolute near the root x0 = 1.4616..., relative elsewhere
    err = np.abs(got - want) / np.maximum(1.0, np.abs(want))
    assert err.max() < 1e-12


def test_digamma_nonpositive_is_nan():
    got = _svi.digamma_array(np.array([0.0, -1.0, -0.5, np.nan]))
    assert np.all(np.isnan(got))


def _ulps(got, want):
    """|got - want| in units of the last place of ``want`` (0 where both are equal)."""
    return np.where(got == want, 0.0, np.abs(got - want) / np.spacing(np.abs(want)))


def test_the_e_steps_exp_is_within_two_ulp_of_libm():
    # svi_elementary.h's exp (no libm, so that it vectorises): a wrong Taylor coefficient,
    # a lost ln 2 low part or a bad 2^n split (subnormal results) shows here
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-745, 709, 200_000), rng.uniform(-1, 1, 100_000),
                        rng.uniform(-745.1, -708, 20_000), [0.0, -0.0, 1e-300, -1e-300,
                                                            709.78, -745.13]])
    got = _svi.elementary_array(x, "exp")
    want = np.array([math.exp(v) for v in x.tolist()])
    normal = want >= np.finfo(float).tiny
    assert _ulps(got[normal], want[normal]).max() <= 2
    # subnormal results: rounded twice (2^n split in two factors), off by at most one step
    assert np.abs(got[~normal] - want[~normal]).max() <= 2 * 5e-324
    special = np.array([np.nan, -np.inf, np.inf, -800.0, 800.0, -746.5])
    got = _svi.elementary_array(special, "exp")
    assert np.isnan(got[0])
    np.testing.assert_array_equal(got[1:], [0.0, np.inf, 0.0, np.inf, 0.0])


def test_the_e_steps_log_is_within_two_ulp_of_libm():
    # its argument is digamma's after the recurrence (>= 6); the whole range x >= 1, the
    # mantissa fold at sqrt(2) and the exponent's double conversion are checked
    rng = np.random.default_rng(6)
    x = np.concatenate([10.0 ** rng.uniform(0, 308, 200_000), rng.uniform(1, 64, 100_000),
                        [1.0, 1.4142135623730951, 1.4142135623730954, 2.0, 6.0,
                         np.finfo(float).max]])
    got = _svi.elementary_array(x, "log")
    want = np.log(x)
    assert _ulps(got, want).max() <= 2
    assert _svi.elementary_array(np.array([np.inf]), "log")[0] == np.inf
    with pytest.raises(ValueError, match="which must be"):
        _svi.elementary_array(x[:3], "sqrt")


def test_the_e_steps_vectorised_exp_digamma_matches_the_scalar_digamma():
    # The E-step's exp(psi(gamma) - psi(total)): digamma's recurrence as six masked steps
    # summed as one fraction, its series, and svi_elementary.h's log and exp, against the
    # kernels' scalar digamma (scipy's to 1e-12: test_digamma_matches_scipy) and libm's
    # exp. They share the series, so they agree to a few ulp of the argument; a missed
    # step (x in (0, 1) needs six: 3e-12 off), a wrong series term or a bad select shows.
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.gamma(0.3, 3.0, 1001), 10.0 ** rng.uniform(-300, 300, 300),
                        rng.uniform(0, 12, 301), [5.999999999999999, 6.0, 1.0, 0.5, 1e-10]])
    for total in (0.0, 3.7, -2.5):
        arg = _svi.digamma_array(x) - total
        want = np.array([math.exp(v) for v in arg.tolist()])
        got = _svi.exp_digamma_array(x, total)
        # exp turns the argument's absolute error into a relative one
        ok = want > 1e-300
        rel = np.abs(got[ok] - want[ok]) / want[ok]
        assert np.all(rel <= 1e-14 * np.maximum(1.0, np.abs(arg[ok])))
        assert np.all(got[~ok] <= 1e-290)
        special = _svi.exp_digamma_array(np.array([0.0, -1.0, np.nan, np.inf, 1e-320]),
                                          total)
        assert np.all(np.isnan(special[:3]))
        np.testing.assert_array_equal(special[3:], [np.inf, 0.0])
        for n in (1, 3, 7, 9):                  # the tails of the vector loops
            np.testing.assert_array_equal(_svi.exp_digamma_array(x[:n], total), got[:n])


def test_exp_dirichlet_expectation_t_reference():
    _, lam, B, _ = _problem(1)
    lam_t = np.ascontiguousarray(lam.T)
    out = np.empty_like(lam_t)
    got = _svi.exp_dirichlet_expectation_t(lam_t, out)
    assert got.base is out or got is out or np.shares_memory(got, out)
    np.testing.assert_allclose(out, B.T, rtol=1e-12)
    with pytest.raises(ValueError, match="out must have the shape"):
        _svi.exp_dirichlet_expectation_t(lam_t, np.empty((3, 3)))


# ------------------------------------------------------------------ E-step
@pytest.mark.parametrize("seed,alpha,tol,max_iter", [(0, 0.1, 1e-3, 100), (1, 0.5, 1e-6, 7),
                                                    (2, 0.02, 0.0, 30)])
def test_e_step_matches_numpy_reference(seed, alpha, tol, max_iter):
    X, _, B, gamma0 = _problem(seed)
    g_ref, s_ref, b_ref, it_ref = reference_e_step(X, B, gamma0, alpha, tol, max_iter)
    indptr, indices, counts = _csr(X)
    gamma = gamma0.copy()
    sstats = np.zeros((X.shape[1], B.shape[0]))
    bound = np.zeros(X.shape[0])
    n_iter = _svi.lda_e_step(indptr, indices, counts, np.arange(X.shape[0], dtype=np.int64),
                             np.ascontiguousarray(B.T), gamma, alpha, tol, max_iter, sstats, bound)
    np.testing.assert_array_equal(n_iter, it_ref)
    # digamma differs from scipy's by ~1e-13; the fixed point amplifies it a little
    np.testing.assert_allclose(gamma, g_ref, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(sstats, s_ref.T, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(bound, b_ref, rtol=1e-8)
    # each document's expected counts sum to (almost exactly) its length
    np.testing.assert_allclose(sstats.sum(), X.sum(), rtol=1e-12)


def test_e_step_matches_scikit_learn():
    """Same initial gamma injected into scikit-learn's own E-step. scikit-learn's digamma
    is accurate to ~1e-9 only, so agreement is to ~1e-6, not machine precision."""
    from sklearn.decomposition._lda import _update_doc_distribution
    X, _, B, gamma0 = _problem(3, D=40, V=60, K=8)

    class Replay:  # stands in for scikit-learn's RandomState
        def gamma(self, shape, scale, size):
            assert (shape, scale, size) == (100.0, 0.01, gamma0.shape)
            return gamma0.copy()

    g_sk, s_sk = _update_doc_distribution(X, B, 0.1, 100, 1e-3, True, Replay())
    s_sk = s_sk * B
    gamma = gamma0.copy()
    sstats = np.zeros((X.shape[1], B.shape[0]))
    indptr, indices, counts = _csr(X)
    _svi.lda_e_step(indptr, indices, counts, np.arange(X.shape[0], dtype=np.int64),
                    np.ascontiguousarray(B.T), gamma, 0.1, 1e-3, 100, sstats, None)
    np.testing.assert_allclose(gamma, g_sk, rtol=1e-5)
    np.testing.assert_allclose(sstats, s_sk.T, rtol=1e-5, atol=1e-9)


def test_e_step_rows_subset_and_accumulation():
    X, _, B, gamma0 = _problem(4)
    rows = np.array([7, 2, 7], dtype=np.int64)     # a document may appear twice
    g_ref, s_ref, _, _ = reference_e_step(X[rows], B, gamma0[:3], 0.1, 1e-3, 100)
    indptr, indices, counts = _csr(X)
    gamma = gamma0[:3].copy()
    sstats = np.full((X.shape[1], B.shape[0]), 0.5)  # accumulates into existing values
    _svi.lda_e_step(indptr, indices, counts, rows, np.ascontiguousarray(B.T), gamma, 0.1,
                    1e-3, 100, sstats, None)
    np.testing.assert_allclose(gamma, g_ref, rtol=1e-8)
    np.testing.assert_allclose(sstats - 0.5, s_ref.T, rtol=1e-8, atol=1e-12)


def test_e_step_empty_document_gets_prior():
    X = sp.csr_matrix(np.array([[0, 0, 0], [1, 2, 0]], dtype=float))
    B = np.full((2, 3), 1 / 3)
    gamma = np.ones((2, 2))
    sstats = np.zeros((3, 2))
    indptr, indices, counts = _csr(X)
    _svi.lda_e_step(indptr, indices, counts, np.arange(2, dtype=np.int64), np.ascontiguousarray(B.T),
                    gamma, 0.3, 1e-3, 100, sstats, None)
    np.testing.assert_allclose(gamma[0], [0.3, 0.3])
    # symmetric topics: each of the 3 tokens is split evenly
    np.testing.assert_allclose(gamma[1], [0.3 + 1.5, 0.3 + 1.5])
    np.testing.assert_allclose(sstats, [[0.5, 0.5], [1.0, 1.0], [0.0, 0.0]])


def test_e_step_bad_input():
    X, _, B, gamma0 = _problem(5)
    indptr, indices, counts = _csr(X)
    Bt = np.ascontiguousarray(B.T)
    rows = np.arange(X.shape[0], dtype=np.int64)
    with pytest.raises(ValueError, match="gamma must have shape"):
        _svi.lda_e_step(indptr, indices, counts, rows, Bt, gamma0[:3].copy(), 0.1)
    with pytest.raises(ValueError, match="sstats must have shape"):
        _svi.lda_e_step(indptr, indices, counts, rows, Bt, gamma0.copy(), 0.1, 1e-3, 10,
                        np.zeros((3, 3)))
    with pytest.raises(ValueError, match="rows must lie"):
        _svi.lda_e_step(indptr, indices, counts, np.array([0, X.shape[0]], dtype=np.int64), Bt,
                        gamma0[:2].copy(), 0.1)
    with pytest.raises(ValueError, match="indices must lie"):
        _svi.lda_e_step(indptr, indices, counts, rows, Bt[:5].copy(), gamma0.copy(), 0.1)


# ------------------------------------------------------------------ sensitivity (hypothesis)
N_CAP = 12


@st.composite
def adversarial_case(draw):
    """A minibatch, an adversarial extra document of at most N_CAP tokens and an
    adversarial topic-word state (including near-degenerate topics)."""
    K = draw(st.integers(1, 5))
    V = draw(st.integers(1, 8))
    n_other = draw(st.integers(0, 4))
    others = [draw(st.lists(st.integers(0, 4), min_size=V, max_size=V)) for _ in range(n_other)]
    length = draw(st.integers(0, 3 * N_CAP))    # truncated to N_CAP below
    words = draw(st.lists(st.integers(0, V - 1), min_size=length, max_size=length))
    doc = np.bincount(np.array(words, dtype=int), minlength=V) if words else np.zeros(V, int)
    log_lam = draw(st.lists(st.floats(-8, 8), min_size=K * V, max_size=K * V))
    lam = np.exp(np.array(log_lam)).reshape(K, V)
    alpha = draw(st.floats(1e-3, 5.0))
    seed = draw(st.integers(0, 2**32 - 1))
    return np.array(others, dtype=float).reshape(n_other, V), doc.astype(float), lam, alpha, seed


def _batch_stat(X, B, gamma0, alpha):
    indptr, indices, counts = _csr(X)
    sstats = np.zeros((X.shape[1], B.shape[0]))
    _svi.lda_e_step(indptr, indices, counts, np.arange(X.shape[0], dtype=np.int64),
                    np.ascontiguousarray(B.T), gamma0.copy(), alpha, 1e-3, 100, sstats, None)
    return sstats


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(adversarial_case())
def test_add_remove_one_document_changes_statistic_by_at_most_N(case):
    """The L2 change of the minibatch sum when one document (of any length, truncated to
    N tokens as PrivateOnlineLDA does) is added or removed never exceeds N, whatever the
    other documents and the current topics."""
    from dptm.models.svi import truncate_documents
    others, doc, lam, alpha, seed = case
    K, V = lam.shape
    doc = truncate_documents(sp.csr_matrix(doc[None].astype(np.int64)), N_CAP,
                             np.random.default_rng(seed)).toarray()[0].astype(float)
    assert doc.sum() <= N_CAP
    B = np.exp(psi(lam) - psi(lam.sum(axis=1, keepdims=True)))
    rng = np.random.default_rng(seed)
    gamma_others = rng.gamma(100.0, 0.01, (others.shape[0], K))
    gamma_doc = rng.gamma(100.0, 0.01, (1, K))
    without = _batch_stat(sp.csr_matrix(others.reshape(-1, V)), B, gamma_others, alpha) \
        if others.shape[0] else np.zeros((V, K))
    with_doc = _batch_stat(sp.csr_matrix(np.vstack([others, doc[None]])), B,
                           np.vstack([gamma_others, gamma_doc]), alpha)
    change = with_doc - without
    assert np.all(change >= -1e-9)
    assert np.linalg.norm(change) <= N_CAP * (1 + 1e-12)
    assert np.linalg.norm(change) <= doc.sum() * (1 + 1e-12) + 1e-12


def test_e_step_refuses_malformed_csr_arrays():
    # catches: the kernel trusting indptr / counts (a read or write past the buffers)
    X, _, B, gamma0 = _problem(0)
    indptr, indices, counts = _csr(X)
    rows = np.arange(X.shape[0], dtype=np.int64)
    args = (np.ascontiguousarray(B.T), gamma0.copy(), 0.1)
    with pytest.raises(ValueError, match="counts must have one entry"):
        _svi.lda_e_step(indptr, indices, counts[:-1], rows, *args)
    bad = indptr.copy()
    bad[-1] = indices.shape[0] + 5
    with pytest.raises(ValueError, match="indptr must be non-decreasing"):
        _svi.lda_e_step(bad, indices, counts, rows, *args)
    bad = indptr.copy()
    bad[1], bad[2] = bad[2], bad[1] - 1
    with pytest.raises(ValueError, match="indptr must be non-decreasing"):
        _svi.lda_e_step(bad, indices, counts, rows, *args)


def test_canonical_csr_refuses_a_malformed_matrix():
    # scipy builds such a matrix without complaint; its sum_duplicates would then corrupt memory
    from dptm._utils import canonical_csr
    X = sp.csr_matrix((np.ones(3), np.array([0, 1, 2], dtype=np.int32),
                       np.array([0, 2, 1, 3], dtype=np.int32)), shape=(3, 4))
    with pytest.raises(ValueError, match="X is not a valid CSR matrix"):
        canonical_csr(X)
