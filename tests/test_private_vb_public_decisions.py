"""PrivateBatchLDA's decisions are public: the E-step prior, each release's post-processing
and the noise scales depend on public parameters and the releases only, never on the
documents; every release (the norm histogram included) has its stated sensitivity whatever
the prior and K; the report is the closed-form zCDP composition of the recorded sigmas;
neighbours fit alike; ``fit_distributed`` takes the same path bit for bit; release /
transform / pickle expose nothing else.

The adversary of DESIGN.md knows the code, the public parameters and every document but
one, and picks the neighbours.
"""
import json
import math
import pickle
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar

from _private_vb import fit_quietly as _fit, poisson_corpus
from dptm.models import private_vb as P
from dptm.models.private_vb import PrivateBatchLDA


def _corpus(seed=0, D=40, V=12):
    return poisson_corpus(seed, D, V)


def _with(X, row):
    return sp.vstack([X, sp.csr_matrix(np.asarray(row, dtype=np.int64).reshape(1, -1))]).tocsr()


def _neighbours(X):
    """Worst-case add/remove neighbours of X: a huge one-word document, a one-token
    document, every word at once, an empty document, the last document removed."""
    V = X.shape[1]
    one_word = np.zeros(V, np.int64)
    one_word[V - 1] = 10 ** 6
    one_tok = np.zeros(V, np.int64)
    one_tok[0] = 1
    return {"huge_one_word": _with(X, one_word), "one_token": _with(X, one_tok),
            "all_words": _with(X, np.full(V, 50)), "empty": _with(X, np.zeros(V)),
            "removed": X[:-1]}


def _spy(monkeypatch):
    """Record the E-step prior of every model statistic and the post-processing step of
    every release (by its model-release index)."""
    log = {"alpha": [], "eb": [], "posts": []}
    real_stat, real_post = P._expected_counts, P._post_process

    def stat(X, beta, alpha, *a, **kw):
        if alpha is not None:                  # None: the norm histogram (no E-step)
            log["alpha"].append(alpha)
        return real_stat(X, beta, alpha, *a, **kw)

    def post(step, est, sd, eta, threshold=None, start=None):
        log["posts"].append(step)
        if step == "posterior-mean":
            log["eb"].append(len(log["posts"]) - 1)
        return real_post(step, est, sd, eta, threshold, start=start)
    monkeypatch.setattr(P, "_expected_counts", stat)
    monkeypatch.setattr(P, "_post_process", post)
    return log


def _clear(log):
    log["alpha"].clear(), log["eb"].clear(), log["posts"].clear()


# ------------------------------------------------------------ (a) public decisions only
@pytest.mark.parametrize("eps", [1.99, 2.0, 4.0, 8.0])
@pytest.mark.parametrize("K", [1, 2, 7])
def test_fit_prior_and_post_processing_depend_on_public_parameters_only(monkeypatch, eps, K):
    X = _corpus()
    plan = P.fit_plan(eps, 1e-5, K, X.shape[1])
    n = len(plan) - 1
    want_posts = [r.post for r in plan[1:]]
    want_eb = [i for i, p in enumerate(want_posts) if p == "posterior-mean"]
    assert want_eb == ([n - 3, n - 2] if eps >= P._SHRINK_MIN_EPSILON else [])
    want_alpha = P._FIT_DOC_TOPIC_PRIOR if eps >= P._FIT_PRIOR_MIN_EPSILON else 1.0 / K
    log = _spy(monkeypatch)
    seen = {}
    for name, data in {"base": X, **_neighbours(X)}.items():
        _clear(log)
        m = _fit(data, n_components=K, target_epsilon=eps)
        # the clip bound, noise scales and report are post-processing of the histogram
        # release (compared with it forced in test_private_vb_sensitivity.py)
        seen[name] = (list(log["alpha"]), list(log["posts"]), m.doc_topic_prior_, m.n_iter_,
                      m.plan_)
        assert log["alpha"] == [want_alpha] * n, name
        assert log["posts"] == want_posts and log["eb"] == want_eb, name
        assert np.all(np.isfinite(m.components_)), name
    assert len({repr(v) for v in seen.values()}) == 1
    # a given prior is used throughout (the posterior means do not depend on it); public
    # init_topics: below _START_SEARCH_MIN_EPSILON one count release shrunk towards them
    # (neither the fit prior nor the posterior means), from it the random start's plan
    searched = eps >= P._START_SEARCH_MIN_EPSILON
    for kw, alpha, posts, eb in (
            (dict(doc_topic_prior=0.05), 0.05, want_posts, want_eb),
            (dict(init_topics=np.ones((K, X.shape[1]))),
             want_alpha if searched else 1.0 / K,
             want_posts if searched else ["final-to-start"], want_eb if searched else [])):
        for data in (X, _neighbours(X)["huge_one_word"]):
            _clear(log)
            _fit(data, n_components=K, target_epsilon=eps, **kw)
            assert log["alpha"] == [alpha] * len(posts) and log["eb"] == eb
            assert log["posts"] == posts


