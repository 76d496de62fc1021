"""Document-level private batch variational Bayes for LDA.

The fit follows a public plan (:func:`fit_plan`, a function of epsilon, delta, K and V):

1. one release of a histogram of the documents' count-vector L2 norms (each document
   in one bin: sensitivity 1); the clip bound C is post-processing of it
   (:func:`clip_bound`);
2. search releases: the sum over every document of its expected topic-word
   "presence" counts under the current topics (each distinct word once), clipped to
   L2 norm C, plus exact lattice Gaussian noise; each one post-processed into the topics
   the next E-step reads;
3. one count release (expected token counts, clipped to C), averaged with the last search
   release and denoised by an empirical-Bayes posterior mean: the released topics.

Clipping leaves every document whose contribution is within C untouched, so the
statistic is the batch VB statistic in token units (the digamma sees the corpus's
pseudo-counts); C trades the mass the longest documents lose against the noise, which is
proportional to C. The releases compose sequentially (zCDP: their 1 / z^2 add up).
"""
import math
from collections import namedtuple

import numpy as np
import scipy.sparse as sp

from .._threads import effective_n_jobs
from .._utils import check_count_matrix, check_int, check_positive, check_real
# the lattice of the noise: sigma / g in [2^13, 2^14) (rounding DOWN loses <= g per entry)
from ..noise.mechanisms import finest_lattice_granularity as _granularity
from ._base import TopicModelMixin
from ..noise.releases import LatticeGaussianRelease
from ._private_base import UNSET, PrivateModelMixin, topic_attributes
from .user_contributions import (USER_ASSUMED_PUBLIC, USER_DESCRIPTION, group_documents,
                                 user_expected_counts)
# post-processing of the releases (free in privacy); re-exported: tests and mutants read them here
from .vb_denoise import (_FIRST_MEAN_THRESHOLD, _NOISE_SMOOTHING, _SEARCH_THRESHOLD,  # noqa: F401
                         _SHRUNK_SEARCH_THRESHOLD, _background_words, _combine_releases,
                         _denoise, _eb_denoise,
                         _eb_fit_row, _eb_fit_rows, _eb_log_densities, _eb_posterior_mean,
                         _post_process, _row_scaled, _shrink_to_start, _shrink_to_word_means,
                         _word_shrunk)
# the statistic of every release (tests and mutants reach these through this module)
from .vb_statistic import (_CHUNK_NNZ, _checked_word_weight, _clipped_sum,  # noqa: F401
                           _estep, _exp_dirichlet, _expected_counts, _within_norm)

_STATISTICS = ("presence", "counts")
# Share of the budget (of 1 / z^2) of the norm histogram: at eps 1 its bins have noise sd
# ~30 documents, enough to place C; every other release pays 1% more noise for it.
_HISTOGRAM_SHARE = 0.02
# Histogram bins per octave of norm (C is a bin's upper edge: at most 19% too high) and
# octaves (norms above 2^20 share the last bin).
_BINS_PER_OCTAVE = 4
_OCTAVES = 20
# Bins of the noisy histogram below this many noise sd count as empty for the clip rule
# (the noise of 80 empty bins would otherwise pass for long documents; 3e-5 false bins each).
_HISTOGRAM_THRESHOLD = 4.0
# Share of the model budget of the final count release (the rest finds the topics): the
# last two releases are averaged, so the final estimate carries ~0.5 of it.
_FINAL_SHARE = 0.4
# Entries the combination of two releases uses to measure the earlier one's bias (in sd).
_COMBINE_THRESHOLD = 3.0

