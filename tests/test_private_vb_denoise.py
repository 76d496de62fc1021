"""Empirical-Bayes post-processing of PrivateBatchLDA's releases (issue #15)."""
import math

import numpy as np
import pytest
from scipy import integrate, stats

from dptm.models import private_vb as P


def _posterior_mean_by_quadrature(y, s, p, lam):
    # E[t | y] = int t f(y|t) pi(t) / int f(y|t) pi(t), pi = (1-p) delta_0 + p Exp(lam)
    like = lambda t: stats.norm.pdf(y, t, s)  # noqa: E731
    slab = lambda t: p * lam * math.exp(-lam * t)  # noqa: E731
    num = integrate.quad(lambda t: t * like(t) * slab(t), 0, np.inf, epsabs=0, epsrel=1e-11,
                         points=None, limit=200)[0]
    den = (1 - p) * like(0.0) + integrate.quad(lambda t: like(t) * slab(t), 0, np.inf,
                                               epsabs=0, epsrel=1e-11, limit=200)[0]
    return num / den


@pytest.mark.parametrize("y,s,p,lam", [(0.0, 1.0, 0.1, 0.5), (2.5, 1.0, 0.1, 0.5),
                                       (-3.0, 2.0, 0.3, 0.1), (12.0, 3.0, 0.05, 0.02),
                                       (5.0, 1.0, 0.5, 2.0), (40.0, 10.0, 0.2, 0.01)])
def test_eb_posterior_mean_matches_quadrature(y, s, p, lam):
    got = P._eb_posterior_mean(np.array([y]), s, p, np.array([lam]))[0]
    want = _posterior_mean_by_quadrature(y, s, p, lam)
    assert got == pytest.approx(want, rel=1e-7, abs=1e-12)


def test_eb_posterior_mean_far_tails():
    # far below 0: the truncated-normal mean m + s phi/Phi ~ s^2 / |m| stays finite and
    # positive (the Mills ratio via log_ndtr, where phi and Phi both underflow), the slab
    # weight ~ p lam s^2 / ((1 - p) |y|); far above: y - lam s^2
    y = np.array([-60.0, -8.0, 200.0])
    out = P._eb_posterior_mean(y, 1.0, 0.2, np.full(3, 0.5))
    assert np.all(np.isfinite(out)) and np.all(out >= 0)
    m = -60.0 - 0.5
    assert out[0] == pytest.approx(0.2 * 0.5 / (0.8 * 60.0) / abs(m), rel=0.05)
    assert out[0] < out[1] < 0.05
    assert out[2] == pytest.approx(200.0 - 0.5, rel=1e-12)


def test_eb_posterior_mean_is_monotone_in_the_observation():
    y = np.linspace(-20, 60, 2001)
    out = P._eb_posterior_mean(y, 4.0, 0.1, np.full(y.size, 0.05))
    assert np.all(np.diff(out) >= -1e-12)
    hi = y >= 8.0     # two noise sd up: shrunk towards 0 (below, positivity can lift it)
    assert np.all(out[hi] < y[hi]) and np.all(out > 0)


def test_eb_fit_recovers_the_prior():
    # 20,000 entries drawn from the model (seeded): the maximum-likelihood fit is within a
    # few standard errors (p: sd ~ 0.003, lam: ~3%) of the truth
    rng = np.random.default_rng(1)
    n, p, lam, s = 20000, 0.1, 0.02, 10.0
    t = np.where(rng.random(n) < p, rng.exponential(1 / lam, n), 0.0)
    y = t + rng.normal(0, s, n)
    p_hat, lam_hat = P._eb_fit_row(y, s, np.ones(n))
    assert p_hat == pytest.approx(p, abs=0.015)
    assert np.all(np.abs(lam_hat / lam - 1) < 0.15)


@pytest.mark.parametrize("p,lam,s", [(0.1, 0.02, 10.0), (0.01, 0.2, 1.0), (0.4, 0.001, 50.0)])
def test_eb_fit_is_the_likelihood_maximum(p, lam, s):
    # The fit follows the analytic gradient: a wrong term or sign in it stops the search
    # away from the maximum. Moving either parameter by 1% from the fit must not raise the
    # likelihood (written here from the densities, not from the fit's own objective).
    rng = np.random.default_rng(2)
    n = 5000
    t = np.where(rng.random(n) < p, rng.exponential(1 / lam, n), 0.0)
    y = t + rng.normal(0, s, n)
    p_hat, lam_hat = P._eb_fit_row(y, s, np.ones(n))

    def loglik(q, rate):
        l0, l1 = P._eb_log_densities(y, s, rate)
        return float(np.logaddexp(np.log1p(-q) + l0, np.log(q) + l1).sum())
    best = loglik(p_hat, lam_hat)
    for dq, dr in ((1.01, 1), (0.99, 1), (1, 1.01), (1, 0.99)):
        assert loglik(p_hat * dq, lam_hat * dr) <= best + 1e-6 * abs(best)


