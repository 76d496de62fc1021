"""TopicDP's sensitivity sampling (Wang et al. 2022 Algorithm 1, after Rubinstein & Alda
2017): the sample size and order statistic, the released matrix of any topic model, the
aligned distances between two fits, and the refits without one user's documents."""
import math

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from scipy.special import lambertw
from sklearn.base import clone

from .. import _progress
from .._utils import check_int, check_probability, check_random_state, spawn_generators

# --------------------------------------------------------------------------------------
# Algorithm 1: sample size h and order statistic k
# --------------------------------------------------------------------------------------
def sensitivity_sample_size(gamma, rho=None):
    """Sample size ``h`` and order statistic ``k`` of Wang et al. 2022 Algorithm 1.

    ``rho = exp(W_{-1}(-gamma / (2 sqrt(e))) + 1/2)`` (Lambert W, lower branch) is the
    value of rho that minimises ``log(1/rho) / (2 (gamma - rho)^2)``; then::

        h = ceil(log(1/rho) / (2 (gamma - rho)^2))                       (Theorem 1, eq. 3)
        k = ceil(h (1 - gamma + rho + sqrt(log(1/rho) / (2 h))))          (eq. 4)

    and the sampled sensitivity is the k-th smallest of h sampled distances.

    Parameters
    ----------
    gamma : float in (0, 1)
        Confidence parameter of random DP.
    rho : float in (0, min(gamma, 1/2)), optional
        Approximation confidence; the optimal value above when None.

    Returns
    -------
    h, k : int (1 <= k <= h)
    rho : float
    """
    gamma = check_probability(gamma, "gamma", high_open=True)
    if rho is None:
        rho = float(math.exp(lambertw(-gamma / (2.0 * math.sqrt(math.e)), -1).real + 0.5))
    else:
        rho = check_probability(rho, "rho", high_open=True)
    if not rho < min(gamma, 0.5):
        raise ValueError(f"rho must be in (0, min(gamma, 1/2)) = (0, {min(gamma, 0.5)}), got {rho}")
    log_inv = math.log(1.0 / rho)
    h = int(math.ceil(log_inv / (2.0 * (gamma - rho) ** 2)))
    k = int(math.ceil(h * (1.0 - gamma + rho + math.sqrt(log_inv / (2.0 * h)))))
    # k <= h holds exactly because h >= log(1/rho) / (2 (gamma - rho)^2); guard round-off.
    return h, min(max(k, 1), h), rho


# --------------------------------------------------------------------------------------
# The released matrix and distances between two fits
# --------------------------------------------------------------------------------------
def topic_word_matrix(estimator):
    """Row-stochastic K x V topic-word matrix of a fitted topic model.

    ``topic_word_`` when the estimator has it (dptm models); otherwise ``components_``
    normalised row by row (scikit-learn's LatentDirichletAllocation and NMF). Components
    with negative entries (TruncatedSVD as LSI) are taken in absolute value first: the
    sign of a singular vector is arbitrary, so |loading| is the comparable quantity. A row
    with no mass becomes uniform.
    """
    W = getattr(estimator, "topic_word_", None)
    if W is None:
        W = getattr(estimator, "components_", None)
        if W is None:
            raise TypeError(f"{type(estimator).__name__} exposes neither topic_word_ nor "
                            "components_; TopicDP needs a fitted model with a K x V topic-word "
                            "matrix")
    W = np.abs(np.asarray(W.toarray() if sp.issparse(W) else W, dtype=np.float64))
    if W.ndim != 2 or not np.all(np.isfinite(W)):
        raise ValueError("the estimator's topic-word matrix must be a finite 2-D array")
    return _normalise_rows(W)


def topic_weights(estimator):
    """Size of each topic, used to rank topics for the keyword release.

    ``explained_variance_`` for TruncatedSVD; otherwise the row sums of |components_|
    (the expected number of tokens per topic for LDA pseudo-counts); uniform if neither.
    """
    ev = getattr(estimator, "explained_variance_", None)
    if ev is not None:
        return np.asarray(ev, dtype=np.float64)
    C = getattr(estimator, "components_", None)
    if C is None:
        return np.ones(topic_word_matrix(estimator).shape[0])
    C = C.toarray() if sp.issparse(C) else np.asarray(C)
    return np.abs(C).sum(axis=1).astype(np.float64)