# A search release with a noise multiplier above this finds little (8 searches at eps 4).
_SEARCH_Z = 4.25
# Passes the noise-free fit needs to converge (batch VB: 10-20) against the time of a fit.
_MAX_SEARCHES = 12
# From this public epsilon on the first release is shrunk to word means and the last two
# search releases take posterior means (below it the first release is too noisy).
_SHRINK_MIN_EPSILON = 2.0
# From this public epsilon on the middle search releases keep entries above 1 sd, shrunk.
_SHRUNK_MIN_EPSILON = 4.0
# From this public epsilon on the fit's E-step reads documents with this prior per topic
# (spread responsibilities keep early, noisy topics from locking a document onto one).
_FIT_PRIOR_MIN_EPSILON = 2.0
_FIT_DOC_TOPIC_PRIOR = 0.35
# From this public epsilon on, public starting topics are refined by the random start's
# searches; below it the one count release, shrunk towards them, is better.
_START_SEARCH_MIN_EPSILON = 4.0

#: One planned release of a fit plan (not a :class:`dptm.Release`): ``statistic``
#: ("norm-histogram", "presence" or "counts"), ``share`` of the total 1 / z^2, noise
#: multiplier ``z`` (sigma / sensitivity) and ``post``, the post-processing of the release
#: ("clip-bound", "shrink", "threshold", "shrunk-threshold", "posterior-mean", "final",
#: "final-to-start").
PlannedRelease = namedtuple("PlannedRelease", "statistic share z post")
Release = PlannedRelease   # deprecated alias (the old name, easily confused with dptm.Release)


def _search_posts(eps, delta, public_start):
    """Post-processing of each search release, by PUBLIC epsilon (see fit_plan): as many
    search releases as keep each one's noise multiplier at most _SEARCH_Z (from 3 to
    _MAX_SEARCHES); from public starting topics, none below _START_SEARCH_MIN_EPSILON."""
    from ..accounting import calibrate_gaussian
    if public_start and eps < _START_SEARCH_MIN_EPSILON:
        return ()
    z = calibrate_gaussian(eps, delta, steps=1, discrete=True)
    n = int(min(_MAX_SEARCHES, max(3, math.floor((1 - _FINAL_SHARE) * (_SEARCH_Z / z) ** 2))))
    if eps < _SHRINK_MIN_EPSILON:
        return ("threshold",) * n
    middle = "shrunk-threshold" if eps >= _SHRUNK_MIN_EPSILON else "threshold"
    return ("shrink",) + (middle,) * (n - 3) + ("posterior-mean",) * 2


def fit_plan(target_epsilon, target_delta, n_components, n_features, schedule=None,
             clip_norm=None, public_start=False):
    """The releases of a ``PrivateBatchLDA`` fit, a function of public inputs only.

    Parameters
    ----------
    target_epsilon, target_delta : float
        The fit's total guarantee.
    n_components, n_features : int
        K and V (public).
    schedule : sequence of (statistic, share), optional
        The model releases ("presence" or "counts", share > 0; normalised); default: the
        search releases of :func:`_search_posts` at equal shares of 1 - ``_FINAL_SHARE``
        and one count release of ``_FINAL_SHARE`` (with ``public_start``: the count
        release alone below ``_START_SEARCH_MIN_EPSILON``).
    clip_norm : float, optional
        A PUBLIC clip bound: no histogram release.
    public_start : bool
        Public ``init_topics`` are given: below ``_START_SEARCH_MIN_EPSILON`` no search
        release, from it the random start's plan; a plan of one model release (this one,
        or a given ``schedule`` of one) is shrunk towards them ("final-to-start").

    Returns
    -------
    list of PlannedRelease
        In order; ``z`` is the noise standard deviation per unit of sensitivity (1 for
        the histogram, the clip bound C for the others), calibrated so that their
        sequential composition is (target_epsilon, target_delta)-DP.
    """
    from ..accounting import calibrate_gaussian
    eps = check_positive(target_epsilon, "target_epsilon")
    delta = check_real(target_delta, "target_delta")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"target_delta must be in (0, 1), got {target_delta!r}")
    check_int(n_components, "n_components", minimum=1)
    check_int(n_features, "n_features", minimum=1)
    if schedule is None:
        posts = _search_posts(eps, delta, public_start)
        share = (1 - _FINAL_SHARE) / max(len(posts), 1)
        z_search = calibrate_gaussian(eps, delta, steps=1, discrete=True) / math.sqrt(
            share * (1 - (_HISTOGRAM_SHARE if clip_norm is None else 0.0)))
        # presence trades a bias (long documents' repeated words) for signal per unit of
        # norm; once a search release's noise is below one document's norm, counts
        search = "presence" if z_search >= 1.0 else "counts"
        model = [(search, share)] * len(posts) + [("counts", _FINAL_SHARE if posts else 1.0)]
    else:
        model = [("presence" if p else "counts", w) for p, w in _check_schedule(schedule)]
        posts = ("threshold",) * (len(model) - 1)
    hist = [] if clip_norm is not None else [("norm-histogram", _HISTOGRAM_SHARE)]
    scale = 1.0 - (_HISTOGRAM_SHARE if hist else 0.0)
    shares = [w for _, w in hist] + [scale * w for _, w in model]
    z = calibrate_gaussian(eps, delta, steps=1, discrete=True)
    for _ in range(100):
        zs = [z / math.sqrt(w) for w in shares]
        if _plan_epsilon(zs, delta) <= eps:
            break
        z *= 1 + 1e-6
    else:                                                   # pragma: no cover
        raise RuntimeError("plan calibration did not converge")
    stats = [s for s, _ in hist] + [s for s, _ in model]
    # one release after public topics: its only E-step read them, so it is shrunk to them
    final = "final-to-start" if public_start and len(model) == 1 else "final"
    post = (["clip-bound"] if hist else []) + list(posts) + [final]
    return [PlannedRelease(s, w, zi, p) for s, w, zi, p in zip(stats, shares, zs, post)]