def test_custom_schedules_are_hard_thresholded_at_public_positions(monkeypatch):
    # a given schedule: every search release hard-thresholded, the last one "final"
    X = _corpus()
    log = _spy(monkeypatch)
    for sched in ((("counts", 1),), (("presence", 1), ("counts", 1)),
                  (("presence", 1),) * 5 + (("counts", 1),)):
        for data in (X, X[:-1]):
            _clear(log)
            m = _fit(data, n_components=3, target_epsilon=4.0, schedule=sched)
            assert log["posts"] == ["threshold"] * (len(sched) - 1) + ["final"]
            assert np.all(np.isfinite(m.components_))


def test_the_norm_histogram_moves_by_one_in_one_bin():
    # add/remove one document: the histogram statistic changes by exactly 1 in one bin
    # (L2 sensitivity 1, as the report's first event says), whatever the document
    X = _corpus()
    base = P._expected_counts(X, np.zeros((1, 80)), None, None, 1.0, "norm-histogram")
    assert base.shape == (1, P._BINS_PER_OCTAVE * P._OCTAVES) and base.sum() == X.shape[0]
    for name, Y in _neighbours(X).items():
        other = P._expected_counts(Y, np.zeros((1, 80)), None, None, 1.0, "norm-histogram")
        diff = np.abs(other - base)
        assert diff.sum() == 1 and diff.max() == 1, name
    m = _fit(X, n_components=3, target_epsilon=2.0)
    first = m.privacy_.event.events[0]
    assert first.sensitivity == 1.0 and first.discrete


# ---------------------------------------------------- (b) sensitivity clip_norm, any alpha
def _exact_sq_norm_le(stat, g, C):
    m = stat / g
    assert np.array_equal(m, np.round(m))        # on the lattice
    mi = [int(v) for v in m.ravel()]
    return sum(v * v for v in mi) <= Fraction(C) ** 2 / Fraction(g) ** 2


