"""Model-agnostic output perturbation: TopicDP (Wang et al. 2022).

TopicDP fits any topic model once, estimates how far its topic-word matrix moves when one
user's documents are removed (*sensitivity sampling*, Rubinstein & Alda 2017, as adapted in
Wang et al. 2022 Algorithm 1), and releases the matrix with Gaussian noise calibrated to that
sampled sensitivity (Algorithm 2). The guarantee is (epsilon, delta, gamma)-*random* DP:
(epsilon, delta)-DP that holds with probability >= 1 - gamma over the draw of neighbouring
data sets - weaker than DP, and stated as such in ``privacy_``.

The building blocks are public functions (in :mod:`dptm.models.topicdp_sensitivity` and
:mod:`dptm.models.topicdp_calibration`, re-exported here) so that benches can reuse one set
of refits for many (epsilon, gamma, size) settings: :func:`sensitivity_sample_size`,
:func:`topic_word_matrix`, :func:`aligned_frobenius`, :func:`sample_sensitivities`,
:func:`gaussian_sigma`, :func:`mvg_sigma`.
"""
import math
import warnings
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .. import _progress
from .._utils import check_count_matrix, check_int, check_positive, check_probability
from ..accounting import ApproxDPEvent
from ..noise.releases import (GaussianRelease, LaplaceRelease, LatticeGaussianRelease,
                              LatticeLaplaceRelease)
from ..noise.secret import public_seed
from ._base import FitScopeMixin
from ._private_base import PrivateModelMixin
from .topicdp_calibration import (  # noqa: F401  (public names, re-exported)
    _CALIBRATIONS, _lattice_gaussian_calibration, _lattice_laplace_granularity, gaussian_sigma,
    laplace_scale, mvg_sigma, rounding_slack)
from .topicdp_sensitivity import (  # noqa: F401
    _BlockDistance, _FullDistance, _fit_topic_word, _group_index, _normalise_rows,
    aligned_frobenius, block_distance,
    keyword_block, sample_sensitivities, sensitivity_sample_size, topic_weights,
    topic_word_matrix)

__all__ = [
    "TopicDP", "sensitivity_sample_size", "topic_word_matrix", "topic_weights",
    "aligned_frobenius", "keyword_block", "block_distance", "sample_sensitivities",
    "gaussian_sigma", "mvg_sigma", "laplace_scale", "rounding_slack",
]

_MECHANISMS = ("gaussian", "laplace", "mvg", "gaussian-float", "laplace-float")
_RELEASES = ("full", "keywords")
_REFIT_SEEDS = ("independent", "shared")


# --------------------------------------------------------------------------------------
# The estimator
# --------------------------------------------------------------------------------------
_SENSITIVITY_HELP = (
    "TopicDP needs a sensitivity that does not depend on the private data: pass "
    "sensitivity=<a public bound> (a float: the largest aligned Frobenius change of the "
    "released matrix when one user is removed), or reference_X=<a public reference corpus with "
    "the same columns> to sample the sensitivity on public data (Wang et al. 2022 Algorithm 1 "
    "run offline). sensitivity='sample-private' reproduces the paper, which samples it on the "
    "private data: the noise scale then depends on the private data and the release is NOT DP")