def _plan_epsilon(zs, delta):
    """Epsilon at ``delta`` of the plan's releases (discrete Gaussians of noise multipliers
    ``zs``, sensitivity 1), composed as the fit's ledger composes what it draws."""
    from ..accounting import GaussianEvent, epsilon
    from ..noise.releases import Ledger
    ledger = Ledger()
    for z in zs:
        ledger.record(GaussianEvent(float(z), sensitivity=1.0, discrete=True))
    return epsilon(ledger.composed(), delta, method="rdp")


def _check_schedule(schedule):
    """Validated schedule as a list of (presence: bool, share), shares summing to one."""
    try:
        out = []
        for item in schedule:
            statistic, share = item
            if statistic not in _STATISTICS:
                raise ValueError(f"statistic must be one of {_STATISTICS}, got {statistic!r}")
            out.append((statistic == "presence", check_positive(share, "share")))
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"schedule must be a non-empty sequence of (statistic, share > 0) "
                        f"pairs, got {schedule!r}: {exc}") from None
    if not out:
        raise ValueError("schedule must hold at least one (statistic, share) release")
    total = sum(w for _, w in out)
    return [(pres, w / total) for pres, w in out]


def _edges():
    """Upper edges of the norm histogram's bins (bin b holds norms in [e_{b-1}, e_b))."""
    n = _BINS_PER_OCTAVE * _OCTAVES
    return 2.0 ** (np.arange(1, n + 1) / _BINS_PER_OCTAVE)


def _norm_histogram(X):
    """Documents of CSR ``X`` per bin of their count vector's L2 norm (empty documents in
    the first bin): each document adds 1 to one bin."""
    # squared in float64: an int64 count of 3.1e9 squares past 2^63, and the negative sum's
    # sqrt warned only when such a document was present (a data-dependent warning)
    Xf = sp.csr_matrix(X, dtype=np.float64)
    sq = np.asarray(Xf.multiply(Xf).sum(axis=1), dtype=np.float64).ravel()
    norm = np.sqrt(sq)
    b = np.floor(np.log2(np.maximum(norm, 1.0)) * _BINS_PER_OCTAVE).astype(np.int64)
    n = _BINS_PER_OCTAVE * _OCTAVES
    return np.bincount(np.clip(b, 0, n - 1), minlength=n).astype(np.float64)[None, :]


