"""The snapshot kernel's word-factor pass, bitwise against a plain loop (issue #16: the
pass runs four rows at a time; every row and its sums must stay exactly as before)."""
import numpy as np
import pytest

from dptm import _cgs
from dptm.models import private_gibbs as pg


def reference(snap, clip, beta, row_blocks):
    """The documented computation, one scalar at a time: topic totals summed per row block
    in row order (the first block from V beta), blocks then added in block order; word
    factor float((min(max(s, 0), clip) + beta) * (1 / total)); mass and running sums in
    double, in topic order."""
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
    return F, mass, cum


@pytest.mark.parametrize("V", [1, 3, 4, 5, 8, 11])
@pytest.mark.parametrize("n_blocks,n_threads", [(1, 1), (3, 1), (3, 2)])
def test_factor_pass_bitwise(V, n_blocks, n_threads):
    K = 7
    rng = np.random.default_rng(V)
    n_wk = rng.integers(0, 9, size=(V, K)).astype(np.int32)
    noise = pg._Noise("discrete_laplace", epsilon=1.0)
    gens = [np.random.default_rng(10 + j).bit_generator for j in range(n_blocks)]
    out = (np.empty((V, K)), np.empty((V, K), dtype=np.float32), np.empty(V))
    cum = np.empty((V, K))
    bg = gens if n_blocks > 1 else gens[0]
    noise.snapshot(n_wk, 4.5, 0.3, bg, out, n_threads, cum)
    snap, F, mass = out
    # the noise was drawn: some entries differ from the counts, and some are clipped
    assert np.any(snap != n_wk) and np.any(snap > 4.5) or V < 4
    rows_per = -(-V // n_blocks)
    blocks = [(lo, min(lo + rows_per, V)) for lo in range(0, V, rows_per)]
    blocks += [(V, V)] * (n_blocks - len(blocks))
    rF, rmass, rcum = reference(snap, 4.5, 0.3, blocks)
    np.testing.assert_array_equal(F, rF)
    np.testing.assert_array_equal(mass, rmass)
    np.testing.assert_array_equal(cum, rcum)
    # without the search table: the same factor and masses
    F2 = np.empty_like(F)
    m2 = np.empty_like(mass)
    _cgs.noisy_snapshot(n_wk, 0, 0.0, 0, 0, 0, 4.5, 0.3, snap.copy(), F2, m2,
                        np.random.default_rng(0).bit_generator)
    rF0, rm0, _ = reference(n_wk.astype(float), 4.5, 0.3, [(0, V)])
    np.testing.assert_array_equal(F2, rF0)
    np.testing.assert_array_equal(m2, rm0)
