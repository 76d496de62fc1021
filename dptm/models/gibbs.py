"""Collapsed Gibbs sampling LDA (Griffiths & Steyvers 2004), the non-private baseline
that the private Gibbs samplers build on."""
import time

import numpy as np

from .. import _cgs
from .._threads import effective_n_jobs
from .._utils import check_count_matrix, check_random_state, spawn_generators
from ..corpus import Corpus
from ._base import TopicModelMixin, store_params

__all__ = ["GibbsLDA", "GibbsState"]

# The measurements behind these constants: docs/records/2026-12-02-gibbs-constants.md.
# From this many topics the sweeps use SparseLDA's buckets (``_cgs.gibbs_sweep_sparse``),
# O(K_w) per token, instead of the O(K) blocked search: where sparse wins clearly.
_SPARSE_MIN_TOPICS = 200

# With n_jobs > 1 the parts exchange their moves this many times per sweep: AD-LDA's stale
# counts then cost no held-out perplexity.
_SYNC_ROUNDS = 48
# A part takes the others' moves of round r at the start of its round r + _SYNC_LAG, so a
# thread waits only when another is a whole round behind, never at a barrier per round (a
# descheduled thread on a shared machine stalls every barrier); lag 2 needs more rounds.
_SYNC_LAG = 2


def round_blocks(doc_ptr, parts, n_rounds):
    """P x (n_rounds + 1) document boundaries: each part of ``parts`` cut into
    ``n_rounds`` rounds of about equal token counts (empty rounds where a part has fewer
    documents). Depends on the document lengths only."""
    doc_ptr = np.asarray(doc_ptr, dtype=np.int64)
    out = np.empty((parts.size - 1, n_rounds + 1), dtype=np.int64)
    for p in range(parts.size - 1):
        lo, hi = int(parts[p]), int(parts[p + 1])
        if hi > lo:
            cuts = token_blocks(doc_ptr[lo:hi + 1] - doc_ptr[lo], n_parts=n_rounds) + lo
        else:
            cuts = np.array([lo, hi], dtype=np.int64)
        out[p, :cuts.size] = cuts
        out[p, cuts.size:] = hi
    return out


def token_blocks(doc_ptr, n_parts=None, block_tokens=None):
    """Document boundaries (``block_ptr``, starting at 0, ending at D) of consecutive
    non-empty blocks: at most ``n_parts`` blocks of about equal token counts (cut at the
    document boundary nearest to each multiple of N / n_parts), or blocks of about
    ``block_tokens`` tokens (a block ends at the first document boundary at or past a
    multiple of ``block_tokens``). Depends on the document lengths only."""
    doc_ptr = np.asarray(doc_ptr, dtype=np.int64)
    D, N = doc_ptr.size - 1, int(doc_ptr[-1])
    if n_parts is not None:
        cuts = np.arange(1, n_parts) * (N / n_parts)
    else:
        cuts = np.arange(block_tokens, N, block_tokens)
    inner = np.clip(np.searchsorted(doc_ptr, cuts, side="left"), 1, D)
    if n_parts is not None:
        # the nearest document boundary to each cut
        closer = (cuts - doc_ptr[inner - 1]) < (doc_ptr[inner] - cuts)
        inner = inner - closer
    ptr = np.unique(np.concatenate(([0], inner, [D])))
    return ptr.astype(np.int64)


class GibbsState:
    """Topic assignments and the three count arrays of collapsed Gibbs sampling.

    ``n_wk`` is word-major (V x K), ``n_dk`` is D x K, ``n_k`` the topic totals; all are
    kept consistent with ``z`` by the kernels. The start is uniform: ``z`` is drawn from
    ``rng`` alone, so it and the counts are the same for any ``n_threads`` (the threads
    that count the assignments, ``_cgs.gibbs_counts``).
    """

    def __init__(self, corpus, n_topics, rng, n_threads=1):
        self.corpus = corpus
        self.z = rng.integers(0, n_topics, size=corpus.n_tokens, dtype=np.int32)
        V, D, K = corpus.n_words, corpus.n_docs, n_topics
        # counted in place, in parallel, into uninitialised arrays: a fresh V x K array's
        # page faults cost more than the counting at large K
        self.n_wk = np.empty((V, K), dtype=np.int32)
        self.n_dk = np.empty((D, K), dtype=np.int32)
        self.n_k = np.empty(K, dtype=np.int64)
        _cgs.gibbs_counts(corpus.doc_ptr, corpus.word_ids, self.z, self.n_wk, self.n_dk,
                          self.n_k, n_threads)


