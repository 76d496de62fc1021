"""PrivateBatchLDA at the release boundary: the lattice norm check drops non-finite and
out-of-range documents, extreme clip norms release topics or are refused before any
release, warnings read the releases only, each E-step reads only the previous releases
post-processed, the report is the closed-form composition, pickles hold no generator."""
import math
import warnings

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from _private_vb import fit_quietly as _fit, poisson_corpus
from dptm.models import private_vb as P, vb_denoise
from dptm.models.private_vb import PrivateBatchLDA
from dptm.noise.releases import recording

from _releases import force_lattice_releases


def _corpus(seed=0, D=60, V=12):
    return poisson_corpus(seed, D, V)


# ------------------------------------------------------------- lattice check
def test_lattice_norm_check_drops_non_finite_and_out_of_range_documents():
    # Before the fix NaN and inf cast to INT64_MIN, whose square wraps to 0, and an entry
    # of 2^40 squares to 2^80 = 0 mod 2^64: all three documents passed the exact check
    # (a NaN or inf in a release reveals its document through any noise).
    m = np.array([[np.nan, 0.0], [np.inf, 1.0], [2.0 ** 40, 0.0], [3.0, 4.0],
                  [1.0, 1.0], [-np.inf, 0.0], [4.0, 3.0], [0.0, 0.0]])
    # documents: [0], [1], [2], [3], [4, 5] (one bad pair), [6, 7]
    indptr = np.array([0, 1, 2, 3, 4, 6, 8])
    m0 = m.copy()
    with np.errstate(invalid="ignore"):
        ok = P._within_norm(m, indptr, 5.0)
    np.testing.assert_array_equal(ok, [0, 0, 0, 1, 0, 1])
    np.testing.assert_array_equal(m, m0)                  # caller's array untouched
    # many entries each below the bound whose integer squares sum past 2^63
    big = np.full((1, 4), 2.0 ** 30 - 1)        # sum of squares just below bound^2 ...
    assert P._within_norm(big, np.array([0, 1]), 2.0 ** 31 - 1)[0] == 1.0
    many = np.full((9, 1), 2.0 ** 31 - 1)                 # ... 9 (2^31)^2 > 2^63 wraps
    assert P._within_norm(many, np.array([0, 9]), 2.0 ** 31 - 1)[0] == 0.0
    # the boundary stays exact: norm 5 with bound 5 passes, bound 4.999 fails
    assert P._within_norm(np.array([[3.0, 4.0]]), np.array([0, 1]), 4.999)[0] == 0.0


# -------------------------------------------------------------- clip norms
def test_a_huge_clip_norm_releases_topics_not_the_prior():
    # Before the fix _combine_releases squared sd (~1e181 for clip_norm 2^600): every
    # weight 1/inf = 0, the combined estimate NaN, the EB fail-safe turned it into 0 and
    # the released topics were exactly the prior (uniform) - silently, for any data.
    X = _corpus()
    ref = _fit(X, n_components=3, clip_norm=2.0 ** 500)   # sd^2 ~ 1e301: fine before too
    big = _fit(X, n_components=3, clip_norm=2.0 ** 600)
    assert np.all(np.isfinite(big.components_))
    assert np.ptp(big.topic_word_) > 0.05                 # not the uniform prior
    np.testing.assert_allclose(big.topic_word_, ref.topic_word_, rtol=0, atol=1e-3)
    # the combination itself, at the two scales (powers of two: exact rescaling)
    rng = np.random.default_rng(1)
    a, f = rng.normal(10, 1, (2, 50)), rng.normal(10, 2, (2, 50))
    e1, s1 = P._combine_releases([(a, 1.0), (f, 2.0)], 3.0)
    s = 2.0 ** 600
    e2, s2 = P._combine_releases([(a * s, s), (f * s, 2.0 * s)], 3.0)
    np.testing.assert_allclose(e2 / s, e1, rtol=1e-13)
    assert s2 / s == pytest.approx(s1, rel=1e-13)


