"""The snapshot kernel's word-factor pass, bitwise against a plain loop (issue #16: the
pass runs four rows at a time; every row and its sums must stay exactly as before)."""
import numpy as np
import pytest

from dptm import _cgs
from dptm.models import private_gibbs as pg
from dptm.noise import gauss_table


def reference(snap, clip, beta, row_blocks):
    """The documented computation, one scalar at a time: topic totals summed per row block
    in row order (the first block from V beta), blocks then added in block order; word
    factor float((min(max(s, 0), clip) + beta) * (1 / total)); mass and running sums in
    double, in topic order (returned at the 16-topic block ends: the search table)."""
    V, K = snap.shape
    tot = np.empty(K)
    for k in range(K):
        parts = []
        for b, (lo, hi) in enumerate(row_blocks):
            acc = V * beta if b == 0 else 0.0
            for w in range(lo, hi):
                acc += max(snap[w, k], 0.0)
            parts.append(acc)
        t = parts[0]
        for p in parts[1:]:
            t += p
        tot[k] = 1.0 / t
    F = np.empty((V, K), dtype=np.float32)
    cum = np.empty((V, K))
    mass = np.empty(V)
    for w in range(V):
        m = 0.0
        for k in range(K):
            x = min(max(snap[w, k], 0.0), clip)
            F[w, k] = np.float32((x + beta) * tot[k])
            m += float(F[w, k])
            cum[w, k] = m
        mass[w] = m
    return F, mass, cum[:, np.minimum(np.arange(15, K + 15, 16), K - 1)]


