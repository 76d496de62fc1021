"""The private Gibbs fits whose sweeps leave the true counts to the next snapshot
(``recount``: K above _DEFERRED_COUNTS_MIN_TOPICS, several threads, SUB-LDA): neighbours
differ only in released values, and every recounted snapshot is the in-place one."""
import pickle
import warnings

import numpy as np
import pytest

from dptm import NoisyGibbsLDA, SubsampledGibbsLDA
from dptm.datasets import make_lda_corpus
from dptm.models import private_gibbs

from _neighbours import word_replaced


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
