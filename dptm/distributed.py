"""Exact private training on a Dask cluster.

:func:`fit_distributed` fits :class:`~dptm.models.private_vb.PrivateBatchLDA`,
:class:`~dptm.NoisyGibbsLDA` or :class:`~dptm.SubsampledGibbsLDA` on documents that stay on
the workers of a ``dask.distributed`` cluster, and sets exactly the fitted attributes
(``components_``, ``privacy_``, ``release()``, ...) that the estimator's own ``fit`` sets.
Nothing is approximated:

* private VB: the E-step is independent per document, so each partition's sum of
  clipped per-document statistics (``vb_statistic._expected_counts``, rounded down to the
  noise lattice) is computed where the partition lives; the driver adds the
  partition sums in the fixed partition order (exact: multiples of the lattice step),
  draws the lattice-Gaussian noise once, and broadcasts the new topics (user level,
  ``groups=``: partitions of whole users, each user's summed contribution clipped on
  the worker that holds the user);
* noisy-snapshot Gibbs: the word factor is fixed within a sweep, so each partition sweeps
  its own documents against the broadcast factor (``_cgs.noisy_gibbs_sweep_blocks``, the
  single-machine kernel) and returns its V x K topic-word counts; the driver sums them
  (integers: exact) and draws the next snapshot (``private_gibbs._Noise.snapshot``), in the
  estimator's own iteration loop (``_SnapshotGibbsBase._iterate``, with SUB-LDA's stopping
  rule ``subsampled_gibbs._StoppingRule``). No AD-LDA approximation: the sweep's conditionals read only the fixed word factor and the
  partition's own document counts.

Only statistics travel: the broadcast topics / word factor (K x V) to each worker and one
K x V (or V x K) statistic back per partition and step. The topic assignments, document
counts and token order stay on the workers.

Randomness. One private generator per fit on the driver (``dptm._random.private_generator``,
secret unless a seed is given: labelled test mode). The noise is drawn from it on the
driver only, after the statistics of every partition of the step are in. Each partition's
token order, initial topics and sweep draws come from its own AES-CTR streams keyed with 128
bits drawn from the driver's generator in partition order (partition 0 gets the keys of the
single-machine fit, so a one-partition distributed Gibbs fit is bitwise the single-machine
fit; PrivateBatchLDA draws nothing on the workers: with a seed, its distributed fit is
the single-machine fit).
The keys are task arguments, so a task that is retried or recomputed after a lost worker
replays exactly the same draws: a step is never run twice with different randomness, and
noise is never drawn for a partial step. A fit that fails (a task failing more than
``retries`` times, a lost partition that cannot be recomputed) raises, the estimator is
left unfitted (no ``components_``, no ``privacy_``), and the traceback's frames are cleared
of the generator and the noise drawn so far (``dptm._random.private_fit``).

Trust boundary: the cluster (driver, scheduler, workers and the network between them) is
inside it, like the memory of the single machine: workers hold the documents, tasks carry
the partitions' stream keys, partition statistics travel unnoised. Use TLS
(``tls://`` addresses, ``distributed.security.Security``) between machines. Dask's
dashboards and logs show task durations and sizes, which depend on the private data: they
are not part of the release. The release, the report and the accounting are those of the
single-machine fit.

``dask`` is an optional dependency (``pip install dptm[distributed]``), imported only when
a dask object is used; ``client='serial'`` runs the same code path in this process without
dask (reference for tests, and a way to run partitioned data sets on one machine).
"""
import copy
import math
import numbers
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp
from randomgen import AESCounter

from ._random import private_fit
from ._utils import check_count_matrix, check_int

__all__ = ["fit_distributed"]