@pytest.mark.parametrize("V", [1, 3, 4, 5, 8, 11])
@pytest.mark.parametrize("n_blocks,n_threads", [(1, 1), (3, 1), (3, 2)])
def test_factor_pass_bitwise(V, n_blocks, n_threads):
    K = 37                                  # three topic blocks, the last one cut
    rng = np.random.default_rng(V)
    n_wk = rng.integers(0, 9, size=(V, K)).astype(np.int32)
    noise = pg._Noise("discrete_laplace", epsilon=1.0)
    gens = [np.random.default_rng(10 + j).bit_generator for j in range(n_blocks)]
    out = (np.empty((V, K)), np.empty((V, K), dtype=np.float32), np.empty(V))
    blocks = np.empty((V, 3))
    bg = gens if n_blocks > 1 else gens[0]
    noise.snapshot(n_wk, 4.5, 0.3, bg, out, n_threads, word_blocks=blocks)
    snap, F, mass = out
    # the noise was drawn: some entries differ from the counts, and some are clipped
    assert np.any(snap != n_wk) and np.any(snap > 4.5) or V < 4
    rows_per = -(-V // n_blocks)
    row_blocks = [(lo, min(lo + rows_per, V)) for lo in range(0, V, rows_per)]
    row_blocks += [(V, V)] * (n_blocks - len(row_blocks))
    rF, rmass, rblocks = reference(snap, 4.5, 0.3, row_blocks)
    np.testing.assert_array_equal(F, rF)
    np.testing.assert_array_equal(mass, rmass)
    np.testing.assert_array_equal(blocks, rblocks)
    # without the search table: the same factor and masses
    F2 = np.empty_like(F)
    m2 = np.empty_like(mass)
    _cgs.noisy_snapshot(n_wk, 0, 0.0, 0, 0, 0, 4.5, 0.3, snap.copy(), F2, m2,
                        np.random.default_rng(0).bit_generator)
    rF0, rm0, _ = reference(n_wk.astype(float), 4.5, 0.3, [(0, V)])
    np.testing.assert_array_equal(F2, rF0)
    np.testing.assert_array_equal(m2, rm0)


def _noises():
    """The discrete snapshot noises as fit draws them: dyadic discrete Laplace (kind 5),
    discrete Laplace beyond the dyadic range (kind 3), discrete Gaussian by inversion and
    by the alias table (kind 4), and kind 4 by CKS20 (no table)."""
    lap, lap_big = pg._Noise("discrete_laplace", epsilon=1.0), pg._Noise("discrete_laplace",
                                                                         epsilon=1e-4)
    gau = pg._Noise("discrete_gaussian", noise_multiplier=2.0)
    gau_alias = pg._Noise("discrete_gaussian", noise_multiplier=2.0)
    gau_alias.table = gauss_table.table_for(gau_alias.a, gau_alias.b)
    cks = pg._Noise("discrete_gaussian", noise_multiplier=2.0)
    cks.table = False                      # kind 4 with no table: CKS20
    assert (lap.kind, lap_big.kind, gau.kind) == (5, 3, 4)
    return [lap, lap_big, gau, gau_alias, cks]


def _snap(noise, n_wk, clip, gens, n_threads, clipped=None):
    V, K = n_wk.shape
    if noise.table is None:
        noise.snapshot(n_wk, clip, 0.3, np.random.default_rng(0).bit_generator)  # builds it
    table = noise.table if noise.table is not False else None
    gauss, laplace = (table, None) if noise.kind == 4 else (None, table)
    out = (np.full((V, K), -7.0), np.empty((V, K), np.float32), np.empty(V))
    blocks = np.empty((V, -(-K // 16)))
    _cgs.noisy_snapshot(n_wk, noise.kind, noise.scale, noise.a, noise.b, noise.c, clip, 0.3,
                        *out, gens, n_threads, gauss, laplace, word_blocks=blocks,
                        clipped=clipped)
    return out + (blocks,)


@pytest.mark.parametrize("which", range(5))
@pytest.mark.parametrize("clip", [4.5, 6.0])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_clipped_counts_give_the_same_factor(which, clip, n_threads):
    """With the int32 clipped counts in place of the double snapshot (the snapshots a fit
    does not release): the same draws (the clipped counts are min(max(snapshot, 0),
    ceil(clip)) of the double run with the same streams), and the word factor, masses and
    search table bit for bit; the snapshot array is not written."""
    V, K = 23, 37
    noise = _noises()[which]
    n_wk = np.random.default_rng(which).integers(0, 12, size=(V, K)).astype(np.int32)

    def gens():
        return [np.random.default_rng([4, j]).bit_generator for j in range(3)]
    ref = _snap(noise, n_wk, clip, gens(), n_threads)
    clipped = np.full((V, K), -1, dtype=np.int32)
    got = _snap(noise, n_wk, clip, gens(), n_threads, clipped)
    snap = ref[0]
    assert np.any(snap != n_wk) and np.any(snap < 0) and np.any(snap > clip)
    np.testing.assert_array_equal(clipped, np.minimum(np.maximum(snap, 0), np.ceil(clip)))
    assert np.all(got[0] == -7.0)                 # the snapshot array is left alone
    for a, b in zip(got[1:], ref[1:]):
        np.testing.assert_array_equal(a, b)


def test_clipped_counts_refused_where_inexact():
    V, K = 5, 6
    n_wk = np.ones((V, K), dtype=np.int32)
    out = (np.empty((V, K)), np.empty((V, K), np.float32), np.empty(V))
    bg = np.random.default_rng(0).bit_generator
    ok = np.empty((V, K), dtype=np.int32)
    with pytest.raises(ValueError, match="discrete"):
        _cgs.noisy_snapshot(n_wk, 1, 2.0, 0, 0, 0, 5.0, 0.1, *out, bg, clipped=ok)
    with pytest.raises(ValueError, match="clip"):
        _cgs.noisy_snapshot(n_wk, 3, 2.0, 2, 1, 0, 2.0 ** 31, 0.1, *out, bg, clipped=ok)
    with pytest.raises(ValueError, match="shape"):
        _cgs.noisy_snapshot(n_wk, 3, 2.0, 2, 1, 0, 5.0, 0.1, *out, bg,
                            clipped=np.empty((V, K + 1), dtype=np.int32))
