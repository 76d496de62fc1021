"""PrivateBatchLDA: document-level private batch VB (issue #15)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import psi

from dptm.accounting import ComposedEvent, SelfComposedEvent, calibrate_gaussian
from dptm.datasets import make_lda_corpus
from dptm.models import private_vb, vb_statistic
from dptm.models.private_vb import PrivateBatchLDA, _expected_counts
from dptm.models.user_contributions import user_expected_counts
from dptm.noise.releases import recording

from _releases import force_lattice_releases


def _corpus(seed=0, D=60, V=12):
    r = np.random.default_rng(seed)
    return sp.csr_matrix(r.poisson(0.8, size=(D, V)).astype(np.int64))


class _fit(PrivateBatchLDA):
    """PrivateBatchLDA whose fit ignores the test-mode warning (these tests use seeds)."""

    def fit(self, X, y=None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return super().fit(X, y)


def _estep_one_doc(ids, cnts, exp_elog_beta, alpha, n_inner=50, tol=1e-3):
    """Textbook per-document VB E-step (Blei et al. 2003), stopped when the mean absolute
    change of gamma is below ``tol`` or after ``n_inner`` updates (the estimator's rule)."""
    K = exp_elog_beta.shape[0]
    gamma = np.full(K, alpha + cnts.sum() / K)
    eb = exp_elog_beta[:, ids]
    for _ in range(n_inner):
        et = np.exp(psi(gamma) - psi(gamma.sum()))
        new = alpha + et * (eb @ (cnts / (et @ eb)))
        done = np.abs(new - gamma).mean() < tol
        gamma = new
        if done:
            break
    et = np.exp(psi(gamma) - psi(gamma.sum()))
    return np.outer(et, cnts / (et @ eb)) * eb


def test_statistic_matches_the_per_document_estep_and_norms():
    X = _corpus()
    beta = 1.0 + np.random.default_rng(1).random((3, X.shape[1]))
    eb = np.exp(psi(beta) - psi(beta.sum(axis=1, keepdims=True)))
    want = np.zeros_like(beta)
    for d in range(X.shape[0]):
        lo, hi = X.indptr[d], X.indptr[d + 1]
        if hi > lo:
            c = _estep_one_doc(X.indices[lo:hi], X.data[lo:hi].astype(float), eb, 0.3)
            want[:, X.indices[lo:hi]] += c * (0.7 / np.sqrt((c * c).sum()))
    got = _expected_counts(X, beta, 0.3, 0.7)
    np.testing.assert_allclose(got, want, rtol=1e-9)
    one = _expected_counts(X[:1], beta, 0.3, 0.7)
    assert np.sqrt((one ** 2).sum()) == pytest.approx(0.7, rel=1e-12)
    # additive over blocks (the distributed contract)
    np.testing.assert_allclose(_expected_counts(X[:25], beta, 0.3, 0.7)
                               + _expected_counts(X[25:], beta, 0.3, 0.7), got, rtol=1e-10)


@pytest.mark.parametrize("K", [3, 100])
def test_every_document_stops_at_the_public_update_cap(monkeypatch, K):
    """Every document's E-step stops after ``_DOC_UPDATES`` (50) updates (some of these need
    more), at document and user level and whatever the chunking: catches a cap lost on one
    path (a chunk or the user-level statistic run with the kernel's own default, or to
    convergence), which would also make the single and the distributed fit differ."""
    cap = vb_statistic._DOC_UPDATES
    assert cap == 50
    X = _corpus()
    beta = 1.0 + np.random.default_rng(1).random((K, X.shape[1]))
    eb = np.exp(psi(beta) - psi(beta.sum(axis=1, keepdims=True)))

    def reference(n_inner):
        want = np.zeros_like(beta)
        for d in range(X.shape[0]):
            lo, hi = X.indptr[d], X.indptr[d + 1]
            if hi > lo:
                want[:, X.indices[lo:hi]] += _estep_one_doc(
                    X.indices[lo:hi], X.data[lo:hi].astype(float), eb, 0.3, n_inner)
        return want

    capped = reference(cap)
    assert not np.allclose(capped, reference(cap + 1), rtol=1e-9)   # the cap matters here
    ptr = np.arange(X.shape[0] + 1, dtype=np.int64)                 # one document per user
    got = [_expected_counts(X, beta, 0.3, 1e9),
           user_expected_counts(X, ptr, beta, 0.3, 1e9)]
    monkeypatch.setattr(vb_statistic, "_CHUNK_NNZ", 7)              # many chunks
    got.append(_expected_counts(X, beta, 0.3, 1e9))
    for g in got:
        np.testing.assert_allclose(g, capped, rtol=1e-9)


def test_lattice_rounding_is_down_exact_and_norm_preserving():
    X = _corpus(3)
    beta = 1.0 + np.random.default_rng(2).random((4, X.shape[1]))
    g = 2.0 ** -9
    for d in range(5):
        one = _expected_counts(X[d:d + 1], beta, 0.25, 1.0, granularity=g)
        assert np.array_equal(one / g, np.floor(one / g))           # on the lattice
        assert np.sqrt((one ** 2).sum()) <= 1.0                    # never above the bound
        exact = _expected_counts(X[d:d + 1], beta, 0.25, 1.0)
        assert np.all(one <= exact) and np.all(exact - one < g)     # rounded down, by < g
    total = _expected_counts(X, beta, 0.25, 1.0, granularity=g)
    assert np.array_equal(total / g, np.floor(total / g))


def test_releases_split_the_budget_in_the_schedule_shares():
    sched = (("presence", 1), ("presence", 1), ("presence", 1), ("counts", 3))
    m = _fit(3, target_epsilon=2.0, schedule=sched, clip_norm=1.0, random_state=0).fit(_corpus())
    ev = m.privacy_.event
    assert isinstance(ev, ComposedEvent) and len(ev.events) == 2
    assert isinstance(ev.events[0], SelfComposedEvent) and ev.events[0].count == 3
    eps = m.privacy_.epsilon(1e-5, method="rdp")
    assert 1.99 < eps <= 2.0
    # shares 1/6, 1/6, 1/6, 1/2 of one release's budget: sigma_i = z / sqrt(share_i)
    z = calibrate_gaussian(2.0, 1e-5, steps=1, discrete=True)
    want = [z * np.sqrt(6), z * np.sqrt(6), z * np.sqrt(6), z * np.sqrt(2)]
    np.testing.assert_allclose(m.release_sigmas_, np.multiply(want, m.clip_norm), rtol=1e-4)
    assert m.max_iter == m.n_iter_ == 4
    for v in vars(m).values():
        assert not isinstance(v, (np.random.Generator, np.random.BitGenerator))


def test_word_weights_multiply_a_document_before_it_is_scaled_to_the_norm():
    # one document's weighted contribution is its unweighted one times the weights,
    # rescaled to the same norm (the sensitivity), for counts and presence alike
    X = _corpus()
    rng = np.random.default_rng(5)
    beta = 1.0 + rng.random((3, X.shape[1]))
    w = 10.0 ** rng.uniform(-2, 2, X.shape[1])
    for presence in (False, True):
        for d in (0, 11, 42):
            plain = private_vb._expected_counts(X[d:d + 1], beta, 0.3, 0.7, presence=presence)
            got = private_vb._expected_counts(X[d:d + 1], beta, 0.3, 0.7, presence=presence,
                                              word_weight=w)
            want = plain * w
            want *= 0.7 / np.linalg.norm(want)
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15)
            assert np.linalg.norm(got) <= 0.7

