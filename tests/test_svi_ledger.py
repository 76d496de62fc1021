"""VIPS noise against the ledger: the noise PrivateOnlineLDA actually adds to each
minibatch statistic, and the minibatches it actually draws, checked against the event
recorded in ``privacy_`` (sigma, L2 sensitivity with the lattice rounding slack,
discreteness, sampling rate, number of releases). Parameters are read from the event;
the sensitivity bound is derived independently from the public parameters (one
document's expected counts have L1 norm <= N, so L2 <= N; sqrt(2) N when one is replaced;
rounding adds g per touched coordinate, K min(N, V) or K min(2N, V) of them).

Statistical checks use thresholds at a false-alarm rate <= 1e-6 each for a fresh seed
(|z| < 5.3 two-sided: 1.2e-7; KS p-value > 1e-6); the seeds are fixed (test mode), so the
outcome is deterministic."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dptm import PrivateOnlineLDA
from dptm.accounting import PoissonSampledEvent, SelfComposedEvent
from dptm.mechanisms import round_to_lattice
from dptm.noise.releases import recording

Z_MAX = 5.3
K, V, N, D = 3, 60, 20, 300


def corpus(seed=3):
    rng = np.random.default_rng(seed)
    topics = rng.dirichlet(np.full(V, 0.2), K)
    theta = rng.dirichlet(np.full(K, 0.5), D)
    lengths = rng.integers(5, 40, D)          # some longer than N: truncated
    return sp.csr_matrix(np.array([rng.multinomial(n, th @ topics)
                                   for n, th in zip(lengths, theta)]))


class Spy(PrivateOnlineLDA):
    """Records each minibatch size (the releases: ``recording()``)."""

    def _step(self, indptr, indices, counts, rows, scale, rng):
        self.rows_.append(rows.size)
        return super()._step(indptr, indices, counts, rows, scale, rng)


def run(mode, mechanism, z=0.8):
    X = corpus()
    m = Spy(K, batch_size=30, max_iter=2, max_doc_length=N, noise_multiplier=z,
            mechanism=mechanism, sampling="shuffle" if mode == "shuffle" else "poisson",
            total_samples=D, random_state=2024)
    m.rows_ = []
    # test mode (and NotHardened for 'gaussian'); each statistic before and after its release
    with pytest.warns(Warning), recording() as draws:
        if mode == "partial":
            for b in range(10):
                m.partial_fit(X[30 * b:30 * (b + 1)])
        else:
            m.fit(X)
    m.log_ = [(d.statistic, d.noisy) for d in draws]
    m.drawn_events_ = [d.event for d in draws]
    return m


@pytest.mark.parametrize("mode,mechanism", [("poisson", "lattice_gaussian"),
                                            ("poisson", "gaussian"),
                                            ("shuffle", "lattice_gaussian"),
                                            ("partial", "lattice_gaussian")])
def test_noise_and_sampling_match_the_recorded_event(mode, mechanism):
    z = 0.8
    m = run(mode, mechanism, z)
    event = m.privacy_.event
    assert isinstance(event, SelfComposedEvent)
    step = event.event
    q = step.sampling_probability if isinstance(step, PoissonSampledEvent) else None
    leaf = step.event if q is not None else step
    releases = len(m.log_)
    assert releases == len(m.rows_)
    assert all(ev == leaf for ev in m.drawn_events_)   # what each release drew is accounted

    # -- number of releases and sampling actually done
    if mode == "poisson":
        assert q is not None and event.count == releases
        n = releases * D                      # each step keeps each document w.p. q
        zq = (sum(m.rows_) - n * q) / math.sqrt(n * q * (1 - q))
        assert abs(zq) < Z_MAX, (sum(m.rows_), n * q)
    elif mode == "shuffle":
        # no amplification claimed: one release per epoch, each document in exactly one
        # minibatch of the epoch
        assert q is None and event.count == m.max_iter
        per_epoch = releases // m.max_iter
        assert [sum(m.rows_[e * per_epoch:(e + 1) * per_epoch]) for e in range(m.max_iter)] \
            == [D] * m.max_iter
    else:
        assert q is None and event.count == releases == 10

    # -- discreteness: on one lattice iff the event says discrete
    outs = np.concatenate([o.ravel() for _, o in m.log_])
    if leaf.discrete:
        g = m.granularity_
        assert np.all(outs / g == np.rint(outs / g))
        noise = np.concatenate([(o - round_to_lattice(s, g)).ravel() for s, o in m.log_])
        assert np.all(noise / g == np.rint(noise / g))
    else:
        g = 0.0
        grid = leaf.sigma / 2 ** 14
        assert np.mean(outs / grid != np.rint(outs / grid)) > 0.99
        noise = np.concatenate([(o - s).ravel() for s, o in m.log_])

    # -- the noise drawn has the event's sigma (mean 0, variance sigma^2, Gaussian shape)
    n = noise.size
    ratio = np.mean(noise ** 2) / leaf.sigma ** 2
    assert abs(ratio - 1) * math.sqrt(n / 2) < Z_MAX, ratio
    assert abs(noise.mean()) / leaf.sigma * math.sqrt(n) < Z_MAX
    assert stats.kstest(noise / leaf.sigma, "norm").pvalue > 1e-6

    # -- the event's sensitivity covers the statistic (and its rounding), and the noise
    # multiplier is the one asked for
    base, touched = (math.sqrt(2) * N, K * min(2 * N, V)) if mode == "shuffle" \
        else (float(N), K * min(N, V))
    assert leaf.sensitivity >= base + g * math.sqrt(touched) - 1e-12
    assert leaf.sigma / leaf.sensitivity >= z * (1 - 1e-12)
    assert leaf.sigma / leaf.sensitivity <= z * 1.001          # not more noise than stated


def test_one_document_moves_the_rounded_statistic_within_the_sensitivity():
    """Neighbouring corpora (one document removed), same test-mode seed so the same
    E-step draws: the L2 distance of the two rounded statistics of one full-batch step is
    at most the recorded sensitivity."""
    X = corpus()
    Y = X[1:]
    stats_ = []
    for data in (X, Y):
        m = Spy(K, batch_size=D, max_iter=1, max_doc_length=N, noise_multiplier=1.0,
                total_samples=D, random_state=5)
        m.rows_ = []
        with pytest.warns(Warning), recording() as draws:
            m.partial_fit(data)
        stats_.append(round_to_lattice(draws[0].statistic, m.granularity_))
    gap = np.linalg.norm(stats_[0] - stats_[1])
    assert 0 < gap <= m.privacy_.event.event.sensitivity
