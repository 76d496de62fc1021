"""Fuzzing the public API with random bad (and good) inputs (hypothesis; issue 17).

Contract checked on every example: a call either returns finite, well-shaped output or
raises ValueError / TypeError with a message; never another exception, never NaN or inf
output, never a mutation of the caller's array. Bounded (few examples, no deadline) so the
file runs in well under a minute.
"""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from dptm import accounting as A  # noqa: E402
from dptm._utils import check_count_matrix  # noqa: E402

FUZZ = settings(max_examples=30, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

SPECIAL = [0.0, 1.0, -1.0, 0.5, 1e300, -1e300, 2.0 ** 63, 2.0 ** 64, math.nan, math.inf,
           -math.inf, 3e9, 1e-300]


@st.composite
def count_like(draw):
    """A document-term 'matrix': mostly valid small counts, with a drawn defect."""
    rows = draw(st.integers(0, 6))
    cols = draw(st.integers(0, 6))
    base = draw(st.lists(st.integers(0, 4), min_size=rows * cols, max_size=rows * cols))
    X = np.array(base, dtype=np.float64).reshape(rows, cols)
    defect = draw(st.sampled_from(["none", "special", "dtype", "shape", "sparse", "list"]))
    if defect == "special" and X.size:
        i = draw(st.integers(0, X.size - 1))
        X.flat[i] = draw(st.sampled_from(SPECIAL))
    elif defect == "dtype":
        dt = draw(st.sampled_from([np.float16, np.int8, np.uint64, bool, np.complex128, object]))
        X = X.astype(dt)
    elif defect == "shape":
        X = draw(st.sampled_from([X.ravel(), X.reshape(1, *X.shape), np.array(3.0)]))
    elif defect == "sparse" and X.ndim == 2:
        X = draw(st.sampled_from([sp.csr_matrix, sp.csc_matrix, sp.coo_matrix]))(X)
    elif defect == "list":
        X = X.tolist()
    return X


def _snapshot(X):
    if sp.issparse(X):
        return X.copy()
    if isinstance(X, np.ndarray):
        return X.copy()
    return None


def _same(X, snap):
    if snap is None:
        return
    if sp.issparse(X):
        assert (X != snap).nnz == 0 if X.dtype != object else True
    else:
        np.testing.assert_array_equal(X, snap)


def _call(fn, X):
    """fn(X) must return or raise ValueError/TypeError with a message; X unchanged."""
    snap = _snapshot(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(X)
        except (ValueError, TypeError) as exc:
            assert str(exc), f"{type(exc).__name__} without a message"
            out = None
    _same(X, snap)
    return out


def _finite(*arrays):
    for a in arrays:
        assert np.all(np.isfinite(np.asarray(a, dtype=float)))


@FUZZ
@given(count_like())
def test_check_count_matrix(X):
    out = _call(check_count_matrix, X)
    if out is not None:
        assert out.dtype == np.int64 and out.nnz > 0 and np.all(out.data > 0)
        assert out.has_canonical_format


def _estimators():
    from dptm.models.gibbs import GibbsLDA
    from dptm.models.private_gibbs import NoisyGibbsLDA, SubsampledGibbsLDA
    from dptm.models.svi import PrivateOnlineLDA
    return [
        lambda: GibbsLDA(2, max_iter=2, random_state=0),
        lambda: NoisyGibbsLDA(2, max_iter=2, random_state=0),
        lambda: SubsampledGibbsLDA(2, max_iter=2, random_state=0),
        lambda: PrivateOnlineLDA(2, batch_size=4, max_iter=1, noise_multiplier=1.0,
                                 max_doc_length=20, total_samples=8, random_state=0),
    ]


@pytest.mark.parametrize("make", _estimators(), ids=["gibbs", "noisy", "subsampled", "vips"])
@FUZZ
@given(X=count_like())
def test_estimators_fit_transform(make, X):
    def fit(X):
        est = make().fit(X)
        theta = est.transform(X)
        return est, theta
    out = _call(fit, X)
    if out is not None:
        est, theta = out
        _finite(est.components_, est.topic_word_, theta)
        np.testing.assert_allclose(np.asarray(est.topic_word_).sum(axis=1), 1.0, rtol=1e-6)


@FUZZ
@given(X=count_like(), phi_defect=st.sampled_from(["none", "nan", "neg", "zero_row", "shape"]))
def test_zeta(X, phi_defect):
    from dptm.attacks import zeta
    V = np.shape(X)[-1] if np.ndim(X) >= 1 and not isinstance(X, list) else 3
    V = max(V, 1)
    phi = np.full((2, V), 1.0 / V)
    if phi_defect == "nan":
        phi[0, 0] = np.nan
    elif phi_defect == "neg":
        phi[1, 0] = -0.1
    elif phi_defect == "zero_row":
        phi[0] = 0.0
    elif phi_defect == "shape":
        phi = phi[:, :-1] if V > 1 else phi.ravel()
    out = _call(lambda X: zeta(phi, X), X)
    if out is not None:
        _finite(out)
        assert np.all(np.asarray(out) <= 1e-9)  # a log-likelihood of counts


@FUZZ
@given(theta=st.lists(st.sampled_from(SPECIAL + [0.25, 0.75]), min_size=0, max_size=6),
       shape=st.sampled_from([(-1,), (2, -1), (1, 1, -1)]))
def test_theta_statistics(theta, shape):
    from dptm.attacks import logit_max, negative_entropy, topic_std
    arr = np.array(theta, dtype=float)
    try:
        arr = arr.reshape(shape)
    except ValueError:
        arr = arr.reshape(-1)
    for f in (negative_entropy, topic_std, logit_max):
        out = _call(f, arr)
        if out is not None:
            _finite(out)


@FUZZ
@given(sigma=st.sampled_from(SPECIAL + [5e-324, 1.7e308, 2.0]),
       q=st.sampled_from([1.0, 0.5, 1e-12, 0.0, -0.1, 1.5, math.nan]),
       steps=st.sampled_from([0, 1, 1000, -1]),
       delta=st.sampled_from([1e-5, 0.0, 1.0, 1e-300, math.nan]),
       kind=st.sampled_from(["gaussian", "laplace", "pure"]))
def test_accounting(sigma, q, steps, delta, kind):
    def build(_):
        leaf = {"gaussian": lambda: A.GaussianEvent(sigma=sigma),
                "laplace": lambda: A.LaplaceEvent(scale=sigma),
                "pure": lambda: A.PureDPEvent(epsilon=sigma)}[kind]()
        ev = A.SelfComposedEvent(A.PoissonSampledEvent(leaf, q), steps)
        return A.epsilon(ev, delta)
    eps = _call(build, None)
    if eps is not None:
        assert not math.isnan(eps) and eps >= 0.0


@FUZZ
@given(eps=st.sampled_from(SPECIAL + [2.0]), delta=st.sampled_from([1e-5, 0.5, 0.0, 1.0]),
       q=st.sampled_from([1.0, 0.01, 0.0]), steps=st.sampled_from([1, 100, 0]))
def test_calibration(eps, delta, q, steps):
    def cal(_):
        return A.calibrate_gaussian(eps, delta, sampling_probability=q, steps=steps)
    z = _call(cal, None)
    if z is not None:
        assert z > 0 and math.isfinite(z)
        # never silently exceeds the target
        ev = A.GaussianEvent(z)
        ev = A.PoissonSampledEvent(ev, q) if q < 1 else ev
        assert A.epsilon(A.SelfComposedEvent(ev, steps), delta, method="rdp") <= eps * (1 + 1e-9)