def test_every_release_uses_every_document_with_its_statistic(monkeypatch):
    # the statistic of each release is the sum over ALL documents (no partition), with
    # the schedule's presence / counts statistic, at the release's lattice step
    seen = []
    real = private_vb._expected_counts

    def spy(X, beta, alpha, norm, granularity=None, presence=False, n_threads=1,
            word_weight=None):
        seen.append((X.shape[0], presence, granularity, word_weight is not None))
        return real(X, beta, alpha, norm, granularity, presence, n_threads, word_weight)
    monkeypatch.setattr(private_vb, "_expected_counts", spy)
    X = _corpus()
    m = _fit(3, schedule=(("presence", 1), ("counts", 1), ("presence", 2)),
             random_state=0).fit(X)
    # the norm histogram first (the clip bound), then the model releases
    assert [(d, p) for d, p, _, _ in seen] == [(60, "norm-histogram"), (60, True), (60, False),
                                               (60, True)]
    assert [g for _, _, g, _ in seen[1:]] == [private_vb._granularity(s)
                                              for s in m.release_sigmas_]
    assert [w for *_, w in seen] == [False] * 4


@pytest.mark.parametrize("param,value", [("target_epsilon", -1.0), ("clip_norm", 0.0),
                                         ("n_components", 0), ("threshold", -1.0),
                                         ("schedule", (("counts", 0),)),
                                         ("schedule", (("words", 1),)),
                                         ("schedule", ()), ("schedule", (1, 2)),
                                         ("target_delta", 1.5),
                                         ("init_topics", np.ones((2, 12)))])