def clip_bound(histogram, sd, z, n_components, n_features):
    """The clip bound C from a released norm histogram (noise sd ``sd`` per bin; bins
    within ``_HISTOGRAM_THRESHOLD`` sd of zero count as empty).

    Every model release is clipped at the same C, so C is the bin edge minimising their
    summed squared error, sum_r [sum_d (|x_d| - C)_+^2 + K V z_r^2 C^2]: in each release
    the mass the clipped documents lose (independent across documents, each at its bin's
    upper edge) and the squared norm of its noise (``z``: the noise multipliers z_r of
    the model releases, or one number). Without noise (z -> 0) nothing is clipped.
    Post-processing of the release.

    At user level (``fit(groups=)``) the same rule reads the users' norms and lands on the
    same low edges. Its loss term treats each unit's clipped mass as independent error,
    which undercounts it (the clipped parts of non-negative vectors add up coherently), but
    the part of that loss common to all units is a common scale the normalised topics do not
    see: every C below all the units' norms gives the same release up to that scale, and the
    error after rescaling (``clip_oracle`` in bench/bench_user_level.py, from the true
    count vectors) is least on those low edges for users as for documents.

    Returns (C, estimated number of documents: the histogram's noisy total)."""
    noisy = np.asarray(histogram, dtype=np.float64).ravel()
    counts = np.where(noisy > _HISTOGRAM_THRESHOLD * sd, noisy, 0.0)
    edges = _edges()
    zs = np.asarray(z, dtype=np.float64).ravel()
    # sum over the releases divided by their number: the mean noise variance
    z2 = float(np.mean(zs * zs))
    lost = np.array([np.sum(counts * np.maximum(edges - c, 0.0) ** 2) for c in edges])
    cost = lost + n_components * n_features * z2 * edges ** 2
    return float(edges[int(np.argmin(cost))]), float(max(noisy.sum(), 0.0))




# expected_ratio's fit: ratio - 1 = _RATIO_SCALE * s^_RATIO_POWER, s = z sqrt(K V) / n, by
# least squares on the tuning corpora's bench figures (docs/models/private_batch_lda.md).
_RATIO_SCALE = 2.55
_RATIO_POWER = 0.6
# The fit warns when the expected ratio exceeds this: the unigram model's ratio on the
# most topical-poor tuning corpus measured (NIPS cut into forum-like pieces, 1.54).
_UNIGRAM_RATIO = 1.55


def expected_ratio(n_documents, epsilon, n_components, n_features, delta=1e-5):
    """The held-out perplexity of a default ``PrivateBatchLDA`` fit divided by that of
    non-private batch VB, as the benchmark's tuning corpora predict it from public inputs
    only: 1 + a s^b with s = z sqrt(K V) / n, z the noise multiplier of (epsilon, delta)
    as one Gaussian release. A rough guide (corpora differ by +-15%), not a guarantee.

    Parameters
    ----------
    n_documents : float
        Number of documents (as declared, or the fit's ``n_documents_estimate_``).
    epsilon, delta : float
    n_components, n_features : int
        K and V.

    Returns
    -------
    float
    """
    from ..accounting import calibrate_gaussian
    n = check_positive(n_documents, "n_documents")
    check_int(n_components, "n_components", minimum=1)
    check_int(n_features, "n_features", minimum=1)
    z = calibrate_gaussian(check_positive(epsilon, "epsilon"), check_real(delta, "delta"),
                           steps=1, discrete=True)
    return 1.0 + _RATIO_SCALE * (z * math.sqrt(n_components * n_features) / n) ** _RATIO_POWER