# --------------------------------------------------------------------------- executors
class _SerialExecutor:
    """The distributed code path in this process: every 'task' runs when submitted."""

    def __init__(self):
        self.n_workers = 1
        self.log = None

    def scatter(self, obj, public=True):
        self._count("broadcast", obj, self.n_workers, public)
        return obj

    def submit(self, fn, *args):
        return fn(*args)

    def gather(self, futures, what="gathered", public=False):
        out = list(futures)
        self._count_gathered(what, out, public)
        return out

    def compute(self, delayed):
        import dask
        return list(dask.compute(*delayed, scheduler="sync"))

    def _count(self, what, obj, times, public):
        if self.log is None:
            return
        self.log[what] = self.log.get(what, 0) + _nbytes(obj) * times
        if public:
            # a fixed-shape array of public shape, counted for one worker
            pub = self.log["public"]
            pub["broadcast_per_worker"] += _nbytes(obj)

    def _count_gathered(self, what, out, public):
        if self.log is None:
            return
        for o in out:
            self._count(what, o, 1, False)
        if public and out:
            # one partition's fixed-shape statistic; how many partitions there are is not public
            pub = self.log["public"]
            pub["gathered_per_partition"] += _nbytes(out[0])
            pub["steps"] += 1


class _DaskExecutor(_SerialExecutor):
    """Tasks on a ``distributed.Client``; results gathered in submission order."""

    def __init__(self, client, retries):
        self.client = client
        self.retries = retries
        self.n_workers = max(1, len(client.scheduler_info().get("workers", {})))
        self.log = None

    def scatter(self, obj, public=True):
        self._count("broadcast", obj, self.n_workers, public)
        return self.client.scatter([obj], broadcast=True, hash=False)[0]

    def submit(self, fn, *args):
        # pure=False: a fresh key per call; retries: a failed task reruns with the same
        # arguments (stream keys included), so it replays the same draws
        return self.client.submit(fn, *args, pure=False, retries=self.retries)

    def gather(self, futures, what="gathered", public=False):
        out = self.client.gather(list(futures))
        self._count_gathered(what, out, public)
        return out

    def compute(self, delayed):
        return self.client.compute(list(delayed), retries=self.retries)


_LOG_NOTE = ("'broadcast', 'gathered' and 'metadata' are totals over the fit that depend on "
             "the private data (the scattered documents, the number and sizes of the "
             "partitions, doc_topic_): inside the trust boundary, never publish them. Only "
             "'public' (fixed-shape arrays of public shape, per worker and per partition) "
             "is the same on neighbouring data sets.")


def _nbytes(obj):
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (tuple, list)):
        return sum(_nbytes(o) for o in obj)
    if sp.issparse(obj):
        return obj.data.nbytes + obj.indices.nbytes + obj.indptr.nbytes
    return 8


def _executor(client, retries):
    if isinstance(client, str):
        if client != "serial":
            raise ValueError(f"client must be a distributed.Client, None or 'serial', got {client!r}")
        return _SerialExecutor()
    if client is None:
        try:
            from distributed import default_client
        except ImportError as exc:   # pragma: no cover - depends on the environment
            raise ImportError("fit_distributed needs dask.distributed (pip install "
                              "'dptm[distributed]'), or client='serial'") from exc
        client = default_client()   # ValueError when there is none
    if not (hasattr(client, "submit") and hasattr(client, "scatter") and hasattr(client, "gather")):
        raise TypeError(f"client must be a distributed.Client, None or 'serial', got "
                        f"{type(client).__name__}")
    return _DaskExecutor(client, retries)


# --------------------------------------------------------------------------- partitions
def _as_count_block(block, n_words):
    """A worker's partition as a canonical CSR int64 matrix (validated like ``fit``'s X;
    a partition without any token is allowed, the corpus as a whole is checked later)."""
    if sp.issparse(block):
        block = block.tocsr()
        empty = block.nnz == 0 or not np.any(block.data)
    else:
        arr = np.asarray(block)
        if arr.ndim != 2:
            raise ValueError(f"data partitions must be 2-D, got shape {arr.shape}")
        empty = arr.size == 0 or (np.all(np.isfinite(arr)) and not np.any(arr))
    if getattr(block, "shape", (0, 0))[1] != n_words:
        raise ValueError(f"every partition must have {n_words} columns, got {block.shape[1]}")
    if empty:
        return sp.csr_matrix(block.shape, dtype=np.int64)
    return check_count_matrix(block, name="data")