def test_bad_input_names_parameter(param, value):
    with pytest.raises((ValueError, TypeError), match=param.split("_")[0]):
        PrivateBatchLDA(**{"n_components": 3, param: value}).fit(_corpus())


def test_a_clip_norm_that_would_overflow_is_refused_before_any_release():
    # clip_norm 1e307 would release inf everywhere
    with pytest.raises(ValueError, match="clip_norm"):
        PrivateBatchLDA(3, clip_norm=1e307).fit(_corpus())
    m = _fit(3, clip_norm=1e250, random_state=0).fit(_corpus())
    assert np.all(np.isfinite(m.components_))


def test_noise_drawn_matches_the_recorded_events():
    # Every release as drawn: the statistic (already on the lattice) and the noisy output.
    # The noise is g times an integer and its spread matches the stage's recorded sigma:
    # tolerance 6 standard errors of the sample std (false-alarm rate < 1e-8).
    noise = {0: [], 1: []}
    sched = (("presence", 0.25), ("presence", 0.25), ("counts", 0.5))
    for seed in range(12):
        with recording() as draws:
            m = _fit(3, target_epsilon=2.0, schedule=sched, clip_norm=1.0,
                     random_state=seed).fit(_corpus())
        for i, d in enumerate(draws):
            g = d.release.granularity_
            assert np.array_equal(d.statistic / g, np.rint(d.statistic / g))   # no slack
            k = (d.noisy - d.statistic) / g
            assert np.array_equal(k, np.rint(k))
            noise[0 if i < 2 else 1].append(k.ravel() * g)
    first, last = m.privacy_.event.events
    for s, leaf in ((0, first.event), (1, last)):
        x = np.concatenate(noise[s])
        assert leaf.discrete and leaf.sensitivity == m.clip_norm
        assert abs(x.std() - leaf.sigma) < 6 * leaf.sigma / np.sqrt(2 * x.size)


def test_report_and_release_metadata_are_the_same_without_one_document():
    # add/remove adjacency: nothing but the privatized topics may tell X from X[:-1]
    X = _corpus()
    fits = [_fit(3, random_state=5).fit(data) for data in (X, X[:-1])]
    a, b = (m.release() for m in fits)
    assert a.privacy.to_state() == b.privacy.to_state() and str(a.privacy) == str(b.privacy)
    assert a.hyperparameters == b.hyperparameters and a.vocabulary == b.vocabulary
    # every fitted attribute but the released topics, the noisy histogram's post-processing
    # (clip bound, noisy count) and the public fold-in seed is the same on both
    # neighbours: no true document count is stored
    for name, value in vars(fits[0]).items():
        if name.endswith("_") and name not in ("components_", "topic_word_", "transform_seed_",
                                               "privacy_", "clip_norm_", "n_documents_estimate_",
                                               "release_sigmas_", "sigma_", "sensitivity_"):
            assert np.array_equal(np.asarray(value), np.asarray(getattr(fits[1], name))), name


def test_learns_the_topics_at_a_moderate_budget():
    # 3,000 synthetic documents, eps = 8: the private topics are far better than uniform
    # (perplexity V = 300) and within 1.6x of the generating topics' (measured 1.41x; a
    # broken E-step or noise scale gives several times that).
    X, phi, _ = make_lda_corpus(3300, 300, 5, doc_length=60, random_state=0)
    Xtr, Xte = X[:3000], X[3000:]
    m = _fit(5, target_epsilon=8.0, random_state=1).fit(Xtr)
    from dptm.release import fold_in
    from dptm.metrics import perplexity
    true = perplexity(Xte, fold_in(phi, Xte, 0.2, 50, 0), phi)
    got = m.perplexity(Xte)
    assert got < 1.6 * true and got < 0.1 * 300