def _mixture_nll(y, s, log_p, log_q, lam):
    # the negative log-likelihood of the spike (weight e^log_q) and slab (e^log_p) mixture
    l0, l1 = P._eb_log_densities(y, s, lam)
    return -float(np.logaddexp(log_q + l0, log_p + l1).sum())


def _eb_nll(y, s, a, b, scale=1.0):
    # at logit p = a, log slab mean = b (log p and log(1 - p) without rounding p near 1)
    return _mixture_nll(y, s, -np.logaddexp(0, -a), -np.logaddexp(0, a), math.exp(-b) / scale)


def _eb_nll_at(y, s, p, lam):
    return _mixture_nll(y, s, math.log(p), np.log1p(-p), lam)


def _eb_brute_force(y, s):
    # every local minimum of the nll on an 81 x 81 grid of the fit's box (logit p in
    # [-20, 20], slab mean in [1e-3, 1e3] s), each refined by Nelder-Mead within two grid
    # steps of it
    from scipy.ndimage import minimum_filter
    from scipy.optimize import minimize
    A = np.linspace(-20, 20, 81)
    B = np.linspace(math.log(1e-3 * s), math.log(1e3 * s), 81)
    G = np.array([[_eb_nll(y, s, a, b) for b in B] for a in A])
    lo, hi = np.array([-20.0, math.log(1e-3 * s)]), np.array([20.0, math.log(1e6 * s)])
    out = []
    step = np.array([A[1] - A[0], B[1] - B[0]])
    for i, j in np.argwhere(G == minimum_filter(G, size=9, mode="nearest")):
        x = np.array([A[i], B[j]])
        box = list(zip(np.maximum(x - 2 * step, lo), np.minimum(x + 2 * step, hi)))
        r = minimize(lambda x: _eb_nll(y, s, *x), x, method="Nelder-Mead", bounds=box,
                     options={"xatol": 1e-9, "fatol": 1e-10, "maxiter": 4000})
        out.append((r.fun, *np.clip(r.x, lo, hi)))
    return sorted(out)


def _noise_row(seed, shift, n=5000):
    return np.random.default_rng(seed).normal(0, 1, n) + shift


@pytest.mark.parametrize("kind", ["topic", "near-empty", "two-mode"])
def test_eb_fit_rows_reaches_the_brute_force_optimum(kind):
    # The batched fit (projected Newton, compressed rows first, a second start on weak
    # topics) against a grid search refined by Nelder-Mead: a topic drawn from the model;
    # a near-empty one (noise shifted by 0.02 sd: the maximum is a slab on every entry,
    # p -> 1, where BFGS stops 2.7 nats short); a two-mode one (two separate maxima 0.88
    # nats apart, BFGS and the fit both in the higher)
    rng = np.random.default_rng(1)
    if kind == "topic":
        s = 10.0
        t = np.where(rng.random(5000) < 0.1, rng.exponential(50, 5000), 0.0)
        y = t + rng.normal(0, s, 5000)
    else:
        s = 1.0
        y = _noise_row(4, 0.02) if kind == "near-empty" else _noise_row(1, 0.02)
    optima = _eb_brute_force(y, s)
    best = optima[0][0]
    p, lam = P._eb_fit_rows(y[None], s, np.ones(y.size))
    got = _eb_nll_at(y, s, p[0], lam[0])
    assert got <= best + 1e-7 * abs(best)
    bfgs = _eb_nll_at(y, s, *P._eb_fit_row(y, s, np.ones(y.size)))
    assert got <= bfgs + 1e-7 * abs(bfgs)
    if kind == "near-empty":
        assert optima[0][1] > 3 and bfgs > best + 2.5          # BFGS stopped short of it
        assert p[0] > 0.95 and lam[0][0] * s > 10              # the slab everywhere, small
    if kind == "two-mode":
        assert len(optima) >= 2 and optima[1][0] - best == pytest.approx(0.88, abs=0.02)
        assert abs(optima[1][1] - optima[0][1]) > 5            # far apart: p and the
        assert abs(optima[1][2] - optima[0][2]) > 3            # slab mean


