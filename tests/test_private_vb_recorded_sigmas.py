"""PrivateBatchLDA's recorded event is, exactly, the noise each release drew (deterministic;
the statistical check in test_private_vb.py only sees errors above ~15% at its size)."""
import math
import warnings
from fractions import Fraction

import numpy as np

from _private_vb import drawn_sigma, event_leaves
from dptm.mechanisms import discrete_gaussian_parameters
from dptm.models.private_vb import PrivateBatchLDA
from dptm.noise.releases import recording


def test_recorded_sigmas_are_exactly_the_drawn_ones():
    X = np.random.default_rng(0).poisson(1.0, (60, 12))
    sched = (("presence", 0.2), ("presence", 0.2), ("presence", 0.1), ("counts", 0.5))
    with warnings.catch_warnings(), recording() as draws:
        warnings.simplefilter("ignore")
        m = PrivateBatchLDA(3, target_epsilon=2.0, schedule=sched, random_state=0).fit(X)
    # (nominal sigma, lattice, effective sigma) of every release, as its object drew it
    calls = [(d.release.sigma, d.release.granularity_, d.release.sigma_) for d in draws]
    assert all(d.event.sigma == d.release.sigma_ for d in draws)
    assert len(calls) == len(sched) + 1          # the norm histogram first
    # what was drawn: g times the discrete Gaussian of variance p/q for sigma / g, stated
    # as the largest float whose square is at most p/q (never more noise than drawn)
    drawn = [drawn_sigma(s, g) for s, g, _ in calls]
    for (s, g, _), d in zip(calls, drawn):
        p, q = discrete_gaussian_parameters(s / g)[:2]
        assert Fraction(d / g) ** 2 <= Fraction(p, q)
        assert abs(d / g - math.sqrt(p / q)) <= 2 * math.ulp(d / g)
    assert [eff for *_, eff in calls] == drawn
    assert m.release_sigmas_ == drawn[1:]
    leaves = event_leaves(m.privacy_.event)
    assert [leaf.sigma for leaf in leaves] == drawn
    assert all(leaf.discrete for leaf in leaves) and leaves[0].sensitivity == 1.0
    assert all(leaf.sensitivity == m.clip_norm_ for leaf in leaves[1:])
    # each drawn sigma is at least the calibrated one, and the calibrated ones split the
    # budget in the schedule's shares: sigma_i^2 * share_i is the same for every release
    nominal = [s for s, _, _ in calls[1:]]
    assert all(d >= s for d, s in zip(drawn[1:], nominal))
    shares = np.array([w for _, w in sched]) / sum(w for _, w in sched)
    np.testing.assert_allclose(np.array(nominal) ** 2 * shares, nominal[-1] ** 2 * shares[-1],
                               rtol=1e-12)
    # the lattice of each release is the one of its sigma (sigma / g in [2^13, 2^14))
    assert all(2 ** 13 <= s / g < 2 ** 14 for s, g, _ in calls[1:])
    # the histogram holds integer counts (sensitivity 1): on the unit lattice
    assert calls[0][1] == 1.0


def test_a_schedule_of_equal_releases_meets_its_target():
    # equal shares make a run of equal releases (one SelfComposedEvent in the report):
    # the calibration must count every release of the run, or the noise it picks is too
    # small and the report (the composition of what was drawn) exceeds the target
    X = np.random.default_rng(1).poisson(1.0, (60, 12))
    for sched in ((("presence", 1),) * 3 + (("counts", 1),), (("counts", 1),) * 2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = PrivateBatchLDA(3, target_epsilon=2.0, schedule=sched, clip_norm=1.0,
                                random_state=0).fit(X)
        eps = m.privacy_.epsilon(1e-5, method="rdp")
        assert 2.0 - 0.05 < eps <= 2.0, (sched, eps)