def test_public_init_topics_are_used_and_reported():
    X, phi, _ = make_lda_corpus(400, 50, 3, doc_length=40, random_state=2)
    m = _fit(3, target_epsilon=4.0, schedule=(("counts", 1),), init_topics=phi,
             random_state=0).fit(X)
    assert any("init_topics" in a for a in m.privacy_.assumed_public)
    # one release from the true topics keeps each topic matched to its generator
    cos = (m.topic_word_ / np.linalg.norm(m.topic_word_, axis=1, keepdims=True)) @ \
        (phi / np.linalg.norm(phi, axis=1, keepdims=True)).T
    assert np.all(np.diag(cos) > 0.8)


def test_fit_is_the_same_for_every_n_jobs():
    X = _corpus(4, D=80)
    fits = [_fit(3, n_jobs=j, random_state=7).fit(X)
            for j in (None, 2, -1)]
    for m in fits[1:]:
        assert np.array_equal(m.components_, fits[0].components_)
    with pytest.raises(ValueError, match="n_jobs"):
        PrivateBatchLDA(3, n_jobs=0).fit(X)


def test_denoise_golden_values():
    # sigma 2: threshold 3 cuts at 6, eta added
    est = np.array([[-5.0, 0.0, 6.0, 6.5], [7.0, 20.0, 100.0, 5.99]])
    got = private_vb._denoise(est, 2.0, 0.1, 3.0)
    want = np.array([[0.1, 0.1, 0.1, 6.6], [7.1, 20.1, 100.1, 0.1]])
    assert np.allclose(got, want, rtol=0, atol=1e-12)
    assert np.array_equal(private_vb._denoise(est, 2.0, 0.0, 3.0), np.where(est > 6, est, 0))
    assert np.array_equal(est, [[-5.0, 0.0, 6.0, 6.5], [7.0, 20.0, 100.0, 5.99]])  # unmutated


def test_topics_are_a_function_of_the_releases_only(monkeypatch):
    # post-processing may use only the noisy releases and public parameters: with every
    # release forced to the same values, X and X[:-1] (and a different corpus) give
    # identical topics
    def forced(release, stat, noisy):
        fixed = np.random.default_rng(7).normal(0, 3 * release.sigma_, size=stat.shape)
        return np.abs(fixed) * (np.arange(stat.size).reshape(stat.shape) % 3)
    force_lattice_releases(monkeypatch, forced)
    X = _corpus()
    fits = [_fit(3, random_state=5).fit(data) for data in (X, X[:-1], _corpus(seed=1))]
    for m in fits[1:]:
        assert np.array_equal(m.components_, fits[0].components_)
    # and the forced releases did reach the topics (not a vacuous comparison)
    assert np.unique(fits[0].components_).size > 2


def test_combine_releases_golden_values():
    # unbiased earlier release (sd 1) and final (sd 2): inverse-variance weights 0.8 / 0.2
    a, f = np.full((2, 3), 10.0), np.full((2, 3), 10.0)
    a[0, 0], f[0, 0] = 12.0, 7.0            # difference 5 on one entry of six selected
    est, sd = private_vb._combine_releases([(a, 1.0), (f, 2.0)], 3.0)
    # b^2 = max(0, 25 / 6 - 1 - 4) = 0
    assert np.allclose(est, 0.8 * a + 0.2 * f, rtol=0, atol=1e-12)
    assert sd == pytest.approx(np.sqrt(0.64 * 1 + 0.04 * 4), abs=1e-12)
    # biased earlier release (+10 everywhere): b^2 = 100 - 5 = 95, weights 1/96 : 1/4
    est, sd = private_vb._combine_releases([(f + 10.0, 1.0), (f, 2.0)], 3.0)
    assert np.allclose(est, 0.04 * (f + 10.0) + 0.96 * f, rtol=0, atol=1e-12)
    assert sd == pytest.approx(np.sqrt(0.04 ** 2 + 0.96 ** 2 * 4), abs=1e-12)
    # nothing above the threshold: no bias estimate, plain inverse-variance weights
    z = np.zeros((2, 3))
    est, sd = private_vb._combine_releases([(z + 1, 1.0), (z, 1.0)], 3.0)
    assert np.allclose(est, 0.5, rtol=0, atol=1e-12) and sd == pytest.approx(np.sqrt(0.5))
    a0 = a.copy()
    private_vb._combine_releases([(a, 1.0), (f, 2.0)], 3.0)
    assert np.array_equal(a, a0)                                   # inputs not mutated


