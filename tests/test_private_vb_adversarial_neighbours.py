"""PrivateBatchLDA against neighbours the adversary crafts: one added document of extreme
counts (accepted by the count check: below 2^63) changes nothing an observer sees but the
releases (no warning of its own, no bin of the wrong norm)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from _private_vb import poisson_corpus
from _releases import force_lattice_releases
from dptm.models import private_vb as P
from dptm.models.private_vb import PrivateBatchLDA


def _with(X, counts):
    """``X`` with one document added holding ``counts`` ({word: count})."""
    V = X.shape[1]
    words = sorted(counts)
    doc = sp.csr_matrix(([counts[w] for w in words], ([0] * len(words), words)),
                        shape=(1, V), dtype=np.int64)
    return sp.vstack([X, doc]).tocsr()


@pytest.mark.parametrize("count", [3_100_000_000, 2 ** 40, 2 ** 62])
def test_a_document_of_huge_counts_lands_in_the_top_norm_bin(count):
    # the histogram squared int64 counts: 3.1e9^2 wrapped negative (NaN norm, bin 0 after
    # a RuntimeWarning), 2^40 squared to 0 mod 2^64 (bin 0, silently)
    X = poisson_corpus(0, D=20)
    base = P._norm_histogram(X)
    diff = P._norm_histogram(_with(X, {0: count})) - base
    top = np.zeros_like(base)
    top[0, -1] = 1.0                 # norms above 2^20 share the last bin
    np.testing.assert_array_equal(diff, top)


@pytest.mark.parametrize("groups", [False, True])
def test_a_huge_count_document_adds_no_warning_of_its_own(groups):
    # neighbours: X and X plus one document with a count of 3.1e9 (its square passes
    # 2^63). Every release forced to one value: the fits' warnings must be the same
    # (before the fix the histogram's sqrt and cast warned only on the neighbour, and
    # dptm fit prints every warning of the fit on stderr)
    X = poisson_corpus(0, D=30)
    Xp = _with(X, {0: 3_100_000_000, 1: 1})
    seen = []
    with pytest.MonkeyPatch.context() as mp:
        force_lattice_releases(mp, lambda release, stat, noisy: np.full(stat.shape, 7.0))
        for data in (X, Xp):
            kw = {"groups": np.arange(data.shape[0]) // 2} if groups else {}
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                PrivateBatchLDA(3, target_epsilon=1.0, random_state=0).fit(data, **kw)
            seen.append(sorted(f"{x.category.__name__}: {x.message}" for x in w))
    assert seen[0] == seen[1]
    assert not any(s.startswith("RuntimeWarning") for s in seen[1])
