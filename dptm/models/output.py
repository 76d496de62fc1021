"""Model-agnostic output perturbation: TopicDP (papers/wang2022).

TopicDP fits any topic model once, estimates how far its topic-word matrix moves when one
user's documents are removed (*sensitivity sampling*, Rubinstein & Alda 2017, as adapted in
papers/wang2022 Algorithm 1), and releases the matrix with Gaussian noise calibrated to that
sampled sensitivity (Algorithm 2). The guarantee is (epsilon, delta, gamma)-*random* DP:
(epsilon, delta)-DP that holds with probability >= 1 - gamma over the draw of neighbouring
data sets - weaker than DP, and stated as such in ``privacy_``.

The building blocks are public functions so that benches can reuse one set of refits for
many (epsilon, gamma, size) settings: :func:`sensitivity_sample_size`,
:func:`topic_word_matrix`, :func:`aligned_frobenius`, :func:`sample_sensitivities`,
:func:`gaussian_sigma`, :func:`mvg_sigma`.
"""
import functools
import math

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from scipy.special import lambertw
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted

from .. import _progress, _random
from .._utils import (check_count_matrix, check_int, check_positive, check_probability,
                      check_random_state, spawn_generators)
from ..accounting import (ApproxDPEvent, GaussianEvent, LaplaceEvent, PrivacyReport,
                          calibrate_gaussian, dp_to_rdp)
from ..mechanisms import (gaussian_noise, laplace_noise, lattice_gaussian, lattice_granularity,
                          lattice_laplace, lattice_rounding_slack)
from ._base import FitScopeMixin

__all__ = [
    "TopicDP", "sensitivity_sample_size", "topic_word_matrix", "topic_weights",
    "aligned_frobenius", "keyword_block", "block_distance", "sample_sensitivities",
    "gaussian_sigma", "mvg_sigma", "laplace_scale", "rounding_slack",
]

_MECHANISMS = ("gaussian", "laplace", "mvg", "gaussian-float", "laplace-float")
_RELEASES = ("full", "keywords")
_CALIBRATIONS = ("renyi", "gaussian")
_REFIT_SEEDS = ("independent", "shared")


# --------------------------------------------------------------------------------------
# Algorithm 1: sample size h and order statistic k
# --------------------------------------------------------------------------------------
def sensitivity_sample_size(gamma, rho=None):
    """Sample size ``h`` and order statistic ``k`` of papers/wang2022 Algorithm 1.

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


# --------------------------------------------------------------------------------------
# Noise calibration
# --------------------------------------------------------------------------------------
def gaussian_sigma(sensitivity, epsilon, delta, calibration="renyi", renyi_order=2.0):
    """Per-entry Gaussian noise for (epsilon, delta)-DP at L2 ``sensitivity``.

    ``calibration="renyi"`` (papers/wang2022 Sec. 3.4): convert (epsilon, delta) to an RDP
    budget eps_R at order alpha = ``renyi_order`` with :func:`dptm.accounting.dp_to_rdp`
    (Asoodeh et al.; Prop. 2), then ``sigma = sqrt(alpha Delta^2 / (2 eps_R))`` (Theorem 2).
    Sound, but a single order is loose: at alpha = 2 and delta = 1e-4 it needs about 15x
    the noise of the tight calibration for epsilon = 1.

    ``calibration="gaussian"``: the smallest sigma whose RDP curve (all orders) gives
    (epsilon, delta) (:func:`dptm.accounting.calibrate_gaussian`).

    Returns
    -------
    sigma : float
    eps_r : float or None
        The RDP budget at ``renyi_order`` (None for ``"gaussian"``).
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    if calibration == "renyi":
        alpha = check_positive(renyi_order, "renyi_order")
        if not alpha > 1:
            raise ValueError(f"renyi_order must be > 1, got {alpha}")
        eps_r = dp_to_rdp(epsilon, delta, alpha)
        if not eps_r > 0:
            raise ValueError(
                f"(target_epsilon={epsilon}, target_delta={delta}) cannot be reached through "
                f"a Renyi order-{alpha} bound (eps_R = 0); use a larger target_delta or "
                "target_epsilon, another renyi_order, or calibration='gaussian'")
        return math.sqrt(alpha * sensitivity ** 2 / (2.0 * eps_r)), eps_r
    if calibration == "gaussian":
        return _noise_multiplier(float(epsilon), float(delta)) * sensitivity, None
    raise ValueError(f"calibration must be one of {_CALIBRATIONS}, got {calibration!r}")


@functools.lru_cache(maxsize=256)
def _noise_multiplier(epsilon, delta):
    """sigma / sensitivity of the tight Gaussian calibration (a function of public
    parameters only; cached: the root-find costs ~30 ms)."""
    return calibrate_gaussian(epsilon, delta)