def test_released_topics_combine_the_last_two_releases():
    # the last two releases both reach the topics, as _combine_releases prescribes (a
    # regression to "final release only" fails this); the first one does not
    sched = (("presence", 1), ("presence", 1), ("counts", 2))
    with recording() as draws:
        m = _fit(3, random_state=2, schedule=sched, threshold=0.0).fit(_corpus())
    seen = [(d.noisy, d.event.sigma) for d in draws]
    assert len(seen) == 4                   # the norm histogram, then the three releases
    est, sd = private_vb._combine_releases(seen[2:], private_vb._COMBINE_THRESHOLD)
    eta = m.topic_word_prior_
    beta = private_vb._post_process("final", est, sd, eta, m.threshold)
    assert np.allclose(m.components_, beta, rtol=1e-12, atol=0)
    (nf, sf) = seen[3]
    only_final = private_vb._denoise(nf, sf, eta, m.threshold)
    assert not np.allclose(m.components_ - m.components_.min(), only_final - only_final.min())


def test_default_plan_is_a_function_of_the_public_inputs():
    # golden values: the histogram (share 0.02, sensitivity 1), then n search releases of
    # equal shares (n = floor(0.6 (4.25 / z)^2) in [3, 12]) and the count release of 0.4
    from dptm.accounting import calibrate_gaussian
    for eps, n in ((0.5, 3), (1.0, 3), (2.0, 3), (3.0, 4), (4.0, 8), (8.0, 12), (1e5, 12)):
        plan = private_vb.fit_plan(eps, 1e-5, 20, 5000)
        assert plan == private_vb.fit_plan(eps, 1e-5, 20, 5000)
        z = calibrate_gaussian(eps, 1e-5, steps=1, discrete=True)
        assert n == min(12, max(3, int(0.6 * (4.25 / z) ** 2)))
        # the searches count presence while their noise multiplier is at least 1
        search = "presence" if plan[1].z >= 1 else "counts"
        assert (search == "counts") == (eps == 1e5)
        assert [r.statistic for r in plan] == ["norm-histogram"] + [search] * n + ["counts"]
        assert plan[0].post == "clip-bound" and plan[-1].post == "final"
        np.testing.assert_allclose([r.share for r in plan],
                                   [0.02] + [0.98 * 0.6 / n] * n + [0.98 * 0.4], rtol=1e-12)
        # one release's budget split: 1 / z_i^2 sum to 1 / z^2 (up to the 1e-6 raise)
        assert sum(r.z ** -2 for r in plan) == pytest.approx(z ** -2, rel=1e-4)
        posts = [r.post for r in plan[1:-1]]
        if eps < 2:
            assert posts == ["threshold"] * n
        else:
            assert posts[0] == "shrink" and posts[-2:] == ["posterior-mean"] * 2
            assert set(posts[1:-2]) <= {"shrunk-threshold" if eps >= 4 else "threshold"}
    # a public clip bound: no histogram; public init_topics: hard thresholds throughout
    assert [r.statistic for r in private_vb.fit_plan(4.0, 1e-5, 20, 50, clip_norm=2.0)][0] \
        == "presence"
    # public starting topics: the count release alone below _START_SEARCH_MIN_EPSILON, shrunk
    # towards them; from it the random start's plan
    edge = private_vb._START_SEARCH_MIN_EPSILON
    for eps in (0.5, np.nextafter(edge, 0)):
        assert [(r.statistic, r.share, r.post)
                for r in private_vb.fit_plan(eps, 1e-5, 20, 50, public_start=True)] \
            == [("norm-histogram", 0.02, "clip-bound"), ("counts", 0.98, "final-to-start")]
    for eps in (edge, 8.0):
        assert private_vb.fit_plan(eps, 1e-5, 20, 50, public_start=True) \
            == private_vb.fit_plan(eps, 1e-5, 20, 50)
    with pytest.raises(ValueError, match="target_epsilon"):
        private_vb.fit_plan(0.0, 1e-5, 20, 50)
    assert PrivateBatchLDA(3, target_epsilon=1.0).max_iter == 4
    assert PrivateBatchLDA(3, target_epsilon=4.0).max_iter == 9


