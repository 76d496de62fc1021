"""Topic-based attack on the training trace of a Gibbs sampler (Zhao et al. 2021,
Algorithm 3, eq. 24).

The adversary of Zhao et al. 2021 (Section IV-B1) observes, in every iteration i, the
(sanitized) topic-word counts ``s_i`` and the topic ``k_i`` sampled for a target token, and
infers the token's word t by

    P(w = t | k_1, ..., k_T) ∝ prod_i s_i[t, k_i] / sum_t' s_i[t', k_i]          (eq. 24)

i.e. it treats each iteration's column-normalised counts as p(word | topic) and multiplies
the evidence of the T sampled topics. Against plain CGS the evidence accumulates and the
attack gets better with iterations; HDP-LDA bounds it by clipping (eps_I per iteration).

:func:`topic_based_attack` runs eq. (24) on a recorded trace (``NoisyGibbsLDA`` /
``SubsampledGibbsLDA`` with ``record_trace=True``, or :func:`record_gibbs_trace` for the
non-private baseline).
"""
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from .. import _cgs
from .._utils import check_index_array, check_int, check_positive, check_random_state
from ..corpus import Corpus

__all__ = ["topic_based_attack", "record_gibbs_trace", "TopicAttackResult"]


@dataclass
class TopicAttackResult:
    """Outcome of :func:`topic_based_attack`.

    Attributes
    ----------
    log_posterior : ndarray (n_tokens, V)
        Normalised log P(w = t | k_1..k_T) of every attacked token after all iterations.
    predicted : ndarray (n_tokens,)
        argmax_t of the posterior (Algorithm 3, line 16).
    iterations : ndarray (n_used,)
        1-based iteration numbers that carried a snapshot (the evidence used).
    true_word_probability : ndarray (n_used, n_tokens) or None
        Posterior probability of the true word after each used iteration (the paper's
        "attack accuracy"), when ``true_words`` was given.
    accuracy : ndarray (n_used,) or None
        Fraction of tokens whose argmax is the true word after each used iteration.
    """

    log_posterior: np.ndarray
    predicted: np.ndarray
    iterations: np.ndarray
    true_word_probability: np.ndarray = None
    accuracy: np.ndarray = None

    @property
    def mean_true_word_probability(self):
        """Mean over tokens of ``true_word_probability`` per iteration (or None)."""
        if self.true_word_probability is None:
            return None
        return self.true_word_probability.mean(axis=1)


def _get_trace(trace):
    if hasattr(trace, "trace_"):
        if trace.trace_ is None:
            raise ValueError("the model has no trace: fit it with record_trace=True")
        return trace.trace_, getattr(trace, "topic_word_prior_", None)
    if isinstance(trace, dict) and "snapshots" in trace and "topics" in trace:
        return trace, None
    raise TypeError("trace must be a fitted model with trace_ or a dict with 'snapshots' and "
                    "'topics'")


