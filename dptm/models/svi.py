"""Private stochastic variational inference for LDA: VIPS (Park et al. 2016, Algorithm 1).

Online LDA (Hoffman, Blei & Bach 2010) on minibatches, with Gaussian noise added to the
minibatch sum of expected sufficient statistics before the M-step (DESIGN.md 3.3). With
neither ``noise_multiplier`` nor ``target_epsilon`` it is plain online LDA, computing what
scikit-learn's ``LatentDirichletAllocation(learning_method="online")`` computes.
"""
import math
import warnings

import numpy as np
from scipy.special import gammaln, psi
from sklearn.utils.validation import check_is_fitted

from .. import _svi
from .._threads import effective_n_jobs
from .._utils import (check_count_matrix, check_int, check_positive, check_probability,
                      check_random_state, spawn_generators)
from ..exceptions import NotHardenedWarning, user_stacklevel
from ..noise.mechanisms import (_granularity_with_slack, discrete_gaussian_parameters,
                                lattice_rounding_slack)
from ..noise.releases import GaussianRelease, LatticeGaussianRelease
from ..noise.secret import private_fit, private_generator, public_seed
from ._base import TopicModelMixin
from ._private_base import PrivateModelMixin, topic_attributes
from ._truncate import truncate_documents

__all__ = ["PrivateOnlineLDA", "truncate_documents"]

SAMPLINGS = ("poisson", "shuffle", "sequential")
MECHANISMS = ("lattice_gaussian", "gaussian")
ACCOUNTINGS = ("rdp", "zcdp-paper", "advanced", "linear")
# accounting option -> composition name of dptm.accounting.recipes.park2016_*
_PAPER_COMPOSITION = {"zcdp-paper": "zcdp", "advanced": "advanced", "linear": "linear"}
_CITATION = "Park, Foulds, Chaudhuri & Welling 2016 (Park et al. 2016, eqs. 3, 5-6)"
_STAT_LABEL = "minibatch expected sufficient statistics"
_MAX_STEPS = 10 ** 7     # a fit plans one generator per step