# ------------------------------------------------------------------ warnings
def test_fit_warnings_do_not_depend_on_the_private_document_count():
    # The report says the number of documents is neither used nor published, yet whether
    # a fit warns tells D < K apart from D >= K: neighbours with 3 and 2 documents, K = 3.
    # The fit's expectation warning reads the noisy count of the histogram release only:
    # with every release forced to the same values, the warnings are the same.
    X = _corpus(D=3)
    got = []
    import pytest as _pt
    with _pt.MonkeyPatch.context() as mp:
        force_lattice_releases(mp, lambda release, stat, noisy: np.full(stat.shape, 3.0))
        for data in (X, X[:2]):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                PrivateBatchLDA(3, target_epsilon=1.0, random_state=0).fit(data)
            got.append(sorted(f"{type(x.message).__name__}: {x.message}" for x in w))
    assert got[0] == got[1]
    assert any("UninformativeModelWarning" in g for g in got[0])   # the warning did run


# --------------------------------------------------- checked properties (no bug found)
@pytest.mark.parametrize("eps", [1.0, 2.0, 3.5, 4.0])
def test_each_e_step_uses_only_the_previous_release_post_processed(monkeypatch, eps):
    # The topics of every E-step: the data-independent start, then exactly
    # _post_process(the plan's step, release i, its drawn sd, eta), releases from the third
    # model release on averaged with the one before first - never the un-noised statistic.
    # The E-step's document-topic prior: _FIT_DOC_TOPIC_PRIOR from _FIT_PRIOR_MIN_EPSILON
    # (random start, doc_topic_prior not given), else the model's.
    betas, alphas = [], []
    real_stat = P._expected_counts

    def stat_spy(X, beta, alpha, norm, granularity=None, presence=False, n_threads=1,
                 word_weight=None):
        if presence != "norm-histogram":
            alphas.append(alpha)
            betas.append(beta.copy())
            assert word_weight is None
        return real_stat(X, beta, alpha, norm, granularity, presence, n_threads, word_weight)

    monkeypatch.setattr(P, "_expected_counts", stat_spy)
    X = _corpus()
    firsts = []
    for data in (X, X[:-1]):
        betas.clear(), alphas.clear()
        with recording() as draws:
            m = _fit(data, n_components=3, target_epsilon=eps)
        outs = [(d.noisy, d.event.sigma) for d in draws]
        plan = [r for r in m.plan_ if r.statistic != "norm-histogram"]
        model_outs = outs[1:]                       # outs[0]: the histogram
        assert len(betas) == len(model_outs) == m.n_iter_ == len(plan)
        want_alpha = (P._FIT_DOC_TOPIC_PRIOR if eps >= P._FIT_PRIOR_MIN_EPSILON
                      else m.doc_topic_prior_)
        assert alphas == [want_alpha] * len(plan) and m.doc_topic_prior_ == 1 / 3
        firsts.append(betas[0])
        eta = m.topic_word_prior_
        for i in range(1, len(betas)):
            est, sd = model_outs[i - 1]
            if i >= 3:
                est, sd = P._combine_releases(model_outs[i - 2:i], P._COMBINE_THRESHOLD)
            np.testing.assert_array_equal(betas[i], P._post_process(plan[i - 1].post, est, sd,
                                                                    eta))
            if i >= 3:                       # the average, not the last release alone
                assert not np.array_equal(betas[i], P._post_process(
                    plan[i - 1].post, *model_outs[i - 1], eta))
    np.testing.assert_array_equal(firsts[0], firsts[1])   # the start ignores the data
    # public init_topics: below _START_SEARCH_MIN_EPSILON the count release alone, read under
    # them and shrunk towards them; from it the same releases as the random start's
    init = np.random.default_rng(0).random((3, X.shape[1])) + 0.5
    betas.clear(), alphas.clear()
    with recording() as draws:
        m = _fit(X, n_components=3, target_epsilon=eps, init_topics=init)
    eta = m.topic_word_prior_
    np.testing.assert_array_equal(betas[0], eta + init * (1e3 / init.sum(axis=1, keepdims=True)))
    if eps < P._START_SEARCH_MIN_EPSILON:
        assert [r.statistic for r in m.plan_] == ["norm-histogram", "counts"]
        assert len(draws) == 2 and alphas == [m.doc_topic_prior_]      # no fit prior
        np.testing.assert_array_equal(m.components_, P._shrink_to_start(
            draws[1].noisy, draws[1].event.sigma, eta, init))
    else:
        assert m.plan_ == P.fit_plan(eps, 1e-5, 3, X.shape[1])
        assert alphas == [want_alpha] * len(plan)
    # with a given schedule after them, every release between is hard-thresholded, not combined
    betas.clear(), alphas.clear()
    with recording() as draws:
        m = _fit(X, n_components=3, target_epsilon=eps, init_topics=init,
                 schedule=[("presence", 1)] * 3 + [("counts", 1)])
    outs = [(d.noisy, d.event.sigma) for d in draws]
    assert len(betas) == 4 and alphas == [m.doc_topic_prior_] * 4
    for i in range(1, len(betas)):
        np.testing.assert_array_equal(betas[i], P._denoise(*outs[i], eta, P._SEARCH_THRESHOLD))


