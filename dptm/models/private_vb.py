"""Document-level private full-batch variational Bayes for LDA (issue #15).

EXPERIMENTAL: a first version, not yet benchmarked against the non-private model nor
tuned (issue #15 is open); its E-step is NumPy, not a Cython kernel.

Each iteration: E-step over all documents with the current topics, each document's
expected topic-word counts (K x V) scaled to a fixed L2 norm, summed, released with the
discrete (lattice) Gaussian mechanism; topics = post-processed noisy statistic.
"""
import numpy as np
from scipy.special import psi

from .._random import private_generator, public_seed
from .._utils import check_count_matrix, check_int, check_positive
from ..mechanisms import lattice_gaussian, lattice_granularity, lattice_rounding_slack
from ._base import TopicModelMixin


def _estep_doc(ids, cnts, exp_elog_beta, alpha, n_inner=50, tol=1e-3):
    """Variational E-step of one document; returns its expected K x len(ids) counts."""
    K = exp_elog_beta.shape[0]
    gamma = np.full(K, alpha + cnts.sum() / K)
    eb = exp_elog_beta[:, ids]
    for _ in range(n_inner):
        et = np.exp(psi(gamma) - psi(gamma.sum()))
        phinorm = et @ eb + 1e-100
        new = alpha + et * (eb @ (cnts / phinorm))
        done = np.mean(np.abs(new - gamma)) < tol
        gamma = new
        if done:
            break
    et = np.exp(psi(gamma) - psi(gamma.sum()))
    phinorm = et @ eb + 1e-100
    return np.outer(et, cnts / phinorm) * eb


def _expected_counts(X, beta, alpha, norm):
    """Sum over documents of the expected topic-word counts, each document's contribution
    scaled to L2 norm exactly ``norm`` (empty documents contribute zero)."""
    K, V = beta.shape
    exp_elog_beta = np.exp(psi(beta) - psi(beta.sum(axis=1, keepdims=True)))
    stat = np.zeros((K, V))
    for d in range(X.shape[0]):
        lo, hi = X.indptr[d], X.indptr[d + 1]
        if hi == lo:
            continue
        ids, cnts = X.indices[lo:hi], X.data[lo:hi].astype(np.float64)
        c = _estep_doc(ids, cnts, exp_elog_beta, alpha)
        nrm = np.sqrt(np.sum(c * c))
        if nrm > 0:
            stat[:, ids] += c * (norm / nrm)
    return stat


def _release(stat, sigma, gen):
    """Lattice Gaussian release of ``stat``; returns (noisy, granularity, effective sigma)."""
    return lattice_gaussian(stat, sigma, gen)


class PrivateBatchLDA(TopicModelMixin):
    """Document-level (add/remove) differentially private full-batch variational LDA.

    Privacy contract: ``components_`` is post-processing of ``max_iter`` lattice-Gaussian
    releases of the sum of per-document K x V expected counts, each scaled to L2 norm
    ``clip_norm`` (minus the lattice rounding slack), noise calibrated by RDP so that the
    whole fit is (target_epsilon, target_delta)-DP; the vocabulary is assumed public. The
    number of documents is neither used by the mechanism nor published. ``random_state=None`` (default) draws from a secret
    generator; any other value is test mode.
    """

    def __init__(self, n_components=10, *, target_epsilon=1.0, target_delta=1e-5,
                 max_iter=4, clip_norm=1.0, doc_topic_prior=None, topic_word_prior=None,
                 transform_max_iter=50, random_state=None, verbose=0):
        self.n_components = n_components
        self.target_epsilon = target_epsilon
        self.target_delta = target_delta
        self.max_iter = max_iter
        self.clip_norm = clip_norm
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.transform_max_iter = transform_max_iter
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y=None):
        from ..accounting import (GaussianEvent, PrivacyReport, SelfComposedEvent,
                                  calibrate_gaussian)
        self._check_common_params()
        eps = check_positive(self.target_epsilon, "target_epsilon")
        delta = float(self.target_delta)
        if not 0.0 < delta < 1.0:
            raise ValueError(f"target_delta must be in (0, 1), got {self.target_delta!r}")
        C = check_positive(self.clip_norm, "clip_norm")
        X = check_count_matrix(X, estimator=self, reset=True).tocsr()
        V = X.shape[1]
        K, T = self.n_components, self.max_iter
        gen, seeded = private_generator(self.random_state, "PrivateBatchLDA")
        z = calibrate_gaussian(eps, delta, steps=T)
        z = float(getattr(z, "noise_multiplier", z))
        sigma = z * C
        g = lattice_granularity(sigma)
        slack = lattice_rounding_slack(g, K * V, 2, rounded="statistic")
        if slack >= C:
            raise ValueError("clip_norm too small for the lattice granularity")
        norm = C - slack   # contribution + rounding slack <= C: record sensitivity C
        beta = 1.0 + 0.1 * gen.random((K, V))   # data-independent initialisation
        eta = self.topic_word_prior_
        sig_eff = sigma
        for it in range(T):
            stat = _expected_counts(X, beta, self.doc_topic_prior_, norm)
            noisy, g, sig_eff = _release(stat, sigma, gen)
            beta = eta + np.maximum(noisy, 0.0)
        self.sigma_, self.sensitivity_, self.granularity_ = float(sig_eff), float(C), float(g)
        event = SelfComposedEvent(GaussianEvent(float(sig_eff), sensitivity=float(C),
                                                discrete=True), T, label="fit")
        self.privacy_ = PrivacyReport(
            event, "document",
            description="full-batch private VB LDA: lattice Gaussian on per-document "
                        "normalised expected counts, each iteration",
            default_delta=delta, seeded=seeded,
            # D is not used by the mechanism and not published: under add/remove
            # adjacency it would tell a neighbour apart
            assumed_public=[f"vocabulary (V = {V} words)"])
        self._set_topics(beta)
        self.transform_seed_ = public_seed(gen, seeded)
        self.n_iter_ = T
        return self