@pytest.mark.parametrize("eps", [1.0, 2.0, 4.0])
def test_default_plan_draws_the_recorded_sigmas(eps):
    # every release of the default plan is drawn at the sigma the plan and the clip bound
    # set (z_i times the sensitivity: 1 for the histogram, C for the others), recorded in
    # release_sigmas_ / privacy_
    with recording() as draws:
        m = _fit(3, target_epsilon=eps, random_state=0).fit(_corpus())
    seen = [d.event.sigma for d in draws]
    plan = private_vb.fit_plan(eps, 1e-5, 3, 12)
    assert m.plan_ == plan
    np.testing.assert_allclose(seen, [plan[0].z] + [r.z * m.clip_norm_ for r in plan[1:]],
                               rtol=1e-4)
    assert seen[1:] == m.release_sigmas_
    # the noisy document count sums every bin of the histogram release: its sd is that
    # release's sigma times the root of the number of bins (catches fresh round 7, T17:
    # the sd taken from the last model release's sigma)
    assert m.count_estimate_sd_ == pytest.approx(seen[0] * len(private_vb._edges()) ** 0.5,
                                                 rel=1e-12)
    assert m.n_iter_ == len(plan) - 1
    assert eps - 0.01 < m.privacy_.epsilon(1e-5, method="rdp") <= eps
    assert m.clip_norm_ in set(private_vb._edges())


def test_clip_bound_minimises_the_summed_error_of_every_model_release():
    # C = argmin over the bin edges of sum_r [sum_d (|x_d| - C)_+^2 + K V z_r^2 C^2], each
    # document at its bin's upper edge; bins within 4 sd of zero count as empty
    edges = private_vb._edges()
    hist = np.zeros(len(edges))
    hist[[3, 20, 41]] = [500.0, 40.0, 2.0]
    hist[60] = 0.39                                 # noise: below 4 sd (sd 0.1)
    zs = [0.5, 0.5, 0.2]
    K, V = 4, 30
    want = min(edges, key=lambda c: sum(len(zs) * n * max(e - c, 0.0) ** 2
                                        for n, e in zip(hist[[3, 20, 41]], edges[[3, 20, 41]]))
               + sum(K * V * (z * c) ** 2 for z in zs))
    C, n = private_vb.clip_bound(hist, 0.1, zs, K, V)
    assert C == want and n == pytest.approx(hist.sum())
    # one number is the same rule for one release; the releases' mean noise variance rules
    assert C == private_vb.clip_bound(hist, 0.1, float(np.sqrt(np.mean(np.square(zs)))),
                                      K, V)[0]
    # a noisier search release lowers C (the final release alone would clip less)
    assert C < private_vb.clip_bound(hist, 0.1, zs[-1], K, V)[0]
    # without noise nothing is clipped: C is the upper edge of the last non-empty bin
    assert private_vb.clip_bound(hist, 0.1, [1e-9] * 3, K, V)[0] == edges[41]


def test_uninformative_warning_advice_fits_the_epsilon():
    from dptm.models.private_vb import _warn_if_uninformative
    for eps, raise_eps in ((4.0, True), (12.0, False)):
        with warnings.catch_warnings(record=True) as wl:
            warnings.simplefilter("always")
            _warn_if_uninformative(5.0, eps, 1e-5, 20, 1000, "documents", 28.3)
        (msg,) = [str(w.message) for w in wl]
        assert "(a DP noisy count: noise sd 28) at this model's epsilon" in msg and "use more documents" in msg
        assert ("raise epsilon" in msg) is raise_eps       # above 10 the guarantee is vacuous
        assert "rough guide" in msg and "a smaller vocabulary" in msg   # V = 1000 > 10 K
    # a vocabulary of under 10 words a topic is not worth shrinking; one document, singular
    with warnings.catch_warnings(record=True) as wl:
        warnings.simplefilter("always")
        _warn_if_uninformative(1.0, 4.0, 1e-5, 20, 17, "documents")
    (msg,) = [str(w.message) for w in wl]
    assert "about 1 document (" in msg and "smaller vocabulary" not in msg
    assert msg.endswith("raise epsilon, use more documents or fewer topics")
