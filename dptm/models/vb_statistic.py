"""The statistic of every release of :class:`~dptm.models.private_vb.PrivateBatchLDA`: the
per-unit clipped, lattice-rounded sum of expected counts.

A unit is a document, or a user (the run of their documents, user level). Each unit's
expected topic-word counts after the variational E-step (or "presence" counts, each
distinct word once) are scaled down to L2 norm at most C, rounded DOWN to the noise
lattice of granularity g, checked in exact integer arithmetic (sum of squares at most
floor(C^2 / g^2)) and summed: adding or removing one unit moves the statistic by at most C,
and the sum is an exact multiple of g (no rounding slack in the lattice release).
"""
import math
from fractions import Fraction

import numpy as np
from scipy.special import psi

from .. import _svi
from .._utils import canonical_csr

_CHUNK_NNZ = 1 << 20   # E-step working set: about 1M (document, word) pairs at a time
# The E-step's updates per document and release (public): fewer cost topics on heavy-tailed
# corpora (long documents converge last), more cost time (the E-step is most of a fit's).
_DOC_UPDATES = 50


def _exp_dirichlet(x):
    return np.exp(psi(x) - psi(x.sum(axis=-1, keepdims=True)))


def _estep(X, exp_elog_beta_t, alpha, max_iter=_DOC_UPDATES, tol=1e-3, n_threads=1):
    """Variational E-step of the documents of CSR ``X`` (Cython kernel ``lda_e_step``):
    exp(E[log theta]) per document (D x K). Each document starts from gamma = alpha +
    N_d / K and stops when the mean absolute change of its gamma is below ``tol``, or after
    ``max_iter`` updates."""
    D = X.shape[0]
    K = exp_elog_beta_t.shape[1]
    lengths = np.asarray(X.sum(axis=1), dtype=np.float64).reshape(-1, 1)
    gamma = np.ascontiguousarray(np.full((D, K), alpha) + lengths / K)
    _svi.lda_e_step(X.indptr.astype(np.int64), X.indices.astype(np.int32),
                    X.data.astype(np.float64), np.arange(D, dtype=np.int64),
                    exp_elog_beta_t, gamma, float(alpha), tol=tol, max_iter=max_iter,
                    n_threads=n_threads)
    return np.ascontiguousarray(_exp_dirichlet(gamma))


def _expected_counts(X, beta, alpha, norm, granularity=None, presence=False, n_threads=1,
                      word_weight=None):
    """Sum over the documents of CSR ``X`` of their expected K x V topic-word counts, each
    document's contribution CLIPPED to L2 norm ``norm`` (scaled down only if above it).

    ``presence=True`` counts each distinct word of a document once (its topic
    responsibilities, summing to one) instead of its count: more signal per unit of
    norm, used by the search releases. ``presence="norm-histogram"`` returns instead the
    (1, n_bins) histogram of the documents' count-vector norms (``_norm_histogram``;
    ``beta``, ``alpha`` and ``norm`` unused): a cluster computes every release through
    this one function. ``word_weight`` (V positive weights, optional) multiplies each
    word's entries before clipping.

    With ``granularity`` g, every entry of every contribution is rounded DOWN to a
    multiple of g before summing: the rounded contribution's norm is at most ``norm``
    (entries are non-negative) and the sum is an exact multiple of g, so the lattice
    release needs no rounding slack; sums over blocks equal the statistic of their union.
    """
    X = canonical_csr(X)
    if isinstance(presence, str):
        if presence != "norm-histogram":
            raise ValueError(f"unknown statistic {presence!r}")
        from .private_vb import _norm_histogram
        return _norm_histogram(X)
    K, V = beta.shape
    word_weight = _checked_word_weight(word_weight, V)
    eb_t = np.ascontiguousarray(_exp_dirichlet(beta).T)      # V x K
    stat = np.zeros((K, V))
    D = X.shape[0]
    start = 0
    while start < D:   # documents in chunks of about _CHUNK_NNZ stored pairs
        stop = int(np.searchsorted(X.indptr, X.indptr[start] + _CHUNK_NNZ, side="right"))
        stop = min(D, max(stop - 1, start + 1))
        Xc = X[start:stop]
        et = _estep(Xc, eb_t, alpha, n_threads=n_threads)
        pairs = np.arange(Xc.nnz, dtype=np.int64)          # one group per stored pair
        stat += _clipped_sum(Xc, et, eb_t, presence, word_weight, Xc.indptr, pairs,
                             np.r_[pairs, Xc.nnz], norm, granularity, n_threads)[0]
        start = stop
    return stat


