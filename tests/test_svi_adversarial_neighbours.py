"""PrivateOnlineLDA against a neighbour the adversary crafts: one added document of huge
counts (accepted: below 2^63) is truncated like any other, in memory of the length cap,
and the fits differ only in their privatized outputs."""
import warnings

import numpy as np
import scipy.sparse as sp
from scipy import stats

from _secrets import differing_paths, released
from dptm.models import _truncate
from dptm.models.svi import PrivateOnlineLDA, truncate_documents


def test_a_document_too_long_to_expand_keeps_a_uniform_subset_of_its_tokens():
    # counts (3 L, L, 0) with L = 2^38 (too long to expand into tokens: before the fix
    # truncation allocated 8 TiB and raised MemoryError) truncated to 2 tokens keeps
    # (2, 0), (1, 1) or (0, 2) with probabilities 9/16, 6/16, 1/16; chi-square over 2000
    # documents at a false-alarm rate of 1e-6
    L = 2 ** 38
    X = sp.csr_matrix(np.tile([[3 * L, L, 0]], (2000, 1)).astype(np.int64))
    assert 4 * L > _truncate._EXPAND_LIMIT
    Xt = truncate_documents(X, 2, np.random.default_rng(2024)).toarray()
    assert np.all(Xt.sum(axis=1) == 2) and np.all(Xt[:, 2] == 0) and Xt.dtype == np.int64
    observed = np.bincount(Xt[:, 0], minlength=3)[::-1]
    expected = 2000 * np.array([9, 6, 1]) / 16
    assert ((observed - expected) ** 2 / expected).sum() < stats.chi2.ppf(1 - 1e-6, df=2)


def test_long_and_too_long_documents_are_truncated_together():
    # a corpus mixing short, long (expanded) and too-long documents: every document capped,
    # a subset of its own counts, the short ones unchanged
    rng = np.random.default_rng(3)
    X = rng.poisson(2.0, (30, 8)).astype(np.int64)
    X[4, 2] = 2 ** 62
    X[9, :3] = 2 ** 40
    X[11, 5] = 200
    X = sp.csr_matrix(X)
    Xt = truncate_documents(X, 10, np.random.default_rng(0))
    lengths = np.asarray(X.sum(axis=1), dtype=np.float64).ravel()
    np.testing.assert_array_equal(np.asarray(Xt.sum(axis=1)).ravel(), np.minimum(lengths, 10))
    assert (Xt - X).max() <= 0 and Xt.min() >= 0
    short = lengths <= 10
    assert (Xt[short] != X[short]).nnz == 0


def test_a_huge_count_document_fits_like_its_neighbour():
    # add/remove neighbours X and X plus one document of 2^40 tokens: the seeded fits (same
    # streams) differ only in the privatized outputs; before the fix the neighbour raised
    # MemoryError (an exception only the data set holding that document raises)
    X = np.random.default_rng(0).poisson(0.8, (40, 15)).astype(np.int64)
    doc = np.zeros((1, 15), dtype=np.int64)
    doc[0, 3] = 2 ** 40
    fits = []
    for data in (X, np.vstack([X, doc])):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m = PrivateOnlineLDA(3, noise_multiplier=1.0, max_doc_length=30, batch_size=10,
                                 total_samples=40, max_iter=2, random_state=11).fit(
                                     sp.csr_matrix(data))
        fits.append((m, sorted(f"{x.category.__name__}: {x.message}" for x in w)))
    (a, wa), (b, wb) = fits
    assert wa == wb
    allowed = ("model.components_", "model.topic_word_", "model.exp_dirichlet_component_",
               "model._lam_t", "model._exp_elog_beta_t")
    assert released(differing_paths(a, b), [p[len("model."):] for p in allowed]) == []