def laplace_scale(n_rows, epsilon):
    """Laplace scale of the papers/wang2022 Sec. 4.2 baseline: global L1 sensitivity
    ``2 n_rows`` (each released row is a probability vector, and two probability vectors
    differ by at most 2 in L1), so scale = 2 m / epsilon for pure epsilon-DP."""
    return 2.0 * n_rows / check_positive(epsilon, "epsilon")


def _harmonic(r, power):
    return float(np.sum(1.0 / np.arange(1, r + 1) ** power))


def mvg_sigma(shape, sensitivity, epsilon, delta, sup_norm=None):
    """Per-entry noise std of the MVG mechanism (Chanyaswad et al. 2018, Theorem 3) with
    isotropic row and column covariances (Sigma = a I_m, Psi = b I_n).

    Theorem 3 asks ``||sigma(Sigma^-1)||_2 ||sigma(Psi^-1)||_2 <= (-beta + sqrt(beta^2 +
    8 alpha epsilon))^2 / (4 alpha^2)`` with ``alpha = (H_r + H_{r,1/2}) gamma^2 + 2 H_r
    gamma s_2``, ``beta = 2 (m n)^{1/4} zeta(delta) H_r s_2``, ``zeta(delta) = sqrt(2
    sqrt(-m n log delta) - 2 log delta + m n)``, r = min(m, n), H generalized harmonic
    numbers, s_2 the L2 sensitivity and gamma = sup ||f(X)||_F. For isotropic covariances the
    left side is sqrt(m n) / (a b) and the per-entry variance is a b, so the smallest
    per-entry std is ``(sqrt(m n) / bound)^(1/2)``. ``sup_norm`` defaults to sqrt(m) (m
    probability rows). Taken as stated in that paper; the baseline of papers/wang2022.
    """
    m, n = int(shape[0]), int(shape[1])
    s2 = check_positive(sensitivity, "sensitivity")
    epsilon = check_positive(epsilon, "epsilon")
    gam = math.sqrt(m) if sup_norm is None else check_positive(sup_norm, "sup_norm")
    r = min(m, n)
    h1, hh = _harmonic(r, 1.0), _harmonic(r, 0.5)
    zeta = math.sqrt(2.0 * math.sqrt(-m * n * math.log(delta)) - 2.0 * math.log(delta) + m * n)
    a = (h1 + hh) * gam ** 2 + 2.0 * h1 * gam * s2
    b = 2.0 * (m * n) ** 0.25 * zeta * h1 * s2
    bound = (-b + math.sqrt(b * b + 8.0 * a * epsilon)) ** 2 / (4.0 * a * a)
    return math.sqrt(math.sqrt(m * n) / bound)


def rounding_slack(granularity, n_coords, norm=2):
    """How far rounding to the lattice g Z can move a sensitivity: each coordinate of two
    neighbouring statistics is rounded separately, so their difference can grow by up to
    g on each of ``n_coords`` coordinates (:func:`dptm.mechanisms.lattice_rounding_slack`
    with ``rounded="statistic"``): ``g sqrt(n_coords)`` in L2, ``g n_coords`` in L1."""
    return lattice_rounding_slack(granularity, int(n_coords), norm=norm, rounded="statistic")


def _lattice_gaussian_calibration(sensitivity, sigma_of, n_coords):
    """(sigma, g, total_sensitivity): the smallest fixed point of sigma >= sigma_of(Delta +
    slack(g)) with the recorded sensitivity covering the rounding of all ``n_coords``
    released coordinates.

    g is the finest grid the exact sampler supports (sigma / g in [8192, 16384)) and sigma
    is rounded up to a whole number of steps, so the variance in lattice units is an exact
    integer (the sampler then needs no rational approximation)."""
    total = sensitivity
    for _ in range(200):
        sigma = sigma_of(total)
        g = lattice_granularity(sigma) / 2.0
        sigma = g * math.ceil(sigma / g)
        need = sensitivity + rounding_slack(g, n_coords)
        if need <= total:
            return sigma, g, total
        total = need
    raise ValueError(
        f"the lattice rounding of {n_coords} released values needs more noise than the "
        "calibration can absorb at this epsilon; release fewer values (output='keywords') or "
        "raise target_epsilon")


def _lattice_laplace_granularity(l1_sensitivity, n_coords, scale):
    """A power of two g with rounding slack g * n_coords <= 1e-3 x the L1 sensitivity and at
    most scale / 4096 (the noise is resolved finely), as coarse as the exact discrete
    Laplace allows (scale / g <= 2^40)."""
    g = 2.0 ** math.floor(math.log2(min(1e-3 * l1_sensitivity / max(n_coords, 1),
                                        scale / 4096.0)))
    if scale / g > 2.0 ** 40:
        raise ValueError(f"{n_coords} released values are too many for the exact Laplace "
                         "baseline at this epsilon")
    return g


