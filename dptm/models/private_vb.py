"""Document-level private batch variational Bayes for LDA (issue #15).

Each iteration runs the variational E-step on a set of documents with the current topics,
scales every document's expected topic-word counts (a K x V matrix) to a fixed L2 norm,
sums them and releases the sum once with the exact (lattice) discrete Gaussian; the
topics are post-processing of the releases.

Few iterations are affordable under a total budget, and variational Bayes from a
data-independent start needs many. The documents are therefore split by a secret random
partition into *stages*: stage s runs its iterations on its own part only, starting from
the topics of stage s - 1. A document is in one part, so its privacy loss is that of its
stage alone (parallel composition: ``ParallelComposedEvent``), and every stage is
calibrated to the whole budget: early stages find the topics on a few documents with many
noisy iterations, the last stage refines them on most documents with few, low-noise ones.
"""
import math
from fractions import Fraction

import numpy as np
import scipy.sparse as sp
from scipy.special import psi

from .. import _svi
from .._random import private_generator, public_seed
from .._threads import effective_n_jobs
from .._utils import check_count_matrix, check_int, check_positive, check_real
from ..mechanisms import lattice_gaussian
from ._base import TopicModelMixin

#: Default stages: (fraction of the documents, iterations). Tuned on the issue's
#: 50,000-document synthetic corpus and KOS (bench/bench_utility.py).
DEFAULT_STAGES = ((0.7, 4), (0.3, 1))

# sigma / g of the noise lattice in [2^13, 2^14): each contribution is rounded down to the
# lattice, which loses at most g per entry (a 1e-4 fraction of the noise) and cannot
# increase its norm; the exact discrete Gaussian sampler takes sigma / g <= 2^14.
_LATTICE_BITS = 13
_CHUNK_NNZ = 1 << 20   # E-step working set: about 1M (document, word) pairs at a time
# Threshold (in noise standard deviations) between releases, while the topics are searched
# for; ``threshold`` (default 3) applies to the released topics. Measured on the 50,000-
# document synthetic corpus at eps = 1: 2 between releases beats 1 and 3 (644 / 648 / 753),
# 3 on the final release beats 2 (544 vs 589).
_SEARCH_THRESHOLD = 2.0
# Smoothing of the released topics, per entry, in noise standard deviations of the last
# release (at least ``topic_word_prior``): 0.05 gained 3% at eps = 1 and lost 1% at eps = 4
# on the 50,000-document corpus, and keeps small corpora from doing worse than uniform.
_NOISE_SMOOTHING = 0.05


def _denoise(est, sigma, eta, threshold, shrink=0.0):
    """Post-processing of a released (rescaled) statistic ``est`` whose noise has standard
    deviation ``sigma``: entries at or below ``threshold * sigma`` set to zero, the others
    lowered by ``shrink * sigma`` (0 in fits: shrinking gained at most 1.5%,
    bench/bench_denoise_grid.py), plus the prior ``eta``. A deterministic function of the
    release and public parameters only (free in privacy)."""
    kept = est > threshold * sigma
    return eta + np.where(kept, np.maximum(est - shrink * sigma, 0.0), 0.0)


def _combine_releases(releases, threshold):
    """Weighted average of independent releases ``[(est, sd), ...]`` (each scaled to the
    corpus, noise sd ``sd``), the final release last; returns (estimate, its noise sd).

    Earlier releases estimate the statistic with a bias (older topics; distinct-word
    counts), so release i gets weight 1 / (sd_i^2 + b_i^2), the final one 1 / sd_f^2, where
    b_i^2 is the mean squared difference from the final release in excess of the noise,
    over the entries whose mean passes ``threshold`` noise sd. A deterministic function of
    the releases and their public noise scales (free in privacy)."""
    est_f, sd_f = releases[-1]
    w = []
    for est, sd in releases[:-1]:
        sel = 0.5 * (est + est_f) > threshold * 0.5 * math.hypot(sd, sd_f)
        b2 = 0.0
        if sel.any():
            b2 = max(0.0, float(np.mean((est - est_f)[sel] ** 2)) - sd * sd - sd_f * sd_f)
        w.append(1.0 / (sd * sd + b2))
    w.append(1.0 / (sd_f * sd_f))
    w = np.array(w) / sum(w)
    combined = sum(wi * est for wi, (est, _) in zip(w, releases))
    sd = math.sqrt(sum(wi * wi * s * s for wi, (_, s) in zip(w, releases)))
    return combined, sd