def test_eb_fit_rows_against_bfgs_on_many_rows():
    # rows of several shapes at once (short rows: no compression; a per-entry scale): the
    # batched fit is never worse than the per-row BFGS fit by more than 1e-7 of the nll
    rng = np.random.default_rng(5)
    V = 800
    rows = [rng.normal(0, 1, V) + shift for shift in (-0.05, 0.0, 0.01, 0.03, 0.1)]
    for p_, mean in ((0.05, 5.0), (0.3, 2.0), (0.01, 40.0), (0.6, 0.5)):
        rows.append(np.where(rng.random(V) < p_, rng.exponential(mean, V), 0.0)
                    + rng.normal(0, 1, V))
    est = np.array(rows)
    for scale in (np.ones(V), rng.uniform(0.2, 3.0, V)):
        scale = scale / scale.mean()
        p, lam = P._eb_fit_rows(est, 1.0, scale)
        assert p.shape == (len(rows),) and lam.shape == est.shape
        for k, y in enumerate(est):
            got = _eb_nll_at(y, 1.0, p[k], lam[k])
            bfgs = _eb_nll_at(y, 1.0, *P._eb_fit_row(y, 1.0, scale))
            assert got <= bfgs + 1e-7 * abs(bfgs)
            np.testing.assert_allclose(lam[k] * scale, lam[k][0] * scale[0], rtol=1e-12)


def test_eb_fit_rows_falls_back_to_bfgs(monkeypatch):
    # rows Newton reports unconverged get the per-row BFGS fit, unchanged
    from dptm.models import vb_denoise
    rng = np.random.default_rng(3)
    est = np.where(rng.random((3, 2000)) < 0.1, rng.exponential(30, (3, 2000)), 0.0)
    est += rng.normal(0, 4.0, est.shape)
    real = vb_denoise._eb_newton

    def unconverged(*args, **kwargs):
        x, f, f0, conv = real(*args, **kwargs)
        return x, f, f0, np.zeros_like(conv)
    monkeypatch.setattr(vb_denoise, "_eb_newton", unconverged)
    p, lam = P._eb_fit_rows(est, 4.0, np.ones(2000))
    for k in range(3):
        pk, lk = P._eb_fit_row(est[k], 4.0, np.ones(2000))
        newton = _eb_nll_at(est[k], 4.0, p[k], lam[k])
        # the better of the two: BFGS's unless the unconverged Newton fit is already better
        assert newton <= _eb_nll_at(est[k], 4.0, pk, lk)
        if (p[k], lam[k][0]) != (pk, lk[0]):
            assert newton < _eb_nll_at(est[k], 4.0, pk, lk)


def test_eb_denoise_beats_hard_threshold_and_leaves_input_alone():
    rng = np.random.default_rng(2)
    K, V, s = 5, 4000, 10.0
    t = np.where(rng.random((K, V)) < 0.1, rng.exponential(50, (K, V)), 0.0)
    y = t + rng.normal(0, s, (K, V))
    y0 = y.copy()
    eb = P._eb_denoise(y, s, 0.25)
    np.testing.assert_array_equal(y, y0)
    assert np.all(eb >= 0.25)
    np.testing.assert_array_equal(eb, P._eb_denoise(y0, s, 0.25))   # deterministic
    hard = P._denoise(y, s, 0.25, 3.0)
    assert np.mean((eb - 0.25 - t) ** 2) < 0.9 * np.mean((hard - 0.25 - t) ** 2)
    col = P._eb_denoise(y, s, 0.25, column_scale=True)
    np.testing.assert_array_equal(y, y0)
    assert col.shape == y.shape and np.all(col >= 0.25)


