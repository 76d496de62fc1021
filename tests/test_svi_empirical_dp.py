"""Empirical DP of one VIPS step: the statistic of a real partial_fit step on
worst-case add/remove neighbours (one document of N copies of one word added to a
corpus that does not use that word, K = 1, so its
expected count is exactly N, all on one coordinate), privatized by the model's own noise
path with its own parameters, many times; dptm.testing's Clopper-Pearson lower bound on
epsilon (confidence 0.999) stays below the recorded claim, and exceeds it when the noise
is halved (sigma / 2 with the event unchanged). Measured with the fixed seeds: bound 0.74
below the claim 1.13 (delta = 0.01), 1.97 above it with half the noise. The bound is valid
with probability 0.999 (false alarm <= 1e-3 for a fresh seed; the seed is fixed, so the
outcome is deterministic)."""
import numpy as np
import pytest
import scipy.sparse as sp

from dptm import PrivateOnlineLDA
from dptm.testing import epsilon_lower_bound

N, DELTA, RUNS = 40, 0.01, 100_000


class Spy(PrivateOnlineLDA):
    def _privatize(self, stat, rng):
        self.stat_ = np.array(stat)
        return super()._privatize(stat, rng)


def step_statistic(X):
    m = Spy(1, batch_size=1, total_samples=10, max_doc_length=N, noise_multiplier=2.0,
            random_state=1)
    with pytest.warns(Warning):
        m.partial_fit(X)
    return m, m.stat_[0, 0]


@pytest.mark.parametrize("halved", [False, True])
def test_one_step_empirical_epsilon(halved):
    m, s0 = step_statistic(sp.csr_matrix(np.array([[0, 3], [N, 0]])))
    _, s1 = step_statistic(sp.csr_matrix(np.array([[0, 3]])))
    assert s0 == pytest.approx(N) and s1 == 0.0
    claimed = m.privacy_.epsilon(DELTA)
    rng = np.random.default_rng(7)

    def release(s):
        stat = np.full((1, RUNS), s)
        if halved:      # the model's noise path with half the noise (a broken mechanism)
            from dptm.mechanisms import lattice_gaussian
            return lattice_gaussian(stat, m._sigma_draw_ / 2, rng,
                                    granularity=m.granularity_)[0][0]
        return m._privatize(stat, rng)[0]

    bound = epsilon_lower_bound(release(s0), release(s1), delta=DELTA, confidence=0.999)
    if halved:
        assert bound > claimed, (bound, claimed)
    else:
        assert bound < claimed, (bound, claimed)
