"""Frozen draws: sha256 hashes of what every sweep kernel, noise sampler and seeded fit
produces, to show that a refactoring changed no draw.

    python tools/frozen_draws.py            # compare with the golden file, print differences
    python tools/frozen_draws.py --write    # rewrite the golden file (an intended change)
    python tools/frozen_draws.py --only snapshot   # the cases whose id contains "snapshot"
    python tools/frozen_draws.py --write --simd --only PrivateBatchLDA  # numpy-SIMD overrides

``tests/test_frozen_draws.py`` runs every case as its own test id. A case returns named
arrays; each is made C-contiguous, little-endian, of its own dtype (recorded in the hash
with its shape), and the sha256 is over those exact bytes. The hashes are those of one
platform's build (float low bits depend on the compiler and libm): on another platform the
test skips.
"""
import argparse
import hashlib
import json
import platform
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GOLDEN = ROOT / "tests" / "data" / "frozen_draws.json"
HEADER = (
    "Frozen draws of dptm's kernels and seeded fits (tools/frozen_draws.py). Regenerate with "
    "`python tools/frozen_draws.py --write` only for an intended change of draws, and say so "
    "in the commit. PrivateBatchLDA's entry (fit-PrivateBatchLDA) will be regenerated "
    "intentionally when its redesign lands."
)
TOPICS = (50, 100, 500, 1000)

CASES = {}


def case(name, topics=None):
    """Register ``fn(K)`` (or ``fn()`` when ``topics`` is None) as case ``name[-K]``."""
    def register(fn):
        if topics is None:
            CASES[name] = fn
        else:
            for K in topics:
                CASES[f"{name}-K{K}"] = (lambda K=K: fn(K))
        return fn
    return register


def platform_key():
    return f"{sys.platform}-{platform.machine()}"


def simd_key():
    """The widest vector extension numpy dispatches to here: numpy's exp and log (the
    PrivateBatchLDA fit's digamma and empirical-Bayes steps) differ in their last bits
    between its AVX512F and AVX2 loops, so those fits have one golden hash per key."""
    from numpy._core._multiarray_umath import __cpu_features__ as features
    return next((k for k in ("AVX512F", "AVX2") if features.get(k)), "baseline")


def expected(golden, name):
    """The golden hash of case ``name`` on this machine: its ``by_simd`` override for this
    SIMD level, else None when the case has overrides for other levels only (it follows
    numpy's SIMD loops: its plain hash is no one's), else its plain hash."""
    by_simd = golden.get("by_simd", {})
    mine = by_simd.get(simd_key(), {})
    if name in mine:
        return mine[name]
    if any(name in table for table in by_simd.values()):
        return None
    return golden["hashes"][name]


def digest(arrays):
    h = hashlib.sha256()
    for name, a in arrays:
        a = np.asarray(a)
        a = np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"), copy=False))
        h.update(f"{name}|{a.dtype.str}|{a.shape};".encode())
        h.update(a.tobytes())
    return h.hexdigest()


# ---------------------------------------------------------------- shared inputs

_CACHE = {}


def corpus():
    """A small synthetic corpus (about 3,000 tokens, V = 300), from dptm.datasets."""
    if "corpus" not in _CACHE:
        from dptm.corpus import Corpus
        from dptm.datasets import make_lda_corpus
        X, _, _ = make_lda_corpus(60, 300, 8, doc_length=(20, 80), random_state=2026)
        _CACHE["X"] = X
        _CACHE["corpus"] = Corpus.from_matrix(X)
    return _CACHE["corpus"]


def matrix():
    corpus()
    return _CACHE["X"]


def bg(seed):
    return np.random.default_rng(seed).bit_generator


def state(K, seed=1):
    from dptm.models.gibbs import GibbsState
    return GibbsState(corpus(), K, np.random.default_rng(seed))


def counts(s):
    return [("z", s.z), ("n_wk", s.n_wk), ("n_dk", s.n_dk), ("n_k", s.n_k)]


def two_parts():
    from dptm.models.gibbs import token_blocks
    return token_blocks(corpus().doc_ptr, n_parts=2)


# ---------------------------------------------------------------- the Gibbs sweeps

@case("dense-sweep", TOPICS)
def _dense(K):
    from dptm import _cgs
    c, s, g = corpus(), state(K), bg(10)
    for _ in range(3):
        _cgs.gibbs_sweep(c.doc_ptr, c.word_ids, s.z, s.n_wk, s.n_dk, s.n_k, 0.1, 0.05, g)
    return counts(s)


