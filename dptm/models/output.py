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
import math
import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from scipy.special import lambertw
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted

from .._utils import (check_count_matrix, check_int, check_positive, check_probability,
                      check_random_state, spawn_generators)
from ..accounting import (ApproxDPEvent, GaussianEvent, LaplaceEvent, PrivacyReport,
                          calibrate_gaussian, dp_to_rdp)

__all__ = [
    "TopicDP", "sensitivity_sample_size", "topic_word_matrix", "topic_weights",
    "aligned_frobenius", "keyword_block", "block_distance", "sample_sensitivities",
    "gaussian_sigma", "mvg_sigma", "laplace_scale",
]

_MECHANISMS = ("gaussian", "laplace", "mvg")
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
    est = clone(estimator)
    if "random_state" in est.get_params(deep=False):
        est.set_params(random_state=seed)
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
                         seeds=None, random_state=None, n_jobs=None, verbose=0):
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
        Topic-word matrix of the model fitted on all of X (the one to be released).
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
    tasks = (delayed(_refit_distance)(estimator, X, np.flatnonzero(gidx != u), s, distance,
                                      reference)
             for u, s in zip(users, seeds))
    out = Parallel(n_jobs=n_jobs, verbose=max(0, int(verbose) - 1) * 10)(tasks)
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
        return calibrate_gaussian(epsilon, delta) * sensitivity, None
    raise ValueError(f"calibration must be one of {_CALIBRATIONS}, got {calibration!r}")


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


def _noise(kind, shape, scale, rng):
    """Noise draws through dptm.mechanisms when available (the package's one source)."""
    try:
        from .. import mechanisms
        fn = mechanisms.gaussian_noise if kind == "gaussian" else mechanisms.laplace_noise
    except (ImportError, AttributeError):  # pragma: no cover - mechanisms not there yet
        fn = None
    if fn is not None:
        return np.asarray(fn(shape, scale, rng), dtype=np.float64)
    if kind == "gaussian":  # pragma: no cover
        return rng.normal(0.0, scale, size=shape)
    return rng.laplace(0.0, scale, size=shape)  # pragma: no cover