def _tokens_block(docs, vocab, n_words):
    """A partition of token lists (one list per document) as CSR counts over the public
    vocabulary; tokens outside it are dropped."""
    rows, cols = [], []
    for d, doc in enumerate(docs):
        if isinstance(doc, (str, bytes)):
            raise TypeError("each document of a dask.bag must be a sequence of tokens, got a string")
        if vocab is None:
            toks = list(doc)
            bad = next((t for t in toks if isinstance(t, (bool, np.bool_))
                        or not isinstance(t, numbers.Integral)), None)
            if bad is not None:
                # never cast: 1.7 -> 1, True -> 1, '3' -> 3 would be silent wrong answers
                raise TypeError(f"integer tokens (vocabulary={n_words}) must be integers, "
                                f"got {bad!r} in document {d} of a partition")
            ids = np.asarray(toks, dtype=np.int64)
            if ids.size and (ids.min() < 0 or ids.max() >= n_words):
                raise ValueError(f"integer tokens must lie in [0, vocabulary={n_words})")
        else:
            ids = np.fromiter((vocab[t] for t in doc if t in vocab), dtype=np.int64)
        rows.append(np.full(ids.size, d, dtype=np.int64))
        cols.append(ids)
    n = len(rows)
    r = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    c = np.concatenate(cols) if cols else np.zeros(0, np.int64)
    X = sp.csr_matrix((np.ones(r.size, dtype=np.int64), (r, c)), shape=(n, n_words))
    X.sum_duplicates()
    return X


def _has_tokens(X):
    return bool(X.nnz)      # a CSR block or a _UserBlock


def _partitions(ex, data, vocabulary, n_partitions):
    """Futures of the partitions (CSR int64 on the workers), in a fixed order, and V."""
    kind = type(data).__module__.split(".")[0]
    if kind == "dask":
        import dask.array as da
        import dask.bag as db
        if isinstance(data, da.Array):
            if data.ndim != 2:
                raise ValueError(f"data must be 2-D (documents x words), got {data.ndim}-D")
            V = int(data.shape[1])
            if math.isnan(V) or data.numblocks[1] != 1:
                data = data.rechunk({1: -1})
            blocks = list(data.to_delayed().ravel())
            futures = ex.compute(blocks)
            return [ex.submit(_as_count_block, f, V) for f in futures], V
        if isinstance(data, db.Bag):
            if vocabulary is None:
                raise ValueError("a dask.bag of token lists needs vocabulary= (the public "
                                 "vocabulary: a sequence of words, or the int V for integer tokens)")
            if isinstance(vocabulary, numbers.Integral) and not isinstance(vocabulary, bool):
                V, vocab = check_int(vocabulary, "vocabulary", minimum=1), None
            else:
                words = list(vocabulary)
                if not words or len(set(words)) != len(words):
                    raise ValueError("vocabulary must be a non-empty sequence of distinct words")
                V, vocab = len(words), {w: i for i, w in enumerate(words)}
            vocab_f = ex.scatter(vocab) if vocab is not None else None
            futures = ex.compute(list(data.to_delayed()))
            return [ex.submit(_tokens_block, f, vocab_f, V) for f in futures], V
        raise TypeError(f"data must be a dask.array, a dask.bag, a scipy sparse matrix or an "
                        f"array, got {type(data).__name__}")
    if vocabulary is not None:
        raise ValueError("vocabulary= is only used with a dask.bag of token lists")
    X = check_count_matrix(data, name="data")
    P = ex.n_workers if n_partitions is None else check_int(n_partitions, "n_partitions", minimum=1)
    bounds = np.linspace(0, X.shape[0], min(P, X.shape[0]) + 1).round().astype(np.int64)
    # the documents themselves: not public
    return ([ex.scatter(X[lo:hi], public=False) for lo, hi in zip(bounds[:-1], bounds[1:])],
            X.shape[1])


# --------------------------------------------------------------------------- private VB
def _vb_stat(X, beta, alpha, norm, granularity, presence):
    from .models.vb_statistic import _expected_counts
    if isinstance(X, _UserBlock):
        from .models.user_contributions import user_expected_counts
        return user_expected_counts(X.X, X.user_ptr, beta, alpha, norm, granularity=granularity,
                                    presence=presence)
    return _expected_counts(X, beta, alpha, norm, granularity=granularity, presence=presence)


