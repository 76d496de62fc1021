"""SUB-LDA: word-level private Gibbs sampling on Poisson-subsampled tokens (Huang et al. 2022,
Algorithm 1), with optional adaptive subsampling (eq. 10) and the perplexity-difference
stopping rule (eq. 9).

The snapshot, the sweep, the visiting order, the secret streams and the release are those of
:class:`dptm.models.private_gibbs.NoisyGibbsLDA` (``_SnapshotGibbsBase``, ``_Noise``; see that
module's docstring for the release semantics and the per-sweep bound eps_I); this module holds
only what SUB-LDA adds: the token subsampling, its accounting and the stopping rule.
"""
import copy
import math

import numpy as np

from .._utils import check_int, check_positive, check_probability
from ..accounting import (ApproxDPEvent, ComposedEvent, GatedEvent, PaperClaim, PureDPEvent,
                          SelfComposedEvent, epsilon as _epsilon, recipes)
from ._base import store_params
from .private_gibbs import (_SAMPLING_LABEL, _Noise, _SnapshotGibbsBase, _SnapshotPlan, _bisect,
                            inherent_epsilon)

__all__ = ["SubsampledGibbsLDA"]


class _StoppingRule:
    """Huang et al. 2022 eq. (9): stop once |per_i - per_{i-1}| <= ``convergence_tol`` for
    ``convergence_window`` consecutive iterations, per_i the perplexity of the held-out
    ``eval_X`` under the iteration's snapshot topics, set on ``model`` (the estimator, or a
    copy of it). ``history``: the per_i so far."""

    def __init__(self, est, model, eval_X):
        self.tol, self.window = est.convergence_tol, est.convergence_window
        self.model, self.eval_X = model, eval_X
        self.history, self.below = [], 0

    def __call__(self, s):
        self.model._set_topics(np.maximum(s, 0.0).T + self.model.topic_word_prior_)
        per = self.model.perplexity(self.eval_X)
        if self.history and abs(per - self.history[-1]) <= self.tol:
            self.below += 1
        else:
            self.below = 0
        self.history.append(per)
        return self.below >= self.window


