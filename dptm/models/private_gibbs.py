"""Word-level differentially private collapsed Gibbs sampling.

* :class:`NoisyGibbsLDA` - HDP-LDA (Zhao et al. 2021, Section IV, Algorithm 1) and its
  baselines CDP-LDA (noise once), CDP-LDA+ (noise every iteration, no clipping) and Zhu et
  al. 2016 (noise in the last iteration only).
* :class:`SubsampledGibbsLDA` - SUB-LDA (Huang et al. 2022, Algorithm 1): Poisson-subsampled
  sweeps with Gaussian snapshot noise, optional adaptive subsampling (eq. 10) and the
  perplexity-difference stopping rule (eq. 9); in :mod:`dptm.models.subsampled_gibbs` (built
  on the snapshot sampler here), importable from this module too.

Release semantics (DESIGN.md 3.1-3.2). In each noisy iteration the sampler draws a snapshot
``s = n + eta`` of the true topic-word counts ``n`` (V x K). The sweep then samples every
token from ``p_k ∝ F[w, k] (n_dk[d, k] + alpha)`` where the word factor

    F = (min(max(s, 0), C) + beta) / (sum_w max(s, 0) + V beta)

is fixed for the whole sweep (numerator clamped and clipped at C, topic totals from the
clamped snapshot) and the document factor uses the live document-topic counts. The true
counts are updated as tokens move and only feed the next snapshot. The released topic-word
matrix is ``max(s_final, 0) + beta`` row-normalised (``components_``): a function of the
last noisy snapshot only. The true counts are never stored on the estimator.

Privacy of one noisy iteration under word replacement (one token's word t replaced by t'):
the snapshot changes two counts by one (L1 sensitivity 2, L2 sqrt 2) and the sampling
step, whose word factor is a function of the released snapshot, is an exponential
mechanism for the replaced token only, with probability ratios at most
((C + beta) / beta)^2, i.e. eps_I = 2 log(C / beta + 1) (Zhao et al. 2021 Theorem 3).

That bound needs the replaced token to be visited at the same point of the sweep on both
neighbours. Laid out by word id (``Corpus.from_matrix``), a replaced word moves its token
past the document's other words, whose conditionals then see it at a different time: the
exact log-ratio of one sweep reaches several times eps_I (tests/test_private_gibbs_order.py).
So each document's tokens are visited in a uniformly random order, drawn once per fit from
the secret generator: any order of one neighbour has an equally likely order of the other
with the replaced token in the same place. Topic assignments (``doc_topic_``, ``trace_``)
are indexed in that visiting order.

Randomness (DESIGN.md 2): the initial topics, the token order, the snapshot noise, the
token subsampling and every sweep draw come from
``dptm.noise.secret.private_generator(random_state, ...)``: a secret AES-CTR generator keyed
from the operating system unless a seed is given (labelled test mode). Nothing that could
regenerate it is kept on the estimator; ``transform_seed_`` (fold-in of ``transform``, a
post-processing of the released topics) is fresh OS entropy. The default noise is exact
(discrete Laplace / discrete Gaussian on the integer counts); the floating-point samplers
are available under their names 'laplace' / 'gaussian' with a ``NotHardenedWarning``.
"""
import math
import warnings

import numpy as np
from randomgen import AESCounter

from .. import _cgs
from .._utils import check_positive, check_probability
from ..accounting import (ComposedEvent, PaperClaim, PureDPEvent, SelfComposedEvent,
                          epsilon as _epsilon, log_bisect, recipes)
from ..corpus import Corpus
from ..exceptions import NotHardenedWarning, user_stacklevel
from ..noise.laplace_table import dyadic_laplace_parameter  # noqa: F401  (tests)
# the snapshot's noise: a release object of the noise package (old names kept)
from ..noise.releases import (SNAPSHOT_LABEL as _SNAPSHOT_LABEL,  # noqa: F401  (tests)
                              SNAPSHOT_MECHANISMS as _KIND, SnapshotRelease as _Noise)
from ..noise.secret import shuffle_within_segments
from ._base import TopicModelMixin, store_params
from ._private_base import PrivateModelMixin, topic_attributes
from .._threads import effective_n_jobs
from .gibbs import GibbsState, token_blocks

# SubsampledGibbsLDA: models/subsampled_gibbs.py, re-exported by __getattr__ below
__all__ = ["NoisyGibbsLDA", "SubsampledGibbsLDA",  # noqa: F822
           "inherent_epsilon", "plain_sweep_epsilon"]