@pytest.mark.parametrize("K", [1, 2, 500])
def test_every_document_contributes_at_most_clip_norm_whatever_the_prior(K):
    # the neighbour's statistic minus the base's is exactly the added document's lattice
    # contribution, of L2 norm <= clip_norm, for the fit prior 0.35 and extreme user priors,
    # for topics from the random start, after the posterior-mean search step, and degenerate ones
    rng = np.random.default_rng(K)
    X = _corpus(D=15)
    V = X.shape[1]
    C = 1.0
    sigma = 4.2
    g = P._granularity(sigma)
    release = np.abs(rng.normal(0, 3 * sigma, (K, V))) * (rng.random((K, V)) < 0.3) \
        + rng.normal(0, sigma, (K, V))
    betas = {"start": 1.0 + 0.1 * rng.random((K, V)),
             "eb_search": P._post_process("posterior-mean", release, sigma, 1.0 / K),
             "prior_only": np.full((K, V), 1e-300),
             "huge": np.full((K, V), 1e300) * (1 + rng.random((K, V)))}
    weights = 10.0 ** rng.uniform(-2, 2, V)           # _expected_counts' word_weight
    adds = [r for name, r in _neighbours(X).items() if name != "removed"]
    for alpha in (P._FIT_DOC_TOPIC_PRIOR, 5e-324, 1e-300, 1e300, 1.7e308):
        for bname, beta in betas.items():
            for presence, ww in ((True, None), (False, weights)):
                with np.errstate(all="ignore"):
                    base = P._expected_counts(X, beta, alpha, C, g, presence, word_weight=ww)
                    for Y in adds:
                        d = Y[-1:]
                        one = P._expected_counts(d, beta, alpha, C, g, presence, word_weight=ww)
                        both = P._expected_counts(Y, beta, alpha, C, g, presence, word_weight=ww)
                        assert np.all(np.isfinite(both)), (alpha, bname)
                        np.testing.assert_array_equal(both - base, one)
                        assert _exact_sq_norm_le(one, g, C), (alpha, bname, presence)


# --------------------------------------------------- (c) the report: unchanged, closed form
def _zcdp_epsilon(rho, delta):
    # Canonne, Kamath, Steinke 2020 Prop. 12 (the accountant's improved conversion),
    # minimised over continuous alpha > 1
    f = lambda a: (a * rho + math.log1p(-1.0 / a)
                   - (math.log(delta) + math.log(a)) / (a - 1))
    res = minimize_scalar(f, bounds=(1.0 + 1e-9, 1e6), method="bounded",
                          options={"xatol": 1e-10})
    return res.fun


@pytest.mark.parametrize("eps", [4.0, 8.0, 20.0])
def test_report_is_the_closed_form_zcdp_of_the_recorded_sigmas_and_unchanged(monkeypatch, eps):
    X = _corpus()
    delta = 1e-5
    m = _fit(X, n_components=4, target_epsilon=eps, target_delta=delta, clip_norm=2.5)
    rho = sum(2.5 ** 2 / (2 * s * s) for s in m.release_sigmas_)
    want = _zcdp_epsilon(rho, delta)
    got = m.privacy_.epsilon(delta)
    assert got <= eps
    assert got == pytest.approx(want, rel=2e-3)
    assert got >= want - 1e-9                    # no bound below the closed form
    # the change leaves every public/accounted quantity as it was: the same fit with the
    # new decisions switched off has the same sigmas, report and transform seed
    monkeypatch.setattr(P, "_FIT_PRIOR_MIN_EPSILON", math.inf)
    monkeypatch.setattr(P, "_SHRINK_MIN_EPSILON", math.inf)
    old = _fit(X, n_components=4, target_epsilon=eps, target_delta=delta, clip_norm=2.5)
    assert old.release_sigmas_ == m.release_sigmas_
    assert str(old.privacy_) == str(m.privacy_)
    assert old.transform_seed_ == m.transform_seed_
    assert not np.array_equal(old.components_, m.components_)   # the change is live here


# ------------------------------------------------------------ (d) finite, same refusals
def _outcome(data, **kw):
    try:
        with np.errstate(all="ignore"):
            m = _fit(data, **kw)
    except Exception as exc:                    # noqa: BLE001 - the refusal is the outcome
        return ("raised", type(exc).__name__, str(exc))
    assert np.all(np.isfinite(m.components_)) and np.all(np.isfinite(m.topic_word_)), kw
    assert np.allclose(m.topic_word_.sum(axis=1), 1.0)
    return ("fitted", tuple(m.release_sigmas_), str(m.privacy_),
            tuple(sorted(k for k in vars(m) if k.endswith("_"))))