class GibbsLDA(TopicModelMixin):
    """Latent Dirichlet allocation fitted by collapsed Gibbs sampling.

    Not private: use it as the baseline, as a shadow-model trainer for audits, or on data
    that needs no protection.

    Parameters
    ----------
    n_components : int, default=10
        Number of topics K.
    doc_topic_prior : float, default=None
        Symmetric Dirichlet prior alpha on document-topic distributions; None means 1/K.
    topic_word_prior : float, default=None
        Symmetric Dirichlet prior beta on topic-word distributions; None means 1/K.
    max_iter : int, default=100
        Number of Gibbs sweeps over the corpus.
    transform_max_iter : int, default=50
        Fold-in sweeps per document in ``transform`` (the second half is averaged).
    random_state : None, int, SeedSequence or numpy.random.Generator
        Seed of every random choice.
    n_jobs : int, default=None
        Threads (OpenMP) for the sweeps and for ``transform``: None is 1, -1 all cores.
        With ``n_jobs > 1`` the sweeps are AD-LDA (Newman et al. 2009): the documents are
        split into ``n_jobs`` parts of about equal token counts, each sampled with its own
        random stream against its own copy of the topic-word counts, and the parts exchange
        their moves 48 times per sweep (each part's documents are swept in 48 rounds; at the
        start of its round r a part's copy takes the other parts' moves of round r - 2, so
        it never lags by more than 1/24 of a sweep and threads need not wait for each other
        at every exchange; with a single exchange per sweep, plain AD-LDA, the held-out
        perplexity after 20 sweeps on KOS at 500 topics was 3% worse than serial, with these
        rounds it is the same: 1084.7 against 1085.3, mean of 3 seeds). That is an
        approximation of the serial sampler whose result depends
        on ``n_jobs``: a seed reproduces a fit for the same ``n_jobs`` only (the parts and
        rounds depend on the document lengths and ``n_jobs``, the streams on the seed and
        the part, not on which thread runs it). ``n_jobs=1`` is
        the exact serial sampler. ``transform`` gives the same result for any ``n_jobs``.
        From 200 topics the sweeps after the first, serial or AD-LDA, use SparseLDA's bucket
        decomposition (Yao et al. 2009; the same conditional, sampled in O(K_w) per token,
        the non-zero topics of the word, plus O(K_d) for the document's topics when the
        draw falls in their bucket). Memory: with ``n_jobs > 1``, ``n_jobs`` more copies of
        the V x K int32 counts and 3 int32 per token (the parts' moves of a round); from
        200 topics, word lists of at most 2 min(K, c_w) int32
        per word w with c_w tokens (at most 2 N int32 for N tokens) per part (one part when
        serial; with ``n_jobs > 1`` each part's positions of the topics in its lists
        take the copies' memory).
    verbose : int, default=0
        1 prints progress every 10 sweeps, 2 every sweep with the training log-likelihood.
    callback : callable, default=None
        Called as ``callback(model, iteration)`` after every sweep (progress, or stopping
        by raising). The fitted attributes are set when ``fit`` returns, as for the
        private samplers (:class:`~dptm.models.private_gibbs.NoisyGibbsLDA`): during the
        fit ``model`` holds none of this fit's results.

    Attributes
    ----------
    components_ : ndarray (K, V)
        Topic-word counts plus ``topic_word_prior``.
    topic_word_ : ndarray (K, V)
        Row-normalised ``components_`` (each row sums to 1).
    doc_topic_ : ndarray (D, K)
        Posterior mean document-topic distributions of the training documents at the end.
    doc_topic_prior_, topic_word_prior_ : float
        The priors used.
    n_iter_ : int
        Sweeps run.

    Examples
    --------
    >>> from dptm import GibbsLDA
    >>> from dptm.datasets import make_lda_corpus
    >>> X, true_topics, _ = make_lda_corpus(200, 50, 3, random_state=0)
    >>> model = GibbsLDA(n_components=3, random_state=0).fit(X)
    >>> model.topic_word_.shape
    (3, 50)
    """

    def __init__(self, n_components=10, *, doc_topic_prior=None, topic_word_prior=None,
                 max_iter=100, transform_max_iter=50, random_state=None, n_jobs=None, verbose=0,
                 callback=None):
        store_params(self, locals())

    def fit(self, X, y=None):
        """Fit the model to the doc-term count matrix ``X`` (n_docs, n_words)."""
        self._check_common_params()
        # validated once (n_features_in_ set with it); the corpus is built without a second pass
        corpus = Corpus._from_counts(check_count_matrix(X, estimator=self))
        n_threads = effective_n_jobs(self.n_jobs)
        rng = check_random_state(self.random_state)
        self.transform_seed_ = int(rng.integers(2**63))
        state = GibbsState(corpus, self.n_components, rng, n_threads)
        alpha, beta = self.doc_topic_prior_, self.topic_word_prior_
        sparse = self.n_components >= _SPARSE_MIN_TOPICS
        if n_threads > 1:
            parts = token_blocks(corpus.doc_ptr, n_parts=n_threads)
            part_gens = [g.bit_generator for g in spawn_generators(rng, parts.size - 1)]
        else:
            parts = np.array([0, corpus.n_docs], dtype=np.int64)
            part_gens = [rng.bit_generator]
        # the partitions' count copies and word lists, kept between sweeps (same draws)
        workspace = None
        if sparse or n_threads > 1:
            # word lists with room for min(K, the word's tokens) topics
            workspace = _cgs.ADLDAWorkspace(
                parts.size - 1, corpus.n_words, self.n_components, sparse,
                np.bincount(corpus.word_ids, minlength=corpus.n_words) if sparse else None)
        if n_threads > 1:
            rounds = round_blocks(corpus.doc_ptr, parts, _SYNC_ROUNDS)
        start = time.perf_counter()
        for it in range(1, self.max_iter + 1):
            # the first sweep, from the uniform random start, is dense even from
            # _SPARSE_MIN_TOPICS: there every word's tokens spread over min(its count, K)
            # topics, so the word bucket costs O(K) per token anyway (same conditional)
            dense_first = sparse and it == 1
            if n_threads > 1:
                _cgs.gibbs_sweep_rounds(
                    corpus.doc_ptr, corpus.word_ids, state.z, state.n_wk, state.n_dk,
                    state.n_k, alpha, beta, rounds, part_gens, n_threads,
                    sparse and not dense_first, workspace, _SYNC_LAG)
            elif sparse and not dense_first:
                _cgs.gibbs_sweep_sparse(corpus.doc_ptr, corpus.word_ids, state.z, state.n_wk,
                                        state.n_dk, state.n_k, alpha, beta, parts, part_gens,
                                        n_threads, workspace)
            else:
                _cgs.gibbs_sweep(corpus.doc_ptr, corpus.word_ids, state.z, state.n_wk,
                                 state.n_dk, state.n_k, alpha, beta, rng.bit_generator)
            if self.verbose:
                extra = ""
                if self.verbose > 1:
                    extra = f", log-likelihood {self._joint_log_likelihood(state):.1f}"
                self._progress(it, start, extra)
            if self.callback is not None:
                self.callback(self, it)
        self.n_iter_ = self.max_iter
        # the workspace goes first: the outputs then take the memory it just freed (new
        # memory is slow to fault in on a virtual machine)
        workspace = None
        self._set_outputs(state, alpha, beta, n_threads)
        return self

    def _set_outputs(self, state, alpha, beta, n_threads):
        """``components_``, ``topic_word_`` (what ``_set_topics(n_wk.T + beta)`` sets, the
        normaliser the exact count total) and ``doc_topic_``, in one parallel pass."""
        K, (D, V) = self.n_components, (state.n_dk.shape[0], state.n_wk.shape[0])
        components = np.empty((K, V))
        topic_word = np.empty((K, V))
        doc_topic = np.empty((D, K))
        _cgs.gibbs_outputs(state.n_wk, state.n_dk, alpha, beta, components, topic_word,
                           doc_topic, n_threads)
        self.components_, self.topic_word_, self.doc_topic_ = components, topic_word, doc_topic

    def _joint_log_likelihood(self, state):
        """log p(w | z) of the current state (Griffiths & Steyvers eq. 2), for progress."""
        from scipy.special import gammaln
        beta, V = self.topic_word_prior_, state.n_wk.shape[0]
        K = state.n_wk.shape[1]
        return float(K * (gammaln(V * beta) - V * gammaln(beta))
                     + gammaln(state.n_wk + beta).sum() - gammaln(state.n_k + V * beta).sum())
