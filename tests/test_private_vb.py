import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dptm.models.private_vb import PrivateBatchLDA, _estep_doc, _expected_counts


def _corpus(seed=0, D=60, V=12):
    r = np.random.default_rng(seed)
    return sp.csr_matrix(r.poisson(0.8, size=(D, V)).astype(np.int64))


def test_each_contribution_has_norm_c_and_sums():
    X = _corpus()
    beta = 1.0 + np.random.default_rng(1).random((3, X.shape[1]))
    one = _expected_counts(X[:1], beta, 0.3, 0.7)
    assert np.sqrt((one ** 2).sum()) == pytest.approx(0.7, rel=1e-12)
    total = _expected_counts(X, beta, 0.3, 0.7)
    parts = sum(_expected_counts(X[d:d + 1], beta, 0.3, 0.7) for d in range(X.shape[0]))
    np.testing.assert_allclose(total, parts, rtol=1e-12)


def test_estep_counts_sum_to_doc_length():
    ids, cnts = np.array([0, 2, 5]), np.array([2.0, 1.0, 4.0])
    eb = np.random.default_rng(2).random((4, 6)) + 0.1
    c = _estep_doc(ids, cnts, eb, 0.25)
    np.testing.assert_allclose(c.sum(axis=0), cnts, rtol=1e-10)


def test_calibration_and_report():
    X = _corpus()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = PrivateBatchLDA(3, target_epsilon=2.0, max_iter=2, random_state=0).fit(X)
    eps = m.privacy_.epsilon(1e-5, method="rdp")
    assert eps <= 2.0 * (1 + 1e-6) and eps > 1.9
    for v in vars(m).values():
        assert not isinstance(v, (np.random.Generator, np.random.BitGenerator))


@pytest.mark.parametrize("param,value", [("target_epsilon", -1.0), ("clip_norm", 0.0),
                                         ("n_components", 0)])
def test_bad_input_names_parameter(param, value):
    with pytest.raises((ValueError, TypeError), match=param):
        PrivateBatchLDA(**{"n_components": 3, param: value}).fit(_corpus())


def test_noise_drawn_matches_the_recorded_event(monkeypatch):
    # Capture every release: statistic in, noisy statistic out. The noise is g times an
    # integer (exact lattice noise) and its spread matches the event's sigma: 1,440 draws,
    # tolerance 6 standard errors of the sample std (false-alarm rate < 1e-8).
    from dptm.models import private_vb
    seen = []
    real = private_vb._release

    def spy(stat, sigma, gen):
        noisy, g, eff = real(stat, sigma, gen)
        seen.append((stat.copy(), noisy, g))
        return noisy, g, eff
    monkeypatch.setattr(private_vb, "_release", spy)
    noise = []
    for seed in range(20):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = PrivateBatchLDA(3, target_epsilon=2.0, max_iter=2, random_state=seed).fit(_corpus())
        for stat, noisy, g in seen:
            k = (noisy - np.rint(stat / g) * g) / g
            assert np.array_equal(k, np.rint(k))
            noise.append(k.ravel() * g)
        seen.clear()
    noise = np.concatenate(noise)
    event = m.privacy_.event.event
    assert event.discrete and event.sensitivity == m.clip_norm
    se = event.sigma / np.sqrt(2 * noise.size)
    assert abs(noise.std() - event.sigma) < 6 * se


def test_report_and_release_metadata_are_the_same_without_one_document():
    # add/remove adjacency: nothing but the privatized topics may tell X from X[:-1]
    X = _corpus()
    fits = []
    for data in (X, X[:-1]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits.append(PrivateBatchLDA(3, max_iter=2, random_state=5).fit(data))
    a, b = (m.release() for m in fits)
    assert a.privacy.to_state() == b.privacy.to_state() and str(a.privacy) == str(b.privacy)
    assert a.hyperparameters == b.hyperparameters and a.vocabulary == b.vocabulary