class SubsampledGibbsLDA(_SnapshotGibbsBase):
    """SUB-LDA: noisy-snapshot Gibbs sampling on Poisson-subsampled tokens
    (Huang et al. 2022, Algorithm 1).

    Each iteration draws a Gaussian snapshot of the topic-word counts (as
    :class:`NoisyGibbsLDA`), then resamples each token independently with probability
    ``sample_rate`` (gamma) - or, with ``adaptive=True``, with probability v gamma if its
    word is among the frequent words of its current topic in the *noisy snapshot* and 0
    otherwise (eq. 10; the frequent set of topic k is the smallest set of top words holding
    a fraction q of the clamped snapshot mass of k).

    Parameters
    ----------
    n_components : int, default=10
    sample_rate : float in (0, 1], default=0.5
        Poisson sampling probability gamma of each token per sweep.
    noise_multiplier : float, default=1.0
        sigma = noise_multiplier * sqrt(2) (sqrt 2: L2 sensitivity of a word replacement).
        Ignored when ``target_epsilon`` is set.
    target_epsilon : float, default=None
        Calibrate the noise so that ``max_iter`` iterations meet (target_epsilon,
        target_delta) by the sound accounting (``privacy_.epsilon()``), whatever
        ``accounting`` says; raises with the smallest reachable total if no noise level
        meets it (e.g. adaptive subsampling, whose sound epsilon is infinite).
    target_delta : float, default=1e-5
    clip : float, default=None
        Clipping bound C (None: C = N, no effective clipping).
    mechanism : {'discrete_gaussian', 'gaussian'}, default='discrete_gaussian'
        'discrete_gaussian': exact integer noise (every snapshot value an integer).
        'gaussian': floating-point sampler, not hardened (``NotHardenedWarning``).
    adaptive : bool, default=False
        Adaptive subsampling (eq. 10) with ``adaptive_v`` (1 < v < 1/gamma) and
        ``adaptive_q`` (0 < q < 1). Only with ``accounting='paper'``: its sound guarantee is
        vacuous (see Privacy) and is reported as such.
    adaptive_v, adaptive_q : float, default=None
    convergence_tol : float, default=None
        D-hat of the stopping rule eq. (9): stop once |per_i - per_{i-1}| <= D-hat for
        ``convergence_window`` consecutive iterations, per_i the perplexity of ``eval_X``
        (passed to ``fit``) under the iteration's snapshot topics. Needs ``eval_X``.
        Privacy is accounted for ``max_iter`` iterations whenever the rule stops earlier.
    convergence_window : int, default=3
        s + 1 in eq. (9).
    accounting : {'sound', 'paper'}, default='sound'
        ``privacy_.epsilon()``, the printed guarantee and ``target_epsilon`` always use the
        sound accounting: the snapshot release is not amplified (it depends on every
        token); each sampling step costs eps_I, amplified in Renyi DP by the token
        subsampling. Huang et al. 2022's own figure (Iter x eps_subsample(alpha): the
        subsampled Gaussian with unit sensitivity, no cost for the sampling steps; not
        sound) is available in both modes as ``privacy_.paper_epsilon()`` and printed
        labelled as the paper's. 'paper' additionally allows ``adaptive=True``.
    rdp_order : int, default=14
        Order alpha of the paper's eps_subsample(alpha) and efficiency-privacy function I.
    doc_topic_prior, topic_word_prior, max_iter, transform_max_iter, record_trace
        As in :class:`NoisyGibbsLDA`.
    trace_tokens, random_state, n_jobs, verbose, callback
        As in :class:`NoisyGibbsLDA`.

    Attributes
    ----------
    components_, topic_word_, snapshot_, doc_topic_, clip_, epsilon_inherent_, trace_, n_iter_
        As in :class:`NoisyGibbsLDA`.
    noise_scale_ : float
        Gaussian sigma drawn.
    perplexity_history_ : list of float
        per_i of the stopping rule (empty without ``convergence_tol``).
    eps_subsample_ : float
        The paper's per-iteration RDP eps_subsample(alpha) (eq. 3, unit sensitivity).
    efficiency_privacy_ : float
        The paper's I = gamma exp((alpha - 1) eps_subsample(alpha)) (eq. 6).
    privacy_ : dptm.accounting.PrivacyReport

    Privacy
    -------
    Word-level adjacency (one token's word replaced, over a public vocabulary: see
    :class:`NoisyGibbsLDA`). Released and accounted, per
    iteration: the Gaussian snapshot (sigma, L2 sensitivity sqrt 2) and the sweep's topic
    assignments; ``components_`` is post-processing of the last snapshot. 'sound'
    accounting: the snapshot is computed from every token, sampled or not, so its release
    is *not* amplified by the token subsampling. The sampling step of the replaced token is
    eps_I = 2 log(C/beta + 1)-DP when the token is resampled; with probability 1 - gamma it
    keeps its topic, which is the same on both neighbours given the past (the other tokens'
    conditionals do not involve the replaced word). A move is only reachable by resampling,
    so the pure epsilon stays eps_I, but the Renyi divergence is amplified by joint
    convexity: log(1 - gamma + gamma exp((alpha - 1) eps_I(alpha))) / (alpha - 1) per sweep,
    eps_I(alpha) the tight RDP of an eps_I-DP mechanism
    (:class:`dptm.accounting.GatedEvent`). Adaptive subsampling: the replaced token's
    sampling probability (0 or v gamma) depends on its word, and a move reveals which; one
    sweep is then only (max(eps_I, log 1/(1 - v gamma)), v gamma)-DP, so the report's
    epsilon at any useful delta is infinite (only with ``accounting='paper'``, whose
    labelled figure is the paper's). The number of resampled tokens is not exposed (it
    depends on the secret selection, and with adaptive subsampling on the words). The
    stopping rule evaluates the perplexity of ``eval_X``, which must not be part of the
    private corpus, under privatized topics: post-processing; the accounting charges
    ``max_iter`` iterations all the same.
    """

    def __init__(self, n_components=10, *, sample_rate=0.5, noise_multiplier=1.0,
                 target_epsilon=None, target_delta=1e-5, clip=None,
                 mechanism="discrete_gaussian", adaptive=False, adaptive_v=None, adaptive_q=None,
                 convergence_tol=None,
                 convergence_window=3, accounting="sound", rdp_order=14,
                 doc_topic_prior=None, topic_word_prior=None, max_iter=100,
                 transform_max_iter=50, record_trace=False, trace_tokens=None,
                 random_state=None, n_jobs=None, verbose=0, callback=None):
        store_params(self, locals())

    def _check_params(self, eval_X):
        gamma = check_probability(self.sample_rate, "sample_rate")
        if self.mechanism not in ("gaussian", "discrete_gaussian"):
            raise ValueError("mechanism must be 'gaussian' or 'discrete_gaussian', "
                             f"got {self.mechanism!r}")
        if self.accounting not in ("sound", "paper"):
            raise ValueError(f"accounting must be 'sound' or 'paper', got {self.accounting!r}")
        delta = check_probability(self.target_delta, "target_delta", high_open=True)
        if self.target_epsilon is not None:
            check_positive(self.target_epsilon, "target_epsilon")
        else:
            check_positive(self.noise_multiplier, "noise_multiplier")
        check_int(self.rdp_order, "rdp_order", minimum=2)
        if not isinstance(self.adaptive, (bool, np.bool_)):
            raise TypeError(f"adaptive must be a bool, got {type(self.adaptive).__name__}")
        if self.adaptive:
            if self.accounting == "sound":
                raise ValueError(
                    "adaptive subsampling has no finite word-level guarantee (the replaced "
                    "token's sampling rate, 0 or v*gamma, depends on its word and a move reveals "
                    "it); use accounting='paper' to run it with Huang et al. 2022's accounting")
            if self.adaptive_v is None or self.adaptive_q is None:
                raise ValueError("adaptive=True needs adaptive_v and adaptive_q")
            v = check_positive(self.adaptive_v, "adaptive_v")
            if not 1.0 < v < 1.0 / gamma:
                raise ValueError(f"adaptive_v must be in (1, 1/sample_rate) = (1, {1 / gamma:.6g}), "
                                 f"got {v}")
            q = check_probability(self.adaptive_q, "adaptive_q", high_open=True)
        else:
            v = q = None
        if self.convergence_tol is not None:
            check_positive(self.convergence_tol, "convergence_tol")
            check_int(self.convergence_window, "convergence_window", minimum=1)
            if eval_X is None:
                raise ValueError("convergence_tol needs eval_X in fit(X, eval_X=...): held-out "
                                 "documents that are not part of the private corpus")
        return gamma, delta, v, q

    def _events(self, noise, eps_i, gamma, T, v=None):
        """The sound event tree of ``T`` iterations (whatever ``accounting`` says)."""
        sampling = PureDPEvent(eps_i, label=_SAMPLING_LABEL)
        if self.adaptive:
            # rate v gamma or 0 by (word, topic): with rates differing on the neighbours a
            # move has probability <= v gamma on one and 0 on the other
            vg = v * gamma
            sampling = ApproxDPEvent(max(eps_i, -math.log1p(-vg)), vg,
                                     label=_SAMPLING_LABEL + ", adaptive rate 0 or v gamma "
                                     "depending on the token's word")
        elif gamma < 1.0:
            sampling = GatedEvent(sampling, gamma, label=_SAMPLING_LABEL + ", token resampled "
                                  "with probability gamma, else its topic is kept")
        return SelfComposedEvent(ComposedEvent((noise.event, sampling)), T)

    def _make_noise(self, eps_i, gamma, T, delta, v):
        if self.target_epsilon is None:
            return _Noise(self.mechanism, noise_multiplier=float(self.noise_multiplier))
        target = float(self.target_epsilon)

        def total(inv_z):
            try:
                return _epsilon(self._events(_Noise(self.mechanism, noise_multiplier=1.0 / inv_z),
                                             eps_i, gamma, T, v), delta)
            except ValueError:         # no accountant bounds it (adaptive): no guarantee
                return math.inf

        lo = 1e-4                      # sigma <= 14142: inside the exact sampler's range
        if not total(lo) <= target:
            raise ValueError(
                f"target_epsilon={target} cannot be met: the smallest reachable total is "
                f"{total(lo):.6g} at delta={delta:g} (the sampling steps cost eps_I={eps_i:.4g} "
                f"per sweep over {T} iterations"
                + ("; adaptive subsampling has no finite sound guarantee" if self.adaptive else "")
                + "): increase target_epsilon or topic_word_prior, or lower clip or max_iter")
        return _Noise(self.mechanism, noise_multiplier=1.0 / _bisect(lambda x: total(x) <= target,
                                                                     lo, 1e3))

    def _adaptive_table(self, s, gamma, v, q):
        """rate[w, k] = v gamma if w is a frequent word of topic k in the clamped snapshot."""
        pos = np.maximum(s, 0.0)
        order = np.argsort(-pos, axis=0, kind="stable")
        sorted_mass = np.take_along_axis(pos, order, axis=0)
        cum = np.cumsum(sorted_mass, axis=0)
        need = q * cum[-1]
        # number of top words needed to reach q N_k (at least one)
        n_freq = np.minimum((cum < need[None, :]).sum(axis=0) + 1, s.shape[0])
        table = np.zeros_like(s)
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(s.shape[0])[:, None], axis=0)
        table[rank < n_freq[None, :]] = v * gamma
        return table

    def fit(self, X, y=None, eval_X=None):
        """Fit to ``X``; ``eval_X`` (held-out, non-private documents) is only used by the
        stopping rule."""
        checked = self._check_params(eval_X)
        return self._run_private(self._sample, self._check_data(X), checked, eval_X)

    def _plan_fit(self, fit, shape, clip, clipped, checked, eval_X=None):
        """The noise of this fit (calibrated on the public N, clip and beta), the token
        subsampling, the stopping rule and the accounting."""
        gamma, delta, v, q = checked
        T, beta = self.max_iter, self.topic_word_prior_   # accounted, even if stopped earlier
        eps_i = inherent_epsilon(clip, beta)
        # the paper's accounting amplifies at the largest per-token rate: v gamma if adaptive
        paper_rate = v * gamma if self.adaptive else gamma
        noise = self._make_noise(eps_i, gamma, T, delta, v)
        alpha_r = int(self.rdp_order)
        eps_sub = recipes.huang2022_eps_subsample(alpha_r, gamma, noise.sigma)
        try:
            eff = recipes.huang2022_efficiency_privacy(alpha_r, gamma, noise.sigma)
        except OverflowError:          # I = gamma exp((alpha - 1) eps) past the float range
            eff = math.inf
        rule = None
        if self.convergence_tol is not None:
            probe = copy.copy(self)    # the rule's perplexity, off the estimator
            probe.transform_seed_ = fit.transform_seed
            rule = _StoppingRule(self, probe, eval_X)
        fitted = {"_paper_rate": paper_rate, "noise_scale_": noise.sigma, "epsilon_inherent_": eps_i,
                  "eps_subsample_": eps_sub, "efficiency_privacy_": eff,
                  "perplexity_history_": [] if rule is None else rule.history}
        # snapshots read by nothing but the sweep (not traced, not the stopping rule's or
        # the adaptive table's, not the last) may keep int32 clipped counts instead
        return _SnapshotPlan(
            noise, lambda fitted: self._report(fit, fitted, noise, eps_i, gamma, clipped, delta,
                                               v, q),
            fitted, rate=gamma, recount=True,   # a snapshot each sweep
            keep_clipped=self.convergence_tol is None and not self.adaptive,
            table=(lambda s: self._adaptive_table(s, gamma, v, q)) if self.adaptive else None,
            stop=rule, ledger=fit.ledger)

    def _report(self, fit, fitted, noise, eps_i, gamma, clipped, delta, v, q):
        T, beta, alpha_r = self.max_iter, self.topic_word_prior_, int(self.rdp_order)
        clip, eff, eps_sub = (fitted["clip_"], fitted["efficiency_privacy_"],
                              fitted["eps_subsample_"])
        paper = PaperClaim("Huang et al. 2022 Algorithm 1 / Table 3 (Iter x eps_subsample(alpha), "
                           f"RDP at alpha={alpha_r}, converted with eps + log(1/delta)/(alpha-1)); "
                           "NOT sound: it amplifies the snapshot release by the token subsampling "
                           "although the snapshot depends on every token, assumes unit L2 "
                           "sensitivity (a word replacement has sqrt 2) and does not charge the "
                           "sampling steps",
                           "huang2022_epsilon",
                           {"alpha": alpha_r, "gamma": fitted["_paper_rate"], "iterations": T,
                            "sigma": noise.sigma})
        rate = (f"adaptive rate v*gamma={v * gamma:.6g} on the frequent words (q={q:.6g}) of the noisy "
                "snapshot, 0 elsewhere" if self.adaptive else f"sampling rate gamma={gamma:.6g}")
        notes = [f"clip C = {clip:.6g}" + ("" if clipped else " (none requested: C = N)")
                 + f", beta = {beta:.6g}: eps_I = {eps_i:.6g} per sweep",
                 f"Huang et al. 2022 efficiency-privacy I = gamma exp((alpha-1) eps_subsample(alpha)) "
                 f"= {eff:.6g} at alpha = {alpha_r} (eps_subsample = "
                 f"{eps_sub:.6g})"]
        description = (f"SubsampledGibbsLDA ({rate}), {T} iterations; released: the noisy "
                       "snapshots, the topic assignments of every sweep and the topic-word "
                       "matrix from the last snapshot; the snapshot release is not amplified")
        if self.adaptive:
            notes.append("adaptive subsampling: the replaced token is resampled with rate 0 or "
                         "v gamma depending on its word, so a sweep is only (max(eps_I, "
                         "log 1/(1 - v gamma)), v gamma)-DP: no finite epsilon at a useful delta. "
                         "Huang et al. 2022 accounts it at the rate v gamma (Lemma 5.1)")
        elif gamma < 1.0:
            notes.append("the sampling step costs eps_I when the token is resampled and nothing "
                         "otherwise: amplified in Renyi DP by joint convexity (GatedEvent), not in "
                         "pure DP")
        if self.accounting == "paper":
            notes.append("accounting='paper': the paper's figure is shown labelled below the sound "
                         "guarantee; it is not a guarantee")
        if self.convergence_tol is not None:
            notes.append("stopped by the eq. (9) rule on eval_X (post-processing of privatized "
                         f"topics); accounted for all max_iter = {T} iterations")
        return fit.report(self._events(noise, eps_i, gamma, T, v), "word",
                          description=description, notes=notes, paper_claim=paper,
                          default_delta=delta, assumed_public=self._assumed_public(clipped, fitted["_corpus_shape"]))
