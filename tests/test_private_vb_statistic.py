"""The fused statistic kernel (``_svi.clipped_lattice_sum``) against the numpy expression it
replaced, and its refusal of malformed groupings."""
import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

from dptm import _svi
from dptm.models import user_contributions as U
from dptm.models import vb_statistic as S

V = 15


def _corpus(seed=0):
    """Short documents, a few long ones, and a user of 300 documents all holding word 0
    (a (user, word) group of 300 pairs: every branch of the pairwise sums)."""
    r = np.random.default_rng(seed)
    X = r.poisson(0.7, size=(60, V))
    X[:3] *= 40
    many = r.poisson(0.3, size=(300, V))
    many[:, 0] += 1
    groups = np.r_[np.arange(60) // 3, np.full(300, 99)]
    return sp.csr_matrix(np.vstack([X, many]).astype(np.int64)), groups


def _reference(X, beta, alpha, norm, g, presence, ww, user_ptr=None):
    """The numpy statistic the kernel replaced (per pair, grouped per (user, word) with
    np.add.reduceat, clipped per unit, floored and checked with Python integers)."""
    eb_t = np.ascontiguousarray(S._exp_dirichlet(beta).T)
    et = S._estep(X, eb_t, alpha)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    phinorm = np.einsum("ik,ik->i", et[rows], eb_t[X.indices]) + 1e-100
    weight = (1.0 if presence else X.data) / phinorm
    if ww is not None:
        weight = weight * ww[X.indices]
    contrib = et[rows] * eb_t[X.indices] * weight[:, None]
    words, indptr = X.indices, X.indptr
    if user_ptr is not None:
        owner = np.repeat(np.arange(len(user_ptr) - 1), np.diff(user_ptr))
        key = owner[rows] * V + X.indices
        order = np.argsort(key, kind="stable")
        key = key[order]
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        contrib = np.add.reduceat(contrib[order], first, axis=0)
        words = key[first] % V
        indptr = np.searchsorted(key[first] // V, np.arange(len(user_ptr)))
    n_units = len(indptr) - 1
    unit = np.repeat(np.arange(n_units), np.diff(indptr))
    starts = np.flatnonzero(np.diff(indptr))
    peak = np.zeros(n_units)
    peak[starts] = np.maximum.reduceat(contrib.max(axis=1), indptr[starts])
    contrib = contrib / np.where(peak > 0, peak, 1.0)[unit][:, None]
    length = np.sqrt(np.bincount(unit, (contrib * contrib).sum(axis=1), minlength=n_units))
    clip = np.divide(norm * (1 - 2.0 ** -40), length, out=np.zeros_like(length),
                     where=length > 0)
    contrib = contrib * np.minimum(peak, clip)[unit][:, None]
    if g is not None:
        contrib = np.floor(contrib / g)
        bound = norm / g
        limit = math.floor(Fraction(bound) ** 2)
        for u in range(n_units):
            m = contrib[indptr[u]:indptr[u + 1]]
            ok = np.isfinite(m).all() and (np.abs(m) <= bound).all() and sum(
                int(x) ** 2 for x in m.ravel()) <= limit
            if not ok:
                contrib[indptr[u]:indptr[u + 1]] = 0.0
        contrib *= g
    return np.array([np.bincount(words, contrib[:, k], minlength=V)
                     for k in range(contrib.shape[1])])


@pytest.mark.parametrize("K", [3, 20])
@pytest.mark.parametrize("presence", [False, True])
@pytest.mark.parametrize("g", [None, 2.0 ** -14])
def test_the_kernel_is_bitwise_the_numpy_statistic(K, presence, g):
    # Any reordering of a sum in the kernel (the phi normaliser, a group's pairs, a unit's
    # squares) moves low bits, hence now and then a lattice floor, and with it every later
    # draw of a fit; a wrong peak, clip or word weight moves far more.
    X, groups = _corpus()
    rng = np.random.default_rng(K)
    beta = 0.05 + rng.gamma(0.5, 1.0, (K, V)) * 20
    ww = 10.0 ** rng.uniform(-1, 1, V)
    Xs, ptr = U.group_documents(X, groups)
    for w in (None, ww):
        for norm in (0.7, 1e4):                    # most units clipped / none
            want = _reference(X, beta, 0.3, norm, g, presence, w)
            want_u = _reference(Xs, beta, 0.3, norm, g, presence, w, ptr)
            for nt in (1, 2):
                got = S._expected_counts(X, beta, 0.3, norm, g, presence, nt, w)
                assert np.array_equal(got, want)
                got_u = U.user_expected_counts(Xs, ptr, beta, 0.3, norm, g, presence, nt, w)
                assert np.array_equal(got_u, want_u)


def _kernel_args(unit_ptr, group_ptr, slots, words):
    K = 2
    n = len(words)
    return (np.asarray(unit_ptr, dtype=np.int64), np.asarray(group_ptr, dtype=np.int64),
            np.asarray(slots, dtype=np.int64), np.zeros(n, dtype=np.int64),
            np.asarray(words, dtype=np.int32), np.ones(n), np.full((1, K), 0.5),
            np.full((4, K), 0.5), 1.0)


def test_a_unit_holding_a_word_twice_is_refused():
    # two groups of one unit on one word would be added in one cell after their norms
    # were taken apart (sqrt(2) times the clip bound); a group mixing words likewise
    out = np.zeros((4, 2))
    ok = _svi.clipped_lattice_sum(*_kernel_args([0, 2], [0, 1, 2], [0, 1], [1, 2]),
                                  out_sum=out)
    assert ok.tolist() == [1.0] and out[1].any() and out[2].any()
    for args in (([0, 2], [0, 1, 2], [0, 1], [1, 1]),          # word 1 in two groups
                 ([0, 1], [0, 2], [0, 1], [1, 2])):             # one group, two words
        with pytest.raises(ValueError, match="one word"):
            _svi.clipped_lattice_sum(*_kernel_args(*args), out_sum=np.zeros((4, 2)))
    # the same word in two different units is fine
    ok = _svi.clipped_lattice_sum(*_kernel_args([0, 1, 2], [0, 1, 2], [0, 1], [1, 1]),
                                  out_sum=np.zeros((4, 2)))
    assert ok.tolist() == [1.0, 1.0]