def _granularity(sigma):
    return math.ldexp(1.0, math.frexp(sigma)[1] - 1 - _LATTICE_BITS)


def _exp_dirichlet(x):
    return np.exp(psi(x) - psi(x.sum(axis=-1, keepdims=True)))


def _estep(X, exp_elog_beta_t, alpha, max_iter=50, tol=1e-3, n_threads=1):
    """Variational E-step of the documents of CSR ``X`` (Cython kernel ``lda_e_step``).

    Returns ``(exp_elog_theta, phinorm, rows)``: exp(E[log theta]) per document (D x K),
    per stored (document, word) pair the normaliser sum_k exp(E log theta_dk) exp(E log
    beta_kw), and the pair's document index. Each document starts from gamma = alpha +
    N_d / K and stops when the mean absolute change of its gamma is below ``tol``."""
    D = X.shape[0]
    K = exp_elog_beta_t.shape[1]
    lengths = np.asarray(X.sum(axis=1), dtype=np.float64).reshape(-1, 1)
    gamma = np.ascontiguousarray(np.full((D, K), alpha) + lengths / K)
    _svi.lda_e_step(X.indptr.astype(np.int64), X.indices.astype(np.int32),
                    X.data.astype(np.float64), np.arange(D, dtype=np.int64),
                    exp_elog_beta_t, gamma, float(alpha), tol=tol, max_iter=max_iter,
                    n_threads=n_threads)
    rows = np.repeat(np.arange(D), np.diff(X.indptr))
    et = _exp_dirichlet(gamma)
    phinorm = np.einsum("ik,ik->i", et[rows], exp_elog_beta_t[X.indices]) + 1e-100
    return et, phinorm, rows


def _expected_counts(X, beta, alpha, norm, granularity=None, presence=False, n_threads=1):
    """Sum over the documents of CSR ``X`` of their expected K x V topic-word counts, each
    document's contribution scaled to L2 norm ``norm`` (empty documents contribute 0).

    ``presence=True`` counts each distinct word of a document once (its topic
    responsibilities, summing to one) instead of its count: repeated words then weigh
    less in the norm, so a document carries more signal per unit of sensitivity; the
    early stages use it to find the topics, the last stage estimates them from counts.

    With ``granularity`` g, every entry of every contribution is rounded DOWN to a
    multiple of g before summing: the rounded contribution's norm is at most ``norm``
    (entries are non-negative) and the sum is an exact multiple of g, so the lattice
    release needs no rounding slack. This is the per-block statistic of a distributed fit:
    the sum over blocks equals the statistic of their union.
    """
    X = sp.csr_matrix(X)
    if not X.has_canonical_format:
        # a word stored twice in a row would add its contributions in one cell after the
        # norm was taken over them apart: sqrt(2) times the sensitivity (review finding R3)
        X = X.copy()
        X.sum_duplicates()
    K, V = beta.shape
    eb_t = np.ascontiguousarray(_exp_dirichlet(beta).T)      # V x K
    stat = np.zeros((K, V))
    D = X.shape[0]
    start = 0
    while start < D:   # documents in chunks of about _CHUNK_NNZ stored pairs
        stop = int(np.searchsorted(X.indptr, X.indptr[start] + _CHUNK_NNZ, side="right"))
        stop = min(D, max(stop - 1, start + 1))
        Xc = X[start:stop]
        et, phinorm, rows = _estep(Xc, eb_t, alpha, n_threads=n_threads)
        # contribution of pair (d, w) to topic k: n_dw et[d, k] eb[w, k] / phinorm_dw
        weight = (1.0 if presence else Xc.data) / phinorm
        contrib = et[rows] * eb_t[Xc.indices] * weight[:, None]
        # Each document divided by its largest entry first: when every pair's normaliser
        # sits at its 1e-100 floor (K >~ 250, words outside every live topic) the entries
        # are ~1e-160 and the sum of their squares is subnormal, so its square root - and
        # the scaled norm - would be off by up to 1e-10 relative (review finding R2).
        starts = np.flatnonzero(np.diff(Xc.indptr))         # non-empty documents
        peak = np.zeros(Xc.shape[0])
        if starts.size:
            peak[starts] = np.maximum.reduceat(contrib.max(axis=1), Xc.indptr[starts])
        contrib /= np.where(peak > 0, peak, 1.0)[rows][:, None]
        sq = np.bincount(rows, (contrib * contrib).sum(axis=1), minlength=Xc.shape[0])
        length = np.sqrt(sq)
        # a hair below ``norm``: the floating-point scaling can never end above the bound
        scale = np.divide(norm * (1 - 2.0 ** -40), length, out=np.zeros_like(length),
                          where=length > 0)
        contrib *= scale[rows][:, None]
        if granularity is not None:
            contrib = np.floor(contrib / granularity)
            contrib *= _within_norm(contrib, Xc.indptr, norm / granularity)[rows][:, None]
            contrib *= granularity
        for k in range(K):
            stat[k] += np.bincount(Xc.indices, contrib[:, k], minlength=V)
        start = stop
    return stat


