"""Independent privacy review (session 15; report: notes/s15/report-rev15.md) of
PrivateBatchLDA's eight-release default from public epsilon 4 and of the private Gibbs
fits whose sweeps leave the true counts to the next snapshot (``recount``). The tests pin
down properties the review checked and found to hold, where no test held them before."""
import math
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar

from dptm import NoisyGibbsLDA, SubsampledGibbsLDA
from dptm.datasets import make_lda_corpus
from dptm.models import private_gibbs
from dptm.models import private_vb as P
from dptm.models.private_vb import PrivateBatchLDA

from _neighbours import word_replaced


def _zcdp_epsilon(rho, delta):
    """(epsilon, delta) of rho-zCDP, computed here (not by dptm.accounting): the RDP
    conversion of Canonne, Kamath & Steinke 2020 Prop. 12 (Balle et al. 2020 Thm. 21),
    minimised over continuous orders alpha > 1."""
    def f(a):
        return a * rho + math.log1p(-1 / a) - (math.log(delta) + math.log(a)) / (a - 1)
    return minimize_scalar(f, bounds=(1 + 1e-6, 1e5), method="bounded",
                           options={"xatol": 1e-10}).fun


@pytest.mark.parametrize("eps", [2.0, 4.0, 8.0])
@pytest.mark.parametrize("clip_norm", [1.0, 7.3])
def test_default_schedule_epsilon_is_the_closed_form_of_its_sigmas(eps, clip_norm):
    # The recorded releases (eight presence releases of share 0.075 and one count release
    # of 0.4 from eps 4) are Gaussians of L2 sensitivity clip_norm: rho = sum C^2 / (2
    # sigma_i^2), computed here from release_sigmas_ alone. The report states that
    # composition (never less), it meets the target, and the sigmas are in the schedule's
    # proportions sigma_i ~ 1 / sqrt(share_i). A composition the shared accountant got
    # wrong in calibration and report alike (e.g. the discrete Gaussian's RDP, or a run of
    # equal releases counted once) would pass the tests that compare it with itself.
    X = sp.csr_matrix(np.random.default_rng(0).poisson(0.8, (30, 12)).astype(np.int64))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = PrivateBatchLDA(3, target_epsilon=eps, clip_norm=clip_norm, random_state=0).fit(X)
    shares = [w for _, w in P.default_schedule(eps)]
    assert m.n_iter_ == len(shares) == (9 if eps >= 4 else 5)
    s = np.array(m.release_sigmas_)
    np.testing.assert_allclose(s * np.sqrt(shares), s[-1] * math.sqrt(shares[-1]), rtol=1e-5)
    rho = sum(clip_norm ** 2 / (2 * x * x) for x in s)
    want = _zcdp_epsilon(rho, 1e-5)
    got = m.privacy_.epsilon(1e-5)
    assert want - 1e-9 <= got <= want + 1e-3
    assert got <= eps
    assert f"count={len(shares) - 1}" in str(m.privacy_)         # the presence releases


def test_default_schedule_does_not_depend_on_the_corpus_size():
    # The schedule (and so n_iter_, release_sigmas_ and the report) is a function of the
    # PUBLIC epsilon only, not of the number of documents, which PrivateBatchLDA neither
    # uses nor publishes: the eight releases were measured to help large corpora and hurt
    # small ones, so choosing them by corpus size would be the tempting (leaking) change.
    rng = np.random.default_rng(1)
    small = sp.csr_matrix(rng.poisson(0.8, (3, 10)).astype(np.int64))
    large = sp.csr_matrix(rng.poisson(0.8, (600, 10)).astype(np.int64))
    for eps in (1.0, 3.9, 4.0, 8.0):
        seen = []
        for X in (small, large):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = PrivateBatchLDA(2, target_epsilon=eps, random_state=3).fit(X)
            seen.append((m.n_iter_, m.release_sigmas_, str(m.privacy_)))
        assert seen[0] == seen[1]