def test_final_topics_posterior_mean_or_threshold_and_smoothing():
    rng = np.random.default_rng(3)
    s, eta = 2.0, 0.05
    t = np.where(rng.random((4, 3000)) < 0.1, rng.exponential(20, (4, 3000)), 0.0)
    y = t + rng.normal(0, s, t.shape)
    y0 = y.copy()
    out = P._post_process("final", y, s, eta, None)
    np.testing.assert_array_equal(out, P._eb_denoise(y, s, eta))
    # below the threshold: positive but small mass
    low = y <= 3.0 * s
    assert np.all(out > eta) and np.median(out[low] - eta) < 0.2 * s
    out = P._post_process("final", y, s, eta, 3.0)
    extra = max(0.0, P._NOISE_SMOOTHING * s - eta)
    np.testing.assert_array_equal(out[low], eta + extra)
    np.testing.assert_array_equal(out[~low], y[~low] + eta + extra)
    np.testing.assert_array_equal(y, y0)


def test_default_fit_releases_the_posterior_mean_of_the_combined_estimate(monkeypatch):
    from dptm.models.private_vb import PrivateBatchLDA
    seen = []
    real = P._post_process

    def spy(post, est, sd, eta, threshold=None, start=None):
        if post == "final":
            seen.append((est.copy(), sd, eta, threshold))
        return real(post, est, sd, eta, threshold, start=start)

    monkeypatch.setattr(P, "_post_process", spy)
    rng = np.random.default_rng(0)
    X = rng.poisson(0.5, (60, 40))
    with pytest.warns(Warning):
        m = PrivateBatchLDA(3, target_epsilon=2.0, target_delta=1e-5, random_state=1,
                            schedule=(("presence", 1), ("counts", 1))).fit(X)
    (est, sd, eta, threshold), = seen
    assert threshold is None and m.threshold is None
    np.testing.assert_array_equal(m.components_, P._eb_denoise(est, sd, eta))


@pytest.mark.parametrize("kind", ["zeros", "noise", "huge", "negative"])
def test_eb_denoise_degenerate_releases_stay_finite(kind):
    rng = np.random.default_rng(4)
    y = {"zeros": np.zeros((3, 100)), "noise": rng.normal(0, 1, (3, 1000)),
         "huge": 1e8 + rng.normal(0, 1, (3, 100)), "negative": np.full((2, 50), -1e6)}[kind]
    out = P._eb_denoise(y, 1.0, 0.1)
    assert np.all(np.isfinite(out)) and np.all(out >= 0.1)
    if kind == "huge":
        np.testing.assert_allclose(out, y, rtol=1e-7)
    if kind in ("zeros", "negative"):
        assert out.max() < 0.1 + 0.5          # nothing detected: next to the prior


def test_search_denoise_golden():
    # K = 4, sd = 1, by hand; shrink keeps the entries above 1 sd. Word 0: mean 2.5,
    # deviations (7.5, -2.5, -2.5, -2.5), sample variance 25, James-Stein factor 1 - 1/25 =
    # 0.96 -> (9.7, 0.1, 0.1, 0.1); only entry 0 is above 1 sd. Word 1: (3, 2.5, 1.1, 1.5),
    # mean 2.025, sample variance 0.7692 < 1 (noise only): factor 0, every entry its mean;
    # all four are above 1 sd in the raw release (1.1 > 1, but not above 1.25
    # or the hard threshold's 2), so all kept at 2.025. Word 2: mean 3, variance 8, factor
    # 7/8 -> (4.75, 4.75, -0.5 -> 0, 3); kept 0, 1, 3. Word 3: (3, 2.5, 0.9, 1.5), mean
    # 1.975, variance 0.9025 < 1: every entry 1.975, but entry 2 is 0.9 in the raw release,
    # so dropped (the cut reads the release, not the shrunk values).
    assert P._SHRUNK_SEARCH_THRESHOLD == 1.0 and P._SEARCH_THRESHOLD == 2.0
    est = np.array([[10.0, 3.0, 5.0, 3.0], [0.0, 2.5, 5.0, 2.5], [0.0, 1.1, -1.0, 0.9],
                    [0.0, 1.5, 3.0, 1.5]])
    want = 0.1 + np.array([[9.7, 2.025, 4.75, 1.975], [0.0, 2.025, 4.75, 1.975],
                           [0.0, 2.025, 0.0, 0.0], [0.0, 2.025, 3.0, 1.975]])
    np.testing.assert_allclose(P._post_process("shrunk-threshold", est, 1.0, 0.1), want,
                               rtol=1e-13)
    # units-free (the noise sd itself overflows when squared past 1e154)
    np.testing.assert_allclose(P._post_process("shrunk-threshold", est * 1e160, 1e160, 0.0),
                               (want - 0.1) * 1e160, rtol=1e-13)
    # without shrink (and with one topic, where there is no spread) the hard threshold
    thresholded = 0.1 + np.where(est > 2.0, est, 0.0)
    np.testing.assert_array_equal(P._post_process("threshold", est, 1.0, 0.1), thresholded)
    np.testing.assert_array_equal(P._post_process("shrunk-threshold", est[:1], 1.0, 0.1),
                                  thresholded[:1])


