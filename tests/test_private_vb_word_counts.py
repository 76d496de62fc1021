"""PrivateBatchLDA's public ``word_counts``: the rare words of the final estimate read
from them, by post-processing only (the same noise is drawn, the other entries are those of
the fit without them), with the rule of ``vb_denoise._background_words`` checked against
its closed form, and bad input refused by name."""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from _private_vb import fit_quietly as _fit, poisson_corpus
from dptm.models import vb_denoise
from dptm.models.private_vb import PrivateBatchLDA
from dptm.models.vb_denoise import _BACKGROUND_SD, _background_words


def _zipf_corpus(seed=0, D=300, V=40):
    """Documents whose word frequencies fall like 1 / rank: the tail is rare."""
    r = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, V + 1)
    return sp.csr_matrix(r.poisson(6 * p / p.sum(), size=(D, V)).astype(np.int64) * 3)


def _closed_form(est, sd, eta, counts):
    """The rule of the docstring, written out entry by entry."""
    K, V = est.shape
    M, N = est.sum(), counts.sum()
    limit = 1 + 3 * math.sqrt(2 / (K - 1))
    bg = []
    for w in range(V):
        col = est[:, w]
        a, b = 1 / (K * sd ** 2), N ** 2 / (M ** 2 * (counts[w] + 1))
        m = (a * col.sum() + b * M * counts[w] / N) / (a + b)
        spread = sum((x - col.mean()) ** 2 for x in col) / ((K - 1) * sd ** 2)
        bg.append(m < _BACKGROUND_SD * sd and spread < limit)
    bg = np.array(bg)
    out = np.zeros_like(est)
    q = counts[bg] + 0.5
    for k in range(K):
        out[k, bg] = eta + max(est[k, bg].sum(), 0.0) * q / q.sum()
    return bg, out


def test_rule_matches_its_closed_form():
    rng = np.random.default_rng(3)
    K, V, sd = 5, 30, 1.5
    est = rng.normal(0, sd, (K, V))
    est[:, :6] += rng.uniform(20, 200, (K, 6))       # frequent words
    est[0, 6] += 25.0                                # rare but one topic stands out
    counts = np.r_[rng.integers(100, 1000, 6), np.zeros(2), rng.integers(0, 4, V - 8)]
    beta = rng.uniform(1, 2, (K, V))
    kept = beta.copy()
    out, bg = _background_words(beta, est, sd, 0.05, counts.astype(float))
    want_bg, want = _closed_form(est, sd, 0.05, counts.astype(float))
    np.testing.assert_array_equal(bg, want_bg)
    assert not bg[:6].any() and not bg[6] and bg[8:].sum() >= V - 12
    np.testing.assert_allclose(out[:, bg], want[:, bg], rtol=1e-12)
    np.testing.assert_array_equal(out[:, ~bg], beta[:, ~bg])   # the others untouched
    np.testing.assert_array_equal(beta, kept)                   # the caller's array


def test_a_word_the_release_shows_keeps_its_entries():
    """A word absent from the public text but clear in the release (its column total) is
    not overwritten; nor is one whose entries differ over the topics."""
    K = 4
    est = np.zeros((K, 5))
    est[:, 0] = 100.0
    est[:, 3] = 5.0                                   # column total 20 > 4 sd, counts 0
    est[:, 4] = [3.0, -3.0, 3.0, -3.0]                # total 0, spread 12 sd^2
    beta = est + 0.1
    out, bg = _background_words(beta, est, 1.0, 0.1, np.array([1.0, 0, 0, 0, 0]))
    np.testing.assert_array_equal(bg, [False, True, True, False, False])
    np.testing.assert_array_equal(out[:, 3:], beta[:, 3:])


def test_negative_estimated_mass_leaves_the_prior():
    est = np.full((3, 4), -1.0)
    est[:, 0] = 500.0
    out, bg = _background_words(np.ones((3, 4)), est, 1.0, 0.05, np.array([9.0, 1, 1, 1]))
    assert bg[1:].all() and np.all(out[:, 1:] == 0.05)