def _analytic_gaussian_epsilon(z, delta):
    """Exact epsilon of the (continuous) Gaussian mechanism, sensitivity 1, noise sd z
    (Balle & Wang 2018): delta(eps) = Phi(1/2z - eps z) - e^eps Phi(-1/2z - eps z)."""
    def gap(eps):
        return (norm.cdf(0.5 / z - eps * z)
                - math.exp(eps) * norm.cdf(-0.5 / z - eps * z) - delta)
    return brentq(gap, 0.0, 200.0, xtol=1e-12)


@pytest.mark.parametrize("eps", [0.5, 1.0, 4.0, 8.0])
def test_drawn_sigmas_compose_to_the_target_by_independent_bounds(eps):
    # The releases compose (sequentially, each on every document, L2 sensitivity C) to
    # one Gaussian of multiplier z_eff, 1/z_eff^2 = sum C^2 / sigma_i^2 over the sigmas
    # ACTUALLY drawn. Independently of dptm's accountant: the exact epsilon of that
    # Gaussian (a lower bound on what any sound accountant reports) must not exceed the
    # target, and the classical zCDP conversion (rho + 2 sqrt(rho log 1/delta), looser than
    # the RDP one used to calibrate) must not fall below it (the noise is not wasted).
    C, delta = 0.5, 1e-5
    with recording() as draws:
        m = _fit(_corpus(), n_components=3, target_epsilon=eps, target_delta=delta,
                 clip_norm=C)
    drawn = [d.event.sigma for d in draws]
    assert drawn == m.release_sigmas_ and len(drawn) == m.n_iter_ == len(m.plan_)
    z_eff = 1.0 / math.sqrt(sum((C / s) ** 2 for s in drawn))
    exact = _analytic_gaussian_epsilon(z_eff, delta)
    rho = 1.0 / (2.0 * z_eff ** 2)
    loose = rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
    reported = m.privacy_.epsilon(delta)
    assert exact <= reported <= eps < loose
    assert reported > eps - 0.01


def test_eb_fail_safe_reads_only_the_release(monkeypatch):
    # A topic whose posterior mean is not finite falls back to the hard threshold at 3 sd
    # of the same release (nothing else), the other topics keep their posterior mean.
    rng = np.random.default_rng(4)
    y = np.where(rng.random((3, 500)) < 0.1, 40.0, 0.0) + rng.normal(0, 4.0, (3, 500))
    y0 = y.copy()
    good = P._eb_denoise(y, 4.0, 0.1)
    real = P._eb_posterior_mean
    calls = []

    def broken(yk, s, p, lam):
        calls.append(1)
        out = real(yk, s, p, lam)
        if len(calls) == 2:
            out = out.copy()
            out[5] = np.nan
        return out
    # _eb_denoise reads the name in its own module (vb_denoise), re-exported by private_vb
    monkeypatch.setattr(vb_denoise, "_eb_posterior_mean", broken)
    got = P._eb_denoise(y, 4.0, 0.1)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(got[[0, 2]], good[[0, 2]])
    np.testing.assert_array_equal(got[1], 0.1 + np.where(y[1] > 12.0, y[1], 0.0))