def _normalise_rows(M):
    M = np.asarray(M, dtype=np.float64)
    s = M.sum(axis=1, keepdims=True)
    out = np.empty_like(M)
    empty = (s[:, 0] <= 0)
    out[~empty] = M[~empty] / s[~empty]
    out[empty] = 1.0 / M.shape[1]
    return out


def _sq_dist(A, B):
    """Squared Euclidean distances between the rows of A (a x d) and of B (b x d)."""
    d = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)
    return np.maximum(d, 0.0)


def aligned_frobenius(A, B, align=True):
    """Frobenius distance ``min_pi ||A - B[pi]||_F`` over matchings pi of the rows.

    Topic models are identified only up to a permutation of topics, so two fits are
    compared after the optimal one-to-one matching of rows (Hungarian algorithm,
    ``scipy.optimize.linear_sum_assignment`` on squared row distances, which minimises the
    Frobenius norm exactly). With ``align=False`` rows are compared in order.
    """
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if A.ndim != 2 or A.shape[1] != B.shape[1]:
        raise ValueError(f"A and B must be 2-D with the same number of columns, got {A.shape} "
                         f"and {B.shape}")
    if not align:
        if A.shape != B.shape:
            raise ValueError("align=False needs A and B of the same shape")
        return float(np.sqrt(((A - B) ** 2).sum()))
    cost = _sq_dist(A, B)
    r, c = linear_sum_assignment(cost)
    # rows of the larger matrix left unmatched count in full
    extra = 0.0
    if A.shape[0] > B.shape[0]:
        extra = float((A[np.setdiff1d(np.arange(A.shape[0]), r)] ** 2).sum())
    return float(np.sqrt(cost[r, c].sum() + extra))


def keyword_block(W, weights, n_top_topics, n_top_words):
    """The paper's m x n release: top-m topics (by ``weights``) and their top-n words.

    Returns ``(topics, word_ids, values)``: the m topic indices (largest weight first,
    ties by index), an (m, n) array of word ids (most probable first, ties by index) and
    the (m, n) array ``W[topics[i], word_ids[i, j]]``.
    """
    W = np.asarray(W, dtype=np.float64)
    m = min(int(n_top_topics), W.shape[0])
    n = min(int(n_top_words), W.shape[1])
    topics = np.lexsort((np.arange(W.shape[0]), -np.asarray(weights, dtype=np.float64)))[:m]
    rows = W[topics]
    cols = np.argsort(-rows, axis=1, kind="stable")[:, :n]
    return topics, cols, np.take_along_axis(rows, cols, axis=1)


def block_distance(W_ref, topics, word_ids, W_other):
    """Aligned Frobenius distance between the keyword block of ``W_ref`` and ``W_other``.

    The block is ``W_ref[topics[i], word_ids[i]]`` (m x n). Each of its rows is matched to
    a distinct topic of ``W_other`` (optimal assignment over all of W_other's topics) and
    compared on the same word ids: the change, under removal of a user, of the values the
    keyword release publishes.
    """
    W_ref = np.asarray(W_ref, dtype=np.float64)
    W_other = np.asarray(W_other, dtype=np.float64)
    block = np.take_along_axis(W_ref[topics], word_ids, axis=1)               # (m, n)
    cand = W_other[:, word_ids]                                               # (K', m, n)
    cost = ((cand - block[None, :, :]) ** 2).sum(axis=2).T                    # (m, K')
    r, c = linear_sum_assignment(cost)
    extra = float((block[np.setdiff1d(np.arange(block.shape[0]), r)] ** 2).sum())
    return float(np.sqrt(cost[r, c].sum() + extra))


# --------------------------------------------------------------------------------------
# Sensitivity sampling (Algorithm 1) with refits in parallel
# --------------------------------------------------------------------------------------
def _with_seed(estimator, seed):
    # a refit is nested in TopicDP's fit (maybe in another process): it reports nothing
    est = _progress.silenced(clone(estimator))
    if "random_state" in est.get_params(deep=False):
        # scikit-learn estimators take seeds below 2^32
        est.set_params(random_state=None if seed is None else int(seed) % (2**31 - 1))
    return est


def _fit_topic_word(estimator, X, rows, seed):
    est = _with_seed(estimator, seed)
    est.fit(X if rows is None else X[rows])
    return topic_word_matrix(est), est


