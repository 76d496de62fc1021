"""PrivateBatchLDA's sensitivity: every contribution within the clip bound on the lattice,
neighbouring fits alike but for the released values, non-finite contributions dropped."""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _private_vb import force_norm_histogram, observed

from dptm.models import private_vb as P
from dptm.models import vb_statistic as S
from dptm.models.private_vb import PrivateBatchLDA


def _corpus(seed=0, D=60, V=12):
    r = np.random.default_rng(seed)
    return sp.csr_matrix(r.poisson(0.8, size=(D, V)).astype(np.int64))


def test_the_lattice_norm_check_is_applied_to_every_contribution(monkeypatch):
    # _expected_counts' last line of defence: a document whose lattice contribution fails
    # the exact norm check contributes nothing, weighted or not (removing the call, or
    # ignoring its result, left every test passing before this one)
    X = _corpus()
    beta = 1.0 + np.random.default_rng(1).random((3, X.shape[1]))
    ww = 10.0 ** np.linspace(-2, 2, X.shape[1])
    g = 2.0 ** -13
    for w in (None, ww):
        assert np.any(P._expected_counts(X, beta, 0.3, 1.0, g, False, 1, w))
    monkeypatch.setattr(S, "_lattice_limit", lambda bound: 0)      # every verdict fails
    for w in (None, ww):
        assert not np.any(P._expected_counts(X, beta, 0.3, 1.0, g, False, 1, w))


@pytest.mark.parametrize("presence", [False, True])
def test_the_document_norm_check_is_exact_at_its_limit(monkeypatch, presence):
    # each document kept at integer sum of squares == limit, dropped one unit below it,
    # and in a corpus exactly the documents within the limit are summed (an off-by-one
    # in the kernel's comparison lets a contribution above its bound through)
    X = _corpus()
    beta = 1.0 + np.random.default_rng(1).random((3, X.shape[1]))
    g = 2.0 ** -12
    alone = [P._expected_counts(X[d:d + 1], beta, 0.3, 1.0, g, presence) for d in range(8)]
    sq = []
    for one in alone:
        m = np.rint(one / g).astype(np.int64)
        assert np.array_equal(m * g, one)
        sq.append(int((m * m).sum()))
    limit = sorted(sq)[4]
    monkeypatch.setattr(S, "_lattice_limit", lambda bound: limit)
    for n_threads in (1, 2):          # the serial and the parallel path of the kernel
        got = P._expected_counts(X[:8], beta, 0.3, 1.0, g, presence, n_threads)
        assert np.array_equal(got, sum(o for o, s in zip(alone, sq) if s <= limit))
    assert 0 < sum(s <= limit for s in sq) < 8