class TopicDP(PrivateModelMixin, FitScopeMixin, BaseEstimator):
    """Model-agnostic differentially private topic release (TopicDP, Wang et al. 2022).

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
        ``"renyi"``: the paper's single-order route (Wang et al. 2022 Sec. 3.4).
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
        User of each reference document (public); each document is a user when None. It
        sets the unit the sensitivity is measured on, so it goes with ``fit(X, groups=...)``:
        ``groups`` without ``reference_groups`` (or the converse) is refused, since the noise
        would then be calibrated to another unit than the report states.
    max_refits : int, default=2000
        Work-size guard: ``fit`` refuses to start more refits than this (gamma = 0.001 would
        need 5,486,187). Raise it deliberately for small gamma.
    n_jobs : int, optional
        joblib workers for the refits; the output does not depend on it.
    random_state : None, int, SeedSequence or numpy.random.Generator
        None (default): the noise, the permutation of the rows and the refit subsets come
        from the secret generator (:func:`dptm.noise.secret.private_generator`). Anything else
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
    with ``groups=None`` each document is a user and the report says ``document``. With ``sensitivity=<bound>`` the release
    is (epsilon, delta)-DP for every pair of neighbours whose aligned Frobenius change is
    within the bound (the bound is the caller's claim, not checked). With ``reference_X``
    it is (epsilon, delta, gamma)-random DP for neighbours drawn from the reference
    corpus, which stands in for the private data (Wang et al. 2022 Def. 4, Theorem 1): one
    reference user removed with ``groups`` and ``reference_groups``, one reference document
    with neither (a mix is refused); the
    noise scale is a function of public data only. With ``"sample-private"`` the noise
    scale depends on the private data: not DP, and Delta_s is revealed. The vocabulary
    (the column labels) is treated as public. The released rows are in a uniformly random
    order. Released: ``release()`` - the noisy matrix, the report, public hyperparameters.
    The base fit on the private data is silent (its warnings, e.g. whether it converged,
    differ between neighbours); check the base model's convergence on public data.

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
        if self.reference_groups is not None and self.reference_X is None:
            raise ValueError("reference_groups names the user of each reference_X document; "
                             "without reference_X it would be ignored: drop reference_groups or "
                             "pass reference_X")
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

    def _check_units(self, groups):
        """With ``reference_X`` the noise is calibrated to the change of removing one
        reference unit: a user (``reference_groups``) or a document. The unit asked for on
        the private data (``groups``: users, None: documents) must be that unit, or the
        report would claim a unit the sensitivity was not measured on."""
        if groups is not None and self.reference_groups is None:
            raise ValueError(
                "groups= asks for user-level privacy, but reference_groups=None: the "
                "sensitivity would be sampled by removing one reference DOCUMENT, which "
                "protects a document, not a user. Pass reference_groups=<the user of each "
                "reference_X document> (public), or fit without groups for document-level "
                "privacy")
        if groups is None and self.reference_groups is not None:
            raise ValueError(
                "reference_groups= samples the sensitivity by removing a whole reference user, "
                "but groups=None asks for document-level privacy on X: pass groups=<the user "
                "of each document of X> for user-level privacy, or drop reference_groups")

    def _refits(self, gamma):
        h, k, rho = sensitivity_sample_size(gamma)
        cap = check_int(self.max_refits, "max_refits", minimum=1)
        if h > cap:
            raise ValueError(
                f"gamma={gamma:g} needs h={h:,} refits of the model for sensitivity sampling "
                f"(Wang et al. 2022 Algorithm 1), more than max_refits={cap:,}. Use a larger gamma "
                "(0.1 needs 285 refits, 0.05 needs 1,305), pass a public sensitivity bound "
                "(sensitivity=...), or raise max_refits if you mean it")
        return h, k, rho

    # -- fit -------------------------------------------------------------------------
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

        from ..exceptions import NotHardenedWarning, user_stacklevel

        base, source = self._check_params()
        X = self._check_X(X)
        gidx, n_users = _group_index(groups, X.shape[0])
        ref = None
        if source == "reference":
            self._check_units(groups)
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

        return self._run_private(self._release, X, groups, base, source, gidx, ref,
                                 ref_gidx if source == "reference" else None, h, k, rho)

    def _release(self, fit, X, groups, base, source, gidx, ref, ref_gidx, h, k, rho):
        """The fit of the wrapped model, the sensitivity and the noisy topics, from
        ``fit.generator`` (after the transform seed: the wrapped fit's seed, then a child
        for the sensitivity sampling and one for the noise). Returns the fitted
        attributes."""
        fit_seed = public_seed(fit.generator, fit.seeded)
        sample_gen, noise_gen = fit.generator.spawn(2)

        self._log("fitting %s on the data", type(base).__name__)
        with warnings.catch_warnings():
            # the base fit reads the private data: whether it warns (NMF's or LDA's
            # ConvergenceWarning, an overflow) differs between neighbours, so it is silent
            warnings.simplefilter("ignore")
            W, est = _fit_topic_word(base, X, None, fit_seed)
        if "random_state" in est.get_params(deep=False):   # keep no derived seed
            est.set_params(random_state=base.get_params(deep=False)["random_state"])
        weights = topic_weights(est)
        if self.output == "full":
            rows_ref = W
        else:
            topics, word_ids, rows_ref = keyword_block(W, weights, self.n_top_topics,
                                                       self.n_top_words)
        m = rows_ref.shape[0]
        n_coords = int(rows_ref.size)

        f = {"estimator_": est, "n_samples_": h, "order_statistic_": k, "rho_": rho,
             "sensitivity_samples_": None, "sensitivity_source_": source,
             "reference_shape_": None if ref is None else tuple(ref.shape),
             # users of the reference corpus (public); None: each document its own user
             "_reference_users": (None if ref_gidx is None or self.reference_groups is None
                                  else int(ref_gidx.max()) + 1)}
        if source is None:
            f["sensitivity_"] = None
        elif source == "given":
            f["sensitivity_"] = float(self.sensitivity)
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
            f["sensitivity_samples_"] = np.sort(d)
            # A zero sampled sensitivity (a data-independent model) is floored so that
            # the lattice stays representable; stated in the report.
            f["sensitivity_"] = max(float(f["sensitivity_samples_"][k - 1]), 1e-9)

        # noise scale and the release
        f["eps_renyi_"] = None
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
            sens = f["sensitivity_"]
            if self.mechanism == "mvg":
                def sigma_of(s):
                    return mvg_sigma(rows_ref.shape, s, self._epsilon, self._delta)
            else:
                def sigma_of(s):
                    sig, f["eps_renyi_"] = gaussian_sigma(s, self._epsilon, self._delta,
                                                          self.calibration, self.renyi_order)
                    return sig
            if exact:
                scale, g, total = _lattice_gaussian_calibration(sens, sigma_of, n_coords)
            else:
                scale, total = sigma_of(sens), sens
            kind = "gaussian"
        perm = noise_gen.permutation(m)
        x = rows_ref[perm]
        # The event is the release's: the effective scale of the sampler and the
        # sensitivity including the lattice's rounding slack.
        if kind == "laplace":
            label = ("TopicDP Laplace baseline (global L1 sensitivity 2m"
                     + (" + lattice rounding)" if exact else ")"))
            release = (LatticeLaplaceRelease(scale, total, g, label=label) if exact
                       else LaplaceRelease(scale, total, label=label))
        else:
            label = "TopicDP output noise"
            release = (LatticeGaussianRelease(scale, total, g, label=label) if exact
                       else GaussianRelease(scale, total, label=label))
        noisy = release.draw(x, noise_gen)
        g, event = release.granularity_, release.event
        scale = event.scale if kind == "laplace" else event.sigma
        if self.mechanism == "mvg":      # accounted by the MVG theorem, not as a Gaussian
            event = ApproxDPEvent(self._epsilon, self._delta,
                                  label="MVG mechanism (Chanyaswad et al. 2018, Thm. 3)")
        f.update(noise_scale_=float(scale), lattice_granularity_=g,
                 _total_sensitivity=float(total))
        clamped = np.maximum(noisy, 0.0)
        if self.output == "full":
            f.update(keyword_ids_=None, keyword_weights_=None, components_=clamped,
                     topic_word_=_normalise_rows(clamped))
        else:
            ids = word_ids[perm]
            full = np.zeros((m, W.shape[1]))
            np.put_along_axis(full, ids, clamped, axis=1)
            tw = _normalise_rows(full)
            for i in np.flatnonzero(clamped.sum(axis=1) <= 0):  # uniform over its keywords
                tw[i] = 0.0
                tw[i, ids[i]] = 1.0 / ids.shape[1]
            f.update(keyword_ids_=ids, keyword_weights_=clamped, components_=full,
                     topic_word_=tw)
        f.update(n_components_=m, n_features_in_=X.shape[1])
        f["privacy_"] = self._report(fit, f, event, m, X.shape[1], groups is None)
        return f


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

    def _report(self, fit, fitted, event, m, V, per_document):
        """The privacy report of the release ``event``; ``fitted``: the fitted attributes."""
        a = SimpleNamespace(**fitted)
        what = (f"noisy {m} x {V} topic-word matrix (all entries), negatives clamped, rows "
                "re-normalised, rows in random order" if self.output == "full" else
                f"noisy {m} x {a.keyword_weights_.shape[1]} keyword-probability block "
                "(top topics x top words); word ids released without protection")
        notes, gamma = [], None
        source = a.sensitivity_source_
        if source == "sample-private":
            what = "PAPER MODE, NOT DP: " + what
            notes.append(
                "PAPER MODE (sensitivity='sample-private', Wang et al. 2022): noise scale depends "
                "on the private data: not DP; Delta_s is revealed (by this report and "
                "statistically by the noisy matrix). Pass reference_X or a sensitivity bound for "
                "a guarantee")
        if per_document:
            notes.append("no user ids given: every document is its own user (document-level)")
        if self.mechanism.startswith("laplace"):
            notes.append("Laplace baseline (Wang et al. 2022 Sec. 4.2): L1 sensitivity 2m assumes "
                         "every released row is a probability vector over public columns; pure "
                         "epsilon-DP, no sensitivity sampling")
        else:
            if source == "given":
                notes.append(
                    f"sensitivity bound Delta = {a.sensitivity_:.6g} given by the caller "
                    "(sensitivity=...), treated as public: the guarantee holds for neighbours "
                    "whose aligned Frobenius change of the released matrix is within it (not "
                    "checked here); if the bound was itself sampled, the guarantee is only the "
                    "random DP of that sampling")
            else:
                gamma = self._gamma
                # the unit the distances were measured on (the private user count is
                # not stated: it is not public)
                if source == "reference":
                    where = ("the public reference corpus (reference_X, "
                             f"{a.reference_shape_[0]} documents)")
                    unit = ("document" if a._reference_users is None else
                            f"user ({a._reference_users} users given by reference_groups)")
                else:
                    where = "the private data"
                    unit = "document" if per_document else "user (given by groups)"
                notes.append(
                    f"(epsilon={self._epsilon:g}, delta={self._delta:g}, gamma={self._gamma:g})"
                    "-random DP, NOT DP: the (epsilon, delta) bound holds with probability >= "
                    f"1 - gamma over neighbours drawn by removing one uniformly random {unit} of "
                    f"{where} (Wang et al. 2022 Def. 4, Theorem 1)")
                notes.append(
                    f"sampled sensitivity Delta_s = {a.sensitivity_:.6g}: the k="
                    f"{a.order_statistic_}-th smallest of h={a.n_samples_} aligned "
                    f"Frobenius distances (rho={a.rho_:.4g}), refit_seed={self.refit_seed!r}"
                    " (floored at 1e-9)")
                if source == "reference":
                    notes.append("the reference corpus stands in for the private data: the "
                                 "random-DP statement transfers to the private data only as far "
                                 "as its users resemble the reference corpus's (not checked)")
            if self.mechanism == "mvg":
                notes.append(f"MVG per-entry std {a.noise_scale_:.6g} from Chanyaswad et al. "
                             "2018 Theorem 3 with isotropic covariances (taken as stated)")
            elif self.calibration == "renyi":
                notes.append(
                    f"calibrated through ({self.renyi_order:g}, eps_R={a.eps_renyi_:.6g})-RDP "
                    "(Wang et al. 2022 Prop. 2, Theorem 2)")
            else:
                notes.append("calibrated with the tight RDP Gaussian calibration")
        if a.lattice_granularity_ is not None:
            norm = "L1" if self.mechanism.startswith("laplace") else "L2"
            notes.append(
                f"exact noise on the lattice g Z, g = 2^{int(math.log2(a.lattice_granularity_))}"
                f": the released values are exact multiples of g; the recorded {norm} "
                f"sensitivity {a._total_sensitivity:.6g} includes the rounding slack of the "
                "released coordinates")
        if self.output == "keywords":
            notes.append("the keyword ids (which words are shown for each topic) are selected "
                         "from the non-private model and are NOT covered by this guarantee")
        public = [f"vocabulary (V = {V} words, the column labels)"]
        if a.reference_shape_ is not None:
            public.append(f"reference corpus for sensitivity sampling (reference_X: "
                          f"{a.reference_shape_[0]} documents)")
            if a._reference_users is not None:
                public.append(f"its users (reference_groups: {a._reference_users} users)")
        # the unit the noise was calibrated to: the headline must not claim a user's documents
        return fit.report(event, "document" if per_document else "user",
                          description=f"TopicDP: {what}", notes=notes,
                          gamma=gamma, default_delta=self._delta, assumed_public=public,
                          vocabulary="public (given)")

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