# --------------------------------------------------------------------------------------
# The estimator
# --------------------------------------------------------------------------------------
_SENSITIVITY_HELP = (
    "TopicDP needs a sensitivity that does not depend on the private data: pass "
    "sensitivity=<a public bound> (a float: the largest aligned Frobenius change of the "
    "released matrix when one user is removed), or reference_X=<a public reference corpus with "
    "the same columns> to sample the sensitivity on public data (papers/wang2022 Algorithm 1 "
    "run offline). sensitivity='sample-private' reproduces the paper, which samples it on the "
    "private data: the noise scale then depends on the private data and the release is NOT DP")


class TopicDP(FitScopeMixin, BaseEstimator):
    """Model-agnostic differentially private topic release (TopicDP, papers/wang2022).

    Fits ``estimator`` on all the data and releases its topic-word matrix with noise
    calibrated to a sensitivity (Algorithm 2). The sensitivity must not depend on the
    private data: it is a public bound (``sensitivity=``) or it is sampled, as in the
    paper's Algorithm 1, on a **public reference corpus** (``reference_X=``). The paper
    samples it on the private data itself; that is kept only as a labelled mode
    (``sensitivity="sample-private"``), because the noise scale then reveals the data
    (from the report alone, "target user in" vs "out" was told apart 40 of 40 times). Works
    with any estimator exposing a topic-word matrix after ``fit(X)``: dptm models,
    scikit-learn's ``LatentDirichletAllocation``, ``NMF``, ``TruncatedSVD`` (|components_|).

    Parameters
    ----------
    estimator : estimator, default=None
        The (unfitted) topic model; ``LatentDirichletAllocation(n_components=10)`` when None.
        It is cloned; its ``random_state`` (if any) is replaced by fresh seeds (the model's
        randomness is not part of the mechanism: it only has to be independent of the noise).
    target_epsilon : float > 0, default=1.0
    target_delta : float in (0, 1), default=1e-4
    gamma : float in (0, 1), default=0.1
        Confidence of random DP when the sensitivity is sampled: h = 285 refits for 0.1, 61
        for 0.2, 24 for 0.3, 1305 for 0.05 (:func:`sensitivity_sample_size`).
    mechanism : {"gaussian", "laplace", "mvg", "gaussian-float", "laplace-float"}, \
default="gaussian"
        ``"gaussian"``: TopicDP, exact discrete Gaussian noise on a power-of-two lattice
        (the recorded sensitivity includes the rounding slack). ``"laplace"``: the paper's
        baseline, exact lattice Laplace noise with global L1 sensitivity 2m (assumes each
        released row is a probability vector over fixed columns); pure epsilon-DP, needs no
        sensitivity. ``"mvg"``: the MVG mechanism (Chanyaswad et al. 2018) with isotropic
        covariances, drawn on the lattice. ``"gaussian-float"`` / ``"laplace-float"``:
        floating-point samplers, whose low bits can reveal the input (Mironov 2012); they
        emit :class:`~dptm.exceptions.NotHardenedWarning` and the report says "not hardened".
    output : {"full", "keywords"}, default="full"
        ``"full"``: the whole K x V topic-word matrix. ``"keywords"``: the paper's m x n
        release - the top ``n_top_topics`` topics and their top ``n_top_words`` words; the
        values are perturbed, but the word ids are chosen from the non-private model and
        released as they are: they are NOT covered by the guarantee.
    n_top_topics, n_top_words : int, default=10
        m and n of the keyword release (ignored for ``output="full"``).
    calibration : {"gaussian", "renyi"}, default="gaussian"
        ``"gaussian"``: the smallest sigma whose RDP curve gives (epsilon, delta);
        ``"renyi"``: the paper's single-order route (papers/wang2022 Sec. 3.4).
    renyi_order : float > 1, default=2.0
    refit_seed : {"independent", "shared"}, default="independent"
        Seeds of the refits of sensitivity sampling: each its own, or all the same.
    sensitivity : float > 0, "sample-private" or None, default=None
        A public bound on the aligned Frobenius change of the released matrix when one
        user is removed (e.g. ``sensitivity_`` of a fit on a public reference corpus).
        ``"sample-private"``: the paper's mode (sampling on the private data, NOT DP).
        None: sample on ``reference_X``; without it ``fit`` raises and says what to pass.
    reference_X : {array-like, sparse matrix} (n_ref_docs, n_words), optional
        A public corpus over the same columns (vocabulary) as ``X``: Algorithm 1 runs on it
        (a fit plus h refits, each without one random reference user).
    reference_groups : array-like (n_ref_docs,), optional
        User of each reference document; each document is a user when None.
    max_refits : int, default=2000
        Work-size guard: ``fit`` refuses to start more refits than this (gamma = 0.001 would
        need 5,486,187). Raise it deliberately for small gamma.
    n_jobs : int, optional
        joblib workers for the refits; the output does not depend on it.
    random_state : None, int, SeedSequence or numpy.random.Generator
        None (default): the noise, the permutation of the rows and the refit subsets come
        from the secret generator (:func:`dptm._random.private_generator`). Anything else
        is a labelled test mode (:class:`~dptm.exceptions.SeededPrivacyWarning`).
    verbose : int or None, default=None
        Progress on the ``"dptm"`` logger (:mod:`dptm._progress`): one line for the fit of
        the wrapped model and one per chunk of refits (about 20 for any ``h``); the refits
        themselves are silent. None: the lines are logged at INFO but nothing is
        configured (they show if the application's logging lets INFO through); 0: silent;
        >= 1: logged, with a stderr handler for the fit if the application configured
        none. Counts only: no timing of work on private data.

    Attributes
    ----------
    topic_word_ : ndarray (m, V)
        The released, row-normalised noisy topic-word matrix (rows in random order).
    components_ : ndarray (m, V)
        The released noisy matrix with negatives clamped to 0 (exact multiples of
        ``lattice_granularity_`` for the exact mechanisms).
    keyword_ids_ : ndarray of int (m, n)
        ``output="keywords"`` only: the word ids of each released row (NOT private).
    keyword_weights_ : ndarray (m, n)
        ``output="keywords"`` only: the noisy values, clamped at 0.
    sensitivity_ : float or None
        The sensitivity the noise is calibrated to (before the lattice slack).
    sensitivity_source_ : str
        "given", "reference" or "sample-private".
    sensitivity_samples_ : ndarray (h,) or None
        The sampled distances, sorted (public for ``reference_X``; private data for
        "sample-private").
    n_samples_, order_statistic_, rho_ : int, int, float
        h, k and rho of Algorithm 1.
    noise_scale_ : float
        Per-entry noise actually drawn: sigma (Gaussian, MVG) or scale b (Laplace).
    lattice_granularity_ : float or None
        Spacing g of the lattice (None for the floating-point samplers).
    eps_renyi_ : float or None
    estimator_ : estimator
        The non-private model fitted on all the data: never publish it (nor this object).
    privacy_ : dptm.accounting.PrivacyReport
    transform_seed_ : int
        Seed of ``release().transform`` (fresh entropy; public).

    Privacy
    -------
    Adjacency: ``user`` - neighbouring corpora differ by all documents of one user (group);
    with ``groups=None`` each document is a user. With ``sensitivity=<bound>`` the release
    is (epsilon, delta)-DP for every pair of neighbours whose aligned Frobenius change is
    within the bound (the bound is the caller's claim, not checked). With ``reference_X``
    it is (epsilon, delta, gamma)-random DP for neighbours drawn from the reference
    corpus, which stands in for the private data (papers/wang2022 Def. 4, Theorem 1); the
    noise scale is a function of public data only. With ``"sample-private"`` the noise
    scale depends on the private data: not DP, and Delta_s is revealed. The vocabulary
    (the column labels) is treated as public. The released rows are in a uniformly random
    order. Released: ``release()`` - the noisy matrix, the report, public hyperparameters.

    Examples
    --------
    >>> from sklearn.decomposition import NMF
    >>> from dptm import TopicDP
    >>> from dptm.datasets import make_lda_corpus
    >>> X, _, _ = make_lda_corpus(60, 30, 3, random_state=0)
    >>> public, _, _ = make_lda_corpus(60, 30, 3, random_state=1)   # a public corpus
    >>> dp = TopicDP(NMF(3, max_iter=50), target_epsilon=5, gamma=0.4,
    ...              reference_X=public).fit(X)
    >>> dp.topic_word_.shape, dp.n_samples_
    ((3, 30), 13)
    """

    def __init__(self, estimator=None, *, target_epsilon=1.0, target_delta=1e-4, gamma=0.1,
                 mechanism="gaussian", output="full", n_top_topics=10, n_top_words=10,
                 calibration="gaussian", renyi_order=2.0, refit_seed="independent",
                 sensitivity=None, reference_X=None, reference_groups=None, max_refits=2000,
                 n_jobs=None, random_state=None, verbose=None):
        self.estimator = estimator
        self.target_epsilon = target_epsilon
        self.target_delta = target_delta
        self.gamma = gamma
        self.mechanism = mechanism
        self.output = output
        self.n_top_topics = n_top_topics
        self.n_top_words = n_top_words
        self.calibration = calibration
        self.renyi_order = renyi_order
        self.refit_seed = refit_seed
        self.sensitivity = sensitivity
        self.reference_X = reference_X
        self.reference_groups = reference_groups
        self.max_refits = max_refits
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # -- validation ------------------------------------------------------------------
    def _check_params(self):
        self._epsilon = check_positive(self.target_epsilon, "target_epsilon")
        self._delta = check_probability(self.target_delta, "target_delta", high_open=True)
        self._gamma = check_probability(self.gamma, "gamma", high_open=True)
        for name, value, allowed in (("mechanism", self.mechanism, _MECHANISMS),
                                     ("output", self.output, _RELEASES),
                                     ("calibration", self.calibration, _CALIBRATIONS),
                                     ("refit_seed", self.refit_seed, _REFIT_SEEDS)):
            if not isinstance(value, str) or value not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
        check_int(self.n_top_topics, "n_top_topics", minimum=1)
        check_int(self.n_top_words, "n_top_words", minimum=1)
        check_int(self.max_refits, "max_refits", minimum=1)
        if self.verbose is not None:
            check_int(self.verbose, "verbose", minimum=0)
        if isinstance(self.sensitivity, str):
            if self.sensitivity != "sample-private":
                raise ValueError("sensitivity must be a float > 0, 'sample-private' or None, got "
                                 f"{self.sensitivity!r}")
            if self.reference_X is not None:
                raise ValueError("sensitivity='sample-private' samples on the private data: do "
                                 "not pass reference_X with it")
            source = "sample-private"
        elif self.sensitivity is not None:
            check_positive(self.sensitivity, "sensitivity")
            if self.reference_X is not None:
                raise ValueError("pass either sensitivity=<bound> or reference_X=<public corpus>,"
                                 " not both")
            source = "given"
        elif self.reference_X is not None:
            source = "reference"
        elif self.mechanism in ("laplace", "laplace-float"):
            source = None           # global sensitivity 2m: nothing to sample
        else:
            raise ValueError(_SENSITIVITY_HELP)
        if self.mechanism in ("laplace", "laplace-float"):
            source = None
        if self.calibration == "renyi":
            order = check_positive(self.renyi_order, "renyi_order")
            if not order > 1:
                raise ValueError(f"renyi_order must be > 1, got {order}")
        if self.estimator is None:
            from sklearn.decomposition import LatentDirichletAllocation
            base = LatentDirichletAllocation(n_components=10)
        elif not hasattr(self.estimator, "fit") or not hasattr(self.estimator, "get_params"):
            raise TypeError("estimator must be a scikit-learn style estimator with fit and "
                            f"get_params, got {type(self.estimator).__name__}")
        else:
            base = self.estimator
        return base, source

    @staticmethod
    def _check_X(X, name="X"):
        if sp.issparse(X):
            X = sp.csr_matrix(X)
        else:
            X = np.asarray(X)
            if X.ndim != 2:
                raise ValueError(f"{name} must be a 2-D (n_docs, n_words) matrix, got {X.ndim} "
                                 "dimension(s)")
        if X.shape[0] < 2:
            raise ValueError(f"{name} must have at least 2 documents, got {X.shape[0]}")
        if X.shape[1] < 1:
            raise ValueError(f"{name} has an empty vocabulary: 0 columns")
        return X

    def _refits(self, gamma):
        h, k, rho = sensitivity_sample_size(gamma)
        cap = check_int(self.max_refits, "max_refits", minimum=1)
        if h > cap:
            raise ValueError(
                f"gamma={gamma:g} needs h={h:,} refits of the model for sensitivity sampling "
                f"(papers/wang2022 Algorithm 1), more than max_refits={cap:,}. Use a larger gamma "
                "(0.1 needs 285 refits, 0.05 needs 1,305), pass a public sensitivity bound "
                "(sensitivity=...), or raise max_refits if you mean it")
        return h, k, rho

    # -- fit -------------------------------------------------------------------------
    @_random.private_fit
    def fit(self, X, y=None, groups=None):
        """Fit the wrapped model and release its noisy topics.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_docs, n_words)
            Whatever the wrapped estimator accepts (counts for LDA). Private.
        y : ignored
        groups : array-like of shape (n_docs,), optional
            The user (author) of each document; each document is its own user when None.

        Returns
        -------
        self
        """
        import warnings

        from .._random import private_generator, public_seed
        from ..exceptions import NotHardenedWarning, user_stacklevel

        base, source = self._check_params()
        X = self._check_X(X)
        gidx, n_users = _group_index(groups, X.shape[0])
        ref = None
        if source == "reference":
            ref = self._check_X(self.reference_X, "reference_X")
            if ref.shape[1] != X.shape[1]:
                raise ValueError(f"reference_X has {ref.shape[1]} columns but X has "
                                 f"{X.shape[1]}: the reference corpus must use the same "
                                 "(public) vocabulary")
            ref_gidx, ref_users = _group_index(self.reference_groups, ref.shape[0])
            if ref_users < 2:
                raise ValueError("reference_groups must contain at least 2 users, got "
                                 f"{ref_users}")
        elif source == "sample-private" and n_users < 2:
            raise ValueError(f"groups must contain at least 2 users, got {n_users}")
        if source in ("reference", "sample-private"):
            h, k, rho = self._refits(self._gamma)
        else:
            h = k = rho = None
        if self.mechanism.endswith("-float"):
            warnings.warn(f"TopicDP(mechanism={self.mechanism!r}) draws floating-point noise, whose "
                          "low-order bits can reveal the exact input (Mironov 2012); the default "
                          "'gaussian' / 'laplace' mechanisms are exact on a lattice",
                          NotHardenedWarning, stacklevel=user_stacklevel())

        # One secret stream per fit; nothing derived from it is kept on self.
        gen, seeded = private_generator(self.random_state, "TopicDP")
        self.transform_seed_ = public_seed(gen, seeded)
        fit_seed = public_seed(gen, seeded)
        sample_gen, noise_gen = gen.spawn(2)
        del gen

        self._log("fitting %s on the data", type(base).__name__)
        W, est = _fit_topic_word(base, X, None, fit_seed)
        if "random_state" in est.get_params(deep=False):   # keep no derived seed
            est.set_params(random_state=base.get_params(deep=False)["random_state"])
        self.estimator_ = est
        weights = topic_weights(est)
        if self.output == "full":
            rows_ref = W
        else:
            topics, word_ids, rows_ref = keyword_block(W, weights, self.n_top_topics,
                                                       self.n_top_words)
        m = rows_ref.shape[0]
        n_coords = int(rows_ref.size)

        self.n_samples_, self.order_statistic_, self.rho_ = h, k, rho
        self.sensitivity_samples_ = None
        self.sensitivity_source_ = source
        self.reference_shape_ = None if ref is None else tuple(ref.shape)
        if source is None:
            self.sensitivity_ = None
        elif source == "given":
            self.sensitivity_ = float(self.sensitivity)
        else:
            if source == "reference":
                S_X, S_g = ref, ref_gidx
                S_seed = public_seed(sample_gen, True)
                W_S, est_S = _fit_topic_word(base, ref, None, S_seed)
                if self.output == "full":
                    distance = _FullDistance()
                else:           # the block positions of the reference model: public
                    t_S, ids_S, _ = keyword_block(W_S, topic_weights(est_S), self.n_top_topics,
                                                  self.n_top_words)
                    distance = _BlockDistance(t_S, ids_S)
            else:
                S_X, S_g, W_S, S_seed = X, gidx, W, fit_seed
                distance = _FullDistance() if self.output == "full" else \
                    _BlockDistance(topics, word_ids)
            seeds = [S_seed] * h if self.refit_seed == "shared" else None
            d, _ = sample_sensitivities(base, S_X, W_S, h, groups=S_g, distance=distance,
                                        seeds=seeds, random_state=sample_gen,
                                        n_jobs=self.n_jobs, verbose=self.verbose or 0,
                                        progress=self._progress_printer(h, source))
            self.sensitivity_samples_ = np.sort(d)
            # A zero sampled sensitivity (a data-independent model) is floored so that
            # the lattice stays representable; stated in the report.
            self.sensitivity_ = max(float(self.sensitivity_samples_[k - 1]), 1e-9)

        # noise scale and the release
        self.eps_renyi_ = None
        exact = not self.mechanism.endswith("-float")
        g = None
        if self.mechanism.startswith("laplace"):
            l1 = 2.0 * m
            total = l1
            if exact:
                g = _lattice_laplace_granularity(l1, n_coords, l1 / self._epsilon)
                total = l1 + rounding_slack(g, n_coords, norm=1)
            scale = laplace_scale(m, self._epsilon) * total / l1
            kind = "laplace"
        else:
            sens = self.sensitivity_
            if self.mechanism == "mvg":
                def sigma_of(s):
                    return mvg_sigma(rows_ref.shape, s, self._epsilon, self._delta)
            else:
                def sigma_of(s):
                    sig, self.eps_renyi_ = gaussian_sigma(s, self._epsilon, self._delta,
                                                          self.calibration, self.renyi_order)
                    return sig
            if exact:
                scale, g, total = _lattice_gaussian_calibration(sens, sigma_of, n_coords)
            else:
                scale, total = sigma_of(sens), sens
            kind = "gaussian"
        perm = noise_gen.permutation(m)
        x = rows_ref[perm]
        if exact and kind == "gaussian":
            noisy, g, scale = lattice_gaussian(x, scale, noise_gen, granularity=g)
        elif exact:
            noisy, g, scale = lattice_laplace(x, scale, noise_gen, granularity=g)
        elif kind == "gaussian":
            noisy = x + gaussian_noise(x.shape, scale, noise_gen)
        else:
            noisy = x + laplace_noise(x.shape, scale, noise_gen)
        del noise_gen, sample_gen
        # The event is built from what was drawn: the effective scale of the sampler and
        # the sensitivity including the lattice's rounding slack.
        if kind == "laplace":
            event = LaplaceEvent(scale=scale, sensitivity=total, discrete=exact,
                                 label="TopicDP Laplace baseline (global L1 sensitivity 2m"
                                       + (" + lattice rounding)" if exact else ")"))
        elif self.mechanism == "mvg":
            event = ApproxDPEvent(self._epsilon, self._delta,
                                  label="MVG mechanism (Chanyaswad et al. 2018, Thm. 3)")
        else:
            event = GaussianEvent(sigma=scale, sensitivity=total, discrete=exact,
                                  label="TopicDP output noise")
        self.noise_scale_ = float(scale)
        self.lattice_granularity_ = g
        self._total_sensitivity = float(total)
        clamped = np.maximum(noisy, 0.0)
        if self.output == "full":
            self.keyword_ids_ = None
            self.keyword_weights_ = None
            self.components_ = clamped
            self.topic_word_ = _normalise_rows(clamped)
        else:
            self.keyword_ids_ = word_ids[perm]
            self.keyword_weights_ = clamped
            full = np.zeros((m, W.shape[1]))
            np.put_along_axis(full, self.keyword_ids_, clamped, axis=1)
            self.components_ = full
            tw = _normalise_rows(full)
            for i in np.flatnonzero(clamped.sum(axis=1) <= 0):  # uniform over its keywords
                tw[i] = 0.0
                tw[i, self.keyword_ids_[i]] = 1.0 / self.keyword_ids_.shape[1]
            self.topic_word_ = tw
        self.n_components_ = m
        self.n_features_in_ = X.shape[1]
        self.privacy_ = self._report(event, m, X.shape[1], groups is None, seeded)
        return self

    def _progress_printer(self, h, source):
        """Progress of sensitivity sampling on the ``"dptm"`` logger: one line per chunk of
        refits (or the tqdm bar). Counts only (``h`` follows from the public gamma), no
        timings: whether and what is shown never depends on the data."""
        if self.verbose == 0:
            return None
        self._log("sensitivity sampling (%s): %d refits (gamma=%g)", source, h, self._gamma)

        def progress(done, total):
            _progress.update_bar(self, done, total)
            self._log("sensitivity sampling (%s): %d/%d refits", source, done, total)
        return progress

    def _report(self, event, m, V, per_document, seeded):
        what = (f"noisy {m} x {V} topic-word matrix (all entries), negatives clamped, rows "
                "re-normalised, rows in random order" if self.output == "full" else
                f"noisy {m} x {self.keyword_weights_.shape[1]} keyword-probability block "
                "(top topics x top words); word ids released without protection")
        notes, gamma = [], None
        source = self.sensitivity_source_
        if source == "sample-private":
            what = "PAPER MODE, NOT DP: " + what
            notes.append(
                "PAPER MODE (sensitivity='sample-private', papers/wang2022): noise scale depends "
                "on the private data: not DP; Delta_s is revealed (by this report and "
                "statistically by the noisy matrix). Pass reference_X or a sensitivity bound for "
                "a guarantee")
        if per_document:
            notes.append("groups=None: every document is its own user, so user adjacency is "
                         "document adjacency here")
        if self.mechanism.startswith("laplace"):
            notes.append("Laplace baseline (papers/wang2022 Sec. 4.2): L1 sensitivity 2m assumes "
                         "every released row is a probability vector over public columns; pure "
                         "epsilon-DP, no sensitivity sampling")
        else:
            if source == "given":
                notes.append(
                    f"sensitivity bound Delta = {self.sensitivity_:.6g} given by the caller "
                    "(sensitivity=...), treated as public: the guarantee holds for neighbours "
                    "whose aligned Frobenius change of the released matrix is within it (not "
                    "checked here); if the bound was itself sampled, the guarantee is only the "
                    "random DP of that sampling")
            else:
                gamma = self._gamma
                where = ("the public reference corpus (reference_X, "
                         f"{self.reference_shape_[0]} documents)" if source == "reference"
                         else "the private data")
                notes.append(
                    f"(epsilon={self._epsilon:g}, delta={self._delta:g}, gamma={self._gamma:g})"
                    "-random DP, NOT DP: the (epsilon, delta) bound holds with probability >= "
                    "1 - gamma over neighbours drawn by removing one uniformly random user of "
                    f"{where} (papers/wang2022 Def. 4, Theorem 1)")
                notes.append(
                    f"sampled sensitivity Delta_s = {self.sensitivity_:.6g}: the k="
                    f"{self.order_statistic_}-th smallest of h={self.n_samples_} aligned "
                    f"Frobenius distances (rho={self.rho_:.4g}), refit_seed={self.refit_seed!r}"
                    " (floored at 1e-9)")
                if source == "reference":
                    notes.append("the reference corpus stands in for the private data: the "
                                 "random-DP statement transfers to the private data only as far "
                                 "as its users resemble the reference corpus's (not checked)")
            if self.mechanism == "mvg":
                notes.append(f"MVG per-entry std {self.noise_scale_:.6g} from Chanyaswad et al. "
                             "2018 Theorem 3 with isotropic covariances (taken as stated)")
            elif self.calibration == "renyi":
                notes.append(
                    f"calibrated through ({self.renyi_order:g}, eps_R={self.eps_renyi_:.6g})-RDP "
                    "(papers/wang2022 Prop. 2, Theorem 2)")
            else:
                notes.append("calibrated with the tight RDP Gaussian calibration")
        if self.lattice_granularity_ is not None:
            norm = "L1" if self.mechanism.startswith("laplace") else "L2"
            notes.append(
                f"exact noise on the lattice g Z, g = 2^{int(math.log2(self.lattice_granularity_))}"
                f": the released values are exact multiples of g; the recorded {norm} "
                f"sensitivity {self._total_sensitivity:.6g} includes the rounding slack of the "
                "released coordinates")
        if self.output == "keywords":
            notes.append("the keyword ids (which words are shown for each topic) are selected "
                         "from the non-private model and are NOT covered by this guarantee")
        public = [f"vocabulary (V = {V} words, the column labels)"]
        if self.reference_shape_ is not None:
            public.append(f"reference corpus for sensitivity sampling (reference_X: "
                          f"{self.reference_shape_[0]} documents)")
        return PrivacyReport(event, "user", description=f"TopicDP: {what}", notes=notes,
                             gamma=gamma, default_delta=self._delta, seeded=seeded,
                             assumed_public=public, vocabulary="public (given)")

    # -- publication -----------------------------------------------------------------
    def release(self, vocabulary=None):
        """What to publish: a :class:`dptm.Release` with the noisy topics, the vocabulary,
        the privacy report and the public hyperparameters (``estimator_`` - the non-private
        fit - and this object are not for publication).

        Parameters
        ----------
        vocabulary : sequence of str, optional
            Word of each column; declared public (the guarantee assumes it).
        """
        from ..release import Release, public_params
        check_is_fitted(self, "topic_word_")
        prior = None
        if self.estimator is not None and "doc_topic_prior" in self.estimator.get_params(deep=False):
            prior = self.estimator.get_params(deep=False)["doc_topic_prior"]
        if prior is None:
            prior = 1.0 / self.n_components_
        return Release(self.topic_word_, components=self.components_, doc_topic_prior=prior,
                       privacy=self.privacy_, vocabulary=vocabulary, model="TopicDP",
                       hyperparameters=public_params(self.get_params(deep=False)),
                       transform_seed=self.transform_seed_ % (1 << 63), transform_max_iter=50)

    def fit_transform(self, X, y=None, groups=None):
        """Fit, then return ``transform(X)``."""
        return self.fit(X, y, groups=groups).transform(X)

    def transform(self, X):
        """Document-topic proportions of ``X`` under the released topics: the theta that
        maximises sum_w X[d, w] log(theta @ topic_word_[:, w]) (the EM fixed point of
        :func:`dptm.attacks.zeta`); post-processing of the release only."""
        from ..attacks.statistics import zeta
        check_is_fitted(self, "topic_word_")
        X = check_count_matrix(X, name="X")
        if X.shape[1] != self.topic_word_.shape[1]:
            raise ValueError(f"X has {X.shape[1]} features, TopicDP was fitted with "
                             f"{self.topic_word_.shape[1]}")
        return zeta(self.topic_word_, X, return_theta=True)[1]