class PrivateBatchLDA(PrivateModelMixin, TopicModelMixin):
    """Document-level (or, with ``groups``, user-level) private LDA by batch VB.

    The fit runs the public plan of :func:`fit_plan`: a noisy histogram of the documents'
    norms sets the clip bound C (:func:`clip_bound`); then every release is the sum over
    all documents of their expected topic-word counts under the current topics (the
    variational E-step), each document's contribution clipped to L2 norm C and rounded
    down to the noise lattice, plus exact discrete Gaussian noise. Search releases
    ("presence": each distinct word of a document once) find the topics, each one
    post-processed into the topics the next E-step reads (entries the noise dominates
    zeroed, words shrunk towards their mean over the topics, empirical-Bayes posterior
    means); a final count release, averaged with the last search release, estimates
    them, and the released topics are the empirical-Bayes posterior mean of every entry
    (a spike at zero and an exponential slab per topic, fitted on the estimate).

    Documents whose contribution is within C are untouched: without noise the fit is
    batch VB. C trades the mass the longest documents lose against the noise
    (proportional to C).

    Parameters
    ----------
    n_components : int
        Number of topics K.
    target_epsilon, target_delta : float
        Total document-level (add/remove one document) guarantee of the fit.
    schedule : sequence of (statistic, share), optional
        The model releases in order (``"presence"`` or ``"counts"``, share > 0,
        normalised; every search release hard-thresholded at 2 noise sd). Default: the
        plan of :func:`fit_plan` (a function of the public epsilon).
    clip_norm : float, optional
        A PUBLIC bound on each document's contribution (L2, token units). Default None:
        chosen from the noisy norm histogram (2% of the budget).
    threshold : float or None, default=None
        None: the released topics are empirical-Bayes posterior means. A number >= 0:
        entries of the final estimate below ``threshold`` noise sd are zeroed instead.
    init_topics : array of shape (K, V), optional
        PUBLIC initial topic-word weights (e.g. from a public corpus); must not be derived
        from the private documents. Default: a data-independent random start.
    word_counts : array of shape (V,), optional
        PUBLIC counts of the vocabulary's words in text of the same kind (raw token counts,
        not frequencies: their total says how far they are trusted; never counted on the
        private documents). The words the final estimate cannot resolve (mass, estimated
        from the release and these counts, below 4 noise sd; topics not told apart) get, in
        each topic, its estimated mass on those words spread in proportion to these counts
        instead of their noisy entries (post-processing: no budget; ``background_words_``).
        Helps most at low epsilon and on heavy-tailed corpora; needs counts from a few
        thousand documents. Default: none.
    doc_topic_prior, topic_word_prior : float, optional
        Default (None) 1 / K for ``transform`` and the release; the fit's E-step uses 0.35
        instead from target epsilon 2 on (with the random start).
    transform_max_iter : int, default=50
        Gibbs fold-in sweeps of ``transform``.
    n_jobs : int, optional
        Threads of the E-step and of ``transform``. The fit is the same for every value.
    random_state : None, int, SeedSequence or Generator
        None (default): all randomness (start, noise) from the secret generator. Anything
        else is a labelled test mode.
    verbose : int

    Attributes
    ----------
    components_, topic_word_ : ndarray (K, V)
        Released pseudo-counts and topics.
    privacy_ : PrivacyReport
    plan_ : list of PlannedRelease
        The releases of the fit (public: :func:`fit_plan`).
    clip_norm_ : float
        The clip bound used (post-processing of the histogram release, or the public one).
    n_documents_estimate_ : float or None
        The noisy document count (the histogram's total; None with a public clip_norm or
        with ``groups``).
    n_users_estimate_ : float or None
        With ``groups`` only: the noisy user count (None with a public clip_norm).
    count_estimate_sd_ : float or None
        The noise sd of that count (public: set by the budget; None with a public
        clip_norm).
    release_sigmas_ : list of float
        Noise standard deviation of each model release (public: set by the budget and C).
    background_words_ : ndarray of bool (V,) or None
        With ``word_counts``: the words read from them (post-processing); else None.

    Privacy contract
    ----------------
    ``components_``, ``clip_norm_`` and ``n_documents_estimate_`` are post-processing of
    the lattice-Gaussian releases recorded in ``privacy_`` (their sequential
    composition). The vocabulary, ``init_topics`` and ``word_counts`` are assumed
    public; the number of documents is neither used by the mechanism nor published except
    through the noisy histogram. A corpus without any token is refused with a
    ``ValueError``, which tells it apart from its one-document neighbours: the guarantee is
    for corpora holding at least one token. With ``fit(X, groups=...)`` the unit is a user (every document with
    the same id): the guarantee is for adding or removing one user, each user's summed
    contribution is clipped to C, the histogram counts users and ``n_users_estimate_``
    replaces ``n_documents_estimate_`` (None); the ids are assumed correct (one person
    under two ids is two users) and neither the number of users nor of documents is public.
    """

    _TRANSFORM_SEED = "last"         # after every release

    def __init__(self, n_components=10, *, target_epsilon=1.0, target_delta=1e-5,
                 schedule=None, clip_norm=None, threshold=None, init_topics=None,
                 word_counts=None, doc_topic_prior=None, topic_word_prior=None,
                 transform_max_iter=50, n_jobs=None, random_state=None, verbose=0):
        self.n_components = n_components
        self.target_epsilon = target_epsilon
        self.target_delta = target_delta
        self.schedule = schedule
        self.clip_norm = clip_norm
        self.threshold = threshold
        self.init_topics = init_topics
        self.word_counts = word_counts
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.transform_max_iter = transform_max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @property
    def max_iter(self):
        """Model releases (each one a pass over every document)."""
        if self.schedule is not None:
            return len(_check_schedule(self.schedule))
        try:
            eps = check_positive(self.target_epsilon, "target_epsilon")
        except (TypeError, ValueError):
            eps = 1.0           # validated by the fit
        return len(_search_posts(eps, self.target_delta, self.init_topics is not None)) + 1

    def _check_word_counts(self, V):
        if self.word_counts is None:
            return None
        try:
            counts = np.array(self.word_counts, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"word_counts must be an array of {V} numbers, got "
                            f"{type(self.word_counts).__name__}") from None
        if counts.shape != (V,):
            raise ValueError(f"word_counts must have shape (n_features,) = ({V},), "
                             f"got {counts.shape}")
        with np.errstate(over="ignore", invalid="ignore"):   # refused below: inf or NaN
            total = counts.sum()
        if not np.all(np.isfinite(counts)) or np.any(counts < 0) or not 0 < total < np.inf:
            raise ValueError("word_counts must be finite, non-negative, with a positive sum "
                             "(finite in double precision)")
        if np.any(counts != np.floor(counts)):
            # frequencies summing to 1 would read as one token of public text: no effect
            raise ValueError("word_counts must be whole counts (raw token counts in public "
                             "text), not frequencies")
        return counts

    def _check_init(self, V):
        if self.init_topics is None:
            return None
        init = np.array(self.init_topics, dtype=np.float64)
        if init.shape != (self.n_components, V):
            raise ValueError(f"init_topics must have shape (n_components, n_features) = "
                             f"({self.n_components}, {V}), got {init.shape}")
        if not np.all(np.isfinite(init)) or np.any(init < 0) or np.any(init.max(axis=1) <= 0):
            raise ValueError("init_topics must be finite, non-negative, with positive rows")
        # only their shape is read: rows scaled exactly, so that their sums are finite and
        # normal (1e308 entries summed to inf, subnormal ones gave inf / NaN starting topics)
        return _row_scaled(init)

    def fit(self, X, y=None, groups=None):
        """Fit to the count matrix ``X`` (documents x words); ``groups`` (one hashable
        user id per document, optional): user level (see the class's Privacy contract)."""
        X = check_count_matrix(X, estimator=self, reset=True).tocsr()
        threads = effective_n_jobs(self.n_jobs)
        if groups is not None:
            Xs, user_ptr = group_documents(X, groups)
            return self._fit_releases(X.shape[1], lambda beta, alpha, C, g, presence: (
                user_expected_counts(Xs, user_ptr, beta, alpha, C, granularity=g,
                                     presence=presence, n_threads=threads)), unit="user")
        return self._fit_releases(X.shape[1], lambda beta, alpha, C, g, presence: (
            _expected_counts(X, beta, alpha, C, granularity=g, presence=presence,
                             n_threads=threads)))

    def _fit_releases(self, V, statistic, unit="document"):
        """The fit given where the documents are: ``statistic(beta, alpha, norm,
        granularity, presence)`` is the lattice sum of ``_expected_counts`` over
        every document (one process: ``fit``; a cluster: ``dptm.distributed``), or with
        ``unit="user"`` of ``user_contributions.user_expected_counts`` over every user.
        Validates and plans (public inputs only), then runs the releases."""
        self._check_common_params()
        K = self.n_components
        init = self._check_init(V)
        counts = self._check_word_counts(V)
        C = None if self.clip_norm is None else check_positive(self.clip_norm, "clip_norm")
        if self.threshold is not None and not check_real(self.threshold, "threshold") >= 0:
            raise ValueError(f"threshold must be >= 0, got {self.threshold!r}")
        plan = fit_plan(self.target_epsilon, self.target_delta, K, V, self.schedule, C,
                        init is not None)
        eps, alpha = float(self.target_epsilon), self.doc_topic_prior_
        if self.doc_topic_prior is None and _random_plan(plan, init, self.schedule) \
                and eps >= _FIT_PRIOR_MIN_EPSILON:
            alpha = _FIT_DOC_TOPIC_PRIOR        # the fit's E-step only (public: eps)
        if C is not None:
            _check_noise_range([r for r in plan if r.statistic != "norm-histogram"], C)
        return self._run_private(self._releases, V, statistic, unit, plan, init, C, alpha,
                                 counts)

    def _releases(self, fit, V, statistic, unit, plan, init, C, alpha, counts):
        """The releases of ``plan`` in order, from ``fit.generator``; the fitted attributes."""
        fit.adjacency = unit                   # "document" or "user"
        K, eta = self.n_components, self.topic_word_prior_
        eps = float(self.target_epsilon)
        model = [r for r in plan if r.statistic != "norm-histogram"]
        gen = fit.generator
        beta = (1.0 + 0.1 * gen.random((K, V)) if init is None    # data-independent start
                else eta + init * (1e3 / init.sum(axis=1, keepdims=True)))
        n_docs, releases, background = None, [], None
        random_plan = _random_plan(plan, init, self.schedule)
        for r in plan:
            if r.statistic == "norm-histogram":     # integer counts: sensitivity 1, unit lattice
                hist = statistic(np.zeros((1, _BINS_PER_OCTAVE * _OCTAVES)), None, None,
                                 1.0, "norm-histogram")
                release = LatticeGaussianRelease(r.z, 1.0, 1.0, ledger=fit.ledger)
                noisy = release.draw(hist, gen)
                C, n_docs = clip_bound(noisy, release.sigma_, [m.z for m in model], K, V)
                _check_noise_range(model, C)
                continue
            sigma = r.z * C
            g = _granularity(sigma)
            stat = statistic(beta, alpha, C, g, r.statistic == "presence")
            release = LatticeGaussianRelease(sigma, C, g, ledger=fit.ledger)
            noisy = release.draw(stat, gen)
            sd = release.sigma_
            releases.append((noisy, sd))
            est, est_sd = noisy, sd
            if len(releases) >= 2 and (r.post == "final" or (random_plan and len(releases) >= 3)):
                # averaged with the release before (independent noise; the earlier one
                # weighted by its noise and its measured bias)
                est, est_sd = _combine_releases(releases[-2:], _COMBINE_THRESHOLD)
            beta = _post_process(r.post, est, est_sd, eta,
                                 None if self.threshold is None else float(self.threshold),
                                 start=init)
            if r.post == "final" and counts is not None:    # public topics carry them
                beta, background = _background_words(beta, est, est_sd, eta, counts)
            self._progress(len(releases), total=len(model), unit="release")
        drawn = [ev.sigma for ev in fit.ledger.events]
        privacy = fit.report(
            fit.ledger.composed(), unit,
            description=(USER_DESCRIPTION if unit == "user" else
                         "batch VB LDA: a noisy histogram of document norms sets the clip "
                         "bound; per-document clipped expected counts, lattice (exact "
                         "discrete) Gaussian releases on every document, the budget split "
                         "across them (sequential composition)"),
            default_delta=float(self.target_delta),
            assumed_public=[f"vocabulary (V = {V} words)"]
            + ([USER_ASSUMED_PUBLIC] if unit == "user" else [])
            + (["init_topics (given as public)"] if init is not None else [])
            + (["word_counts (given as public)"] if counts is not None else [])
            + ([f"clip_norm = {C:g} (given as public)"] if self.clip_norm is not None else []))
        count_sd = None
        if n_docs is not None:
            # the noisy count (post-processing of the histogram release), never the true one;
            # its noise sd is the bins' sd times sqrt(number of bins)
            count_sd = float(drawn[0] * math.sqrt(_BINS_PER_OCTAVE * _OCTAVES))
            if init is None:        # the guide models the random start, not public topics
                _warn_if_uninformative(max(n_docs, 1.0), eps, float(self.target_delta), K, V,
                                       unit + "s", count_sd)
        return {"plan_": plan, "clip_norm_": float(C), "count_estimate_sd_": count_sd,
                "n_documents_estimate_": None if unit == "user" else n_docs,
                # the histogram counts users; none is left from an earlier user-level fit
                "n_users_estimate_": n_docs if unit == "user" else UNSET,
                "release_sigmas_": [float(x) for x, r in zip(drawn, plan)
                                    if r.statistic != "norm-histogram"],
                "sigma_": float(drawn[-1]), "sensitivity_": float(C), "privacy_": privacy,
                "background_words_": background,
                **topic_attributes(beta), "n_iter_": len(model)}