# ----------------------------------------------------------------- recounting Gibbs fits
# K = 130 > _DEFERRED_COUNTS_MIN_TOPICS: on one thread as on two, schedule 'every' and
# SUB-LDA leave n_wk stale in the sweep and count it from the topics in the next snapshot.
K_RECOUNT = 130
RECOUNT_CASES = [
    (NoisyGibbsLDA, {"clip": 8.0}),
    (NoisyGibbsLDA, {"mechanism": "discrete_gaussian", "noise_multiplier": 1.0}),
    (SubsampledGibbsLDA, {"sample_rate": 0.4, "clip": 8.0}),
    (SubsampledGibbsLDA, {"sample_rate": 1.0, "clip": 8.0}),
]


@pytest.fixture(scope="module")
def word_neighbours():
    X, Xp = word_replaced(40)
    return X, Xp


@pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning")
@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("cls,kw", RECOUNT_CASES)
def test_recounting_fits_differ_between_neighbours_only_in_released_values(
        word_neighbours, cls, kw, n_jobs):
    # Seeded fits on word-level neighbours through the recount path: the same attributes
    # (names, types, shapes, dtypes), report, warnings and pickle size; the released
    # arrays are functions of the last traced snapshot alone (no stale count reaches them).
    seen = []
    for data in word_neighbours:
        with warnings.catch_warnings(record=True) as wl:
            warnings.simplefilter("always")
            m = cls(K_RECOUNT, max_iter=3, record_trace=True, n_jobs=n_jobs, random_state=7,
                    **kw).fit(data)
        beta = m.topic_word_prior_
        final = m.trace_["snapshots"][-1]
        np.testing.assert_array_equal(m.snapshot_, final)
        np.testing.assert_array_equal(m.components_, np.maximum(final, 0).T + beta)
        attrs = {k: (type(v).__name__, np.shape(v) if not isinstance(v, dict) else sorted(v),
                     str(getattr(v, "dtype", ""))) for k, v in vars(m).items()}
        seen.append((attrs, str(m.privacy_), m.n_iter_, m.noise_scale_, len(pickle.dumps(m)),
                     sorted(f"{type(x.message).__name__}: {x.message}" for x in wl)))
    assert seen[0] == seen[1]


@pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning")
@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("cls,kw", RECOUNT_CASES + [
    (SubsampledGibbsLDA, {"sample_rate": 0.5, "convergence_tol": 1e-300}),   # stopping rule
    (NoisyGibbsLDA, {"clip": 8.0, "wide": True}),        # several snapshot row blocks
])
def test_every_recounted_snapshot_is_the_in_place_one(word_neighbours, cls, kw, n_jobs,
                                                      monkeypatch):
    # Traced fits (double snapshots, not the clipped int32 buffer of untraced fits): every
    # snapshot and every sweep's traced topics of the recount path equal those of per-token
    # count updates, so no snapshot ever reads the counts a recounting sweep left stale
    # (with the stopping rule's snapshots too; with V K above one snapshot block, the rows
    # counted by two threads at once).
    kw = dict(kw)
    X = word_neighbours[0]
    if kw.pop("wide", False):
        X, _, _ = make_lda_corpus(30, 1200, 3, doc_length=20, random_state=2)
        assert 1200 * K_RECOUNT > private_gibbs._SNAPSHOT_BLOCK_ENTRIES
    fit_kw = {"eval_X": X[:5]} if "convergence_tol" in kw else {}
    fits = []
    for threshold in (0, 10 ** 9):      # 10^9 (one thread): n_wk updated in place
        monkeypatch.setattr(private_gibbs, "_DEFERRED_COUNTS_MIN_TOPICS", threshold)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = cls(K_RECOUNT, max_iter=4, record_trace=True, random_state=5,
                    n_jobs=n_jobs if threshold == 0 else 1, **kw).fit(X, **fit_kw)
        fits.append(m)
    a, b = fits
    assert len(a.trace_["snapshots"]) == len(b.trace_["snapshots"]) == 4
    for sa, sb in zip(a.trace_["snapshots"], b.trace_["snapshots"]):
        np.testing.assert_array_equal(sa, sb)
    np.testing.assert_array_equal(a.trace_["topics"], b.trace_["topics"])
    np.testing.assert_array_equal(a.doc_topic_, b.doc_topic_)
    assert getattr(a, "perplexity_history_", None) == getattr(b, "perplexity_history_", None)