_NO_TABLE = np.zeros((0, 0), dtype=np.float64)
# Documents are swept in blocks of about this many tokens, each with its own secret stream:
# the blocks depend only on the (public) document lengths, never on n_jobs, so a fit is
# the same for any number of threads.
_BLOCK_TOKENS = 4096
# From this many topics the word bucket of a sweep is found by a two-level search: binary
# search in per-word running sums at the end of each block of 16 topics, built once per
# snapshot, then a scan of one block (same draws as the linear scan). The measurements
# behind these constants: docs/records/2026-12-02-gibbs-constants.md.
_WORD_SEARCH_MIN_TOPICS = 64
_WORD_BLOCK = _cgs.WORD_BLOCK_TOPICS    # topics per block of that table
# Above this many topics a one-thread sweep also updates the true topic-word counts after
# the sweep, word by word (a count row is then too long to prefetch per token). Same counts.
_DEFERRED_COUNTS_MIN_TOPICS = 128
# On several threads with short rows, each thread but the first keeps its own V x K count
# changes, added into the true counts after each sweep (same counts, faster than atomic
# adds), when those buffers take at most this many bytes.
_THREAD_COUNTS_MAX_BYTES = 1 << 28
# Snapshot rows are drawn in blocks of about this many counts, each block from its own
# child of the secret noise generator (V and K only decide the blocks; changing it would
# change every seeded fit).
_SNAPSHOT_BLOCK_ENTRIES = 1 << 16
_SAMPLING_LABEL = "topic sampling step (inherent privacy of the clipped snapshot sampler)"


def inherent_epsilon(clip, beta):
    """eps_I = 2 log(C / beta + 1): privacy of one sweep sampled from a privatized, clipped
    snapshot (Zhao et al. 2021 Theorem 3)."""
    return recipes.zhao2021_inherent_epsilon(clip, beta)


def plain_sweep_epsilon(n_tokens, beta):
    """Pure epsilon of one *plain* CGS sweep on the live true counts under word replacement,
    with the data-independent bound n_t + n_t' <= N of Zhao et al. 2021 Theorem 1 (eq. 5):
    2 log(N / beta + 1) + 2 (N - 1) log(1 + 1 / beta). Used for the sweeps of schedule
    'last' that precede its single noisy iteration."""
    n = float(n_tokens)
    return 2.0 * math.log1p(n / beta) + 2.0 * (n - 1.0) * math.log1p(1.0 / beta)