# --------------------------------------------------------------------------------------
# The estimator
# --------------------------------------------------------------------------------------
class TopicDP(BaseEstimator):
    """Model-agnostic differentially private topic release (TopicDP, papers/wang2022).

    Fits ``estimator`` on all the data, samples the sensitivity of its topic-word matrix to
    the removal of one user (Algorithm 1), and releases that matrix with noise calibrated
    to the sampled sensitivity (Algorithm 2). Works with any estimator that exposes a
    topic-word matrix after ``fit(X)``: dptm models, scikit-learn's
    ``LatentDirichletAllocation``, ``NMF``, ``TruncatedSVD`` (LSI; |components_| is used).

    Parameters
    ----------
    estimator : estimator, default=None
        The (unfitted) topic model; ``LatentDirichletAllocation(n_components=10)`` when None.
        It is cloned; its ``random_state`` (if any) is replaced by child seeds of
        ``random_state``.
    target_epsilon : float > 0, default=1.0
    target_delta : float in (0, 1), default=1e-4
    gamma : float in (0, 1), default=0.1
        Confidence of random DP: the (epsilon, delta) guarantee holds with probability
        >= 1 - gamma over neighbouring data sets. Sets the number of refits h (285 for
        0.1, 61 for 0.2, 24 for 0.3) through :func:`sensitivity_sample_size`.
    mechanism : {"gaussian", "laplace", "mvg"}, default="gaussian"
        ``"gaussian"``: TopicDP. ``"laplace"``: the paper's baseline, Laplace noise with
        global L1 sensitivity 2m (m released rows; assumes each released row is a
        probability vector over fixed columns) - pure epsilon-DP, no sampling needed.
        ``"mvg"``: the MVG mechanism (Chanyaswad et al. 2018) with the sampled sensitivity.
    release : {"full", "keywords"}, default="full"
        ``"full"``: the whole K x V topic-word matrix is perturbed and released, and the
        sensitivity is sampled on it. ``"keywords"``: the paper's m x n release - the top
        ``n_top_topics`` topics and their top ``n_top_words`` words; the *values* are
        perturbed (sensitivity sampled on that block at fixed word ids) but the word ids
        are chosen from the non-private model and released as they are: they are NOT
        covered by the guarantee (papers/wang2022 does not account for them).
    n_top_topics, n_top_words : int, default=10
        m and n of the keyword release (ignored for ``release="full"``).
    calibration : {"gaussian", "renyi"}, default="gaussian"
        How sigma is set from (epsilon, delta): ``"gaussian"``, the smallest sigma whose RDP
        curve gives (epsilon, delta) (tight); ``"renyi"``, the paper's route (papers/wang2022
        Sec. 3.4: the (alpha, eps_R) conversion at ``renyi_order``), sound but about 10x
        the noise for the same guarantee, kept to reproduce the paper. See
        :func:`gaussian_sigma`.
    renyi_order : float > 1, default=2.0
    refit_seed : {"independent", "shared"}, default="independent"
        ``"independent"``: every refit gets its own child seed, so the sampled distances
        include the model's seed-to-seed variation (conservative for models whose output
        depends on the seed). ``"shared"``: every refit uses the seed of the released fit,
        so the distances isolate the effect of removing one user.
    sensitivity : float > 0, optional
        A previously sampled sensitivity (e.g. ``sensitivity_`` of a fit on other data
        from the same distribution, as the paper allows: "performed entirely in an offline
        stage"); skips the h refits. The guarantee then rests on where it came from.
    n_jobs : int, optional
        joblib workers for the refits; the output does not depend on it.
    random_state : None, int, SeedSequence or numpy.random.Generator
    verbose : int, default=0

    Attributes
    ----------
    topic_word_ : ndarray (m, V)
        The released, row-normalised noisy topic-word matrix (rows in random order).
    components_ : ndarray (m, V)
        The released noisy matrix with negatives clamped to 0, before normalisation.
    keyword_ids_ : ndarray of int (m, n)
        ``release="keywords"`` only: the word ids of each released row (NOT private).
    keyword_weights_ : ndarray (m, n)
        ``release="keywords"`` only: the noisy values, clamped at 0.
    sensitivity_ : float
        The sampled sensitivity Delta_s (the k-th smallest distance).
    sensitivity_samples_ : ndarray (h,)
        The sampled distances, sorted (non-private diagnostics).
    n_samples_, order_statistic_, rho_ : int, int, float
        h, k and rho of Algorithm 1.
    noise_scale_ : float
        Per-entry noise: sigma (Gaussian, MVG) or scale b (Laplace).
    eps_renyi_ : float or None
        The RDP budget eps_R at ``renyi_order`` (``calibration="renyi"``).
    estimator_ : estimator
        The non-private model fitted on all the data. NOT private: never publish it (nor
        this object); publish ``topic_word_`` and ``privacy_``.
    privacy_ : dptm.accounting.PrivacyReport
        (epsilon, delta, gamma)-random DP, user adjacency (``gamma`` is None for the Laplace
        baseline, which is pure DP).

    Privacy
    -------
    Adjacency: ``user`` - neighbouring corpora differ by all documents of one user (group);
    with ``groups=None`` each document is a user (document adjacency). Nothing is clipped
    or capped: the sampled sensitivity replaces a worst-case bound, which is why the
    guarantee is only random DP: with probability >= 1 - gamma over neighbours drawn as
    "the data minus one uniformly random user", the Gaussian release is (epsilon, delta)-DP.
    Two further caveats: the neighbours are drawn from the private data itself (the
    empirical user distribution), so Delta_s - and the released noise scale - depend on the
    data; and the vocabulary (the column labels) is taken as public - use
    :class:`dptm.FullyPrivateTopicModel` to select it privately. The released rows are put
    in a uniformly random order, so that the topic alignment used for the distances is
    matched by the release (the output distribution is a mixture over row permutations).
    Released: ``topic_word_`` / ``components_`` (all K x V entries, or the m x n values plus
    their non-private word ids for ``release="keywords"``) and ``privacy_``.

    Examples
    --------
    >>> from sklearn.decomposition import NMF
    >>> from dptm import TopicDP
    >>> from dptm.datasets import make_lda_corpus
    >>> X, _, _ = make_lda_corpus(60, 30, 3, random_state=0)
    >>> dp = TopicDP(NMF(3, max_iter=50), target_epsilon=5, gamma=0.4, random_state=0).fit(X)
    >>> dp.topic_word_.shape, dp.n_samples_
    ((3, 30), 13)
    """

    def __init__(self, estimator=None, *, target_epsilon=1.0, target_delta=1e-4, gamma=0.1,
                 mechanism="gaussian", release="full", n_top_topics=10, n_top_words=10,
                 calibration="gaussian", renyi_order=2.0, refit_seed="independent",
                 sensitivity=None, n_jobs=None, random_state=None, verbose=0):
        self.estimator = estimator
        self.target_epsilon = target_epsilon
        self.target_delta = target_delta
        self.gamma = gamma
        self.mechanism = mechanism
        self.release = release
        self.n_top_topics = n_top_topics
        self.n_top_words = n_top_words
        self.calibration = calibration
        self.renyi_order = renyi_order
        self.refit_seed = refit_seed
        self.sensitivity = sensitivity
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # -- validation ------------------------------------------------------------------
    def _check_params(self):
        self._epsilon = check_positive(self.target_epsilon, "target_epsilon")
        self._delta = check_probability(self.target_delta, "target_delta", high_open=True)
        self._gamma = check_probability(self.gamma, "gamma", high_open=True)
        for name, value, allowed in (("mechanism", self.mechanism, _MECHANISMS),
                                     ("release", self.release, _RELEASES),
                                     ("calibration", self.calibration, _CALIBRATIONS),
                                     ("refit_seed", self.refit_seed, _REFIT_SEEDS)):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
        check_int(self.n_top_topics, "n_top_topics", minimum=1)
        check_int(self.n_top_words, "n_top_words", minimum=1)
        if self.sensitivity is not None:
            check_positive(self.sensitivity, "sensitivity")
        if self.calibration == "renyi":
            order = check_positive(self.renyi_order, "renyi_order")
            if not order > 1:
                raise ValueError(f"renyi_order must be > 1, got {order}")
        if self.estimator is None:
            from sklearn.decomposition import LatentDirichletAllocation
            return LatentDirichletAllocation(n_components=10)
        if not hasattr(self.estimator, "fit") or not hasattr(self.estimator, "get_params"):
            raise TypeError("estimator must be a scikit-learn style estimator with fit and "
                            f"get_params, got {type(self.estimator).__name__}")
        return self.estimator

    @staticmethod
    def _check_X(X):
        if sp.issparse(X):
            X = sp.csr_matrix(X)
        else:
            X = np.asarray(X)
            if X.ndim != 2:
                raise ValueError(f"X must be a 2-D (n_docs, n_words) matrix, got {X.ndim} "
                                 "dimension(s)")
        if X.shape[0] < 2:
            raise ValueError(f"X must have at least 2 documents, got {X.shape[0]}")
        if X.shape[1] < 1:
            raise ValueError("X has an empty vocabulary: 0 columns")
        return X

    # -- fit -------------------------------------------------------------------------
    def fit(self, X, y=None, groups=None):
        """Fit the wrapped model, sample its sensitivity, release the noisy topics.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_docs, n_words)
            Whatever the wrapped estimator accepts (counts for LDA).
        y : ignored
        groups : array-like of shape (n_docs,), optional
            The user (author) of each document; each document is its own user when None.

        Returns
        -------
        self
        """
        base = self._check_params()
        X = self._check_X(X)
        gidx, n_users = _group_index(groups, X.shape[0])
        if n_users < 2 and self.sensitivity is None and self.mechanism != "laplace":
            raise ValueError(f"groups must contain at least 2 users, got {n_users}")
        rng = check_random_state(self.random_state)
        fit_rng, sample_rng, noise_rng = spawn_generators(rng, 3)
        release_seed = int(fit_rng.integers(2**31 - 1))
        start = time.perf_counter()

        W, est = _fit_topic_word(base, X, None, release_seed)
        self.estimator_ = est
        weights = topic_weights(est)
        if self.release == "full":
            rows_ref = W
            distance = _FullDistance()
            self.keyword_ids_ = None
        else:
            topics, word_ids, values = keyword_block(W, weights, self.n_top_topics,
                                                     self.n_top_words)
            rows_ref = values
            distance = _BlockDistance(topics, word_ids)
        m = rows_ref.shape[0]

        h, k, rho = sensitivity_sample_size(self._gamma)
        self.n_samples_, self.order_statistic_, self.rho_ = h, k, rho
        self.sensitivity_samples_ = None
        if self.mechanism == "laplace":
            self.sensitivity_ = None
        elif self.sensitivity is not None:
            self.sensitivity_ = float(self.sensitivity)
        else:
            if self.verbose:
                print(f"[TopicDP] sampling the sensitivity: h={h} refits, k={k}", flush=True)
            seeds = [release_seed] * h if self.refit_seed == "shared" else None
            d, users = sample_sensitivities(base, X, W, h, groups=gidx, distance=distance,
                                            seeds=seeds, random_state=sample_rng,
                                            n_jobs=self.n_jobs, verbose=self.verbose)
            self.sensitivity_samples_ = np.sort(d)
            self.sensitivity_ = float(self.sensitivity_samples_[k - 1])
            if self.verbose:
                print(f"[TopicDP] Delta_s = {self.sensitivity_:.6g} "
                      f"({time.perf_counter() - start:.1f} s)", flush=True)

        # noise scale and the release
        self.eps_renyi_ = None
        if self.mechanism == "laplace":
            scale = laplace_scale(m, self._epsilon)
            event = LaplaceEvent(scale=scale, sensitivity=2.0 * m,
                                 label="TopicDP Laplace baseline (global L1 sensitivity 2m)")
        else:
            sens = max(self.sensitivity_, 1e-12)
            if self.mechanism == "gaussian":
                scale, self.eps_renyi_ = gaussian_sigma(sens, self._epsilon, self._delta,
                                                        self.calibration, self.renyi_order)
                event = GaussianEvent(sigma=scale, sensitivity=sens,
                                      label="TopicDP output noise (sampled sensitivity)")
            else:
                scale = mvg_sigma(rows_ref.shape, sens, self._epsilon, self._delta)
                event = ApproxDPEvent(self._epsilon, self._delta,
                                      label="MVG mechanism (Chanyaswad et al. 2018, Thm. 3)")
        self.noise_scale_ = float(scale)
        kind = "laplace" if self.mechanism == "laplace" else "gaussian"
        perm = noise_rng.permutation(m)
        noisy = rows_ref[perm] + _noise(kind, rows_ref.shape, scale, noise_rng)
        clamped = np.maximum(noisy, 0.0)
        if self.release == "full":
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
        self.privacy_ = self._report(event, m, X.shape[1], n_users, groups is None)
        return self

    def _report(self, event, m, V, n_users, per_document):
        adjacency = "user"
        what = (f"noisy {m} x {V} topic-word matrix (all entries), negatives clamped, rows "
                "re-normalised, rows in random order" if self.release == "full" else
                f"noisy {m} x {self.keyword_weights_.shape[1]} keyword-probability block "
                "(top topics x top words); word ids released without protection")
        notes = []
        if per_document:
            notes.append("groups=None: every document is its own user, so user adjacency is "
                         "document adjacency here")
        notes.append(f"{n_users} users")
        if self.mechanism == "laplace":
            notes.append("Laplace baseline (papers/wang2022 Sec. 4.2): L1 sensitivity 2m assumes "
                         "every released row is a probability vector over public columns; pure "
                         "epsilon-DP, no sensitivity sampling")
            gamma = None
        else:
            gamma = self._gamma
            notes.append(
                f"(epsilon={self._epsilon:g}, delta={self._delta:g}, gamma={self._gamma:g})-random "
                "DP, NOT DP: the (epsilon, delta) bound holds with probability >= 1 - gamma "
                "over neighbours drawn by removing one uniformly random user (papers/wang2022 "
                "Def. 4, Theorem 1)")
            src = ("given by the caller (sensitivity=...), not sampled here"
                   if self.sensitivity is not None else
                   f"k={self.order_statistic_}-th smallest of h={self.n_samples_} aligned "
                   f"Frobenius distances (rho={self.rho_:.4g}), refit_seed={self.refit_seed!r}")
            notes.append(f"sampled sensitivity Delta_s = {self.sensitivity_:.6g} ({src})")
            notes.append("Delta_s is estimated from the private data itself (empirical user "
                         "distribution), so the noise scale is data-dependent")
            if self.mechanism == "gaussian":
                if self.calibration == "renyi":
                    notes.append(
                        f"calibrated through ({self.renyi_order:g}, eps_R={self.eps_renyi_:.6g})"
                        f"-RDP (papers/wang2022 Prop. 2, Theorem 2): sigma^2 = alpha "
                        f"Delta_s^2 / (2 eps_R) = {self.noise_scale_ ** 2:.6g}")
                else:
                    notes.append("calibrated with the tight RDP Gaussian calibration")
            else:
                notes.append(f"MVG per-entry std {self.noise_scale_:.6g} from Chanyaswad et al. "
                             "2018 Theorem 3 with isotropic covariances (taken as stated)")
        if self.release == "keywords":
            notes.append("the keyword ids (which words are shown for each topic) are selected "
                         "from the non-private model and are NOT covered by this guarantee")
        notes.append("the vocabulary (column labels) is treated as public")
        return PrivacyReport(event, adjacency, description=f"TopicDP: {what}", notes=notes,
                             gamma=gamma, default_delta=self._delta)

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