def _sparse_run(K, parts, n_threads):
    from dptm import _cgs
    c, s = corpus(), state(K)
    gens = [bg(20 + p) for p in range(parts.size - 1)]
    ws = _cgs.ADLDAWorkspace(parts.size - 1, c.n_words, K, True,
                             np.bincount(c.word_ids, minlength=c.n_words))
    for _ in range(3):
        _cgs.gibbs_sweep_sparse(c.doc_ptr, c.word_ids, s.z, s.n_wk, s.n_dk, s.n_k, 0.1, 0.05,
                                parts, gens, n_threads, ws)
    return counts(s)


@case("sparse-sweep", TOPICS)
def _sparse(K):
    return _sparse_run(K, np.array([0, corpus().n_docs], dtype=np.int64), 1)


@case("sparse-sweep-2parts", TOPICS)
def _sparse2(K):
    return _sparse_run(K, two_parts(), 2)


@case("parallel-sweep-2parts", TOPICS)
def _parallel(K):
    from dptm import _cgs
    c, s, parts = corpus(), state(K), two_parts()
    gens = [bg(30 + p) for p in range(parts.size - 1)]
    for _ in range(3):
        _cgs.gibbs_sweep_parallel(c.doc_ptr, c.word_ids, s.z, s.n_wk, s.n_dk, s.n_k, 0.1, 0.05,
                                  parts, gens, 2)
    return counts(s)


def _rounds_run(K, n_threads, sparse):
    from dptm import _cgs
    from dptm.models.gibbs import round_blocks
    c, s, parts = corpus(), state(K), two_parts()
    gens = [bg(40 + p) for p in range(parts.size - 1)]
    ws = _cgs.ADLDAWorkspace(parts.size - 1, c.n_words, K, sparse,
                             np.bincount(c.word_ids, minlength=c.n_words) if sparse else None)
    rounds = round_blocks(c.doc_ptr, parts, 6)
    for it in range(3):
        _cgs.gibbs_sweep_rounds(c.doc_ptr, c.word_ids, s.z, s.n_wk, s.n_dk, s.n_k, 0.1, 0.05,
                                rounds, gens, n_threads, sparse and it > 0, ws, 2)
    return counts(s)


@case("adlda-rounds-dense-1thread", TOPICS)
def _rounds_d1(K):
    return _rounds_run(K, 1, False)


@case("adlda-rounds-dense-2threads", TOPICS)
def _rounds_d2(K):
    return _rounds_run(K, 2, False)


@case("adlda-rounds-sparse-1thread", TOPICS)
def _rounds_s1(K):
    return _rounds_run(K, 1, True)


@case("adlda-rounds-sparse-2threads", TOPICS)
def _rounds_s2(K):
    return _rounds_run(K, 2, True)


@case("outputs", TOPICS)
def _outputs(K):
    from dptm import _cgs
    s = state(K, seed=3)
    V, D = s.n_wk.shape[0], s.n_dk.shape[0]
    comp, tw, dt = np.empty((K, V)), np.empty((K, V)), np.empty((D, K))
    _cgs.gibbs_outputs(s.n_wk, s.n_dk, 0.1, 0.05, comp, tw, dt, 2)
    return [("components", comp), ("topic_word", tw), ("doc_topic", dt)] + counts(s)


@case("fold-in", TOPICS)
def _fold_in(K):
    from dptm import _cgs
    c = corpus()
    wf = np.random.default_rng(K).dirichlet(np.full(c.n_words, 0.1), size=K).T.copy()
    gens = [bg(50 + d) for d in range(c.n_docs)]
    return [("theta", _cgs.fold_in(c.doc_ptr, c.word_ids, wf, 0.3, 8, 3, gens, 2))]


# ---------------------------------------------------------------- the noisy snapshot

_P, _Q = 9, 1             # discrete Gaussian variance 9 (sigma 3)
_DYADIC_A = 1633000       # dyadic discrete Laplace r = a / 2^21


