"""zeta's solver never accepts a step that lowers the objective: on random documents
(long ones, where the active-set Newton finish takes full steps far from the optimum) the
objective after m updates is non-decreasing in m and never above the certified optimum."""
import numpy as np
import scipy.sparse as sp

from dptm import _svi


def _kernel(phi, X, **kw):
    X = sp.csr_matrix(np.asarray(X))
    return _svi.zeta_batch(X.indptr.astype(np.int64), X.indices.astype(np.int32),
                           X.data.astype(np.float64), np.ascontiguousarray(phi.T), **kw)


def test_objective_never_decreases_along_the_updates():
    rng = np.random.default_rng(0)
    for _ in range(80):
        K, V = int(rng.integers(2, 30)), int(rng.integers(3, 60))
        phi = rng.dirichlet(np.full(V, float(rng.choice([0.01, 0.1, 1.0]))), size=K)
        X = np.zeros((10, V), dtype=np.int64)
        for d in range(10):
            np.add.at(X[d], rng.integers(0, V, size=int(rng.integers(1, 300))), 1)
        final = _kernel(phi, X)[0]
        prev = np.full(10, -np.inf)
        for m in range(1, 25):
            cur = _kernel(phi, X, max_iter=m)[0]
            assert np.all(cur >= prev - 1e-12 * np.abs(cur)), (K, V, m)
            assert np.all(cur <= final + 1e-12 * np.abs(final))
            prev = cur