def topic_based_attack(trace, *, true_words=None, smoothing=None):
    """Infer the words of traced tokens from their sampled topics (Zhao et al. 2021 Alg. 3).

    Parameters
    ----------
    trace : fitted NoisyGibbsLDA / SubsampledGibbsLDA (``record_trace=True``) or dict
        ``{"snapshots": [V x K arrays or None] * T, "topics": (T, n_tokens) ints}``; an
        iteration whose snapshot is None carries no evidence and is skipped.
    true_words : array of int (n_tokens,), optional
        Ground truth, to score the attack: ``trace_["words"]`` of a fitted private model
        (whose traced positions follow its secret visiting order), or
        ``Corpus.from_matrix(X).word_ids[tokens]`` for :func:`record_gibbs_trace`.
    smoothing : float, optional
        Pseudo-count added to the clamped counts, max(s, 0) + smoothing, so that a zero count
        does not veto a word. Default: the model's ``topic_word_prior_`` (0.01 for a dict).

    Returns
    -------
    TopicAttackResult
    """
    tr, prior = _get_trace(trace)
    smoothing = check_positive(smoothing if smoothing is not None else
                               (prior if prior is not None else 0.01), "smoothing")
    topics = np.asarray(tr["topics"])
    if topics.ndim != 2:
        raise ValueError("trace['topics'] must be (n_iterations, n_tokens)")
    snaps = list(tr["snapshots"])
    if len(snaps) != topics.shape[0]:
        raise ValueError("trace['snapshots'] and trace['topics'] differ in length")
    used = [i for i, s in enumerate(snaps) if s is not None]
    if not used:
        raise ValueError("the trace holds no snapshot to attack with")
    shape = np.shape(snaps[used[0]])
    if len(shape) != 2 or min(shape) < 1:
        raise ValueError(f"trace['snapshots'] must be (V, K) matrices, got shape {shape}")
    V, K = shape
    for i in used:
        s = np.asarray(snaps[i], dtype=np.float64)
        if s.shape != shape:
            raise ValueError(f"trace['snapshots'][{i}] has shape {s.shape}; the first one has {shape}")
        if not np.all(np.isfinite(s)):
            raise ValueError(f"trace['snapshots'][{i}] contains NaN or infinity")
    # a topic id of -1 would silently index the last topic
    topics = check_index_array(topics, "trace['topics']", K, ndim=2)
    n = topics.shape[1]
    if true_words is not None:
        true_words = check_index_array(np.asarray(true_words).reshape(-1), "true_words", V)
        if true_words.shape[0] != n:
            raise ValueError(f"true_words must have one entry per traced token ({n})")
    cum = np.zeros((n, V))
    probs, accs = [], []
    last_id, last_logphi = None, None
    rows = np.arange(n)
    for i in used:
        s = snaps[i]
        if s is not last_id:   # schedule 'first' shares one array: compute once
            pos = np.maximum(np.asarray(s, dtype=np.float64), 0.0) + smoothing
            last_logphi = np.log(pos) - np.log(pos.sum(axis=0, keepdims=True))
            last_id = s
        cum += last_logphi[:, topics[i]].T
        if true_words is not None:
            lp = cum - logsumexp(cum, axis=1, keepdims=True)
            probs.append(np.exp(lp[rows, true_words]))
            accs.append(np.mean(np.argmax(cum, axis=1) == true_words))
    log_post = cum - logsumexp(cum, axis=1, keepdims=True)
    return TopicAttackResult(
        log_posterior=log_post, predicted=np.argmax(cum, axis=1),
        iterations=np.asarray(used, dtype=np.int64) + 1,
        true_word_probability=np.asarray(probs) if true_words is not None else None,
        accuracy=np.asarray(accs) if true_words is not None else None)


def record_gibbs_trace(X, n_components, *, max_iter=100, trace_tokens=None,
                       doc_topic_prior=None, topic_word_prior=None, random_state=None):
    """Run plain (non-private) collapsed Gibbs sampling and record what the paper's
    adversary sees: the true topic-word counts before each sweep and the topics of
    ``trace_tokens`` after it. The non-private baseline of the attack; the trace contains
    exact counts and must never be released.

    Returns
    -------
    dict with ``tokens``, ``snapshots`` (list of V x K float arrays), ``topics``
    (max_iter x n_tokens) and ``noisy`` (all False).
    """
    from ..models.gibbs import GibbsState
    from ..models.private_gibbs import _check_trace_tokens
    K = check_int(n_components, "n_components")
    T = check_int(max_iter, "max_iter")
    alpha = 1.0 / K if doc_topic_prior is None else check_positive(doc_topic_prior, "doc_topic_prior")
    beta = 1.0 / K if topic_word_prior is None else check_positive(topic_word_prior, "topic_word_prior")
    corpus = Corpus.from_matrix(X)
    idx = _check_trace_tokens(trace_tokens, corpus.n_tokens)
    rng = check_random_state(random_state)
    init_rng, sweep_rng = rng.spawn(2)
    state = GibbsState(corpus, K, init_rng)
    snaps, topics = [], []
    for _ in range(T):
        snaps.append(state.n_wk.astype(np.float64))
        _cgs.gibbs_sweep(corpus.doc_ptr, corpus.word_ids, state.z, state.n_wk, state.n_dk,
                         state.n_k, alpha, beta, sweep_rng.bit_generator)
        topics.append(state.z[idx].copy())
    return {"tokens": idx, "snapshots": snaps, "topics": np.asarray(topics, dtype=np.int32),
            "noisy": np.zeros(T, dtype=bool)}