def _within_norm(m, indptr, bound):
    """1.0 for each document whose lattice contribution ``m`` (integers, as floats) has
    L2 norm at most ``bound`` (= norm / g), checked in exact integer arithmetic, else 0.0:
    such a document (never seen: floating-point error far below the 2^-40 margin) is
    dropped rather than allowed to exceed its sensitivity."""
    if not bound < 2.0 ** 31:
        # entries <= bound and sums of squares <= bound^2 (1 + tiny) must fit in int64;
        # bound depends only on public parameters (norm / sigma), so raising leaks nothing
        raise ValueError(f"noise too small for the clip norm (norm / lattice step = {bound:.3g} "
                         ">= 2^31): lower target_epsilon")
    ok = np.ones(len(indptr) - 1)
    starts = np.flatnonzero(np.diff(indptr))
    if not starts.size:
        return ok
    mi = m.astype(np.int64)
    sq = np.add.reduceat((mi * mi).sum(axis=1), indptr[starts])
    limit = math.floor(Fraction(bound) ** 2)     # sum m^2 <= bound^2, exactly
    ok[starts] = (sq <= limit).astype(np.float64)
    return ok


def _release(stat, sigma, gen, granularity):
    """Lattice Gaussian release of ``stat``; returns (noisy, granularity, effective sigma)."""
    return lattice_gaussian(stat, sigma, gen, granularity=granularity)


def _check_stages(stages):
    if stages is None:
        stages = DEFAULT_STAGES
    try:
        stages = [(check_positive(f, "stages fraction"),
                   check_int(t, "stages iterations", minimum=1)) for f, t in stages]
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"stages must be non-empty (fraction > 0, iterations >= 1) pairs, "
                        f"got {stages!r}: {exc}") from None
    if not stages:
        raise ValueError("stages must hold at least one (fraction, iterations) pair")
    total = sum(f for f, _ in stages)
    return [(f / total, t) for f, t in stages]