def _random_plan(plan, init, schedule):
    """Whether the fit runs the random start's default plan (its fit prior, its averaged
    searches): without public topics, or from them with searches (a public decision)."""
    return init is None or (schedule is None and plan[-1].post == "final")


def _warn_if_uninformative(n, eps, delta, K, V, units="documents", count_sd=None):
    ratio = expected_ratio(n, eps, K, V, delta)
    if ratio > _UNIGRAM_RATIO:
        import warnings
        from ..exceptions import UninformativeModelWarning, user_stacklevel
        sd = "" if count_sd is None else f": noise sd {count_sd:.0f}"
        unit = units[:-1] if round(n) == 1 else units
        more = ("use more users (more documents of the same users do not help)"
                if units == "users" else "use more documents")
        # a smaller vocabulary helps only where there is one worth shrinking (10 words a topic)
        options = [more, "fewer topics"] + (["a smaller vocabulary"] if V > 10 * K else [])
        advice = ", ".join(options[:-1]) + " or " + options[-1]
        if eps <= 10:
            advice = "raise epsilon, " + advice
        warnings.warn(f"for about {n:.0f} {unit} (a DP noisy count{sd}) at this model's "
                      f"epsilon {eps:g}, K = {K} "
                      f"and V = {V}, a rough guide from the noisy count and public inputs "
                      f"expects the topics at {ratio:.2f}x the perplexity of non-private LDA, "
                      "no better than a unigram model (one word distribution); measure on "
                      "public or held-out text with dptm.guardrails.check_against_unigram "
                      "before concluding; "
                      f"to do better: {advice}",
                      UninformativeModelWarning, stacklevel=user_stacklevel())


def _check_noise_range(model, C):
    """Refuse a clip bound whose noise would overflow or underflow double precision
    (decided from public parameters or post-processing only)."""
    sigmas = [r.z * C for r in model]
    if not math.isfinite(max(sigmas) * 2.0 ** 64):
        raise ValueError(f"clip_norm={C!r} is too large: the noise (sigma up to "
                         f"{max(sigmas):.3g}) overflows double precision")
    if not min(sigmas) >= 2.0 ** -900:
        raise ValueError(f"clip_norm={C!r} is too small: the noise (sigma down to "
                         f"{min(sigmas):.3g}) underflows double precision")
