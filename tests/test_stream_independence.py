"""Independence of every secret child stream, by value: the streams a private Gibbs fit
spawns (token order, initial topics, snapshot noise, sweeps; one per block of documents,
one per block of snapshot rows) and those of every Dask partition start with distinct
draws; blocks of snapshot rows get different noise; a sweep task leaves its input as it
was (a retried task replays the same draws); unreleased snapshots are clipped at C."""
import copy
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from randomgen import AESCounter

from dptm import NoisyGibbsLDA, SubsampledGibbsLDA, _cgs
from dptm import distributed
from dptm.datasets import make_lda_corpus
from dptm.models import private_gibbs


def _first_draws(bit_generator):
    """The first four 64-bit words a copy of ``bit_generator`` would output."""
    twin = AESCounter()
    twin.state = copy.deepcopy(bit_generator.state)
    return tuple(np.random.Generator(twin).integers(0, 2 ** 63, size=4).tolist())


class _StreamSpy:
    """Every AES-CTR stream private_gibbs creates, and the bit generators each kernel call
    is given (one per block), with their first draws at the time."""

    def __init__(self, monkeypatch):
        self.created, self.kernel_lists = [], []
        spy = self

        def recording_aes(*args, **kwargs):
            bg = AESCounter(*args, **kwargs)
            spy.created.append(_first_draws(bg))
            return bg
        monkeypatch.setattr(private_gibbs, "AESCounter", recording_aes)
        for name in ("noisy_snapshot", "noisy_gibbs_sweep_blocks"):
            original = getattr(_cgs, name)

            def wrapped(*args, _original=original, _name=name, **kwargs):
                gens = [a for a in args if isinstance(a, list) and a
                        and all(isinstance(g, np.random.BitGenerator) for g in a)]
                for lst in gens:
                    spy.kernel_lists.append((_name, [id(g) for g in lst],
                                             [_first_draws(g) for g in lst]))
                return _original(*args, **kwargs)
            monkeypatch.setattr(_cgs, name, wrapped)


@pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning")
@pytest.mark.parametrize("rs", [None, 3])
@pytest.mark.parametrize("cls,kw", [
    (NoisyGibbsLDA, {"clip": 8.0}),
    (NoisyGibbsLDA, {"noise_schedule": "first"}),
    (SubsampledGibbsLDA, {"sample_rate": 0.5, "clip": 8.0}),
])
def test_every_child_stream_of_a_gibbs_fit_starts_differently(cls, kw, rs, monkeypatch):
    # 5,000 documents of 20 tokens: 25 sweep blocks; V = 30,000 words at K = 4: two
    # blocks of snapshot rows. Keys equal for two purposes (order and noise, say) or two
    # blocks would make their first draws equal.
    X, _, _ = make_lda_corpus(5000, 300, 4, doc_length=20, random_state=0)
    X = sp.hstack([sp.csr_matrix(X), sp.csr_matrix((5000, 29700), dtype=np.int64)]).tocsr()
    spy = _StreamSpy(monkeypatch)
    m = cls(4, max_iter=2, random_state=rs, **kw).fit(X)
    assert m.n_iter_ == 2
    assert len(spy.created) >= 4 + 25 + 2
    assert len(set(spy.created)) == len(spy.created)          # pairwise distinct
    lists = {}
    for name, ids, draws in spy.kernel_lists:
        lists.setdefault(name, (ids, draws))                     # the first call of each
    for name, (ids, draws) in lists.items():
        assert len(ids) >= 2, name
        assert len(set(ids)) == len(ids) and len(set(draws)) == len(draws), name
    snap_draws, sweep_draws = lists["noisy_snapshot"][1], lists["noisy_gibbs_sweep_blocks"][1]
    assert not set(snap_draws) & set(sweep_draws)


@pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning")
def test_blocks_of_snapshot_rows_get_different_noise():
    # words 300.. have no token: their snapshot rows are the noise alone. Rows of the
    # second block of snapshot rows must not repeat those of the first (a stream shared
    # by two blocks would give 100% equal rows; independent discrete Laplace rows of
    # scale 2 collide in a few % of rows at most).
    V, K = 50000, 3
    rows = -(-private_gibbs._SNAPSHOT_BLOCK_ENTRIES // K)
    assert V > 2 * rows
    X, _, _ = make_lda_corpus(50, 300, K, doc_length=20, random_state=1)
    X = sp.hstack([sp.csr_matrix(X), sp.csr_matrix((50, V - 300), dtype=np.int64)]).tocsr()
    m = NoisyGibbsLDA(K, noise_schedule="first", max_iter=1, random_state=2).fit(X)
    s = m.snapshot_
    a, b = s[1000:1000 + 2000], s[rows + 1000:rows + 3000]
    same = np.mean(np.all(a == b, axis=1))
    assert same < 0.2


def test_every_dask_partition_draws_its_own_streams(monkeypatch):
    # three partitions holding the SAME documents: with their own order / init / sweep
    # keys they sweep differently (with partition 0's keys reused, identically)
    block, _, _ = make_lda_corpus(40, 30, 3, doc_length=20, random_state=4)
    block = sp.csr_matrix(block)
    X = sp.vstack([block, block, block]).tocsr()
    keys_seen = []
    original = distributed._gibbs_init

    def recording(part, keys, *args):
        keys_seen.append(tuple(keys))
        return original(part, keys, *args)
    monkeypatch.setattr(distributed, "_gibbs_init", recording)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = NoisyGibbsLDA(3, clip=8.0, max_iter=3, random_state=5)
        distributed.fit_distributed(est, X, "serial", n_partitions=3)
    assert len(keys_seen) == 3
    flat_keys = [k for ks in keys_seen for k in ks]
    assert len(set(flat_keys)) == len(flat_keys) == 9
    thetas = np.split(est.doc_topic_, 3)
    assert not np.array_equal(thetas[0], thetas[1])
    assert not np.array_equal(thetas[0], thetas[2])
    assert not np.array_equal(thetas[1], thetas[2])


def test_a_gibbs_sweep_task_leaves_its_input_as_it_was():
    # a retried (or speculatively duplicated) task must start from the same state and
    # give the same result: the sweep returns a new state
    X, _, _ = make_lda_corpus(30, 25, 3, doc_length=20, random_state=6)
    X = sp.csr_matrix(X).astype(np.int64)
    keys = [11, 12, 13]
    part = distributed._gibbs_init(X, keys, 3, 1)
    before = {k: np.array(getattr(part, k), copy=True) for k in ("z", "n_wk", "n_dk", "n_k")}
    gens_before = [_first_draws(g.bit_generator) for g in part.gens]
    rng = np.random.default_rng(0)
    factor = (rng.random((25, 3)) + 0.1).astype(np.float32)
    mass = factor.astype(np.float64).sum(axis=1)
    a = distributed._gibbs_sweep(part, factor, mass, 0.3, 1.0, private_gibbs._NO_TABLE)
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(part, k), v, err_msg=k)
    assert [_first_draws(g.bit_generator) for g in part.gens] == gens_before
    b = distributed._gibbs_sweep(part, factor, mass, 0.3, 1.0, private_gibbs._NO_TABLE)
    np.testing.assert_array_equal(a.z, b.z)
    np.testing.assert_array_equal(a.n_wk, b.n_wk)
    assert not np.array_equal(a.z, part.z)          # the sweep did move tokens


# ----------------------------------------------------------------- clipped at C, always
@pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning")
@pytest.mark.parametrize("cls,kw", [(NoisyGibbsLDA, {}), (SubsampledGibbsLDA, {"sample_rate": 0.6}),
                                    (NoisyGibbsLDA, {"mechanism": "discrete_gaussian",
                                                     "noise_multiplier": 0.5})])
def test_every_snapshot_is_clipped_at_C(cls, kw, monkeypatch):
    # C = 2 far below the counts (documents of 40 tokens of 5 words). Every snapshot the
    # kernel draws, released or not, gets clip C; the int32 counts kept for an
    # unreleased one lie in [0, C]; and an untraced fit (those int32 counts) equals a
    # traced one (double snapshots) draw for draw.
    X, _, _ = make_lda_corpus(40, 5, 2, doc_length=40, random_state=7)
    C = 2.0
    seen = []
    original = _cgs.noisy_snapshot

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        clipped = kwargs.get("clipped")
        seen.append((args[6], None if clipped is None else (int(clipped.min()),
                                                           int(clipped.max()))))
        return out
    monkeypatch.setattr(_cgs, "noisy_snapshot", spy)
    fits = [cls(2, clip=C, max_iter=4, record_trace=trace, random_state=8, **kw).fit(X)
            for trace in (False, True)]
    assert [c for c, _ in seen] == [C] * len(seen) and len(seen) == 8
    ranges = [r for _, r in seen if r is not None]
    assert ranges and all(0 <= lo and hi <= C for lo, hi in ranges)
    assert any(hi == C for _, hi in ranges)
    np.testing.assert_array_equal(fits[0].components_, fits[1].components_)
    np.testing.assert_array_equal(fits[0].doc_topic_, fits[1].doc_topic_)


@pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning")
@pytest.mark.parametrize("sampling", ["poisson", "shuffle"])
@pytest.mark.parametrize("rs", [None, 3])
def test_every_vips_step_draws_from_its_own_stream(sampling, rs, monkeypatch):
    # PrivateOnlineLDA: the init, truncation, epoch-order and per-step streams are
    # children of the secret generator; every minibatch step (its Poisson sample and its
    # noise) must get a stream of its own
    from dptm.models import svi
    spawned, steps = [], []
    original_spawn = svi.spawn_generators

    def recording_spawn(rng, n):
        children = original_spawn(rng, n)
        spawned.extend(_first_draws(g.bit_generator) for g in children)
        return children
    original_step = svi.PrivateOnlineLDA._step

    def recording_step(self, indptr, indices, counts, rows, scale, g):
        steps.append((id(g), _first_draws(g.bit_generator)))
        return original_step(self, indptr, indices, counts, rows, scale, g)
    monkeypatch.setattr(svi, "spawn_generators", recording_spawn)
    monkeypatch.setattr(svi.PrivateOnlineLDA, "_step", recording_step)
    X = np.random.default_rng(0).poisson(0.8, (40, 15))
    svi.PrivateOnlineLDA(3, noise_multiplier=1.0, max_doc_length=30, batch_size=10,
                         sampling=sampling, max_iter=2, total_samples=40,
                         random_state=rs).fit(X)
    assert len(steps) == 8
    assert len(set(spawned)) == len(spawned) >= 5 + 8
    assert len({i for i, _ in steps}) == len({d for _, d in steps}) == 8
