"""PrivateBatchLDA from PUBLIC starting topics (``init_topics``): below epsilon 4 the one
count release is shrunk towards them (``vb_denoise._shrink_to_start``, a linear empirical
Bayes posterior mean); the plan and the E-step are checked in test_private_vb_boundary.py
and test_private_vb_public_decisions.py."""
import math
import warnings

import numpy as np
import pytest

from dptm.models import private_vb as P
from dptm.exceptions import SeededPrivacyWarning, UninformativeModelWarning
from dptm.models.private_vb import PrivateBatchLDA


def _by_hand(est, sd, eta, start):
    # the docstring's formula entry by entry, in token units
    K, V = est.shape
    out = np.empty_like(est)
    for k in range(K):
        c = max(est[k].sum(), sd * math.sqrt(V))
        m = [c * start[k, w] / start[k].sum() for w in range(V)]
        a = max(sum((est[k, w] - m[w]) ** 2 - sd ** 2 for w in range(V)), 0.0) / sum(m)
        for w in range(V):
            keep = a * m[w] / (a * m[w] + sd ** 2)
            out[k, w] = eta + max(m[w] + keep * (est[k, w] - m[w]), 0.0)
    return out


def test_shrink_to_start_is_the_linear_posterior_mean_of_its_docstring():
    rng = np.random.default_rng(0)
    start = rng.random((3, 7)) * 5 + 0.1          # rows not normalised: the shape is used
    start[1, 2] = 0.0
    est = 40 * start / start.sum(axis=1, keepdims=True) + rng.normal(0, 2.0, (3, 7)) * 3
    got = P._shrink_to_start(est, 2.0, 0.05, start)
    np.testing.assert_allclose(got, _by_hand(est, 2.0, 0.05, start), rtol=1e-12)
    assert got[1, 2] == 0.05                      # no public weight: the prior alone


def test_a_release_within_the_noise_of_the_start_returns_the_scaled_start():
    # residual spread below the noise: a = 0 (not negative), every entry the scaled start
    start = np.array([[1.0, 2.0, 3.0, 4.0], [4.0, 0.5, 0.5, 1.0]])
    shape = start / start.sum(axis=1, keepdims=True)
    sd = 1.0
    est = 100 * shape + 0.5 * sd * np.array([[1, -1, 1, -1], [-1, 1, -1, 1]])
    mass = est.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(P._shrink_to_start(est, sd, 0.1, start), 0.1 + mass * shape,
                               rtol=1e-12)


def test_a_precise_release_is_kept_where_the_start_has_weight():
    start = np.array([[1.0, 1.0, 1.0, 0.0], [0.0, 2.0, 1.0, 1.0]])
    est = np.array([[300.0, 10.0, 90.0, 50.0], [0.0, 5.0, 200.0, 95.0]])
    got = P._shrink_to_start(est, 1e-3, 0.0, start)
    kept = start > 0
    np.testing.assert_allclose(got[kept], est[kept], rtol=1e-4)
    assert np.all(got[~kept] == 0.0)      # a word the public topic lacks stays out of it


def test_shrink_to_start_is_in_noise_units_and_never_overflows():
    rng = np.random.default_rng(1)
    start = rng.random((4, 30)) + 0.01
    est = rng.normal(5, 3, (4, 30))
    base = P._shrink_to_start(est, 3.0, 0.0, start)
    big = P._shrink_to_start(est * 1e160, 3e160, 0.0, start)
    assert np.all(np.isfinite(big))
    np.testing.assert_allclose(big / 1e160, base, rtol=1e-10)