def _snapshot_generators(noise_rng, n_words, n_topics):
    """One child of the secret ``noise_rng`` per block of snapshot rows: blocks of about
    ``_SNAPSHOT_BLOCK_ENTRIES`` counts, from V and K only (public), never from n_jobs. A
    block's generator draws its rows' noise in every snapshot of the fit."""
    rows = max(1, -(-_SNAPSHOT_BLOCK_ENTRIES // max(n_topics, 1)))
    return [g.bit_generator for g in _child_generators(noise_rng, -(-n_words // rows))]


def _bisect(ok, lo, hi):
    """Largest x in [lo, hi] with ok(x) (ok decreasing in x, ok(lo) holds), to 1e-4."""
    return hi if ok(hi) else log_bisect(ok, good=lo, bad=hi)


def _check_trace_tokens(trace_tokens, n_tokens):
    if trace_tokens is None:
        return np.array([n_tokens - 1], dtype=np.int64)   # the paper's "last word in D"
    idx = np.atleast_1d(np.asarray(trace_tokens))
    if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
        raise TypeError("trace_tokens must be None or a non-empty 1-D array of token indices")
    if idx.min() < 0 or idx.max() >= n_tokens:
        raise ValueError(f"trace_tokens must lie in [0, n_tokens={n_tokens}), got "
                         f"[{idx.min()}, {idx.max()}]")
    return idx.astype(np.int64)


def _child_generators(gen, n):
    """``n`` independent AES-CTR generators keyed with 128 bits each drawn from ``gen``.

    Not ``gen.spawn``: that advances the spawn counter of the caller's SeedSequence (a
    seed given in test mode would then give a different model on every fit, and the
    estimator's parameter would be mutated). Keys drawn from the secret generator are as
    secret as it is."""
    return [np.random.Generator(AESCounter(key=int.from_bytes(gen.bytes(16), "little")))
            for _ in range(n)]


def _visiting_order(corpus, gen, order="random"):
    """``corpus`` with each document's tokens in the order the sweeps visit them.

    'random' (what the estimators use): one uniformly random permutation per document,
    drawn from the secret generator ``gen``. 'sorted' (test hook only): the word-id order of
    ``Corpus.from_matrix``, which breaks the per-sweep bound eps_I."""
    if order == "sorted":
        return corpus
    if order != "random":
        raise ValueError(f"order must be 'random' or 'sorted', got {order!r}")
    words = shuffle_within_segments(corpus.doc_ptr, corpus.word_ids, gen)
    return Corpus._owning(corpus.doc_ptr, words, corpus.n_words)


def _count_update_buffers(corpus, K, n_threads):
    """How a noisy sweep updates the true counts: ``(word_ptr, word_tokens,
    thread_counts)`` for ``_cgs.noisy_gibbs_sweep_blocks`` (None where unused).

    On several threads with short rows, every thread but the first keeps its own V x K
    count changes (``thread_counts``, while they fit in ``_THREAD_COUNTS_MAX_BYTES``);
    otherwise, on several threads or for long rows, the counts are counted word by word
    from the token positions grouped by word, after the sweep or (``_sweeper``'s
    ``recount``) by the next snapshot; else in place. The same counts either way
    (internal to the fit, like the counts themselves)."""
    V = corpus.n_words
    if (n_threads > 1 and K <= _DEFERRED_COUNTS_MIN_TOPICS
            and 4 * (n_threads - 1) * V * K <= _THREAD_COUNTS_MAX_BYTES):
        return None, None, np.zeros((n_threads - 1, V * K), dtype=np.int32)
    if n_threads > 1 or K > _DEFERRED_COUNTS_MIN_TOPICS:
        word_tokens = np.argsort(corpus.word_ids, kind="stable").astype(np.int64)
        word_ptr = np.concatenate(([0], np.cumsum(np.bincount(
            corpus.word_ids, minlength=V)))).astype(np.int64)
        return word_ptr, word_tokens, None
    return None, None, None


class _SnapshotPlan:
    """What one model's snapshot fit does besides the shared loop, from ``_plan_fit``:
    ``noise`` (its ``_Noise``), ``report(fitted)`` (its privacy report, from every fitted
    attribute), ``fitted`` (its own fitted attributes), ``rate (resampling probability of the sweep), ``recount`` (every sweep
    follows a snapshot), ``keep_clipped`` (unreleased snapshots may keep int32 clipped
    counts), ``plain_until`` (iterations up to it sweep on the true counts: schedule
    'last'), and the ``noisy_at`` / ``table`` / ``stop`` of ``_iterate``; ``ledger`` (the
    fit's) records every snapshot drawn."""

    def __init__(self, noise, report, fitted, *, ledger, rate=1.0, recount=True,
                 keep_clipped=True, plain_until=0, noisy_at=None, table=None, stop=None):
        noise.ledger = ledger               # every snapshot drawn is recorded there
        self.noise, self.report, self.fitted = noise, report, fitted
        self.rate, self.recount, self.keep_clipped = rate, recount, keep_clipped
        self.plain_until, self.noisy_at, self.table, self.stop = (plain_until, noisy_at,
                                                                  table, stop)


class _SnapshotGibbsBase(PrivateModelMixin, TopicModelMixin):
    """The snapshot samplers' fit (validation, the secret streams, the loop, the trace, the
    release); a subclass gives its noise and accounting in ``_plan_fit``."""

    # Default noise; 'laplace' / 'gaussian' are the floating-point samplers (not hardened).
    _FLOAT_MECHANISMS = ("laplace", "gaussian")
    # What the guarantee protects, known before fit: a vocabulary pipeline refuses it.
    _privacy_adjacency = "word"

    def _check_clip(self):
        if self.clip is None:
            return None
        return check_positive(self.clip, "clip")

    def _warn_mechanism(self):
        if self.mechanism in self._FLOAT_MECHANISMS:
            warnings.warn(
                f"{type(self).__name__}(mechanism={self.mechanism!r}) draws floating-point noise: "
                "the low-order bits of a released snapshot can reveal the exact count (Mironov "
                f"2012). Use mechanism='discrete_{self.mechanism}' (exact) for a model you "
                "publish.",
                NotHardenedWarning, stacklevel=user_stacklevel())

    def _check_data(self, X):
        """Validate the common parameters and ``X``: its corpus (word-id order)."""
        self._check_common_params()
        if not isinstance(self.record_trace, (bool, np.bool_)):
            raise TypeError(f"record_trace must be a bool, got {type(self.record_trace).__name__}")
        corpus = Corpus.from_matrix(X)
        self._warn_mechanism()
        return corpus

    def _sample(self, fit, corpus, checked, eval_X=None):
        """The fit on one process: from ``fit.generator`` (never stored) the token order,
        the initial topics and the noise / sweep streams, then the loop of ``_iterate``.
        ``checked``: what ``_check_params`` returned. Returns the fitted attributes."""
        n_threads = effective_n_jobs(self.n_jobs)
        order_rng, init_rng, noise_rng, sweep_rng = _child_generators(fit.generator, 4)
        shape = (corpus.n_docs, corpus.n_words, corpus.n_tokens)
        corpus = _visiting_order(corpus, order_rng)
        state = GibbsState(corpus, self.n_components, init_rng)
        trace = _new_trace(corpus, self.trace_tokens) if self.record_trace else None
        clip, clipped = self._effective_clip(corpus)
        plan = self._plan_fit(fit, shape, clip, clipped, checked, eval_X)
        sweep = self._sweeper(corpus, sweep_rng, n_threads, recount=plan.recount)
        noise_gens = _snapshot_generators(noise_rng, corpus.n_words, self.n_components)
        alpha, beta = self.doc_topic_prior_, self.topic_word_prior_
        T = self.max_iter
        # the snapshots read by nothing but the sweep (not traced, not the last) keep int32
        # clipped counts instead of the double snapshot (half its traffic)
        clip_buf = (plan.noise.clipped_buffer(state.n_wk.shape, clip)
                    if plan.keep_clipped and trace is None and T > 1 else None)

        def draw(it, snap):
            nonlocal clip_buf
            if it == T:
                clip_buf = None   # freed before the released snapshot is written
            # a fresh array per snapshot when tracing (the trace keeps them all);
            # the snapshot kernel also fills the sweep's search table
            return plan.noise.snapshot(state.n_wk, clip, beta, noise_gens,
                                       snap if trace is None else None, n_threads,
                                       word_blocks=sweep.word_blocks, clipped=clip_buf,
                                       recount=sweep.recount(state))

        def step(it, snap, noisy, rates):
            if it <= plan.plain_until:
                _cgs.gibbs_sweep(corpus.doc_ptr, corpus.word_ids, state.z, state.n_wk,
                                 state.n_dk, state.n_k, alpha, beta, sweep_rng.bit_generator)
                _trace_add(trace, state, None, False)
            else:
                sweep(state, snap, alpha, plan.rate, rates)
                _trace_add(trace, state, snap[0], noisy)

        snap, it = self._iterate(draw, step, noisy_at=plan.noisy_at, table=plan.table,
                                 stop=plan.stop)
        return self._fitted(fit, plan, shape, clip, it, snap[0], state.n_dk,
                            _closed_trace(trace))

    def _fitted(self, fit, plan, shape, clip, n_iter, s_final, n_dk, trace):
        """Every fitted attribute of a snapshot fit (``n_dk`` None: no ``doc_topic_``)."""
        beta, alpha = self.topic_word_prior_, self.doc_topic_prior_
        snapshot = np.array(s_final, dtype=np.float64, copy=True)
        fitted = {"_seeded": fit.seeded, "_corpus_shape": shape, "clip_": clip,
                  "trace_": trace,
                  **plan.fitted, "n_iter_": n_iter,
                  # released: max(s_final, 0) + beta (K x V) and the training doc-topic means
                  "snapshot_": snapshot,
                  **topic_attributes(np.maximum(snapshot, 0.0).T + beta)}
        if n_dk is None:
            fitted["doc_topic_"] = None
        else:
            theta = n_dk + alpha
            fitted["doc_topic_"] = theta / theta.sum(axis=1, keepdims=True)
        fitted["n_features_in_"] = shape[1]
        # the report accounts max_iter snapshots of this noise: no other noise was drawn
        fit.ledger.check_within(plan.noise.event, self.max_iter)
        fitted["privacy_"] = plan.report(fitted)
        return fitted

    def _sweeper(self, corpus, sweep_rng, n_threads, recount=False):
        """The noisy sweep of this fit: documents in fixed blocks (public document
        lengths only), block ``b`` drawing from its own child of the secret ``sweep_rng``
        for every sweep, so the result does not depend on ``n_threads``. Returns
        ``sweep(state, snap, alpha, rate, table)``; the generators live in its closure,
        dropped with it at the end of ``fit``. ``sweep.word_blocks`` is the word-bucket
        search table (the running sums at the end of each block of 16 topics; None below
        ``_WORD_SEARCH_MIN_TOPICS``): pass it to ``_Noise.snapshot``, which fills it from
        the snapshot it draws. ``recount``: every sweep of the fit follows a snapshot;
        where the counts would be updated word by word after the sweep (long rows, or
        several threads without per-thread buffers), the sweep then leaves ``state.n_wk``
        stale and ``sweep.recount(state)`` is the ``recount`` argument of the next
        ``_Noise.snapshot`` (which counts the rows from the topics as it draws their
        noise: one pass over the counts per iteration instead of two; the same counts),
        else None."""
        block_ptr = token_blocks(corpus.doc_ptr, block_tokens=_BLOCK_TOKENS)
        gens = [g.bit_generator for g in _child_generators(sweep_rng, block_ptr.size - 1)]
        K = self.n_components
        word_blocks = (np.empty((corpus.n_words, -(-K // _WORD_BLOCK)))
                       if K >= _WORD_SEARCH_MIN_TOPICS else None)
        word_ptr, word_tokens, thread_counts = _count_update_buffers(corpus, K, n_threads)
        recount = recount and word_ptr is not None
        by_word = {} if recount else {"word_ptr": word_ptr, "word_tokens": word_tokens}

        def sweep(state, snap, alpha, rate, table):
            return _cgs.noisy_gibbs_sweep_blocks(
                corpus.doc_ptr, corpus.word_ids, state.z, state.n_wk, state.n_dk, state.n_k,
                snap[1], snap[2], alpha, rate, table, block_ptr, gens, n_threads,
                thread_counts=thread_counts, word_blocks=word_blocks, recount=recount,
                **by_word)
        sweep.word_blocks = word_blocks
        sweep.recount = ((lambda state: (state.z, word_ptr, word_tokens)) if recount
                         else (lambda state: None))
        return sweep

    @staticmethod
    def _assumed_public(clipped, shape):
        D, V, N = shape
        out = [f"vocabulary (V = {V} words): word-level privacy assumes it is not taken from "
               "the private text",
               f"number of documents D = {D} and every document's length (a word replacement "
               "keeps them; they are not protected)"]
        if not clipped:
            out.append(f"number of tokens N = {N} (no clip requested: C = N)")
        return out

    def _effective_clip(self, corpus):
        clip = self._check_clip()
        # No clipping = clip at N, the number of tokens: no true count exceeds it (word
        # replacement keeps N), so the sampler is unchanged except on noise above N, and
        # the inherent privacy stays finite.
        return (float(corpus.n_tokens), False) if clip is None else (clip, True)

    def _iterate(self, draw, sweep, *, noisy_at=None, table=None, stop=None):
        """The iterations of every snapshot-Gibbs fit, in one process (``fit``) and on a
        Dask cluster (``dptm.distributed``): for it = 1 .. ``max_iter``, where
        ``noisy_at(it)`` (default: every iteration) a snapshot ``snap = draw(it, snap)`` and
        the sweep's rate table ``table(snap[0])`` (default: none), then ``sweep(it, snap,
        noisy, rates)``, the stopping rule ``stop(snap[0])`` (True: the fit ends there),
        progress and ``callback``. Returns ``(the last snapshot, the iterations run)``."""
        snap, rates, it = None, _NO_TABLE, 0
        for it in range(1, self.max_iter + 1):
            noisy = noisy_at is None or noisy_at(it)
            if noisy:
                snap = draw(it, snap)
                rates = table(snap[0]) if table is not None else _NO_TABLE
            sweep(it, snap, noisy, rates)
            done = stop is not None and stop(snap[0])
            if self.verbose:
                self._progress(it)
            if self.callback is not None:
                self.callback(self, it)
            if done:
                break
        return snap, it

    def fit_transform(self, X, y=None, **fit_params):
        """Fit and return the training documents' topic distributions ``doc_topic_``."""
        return self.fit(X, **fit_params).doc_topic_

    @staticmethod
    def topic_word_from_snapshot(snapshot, topic_word_prior):
        """The released topic-word matrix as a function of a (V x K) noisy snapshot:
        ``(max(s, 0) + beta).T`` row-normalised."""
        comp = np.maximum(np.asarray(snapshot, dtype=np.float64), 0.0).T + topic_word_prior
        return comp / comp.sum(axis=1, keepdims=True)


def _new_trace(corpus, trace_tokens):
    """The trace of the tokens ``trace_tokens`` (positions in the visiting order); its
    'words' are their true words, the attack's ground truth (private data: the trace is an
    experiment's record, never part of a release)."""
    idx = _check_trace_tokens(trace_tokens, corpus.n_tokens)
    return {"tokens": idx, "words": corpus.word_ids[idx].copy(),
            "snapshots": [], "topics": [], "noisy": []}


def _trace_add(trace, state, s, noisy):
    if trace is None:
        return
    trace["snapshots"].append(s)
    trace["topics"].append(state.z[trace["tokens"]].copy())
    trace["noisy"].append(bool(noisy))


def _closed_trace(trace):
    if trace is not None:
        trace["topics"] = np.asarray(trace["topics"], dtype=np.int32)
        trace["noisy"] = np.asarray(trace["noisy"], dtype=bool)
    return trace


class NoisyGibbsLDA(_SnapshotGibbsBase):
    """HDP-LDA: collapsed Gibbs sampling from noisy, clipped snapshots of the topic-word
    counts (Zhao et al. 2021, Algorithm 1), with its baselines as noise schedules.

    Parameters
    ----------
    n_components : int, default=10
        Number of topics K.
    epsilon_per_iter : float, default=1.0
        eps_L of each Laplace snapshot (scale 2 / eps_L). Ignored when ``target_epsilon`` is
        set or for Gaussian mechanisms.
    noise_multiplier : float, default=None
        Gaussian mechanisms: sigma = noise_multiplier * sqrt(2) (sqrt(2) is the L2
        sensitivity). Required for 'gaussian' / 'discrete_gaussian' unless
        ``target_epsilon`` is set.
    target_epsilon : float, default=None
        If set, the noise is calibrated so that the whole run (``max_iter`` iterations,
        snapshots and sampling steps) is (target_epsilon, target_delta)-DP by the tightest
        accountant route; raises if the sampling steps alone exceed it.
    target_delta : float, default=1e-5
        Delta of the target and of ``str(privacy_)``.
    clip : float, default=None
        Clipping bound C of the snapshot counts in the word factor. None: no clipping
        (CDP-LDA+), implemented as C = N (number of tokens), which no true count exceeds.
        N is public only under word adjacency over a public vocabulary (a replaced word
        keeps it); on a corpus sanitized over a vocabulary chosen from the private text it
        is not, so give ``clip`` (and see Privacy).
    mechanism : str, default='discrete_laplace'
        Snapshot noise: 'discrete_laplace', 'discrete_gaussian', 'laplace' or 'gaussian'. The discrete ones are exact integer samplers (Canonne et al. 2020):
        every snapshot value is an integer, whatever the counts. 'laplace' / 'gaussian' are
        floating-point samplers whose low-order bits can reveal a count (Mironov 2012): they
        emit a :class:`dptm.exceptions.NotHardenedWarning` and the report labels them.
    noise_schedule : {'every', 'first', 'last'}, default='every'
        'every': fresh snapshot every iteration (HDP-LDA; CDP-LDA+ with ``clip=None``).
        'first' (CDP-LDA): one snapshot, in the first iteration; it is the only privatized
        word factor, so every sweep samples from it and it is what is released.
        'last' (Zhu et al. 2016): plain CGS on the true counts, then one noisy iteration whose
        snapshot is released; the plain sweeps are accounted with Zhao et al. 2021 Theorem 1.
    doc_topic_prior, topic_word_prior : float, default=None (1/K)
        alpha and beta.
    max_iter : int, default=100
        Number of iterations T.
    transform_max_iter : int, default=50
        Fold-in sweeps per document in ``transform``.
    record_trace : bool, default=False
        Keep, per iteration, the snapshot used by the sweep and the topics of ``trace_tokens``
        after it (``trace_``), for :func:`dptm.attacks.topic_based_attack`. Memory T V K
        floats (one shared array for schedule 'first'; None for the plain sweeps of 'last').
    trace_tokens : array of int, default=None
        Token positions to trace, in the *visiting order* of the sweeps: documents in
        order, each document's tokens in the secret random order of this fit (so position
        i is a uniformly random token of its document, not the i-th token of
        ``Corpus.from_matrix(X)``); ``trace_["words"]`` holds their true words. None is the
        last token of the corpus, as in the paper.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        None (for a model you publish): every random draw comes from a secret generator
        keyed from the operating system (``dptm.noise.secret.secret_generator``). A seed is a
        test mode: reproducible, with a ``SeededPrivacyWarning`` and a report whose first
        line says the guarantee holds only while the seed stays secret.
    n_jobs : int, default=None
        Threads (OpenMP) for the sweeps and ``transform``: None is 1, -1 all cores. Exact
        whatever its value: the word factor is fixed during a sweep, so documents are
        swept in fixed blocks of about 4096 tokens (cut at document boundaries, from the
        document lengths only), each block drawing its token selection and topics from its
        own child of the secret generator; the blocks are independent given the snapshot
        and the true counts are merged with integer additions. The fit (in test mode: the
        output for a seed) is the same for every ``n_jobs``.
    verbose : int, default=0
    callback : callable, default=None
        ``callback(model, iteration)`` after every sweep: for progress, or to stop the fit
        by raising. The fitted attributes are set all at once when ``fit`` returns, so that
        a fit that fails or is stopped leaves no partial release on the model (and none of
        the secret state): during the fit ``model`` holds none of this fit's results (on a
        refit, the previous fit's).

    Attributes
    ----------
    components_ : ndarray (K, V)
        ``max(s_final, 0) + beta``, the released pseudo-counts.
    topic_word_ : ndarray (K, V)
        Row-normalised ``components_``.
    snapshot_ : ndarray (V, K)
        The final noisy snapshot s_final (a privatized release).
    doc_topic_ : ndarray (D, K)
        Document-topic means of the training documents from the final topic assignments.
    transform_seed_ : int
        Seed of ``transform``'s fold-in sampler: fresh OS entropy, unrelated to the secret
        generator (transform post-processes the released topics).
    epsilon_per_iter_ : float or None
        eps_L actually used (Laplace mechanisms).
    noise_scale_ : float
        Laplace scale or Gaussian sigma actually drawn (after calibration / rational
        rounding for the discrete samplers).
    clip_ : float
        C used (N when ``clip`` is None).
    epsilon_inherent_ : float
        eps_I = 2 log(C / beta + 1).
    privacy_ : dptm.accounting.PrivacyReport
    trace_ : dict or None
        ``tokens`` (positions in the visiting order), ``words`` (their true words: private),
        ``snapshots`` (list of V x K arrays or None), ``topics`` (T x n_traced), ``noisy``
        (T booleans).
    n_iter_ : int

    Privacy
    -------
    Word-level adjacency: neighbouring corpora differ in one token whose word is replaced
    (document lengths unchanged). Each noisy snapshot adds Laplace noise of scale 2/eps_L
    (L1 sensitivity 2: two counts change by one) or Gaussian noise (L2 sensitivity sqrt 2).
    The word factor is clamped at 0 and clipped at C; a sweep sampled from it costs
    eps_I = 2 log(C/beta + 1) (Zhao et al. 2021 Theorem 3). Released and accounted: every
    snapshot, every sweep's topic assignments (so ``doc_topic_`` and ``trace_``), and
    ``components_`` (post-processing of the last snapshot). ``privacy_`` composes:

    * 'every': T x (snapshot + eps_I);
    * 'first': one snapshot + T x eps_I (release = the first snapshot; the later sweeps
      cannot improve the released matrix without a new privatized release);
    * 'last': (T - 1) plain sweeps at :func:`plain_sweep_epsilon` (N) each + one snapshot +
      eps_I. This is astronomically large: Zhu et al.'s eps_L ignores the earlier sweeps.

    ``privacy_.epsilon(delta)`` is the tightest of the linear (pure DP), zCDP (pure eps ->
    eps^2/2-zCDP) and RDP routes; the paper's linear total T (eps_L + eps_I) is attached as
    ``privacy_.paper_claim`` for 'every' with a Laplace mechanism. The neighbouring relation
    does not protect document membership or document lengths. The vocabulary must be
    public: over a vocabulary selected from the private text (even privately), a word
    replaced by one outside it is a deleted token, which changes N and a document's length;
    that is not covered, and :class:`dptm.FullyPrivateTopicModel` refuses word-level models.

    Examples
    --------
    >>> from dptm import NoisyGibbsLDA
    >>> from dptm.datasets import make_lda_corpus
    >>> X, _, _ = make_lda_corpus(100, 40, 3, random_state=0)
    >>> model = NoisyGibbsLDA(3, epsilon_per_iter=1.0, clip=50, max_iter=20).fit(X)
    >>> model.topic_word_.shape
    (3, 40)
    """

    def __init__(self, n_components=10, *, epsilon_per_iter=1.0, noise_multiplier=None,
                 target_epsilon=None, target_delta=1e-5, clip=None,
                 mechanism="discrete_laplace", noise_schedule="every", doc_topic_prior=None,
                 topic_word_prior=None,
                 max_iter=100, transform_max_iter=50, record_trace=False, trace_tokens=None,
                 random_state=None, n_jobs=None, verbose=0, callback=None):
        store_params(self, locals())

    # ----------------------------------------------------------------- accounting
    def _event(self, noise_event, eps_i, eps_plain, T):
        sampling = PureDPEvent(eps_i, label=_SAMPLING_LABEL)
        if self.noise_schedule == "every":
            return SelfComposedEvent(ComposedEvent((noise_event, sampling)), T)
        if self.noise_schedule == "first":
            return ComposedEvent((noise_event, SelfComposedEvent(sampling, T)))
        plain = PureDPEvent(eps_plain, label="plain CGS sweep on the true counts "
                                             "(Zhao et al. 2021 Theorem 1 with n_t + n_t' <= N)")
        return ComposedEvent((SelfComposedEvent(plain, T - 1), noise_event, sampling))

    def _check_params(self):
        if self.mechanism not in _KIND:
            raise ValueError(f"mechanism must be one of {sorted(_KIND)}, got {self.mechanism!r}")
        if self.noise_schedule not in ("every", "first", "last"):
            raise ValueError("noise_schedule must be 'every', 'first' or 'last', "
                             f"got {self.noise_schedule!r}")
        delta = check_probability(self.target_delta, "target_delta", high_open=True)
        gaussian = self.mechanism.endswith("gaussian")
        if self.target_epsilon is not None:
            check_positive(self.target_epsilon, "target_epsilon")
        elif gaussian:
            if self.noise_multiplier is None:
                raise ValueError("noise_multiplier is required for Gaussian mechanisms "
                                 "(or set target_epsilon)")
            check_positive(self.noise_multiplier, "noise_multiplier")
        else:
            check_positive(self.epsilon_per_iter, "epsilon_per_iter")
        return delta

    def _make_noise(self, eps_i, eps_plain, T, delta):
        gaussian = self.mechanism.endswith("gaussian")
        if self.target_epsilon is None:
            if gaussian:
                return _Noise(self.mechanism, noise_multiplier=float(self.noise_multiplier))
            return _Noise(self.mechanism, epsilon=float(self.epsilon_per_iter))
        target = float(self.target_epsilon)

        def total(noise):
            return _epsilon(self._event(noise.event, eps_i, eps_plain, T), delta)

        if gaussian:
            # more noise = smaller epsilon: bisect on 1 / noise_multiplier
            def ok(inv_z):
                return total(_Noise(self.mechanism, noise_multiplier=1.0 / inv_z)) <= target
            lo, hi = 1e-4, 1e3     # sigma <= 14142: inside the exact sampler's range
        else:
            def ok(eps_l):
                return total(_Noise(self.mechanism, epsilon=eps_l)) <= target
            lo, hi = 1e-9, max(1.0, 2.0 * target)
        if not ok(lo):
            floor = total(_Noise(self.mechanism, noise_multiplier=1.0 / lo) if gaussian
                          else _Noise(self.mechanism, epsilon=lo))
            raise ValueError(
                f"target_epsilon={target} is below what the sampling steps alone cost "
                f"(eps_I={eps_i:.4g} per sweep, {T} iterations, schedule "
                f"{self.noise_schedule!r}; the smallest reachable total is {floor:.6g}): "
                "increase target_epsilon or topic_word_prior, or lower clip or max_iter")
        x = _bisect(ok, lo, hi)
        if gaussian:
            return _Noise(self.mechanism, noise_multiplier=1.0 / x)
        return _Noise(self.mechanism, epsilon=x)

    def _report(self, fit, fitted, noise, eps_i, eps_plain, T, clipped, delta):
        beta, clip = self.topic_word_prior_, fitted["clip_"]
        sched = {"every": "HDP-LDA (noise every iteration)" if clipped else
                 "CDP-LDA+ (noise every iteration, no clipping)",
                 "first": "CDP-LDA (noise in the first iteration only)",
                 "last": "Zhu et al. 2016 (noise in the last iteration only)"}[self.noise_schedule]
        description = (f"NoisyGibbsLDA, {sched}: {T} iterations; released: the noisy snapshots, "
                       "the topic assignments of every sweep (doc_topic_, trace_) and the topic-word "
                       "matrix (max(s_final, 0) + beta) row-normalised")
        notes = [f"clip C = {clip:.6g}" + ("" if clipped else
                 " (no clipping requested: C = number of tokens N, which no true count exceeds)")
                 + f", beta = {beta:.6g}: eps_I = 2 log(C/beta + 1) = {eps_i:.6g} per sweep "
                 "(Zhao et al. 2021 Theorem 3)",
                 "the true counts are never released; components_ is computed from the last "
                 "noisy snapshot only"]
        paper = None
        if self.mechanism.endswith("laplace"):
            eps_l = 2.0 / noise.scale
            if self.noise_schedule == "every":
                paper = PaperClaim("Zhao et al. 2021 Algorithm 1 (linear total T(eps_L + eps_I))",
                                   "zhao2021_linear_epsilon",
                                   {"iterations": T, "eps_laplace": eps_l, "clip": clip,
                                    "beta": beta})
                if not clipped:
                    notes.append(f"Zhao et al. 2021 credits CDP-LDA+ with T eps_L = {T * eps_l:.6g}, "
                                 "ignoring its unclipped sampling steps")
            elif self.noise_schedule == "first":
                notes.append(f"CDP-LDA is credited with eps_L = {eps_l:.6g} (one noisy release); the "
                             "topic assignments of the later sweeps are accounted here as well")
            else:
                notes.append(f"Zhu et al. 2016 claim eps_L = {eps_l:.6g}; that ignores the {T - 1} "
                             f"plain sweeps, each bounded only by {eps_plain:.6g} (Zhao et al. 2021 "
                             "Theorem 1 with n_t + n_t' <= N)")
        return fit.report(self._event(noise.event, eps_i, eps_plain, T), "word",
                          description=description, notes=notes, paper_claim=paper,
                          default_delta=delta,
                          assumed_public=self._assumed_public(clipped, fitted["_corpus_shape"]))

    # ----------------------------------------------------------------- fit
    def _noisy_at(self, it):
        """Whether iteration ``it`` draws a snapshot (the noise schedule)."""
        schedule = self.noise_schedule
        return schedule == "every" or (schedule == "first" and it == 1) or \
            (schedule == "last" and it == self.max_iter)

    def fit(self, X, y=None):
        """Fit to the doc-term count matrix ``X`` (n_docs, n_words); see the class
        docstring for what is released and how it is accounted."""
        delta = self._check_params()
        return self._run_private(self._sample, self._check_data(X), delta)

    def _plan_fit(self, fit, shape, clip, clipped, delta, eval_X=None):
        """The noise of this fit (calibrated on the public N, clip and beta) and its
        accounting."""
        T, beta = self.max_iter, self.topic_word_prior_
        eps_i = inherent_epsilon(clip, beta)
        eps_plain = plain_sweep_epsilon(shape[2], beta)
        noise = self._make_noise(eps_i, eps_plain, T, delta)
        schedule = self.noise_schedule
        return _SnapshotPlan(
            noise, lambda fitted: self._report(fit, fitted, noise, eps_i, eps_plain, T,
                                               clipped, delta),
            {"noise_scale_": noise.scale, "epsilon_inherent_": eps_i,
             "epsilon_per_iter_": (2.0 / noise.scale if self.mechanism.endswith("laplace")
                                   else None)},
            # every sweep follows a snapshot (schedule 'every'): the snapshot counts n_wk
            recount=schedule == "every", keep_clipped=schedule == "every",
            plain_until=T - 1 if schedule == "last" else 0, noisy_at=self._noisy_at,
            ledger=fit.ledger)


def __getattr__(name):
    # SubsampledGibbsLDA moved to models/subsampled_gibbs.py (which imports this module):
    # resolved on first use so that both import orders work.
    if name == "SubsampledGibbsLDA":
        from .subsampled_gibbs import SubsampledGibbsLDA
        return SubsampledGibbsLDA
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