def test_shrink_to_word_means_golden():
    # K = 4, sd = 1: each word's mean over the topics m, its deviations shrunk by
    # 1 - 1 / (s^2 / sd^2) when positive, entries clipped at 0, words with m <= 2 sd / 2 = 1
    # dropped; eta = 0.1 added. Worked by hand:
    #   [10, 0, 0, 0]:  m 2.5, s^2 = (56.25 + 3 x 6.25) / 3 = 25, kept 0.96 -> 9.7, 0.1 x 3
    #   [1.2, .8, 1, 1]: m 1.0 <= 1 -> dropped
    #   [3, 2, 2.5, 2.5]: s^2 = 0.5 / 3 < 1 -> flat at its mean 2.5
    #   [6, -2, -2, -2]: m 0 -> dropped
    #   [12, 0, 0, -4]: m 2, deviations 10, -2, -2, -6, s^2 = 48, kept 47/48 -> 2 + 47/48 x dev
    est = np.array([[10, 1.2, 3.0, 6, 12], [0, 0.8, 2.0, -2, 0],
                    [0, 1.0, 2.5, -2, 0], [0, 1.0, 2.5, -2, -4]], dtype=float)
    k = 47 / 48
    want = np.array([[9.7, 0, 2.5, 0, 2 + 10 * k], [0.1, 0, 2.5, 0, 2 - 2 * k],
                     [0.1, 0, 2.5, 0, 2 - 2 * k], [0.1, 0, 2.5, 0, 0]]) + 0.1
    np.testing.assert_allclose(P._shrink_to_word_means(est, 1.0, 0.1), want, rtol=1e-13)
    # the noise scale enters only as est / sd: the same release in other units
    np.testing.assert_allclose(P._shrink_to_word_means(est * 1e160, 1e160, 0.0),
                               (want - 0.1) * 1e160, rtol=1e-12)
    # one topic: nothing to shrink, the hard threshold between releases
    np.testing.assert_array_equal(P._shrink_to_word_means(est[:1], 1.0, 0.1),
                                  P._denoise(est[:1], 1.0, 0.1, P._SEARCH_THRESHOLD))


def test_shrink_to_word_means_removes_noise_only_preferences_and_lowers_the_error():
    # A release from the near-uniform start: per word a mean plus a small topic contrast,
    # plus N(0, 1) noise (seeded). Words whose entries vary by no more than the noise come
    # out flat (no topic preference), where the hard threshold gives most of them one;
    # over all words the shrunk deviations are closer to the true ones than the raw ones
    # (James-Stein: K - 1 = 19 > 4 dimensions, so this holds in expectation for every truth).
    rng = np.random.default_rng(6)
    K, V = 20, 3000
    mean = rng.gamma(2.0, 4.0, V)
    contrast = rng.normal(0, 1, (K, V)) * rng.choice([0.0, 0.3, 3.0], V)
    truth = mean + contrast - contrast.mean(axis=0)
    est = truth + rng.normal(0, 1, (K, V))
    out = P._shrink_to_word_means(est, 1.0, 0.0)
    noise_only = ((est - est.mean(axis=0)) ** 2).sum(axis=0) / (K - 1) <= 1.0
    kept = est.mean(axis=0) > 2 / math.sqrt(K)
    assert (noise_only & kept).sum() > 500
    assert np.all(np.ptp(out[:, noise_only], axis=0) == 0)
    hard = P._denoise(est, 1.0, 0.0, P._SEARCH_THRESHOLD)
    assert np.mean(np.ptp(hard[:, noise_only & kept], axis=0) > 0) > 0.5
    cols = kept & np.all(out > 0, axis=0)        # away from the clipping at 0
    dev = lambda a: a - a.mean(axis=0)  # noqa: E731
    err_shrunk = np.sum((dev(out) - dev(truth))[:, cols] ** 2)
    err_raw = np.sum((dev(est) - dev(truth))[:, cols] ** 2)
    assert err_shrunk < 0.8 * err_raw
