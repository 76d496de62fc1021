"""Empirical DP of the smallest release of each private model, on worst-case neighbours.

For each mechanism the estimator actually uses, run it many times on two neighbouring
inputs and bound epsilon from below with :func:`dptm.testing.epsilon_lower_bound`
(Clopper-Pearson, confidence 1 - 1e-6, so a correct mechanism fails with probability at
most 1e-6). The bound must stay below the epsilon the recorded event claims and, with the
noise halved (everything else, including the claim, unchanged), exceed it: the test can see
a broken mechanism. Gaussian mechanisms are checked on their privacy profile at a large
delta (0.05), where the distinguishing events are frequent enough to be observed; pure-DP
ones at delta = 0. The other mechanisms are covered elsewhere: the sampling step with a
moving token exactly (tests/test_private_gibbs_order.py), DP vocabulary selection and the
local randomizer in tests/test_output_privacy.py, the ledger tests tie each estimator's
drawn noise to its event.
"""
import numpy as np
from sklearn.base import BaseEstimator

from dptm import TopicDP
from dptm.accounting import PrivacyReport
from dptm.mechanisms import lattice_gaussian
from dptm.models.private_gibbs import _Noise
from dptm.testing import epsilon_lower_bound

CONFIDENCE = 1 - 1e-6
DELTA = 0.05


def _snapshot_outputs(noise, n_wk, runs, seed):
    """s[0] - s[1] of ``runs`` snapshots of the one-topic counts ``n_wk`` (word
    replacement moves one count from word 0 to word 1: this direction sees all of it)."""
    gen = np.random.default_rng(seed)
    out = noise.snapshot(n_wk, 1e9, 0.1, gen.bit_generator)
    stat = np.empty(runs)
    for i in range(runs):
        noise.snapshot(n_wk, 1e9, 0.1, gen.bit_generator, out)
        stat[i] = out[0][0, 0] - out[0][1, 0]
    return stat


WORD_NEIGHBOURS = (np.array([[1], [0]], dtype=np.int32), np.array([[0], [1]], dtype=np.int32))


def test_hdp_lda_snapshot_default_mechanism():
    eps = 1.0
    noise = _Noise("discrete_laplace", epsilon=eps)           # NoisyGibbsLDA's default path
    claim = noise.event.epsilon
    a, b = (_snapshot_outputs(noise, n, 60000, seed) for seed, n in enumerate(WORD_NEIGHBOURS))
    assert epsilon_lower_bound(a, b, confidence=CONFIDENCE) <= claim
    half = _Noise("discrete_laplace", epsilon=2 * eps)        # half the noise, same claim
    a, b = (_snapshot_outputs(half, n, 60000, seed) for seed, n in enumerate(WORD_NEIGHBOURS))
    assert epsilon_lower_bound(a, b, confidence=CONFIDENCE) > claim


def test_sub_lda_snapshot_default_mechanism():
    noise = _Noise("discrete_gaussian", noise_multiplier=0.5)   # SubsampledGibbsLDA's default
    claim = PrivacyReport(noise.event, "word").epsilon(DELTA)
    a, b = (_snapshot_outputs(noise, n, 60000, seed) for seed, n in enumerate(WORD_NEIGHBOURS))
    assert epsilon_lower_bound(a, b, delta=DELTA, confidence=CONFIDENCE) <= claim
    half = _Noise("discrete_gaussian", noise_multiplier=0.25)
    a, b = (_snapshot_outputs(half, n, 60000, seed) for seed, n in enumerate(WORD_NEIGHBOURS))
    assert epsilon_lower_bound(a, b, delta=DELTA, confidence=CONFIDENCE) > claim


class _Fixed(BaseEstimator):
    def __init__(self, topics=None):
        self.topics = topics

    def fit(self, X, y=None):
        self.components_ = np.asarray(self.topics, dtype=float)
        return self


def test_topicdp_release_entry():
    # The event TopicDP records for a public sensitivity bound: neighbours whose released
    # entry differs by the (slack-inclusive) sensitivity, noise from the same exact sampler.
    dp = TopicDP(_Fixed([[0.5, 0.5]]), target_epsilon=1.0, target_delta=1e-5,
                 sensitivity=0.05).fit(np.ones((2, 2), dtype=int))
    event = dp.privacy_.event
    event = getattr(event, "event", event)
    claim = PrivacyReport(event, "user").epsilon(DELTA)
    gen = np.random.default_rng(3)

    def outputs(shift, sigma):
        return lattice_gaussian(np.full(120000, 0.5 + shift), sigma, gen,
                                granularity=dp.lattice_granularity_)[0]
    x0, x1 = outputs(0.0, event.sigma), outputs(event.sensitivity, event.sigma)
    assert epsilon_lower_bound(x0, x1, delta=DELTA, confidence=CONFIDENCE) <= claim
    h0, h1 = outputs(0.0, event.sigma / 2), outputs(event.sensitivity, event.sigma / 2)
    assert epsilon_lower_bound(h0, h1, delta=DELTA, confidence=CONFIDENCE) > claim