def _snapshot_args(variant):
    """kind, scale, a, b, c, gauss_table, laplace_table of a snapshot variant."""
    from dptm import _gauss_inversion, _gauss_table, _laplace_table
    if variant == "none":
        return 0, 0.0, 0, 0, 0, None, None
    if variant == "laplace":
        return 1, 2.0, 0, 0, 0, None, None
    if variant == "gaussian":
        return 2, 3.0, 0, 0, 0, None, None
    if variant == "discrete-laplace":
        return 3, 0.0, 7, 2, 0, None, None
    if variant == "discrete-gaussian":
        return 4, 0.0, _P, _Q, 4, None, None
    if variant == "discrete-gaussian-inversion":
        return 4, 0.0, _P, _Q, 4, _gauss_inversion.inversion_table(_P, _Q), None
    if variant == "discrete-gaussian-alias":
        return 4, 0.0, _P, _Q, 4, _gauss_table.gauss_table(_P, _Q), None
    if variant == "dyadic-laplace":
        return 5, 0.0, _DYADIC_A, 0, 0, None, _laplace_table.dyadic_table(_DYADIC_A)
    raise ValueError(variant)


SNAPSHOT_VARIANTS = ("none", "laplace", "gaussian", "discrete-laplace", "discrete-gaussian",
                     "discrete-gaussian-inversion", "discrete-gaussian-alias", "dyadic-laplace")