@pytest.mark.parametrize("kw", [
    dict(n_components=1), dict(n_components=2), dict(n_components=30),
    dict(n_components=2, doc_topic_prior=5e-324), dict(n_components=3, doc_topic_prior=1.7e308),
    dict(n_components=3, topic_word_prior=5e-324), dict(n_components=3, topic_word_prior=1e300),
    dict(n_components=3, clip_norm=2.0 ** -850), dict(n_components=3, clip_norm=2.0 ** 940),
    dict(n_components=3, threshold=0.0), dict(n_components=2, target_epsilon=1e4, clip_norm=1.0),
])
def test_neighbours_fit_alike_and_finite_at_eps_4_and_up(kw):
    X = _corpus(D=25)
    kw = dict(kw)
    epss = (kw.pop("target_epsilon"),) if "target_epsilon" in kw else (4.0, 8.0)
    for eps in epss:
        out = {name: _outcome(data, target_epsilon=eps, **kw)
               for name, data in {"base": X, **_neighbours(X)}.items()}
        assert len(set(out.values())) == 1, out
        assert next(iter(out.values()))[0] == "fitted"


def test_one_token_corpus_and_its_neighbours():
    # the smallest corpora the guarantee covers (at least one token): a single token, and
    # it plus a worst-case document; both fit, same report
    V = 12
    X = sp.csr_matrix(np.eye(1, V, 3, dtype=np.int64))
    for K in (1, 2, 7):
        outs = {name: _outcome(data, n_components=K, target_epsilon=4.0)
                for name, data in {"base": X, **_neighbours(X)}.items() if name != "removed"}
        assert len(set(outs.values())) == 1, outs


def test_posterior_mean_search_is_finite_and_never_below_the_prior_on_adversarial_releases():
    rng = np.random.default_rng(3)
    eta = 0.25
    cases = []
    for sd in (2.0 ** -900, 1e-200, 1.0, 1e200, 1e280):
        for K in (1, 2, 20):
            V = 30
            cases += [(np.zeros((K, V)), sd), (np.full((K, V), -5 * sd), sd),
                      (np.full((K, V), 1e15 * sd), sd), (rng.normal(0, sd, (K, V)), sd),
                      (np.where(rng.random((K, V)) < 0.05, 1e12 * sd, 0.0), sd),
                      (np.full((K, V), 1.0000001 * sd), sd)]
    for est, sd in cases:
        with np.errstate(all="ignore"):
            out = P._post_process("posterior-mean", est, sd, eta)
        assert out.shape == est.shape and np.all(np.isfinite(out)), (sd, est[0, :3])
        assert np.all(out >= eta)
        np.testing.assert_array_equal(out[est <= sd], eta)


# ----------------------------------------------------------------- (e) fit_distributed
@pytest.mark.parametrize("kw", [dict(target_epsilon=4.0), dict(target_epsilon=8.0),
                                dict(target_epsilon=8.0, doc_topic_prior=0.3)])
def test_fit_distributed_takes_the_same_path_bit_for_bit_from_eps_4(monkeypatch, kw):
    import dptm.distributed as ddist
    from dptm.distributed import fit_distributed
    X = _corpus(D=30)
    K = 3
    single = _fit(X, n_components=K, random_state=11, **kw)
    alphas = []
    real = ddist._vb_stat

    def vb_stat(X, beta, alpha, *a):
        if alpha is not None:                  # None: the norm histogram (no E-step)
            alphas.append(alpha)
        return real(X, beta, alpha, *a)
    monkeypatch.setattr(ddist, "_vb_stat", vb_stat)
    want_alpha = kw.get("doc_topic_prior", P._FIT_DOC_TOPIC_PRIOR)
    for parts in (1, 3):
        alphas.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dist = fit_distributed(PrivateBatchLDA(K, random_state=11, **kw), X, "serial",
                                   n_partitions=parts)
        assert set(alphas) == {want_alpha} and len(alphas) == parts * dist.n_iter_
        np.testing.assert_array_equal(dist.components_, single.components_)
        np.testing.assert_array_equal(dist.topic_word_, single.topic_word_)
        assert dist.release_sigmas_ == single.release_sigmas_
        assert str(dist.privacy_) == str(single.privacy_)
        assert dist.transform_seed_ == single.transform_seed_
        assert dist.doc_topic_prior_ == single.doc_topic_prior_
        assert sorted(k for k in vars(dist) if k.endswith("_")) == \
            sorted(k for k in vars(single) if k.endswith("_"))
        np.testing.assert_array_equal(dist.release().components, single.release().components)