@pytest.mark.parametrize("threshold", [None, 3.0])
def test_released_topics_are_post_processing_of_the_last_two_releases(monkeypatch, threshold):
    # The released topics are the "final" post-processing of _combine_releases(the last
    # two releases as drawn, with their drawn sds) - the combined estimate AND its sd (not
    # the last release's sd, nor anything computed from the un-noised statistic).
    finals = []
    real_post = P._post_process

    def post_spy(post, est, sd, eta, thr=None, start=None):
        if post == "final":
            finals.append((est.copy(), sd, eta, thr))
        return real_post(post, est, sd, eta, thr, start=start)
    monkeypatch.setattr(P, "_post_process", post_spy)
    with recording() as draws:
        m = _fit(_corpus(), n_components=3, target_epsilon=4.0, threshold=threshold)
    outs = [(d.noisy, d.event.sigma) for d in draws]
    (est, sd, eta, thr), = finals
    want_est, want_sd = P._combine_releases(outs[-2:], P._COMBINE_THRESHOLD)
    np.testing.assert_array_equal(est, want_est)
    assert sd == want_sd and sd < min(s for _, s in outs[-2:])
    assert eta == m.topic_word_prior_ and thr == threshold
    np.testing.assert_array_equal(m.components_, real_post("final", want_est, want_sd, eta,
                                                           threshold))


def test_a_default_fit_pickles_without_any_generator_or_document_sized_state():
    # the secret generator (AES-CTR, randomgen) or anything that regenerates it must not
    # reach a pickle of the fitted model; nothing stored has a per-document dimension
    import pickle
    X = _corpus(D=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = PrivateBatchLDA(3, target_epsilon=2.0).fit(X)     # random_state None: secret
    blob = pickle.dumps(m)
    for name in (b"numpy.random", b"randomgen", b"AESCounter", b"Generator", b"SeedSequence",
                 b"dptm._random"):
        assert name not in blob, name
    for key, value in vars(m).items():
        assert 50 not in np.shape(value), key


def test_a_tiny_clip_norm_is_refused_before_any_release():
    # Before the fix clip_norm 1e-310 drew every release, then the EB fit raised
    # OverflowError (math range error): the budget spent, no model, no parameter named.
    with recording() as drawn, pytest.raises(ValueError, match="clip_norm"):
        _fit(_corpus(), n_components=3, clip_norm=1e-310)
    assert drawn == []
    with recording() as drawn:
        m = _fit(_corpus(), n_components=3, clip_norm=2.0 ** -850)
    assert np.all(np.isfinite(m.components_)) and len(drawn) == m.n_iter_


def test_a_given_doc_topic_prior_is_the_e_steps_at_every_epsilon(monkeypatch):
    # _FIT_DOC_TOPIC_PRIOR replaces only the default prior: a user's doc_topic_prior
    # is what every E-step uses (and transform's, unchanged), at eps 8 as at eps 1.
    alphas = []
    real = P._expected_counts

    def spy(X, beta, alpha, *args, **kw):
        if alpha is not None:                    # None: the norm histogram (no E-step)
            alphas.append(alpha)
        return real(X, beta, alpha, *args, **kw)
    monkeypatch.setattr(P, "_expected_counts", spy)
    for eps in (1.0, 8.0):
        alphas.clear()
        m = _fit(_corpus(), n_components=3, target_epsilon=eps, doc_topic_prior=0.2)
        assert alphas == [0.2] * m.n_iter_ and m.doc_topic_prior_ == 0.2