def snapshot(n_wk, variant, gens, *, clip=6.0, beta=0.05, n_threads=1, blocks=False,
             clipped=False, recount=None):
    from dptm import _cgs
    kind, scale, a, b, c, gt, lt = _snapshot_args(variant)
    V, K = n_wk.shape
    out = (np.zeros((V, K)), np.empty((V, K), dtype=np.float32), np.empty(V))
    wb = np.empty((V, -(-K // 16))) if blocks else None
    cl = np.empty((V, K), dtype=np.int32) if clipped else None
    topics, word_ptr, word_tokens = recount if recount is not None else (None,) * 3
    _cgs.noisy_snapshot(n_wk, kind, scale, a, b, c, clip, beta, *out, gens, n_threads, gt, lt,
                        word_blocks=wb, clipped=cl, topics=topics, word_ptr=word_ptr,
                        word_tokens=word_tokens)
    arrays = [("snapshot", out[0]), ("word_factor", out[1]), ("word_mass", out[2])]
    if wb is not None:
        arrays.append(("word_blocks", wb))
    if cl is not None:
        arrays.append(("clipped", cl))
    return arrays


def _snapshot_case(variant):
    @case(f"snapshot-{variant}", TOPICS)
    def run(K):
        return snapshot(state(K, seed=4).n_wk, variant, bg(60))


for _v in SNAPSHOT_VARIANTS:
    _snapshot_case(_v)


@case("snapshot-blocks-2threads-dyadic", TOPICS)
def _snapshot_blocks(K):
    gens = [bg(70 + j) for j in range(5)]
    return snapshot(state(K, seed=4).n_wk, "dyadic-laplace", gens, n_threads=2, blocks=True)


@case("snapshot-blocks-2threads-gauss-inversion", TOPICS)
def _snapshot_blocks_gi(K):
    gens = [bg(80 + j) for j in range(3)]
    return snapshot(state(K, seed=4).n_wk, "discrete-gaussian-inversion", gens, n_threads=2,
                    blocks=True)


@case("snapshot-clipped-discrete-gaussian-alias", TOPICS)
def _snapshot_clipped(K):
    return snapshot(state(K, seed=4).n_wk, "discrete-gaussian-alias", bg(61), clipped=True)


@case("snapshot-clipped-recount-dyadic", TOPICS)
def _snapshot_recount(K):
    c, s = corpus(), state(K, seed=4)
    word_tokens = np.argsort(c.word_ids, kind="stable").astype(np.int64)
    word_ptr = np.concatenate(([0], np.cumsum(np.bincount(c.word_ids, minlength=c.n_words))))
    junk = np.zeros_like(s.n_wk)     # not read: the counts come from the topics
    return snapshot(junk, "dyadic-laplace", [bg(90), bg(91)], n_threads=2, clipped=True,
                    blocks=True, recount=(s.z, word_ptr.astype(np.int64), word_tokens))


# ---------------------------------------------------------------- the private sweep

def _private_sweep(K, mode, *, n_threads=1, blocks=True, updates="in-place", single=False):
    """Three noisy sweeps, each from a fresh dyadic-Laplace snapshot of the live counts."""
    from dptm import _cgs
    from dptm.models.gibbs import token_blocks
    c, s = corpus(), state(K, seed=5)
    block_ptr = token_blocks(c.doc_ptr, block_tokens=700)
    gens = [bg(100 + b) for b in range(block_ptr.size - 1)]
    snap_gens = [bg(200 + j) for j in range(2)]
    word_tokens = np.argsort(c.word_ids, kind="stable").astype(np.int64)
    word_ptr = np.concatenate(([0], np.cumsum(np.bincount(c.word_ids, minlength=c.n_words)))
                              ).astype(np.int64)
    rate, table = {"all": (1.0, None), "geometric": (0.5, None), "runs": (0.9, None),
                   "table": (0.5, "adaptive")}[mode]
    out = []
    n = []
    for it in range(3):
        arrays = snapshot(s.n_wk, "dyadic-laplace", snap_gens, blocks=blocks)
        snap = dict(arrays)
        if table == "adaptive":
            pos = np.maximum(snap["snapshot"], 0.0)
            rate_table = np.where(pos > np.median(pos), 0.8, 0.2)
        else:
            rate_table = np.zeros((0, 0))
        wb = snap.get("word_blocks")
        if single:
            n.append(_cgs.noisy_gibbs_sweep(c.doc_ptr, c.word_ids, s.z, s.n_wk, s.n_dk, s.n_k,
                                            snap["word_factor"], snap["word_mass"], 0.1, rate,
                                            rate_table, gens[0]))
            continue
        kw = {"word_blocks": wb}
        if updates == "by-word":
            kw.update(word_ptr=word_ptr, word_tokens=word_tokens)
        elif updates == "thread-counts":
            kw.update(thread_counts=np.zeros((n_threads - 1, c.n_words * K), dtype=np.int32))
        n.append(_cgs.noisy_gibbs_sweep_blocks(
            c.doc_ptr, c.word_ids, s.z, s.n_wk, s.n_dk, s.n_k, snap["word_factor"],
            snap["word_mass"], 0.1, rate, rate_table, block_ptr, gens, n_threads, **kw))
        out = arrays
    return counts(s) + [("n_sampled", np.array(n, dtype=np.int64))] + out


@case("private-sweep-single", TOPICS)
def _ps_single(K):
    return _private_sweep(K, "all", single=True)


@case("private-sweep-blocks-linear", TOPICS)
def _ps_linear(K):
    return _private_sweep(K, "all", blocks=False)


@case("private-sweep-blocks-search", TOPICS)
def _ps_search(K):
    return _private_sweep(K, "all")


@case("private-sweep-2threads-by-word", TOPICS)
def _ps_byword(K):
    return _private_sweep(K, "all", n_threads=2, updates="by-word")


@case("private-sweep-2threads-thread-counts", TOPICS)
def _ps_tc(K):
    return _private_sweep(K, "all", n_threads=2, updates="thread-counts")


@case("subsampled-sweep-geometric", TOPICS)
def _ss_geo(K):
    return _private_sweep(K, "geometric", n_threads=2)


@case("subsampled-sweep-runs", TOPICS)
def _ss_runs(K):
    return _private_sweep(K, "runs")


@case("subsampled-sweep-rate-table", TOPICS)
def _ss_table(K):
    return _private_sweep(K, "table", n_threads=2, updates="by-word")


@case("subsampled-sweep-single-geometric", TOPICS)
def _ss_single(K):
    return _private_sweep(K, "geometric", single=True)


@case("private-sweep-recount", TOPICS)
def _ps_recount(K):
    """The sweep leaves the counts to the next snapshot, which counts them from z."""
    from dptm import _cgs
    from dptm.models.gibbs import token_blocks
    c, s = corpus(), state(K, seed=6)
    block_ptr = token_blocks(c.doc_ptr, block_tokens=700)
    gens = [bg(300 + b) for b in range(block_ptr.size - 1)]
    word_tokens = np.argsort(c.word_ids, kind="stable").astype(np.int64)
    word_ptr = np.concatenate(([0], np.cumsum(np.bincount(c.word_ids, minlength=c.n_words)))
                              ).astype(np.int64)
    snap_gens = [bg(310), bg(311)]
    arrays = snapshot(s.n_wk, "discrete-gaussian-inversion", snap_gens, blocks=True)
    for _ in range(3):
        d = dict(arrays)
        _cgs.noisy_gibbs_sweep_blocks(c.doc_ptr, c.word_ids, s.z, s.n_wk, s.n_dk, s.n_k,
                                      d["word_factor"], d["word_mass"], 0.1, 1.0,
                                      np.zeros((0, 0)), block_ptr, gens, 2,
                                      word_blocks=d["word_blocks"], recount=True)
        arrays = snapshot(s.n_wk, "discrete-gaussian-inversion", snap_gens, blocks=True,
                          clipped=True, recount=(s.z, word_ptr, word_tokens), n_threads=2)
    return [("z", s.z), ("n_dk", s.n_dk), ("n_k", s.n_k)] + arrays


@case("word-block-sums", TOPICS)
def _wbs(K):
    from dptm import _cgs
    wf = np.random.default_rng(K).random((300, K), dtype=np.float32)
    out = np.empty((300, -(-K // 16)))
    _cgs.word_block_sums(wf, out, 2)
    return [("word_blocks", out)]


# ---------------------------------------------------------------- the exact samplers

_N_NOISE = 20000


@case("fill-noise-laplace")
def _fill_laplace():
    from dptm import _cgs
    out = np.empty(_N_NOISE)
    _cgs.fill_noise(out, 1, 2.5, bg(400))
    return [("noise", out)]


@case("fill-noise-gaussian")
def _fill_gauss():
    from dptm import _cgs
    out = np.empty(_N_NOISE)
    _cgs.fill_noise(out, 2, 2.5, bg(401))
    return [("noise", out)]


@case("fill-discrete-laplace")
def _fill_dlap():
    from dptm import _cgs
    arrays = []
    for i, (t, s) in enumerate([(1, 1), (7, 2), (3, 11), (1000, 3)]):
        out = np.empty(_N_NOISE, dtype=np.int64)
        _cgs.fill_discrete_laplace(out, t, s, bg(410 + i))
        arrays.append((f"noise-{t}-{s}", out))
    return arrays


@case("fill-discrete-laplace-dyadic")
def _fill_dyadic():
    from dptm import _cgs, _laplace_table
    arrays = []
    for i, a in enumerate([1, 1048576, _DYADIC_A, 2090000]):
        out = np.empty(_N_NOISE, dtype=np.int64)
        _cgs.fill_discrete_laplace_dyadic(out, a, bg(420 + i))
        arrays.append((f"noise-{a}", out))
        out = np.empty(_N_NOISE, dtype=np.int64)
        _cgs.fill_discrete_laplace_dyadic(out, a, bg(430 + i), _laplace_table.dyadic_table(a))
        arrays.append((f"noise-{a}-table", out))
    return arrays


_GAUSS_PARAMS = [(1, 4, 1), (9, 1, 4), (50, 3, 5), (1000000, 7, 378)]


@case("fill-discrete-gaussian")
def _fill_dg():
    from dptm import _cgs
    arrays = []
    for i, (p, q, t) in enumerate(_GAUSS_PARAMS):
        out = np.empty(_N_NOISE, dtype=np.int64)
        _cgs.fill_discrete_gaussian(out, p, q, t, bg(440 + i))
        arrays.append((f"noise-{p}-{q}", out))
    return arrays


@case("fill-discrete-gaussian-inversion")
def _fill_dg_inv():
    from dptm import _cgs, _gauss_inversion
    arrays = []
    for i, (p, q, _) in enumerate(_GAUSS_PARAMS):
        out = np.empty(_N_NOISE, dtype=np.int64)
        _cgs.fill_discrete_gaussian_inversion(out, p, q, bg(450 + i))
        arrays.append((f"noise-{p}-{q}", out))
        out = np.empty(_N_NOISE, dtype=np.int64)
        _cgs.fill_discrete_gaussian_inversion(out, p, q, bg(460 + i),
                                              _gauss_inversion.inversion_table(p, q))
        arrays.append((f"noise-{p}-{q}-table", out))
    return arrays


@case("fill-discrete-gaussian-alias")
def _fill_dg_alias():
    from dptm import _cgs, _gauss_table
    arrays = []
    for i, (p, q, _) in enumerate(_GAUSS_PARAMS[1:]):
        out = np.empty(_N_NOISE, dtype=np.int64)
        _cgs.fill_discrete_gaussian_table(out, _gauss_table.gauss_table(p, q), bg(470 + i))
        arrays.append((f"noise-{p}-{q}", out))
    return arrays


@case("lazy-margin-resolver")
def _lazy_margin():
    """The exact resolver's rational path, forced on every decision by a margin of 1."""
    from dptm import _cgs
    arrays = []
    old = _cgs._set_lazy_margin(1.0)
    try:
        out = np.empty(1500, dtype=np.int64)
        _cgs.fill_discrete_laplace(out, 7, 2, bg(480))
        arrays.append(("laplace", out))
        out = np.empty(1500, dtype=np.int64)
        _cgs.fill_discrete_gaussian(out, 50, 3, 5, bg(481))
        arrays.append(("gaussian", out))
    finally:
        _cgs._set_lazy_margin(old)
    return arrays


@case("shuffle-segments")
def _shuffle():
    from dptm import _cgs
    c = corpus()
    values = np.arange(c.n_tokens, dtype=np.int64)
    _cgs.shuffle_segments(c.doc_ptr, values, bg(490))
    return [("values", values)]


@case("uniform-sum")
def _uniform_sum():
    from dptm import _cgs
    return [("sum", np.array([_cgs.uniform_sum(5000, bg(495))], dtype=np.float64))]


@case("mechanisms")
def _mechanisms():
    from dptm import mechanisms as m
    rng = np.random.default_rng(500)
    x = np.random.default_rng(501).normal(size=(40, 25)) * 10
    arrays = [
        ("laplace", m.laplace_noise((300,), 1.5, rng)),
        ("gaussian", m.gaussian_noise((300,), 1.5, rng)),
        ("discrete_laplace", m.discrete_laplace_noise((300,), 1.5, rng)),
        ("discrete_laplace_large", m.discrete_laplace_noise((300,), 300.0, rng)),
        ("discrete_gaussian", m.discrete_gaussian_noise((300,), 1.5, rng)),
        ("discrete_gaussian_large", m.discrete_gaussian_noise((300,), 2000.0, rng)),
    ]
    out, g, sc = m.lattice_gaussian(x, 2.0, rng)
    arrays += [("lattice_gaussian", out), ("lattice_gaussian_g", np.array([g, sc]))]
    out, g, sc = m.lattice_laplace(x, 2.0, rng)
    arrays += [("lattice_laplace", out), ("lattice_laplace_g", np.array([g, sc]))]
    return arrays


# ---------------------------------------------------------------- the SVI kernels

def _svi_inputs(K):
    X = matrix()
    rng = np.random.default_rng(K + 7)
    beta = rng.dirichlet(np.full(X.shape[1], 0.1), size=K)
    return (X.indptr.astype(np.int64), X.indices.astype(np.int32),
            X.data.astype(np.float64), beta)


@case("zeta", TOPICS)
def _zeta(K):
    from dptm import _svi
    indptr, indices, data, beta = _svi_inputs(K)
    arrays = []
    # capped: plain EM and SQUAREM converge slowly where K exceeds a document's words
    for name, kw in [("newton", {"max_iter": 300}), ("squarem", {"newton": False, "max_iter": 60}),
                     ("em", {"accelerate": False, "max_iter": 60})]:
        z, theta, n_iter = _svi.zeta_batch(indptr, indices, data, np.ascontiguousarray(beta.T),
                                           n_threads=2, **kw)
        arrays += [(f"zeta-{name}", z), (f"theta-{name}", theta), (f"n_iter-{name}", n_iter)]
    return arrays


@case("e-step", TOPICS)
def _e_step(K):
    from dptm import _svi
    indptr, indices, data, beta = _svi_inputs(K)
    lam_t = np.ascontiguousarray(beta.T * 50 + 0.1)
    eb = np.empty_like(lam_t)
    _svi.exp_dirichlet_expectation_t(lam_t, eb)
    D = indptr.size - 1
    gamma = np.random.default_rng(K).gamma(100.0, 0.01, size=(D, K))
    sstats = np.zeros_like(lam_t)
    bound = np.empty(D)
    n_iter = _svi.lda_e_step(indptr, indices, data, np.arange(D, dtype=np.int64), eb, gamma,
                             1.0 / K, 1e-3, 100, sstats, bound, 2)
    dg = _svi.digamma_array(np.linspace(0.01, 30.0, 1000))
    return [("exp_elog_beta_t", eb), ("gamma", gamma), ("sstats", sstats), ("bound", bound),
            ("n_iter", np.asarray(n_iter)), ("digamma", dg)]


# ---------------------------------------------------------------- seeded fits

def _fit(model):
    X = matrix()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X)
    arrays = [("components", model.components_)]
    for attr in ("doc_topic_", "snapshot_"):
        if getattr(model, attr, None) is not None:
            arrays.append((attr, getattr(model, attr)))
    return arrays


@case("fit-GibbsLDA-dense")
def _fit_gibbs():
    from dptm import GibbsLDA
    return _fit(GibbsLDA(10, max_iter=5, random_state=0))


@case("fit-GibbsLDA-sparse-2jobs")
def _fit_gibbs_sparse():
    from dptm import GibbsLDA
    return _fit(GibbsLDA(200, max_iter=4, random_state=0, n_jobs=2))


@case("fit-GibbsLDA-sparse-1job")
def _fit_gibbs_sparse1():
    from dptm import GibbsLDA
    return _fit(GibbsLDA(200, max_iter=4, random_state=0))


@case("fit-NoisyGibbsLDA-discrete_laplace")
def _fit_noisy_dl():
    from dptm import NoisyGibbsLDA
    return _fit(NoisyGibbsLDA(10, epsilon_per_iter=1.0, max_iter=4, random_state=0))


@case("fit-NoisyGibbsLDA-discrete_gaussian-2jobs")
def _fit_noisy_dg():
    from dptm import NoisyGibbsLDA
    return _fit(NoisyGibbsLDA(100, noise_multiplier=2.0, mechanism="discrete_gaussian", clip=20,
                              max_iter=4, random_state=0, n_jobs=2))


@case("fit-NoisyGibbsLDA-laplace")
def _fit_noisy_l():
    from dptm import NoisyGibbsLDA
    return _fit(NoisyGibbsLDA(10, epsilon_per_iter=0.5, mechanism="laplace", max_iter=3,
                              random_state=0))


@case("fit-SubsampledGibbsLDA")
def _fit_sub():
    from dptm import SubsampledGibbsLDA
    return _fit(SubsampledGibbsLDA(10, sample_rate=0.3, max_iter=4, random_state=0))


@case("fit-SubsampledGibbsLDA-adaptive-2jobs")
def _fit_sub_adaptive():
    from dptm import SubsampledGibbsLDA
    return _fit(SubsampledGibbsLDA(200, sample_rate=0.5, adaptive=True, accounting="paper",
                                   adaptive_v=1.5, adaptive_q=0.5, max_iter=3, random_state=0,
                                   n_jobs=2))


@case("fit-PrivateOnlineLDA")
def _fit_online():
    from dptm import PrivateOnlineLDA
    # total_samples = D: the rate and steps (and so the draws) of the former undeclared plan
    return _fit(PrivateOnlineLDA(10, batch_size=16, max_iter=2, noise_multiplier=1.0, max_doc_length=80,
                                 total_samples=matrix().shape[0], random_state=0))


@case("fit-PrivateOnlineLDA-shuffle-epsilon")
def _fit_online_shuffle():
    from dptm import PrivateOnlineLDA
    model = PrivateOnlineLDA(10, batch_size=16, max_iter=2, sampling="shuffle", target_epsilon=4.0,
                             target_delta=1e-5, max_doc_length=80, random_state=1)
    return _fit(model) + [("transform_seed", np.array([model.transform_seed_]))]


@case("fit-PrivateOnlineLDA-partial")
def _fit_online_partial():
    from dptm import PrivateOnlineLDA
    X = matrix()
    model = PrivateOnlineLDA(10, batch_size=16, max_iter=3, noise_multiplier=1.0,
                             max_doc_length=80, random_state=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rows in (slice(0, 20), slice(20, 40), slice(40, 60)):
            model.partial_fit(X[rows])
    return [("components", model.components_),
            ("transform_seed", np.array([model.transform_seed_]))]


def _fit_topicdp(model):
    X = matrix()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, groups=np.arange(X.shape[0]) // 2)
    return [("components", model.components_), ("topic_word", model.topic_word_),
            ("transform_seed", np.array([model.transform_seed_]))]


@case("fit-TopicDP-reference-keywords")
def _fit_topicdp_reference():
    # the wrapped fit, sensitivity sampling on a reference corpus, the exact Gaussian
    from dptm import GibbsLDA, TopicDP
    # groups= needs the reference users: each of the 30 reference documents its own user
    # (the same draws as before reference_groups was required)
    return _fit_topicdp(TopicDP(GibbsLDA(4, max_iter=5), gamma=0.3, reference_X=matrix()[:30],
                                reference_groups=np.arange(30), output="keywords",
                                n_top_topics=3, n_top_words=6, random_state=0))


@case("fit-TopicDP-laplace")
def _fit_topicdp_laplace():
    from dptm import GibbsLDA, TopicDP
    return _fit_topicdp(TopicDP(GibbsLDA(4, max_iter=5), mechanism="laplace", random_state=1))


@case("fit-PrivateBatchLDA")
def _fit_batch():
    from dptm import PrivateBatchLDA
    return _fit(PrivateBatchLDA(10, target_epsilon=2.0, random_state=0))


@case("fit-PrivateBatchLDA-init")
def _fit_batch_init():
    # public starting topics: the histogram and the one count release
    from dptm import PrivateBatchLDA
    init = np.random.default_rng(3).random((10, matrix().shape[1])) + 0.1
    return _fit(PrivateBatchLDA(10, target_epsilon=2.0, init_topics=init, random_state=0))


def _fit_users(model, groups):
    X = matrix()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, groups=groups)
    return [("components", model.components_),
            ("clip_n_users", np.array([model.clip_norm_, model.n_users_estimate_]))]


@case("fit-PrivateBatchLDA-users")
def _fit_batch_users():
    # 60 documents of 16 users, the most active with 24 (a heavy-tailed toy)
    from dptm import PrivateBatchLDA
    groups = np.r_[[0] * 24, [1] * 12, [2] * 6, [3] * 3, np.arange(4, 16)][
        np.random.default_rng(5).permutation(57)]
    groups = np.r_[groups, 13, 14, 15]
    return _fit_users(PrivateBatchLDA(10, target_epsilon=2.0, random_state=0), groups)


@case("fit-PrivateBatchLDA-users-eps4-strings")
def _fit_batch_users_eps4():
    from dptm import PrivateBatchLDA
    groups = np.array([f"author-{d % 7 if d < 40 else d}" for d in range(60)])
    return _fit_users(PrivateBatchLDA(10, target_epsilon=4.0, random_state=0), groups)


# ---------------------------------------------------------------- driver

def compute(name):
    return digest(CASES[name]())


def load():
    return json.loads(GOLDEN.read_text())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the golden file")
    ap.add_argument("--only", default="", help="the cases whose id contains this")
    ap.add_argument("--simd", action="store_true",
                    help="with --write: record the hashes as this SIMD level's overrides "
                         "(by_simd), for the fits whose float low bits follow numpy's loops")
    args = ap.parse_args(argv)
    names = [n for n in CASES if args.only in n]
    got = {n: compute(n) for n in names}
    if args.write and args.simd:
        golden = load()
        golden.setdefault("by_simd", {}).setdefault(simd_key(), {}).update(got)
        GOLDEN.write_text(json.dumps(golden, indent=1) + "\n")
        print(f"wrote {len(got)} hashes to by_simd[{simd_key()!r}]")
        return 0
    if args.write:
        old = load()["hashes"] if GOLDEN.exists() and args.only else {}
        old.update(got)
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        by_simd = load().get("by_simd", {}) if GOLDEN.exists() else {}
        GOLDEN.write_text(json.dumps({"header": HEADER, "platform": platform_key(),
                                      "hashes": dict(sorted(old.items())),
                                      "by_simd": by_simd}, indent=1) + "\n")
        print(f"wrote {len(got)} hashes to {GOLDEN.relative_to(ROOT)}")
        return 0
    golden = load()
    unrecorded = [n for n in names if expected(golden, n) is None]
    for n in unrecorded:
        print(f"NO HASH {n}: recorded for SIMD levels {sorted(golden['by_simd'])}, this "
              f"machine is {simd_key()} (record with --write --simd --only {n})")
    bad = [n for n in names if n not in unrecorded and expected(golden, n) != got[n]]
    for n in bad:
        print(f"DIFFERS {n}: golden {expected(golden, n)} now {got[n]}")
    checked = len(names) - len(unrecorded)
    print(f"{checked - len(bad)} of {checked} cases unchanged"
          + (f" ({len(unrecorded)} with no hash for this SIMD level)" if unrecorded else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