class PrivateOnlineLDA(PrivateModelMixin, TopicModelMixin):
    """Latent Dirichlet allocation by (differentially private) stochastic variational
    inference: VIPS, Park et al. 2016 Algorithm 1, on top of online LDA.

    Each step draws a minibatch, runs the variational E-step on its documents (Cython,
    ``dptm._svi.lda_e_step``: the per-document fixed point of gamma and phi), sums their
    expected sufficient statistics ``s`` (K x V expected topic-word counts), adds Gaussian
    noise ``N(0, sigma^2)`` to every one of the K x V entries, maps negative entries to 0,
    and takes the online M-step
    ``lambda <- (1 - rho_t) lambda + rho_t (eta + (D / S) s~)``,
    ``rho_t = (learning_offset + t) ** -learning_decay``.

    Parameters
    ----------
    n_components : int, default=10
        Number of topics K.
    doc_topic_prior : float, default=None
        Dirichlet prior alpha of document-topic distributions; None means 1/K.
    topic_word_prior : float, default=None
        Dirichlet prior eta of topic-word distributions; None means 1/K.
    batch_size : int, default=128
        Minibatch size S: the expected size under Poisson sampling, the exact size otherwise
        (the last minibatch of an epoch may be smaller).
    sampling : {"poisson", "shuffle", "sequential"}, default="poisson"
        How minibatches are drawn in ``fit``. "poisson": every step keeps each document
        independently with probability q = S / ``total_samples`` (privacy amplification by
        subsampling applies). "shuffle": each epoch a random permutation cut into consecutive batches
        of size S. "sequential": the rows in order, cut into batches of size S, as
        scikit-learn's online LDA does.
    learning_offset : float, default=10.0
        tau0 >= 0 of the learning rate; down-weights early steps.
    learning_decay : float, default=0.7
        kappa in [0, 1] of the learning rate (in (0.5, 1] for convergence guarantees).
    max_iter : int, default=10
        Passes over the data in ``fit``; the number of steps is
        T = max_iter * ceil(n / batch_size), n = ``total_samples`` for a private Poisson fit
        and the number of rows of X otherwise. In ``partial_fit`` with ``target_epsilon`` it
        is the planned number of ``partial_fit`` calls the budget is calibrated for.
    total_samples : float, default=None
        A public, declared number of documents (a bound or an estimate made without the
        private data). A private ``fit`` with ``sampling="poisson"`` takes its sampling rate
        q = S / total_samples, its step count and its M-step scale 1 / q from it and never
        from the rows of X, so the guarantee holds whatever the true number of documents
        (a wrong value costs utility, not privacy). It is required there: None raises
        ValueError before X is read (the number of rows is not public under add/remove
        adjacency). ``partial_fit`` scales each minibatch by total_samples / S (1e6 when
        None). A non-private ``fit`` and the "shuffle" / "sequential" modes (replace-one
        adjacency: the size is public) use the rows of X.
    max_doc_length : int, default=None
        N: documents longer than N tokens are truncated to a uniformly random subset of N
        tokens before training. Required when the model is private (it bounds the
        sensitivity); None means no cap (non-private only).
    noise_multiplier : float, default=None
        sigma / sensitivity of the Gaussian noise. Give this or ``target_epsilon``.
    target_epsilon, target_delta : float, default=None
        Privacy target: sigma is calibrated so that the whole training run is
        (target_epsilon, target_delta)-DP under the chosen ``accounting``.
    accounting : {"rdp", "zcdp-paper", "advanced", "linear"}, default="rdp"
        How sigma is calibrated from (target_epsilon, target_delta). "rdp": the tight, sound
        Renyi-DP accountant of the Poisson-subsampled Gaussian composed over the steps.
        The others are Park et al. 2016's recipes (eqs. 5-6 with eq. 3): its zCDP route
        ("zcdp-paper", unsound as derived), and its advanced- and linear-composition
        baselines (sound only where eq. 3 holds, i.e. per-step epsilon < 1). Whatever is
        chosen, ``privacy_.epsilon(delta)`` reports the tightest sound epsilon of the noise
        actually used; the paper's own figure is ``privacy_.paper_epsilon(delta)``.
    mechanism : {"lattice_gaussian", "gaussian"}, default="lattice_gaussian"
        Noise on the minibatch statistic. "lattice_gaussian" (exact): the K x V statistic is
        rounded to the lattice g Z (g a power of two, sigma / g in [4096, 8192)) and an exact
        discrete Gaussian on g Z is added, so every released entry is an exact multiple of g
        whatever the input; the rounding is accounted by adding ``g sqrt(n)`` to the L2
        sensitivity (n = K x the number of words one document can touch, K min(N, V); K
        min(2N, V) under substitution), with sigma scaled alike so the noise multiplier is
        kept. "gaussian": the floating-point Gaussian of Park et al. 2016, whose low bits
        can reveal the statistic (NotHardenedWarning; the report says "not hardened").
    mean_change_tol : float, default=1e-3
        E-step stopping tolerance on the mean absolute change of gamma (as scikit-learn).
    max_doc_update_iter : int, default=100
        Maximum E-step fixed-point updates per document.
    n_jobs : int or None, default=None
        Threads of the E-step (documents of a minibatch, and of ``transform``, ``score``,
        ``perplexity``), scikit-learn semantics: None is 1, -1 every core. Every result is
        bit-identical for every ``n_jobs`` (each document's fixed point is computed alone;
        the minibatch statistic is summed in document order cell by cell), so the release
        depends on the data and the random draws only, never on the thread count. On a
        machine busy with other work set ``OMP_WAIT_POLICY=passive`` before starting
        Python (waiting OpenMP threads otherwise spin and slow the busy ones).
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        None (the default): a private model draws every random choice (initial lambda,
        truncation, minibatches, gamma initialisation, noise) from a fresh secret
        AES-CTR generator (:func:`dptm.noise.secret.secret_generator`) obtained once per
        ``fit`` / ``partial_fit`` call and never stored. A seed is a labelled test mode
        (SeededPrivacyWarning; the report's first line says the guarantee holds only while
        the seed stays secret). A non-private model uses it as an ordinary seed.
    verbose : int, default=0
        1 prints progress every 10 epochs, 2 every epoch (no wall times: they depend on
        the private data).
    callback : callable, default=None
        Called as ``callback(model, epoch)`` after every epoch of ``fit``.

    Attributes
    ----------
    components_ : ndarray (K, V)
        The variational parameter lambda (released).
    topic_word_ : ndarray (K, V)
        Row-normalised ``components_``.
    exp_dirichlet_component_ : ndarray (K, V)
        exp(E[log beta]) under q(beta | lambda).
    doc_topic_prior_, topic_word_prior_ : float
        The priors used.
    n_batch_iter_ : int
        Number of minibatch steps taken so far plus one (the next step's t, as in
        scikit-learn).
    n_iter_ : int
        Epochs run by ``fit``.
    noise_multiplier_ : float or None
        sigma / sensitivity used (None when not private).
    sigma_ : float or None
        Standard deviation (parameter) of the noise on each sufficient statistic, as told
        to the accountant (for the lattice mechanism the exact discrete sigma sampled).
    sensitivity_ : float or None
        Recorded L2 sensitivity of the released minibatch statistic under the model's
        neighbouring relation (N for add/remove; sqrt(2) N for substitution, used by
        "shuffle"/"sequential"), plus the lattice rounding slack g sqrt(n).
    granularity_ : float or None
        Lattice spacing g of the lattice mechanism (a power of two).
    mechanism_ : str or None
        The mechanism used (None when not private).
    transform_seed_ : int
        Public seed of the release's fold-in sampler (``release().transform``).
    privacy_ : dptm.accounting.PrivacyReport or None
        What was released and its guarantee; None for the non-private model.

    Privacy
    -------
    Document-level differential privacy. With ``sampling="poisson"`` (default) the
    neighbouring corpora differ by adding or removing one document; the sampling rate
    q = S / ``total_samples``, the step count and sigma are functions of declared public
    parameters only (never of the number of documents, which add/remove changes). Each
    document is kept in each step independently with probability q whatever the number of
    documents, so the subsampled-Gaussian bound holds as stated. Documents are
    capped at N = ``max_doc_length`` tokens by random truncation, so one document's
    expected sufficient statistics (its expected topic-word counts, entries >= 0 summing
    to at most N) have L2 norm <= L1 norm <= N: the minibatch sum has L2 sensitivity N.
    Each step releases the noised sum (Gaussian mechanism on a Poisson subsample); the
    M-step, the next E-step and the released lambda are post-processing. With the default
    exact mechanism the sum is rounded to a lattice g Z before the discrete Gaussian is
    added; rounding can move neighbouring sums apart by up to g on each coordinate one
    document touches (K min(N, V) of them), so the recorded sensitivity is
    ``N + g sqrt(K min(N, V))`` (the slack is added, nothing is clipped) and sigma is
    scaled with it; the event is a discrete Gaussian with the exact sigma sampled. The minibatch
    sum is scaled by 1 / q = total_samples / S, never by the realised size. The event
    is ``SelfComposed(PoissonSampled(Gaussian(sigma, N), q), T)``.

    With "shuffle" or "sequential" batches Poisson amplification does not apply. These
    modes are accounted without amplification under substitution of one document in a
    corpus of public size D (replace-one): the changed document's statistic differs by at
    most sqrt(2) N in L2 (both statistics are non-negative with L1 norm <= N), and since
    the batches of an epoch are disjoint and chosen independently of the data, each
    document enters exactly one release per epoch: an epoch is one Gaussian release
    (parallel composition), ``SelfComposed(Gaussian(sigma, sqrt(2) N), max_iter)``.

    ``partial_fit(X)`` takes the whole X as one minibatch chosen by the caller (no
    amplification): each call is a Gaussian release with sensitivity N (add/remove of one
    document of X), composed into ``privacy_`` with everything released before.

    Released: lambda (``components_`` / ``topic_word_``, ``release()``), computed only from
    the initial data-independent lambda and the noised statistics. ``total_samples`` (the
    number of documents D in the replace-one modes), the vocabulary size V and the cap N are
    treated as public and listed under "assumed public" in ``privacy_``; the vocabulary
    itself must not come from the private text. The
    fitted estimator is not for publication (publish ``release()``); it holds no generator
    and no seed unless one was given. ``transform``, ``perplexity`` and
    ``score`` use only the released lambda.

    Notes
    -----
    ``perplexity(X)`` is the variational upper bound of Park et al. 2016 Section 4:
    ``exp(-bound(X) / n_tokens)`` with ``bound(X)`` the sum over documents of
    ``E_q[log p(n_d, theta_d, z_d | lambda)] - E_q[log q(theta_d, z_d)]`` (``score(X)``).
    scikit-learn's ``perplexity`` adds the corpus-level term
    ``E_q[log p(beta | eta) - log q(beta | lambda)]`` to the bound before dividing by the
    token count; ours leaves it out, so it is per-document and comparable across corpora.

    Examples
    --------
    >>> from dptm import PrivateOnlineLDA
    >>> from dptm.datasets import make_lda_corpus
    >>> X, _, _ = make_lda_corpus(400, 60, 3, random_state=0)
    >>> model = PrivateOnlineLDA(3, batch_size=40, total_samples=400, max_doc_length=200,
    ...                          target_epsilon=2.0, target_delta=1e-5).fit(X)
    >>> model.topic_word_.shape
    (3, 60)
    >>> round(model.privacy_.epsilon(1e-5), 2) <= 2.0
    True
    """

    # Sweeps of the Gibbs fold-in of ``release().transform`` (post-processing); the
    # estimator's own ``transform`` is the deterministic variational E-step.
    transform_max_iter = 100

    def __init__(self, n_components=10, *, doc_topic_prior=None, topic_word_prior=None,
                 batch_size=128, sampling="poisson", learning_offset=10.0, learning_decay=0.7,
                 max_iter=10, total_samples=None, max_doc_length=None, noise_multiplier=None,
                 target_epsilon=None, target_delta=None, accounting="rdp",
                 mechanism="lattice_gaussian", mean_change_tol=1e-3, max_doc_update_iter=100,
                 n_jobs=None, random_state=None, verbose=0, callback=None):
        self.n_components = n_components
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.batch_size = batch_size
        self.sampling = sampling
        self.learning_offset = learning_offset
        self.learning_decay = learning_decay
        self.max_iter = max_iter
        self.total_samples = total_samples
        self.max_doc_length = max_doc_length
        self.noise_multiplier = noise_multiplier
        self.target_epsilon = target_epsilon
        self.target_delta = target_delta
        self.accounting = accounting
        self.mechanism = mechanism
        self.mean_change_tol = mean_change_tol
        self.max_doc_update_iter = max_doc_update_iter
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.callback = callback

    # ------------------------------------------------------------------ validation
    def _check_params(self):
        K = check_int(self.n_components, "n_components", minimum=1)
        check_int(self.batch_size, "batch_size", minimum=1)
        check_int(self.max_iter, "max_iter", minimum=1)
        check_int(self.max_doc_update_iter, "max_doc_update_iter", minimum=1)
        check_positive(self.learning_offset, "learning_offset", strict=False)
        decay = check_positive(self.learning_decay, "learning_decay", strict=False)
        if decay > 1.0:
            raise ValueError(f"learning_decay must be in [0, 1], got {decay}")
        if self.total_samples is not None:
            check_positive(self.total_samples, "total_samples")
        check_positive(self.mean_change_tol, "mean_change_tol", strict=False)
        effective_n_jobs(self.n_jobs)
        if self.sampling not in SAMPLINGS:
            raise ValueError(f"sampling must be one of {SAMPLINGS}, got {self.sampling!r}")
        if self.mechanism not in MECHANISMS:
            raise ValueError(f"mechanism must be one of {MECHANISMS}, got {self.mechanism!r}")
        if self.accounting not in ACCOUNTINGS:
            raise ValueError(f"accounting must be one of {ACCOUNTINGS}, got {self.accounting!r}")
        if self.max_doc_length is not None:
            check_int(self.max_doc_length, "max_doc_length", minimum=1)
        if self.noise_multiplier is not None:
            check_positive(self.noise_multiplier, "noise_multiplier")
            if self.target_epsilon is not None:
                raise ValueError("give either noise_multiplier or target_epsilon, not both")
        if self.target_epsilon is not None:
            check_positive(self.target_epsilon, "target_epsilon")
            if self.target_delta is None:
                raise ValueError("target_delta is required with target_epsilon: a float in (0, 1)")
        if self.target_delta is not None:
            check_probability(self.target_delta, "target_delta", high_open=True)
            if self.target_epsilon is None and self.noise_multiplier is None:
                raise ValueError("target_delta was given without target_epsilon")
        if self._private and self.max_doc_length is None:
            raise ValueError("max_doc_length (an int >= 1) is required when the model is private "
                             "(noise_multiplier or target_epsilon given): it bounds the sensitivity")
        self.doc_topic_prior_ = (1.0 / K if self.doc_topic_prior is None
                                 else check_positive(self.doc_topic_prior, "doc_topic_prior"))
        self.topic_word_prior_ = (1.0 / K if self.topic_word_prior is None
                                  else check_positive(self.topic_word_prior, "topic_word_prior"))

    @property
    def _private(self):
        return self.noise_multiplier is not None or self.target_epsilon is not None

    def _check_declared_total(self):
        """Refuse a private Poisson ``fit`` without ``total_samples``: under add/remove
        adjacency the number of documents is not public, so q, the step count and sigma
        must come from a declared number. Reads the parameters only (no data)."""
        if self._private and self.sampling == "poisson" and self.total_samples is None:
            raise ValueError(
                "total_samples is required for a private fit with sampling='poisson' "
                "(add/remove adjacency): the sampling rate q = batch_size / total_samples, the "
                "number of steps and the noise are planned from it, and the number of rows of X "
                "is not public when one document may be added or removed. Pass total_samples= "
                "a PUBLIC number of documents known without looking at the data (an upper "
                "bound or an estimate: a wrong value costs utility, not privacy). Without it: "
                "sampling='shuffle' or 'sequential' (replace-one adjacency, the number of "
                "documents public), a non-private fit (no noise_multiplier or target_epsilon) "
                "and partial_fit work as before")

    # ------------------------------------------------------------------ random draws
    # Kept as methods so that tests can replay another implementation's draws.
    def _init_lambda(self, rng, n_words):
        """Initial lambda (K x V): Gamma(100, 1/100) entries, data-independent."""
        return rng.gamma(100.0, 0.01, (self.n_components, n_words))

    def _init_gamma(self, rng, n_docs):
        """Initial gamma of the minibatch's documents: Gamma(100, 1/100) entries."""
        return rng.gamma(100.0, 0.01, (n_docs, self.n_components))

    # ------------------------------------------------------------------ core step
    def _set_lambda_t(self, lam_t):
        self._lam_t = np.ascontiguousarray(lam_t, dtype=np.float64)
        self._exp_elog_beta_t = _svi.exp_dirichlet_expectation_t(
            self._lam_t, np.empty_like(self._lam_t))

    def _public_state(self):
        """The released attributes of the current lambda."""
        return {**topic_attributes(self._lam_t.T.copy()),
                "exp_dirichlet_component_": self._exp_elog_beta_t.T.copy()}

    def _sync_public(self):
        self._set_fitted(self._public_state())

    def _privatize(self, stat, rng):
        """The released noisy statistic (K x V) of the minibatch sum ``stat`` (K x V).

        "lattice_gaussian": ``stat`` rounded to the lattice g Z plus g times an exact
        discrete Gaussian, every entry an exact multiple of g (``granularity_``);
        "gaussian": floating-point N(0, sigma^2) (not hardened)."""
        if self.mechanism_ == "lattice_gaussian":
            release = LatticeGaussianRelease(self._sigma_draw_, self.sensitivity_,
                                             self.granularity_, label=_STAT_LABEL)
        else:
            release = GaussianRelease(self.sigma_, self.sensitivity_, label=_STAT_LABEL)
        out = release.draw(stat, rng)
        if release.event != self._leaf():        # pragma: no cover - a bug
            raise RuntimeError("the noise drawn differs from the noise accounted")
        return out

    def _step(self, indptr, indices, counts, rows, scale, rng):
        """One online step on the documents ``rows``; the sum is scaled by ``scale``."""
        sstats = np.zeros_like(self._lam_t)
        if rows.size:
            gamma = np.ascontiguousarray(self._init_gamma(rng, rows.size), dtype=np.float64)
            _svi.lda_e_step(indptr, indices, counts, rows, self._exp_elog_beta_t, gamma,
                            self.doc_topic_prior_, float(self.mean_change_tol),
                            int(self.max_doc_update_iter), sstats, None,
                            effective_n_jobs(self.n_jobs))
        if self.sigma_ is not None:
            # Noise on every one of the K x V coordinates, whether or not a word occurs.
            noisy = self._privatize(np.ascontiguousarray(sstats.T), rng)
            np.maximum(noisy, 0.0, out=noisy)
            sstats = np.ascontiguousarray(noisy.T)
        rho = (self.learning_offset + self.n_batch_iter_) ** (-self.learning_decay)
        lam_t = self._lam_t
        lam_t *= 1.0 - rho
        lam_t += rho * (self.topic_word_prior_ + scale * sstats)
        _svi.exp_dirichlet_expectation_t(lam_t, self._exp_elog_beta_t)
        self.n_batch_iter_ += 1

    @staticmethod
    def _kernel_arrays(X):
        return (X.indptr.astype(np.int64), X.indices.astype(np.int32),
                X.data.astype(np.float64))

    # ------------------------------------------------------------------ privacy
    def _fit_generator(self):
        """``(generator, seeded)``: the secret generator of a private model (a seed is the
        labelled test mode); a non-private model uses ``random_state`` as usual."""
        if self._private:
            return private_generator(self.random_state, type(self).__name__)
        return check_random_state(self.random_state), False

    def _calibrate(self, *, q, steps, n_docs, paper_steps=None):
        """Noise multiplier for (target_epsilon, target_delta); q = 1 means no sampling."""
        from ..accounting import calibrate_gaussian, recipes
        eps, delta = float(self.target_epsilon), float(self.target_delta)
        if self.accounting == "rdp":
            return calibrate_gaussian(eps, delta, sampling_probability=q, steps=steps,
                                      method="rdp", discrete=self.mechanism != "gaussian")
        S = min(int(self.batch_size), n_docs)
        J = paper_steps if paper_steps is not None else steps
        return recipes.park2016_noise_multiplier(
            eps, delta, n_docs, S, J * S, _PAPER_COMPOSITION[self.accounting])

    def _set_noise(self, z, base_sensitivity, n_coords, paper_scale=None):
        """Fix the noise from the noise multiplier ``z`` (sigma / recorded sensitivity).

        ``base_sensitivity``: L2 sensitivity of the exact statistic. With the lattice
        mechanism the statistic is rounded to g Z before the noise, which can move
        neighbouring statistics apart by up to g on each of the ``n_coords`` coordinates
        one document touches: the recorded sensitivity is ``base + g sqrt(n_coords)``
        (``lattice_rounding_slack(..., rounded="statistic")``) and sigma is scaled with it,
        so the noise multiplier is unchanged. ``paper_scale``: the paper's recipes
        calibrate sigma / N (their sensitivity N) instead of sigma / base.
        Everything here is a function of public parameters (K, V, N, the target)."""
        ref = base_sensitivity if paper_scale is None else paper_scale
        sigma_c = z * ref                      # the continuous sigma for the exact statistic
        if self.mechanism_ == "lattice_gaussian":
            g = _granularity_with_slack(sigma_c, sigma_c / base_sensitivity, n_coords)
            slack = lattice_rounding_slack(g, int(n_coords), 2, rounded="statistic")
            self.sensitivity_ = base_sensitivity + slack
            self._sigma_draw_ = sigma_c * self.sensitivity_ / base_sensitivity
            self.granularity_ = g
            self.sigma_ = g * discrete_gaussian_parameters(self._sigma_draw_ / g)[3]
        else:
            self.sensitivity_ = base_sensitivity
            self._sigma_draw_ = self.sigma_ = sigma_c
            self.granularity_ = None
        self.noise_multiplier_ = self.sigma_ / self.sensitivity_

    def _leaf(self):
        from ..accounting import GaussianEvent
        return GaussianEvent(self.sigma_, sensitivity=self.sensitivity_,
                             discrete=self.mechanism_ == "lattice_gaussian", label=_STAT_LABEL)

    def _check_target(self, event, what):
        """No silent overshoot: the sound epsilon of the noise used must meet the target."""
        if self.target_epsilon is None:
            return
        from ..accounting import PrivacyReport
        eps = PrivacyReport(event, "document").epsilon(float(self.target_delta))
        if eps > float(self.target_epsilon) * (1 + 1e-9):
            raise ValueError(
                f"accounting={self.accounting!r} with sampling={self.sampling!r} calibrates noise "
                f"whose sound epsilon for {what} is {eps:.4g} at delta={self.target_delta:g}, "
                f"above target_epsilon={self.target_epsilon:g}; use accounting='rdp' (sound "
                "calibration) or give noise_multiplier explicitly")

    def _paper_claim(self, n_docs, steps):
        from ..accounting import PaperClaim
        if self.accounting == "rdp" or self.noise_multiplier_ is None:
            return None
        S = min(int(self.batch_size), n_docs)
        # The paper's sensitivity is N (its eq. 4); its claim is about sigma / N.
        return PaperClaim(_CITATION, "park2016_epsilon", {
            "noise_multiplier": self.sigma_ / self._max_doc_length_, "n_docs": n_docs,
            "batch_size": S, "n_seen": int(steps) * S,
            "composition": _PAPER_COMPOSITION[self.accounting]})

    def _build_report(self, paper_claim, seeded):
        from ..accounting import ComposedEvent, PrivacyReport, SelfComposedEvent
        events = [] if self._fit_event_ is None else [self._fit_event_]
        if self._n_partial_calls_:
            events.append(SelfComposedEvent(self._leaf(), self._n_partial_calls_,
                                            label="partial_fit"))
        event = events[0] if len(events) == 1 else ComposedEvent(events)
        N = self._max_doc_length_
        notes = [f"documents capped at N = {N} tokens by keeping a uniformly random subset of "
                 f"N tokens; L2 sensitivity of one document's statistics <= N"]
        if self.mechanism_ == "lattice_gaussian":
            notes.append(
                f"exact noise: the K x V minibatch sum is rounded to the lattice "
                f"{self.granularity_:.6g} Z and an exact discrete Gaussian on that lattice is "
                f"added to every entry; the rounding is accounted by adding "
                f"g sqrt(n) (n = K x the words one document can touch) to the L2 sensitivity")
        else:
            notes.append("floating-point N(0, sigma^2) noise on every entry of the K x V "
                         "minibatch sum (mechanism='gaussian': not hardened)")
        notes.append("negatives mapped to 0; lambda, topics, transform and perplexity are "
                     "post-processing")
        if self._relation_ == "substitution":
            notes.append("shuffled/sequential fixed-size minibatches: neighbouring corpora of the "
                         "same public size D differ by REPLACING one document (substitution, "
                         "L2 sensitivity sqrt(2) N); no amplification by subsampling is "
                         "claimed; each document is in exactly one minibatch per epoch, so one "
                         "epoch is one Gaussian release (parallel composition)")
        if self._n_partial_calls_:
            notes.append(f"{self._n_partial_calls_} partial_fit call(s), each one minibatch "
                         "chosen by the caller: accounted as one Gaussian release each, "
                         "without amplification")
        if self.accounting != "rdp":
            notes.append(f"sigma calibrated with the paper's recipe accounting={self.accounting!r}; "
                         "the guarantee above is the tight sound value for that sigma")
        if self.target_epsilon is not None:
            notes.append(f"calibrated for target (epsilon={self.target_epsilon:g}, "
                         f"delta={self.target_delta:g}) with accounting={self.accounting!r}")
        n = self.total_samples_
        n = int(n) if float(n).is_integer() else n
        plan = getattr(self, "_plan_", "declared")
        if self._fit_event_ is None:
            first = (f"total_samples = {n:g} (declared: sets the M-step scale "
                     "total_samples / S of every partial_fit call)")
        elif plan == "declared":
            first = (f"total_samples = {n:g} (declared: sets q = S / total_samples, the step "
                     "count and sigma; the number of documents is not used)")
        else:       # "public-rows": the only other plan of a private fit
            first = (f"number of documents D = {n:g} (replace-one adjacency keeps it; sets the "
                     "step count and sigma)")
        public = [first,
                  f"vocabulary size V = {self.n_features_in_} (the vocabulary is not taken "
                  "from the private text)",
                  f"max_doc_length N = {N}"]
        return PrivacyReport(
            event, "document-replace" if self._relation_ == "substitution" else "document",
            description=("variational topic-word parameter lambda of online LDA (VIPS, "
                         "Park et al. 2016 Algorithm 1): Gaussian noise on the minibatch sum of "
                         "expected sufficient statistics at every step"),
            notes=notes, paper_claim=paper_claim,
            default_delta=float(self.target_delta) if self.target_delta is not None else 1e-5,
            seeded=seeded, assumed_public=public)

    def _start_private(self, K, V):
        """Fitted attributes of the noise, fixed for the life of the model (partial_fit
        keeps them): the cap N, the mechanism, the noise, and the per-call counters."""
        self.sigma_ = self.noise_multiplier_ = self.sensitivity_ = self.privacy_ = None
        self.granularity_ = self._sigma_draw_ = None
        self._fit_event_, self._paper_claim_, self._n_partial_calls_ = None, None, 0
        self._max_doc_length_ = (None if self.max_doc_length is None
                                 else int(self.max_doc_length))
        self.mechanism_ = self.mechanism if self._private else None
        if self._private and self.mechanism == "gaussian":
            warnings.warn("mechanism='gaussian' draws floating-point Gaussian noise, whose low "
                          "bits can reveal the statistic (Mironov 2012); the report labels it "
                          "not hardened. The default mechanism='lattice_gaussian' is exact.",
                          NotHardenedWarning, stacklevel=user_stacklevel())

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None):
        """Fit the model to the doc-term count matrix ``X`` (n_docs, n_words) with
        ``max_iter`` passes of minibatch steps.

        Privacy contract: every random choice (initial lambda, truncation, minibatches,
        gamma initialisation, noise) is drawn from one generator obtained once here from
        :func:`dptm.noise.secret.private_generator` (the secret AES-CTR generator unless a seed
        is given: test mode) and dropped on return; nothing that could regenerate it is
        kept. Raises ValueError when the calibrated noise would exceed ``target_epsilon``,
        and, before X is read, for a private ``sampling="poisson"`` fit without
        ``total_samples``.

        Returns
        -------
        self
        """
        from ..accounting import PoissonSampledEvent, SelfComposedEvent
        self._check_params()
        self._check_declared_total()        # before X is read: the refusal depends on no data
        X = check_count_matrix(X, estimator=self, reset=True)
        D, V = X.shape
        K = self.n_components
        S = int(self.batch_size)
        # Under add/remove adjacency D is not public: a private Poisson fit plans with the
        # declared total_samples instead (the replace-one modes keep D, which is public there).
        poisson_private = self._private and self.sampling == "poisson"
        n_plan = float(self.total_samples) if poisson_private else D
        steps_per_epoch = math.ceil(n_plan / S)
        T = int(self.max_iter) * steps_per_epoch
        if T > _MAX_STEPS:      # public inputs only: refusing reveals nothing
            raise ValueError(
                f"max_iter={self.max_iter} passes of ceil({n_plan:g} / batch_size={S}) steps "
                f"make {T:,} minibatch steps, more than {_MAX_STEPS:,}: lower total_samples or "
                "max_iter, or raise batch_size")
        q = min(1.0, S / n_plan)
        n_paper = max(1, math.ceil(n_plan))      # the paper's recipes count whole documents
        # -- noise: a function of public values only (total_samples, V, K, N, S, the target)
        self._start_private(K, V)
        self.total_samples_ = n_plan
        self._plan_ = ("declared" if poisson_private
                       else "public-rows" if self._private else "rows")
        self._relation_ = "add/remove" if self.sampling == "poisson" else "substitution"
        if self._private:
            N = self._max_doc_length_
            if self.sampling == "poisson":
                base, n_coords = float(N), K * min(N, V)
            else:   # one document replaced: the union of two documents' words
                base, n_coords = math.sqrt(2.0) * N, K * min(2 * N, V)
            if self.noise_multiplier is not None:
                z = float(self.noise_multiplier)
            elif self.sampling == "poisson":
                z = self._calibrate(q=q, steps=T, n_docs=n_paper)
            else:
                z = self._calibrate(q=1.0, steps=int(self.max_iter), n_docs=D, paper_steps=T)
            paper = (float(N) if self.noise_multiplier is None and self.accounting != "rdp"
                     else None)
            self._set_noise(z, base, n_coords, paper_scale=paper)
            leaf = self._leaf()
            if self.sampling == "poisson":
                step = PoissonSampledEvent(leaf, q) if q < 1.0 else leaf
                self._fit_event_ = SelfComposedEvent(step, T, label="fit")
            else:
                self._fit_event_ = SelfComposedEvent(leaf, int(self.max_iter), label="fit")
            self._check_target(self._fit_event_, f"{T} steps")
            self._paper_claim_ = self._paper_claim(n_paper, T)
        return self._run_private(self._epochs, X, steps_per_epoch, T, q)

    def _epochs(self, fit, X, steps_per_epoch, T, q):
        """The steps of ``fit``, every random choice (initial lambda, truncation, epoch
        orders, each step's minibatch, gamma initialisation and noise) from a child of
        ``fit.generator``. The online state (lambda, the step counter) lives on the
        estimator, since ``partial_fit`` continues from it; the callback sees it (and the
        topics of the current lambda) after every epoch. Returns the fitted attributes."""
        D, V = X.shape
        S = int(self.batch_size)
        init_rng, trunc_rng, epoch_rng, step_parent = spawn_generators(fit.generator, 5)[:4]
        if self._max_doc_length_ is not None:
            X = truncate_documents(X, self._max_doc_length_, trunc_rng)
        # -- state
        self.n_batch_iter_ = 1
        self.n_iter_ = 0
        self._set_lambda_t(np.asarray(self._init_lambda(init_rng, V), dtype=np.float64).T)
        indptr, indices, counts = self._kernel_arrays(X)
        step_rngs = spawn_generators(step_parent, T)
        t = 0
        for epoch in range(1, int(self.max_iter) + 1):
            if self.sampling == "shuffle":
                order = epoch_rng.permutation(D).astype(np.int64)
            else:
                order = np.arange(D, dtype=np.int64)
            for b in range(steps_per_epoch):
                g = step_rngs[t]
                step_rngs[t] = None
                if self.sampling == "poisson":
                    rows = np.flatnonzero(g.random(D) < q).astype(np.int64)
                    scale = 1.0 / q           # from the public rate, never the realised size
                else:
                    rows = np.ascontiguousarray(order[b * S:(b + 1) * S])
                    scale = D / rows.size     # public: sizes depend on D and S only
                self._step(indptr, indices, counts, rows, scale, g)
                t += 1
            self.n_iter_ = epoch
            # no wall time: how long a private fit takes depends on the private data
            self._progress(epoch, extra=f", {t} steps", unit="epoch")
            if self.callback is not None:
                self._sync_public()
                self.callback(self, epoch)
        fitted = {**self._public_state(), "_seeded_": fit.seeded}
        if self._private:
            fitted["privacy_"] = self._build_report(self._paper_claim_, fit.seeded)
        return fitted

    @private_fit(reset=False)
    def partial_fit(self, X, y=None):
        """One online step with the whole of ``X`` as the minibatch.

        The sum of X's statistics is scaled by ``total_samples / n_rows`` (non-private) or
        ``total_samples / batch_size`` (private: the realised size of X is not released);
        ``total_samples=None`` is 1e6 here.
        Privately, each call is one Gaussian release (sensitivity N: adding or removing one
        document of X), composed into ``privacy_``.

        Privacy contract: the cap ``max_doc_length``, the mechanism and the noise are fixed
        by the first call (or by ``fit``); a later call with another ``max_doc_length``
        raises ValueError. No generator is kept between calls: each call draws from a fresh
        secret generator, or, in test mode (a seed), from the child stream of the seed
        numbered by the call counter, so seeded runs stay reproducible.
        """
        from ..accounting import SelfComposedEvent
        first = not hasattr(self, "_lam_t")
        if first:
            self._check_params()
        elif self.max_doc_length != self._max_doc_length_:
            raise ValueError(
                f"max_doc_length was {self._max_doc_length_} when this model was first fitted "
                f"and is now {self.max_doc_length!r}: the cap is fixed by the first fit (the "
                "sensitivity in privacy_ rests on it); refit from scratch to change it")
        X = check_count_matrix(X, estimator=self, reset=first)
        gen, self._seeded_ = self._fit_generator()
        if self._seeded_:
            # test mode: child of the seed numbered by the call counter (public), disjoint
            # from fit's streams (children 0-3)
            call = 0 if first else self._n_partial_calls_
            g = spawn_generators(spawn_generators(gen, 5)[4], call + 1)[call]
        else:
            g = gen
        if first:
            K, V = self.n_components, X.shape[1]
            self._start_private(K, V)
            self.n_batch_iter_ = 1
            self.n_iter_ = 0
            self.total_samples_ = 1e6 if self.total_samples is None else float(self.total_samples)
            self._plan_ = "declared"
            self._relation_ = "add/remove"
            init_rng, g = spawn_generators(g, 2)
            self.transform_seed_ = public_seed(init_rng, self._seeded_)
            self._set_lambda_t(np.asarray(self._init_lambda(init_rng, V)).T)
            if self._private:
                N = self._max_doc_length_
                if self.noise_multiplier is not None:
                    z = float(self.noise_multiplier)
                else:
                    # The caller picks the minibatches: no amplification (nu = 1).
                    z = self._calibrate(q=1.0, steps=int(self.max_iter),
                                        n_docs=int(self.batch_size))
                self._set_noise(z, float(N), K * min(N, V))
                self._check_target(SelfComposedEvent(self._leaf(), int(self.max_iter)),
                                   f"max_iter={self.max_iter} partial_fit calls")
        if self._max_doc_length_ is not None:
            X = truncate_documents(X, self._max_doc_length_, g)
        indptr, indices, counts = self._kernel_arrays(X)
        rows = np.arange(X.shape[0], dtype=np.int64)
        total = 1e6 if self.total_samples is None else float(self.total_samples)
        if self.sigma_ is None:
            scale = total / X.shape[0]
        else:
            scale = total / int(self.batch_size)
        self._step(indptr, indices, counts, rows, scale, g)
        self._sync_public()
        self._n_partial_calls_ += 1
        if self.sigma_ is not None:
            if (self.target_epsilon is not None and self._fit_event_ is None
                    and self._n_partial_calls_ > int(self.max_iter)):
                warnings.warn(f"partial_fit called {self._n_partial_calls_} times but the noise was "
                              f"calibrated for max_iter={self.max_iter} calls: the target epsilon "
                              "is exceeded (see privacy_)", stacklevel=user_stacklevel())
            self.privacy_ = self._build_report(
                self._paper_claim_ if self._fit_event_ is not None else None, self._seeded_)
        return self

    # ------------------------------------------------------------------ inference
    def _e_step_gamma(self, X, word_bound=None):
        indptr, indices, counts = self._kernel_arrays(X)
        gamma = np.ones((X.shape[0], self.n_components), dtype=np.float64)
        _svi.lda_e_step(indptr, indices, counts, np.arange(X.shape[0], dtype=np.int64),
                        self._exp_elog_beta_t, gamma, self.doc_topic_prior_,
                        float(self.mean_change_tol), int(self.max_doc_update_iter), None,
                        word_bound, effective_n_jobs(self.n_jobs))
        return gamma

    def _check_fitted_input(self, X):
        check_is_fitted(self, "components_")
        return check_count_matrix(X, estimator=self, reset=False)

    def transform(self, X):
        """Document-topic distributions of ``X``: the E-step with lambda fixed, gamma
        started at 1 (deterministic, as scikit-learn), normalised to rows summing to 1.

        Returns
        -------
        ndarray of shape (n_docs, n_components)
        """
        X = self._check_fitted_input(X)
        gamma = self._e_step_gamma(X)
        return gamma / gamma.sum(axis=1, keepdims=True)

    def score(self, X, y=None):
        """Variational lower bound of log p(X | lambda): the sum over documents of
        E_q[log p(n_d, theta_d, z_d | lambda)] - E_q[log q(theta_d, z_d)], with q from the
        E-step (Park et al. 2016 Section 4). Higher is better."""
        X = self._check_fitted_input(X)
        word_bound = np.zeros(X.shape[0], dtype=np.float64)
        gamma = self._e_step_gamma(X, word_bound)
        alpha, K = self.doc_topic_prior_, self.n_components
        elog_theta = psi(gamma) - psi(gamma.sum(axis=1, keepdims=True))
        bound = word_bound.sum()
        bound += np.sum((alpha - gamma) * elog_theta)
        bound += np.sum(gammaln(gamma) - gammaln(alpha))
        bound += np.sum(gammaln(alpha * K) - gammaln(gamma.sum(axis=1)))
        return float(bound)

    def perplexity(self, X):
        """Per-token variational perplexity bound ``exp(-score(X) / n_tokens)``
        (natural log; an upper bound on the held-out perplexity). Lower is better.

        Relation to scikit-learn: its ``perplexity`` also adds
        E_q[log p(beta | eta) - log q(beta | lambda)] to the bound; see the class Notes.
        """
        X = self._check_fitted_input(X)
        return float(np.exp(-self.score(X) / X.sum()))

    def fit_transform(self, X, y=None):
        """Fit, then return ``transform(X)``."""
        return self.fit(X).transform(X)
