"""zeta kernel (dptm._svi.zeta_batch via dptm.attacks.zeta) and the Huang et al. statistics."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from dptm.attacks import (compute_statistics, get_topic_word, logit_max, negative_entropy,
                          topic_std, zeta)


def random_instance(rng, K, V=25, D=30, max_len=15, concentration=0.3):
    phi = rng.dirichlet(np.full(V, concentration), size=K)
    lengths = rng.integers(1, max_len + 1, size=D)
    X = np.zeros((D, V), dtype=np.int64)
    for d, n in enumerate(lengths):
        np.add.at(X[d], rng.integers(0, V, size=n), 1)
    return phi, X


def objective(theta, phi, x):
    p = theta @ phi
    nz = x > 0
    return float(np.sum(x[nz] * np.log(p[nz])))


def generic_max(phi, x):
    """The paper's way (scipy SLSQP with the simplex constraint), here with the analytic
    gradient, a tight tolerance and several starts: a strong generic reference."""
    K = phi.shape[0]
    nz = x > 0
    P, c = phi[:, nz], x[nz].astype(float)

    def f(t):
        return -np.sum(c * np.log(np.maximum(t @ P, 1e-300)))

    def g(t):
        return -P @ (c / np.maximum(t @ P, 1e-300))

    best = -np.inf
    rng = np.random.default_rng(0)
    for start in [np.full(K, 1.0 / K)] + list(rng.dirichlet(np.ones(K), size=1)):
        r = minimize(f, start, jac=g, method="SLSQP", bounds=[(0, 1)] * K,
                     constraints={"type": "eq", "fun": lambda t: t.sum() - 1,
                                  "jac": lambda t: np.ones(K)},
                     options={"ftol": 1e-15, "maxiter": 1000})
        t = np.clip(r.x, 0, None)
        t /= t.sum()
        best = max(best, objective(t, phi, x))
    return best


def em_reference(phi, x, tol=1e-10, max_iter=10000):
    """NumPy version of the plain EM kernel (accelerate=False), same stopping rule."""
    K = phi.shape[0]
    nz = x > 0
    P, c = phi[:, nz], x[nz].astype(float)
    n = c.sum()
    th = np.full(K, 1.0 / K)
    it = 0
    while True:
        p = th @ P
        obj = np.sum(c * np.log(p))
        g = P @ (c / p)
        if it >= max_iter or g.max() - n <= tol * abs(obj):
            return obj, th, it
        th = th * g / n
        th /= th.sum()
        it += 1


@pytest.mark.parametrize("K", [1, 2, 3, 5, 8])
def test_never_worse_than_generic_optimiser_and_kkt(K):
    rng = np.random.default_rng(100 + K)
    for rep in range(2):
        phi, X = random_instance(rng, K, D=12)
        z, theta, n_iter = zeta(phi, X, return_theta=True, return_n_iter=True)
        assert np.all(n_iter < 10000)
        for d in range(X.shape[0]):
            ref = generic_max(phi, X[d])
            # our objective is never lower than the generic optimiser's by > 1e-9 relative
            assert z[d] >= ref - 1e-9 * abs(ref), (K, rep, d, z[d], ref)
            assert z[d] == pytest.approx(objective(theta[d], phi, X[d]), rel=1e-12, abs=1e-12)
            # optimality (KKT) on the simplex: g_k <= N_d, with equality where theta_k > 0
            nz = X[d] > 0
            g = phi[:, nz] @ (X[d, nz] / (theta[d] @ phi[:, nz]))
            N = X[d].sum()
            assert np.all(g <= N * (1 + 1e-8))
            active = theta[d] > 1e-4
            assert np.allclose(g[active], N, rtol=1e-6)
        assert np.allclose(theta.sum(axis=1), 1) and np.all(theta >= 0)


def test_plain_em_matches_numpy_reference():
    rng = np.random.default_rng(7)
    phi, X = random_instance(rng, 4, D=20)
    z, theta, n_iter = zeta(phi, X, return_theta=True, return_n_iter=True, accelerate=False,
                             uncertified="ignore")
    for d in range(X.shape[0]):
        obj, th, it = em_reference(phi, X[d])
        assert z[d] == pytest.approx(obj, rel=1e-12)
        assert np.allclose(theta[d], th, atol=1e-10)
        assert abs(int(n_iter[d]) - it) <= 1  # same iteration up to rounding at the boundary


def test_squarem_same_fixed_point_and_monotone():
    rng = np.random.default_rng(11)
    phi, X = random_instance(rng, 6, D=25, concentration=0.1)
    z_acc = zeta(phi, X, accelerate=True)
    z_em = zeta(phi, X, accelerate=False, max_iter=100000)
    assert np.allclose(z_acc, z_em, rtol=1e-9, atol=0)
    # the objective after m updates never decreases with m (monotone scheme)
    prev = np.full(X.shape[0], -np.inf)
    for m in range(1, 25):
        cur = zeta(phi, X, max_iter=m, uncertified="ignore")  # deliberately truncated
        assert np.all(cur >= prev - 1e-12 * np.abs(cur))
        prev = cur


def test_closed_forms():
    phi = np.array([[0.5, 0.5, 0.0, 0.0], [0.0, 0.25, 0.25, 0.5]])
    # one distinct word: zeta = c log max_k phi_kw, theta a vertex
    z, th = zeta(phi, [[3, 0, 0, 0], [0, 0, 0, 2]], return_theta=True)
    assert z == pytest.approx([3 * np.log(0.5), 2 * np.log(0.5)], rel=1e-12)
    assert th[0] == pytest.approx([1, 0], abs=1e-9) and th[1] == pytest.approx([0, 1], abs=1e-9)
    # words 0 and 2 have disjoint supports: theta = (n0, n2) / N, zeta closed form
    z, th = zeta(phi, [[1, 0, 3, 0]], return_theta=True)
    assert th[0] == pytest.approx([0.25, 0.75], abs=1e-8)
    assert z[0] == pytest.approx(np.log(0.25 * 0.5) + 3 * np.log(0.75 * 0.25), rel=1e-10)
    # empty document: zeta 0, uniform theta; a single topic: plain log-likelihood
    z, th = zeta(phi, sp.csr_matrix([[0, 0, 0, 0], [1, 0, 0, 0]]), return_theta=True)
    assert z[0] == 0 and np.allclose(th[0], 0.5)
    assert zeta(phi[1:], [[0, 1, 1, 1]])[0] == pytest.approx(2 * np.log(0.25) + np.log(0.5))


def test_zero_probability_word_is_floored_not_nan():
    phi = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0]])
    z = zeta(phi, [[1, 0, 1]])
    assert np.isfinite(z[0]) and z[0] < -600


def test_accepts_fitted_models_and_pipelines():
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer
    from dptm import GibbsLDA
    from dptm.datasets import make_lda_corpus
    X, _, _ = make_lda_corpus(40, 30, 3, doc_length=20, random_state=0)
    sk = LatentDirichletAllocation(3, random_state=0, max_iter=3).fit(X)
    phi = get_topic_word(sk)
    assert np.allclose(phi, sk.components_ / sk.components_.sum(1, keepdims=True))
    g = GibbsLDA(3, max_iter=5, random_state=0).fit(X)
    assert np.allclose(get_topic_word(g), g.topic_word_, rtol=1e-14, atol=0)
    pipe = make_pipeline(FunctionTransformer(), LatentDirichletAllocation(3, max_iter=2,
                                                                          random_state=0)).fit(X)
    assert np.allclose(get_topic_word(pipe), get_topic_word(pipe[-1]))
    assert np.allclose(zeta(g, X), zeta(g.topic_word_, X), rtol=1e-12, atol=0)


def test_bad_input():
    phi = np.full((2, 3), 1 / 3)
    with pytest.raises(ValueError, match="columns"):
        zeta(phi, [[1, 2]])
    with pytest.raises(ValueError, match="non-negative"):
        zeta(-phi, [[1, 2, 0]])
    with pytest.raises(ValueError, match="non-negative"):
        zeta(phi, [[1, -2, 0]])
    with pytest.raises(ValueError, match="tol"):
        zeta(phi, [[1, 2, 0]], tol=0)
    with pytest.raises(ValueError, match="max_iter"):
        zeta(phi, [[1, 2, 0]], max_iter=0)
    with pytest.raises(TypeError, match="fitted"):
        get_topic_word(object())
    with pytest.raises(ValueError, match="unknown statistic"):
        compute_statistics(phi, [[1, 2, 0]], statistics=("zeta", "nope"))


def test_huang_statistics_closed_forms():
    theta = np.array([[1.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.25, 0.25]])
    assert negative_entropy(theta) == pytest.approx(
        [0.0, -np.log(3), 0.5 * np.log(0.5) + 0.5 * np.log(0.25)])
    assert topic_std(theta) == pytest.approx(theta.std(axis=1))
    lm = logit_max(theta)
    assert lm[1] == pytest.approx(np.log(0.5)) and lm[2] == pytest.approx(0.0)
    assert np.isfinite(lm[0]) and lm[0] > 20
    rng = np.random.default_rng(3)
    phi, X = random_instance(rng, 4, D=10)
    S = compute_statistics(phi, X, ("zeta", "neg_entropy", "std", "logit_max"))
    z, th = zeta(phi, X, return_theta=True)
    assert np.allclose(S, np.column_stack([z, negative_entropy(th), topic_std(th), logit_max(th)]))


# ---------------------------------------------------------------------------------------
# EM + SQUAREM finished by active-set Newton (the default): same optimum, certified, monotone
# ---------------------------------------------------------------------------------------
from dptm import _svi  # noqa: E402


def kernel(phi, X, **kw):
    X = sp.csr_matrix(np.asarray(X))
    return _svi.zeta_batch(X.indptr.astype(np.int64), X.indices.astype(np.int32),
                           X.data.astype(np.float64), np.ascontiguousarray(phi.T), **kw)


def gaps(phi, X, theta):
    """Frank-Wolfe duality gap max_k g_k - N_d of every document at theta, in NumPy."""
    X = np.asarray(X)
    out = np.zeros(X.shape[0])
    for d in range(X.shape[0]):
        nz = X[d] > 0
        if nz.any():
            g = phi[:, nz] @ (X[d, nz] / (theta[d] @ phi[:, nz]))
            out[d] = g.max() - X[d].sum()
    return out


def degenerate_instances(rng):
    """Random instances whose maximiser is on the boundary and/or not unique."""
    out = []
    # K > distinct words (short docs): optimum on a low-dimensional face
    out.append(random_instance(rng, 20, V=40, D=25, max_len=10, concentration=0.2))
    # K > V: many topics are affinely dependent on the words of every document
    out.append(random_instance(rng, 12, V=4, D=15, max_len=8, concentration=1.0))
    # duplicated topics and topics equal on the first half of the vocabulary: singular Hessian
    phi, X = random_instance(rng, 6, V=20, D=20, max_len=12, concentration=0.3)
    phi = np.vstack([phi, phi[:2]])
    half = phi[0].copy()
    half[10:] = rng.dirichlet(np.ones(10)) * half[10:].sum()
    phi = np.vstack([phi, half])
    X[:5, 10:] = 0
    X[:5, 0] += 1
    out.append((phi, X))
    # very sparse topics: words impossible under most topics, single-word documents
    phi, X = random_instance(rng, 8, V=30, D=20, max_len=15, concentration=0.02)
    X[:4] = 0
    X[np.arange(4), rng.integers(0, 30, size=4)] = rng.integers(1, 5, size=4)
    out.append((phi, X))
    # long documents, few topics: interior optimum
    out.append(random_instance(rng, 3, V=15, D=10, max_len=200, concentration=1.0))
    return out


def test_newton_same_optimum_as_converged_em_and_generic_optimiser():
    rng = np.random.default_rng(2024)
    for i, (phi, X) in enumerate(degenerate_instances(rng)):
        z, theta, n_iter = kernel(phi, X)
        assert np.all(n_iter < 10000), i
        z_em, _, _ = kernel(phi, X, accelerate=False, max_iter=200000)
        z_sq, _, _ = kernel(phi, X, newton=False, max_iter=200000)
        nonempty = X.sum(axis=1) > 0
        scale = np.abs(z_em[nonempty])
        # same optimum as plain EM and SQUAREM alone run to convergence (both certified at
        # 1e-10, so they agree within twice that), and never below either
        assert np.allclose(z[nonempty], z_em[nonempty], rtol=3e-10, atol=0), i
        assert np.allclose(z[nonempty], z_sq[nonempty], rtol=3e-10, atol=0), i
        assert np.all(z[nonempty] >= z_em[nonempty] - 2e-10 * scale), i
        assert np.all(theta >= 0) and np.allclose(theta.sum(axis=1), 1, rtol=0, atol=1e-12)
        for d in np.flatnonzero(nonempty)[:8]:  # SLSQP is slow: a few documents each
            ref = generic_max(phi, X[d])
            assert z[d] >= ref - 1e-9 * abs(ref), (i, d, z[d], ref)
            assert z[d] == pytest.approx(objective(theta[d], phi, X[d]), rel=1e-12, abs=1e-12)


def test_newton_certificate_every_document_tweetrumors_like():
    # TweetRumors-like: short documents (~9 tokens, mostly distinct words), a large
    # vocabulary and K = 20 sparse topics, so K exceeds the distinct words of every document
    rng = np.random.default_rng(5)
    K, V, D = 20, 3000, 1500
    phi = rng.dirichlet(np.full(V, 0.05), size=K)
    lengths = np.clip(rng.poisson(9, size=D), 1, 30)
    X = sp.lil_matrix((D, V), dtype=np.int64)
    popularity = rng.dirichlet(np.full(V, 0.3))
    for d, n in enumerate(lengths):
        for w in rng.choice(V, size=n, p=popularity):
            X[d, w] += 1
    X = X.tocsr()
    tol = 1e-10
    z, theta, n_iter = zeta(phi, X, tol=tol, return_theta=True, return_n_iter=True)
    assert np.all(n_iter < 10000)
    assert np.median(n_iter) < 30  # EM alone needs ~100 here (hundreds to thousands in the tail)
    g = gaps(phi, X.toarray(), theta)
    # the certificate, recomputed from the returned theta (slack for rounding in NumPy)
    assert np.all(g <= tol * np.abs(z) + 1e-12 * np.asarray(X.sum(axis=1)).ravel())
    assert np.all(theta >= 0) and np.allclose(theta.sum(axis=1), 1, rtol=0, atol=1e-12)
    # boundary optima, reached exactly: most components are exactly 0
    assert np.mean(theta == 0) > 0.5
    z_em = zeta(phi, X, accelerate=False, max_iter=100000)
    assert np.all(z >= z_em - 2e-10 * np.abs(z_em))


def test_newton_objective_monotone_in_the_updates():
    rng = np.random.default_rng(17)
    instances = degenerate_instances(rng)[:4]
    for phi, X in instances:
        prev = np.full(X.shape[0], -np.inf)
        final = kernel(phi, X)[0]
        for m in range(1, 40):
            cur = kernel(phi, X, max_iter=m)[0]
            assert np.all(cur >= prev - 1e-12 * np.abs(cur))
            assert np.all(cur <= final + 1e-12 * np.abs(final))
            prev = cur
        assert np.allclose(prev, final, rtol=1e-12, atol=0)  # all certified within 40 updates


def test_newton_edge_cases():
    # single topic, one word, duplicated topics (non-unique theta), zero-probability word
    phi = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.2, 0.8]])
    z, th, it = kernel(phi, [[1, 1, 0], [0, 0, 3], [0, 2, 1], [0, 0, 0]])
    assert z[0] == pytest.approx(2 * np.log(0.5), rel=1e-12)
    assert th[0, 0] + th[0, 1] == pytest.approx(1, abs=1e-9)
    assert z[1] == pytest.approx(3 * np.log(0.8), rel=1e-12) and th[1] == pytest.approx([0, 0, 1])
    assert z[3] == 0 and np.allclose(th[3], 1 / 3)
    assert np.all(gaps(phi, [[1, 1, 0], [0, 0, 3], [0, 2, 1]], th[:3]) <= 1e-10 * np.abs(z[:3]))
    z1, _, _ = kernel(phi[:1], [[1, 2, 0]])
    assert z1[0] == pytest.approx(3 * np.log(0.5))
    phi0 = np.array([[0.5, 0.5, 0.0], [0.25, 0.75, 0.0]])
    z, th, it = kernel(phi0, [[1, 0, 1]])
    assert np.isfinite(z[0]) and z[0] < -600 and np.all(th >= 0)