def test_a_topic_with_no_released_mass_keeps_the_public_shape():
    # a negative released mass (noise only) is floored at one noise sd of the topic's sum:
    # the topic keeps its public shape at that mass (no 0 / 0, not the prior alone)
    start = np.array([[3.0, 1.0, 0.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
    est = np.array([[-0.5, 0.3, -0.2, 0.1, -0.4], [10.0, 12.0, 9.0, 11.0, 8.0]])
    got = P._shrink_to_start(est, 1.0, 0.0, start)
    np.testing.assert_allclose(got[0], math.sqrt(5) * start[0] / start[0].sum(), rtol=1e-12)


def test_the_shrinkage_factor_is_estimated_and_lowers_the_error():
    # entries t ~ N(m, a m) observed with noise sd s: with a estimated by moments, the
    # posterior mean's squared error is below the raw release's by the factor
    # mean(a m / (a m + s^2)) of the true a, within 0.05 (40,000 entries per topic)
    rng = np.random.default_rng(2)
    K, V, s, a = 2, 40000, 2.0, 0.5
    start = rng.gamma(0.3, 1.0, (K, V)) + 1e-3
    mass = 2e5
    m = mass * start / start.sum(axis=1, keepdims=True)
    t = np.maximum(m + rng.normal(0, 1, (K, V)) * np.sqrt(a * m), 0)
    est = t + rng.normal(0, s, (K, V))
    got = P._shrink_to_start(est, s, 0.0, start)
    mse_raw, mse = np.mean((est - t) ** 2), np.mean((got - t) ** 2)
    predicted = np.mean(a * m / (a * m + s * s))
    assert mse < mse_raw
    assert mse / mse_raw == pytest.approx(predicted, abs=0.05)


def test_a_threshold_given_with_public_start_is_the_hard_threshold():
    # threshold= asks for the hard-thresholded final estimate: the start does not shrink it
    rng = np.random.default_rng(3)
    est, start = rng.normal(3, 2, (3, 10)), rng.random((3, 10)) + 0.1
    np.testing.assert_array_equal(P._post_process("final-to-start", est, 1.0, 0.1, 2.0, start),
                                  P._post_process("final", est, 1.0, 0.1, 2.0))
    assert not np.array_equal(P._post_process("final-to-start", est, 1.0, 0.1, None, start),
                              P._post_process("final", est, 1.0, 0.1, None))


def _corpus(seed=0, D=300, V=40):
    rng = np.random.default_rng(seed)
    topics = rng.dirichlet(np.full(V, 0.1), 3)
    docs = [rng.multinomial(30, rng.dirichlet(np.full(3, 0.3)) @ topics) for _ in range(D)]
    return np.array(docs), topics


@pytest.mark.parametrize("groups", [False, True])
def test_public_start_fits_with_word_counts_and_at_user_level(groups):
    X, topics = _corpus()
    counts = np.round(1000 * topics.sum(axis=0))
    m = PrivateBatchLDA(3, target_epsilon=1.0, init_topics=topics, word_counts=counts,
                        random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UninformativeModelWarning)   # the guide is the random start's
        warnings.simplefilter("ignore", SeededPrivacyWarning)
        m.fit(X, groups=np.arange(X.shape[0]) // 3 if groups else None)
    assert [r.post for r in m.plan_] == ["clip-bound", "final-to-start"]
    # the counts are not read after the shrink (the public topics carry the public text)
    assert m.background_words_ is None and np.all(np.isfinite(m.components_))
    assumed = " ".join(m.privacy_.assumed_public)
    assert "init_topics (given as public)" in assumed and "word_counts" in assumed
    assert m.privacy_.adjacency == ("user" if groups else "document")


def test_a_one_release_schedule_after_public_topics_is_shrunk_at_any_epsilon():
    # the choice the plan makes below epsilon 4, asked for at 8; without public topics a
    # one-release schedule keeps the plain final estimate
    X, topics = _corpus(1)
    one = [("counts", 1.0)]
    assert [r.post for r in P.fit_plan(8.0, 1e-5, 3, 40, one, public_start=True)] \
        == ["clip-bound", "final-to-start"]
    assert [r.post for r in P.fit_plan(8.0, 1e-5, 3, 40, one)] == ["clip-bound", "final"]
    assert [r.post for r in P.fit_plan(8.0, 1e-5, 3, 40, one * 2, public_start=True)] \
        == ["clip-bound", "threshold", "final"]
    m = PrivateBatchLDA(3, target_epsilon=8.0, init_topics=topics, schedule=one, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededPrivacyWarning)
        m.fit(X)
    assert [r.post for r in m.plan_] == ["clip-bound", "final-to-start"]