@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_every_release_of_a_fit_has_sensitivity_clip_norm(monkeypatch, eps):
    # In a real fit (the topics the fit derives from its releases, not test ones): at
    # every release, adding a 5,000-token document or removing one changes the lattice
    # statistic by exactly that document's contribution, of norm <= clip_norm.
    X = _corpus(3)
    V = X.shape[1]
    heavy = sp.csr_matrix(([5000], ([0], [V - 1])), shape=(1, V))
    calls = []
    real = P._expected_counts

    def spy(X, beta, alpha, norm, granularity=None, presence=False, n_threads=1,
            word_weight=None):
        calls.append((beta.copy(), alpha, norm, granularity, presence,
                      None if word_weight is None else word_weight.copy()))
        return real(X, beta, alpha, norm, granularity, presence, n_threads, word_weight)
    monkeypatch.setattr(P, "_expected_counts", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        PrivateBatchLDA(4, target_epsilon=eps, clip_norm=0.5, random_state=0).fit(
            sp.vstack([X, heavy]).tocsr())
    monkeypatch.setattr(P, "_expected_counts", real)
    assert [w is None for *_, w in calls] == [True] * len(calls)
    for beta, alpha, C, g, presence, w in calls:
        full = real(sp.vstack([X, heavy]).tocsr(), beta, alpha, C, g, presence, 1, w)
        for d, rest in ((None, X), (5, sp.vstack([X[:5], X[6:], heavy]).tocsr())):
            one = real(heavy if d is None else X[d:d + 1], beta, alpha, C, g, presence, 1, w)
            assert np.array_equal(full - real(rest, beta, alpha, C, g, presence, 1, w), one)
            assert math.fsum(((one / g) ** 2).ravel()) <= (C / g) ** 2


@pytest.mark.parametrize("clip", ["public", "histogram"])
def test_neighbours_fits_differ_only_in_the_released_values(tmp_path, monkeypatch, clip):
    # paired seeded fits of X, X without one document and X with a 5,000-token document:
    # the same attributes with the same shapes and dtypes, the same report, warnings,
    # fold-in seed, pickle size and release.json; only the topics differ. With the clip
    # bound from the norm histogram, that release is forced to one value (the bound, the
    # noise scales and the noisy count are its post-processing).
    if clip == "histogram":
        force_norm_histogram(monkeypatch)
    kw = {"clip_norm": 0.5} if clip == "public" else {}
    X = _corpus(4, D=80)
    V = X.shape[1]
    data = [X, sp.vstack([X[:7], X[8:]]).tocsr(),
            sp.vstack([X, sp.csr_matrix(([5000], ([0], [2])), shape=(1, V))]).tocsr()]
    for eps in (1.0, 4.0):
        seen = []
        for i, Xd in enumerate(data):
            with warnings.catch_warnings(record=True) as wl:
                warnings.simplefilter("always")
                m = PrivateBatchLDA(3, target_epsilon=eps, random_state=11, **kw).fit(Xd)
            seen.append(observed(m, wl, tmp_path / f"{eps}-{i}", V))
        for other in seen[1:]:
            assert other == seen[0]


def test_a_non_finite_contribution_never_reaches_the_release(monkeypatch):
    # A document whose contribution is NaN (here: its E-step made NaN) fails the exact norm
    # check and must contribute nothing: before the fix it was multiplied by 0.0, NaN stayed
    # NaN and the release raised only when such a document was present (a data-dependent
    # error). Non-finite or non-positive weights are refused whatever the data.
    X = _corpus()
    beta = 1.0 + np.random.default_rng(1).random((3, X.shape[1]))
    g = 2.0 ** -13
    real = S._estep

    def poisoned(Xc, *a, **k):
        et = real(Xc, *a, **k).copy()
        et[0] = np.nan                                     # the chunk's first document
        return et
    rest = P._expected_counts(X[1:], beta, 0.3, 1.0, g)
    monkeypatch.setattr(S, "_estep", poisoned)
    with np.errstate(invalid="ignore"):
        got = P._expected_counts(X, beta, 0.3, 1.0, g)
    monkeypatch.setattr(S, "_estep", real)
    assert np.all(np.isfinite(got))
    np.testing.assert_array_equal(got, rest)
    for bad in (np.inf, np.nan, 0.0, -1.0):
        w = np.ones(X.shape[1])
        w[3] = bad
        for data in (X, X[:0]):
            with pytest.raises(ValueError, match="word_weight"):
                P._expected_counts(data, beta, 0.3, 1.0, g, word_weight=w)


def test_the_norm_histogram_counts_each_document_once():
    # the histogram release is accounted with sensitivity 1: each document adds exactly 1
    # to one bin, whatever its length (a 5,000-token document included), and a neighbour
    # moves it by one unit vector
    X = _corpus(5)
    V = X.shape[1]
    heavy = sp.csr_matrix(([5000], ([0], [V - 1])), shape=(1, V))
    hist = P._expected_counts(X, None, None, 1.0, 1.0, "norm-histogram")
    assert hist.shape == (1, P._BINS_PER_OCTAVE * P._OCTAVES)
    assert hist.sum() == X.shape[0] and np.array_equal(hist, np.round(hist))
    for extra in (heavy, X[:1], sp.csr_matrix((1, V), dtype=np.int64)):
        diff = P._expected_counts(sp.vstack([X, extra]).tocsr(), None, None, 1.0, 1.0,
                                  "norm-histogram") - hist
        assert sorted(diff.ravel().tolist()) == [0.0] * (diff.size - 1) + [1.0]


@pytest.mark.parametrize("clip_norm", [None, 0.5])
def test_every_release_is_clipped_at_the_sensitivity_it_records(monkeypatch, clip_norm):
    # the norm each release's statistic is clipped at is the L2 sensitivity its event in
    # privacy_ states (clip_norm_), not another scale of the fit (e.g. its sigma = z C)
    X = _corpus(6)
    norms = []
    real = P._expected_counts

    def spy(X, beta, alpha, norm, granularity=None, presence=False, n_threads=1,
            word_weight=None):
        if not isinstance(presence, str):
            norms.append(norm)
        return real(X, beta, alpha, norm, granularity, presence, n_threads, word_weight)
    monkeypatch.setattr(P, "_expected_counts", spy)
    for eps in (1.0, 4.0):
        norms.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = PrivateBatchLDA(3, target_epsilon=eps, clip_norm=clip_norm,
                                random_state=2).fit(X)
        assert len(norms) == m.n_iter_ == len(m.release_sigmas_)
        assert norms == [m.clip_norm_] * len(norms)
        recorded = {e.sensitivity for e, *_ in m.privacy_.events}
        assert recorded == {m.clip_norm_} | ({1.0} if clip_norm is None else set())