def test_fit_is_post_processing_of_the_same_releases():
    X = _zipf_corpus()
    V = X.shape[1]
    freq = np.round(3000.0 / np.arange(1, V + 1))
    kept = freq.copy()
    plain = _fit(X, n_components=3, target_epsilon=2.0, random_state=5)
    with_freq = _fit(X, n_components=3, target_epsilon=2.0, random_state=5,
                     word_counts=freq)
    np.testing.assert_array_equal(freq, kept)                   # the caller's array
    assert plain.background_words_ is None
    rare = with_freq.background_words_
    assert rare.dtype == bool and 0 < rare.sum() < V             # the tail, not everything
    # the same noise drawn (same sigmas, same ledger), the frequent words' entries equal
    assert with_freq.release_sigmas_ == plain.release_sigmas_
    assert with_freq.clip_norm_ == plain.clip_norm_
    np.testing.assert_array_equal(with_freq.components_[:, ~rare], plain.components_[:, ~rare])
    # inside each topic the rare words' pseudo-counts minus the prior follow counts + 1/2
    eta = with_freq.topic_word_prior_
    extra = with_freq.components_[:, rare] - eta
    q = freq[rare] + 0.5
    for row in extra:
        if row.sum() > 0:
            np.testing.assert_allclose(row / row.sum(), q / q.sum(), rtol=1e-12)
    assert any("word_counts (given as public)" in s
               for s in with_freq.privacy_.assumed_public)
    assert not any("word_counts" in s for s in plain.privacy_.assumed_public)
    # the same composition: the report differs by that one line, the event tree not at all
    lines, plain_lines = str(with_freq.privacy_).splitlines(), str(plain.privacy_).splitlines()
    assert [x for x in lines if x not in plain_lines] == [
        "  assumed public : word_counts (given as public)"]
    assert repr(with_freq.privacy_.event) == repr(plain.privacy_.event)
    assert with_freq.privacy_.epsilon(1e-5) == plain.privacy_.epsilon(1e-5)


def test_background_words_follow_the_threshold_of_the_rule(monkeypatch):
    """A larger threshold reads more words from the frequencies (catches a rule that
    ignores the noise sd or the released total)."""
    X = _zipf_corpus(1)
    freq = np.round(3000.0 / np.arange(1, X.shape[1] + 1))
    counts = []
    for sd in (1.0, 4.0, 16.0):
        monkeypatch.setattr(vb_denoise, "_BACKGROUND_SD", sd)
        counts.append(int(_fit(X, n_components=3, target_epsilon=2.0, random_state=2,
                               word_counts=freq).background_words_.sum()))
    assert counts[0] <= counts[1] <= counts[2] and counts[0] < counts[2]


@pytest.mark.parametrize("bad, err, match", [
    (np.ones(5), ValueError, r"word_counts must have shape \(n_features,\) = \(12,\)"),
    (np.ones((12, 1)), ValueError, "word_counts must have shape"),
    (np.r_[np.ones(11), -1.0], ValueError, "non-negative"),
    (np.r_[np.ones(11), np.nan], ValueError, "finite"),
    (np.zeros(12), ValueError, "positive sum"),
    (np.full(12, 1 / 12), ValueError, "whole counts .* not frequencies"),
    (np.full(12, 1e308), ValueError, r"positive sum \(finite in double precision\)"),
    ("abc", TypeError, "word_counts must be an array of 12 numbers"),
    ([object()] * 12, TypeError, "word_counts must be an array"),
])
def test_bad_word_counts_are_refused_before_any_release(bad, err, match):
    X = poisson_corpus(0, 30, 12)
    with pytest.raises(err, match=match):
        PrivateBatchLDA(2, target_epsilon=1.0, random_state=0, word_counts=bad).fit(X)


def test_user_level_fit_takes_them_too():
    X = _zipf_corpus(2, D=120)
    groups = np.arange(X.shape[0]) // 3
    freq = np.round(3000.0 / np.arange(1, X.shape[1] + 1))
    m = _fit(X, n_components=2, target_epsilon=2.0, word_counts=freq)
    u = PrivateBatchLDA(2, target_epsilon=2.0, random_state=0, word_counts=freq)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        u.fit(X, groups=groups)
    assert u.background_words_.any() and m.background_words_.any()
    assert math.isclose(u.topic_word_.sum(), 2.0)


