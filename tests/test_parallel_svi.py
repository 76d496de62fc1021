"""n_jobs of the variational kernels: lda_e_step and zeta_batch over OpenMP threads,
PrivateOnlineLDA / zeta wrappers. Every output is promised bit-identical for every thread
count (documents are solved alone; the minibatch statistic is summed cell by cell in row
order), so the tests compare with ``np.array_equal``, not a tolerance."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dptm import PrivateOnlineLDA, _svi
from dptm._threads import _cpu_count, effective_n_jobs
from dptm.attacks import zeta
from dptm.datasets import make_lda_corpus

from test_svi_kernel import reference_e_step

THREADS = (1, 2, 3, 5)


def _corpus(D=60, V=40, seed=1):
    rs = np.random.RandomState(seed)
    X = sp.random(D, V, density=0.2, random_state=rs, format="csr")
    X.data = np.ceil(X.data * 5)
    X = X.tolil()
    X[min(7, D - 1), :] = 0           # an empty document
    X = sp.csr_matrix(X)
    X.sort_indices()
    return X


def _csr(X):
    return X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data.astype(np.float64)


def _golden_input():
    """The fixed input of the golden values below (recorded with the serial kernels of
    main at b923e2b, before the parallel rewrite)."""
    rng = np.random.default_rng(12345)
    D, V, K = 40, 30, 6
    X = sp.random(D, V, density=0.2, random_state=np.random.RandomState(1), format="csr")
    X.data = np.ceil(X.data * 5)
    X.sort_indices()
    phi = rng.dirichlet(np.full(V, 0.3), size=K)
    Bt = np.ascontiguousarray(rng.gamma(1.0, 1.0, (V, K)))
    gamma = np.ascontiguousarray(rng.gamma(100, 0.01, (D, K)))
    return X, phi, Bt, gamma


def _e_step(X, Bt, gamma0, rows, n_threads, sstats0=None):
    gamma = np.ascontiguousarray(gamma0[:rows.size]).copy()
    ss = np.zeros_like(Bt) if sstats0 is None else sstats0.copy()
    wb = np.zeros(rows.size)
    n = _svi.lda_e_step(*_csr(X), rows, Bt, gamma, 0.1, 1e-3, 100, ss, wb,
                        n_threads=n_threads)
    return gamma, ss, wb, n


# ------------------------------------------------------------------ kernels
def test_lda_e_step_golden_serial_values():
    X, _, Bt, gamma0 = _golden_input()
    gamma, ss, _, _ = _e_step(X, Bt, gamma0, np.arange(X.shape[0], dtype=np.int64), 2)
    assert ss.sum() == pytest.approx(730.9999999999998, rel=1e-13)
    np.testing.assert_allclose(gamma[0], [8.639835943432606, 0.10003751315081406,
                                          0.10002818552291716, 0.10003437513076742,
                                          0.10001773996322616, 14.560046242799661], rtol=1e-12)


def test_lda_e_step_bit_identical_over_threads():
    X = _corpus()
    rng = np.random.default_rng(3)
    V, K = X.shape[1], 7
    Bt = np.ascontiguousarray(rng.gamma(1.0, 1.0, (V, K)))
    # a permuted minibatch with a repeated document, accumulated on a non-zero sstats
    rows = np.concatenate([rng.permutation(X.shape[0]), [4, 4, 7]]).astype(np.int64)
    gamma0 = np.ascontiguousarray(rng.gamma(100, 0.01, (rows.size, K)))
    sstats0 = rng.random((V, K))
    ref = _e_step(X, Bt, gamma0, rows, 1, sstats0)
    for nt in THREADS[1:]:
        out = _e_step(X, Bt, gamma0, rows, nt, sstats0)
        for a, b in zip(ref, out):
            assert np.array_equal(a, b), nt
    # and the serial result is online LDA's E-step (NumPy transcription)
    Xr = X[rows]
    g_ref, ss_ref, wb_ref, it_ref = reference_e_step(Xr, Bt.T, gamma0, 0.1, 1e-3, 100)
    np.testing.assert_allclose(ref[0], g_ref, rtol=1e-10)
    np.testing.assert_allclose(ref[1] - sstats0, ss_ref.T, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ref[2], wb_ref, rtol=1e-10)
    assert np.array_equal(ref[3], it_ref)


def test_lda_e_step_more_threads_than_rows_and_empty():
    X = _corpus(D=5)
    Bt = np.ascontiguousarray(np.random.default_rng(0).gamma(1.0, 1.0, (X.shape[1], 3)))
    g0 = np.ones((5, 3))
    a = _e_step(X, Bt, g0, np.arange(5, dtype=np.int64), 1)
    b = _e_step(X, Bt, g0, np.arange(5, dtype=np.int64), 64)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    empty = _e_step(X, Bt, g0, np.zeros(0, dtype=np.int64), 4)
    assert empty[3].shape == (0,) and not empty[1].any()


def test_kernel_bad_n_threads():
    X = _corpus(D=4)
    Bt = np.ones((X.shape[1], 2))
    with pytest.raises(ValueError, match="n_threads must be >= 1"):
        _svi.lda_e_step(*_csr(X), np.arange(4, dtype=np.int64), Bt, np.ones((4, 2)), 0.1,
                        n_threads=0)
    with pytest.raises(ValueError, match="n_threads must be >= 1"):
        _svi.zeta_batch(*_csr(X), Bt, n_threads=-1)


def test_zeta_batch_golden_serial_values_and_threads():
    X, phi, _, _ = _golden_input()
    phi_t = np.ascontiguousarray(phi.T)
    z1, th1, it1 = _svi.zeta_batch(*_csr(X), phi_t, n_threads=1)
    np.testing.assert_allclose(z1[:5], [-86.44140323771737, -79.74910831349125,
                                        -23.412477721880933, -48.425879968480196,
                                        -86.47413457522298], rtol=1e-13)
    assert it1[:5].tolist() == [8, 9, 8, 8, 9]
    for nt in THREADS[1:]:
        z, th, it = _svi.zeta_batch(*_csr(X), phi_t, n_threads=nt)
        assert np.array_equal(z, z1) and np.array_equal(th, th1) and np.array_equal(it, it1)
    # plain EM too (other code path)
    a = _svi.zeta_batch(*_csr(X), phi_t, 1e-8, 500, 1e-300, False, False, 1)
    b = _svi.zeta_batch(*_csr(X), phi_t, 1e-8, 500, 1e-300, False, False, 3)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_zeta_n_jobs_bit_identical():
    X, phi, _, _ = _golden_input()
    z1, th1, it1 = zeta(phi, X, return_theta=True, return_n_iter=True)
    z2, th2, it2 = zeta(phi, X, return_theta=True, return_n_iter=True, n_jobs=2)
    z3 = zeta(phi, X, n_jobs=-1)
    assert np.array_equal(z1, z2) and np.array_equal(th1, th2) and np.array_equal(it1, it2)
    assert np.array_equal(z1, z3)


# ------------------------------------------------------------------ n_jobs semantics
def test_effective_n_jobs():
    assert effective_n_jobs(None) == 1
    assert effective_n_jobs(3) == 3
    assert effective_n_jobs(np.int64(2)) == 2
    assert effective_n_jobs(-1) == _cpu_count()
    assert effective_n_jobs(-2) == max(1, _cpu_count() - 1)
    assert effective_n_jobs(-10 ** 6) == 1


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (1.5, TypeError), (True, TypeError),
                                      ("2", TypeError)])
def test_bad_n_jobs(bad, exc):
    X, _, _ = make_lda_corpus(30, 20, 2, random_state=0)
    with pytest.raises(exc, match="n_jobs"):
        effective_n_jobs(bad)
    with pytest.raises(exc, match="n_jobs"):
        PrivateOnlineLDA(2, n_jobs=bad, max_iter=1).fit(X)
    fitted = PrivateOnlineLDA(2, max_iter=1, random_state=0).fit(X)
    fitted.set_params(n_jobs=bad)
    with pytest.raises(exc, match="n_jobs"):
        fitted.transform(X)
    with pytest.raises(exc, match="n_jobs"):
        zeta(fitted.topic_word_, X, n_jobs=bad)


# ------------------------------------------------------------------ estimator
def _fit(n_jobs, X, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the seeded (test mode) warning
        return PrivateOnlineLDA(4, batch_size=25, max_iter=3, random_state=7, n_jobs=n_jobs,
                                **kw).fit(X)


@pytest.mark.parametrize("private", [False, True])
def test_private_online_lda_n_jobs_bit_identical(private):
    X, _, _ = make_lda_corpus(150, 50, 4, random_state=2)
    kw = (dict(max_doc_length=40, target_epsilon=3.0, target_delta=1e-5, total_samples=150)
          if private else {})
    m1 = _fit(None, X, **kw)
    m2 = _fit(2, X, **kw)
    m3 = _fit(-1, X, **kw)
    assert np.array_equal(m1.components_, m2.components_)
    assert np.array_equal(m1.components_, m3.components_)
    assert np.array_equal(m1.transform(X), m2.transform(X))
    assert m1.score(X) == m2.score(X)
    if private:
        assert m1.sigma_ == m2.sigma_
        assert m1.privacy_.epsilon(1e-5) == m2.privacy_.epsilon(1e-5)
    # transform's n_jobs is read at call time
    m1.set_params(n_jobs=3)
    assert np.array_equal(m1.transform(X), m2.transform(X))