# --------------------------------------------------- (f) release / transform / pickle
def test_release_transform_and_pickle_keep_the_public_prior(tmp_path, monkeypatch):
    from dptm.models import _base
    from dptm.release import Release
    X = _corpus()
    K = 4
    m = _fit(X, n_components=K, target_epsilon=8.0)
    assert m.doc_topic_prior_ == 1.0 / K and m.get_params()["doc_topic_prior"] is None
    rel = m.release()
    assert rel.doc_topic_prior == 1.0 / K
    rel.save(tmp_path / "r")
    meta = json.loads((tmp_path / "r" / "release.json").read_text())
    assert meta["doc_topic_prior"] == 1.0 / K
    back = Release.load(tmp_path / "r")
    np.testing.assert_array_equal(back.topic_word, m.topic_word_)
    # a pickle holds the same state as before the change (no fit prior, no releases)
    assert sorted(vars(pickle.loads(pickle.dumps(m)))) == sorted(vars(m))
    assert not any(isinstance(v, float) and v == P._FIT_DOC_TOPIC_PRIOR for v in vars(m).values())
    seen = []
    real = _base._fold_in_counts

    def spy(tw, Xt, alpha, *a):
        seen.append(alpha)
        return real(tw, Xt, alpha, *a)
    monkeypatch.setattr(_base, "_fold_in_counts", spy)
    m.transform(X[:3])
    assert seen == [1.0 / K]


# ------------------------------------ (b') adaptive sensitivity inside real fits, any release
@pytest.mark.parametrize("eps", [4.0, 8.0])
@pytest.mark.parametrize("K", [1, 2, 20])
def test_in_every_release_of_a_real_fit_the_added_document_moves_the_sum_by_at_most_clip_norm(
        monkeypatch, eps, K):
    # Conditioned on the earlier outputs (so on the topics and word weights actually used:
    # the posterior-mean steps', the fit prior's), the statistic of X + d minus that of X is
    # exactly d's lattice contribution, of norm <= clip_norm, in every release.
    X = _corpus(D=25)
    real = P._expected_counts
    checked = []
    for name, Y in _neighbours(X).items():
        if name == "removed":
            continue
        base, d = Y[:-1], Y[-1:]

        def stat(Z, beta, alpha, norm, granularity=None, presence=False, n_threads=1,
                 word_weight=None):
            full = real(Z, beta, alpha, norm, granularity, presence, n_threads, word_weight)
            if Z.shape[0] == Y.shape[0]:
                rest = real(base, beta, alpha, norm, granularity, presence, 1, word_weight)
                one = real(d, beta, alpha, norm, granularity, presence, 1, word_weight)
                np.testing.assert_array_equal(full - rest, one)
                assert _exact_sq_norm_le(one, granularity, norm)
                checked.append(alpha)
            return full
        monkeypatch.setattr(P, "_expected_counts", stat)
        m = _fit(Y, n_components=K, target_epsilon=eps, clip_norm=3.0)
        assert np.all(np.isfinite(m.components_))
    assert checked == [P._FIT_DOC_TOPIC_PRIOR] * (4 * (len(P.fit_plan(eps, 1e-5, K, 12)) - 1))


def test_n_jobs_does_not_change_the_fit_from_eps_4():
    X = _corpus(D=30)
    a = _fit(X, n_components=4, target_epsilon=4.0, n_jobs=1)
    b = _fit(X, n_components=4, target_epsilon=4.0, n_jobs=2)
    np.testing.assert_array_equal(a.components_, b.components_)
    assert str(a.privacy_) == str(b.privacy_)
