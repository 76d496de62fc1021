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


def _extreme_documents():
    """One document per row: one token, every word once, counts of 2^62 and 2^61 (the int64
    edge), 2^50 beside a single token, seven counts up to 1e9, an empty document."""
    r = np.random.default_rng(5)
    docs = np.zeros((8, V), dtype=np.int64)
    docs[0, 0] = 1
    docs[1] = 1
    docs[2, 0] = 2 ** 62
    docs[3, :3] = 2 ** 61
    docs[4, :2] = (2 ** 50, 1)
    docs[5, r.choice(V, 7, replace=False)] = r.integers(1, 10 ** 9, 7)
    docs[6] = r.poisson(1.0, V)
    return sp.csr_matrix(docs)


_EXTREME_TOPICS = {
    "ordinary": lambda r: 1.0 + r.random((4, V)),
    "1e-300/1e3": lambda r: np.where(r.random((4, V)) < 0.5, 1e-300, 1e3),
    "subnormal/1e300": lambda r: np.full((4, V), 5e-324) + (np.arange(V) == 0) * 1e300,
}


@pytest.mark.parametrize("topics", list(_EXTREME_TOPICS))
@pytest.mark.parametrize("presence", [False, True])
def test_extreme_units_stay_within_the_clip_norm_exactly_on_every_thread_count(topics,
                                                                               presence):
    # the sensitivity C in exact arithmetic: every unit's lattice contribution (a document,
    # or a user of three) has integer sum of squares <= (C / g)^2, the statistic is the
    # exact sum of the units' (removing one moves it by that unit only) and the same for 1
    # and 2 threads, for counts up to 2^62, subnormal and 1e300 topics and word weights of
    # 1e-300 .. 1e300 (the kernel's scaling by the peak, its NaN/inf drops, its cache)
    r = np.random.default_rng(1)
    X = _extreme_documents()
    beta = _EXTREME_TOPICS[topics](r)
    weights = [None, 10.0 ** r.uniform(-300, 300, V), np.full(V, 1e300)]
    groups = np.arange(X.shape[0]) % 3
    for C in (1e-6, 3.7, 1e6):
        g = 2.0 ** (math.floor(math.log2(C)) - 13)
        for ww in weights:
            with np.errstate(all="ignore"):
                docs = [S._expected_counts(X[d:d + 1], beta, 0.3, C, g, presence, 1, ww)
                        for d in range(X.shape[0])]
                users = []
                for u in range(3):
                    Xs, ptr = U.group_documents(X[groups == u], np.zeros((groups == u).sum()))
                    users.append(U.user_expected_counts(Xs, ptr, beta, 0.3, C, g, presence,
                                                        1, ww))
                Xs, ptr = U.group_documents(X, groups)
                for t in (1, 2):
                    assert np.array_equal(
                        S._expected_counts(X, beta, 0.3, C, g, presence, t, ww), sum(docs))
                    assert np.array_equal(U.user_expected_counts(
                        Xs, ptr, beta, 0.3, C, g, presence, t, ww), sum(users))
            for one in docs + users:
                m = one / g
                assert np.array_equal(m, np.round(m))           # on the lattice
                sq = sum(int(x) ** 2 for x in m.ravel())
                assert Fraction(sq) * Fraction(g) ** 2 <= Fraction(C) ** 2