def _refit_distance(estimator, X, rows, seed, distance, reference):
    W, _ = _fit_topic_word(estimator, X, rows, seed)
    return distance(reference, W)


class _FullDistance:
    """Picklable distance of the full K x V release."""

    def __call__(self, ref, W):
        return aligned_frobenius(ref, W)


class _BlockDistance:
    """Picklable distance of the keyword-block release."""

    def __init__(self, topics, word_ids):
        self.topics = topics
        self.word_ids = word_ids

    def __call__(self, ref, W):
        return block_distance(ref, self.topics, self.word_ids, W)


def _group_index(groups, n_docs):
    if groups is None:
        return np.arange(n_docs), n_docs
    g = np.asarray(groups)
    if g.ndim != 1 or g.shape[0] != n_docs:
        raise ValueError(f"groups must be a 1-D array with one user id per document "
                         f"({n_docs}), got shape {g.shape}")
    _, idx = np.unique(g, return_inverse=True)
    return idx.astype(np.int64), int(idx.max()) + 1


def sample_sensitivities(estimator, X, reference, n_samples, *, groups=None, distance=None,
                         seeds=None, random_state=None, n_jobs=None, verbose=0, progress=None):
    """Distances between ``reference`` and refits on the data minus one random user.

    For i = 1..``n_samples``: draw a user uniformly at random (with replacement across
    samples, so the distances are i.i.d. as the DKW argument of Theorem 1 needs), refit a
    clone of ``estimator`` on the documents of every other user, and return
    ``distance(reference, W_i)`` with W_i its row-stochastic topic-word matrix.

    Parameters
    ----------
    estimator : unfitted estimator with ``fit(X)``
    X : {array-like, sparse matrix} (n_docs, n_words)
    reference : ndarray (K, V)
        Topic-word matrix of the model fitted on all of X.
    n_samples : int
    groups : array-like (n_docs,), optional
        User id of each document; each document is its own user when None.
    distance : callable(reference, W) -> float or ndarray, optional
        Default: :func:`aligned_frobenius` on the full matrices. May return an array (e.g.
        distances for several release sizes at once); the results are stacked.
    seeds : sequence of int, optional
        Estimator seed of each refit (``random_state`` of the clone). Default: one fresh
        child seed per refit from ``random_state``.
    random_state : None, int, SeedSequence or Generator
        Draws the users (and the seeds when ``seeds`` is None).
    n_jobs : int, optional
        joblib workers; results do not depend on it.
    progress : callable, optional
        ``progress(done, total)`` after each chunk of refits (about 20 chunks).

    Returns
    -------
    distances : ndarray (n_samples,) or (n_samples, ...)
        In sampling order (not sorted).
    users : ndarray of int (n_samples,)
        Index (into the sorted unique group ids) of the user removed in each sample.
    """
    from joblib import Parallel, delayed

    n_samples = check_int(n_samples, "n_samples", minimum=1)
    n_docs = X.shape[0]
    gidx, n_users = _group_index(groups, n_docs)
    if n_users < 2:
        raise ValueError("sensitivity sampling needs at least 2 users (groups), got "
                         f"{n_users}")
    rng = check_random_state(random_state)
    user_rng, seed_rng = spawn_generators(rng, 2)
    users = user_rng.integers(0, n_users, size=n_samples)
    if seeds is None:
        seeds = [int(g.integers(2**31 - 1)) for g in spawn_generators(seed_rng, n_samples)]
    elif len(seeds) != n_samples:
        raise ValueError(f"seeds must have one seed per sample ({n_samples}), got {len(seeds)}")
    distance = _FullDistance() if distance is None else distance
    if sp.issparse(X):
        X = sp.csr_matrix(X)
    chunk = n_samples if progress is None else max(1, -(-n_samples // 20))
    out = []
    with Parallel(n_jobs=n_jobs, verbose=max(0, int(verbose) - 1) * 10) as parallel:
        for lo in range(0, n_samples, chunk):
            part = range(lo, min(n_samples, lo + chunk))
            out.extend(parallel(
                delayed(_refit_distance)(estimator, X, np.flatnonzero(gidx != users[i]),
                                         seeds[i], distance, reference) for i in part))
            if progress is not None:
                progress(len(out), n_samples)
    return np.asarray(out, dtype=np.float64), users