class _UserBlock:
    """A partition of whole users: its documents ordered by user, their indptr and ids."""

    __slots__ = ("X", "user_ptr", "ids", "nnz")

    def __init__(self, block, groups):
        from .models.user_contributions import group_documents, user_id_array
        groups = user_id_array(groups)      # the same ids as the driver's check reads
        self.X, self.user_ptr = group_documents(block, groups)
        # the partition's distinct ids (python objects: 1 and '1' stay apart), for the
        # driver's whole-users check
        self.ids = list(set(groups.tolist()))
        self.nnz = self.X.nnz


def _user_block(block, groups):
    return _UserBlock(block, groups)


def _user_ids(part):
    return part.ids


def _user_partitions(ex, data, vocabulary, n_partitions, groups):
    """Futures of partitions of whole users (``_UserBlock``) and V. ``groups``: for an
    in-process matrix a 1-D array of ids (the matrix is split at user boundaries), for a dask.array a 1-D
    dask.array with the same row chunks or an array-like of its length, for a dask.bag a
    dask.bag of ids with the same partitions. Every user must lie in one partition."""
    kind = type(data).__module__.split(".")[0]
    gkind = type(groups).__module__.split(".")[0]
    if kind == "dask":
        parts, V = _partitions(ex, data, vocabulary, n_partitions)
        import dask.array as da
        import dask.bag as db
        if isinstance(data, da.Array):
            if isinstance(groups, da.Array):
                if groups.ndim != 1 or groups.chunks[0] != data.chunks[0]:
                    raise ValueError("groups must be a 1-D dask.array with the row chunks of data")
                gparts = ex.compute(list(groups.to_delayed().ravel()))
            else:
                from .models.user_contributions import user_id_array
                g = user_id_array(groups)
                rows = data.chunks[0]
                if g.ndim != 1 or any(math.isnan(r) for r in rows) or g.shape[0] != sum(rows):
                    raise ValueError(f"groups must have one user id per row of data "
                                     f"({sum(rows)}), got shape {g.shape}")
                bounds = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
                gparts = [g[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]
        elif isinstance(data, db.Bag):
            if not isinstance(groups, db.Bag) or groups.npartitions != data.npartitions:
                raise ValueError("groups must be a dask.bag of user ids with the partitions "
                                 "of data")
            gparts = ex.compute([g for g in groups.to_delayed()])
        out = [ex.submit(_user_block, p, gp) for p, gp in zip(parts, gparts)]
    else:
        if gkind == "dask":
            raise ValueError("groups must be an array-like of ids for an in-process matrix")
        if vocabulary is not None:
            raise ValueError("vocabulary= is only used with a dask.bag of token lists")
        from .models.user_contributions import check_groups, user_id_array
        X = check_count_matrix(data, name="data")
        V = X.shape[1]
        users = check_groups(groups, X.shape[0])
        g = user_id_array(groups)
        order = np.argsort(users, kind="stable")
        user_start = np.searchsorted(users[order], np.arange(int(users.max()) + 2)
                                     if users.size else [0])
        # the documents ordered by user, split into blocks of whole users
        P = ex.n_workers if n_partitions is None else check_int(n_partitions, "n_partitions",
                                                                 minimum=1)
        target = np.linspace(0, X.shape[0], P + 1)[1:-1]
        cuts = user_start[np.minimum(np.searchsorted(user_start, target), len(user_start) - 1)]
        bounds = np.concatenate([[0], cuts, [X.shape[0]]]).astype(np.int64)
        Xs, gs = X[order], g[order]
        out = [ex.submit(_user_block, ex.scatter(Xs[lo:hi], public=False), gs[lo:hi])
               for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]
    seen = {}
    for i, ids in enumerate(ex.gather([ex.submit(_user_ids, p) for p in out], what="metadata")):
        for u in ids:
            if seen.setdefault(u, i) != i:
                raise ValueError(f"groups: user {u!r} has documents in partitions {seen[u]} and "
                                 f"{i}; every partition must hold whole users")
    return out, V


def _fit_vb(est, ex, parts, V, unit="document"):
    # PrivateBatchLDA's own fit; only where the statistic is computed differs. Every
    # contribution is rounded down to the lattice, so the sum over partitions is exactly
    # the statistic of their union (unit "user": partitions of whole users, each user's
    # contribution clipped where the user lives).
    if not any(ex.gather([ex.submit(_has_tokens, p) for p in parts], what="metadata")):
        raise ValueError("data has no token: every document is empty")

    def statistic(beta, alpha, norm, g, presence):
        beta_f = ex.scatter(beta)
        stats = ex.gather([ex.submit(_vb_stat, p, beta_f, alpha, norm, g, presence)
                           for p in parts], public=True)
        # every partition's statistic is in: only now is noise drawn, once; the sum
        # (multiples of g) is exact in any order, taken in partition order anyway
        stat = np.zeros(beta.shape)
        for st in stats:
            stat += st
        return stat

    est._fit_releases(V, statistic, unit=unit)
    est.n_features_in_ = V
    return est


# --------------------------------------------------------------------------- Gibbs
class _GibbsPart:
    """One partition's sampler state; lives on its worker."""

    __slots__ = ("doc_ptr", "words", "z", "n_wk", "n_dk", "n_k", "gens", "block_ptr",
                 "word_search", "word_ptr", "word_tokens", "n_threads")

    def copy(self):
        new = _GibbsPart()
        for name in ("doc_ptr", "words", "block_ptr", "word_search", "word_ptr", "word_tokens",
                     "n_threads"):
            setattr(new, name, getattr(self, name))                 # read-only
        new.z, new.n_wk, new.n_dk, new.n_k = (self.z.copy(), self.n_wk.copy(),
                                              self.n_dk.copy(), self.n_k.copy())
        new.gens = copy.deepcopy(self.gens)
        return new


def _gibbs_init(X, keys, n_topics, n_threads):
    from .corpus import Corpus
    from .models.gibbs import GibbsState, token_blocks
    from .models.private_gibbs import (_BLOCK_TOKENS, _WORD_SEARCH_MIN_TOPICS,
                                       _child_generators, _visiting_order)
    order_rng, init_rng, sweep_rng = (np.random.Generator(AESCounter(key=k)) for k in keys)
    # X is validated already (_as_count_block / _tokens_block, or a row slice of the matrix
    # _partitions validated); a partition without tokens gives an empty corpus
    corpus = Corpus._from_counts(X, name="data")
    corpus = _visiting_order(corpus, order_rng)
    state = GibbsState(corpus, n_topics, init_rng)
    part = _GibbsPart()
    part.doc_ptr, part.words = corpus.doc_ptr, corpus.word_ids
    part.z, part.n_wk, part.n_dk, part.n_k = state.z, state.n_wk, state.n_dk, state.n_k
    # the blocked sweep of _SnapshotGibbsBase._sweeper: fixed token blocks (from the
    # document lengths), one child stream of the sweep stream per block
    part.block_ptr = token_blocks(corpus.doc_ptr, block_tokens=_BLOCK_TOKENS)
    part.gens = _child_generators(sweep_rng, part.block_ptr.size - 1)
    # the word-bucket search table of the fit's sweep (from _WORD_SEARCH_MIN_TOPICS topics),
    # rebuilt from each broadcast factor in _gibbs_sweep
    part.word_search = n_topics >= _WORD_SEARCH_MIN_TOPICS
    part.n_threads = n_threads
    part.word_ptr = part.word_tokens = None
    if n_threads > 1:
        part.word_tokens = np.argsort(corpus.word_ids, kind="stable").astype(np.int64)
        part.word_ptr = np.concatenate(([0], np.cumsum(np.bincount(
            corpus.word_ids, minlength=corpus.n_words)))).astype(np.int64)
    return part


def _gibbs_sweep(part, factor, mass, alpha, rate, table):
    """A new state after one sweep; the input state is left as it was, so a retried task
    starts from the same state and replays the same draws."""
    from . import _cgs
    from .models.private_gibbs import _WORD_BLOCK
    new = part.copy()
    if new.block_ptr.size < 2:      # a partition without documents: nothing to sweep
        return new
    word_blocks = None
    if new.word_search:
        # the table a single-process fit's snapshot pass fills (the same doubles: the
        # factor's running sums at each 16-topic block end), built here from the factor
        # rather than broadcast (V K / 2 more bytes per worker and snapshot); scratch
        word_blocks = np.empty((factor.shape[0], -(-factor.shape[1] // _WORD_BLOCK)))
        _cgs.word_block_sums(factor, word_blocks, new.n_threads)
    _cgs.noisy_gibbs_sweep_blocks(new.doc_ptr, new.words, new.z, new.n_wk, new.n_dk, new.n_k,
                                  factor, mass, alpha, rate, table, new.block_ptr,
                                  [g.bit_generator for g in new.gens], new.n_threads,
                                  word_ptr=new.word_ptr, word_tokens=new.word_tokens,
                                  word_blocks=word_blocks)
    return new


def _gibbs_counts(part):
    return part.n_wk


def _gibbs_shape(part):
    return (part.n_dk.shape[0], int(part.words.shape[0]))


def _gibbs_doc_counts(part):
    return part.n_dk


def _key(gen):
    # the key derivation of private_gibbs._child_generators
    return int.from_bytes(gen.bytes(16), "little")


def _sum_counts(counts, V, K):
    total = np.zeros((V, K), dtype=np.int64)
    for c in counts:          # fixed partition order (integers: exact anyway)
        total += c
    if total.size and total.max() > np.iinfo(np.int32).max:
        raise ValueError("a topic-word count exceeds the int32 range of the Gibbs kernels")
    return total.astype(np.int32)


def _fit_gibbs(est, ex, parts, V, eval_X, return_doc_topic):
    from .models.private_gibbs import NoisyGibbsLDA
    if isinstance(est, NoisyGibbsLDA):
        checked = est._check_params()
        if eval_X is not None:
            raise ValueError("eval_X is only used by SubsampledGibbsLDA's stopping rule")
        if est.noise_schedule == "last":
            raise ValueError("noise_schedule='last' sweeps on the live true counts, which do not "
                             "distribute exactly: use 'every' or 'first' with fit_distributed")
    else:
        checked = est._check_params(eval_X)
    est._check_common_params()
    if not isinstance(est.record_trace, (bool, np.bool_)):
        raise TypeError(f"record_trace must be a bool, got {type(est.record_trace).__name__}")
    if est.record_trace:
        raise ValueError("record_trace=True is not supported by fit_distributed (the traced "
                         "tokens live on the workers); use the estimator's own fit")
    est._warn_mechanism()
    return est._run_private(_sample_gibbs, est, ex, parts, V, checked, eval_X, return_doc_topic)


def _sample_gibbs(fit, est, ex, parts, V, checked, eval_X, return_doc_topic):
    """``_SnapshotGibbsBase._sample`` with the sweeps on the workers: the same draws, plan,
    loop and fitted attributes (``fit``: the estimator's ``PrivateFit``)."""
    from ._threads import effective_n_jobs
    from .models.private_gibbs import _snapshot_generators
    K = est.n_components
    alpha, beta = est.doc_topic_prior_, est.topic_word_prior_
    P = len(parts)
    gen = fit.generator
    # the draws of _SnapshotGibbsBase._sample after the transform seed: the order / init /
    # noise / sweep keys; partition 0 uses them, further partitions draw their own in order
    k_order, k_init, k_noise, k_sweep = (_key(gen) for _ in range(4))
    keys = [(k_order, k_init, k_sweep)] + [(_key(gen), _key(gen), _key(gen)) for _ in range(P - 1)]
    noise_gens = _snapshot_generators(np.random.Generator(AESCounter(key=k_noise)), V, K)
    n_threads = effective_n_jobs(getattr(est, "n_jobs", None))    # per worker; exact for any
    states = [ex.submit(_gibbs_init, p, kp, K, n_threads) for p, kp in zip(parts, keys)]
    shapes = ex.gather([ex.submit(_gibbs_shape, s) for s in states], what="metadata")
    D, N = sum(s[0] for s in shapes), sum(s[1] for s in shapes)
    if N == 0:
        raise ValueError("data has no token: every document is empty")
    clip, clipped = est._effective_clip(SimpleNamespace(n_tokens=N))
    plan = est._plan_fit(fit, (D, V, N), clip, clipped, checked, eval_X)

    # the estimator's own loop (_SnapshotGibbsBase._iterate), the sweeps on the workers
    def draw(it, snap):
        # every partition's counts are in before the noise is drawn
        n_wk = _sum_counts(ex.gather([ex.submit(_gibbs_counts, s) for s in states],
                                     public=True), V, K)
        return plan.noise.snapshot(n_wk, clip, beta, noise_gens, None, n_threads)

    broadcast = []

    def step(it, snap, noisy, rates):
        nonlocal states
        if noisy:
            broadcast[:] = (ex.scatter(snap[1]), ex.scatter(snap[2]),
                            ex.scatter(rates) if rates.size else rates)
        factor, mass, table_f = broadcast
        states = [ex.submit(_gibbs_sweep, s, factor, mass, alpha, plan.rate, table_f)
                  for s in states]

    snap, it = est._iterate(draw, step, noisy_at=plan.noisy_at, table=plan.table,
                            stop=plan.stop)
    # the last sweep's topic assignments are released (doc_topic_); wait for every
    # partition even when they are not gathered, so a failure raises before anything is set
    n_dk = None
    if return_doc_topic:
        n_dk = np.concatenate(ex.gather([ex.submit(_gibbs_doc_counts, s) for s in states]) or
                              [np.zeros((0, K), np.int32)])
    else:
        ex.gather([ex.submit(_gibbs_shape, s) for s in states], what="metadata")
    return est._fitted(fit, plan, (D, V, N), clip, it, snap[0], n_dk, None)


# --------------------------------------------------------------------------- entry point
@private_fit
def fit_distributed(estimator, data, client=None, *, vocabulary=None, n_partitions=None,
                    retries=1, eval_X=None, return_doc_topic=True, transfer_log=None,
                    groups=None):
    """Fit a private topic model on data partitioned over a Dask cluster, exactly.

    Parameters
    ----------
    estimator : PrivateBatchLDA, NoisyGibbsLDA or SubsampledGibbsLDA
        Unfitted or fitted; its parameters are used as in its own ``fit``. On success it
        gets the fitted attributes its ``fit`` sets (``components_``, ``topic_word_``,
        ``privacy_``, ``transform_seed_``, ...; Gibbs models also ``snapshot_``,
        ``doc_topic_``), so ``release()``, ``transform`` and the report work unchanged.
        Not supported: ``record_trace=True`` and NoisyGibbsLDA's ``noise_schedule='last'``
        (its plain sweeps read the live true counts, which do not distribute exactly).
    data : dask.array.Array, dask.bag.Bag, scipy sparse matrix or array-like
        * ``dask.array`` (documents x words) whose row chunks are scipy sparse or dense count
          blocks: one partition per row chunk, computed on the workers.
        * ``dask.bag`` whose elements are documents given as sequences of tokens (e.g.
          ``db.read_text('part-*.jsonl').map(json.loads).pluck('tokens')``): one partition
          per bag partition, mapped to ``vocabulary`` on the workers.
        * a matrix in this process: split into ``n_partitions`` row blocks and scattered
          (convenient for tests; the driver then holds the documents).
    client : distributed.Client, None or 'serial', default=None
        None: the current default client. 'serial': the same code path in this process
        (no dask needed for matrices).
    vocabulary : sequence of str or int, optional
        For a ``dask.bag``: the public vocabulary (column j is ``vocabulary[j]``; tokens
        outside it are dropped on the workers), or V when tokens are integer ids < V. Word-
        and document-level privacy assume it is public (not derived from the private text).
    n_partitions : int, optional
        Row blocks of an in-process matrix (default: the number of workers).
    retries : int, default=1
        Times a failed task is rerun (with the same arguments and stream keys: a rerun
        replays the same draws).
    eval_X : matrix, optional
        SubsampledGibbsLDA's held-out documents for ``convergence_tol`` (driver side).
    return_doc_topic : bool, default=True
        Gibbs models: gather the training documents' topic counts for ``doc_topic_``
        (D x K to the driver). False keeps them on the workers (``doc_topic_ = None``).
    transfer_log : dict, optional
        Filled with the payload bytes moved. ``transfer_log['public']`` holds what is the
        same on neighbouring data sets: ``broadcast_per_worker`` (the fixed-shape topics,
        word factors and tables sent to one worker over the fit), ``gathered_per_partition``
        (the fixed-shape statistics one partition returns) and ``steps`` (statistic rounds).
        The totals ``broadcast`` (counted once per worker, scattered documents included),
        ``gathered`` (all partitions, ``doc_topic_`` counts included) and ``metadata``
        depend on the private data (the number and sizes of the partitions): like Dask's
        dashboards they are inside the trust boundary and must not be published; the log's
        ``note`` says so.
    groups : array-like, dask.array or dask.bag, optional
        PrivateBatchLDA only: the user of each document, for its user-level fit
        (``fit(X, groups=...)``). For a matrix in this process, an array of ids (the rows
        are ordered by user and split into blocks of whole users); for a ``dask.array``, a
        1-D dask.array with the same row chunks or an array of its length; for a
        ``dask.bag``, a bag of ids with the same partitions. Every user's documents must
        lie in one partition (ValueError otherwise): a user's contribution is clipped as a
        whole where it lives, so any partitioning gives the single-process statistic.

    Returns
    -------
    estimator

    Privacy
    -------
    The estimator's own contract, unchanged: the same mechanisms, noise calibration,
    accounting and report (``str(privacy_)``) as its ``fit`` on the concatenated
    partitions. The noise is drawn once per step on the driver from the fit's private
    generator, after every partition's statistic of the step is in. Each partition's
    sampling draws (token order, initial topics, sweeps) come from its own stream keyed
    from that generator. What differs from one machine is where intermediate values live:
    the cluster (workers, scheduler, network) must be trusted as the single machine's memory
    is (see the module docstring). In test mode (a seed) partition 0 uses the streams of
    the single-machine fit: a one-partition Gibbs fit reproduces it bit for bit
    (PrivateBatchLDA: the same topics and report; it draws only on the driver).
    """
    from .models.private_gibbs import NoisyGibbsLDA, SubsampledGibbsLDA
    from .models.private_vb import PrivateBatchLDA
    retries = check_int(retries, "retries", minimum=0)
    if not isinstance(return_doc_topic, (bool, np.bool_)):
        raise TypeError(f"return_doc_topic must be a bool, got {type(return_doc_topic).__name__}")
    if not isinstance(estimator, (PrivateBatchLDA, NoisyGibbsLDA, SubsampledGibbsLDA)):
        raise TypeError("estimator must be a PrivateBatchLDA, NoisyGibbsLDA or SubsampledGibbsLDA, "
                        f"got {type(estimator).__name__}")
    ex = _executor(client, retries)
    if transfer_log is not None:
        if not isinstance(transfer_log, dict):
            raise TypeError("transfer_log must be a dict")
        transfer_log["note"] = _LOG_NOTE
        transfer_log["public"] = dict(broadcast_per_worker=0, gathered_per_partition=0, steps=0)
        ex.log = transfer_log
    from . import _progress
    if isinstance(estimator, PrivateBatchLDA) and eval_X is not None:
        raise ValueError("eval_X is only used by SubsampledGibbsLDA's stopping rule")
    if groups is not None and not isinstance(estimator, PrivateBatchLDA):
        raise ValueError("groups (user level) is only supported for PrivateBatchLDA")
    with _progress.fit_scope(estimator):      # progress reporting as in the estimator's fit
        if groups is not None:
            parts, V = _user_partitions(ex, data, vocabulary, n_partitions, groups)
        else:
            parts, V = _partitions(ex, data, vocabulary, n_partitions)
        if isinstance(estimator, PrivateBatchLDA):
            _fit_vb(estimator, ex, parts, V, "document" if groups is None else "user")
            n_docs = None          # D is not known to the driver (nor published)
        else:
            _fit_gibbs(estimator, ex, parts, V, eval_X, return_doc_topic)
            n_docs = SimpleNamespace(shape=(estimator._corpus_shape[0],))   # public here
    # the checks the estimator's own fit runs when it returns (vacuous guarantee, more
    # topics than documents), and the ledger of dptm.selection.spending
    from .models._base import _after_fit
    _after_fit(estimator, (n_docs,), {})
    return estimator