class PrivateBatchLDA(TopicModelMixin):
    """Document-level differentially private LDA by staged batch variational Bayes.

    The documents are split by a secret uniformly random partition into stages (sizes in
    the proportions ``stages`` gives, not published). Stage s runs its iterations on its
    own documents, starting from the previous stage's topics; each iteration is one
    release: the sum over the stage's documents of each document's expected topic-word
    counts, scaled to L2 norm ``clip_norm`` and rounded down to the noise lattice, plus
    exact discrete Gaussian noise. Every stage is calibrated to (``target_epsilon``,
    ``target_delta``) by the RDP accountant; since each document is in one stage only,
    the fit as a whole meets that target (parallel composition). The early stages count
    each distinct word of a document once (more signal per unit of sensitivity, to find
    the topics), the last stage counts tokens (to estimate them). Between releases the
    noisy statistic is scaled to the whole corpus and entries below 2 noise standard
    deviations are set to zero, below ``threshold`` for the released topics (topics are
    sparse; pure noise would otherwise spread mass over every word). The released topics
    average the last release of every stage (independent estimates on disjoint documents),
    each earlier one weighted by its noise variance plus its measured excess difference
    from the final release (post-processing of the releases only).

    Parameters
    ----------
    n_components : int
        Number of topics K.
    target_epsilon, target_delta : float
        Total document-level (add/remove one document) guarantee of the fit.
    stages : sequence of (fraction, iterations), optional
        Default ``DEFAULT_STAGES``. Fractions are normalised to sum to one.
    clip_norm : float, default=1.0
        L2 norm of every document's contribution (its sensitivity). It only sets the
        scale: the noise is ``clip_norm`` times the calibrated multiplier.
    threshold : float, default=3.0
        Entries of the last release below ``threshold`` times its noise standard deviation
        are zeroed (post-processing; between releases 2 is used).
    init_topics : array of shape (K, V), optional
        PUBLIC initial topic-word weights (e.g. from a public corpus); accounted as
        public, so they must not be derived from the private documents. Default: a
        data-independent random start.
    doc_topic_prior, topic_word_prior : float, optional
        Default 1 / K.
    transform_max_iter : int, default=50
        Gibbs fold-in sweeps of ``transform``.
    n_jobs : int, optional
        Threads of the E-step and of ``transform`` (scikit-learn semantics; -1: all
        cores). The fit is the same for every value.
    random_state : None, int, SeedSequence or Generator
        None (default): all randomness (partition, start, noise) from the secret
        generator. Anything else is a labelled test mode.
    verbose : int

    Attributes
    ----------
    components_, topic_word_ : ndarray (K, V)
        Released pseudo-counts and topics.
    privacy_ : PrivacyReport
    stage_sigmas_ : list of float
        Noise standard deviation of each stage's releases (public: set by the budget).

    Privacy contract
    ----------------
    ``components_`` is post-processing of the releases recorded in ``privacy_`` (a
    parallel composition over the stages of each stage's lattice-Gaussian releases). The
    vocabulary and ``init_topics`` are assumed public; the number of documents and the
    stage sizes are neither used by the mechanism nor published.
    """

    def __init__(self, n_components=10, *, target_epsilon=1.0, target_delta=1e-5,
                 stages=None, clip_norm=1.0, threshold=3.0, init_topics=None,
                 doc_topic_prior=None, topic_word_prior=None, transform_max_iter=50,
                 n_jobs=None, random_state=None, verbose=0):
        self.n_components = n_components
        self.target_epsilon = target_epsilon
        self.target_delta = target_delta
        self.stages = stages
        self.clip_norm = clip_norm
        self.threshold = threshold
        self.init_topics = init_topics
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.transform_max_iter = transform_max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @property
    def max_iter(self):
        """Releases per document (the largest stage's iterations)."""
        return max(t for _, t in _check_stages(self.stages))

    def _check_init(self, V):
        if self.init_topics is None:
            return None
        init = np.array(self.init_topics, dtype=np.float64)
        if init.shape != (self.n_components, V):
            raise ValueError(f"init_topics must have shape (n_components, n_features) = "
                             f"({self.n_components}, {V}), got {init.shape}")
        if not np.all(np.isfinite(init)) or np.any(init < 0) or np.any(init.sum(axis=1) <= 0):
            raise ValueError("init_topics must be finite, non-negative, with positive rows")
        return init

    def fit(self, X, y=None):
        X = check_count_matrix(X, estimator=self, reset=True).tocsr()
        threads = effective_n_jobs(self.n_jobs)

        def prepare(gen, fractions):
            # secret partition: each document's stage drawn independently of the data
            part = gen.choice(len(fractions), size=X.shape[0], p=fractions)
            blocks = [X[np.flatnonzero(part == s)] for s in range(len(fractions))]
            return lambda s, beta, alpha, C, g, presence: _expected_counts(
                blocks[s], beta, alpha, C, granularity=g, presence=presence, n_threads=threads)

        return self._fit_staged(X.shape[1], prepare)

    def _fit_staged(self, V, prepare):
        """The fit given where the documents are: ``prepare(gen, fractions)`` draws the
        secret stage of every document from ``gen`` and returns ``statistic(s, beta,
        alpha, norm, granularity, presence)``, the lattice sum of ``_expected_counts`` over
        stage s's documents (one process: ``fit``; a cluster: ``dptm.distributed``).
        Fitted attributes are set only once every release is done."""
        from ..accounting import (GaussianEvent, ParallelComposedEvent, PrivacyReport,
                                  SelfComposedEvent, calibrate_gaussian)
        stages = _check_stages(self.stages)
        self._check_common_params()
        eps = check_positive(self.target_epsilon, "target_epsilon")
        delta = check_real(self.target_delta, "target_delta")
        if not 0.0 < delta < 1.0:
            raise ValueError(f"target_delta must be in (0, 1), got {self.target_delta!r}")
        C = check_positive(self.clip_norm, "clip_norm")
        tau = check_real(self.threshold, "threshold")
        if not tau >= 0:
            raise ValueError(f"threshold must be >= 0, got {self.threshold!r}")
        K = self.n_components
        init = self._check_init(V)
        alpha, eta = self.doc_topic_prior_, self.topic_word_prior_
        gen, seeded = private_generator(self.random_state, "PrivateBatchLDA")

        statistic = prepare(gen, np.array([f for f, _ in stages]))
        if init is None:
            beta = 1.0 + 0.1 * gen.random((K, V))    # data-independent start
        else:
            beta = eta + init * (1e3 / init.sum(axis=1, keepdims=True))
        events, sigmas, done, total = [], [], 0, sum(t for _, t in stages)
        stage_ends = []                            # last release of each stage
        for s, (frac, iters) in enumerate(stages):
            z = calibrate_gaussian(eps, delta, steps=iters, discrete=True)
            sigma = z * C
            g = _granularity(sigma)
            for it in range(iters):
                stat = statistic(s, beta, alpha, C, g, s < len(stages) - 1)
                noisy, g, sig_eff = _release(stat, sigma, gen, g)
                est = noisy / frac                 # scaled to the whole corpus
                sd = sig_eff / frac
                last = s == len(stages) - 1 and it == iters - 1
                if it == iters - 1:
                    # the released topics use every stage's last release: independent
                    # estimates on disjoint documents (post-processing only)
                    stage_ends.append((est, sd))
                if last and len(stage_ends) > 1:
                    est, sd = _combine_releases(stage_ends, tau)
                beta = _denoise(est, sd, eta, tau if last else _SEARCH_THRESHOLD)
                done += 1
                self._progress(done, total=total, unit="release")
            sigmas.append(float(sig_eff))
            events.append(SelfComposedEvent(
                GaussianEvent(float(sig_eff), sensitivity=float(C), discrete=True), iters,
                label=f"stage {s + 1} ({frac:.3g} of the documents)"))
        # released topics smoothed in proportion to the noise: where the noise dominates
        # (a small corpus, a small epsilon) they tend to the uniform model instead of
        # concentrating on the few entries the noise pushed over the threshold
        beta = beta + max(0.0, _NOISE_SMOOTHING * sd - eta)
        event = (ParallelComposedEvent(tuple(events), label="fit") if len(events) > 1
                 else events[0])
        privacy = PrivacyReport(
            event, "document",
            description=("staged batch VB LDA: per-document L2-normalised expected counts, "
                         "lattice (exact discrete) Gaussian releases; stages on the parts "
                         "of a secret random partition (parallel composition)"),
            default_delta=delta, seeded=seeded,
            # D and the stage sizes are not used by the mechanism and not published:
            # under add/remove adjacency they would tell neighbours apart
            assumed_public=[f"vocabulary (V = {V} words)"]
            + (["init_topics (given as public)"] if init is not None else []))
        transform_seed = public_seed(gen, seeded)
        self.stage_sigmas_ = sigmas
        self.sigma_, self.sensitivity_ = sigmas[-1], float(C)
        self.privacy_ = privacy
        self._set_topics(beta)
        self.transform_seed_ = transform_seed
        self.n_iter_ = total
        return self