@pytest.mark.parametrize("scale", [2.0 ** -700, 2.0 ** -540, 2.0 ** 520, 2.0 ** 900])
def test_the_rule_is_scale_free_and_quiet(scale):
    # est and sd in any units give the same words (the rule compares masses with sd) and
    # no floating-point warning: sd^2 underflowed to 0 below 1e-162 (ZeroDivisionError) and
    # the release's total squared over- or underflowed to NaN masses, so no word was read
    # from the counts at all (powers of two: the scaled inputs are exact)
    rng = np.random.default_rng(4)
    K, V, sd = 4, 25, 2.0
    est = rng.normal(0, sd, (K, V))
    est[:, :5] += rng.uniform(30, 300, (K, 5))
    counts = np.r_[rng.integers(100, 900, 5), rng.integers(0, 5, V - 5)].astype(float)
    out, bg = _background_words(np.ones((K, V)), est, sd, 0.1, counts)
    assert 0 < bg.sum() < V
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out_s, bg_s = _background_words(np.ones((K, V)), est * scale, sd * scale,
                                        0.1 * scale, counts)
        # a release whose total is <= 0 leaves the counts no weight, without 0 / 0
        neg, bg_neg = _background_words(np.ones((K, V)), -np.abs(est) * scale, sd * scale,
                                        0.1, counts)
    np.testing.assert_array_equal(bg_s, bg)
    np.testing.assert_allclose(out_s[:, bg] / scale, out[:, bg], rtol=1e-12)
    assert np.all(np.isfinite(out_s)) and np.all(neg[:, bg_neg] == 0.1) and bg_neg[5:].all()


@pytest.mark.parametrize("clip_norm", [1e-200, 1e200])
def test_an_extreme_public_clip_norm_keeps_the_rule(clip_norm):
    # the budget spent, the rule raised ZeroDivisionError (1e-200) or read no word with a
    # RuntimeWarning (1e200); the releases are pure noise at that scale: all background
    X = _zipf_corpus(3, D=100)
    freq = np.round(3000.0 / np.arange(1, X.shape[1] + 1))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m = PrivateBatchLDA(3, target_epsilon=1.0, random_state=0, clip_norm=clip_norm,
                            word_counts=freq).fit(X)
    assert not [x for x in w if issubclass(x.category, RuntimeWarning)]
    assert np.all(np.isfinite(m.components_)) and m.background_words_.sum() > X.shape[1] // 2


@pytest.mark.parametrize("unit", ["document", "user"])
def test_neighbours_with_the_same_releases_give_the_same_fit(tmp_path, monkeypatch, unit):
    # every release (the norm histogram too) of X replayed on X's neighbours: a document
    # (a user: two documents) removed, a huge one-word document (the rarest word, 10^6
    # times), an empty document, each added as a new user at user level. With word_counts
    # nothing an observer sees may differ (topics, background words, report, warnings,
    # release.json): the rule reads only the releases, sd, prior, counts
    from _private_vb import observed
    from _releases import force_lattice_releases
    X = _zipf_corpus(5, D=200)
    V = X.shape[1]
    freq = np.round(3000.0 / np.arange(1, V + 1))
    huge = sp.csr_matrix(([10 ** 6], ([0], [V - 1])), shape=(1, V), dtype=np.int64)
    g = np.arange(X.shape[0]) // 2
    data = [(X, g), (sp.vstack([X[:2], X[4:]]).tocsr(), np.r_[g[:2], g[4:]]),
            (sp.vstack([X, huge]).tocsr(), np.r_[g, 1000]),
            (sp.vstack([X, sp.csr_matrix((1, V), dtype=np.int64)]).tocsr(), np.r_[g, 1000])]
    recorded, seen = [], []
    for i, (Xd, gd) in enumerate(data):
        replay = iter(list(recorded))
        force_lattice_releases(monkeypatch, (lambda r, s, noisy: recorded.append(noisy))
                               if i == 0 else (lambda r, s, noisy: next(replay)))
        kw = {"groups": gd} if unit == "user" else {}
        with warnings.catch_warnings(record=True) as wl:
            warnings.simplefilter("always")
            m = PrivateBatchLDA(3, target_epsilon=1.0, random_state=7,
                                word_counts=freq).fit(Xd, **kw)
        seen.append((observed(m, wl, tmp_path / str(i), V), m.components_.tobytes(),
                     m.background_words_.tobytes()))
        monkeypatch.undo()
    assert 0 < np.frombuffer(seen[0][2], dtype=bool).sum() < V
    for other in seen[1:]:
        assert other == seen[0]
