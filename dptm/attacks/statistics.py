"""Query statistics of a topic-word matrix on documents: the LiRA statistic zeta of
Manzonelli et al. 2024 (eq. 3) and the statistics of Huang et al. (2022) on theta-hat.

All functions here see only a released topic-word matrix ``Phi`` (K x V) and the documents;
they are post-processing of what a (private) topic model releases.
"""
import numpy as np
import scipy.sparse as sp

from .. import _svi
from .._threads import effective_n_jobs
from .._utils import check_count_matrix, check_int, check_positive, check_probability_matrix

__all__ = [
    "zeta", "get_topic_word", "negative_entropy", "topic_std", "logit_max",
    "compute_statistics", "STATISTICS",
]

#: Names accepted by :func:`compute_statistics`, in their canonical order.
STATISTICS = ("zeta", "neg_entropy", "std", "logit_max")

# logit(max theta) is computed at min(max, 1 - _LOGIT_EPS), as the authors' code does.
_LOGIT_EPS = 1e-11

# The zeta kernel allocates (14 K + K^2) doubles of scratch (the K^2 is the Newton finish's
# Hessian); refuse clearly above this instead of failing in malloc (K = 1e5 needs 75 GiB).
ZETA_SCRATCH_LIMIT = 1 << 30


def get_topic_word(estimator):
    """The row-stochastic topic-word matrix (K x V) released by a fitted topic model.

    Parameters
    ----------
    estimator : fitted estimator, Pipeline or array-like (K, V)
        A dptm model (``topic_word_``), scikit-learn's ``LatentDirichletAllocation`` or any
        estimator with a non-negative ``components_`` (rows normalised here), a
        ``sklearn.pipeline.Pipeline`` (its last step is used), or a matrix itself.

    Returns
    -------
    ndarray of float64, shape (K, V); every row sums to 1.
    """
    if hasattr(estimator, "steps") and hasattr(estimator, "named_steps"):
        estimator = estimator.steps[-1][1]
    if hasattr(estimator, "topic_word_"):
        phi = np.asarray(estimator.topic_word_, dtype=np.float64)
    elif hasattr(estimator, "components_"):
        phi = np.asarray(estimator.components_, dtype=np.float64)
    elif isinstance(estimator, (np.ndarray, list, tuple)) or sp.issparse(estimator):
        phi = estimator.toarray() if sp.issparse(estimator) else np.asarray(estimator, dtype=np.float64)
        phi = np.asarray(phi, dtype=np.float64)
    else:
        raise TypeError(
            "estimator must be a fitted topic model with topic_word_ or components_, a Pipeline "
            f"ending in one, or a (K, V) matrix; got {type(estimator).__name__} "
            "(is it fitted?)")
    if phi.ndim != 2 or phi.shape[0] < 1 or phi.shape[1] < 1:
        raise ValueError(f"topic-word matrix must be 2-D (K, V) with K, V >= 1, got shape {phi.shape}")
    if not np.all(np.isfinite(phi)):
        raise ValueError("topic-word matrix contains NaN or infinity")
    if np.any(phi < 0):
        raise ValueError("topic-word matrix must be non-negative (negative entries found)")
    sums = phi.sum(axis=1, keepdims=True)
    if np.any(sums <= 0):
        raise ValueError("topic-word matrix has a topic (row) with zero total mass")
    return phi / sums


def _prepare(phi, X):
    phi = get_topic_word(phi)
    X = check_count_matrix(X, name="X")
    if X.shape[1] != phi.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns (words) but the topic-word matrix has "
                         f"{phi.shape[1]}; encode the documents with the target's vocabulary")
    return phi, X