def _checked_word_weight(word_weight, V):
    """``word_weight`` as V finite positive floats (or None). Public (post-processing of a
    release): an inf weight would make a NaN contribution in exactly the documents holding
    that word."""
    if word_weight is None:
        return None
    word_weight = np.asarray(word_weight, dtype=np.float64)
    if word_weight.shape != (V,) or not np.all(np.isfinite(word_weight) & (word_weight > 0)):
        raise ValueError("word_weight must hold V finite positive weights")
    return word_weight


def _clipped_sum(Xc, et, eb_t, presence, word_weight, unit_ptr, slots, group_ptr, norm,
                 granularity, n_threads):
    """``(stat, ok)``: the K x V sum over units of their clipped contributions (Cython
    kernel ``clipped_lattice_sum``) and the 0/1 verdict of each unit's exact check.

    The stored pairs of CSR ``Xc`` (document d, word w, count n) contribute
    n et[d, k] eb[w, k] / phinorm_dw per topic k (1 instead of n with ``presence``; times
    ``word_weight[w]`` if given), phinorm_dw = sum_k et[d, k] eb[w, k]; ``et`` is the
    documents' exp(E[log theta]), ``eb_t`` exp(E[log beta]) word-major. A group (one
    (unit, word) cell) adds the pairs ``slots[group_ptr[q]:group_ptr[q + 1]]`` in that
    order, a unit (a document, or a user) is the groups ``unit_ptr[u]:unit_ptr[u + 1]``.
    Each unit is scaled down to L2 norm at most ``norm`` (divided by its largest entry
    first: entries of ~1e-160 would make the sum of squares subnormal and the norm off by
    1e-10) and, with ``granularity`` g, floored to multiples of g and kept only if it
    passes the exact integer check (``_within_norm``)."""
    V, K = eb_t.shape
    rows = np.repeat(np.arange(Xc.shape[0], dtype=np.int64), np.diff(Xc.indptr))
    numerators = np.ones(Xc.nnz) if presence else Xc.data.astype(np.float64)
    # a hair below ``norm``: floating-point scaling can never end above the bound
    kw = dict(word_weight=word_weight, n_threads=n_threads)
    args = (np.asarray(unit_ptr, dtype=np.int64), np.asarray(group_ptr, dtype=np.int64),
            np.asarray(slots, dtype=np.int64), rows, Xc.indices.astype(np.int32),
            numerators, et, eb_t, norm * (1 - 2.0 ** -40))
    if granularity is None:
        out = np.zeros((V, K))
        ok = _svi.clipped_lattice_sum(*args, out_sum=out, **kw)
        return out.T, ok
    bound = norm / granularity
    out = np.zeros((V, K), dtype=np.int64)
    ok = _svi.clipped_lattice_sum(*args, granularity, bound, _lattice_limit(bound),
                                  out_lattice=out, **kw)
    return out.T * granularity, ok


def _lattice_limit(bound):
    """floor(bound^2) exactly, the largest integer sum of squares of a unit's lattice
    contribution (``bound`` = norm / g)."""
    if not bound < 2.0 ** 31:
        # entries <= bound and sums of squares <= bound^2 (1 + tiny) must fit in int64;
        # bound depends only on public parameters (norm / sigma), so raising leaks nothing
        raise ValueError(f"noise too small for the clip norm (norm / lattice step = {bound:.3g} "
                         ">= 2^31): lower target_epsilon")
    return math.floor(Fraction(bound) ** 2)


def _within_norm(m, indptr, bound):
    """1.0 for each unit whose lattice contribution ``m`` (integers, as floats; the rows
    ``indptr[u]:indptr[u + 1]``) has L2 norm at most ``bound`` (= norm / g), checked in
    exact integer arithmetic, else 0.0: the check ``clipped_lattice_sum`` applies to every
    unit. NaN, inf or an entry above the bound (which would cast to garbage or square past
    2^63 and wrap) fails its unit. Such a unit (never seen: floating-point error far below
    the 2^-40 margin) is dropped rather than allowed to exceed its sensitivity."""
    limit = _lattice_limit(bound)
    return _svi.lattice_norm_ok(np.ascontiguousarray(m, dtype=np.float64),
                                np.asarray(indptr, dtype=np.int64), float(bound), limit)