def zeta(phi, X, tol=1e-10, max_iter=10000, return_theta=False, return_n_iter=False,
         accelerate=True, floor=1e-300, uncertified="raise", n_jobs=None):
    """The LiRA query statistic zeta(Phi, d) of every document (Manzonelli et al. 2024 eq. 3).

    ``zeta(Phi, d) = max over theta in the simplex of sum_w c_dw log(sum_k theta_k Phi[k, w])``,
    the best log-likelihood of the document's bag of words under a single mixture of the
    topics. Solved per document in C by the EM fixed-point update
    ``theta <- theta * (Phi[:, w] @ (c / (theta @ Phi[:, w]))) / N_d`` (SQUAREM-accelerated,
    then finished by active-set Newton steps accepted only when the objective does not
    decrease, so the scheme stays monotone), stopped when the Frank-Wolfe duality gap
    certifies a relative accuracy ``tol`` on the objective.

    Parameters
    ----------
    phi : array-like (K, V) or fitted topic model
        Topic-word matrix; rows are normalised (see :func:`get_topic_word`).
    X : {array-like, sparse matrix} of shape (n_docs, V)
        Non-negative integer counts, columns in the vocabulary of ``phi``. Empty documents
        get zeta = 0 and a uniform theta.
    tol : float, default=1e-10
        Relative tolerance on the objective: stop when ``max_k g_k - N_d <= tol * |objective|``
        (``g`` the gradient), which bounds ``zeta - objective``.
    max_iter : int, default=10000
        Cap on EM-map evaluations per document.
    return_theta : bool, default=False
        Also return theta-hat, the maximiser (n_docs, K).
    return_n_iter : bool, default=False
        Also return the EM-map evaluations per document.
    accelerate : bool, default=True
        SQUAREM acceleration of the EM map and the Newton finish (same fixed points,
        monotone objective); False runs the plain EM fixed point.
    floor : float, default=1e-300
        Mixture probabilities below ``floor`` are floored (words no topic can generate).
    uncertified : {"raise", "warn", "ignore"}, default="raise"
        What to do when the solver stops at ``max_iter`` without certifying ``tol`` on some
        document (seen with many sparse topics, K > V): "raise" a ValueError that states
        the number of documents and the largest duality gap (the certified bound on
        ``zeta - objective``); "warn" returns the (lower-bound) objective with a
        RuntimeWarning saying the same; "ignore" returns it silently (a deliberately
        truncated solve; ``return_n_iter`` tells which documents reached ``max_iter``).
    n_jobs : int or None, default=None
        Threads over documents (scikit-learn semantics: None is 1, -1 every core; fewer
        if their solver scratch, 14 K + K^2 doubles each, would pass 1 GiB). Each
        document is solved alone, so the output is bit-identical for every ``n_jobs``.

    Returns
    -------
    zeta : ndarray (n_docs,)
    theta : ndarray (n_docs, K), if ``return_theta``
    n_iter : ndarray of int32 (n_docs,), if ``return_n_iter``

    Examples
    --------
    >>> import numpy as np
    >>> from dptm.attacks import zeta
    >>> phi = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]])
    >>> round(float(zeta(phi, [[2, 0, 0]])[0]), 6)   # theta = (1, 0): 2 log 0.5
    -1.386294
    """
    phi, X = _prepare(phi, X)
    tol = check_positive(tol, "tol")
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    if max_iter > np.iinfo(np.int32).max:
        raise ValueError(f"max_iter must be <= {np.iinfo(np.int32).max} (the kernel's int32 "
                         f"counter), got {max_iter}")
    floor = check_positive(floor, "floor")
    if floor >= 1.0:
        raise ValueError(f"floor must be in (0, 1), got {floor}")
    if uncertified not in ("raise", "warn", "ignore"):
        raise ValueError(f"uncertified must be 'raise', 'warn' or 'ignore', got {uncertified!r}")
    n_threads = effective_n_jobs(n_jobs)
    K = phi.shape[0]
    scratch = (14 * K + K * K) * 8
    if scratch > ZETA_SCRATCH_LIMIT:
        raise ValueError(
            f"zeta: K = {K} topics would need {scratch / 2**30:.1f} GiB of solver scratch "
            f"(14 K + K^2 doubles; the K^2 is the Newton finish's Hessian); at most "
            f"{ZETA_SCRATCH_LIMIT / 2**30:.0f} GiB (about K = 11,580) is supported")
    n_threads = max(1, min(n_threads, ZETA_SCRATCH_LIMIT // scratch))  # one scratch each
    indptr, indices = X.indptr.astype(np.int64), X.indices.astype(np.int32)
    counts = X.data.astype(np.float64)
    z, theta, n_iter = _svi.zeta_batch(indptr, indices, counts, np.ascontiguousarray(phi.T),
                                       tol, max_iter, floor, bool(accelerate),
                                       n_threads=n_threads)
    _check_certified(phi, indptr, indices, counts, z, theta, n_iter, tol, max_iter, floor,
                     uncertified)
    out = [z]
    if return_theta:
        out.append(theta)
    if return_n_iter:
        out.append(n_iter)
    return out[0] if len(out) == 1 else tuple(out)


def _check_certified(phi, indptr, indices, counts, z, theta, n_iter, tol, max_iter, floor, how):
    """Recompute the Frank-Wolfe certificate of the documents that used ``max_iter`` updates:
    zeta <= objective + gap, with gap = max_k g_k - N_d (g the gradient) by concavity."""
    docs = np.flatnonzero(n_iter >= max_iter)
    if docs.size == 0 or how == "ignore":
        return
    gaps = np.zeros(docs.size)
    for i, d in enumerate(docs):
        a, b = indptr[d], indptr[d + 1]
        P = phi[:, indices[a:b]]
        c = counts[a:b]
        p = np.maximum(theta[d] @ P, floor)
        gaps[i] = max(0.0, float(np.max(P @ (c / p))) - c.sum())
    bad = gaps > tol * np.abs(z[docs])
    if not np.any(bad):
        return
    msg = (f"zeta did not certify tol={tol:g} on {int(bad.sum())} of {z.size} documents within "
           f"max_iter={max_iter} (largest duality gap {gaps[bad].max():.3g} nats: zeta may be up "
           f"to that much above the returned value); raise max_iter or tol")
    if how == "raise":
        raise ValueError(msg + ", or pass uncertified='warn' to accept the lower bounds")
    import warnings
    warnings.warn(msg, RuntimeWarning, stacklevel=3)


def _check_theta(theta, name="theta"):
    """theta as a float64 array whose rows (last axis) are probability vectors."""
    arr = np.asarray(theta)
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D (K,) or 2-D (n_docs, K), got shape {arr.shape}")
    return check_probability_matrix(np.atleast_2d(arr), name).reshape(arr.shape)


def negative_entropy(theta):
    """``sum_k theta_k log theta_k`` of each row (0 log 0 = 0); higher means more concentrated."""
    theta = _check_theta(theta)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(theta > 0, theta * np.log(theta), 0.0)
    return terms.sum(axis=-1)


def topic_std(theta):
    """Standard deviation (population, ddof=0) of each row of theta."""
    return _check_theta(theta).std(axis=-1)


def logit_max(theta, eps=_LOGIT_EPS):
    """``logit(max_k theta_k)``, the maximum capped at ``1 - eps`` so that it stays finite."""
    eps = check_positive(eps, "eps")
    if not eps < 0.5:
        raise ValueError(f"eps must be in (0, 0.5), got {eps}")
    m = np.minimum(_check_theta(theta).max(axis=-1), 1.0 - eps)
    m = np.maximum(m, eps)
    return np.log(m) - np.log1p(-m)


def _check_statistics(statistics):
    if isinstance(statistics, str):
        statistics = (statistics,)
    statistics = tuple(statistics)
    if not statistics:
        raise ValueError("statistics must name at least one of " + ", ".join(STATISTICS))
    for s in statistics:
        if s not in STATISTICS:
            raise ValueError(f"statistics: unknown statistic {s!r}; choose from {', '.join(STATISTICS)}")
    if len(set(statistics)) != len(statistics):
        raise ValueError(f"statistics has duplicates: {statistics}")
    return statistics


def compute_statistics(phi, X, statistics=("zeta",), tol=1e-10, max_iter=10000,
                       uncertified="raise"):
    """Several query statistics of every document from one zeta solve.

    ``zeta`` is the maximised log-likelihood; ``neg_entropy``, ``std`` and ``logit_max`` are
    the Huang et al. statistics of theta-hat (the zeta maximiser), oriented as in
    Manzonelli et al. 2024 App. C so that each tends to increase when the document is a member.

    Returns
    -------
    ndarray (n_docs, len(statistics))
    """
    statistics = _check_statistics(statistics)
    z, theta = zeta(phi, X, tol=tol, max_iter=max_iter, return_theta=True,
                    uncertified=uncertified)
    funcs = {"zeta": lambda: z, "neg_entropy": lambda: negative_entropy(theta),
             "std": lambda: topic_std(theta), "logit_max": lambda: logit_max(theta)}
    return np.column_stack([funcs[s]() for s in statistics])
