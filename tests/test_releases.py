"""The release objects of dptm.noise.releases: each draw states the noise it actually drew
(the exact sampler's effective sigma or scale, never the nominal one) in its event, the
ledger composes what was drawn, and a planned report that does not cover the draws is
refused."""
import math

import numpy as np
import pytest

from dptm.accounting import ComposedEvent, GaussianEvent, LaplaceEvent, SelfComposedEvent
from dptm.noise.mechanisms import (discrete_gaussian_parameters, discrete_laplace_parameters,
                                   lattice_gaussian)
from dptm.noise.releases import (GaussianRelease, LaplaceRelease, LatticeGaussianRelease,
                                 LatticeLaplaceRelease, Ledger, recording)


def test_a_lattice_gaussian_draw_is_the_mechanism_and_states_its_effective_sigma():
    # the same output as lattice_gaussian for the same stream (the release adds nothing to
    # the mechanism), and the event's sigma is g times the rational sigma drawn, which is
    # at least the nominal one (a nominal sigma in the event would overstate the noise)
    x = np.random.default_rng(0).random((3, 50)) * 40
    g = 2.0 ** -10
    ledger = Ledger()
    release = LatticeGaussianRelease(3.3, 2.5, g, ledger=ledger, label="stat")
    noisy = release.draw(x, np.random.default_rng(1))
    want, g_want, eff = lattice_gaussian(x, 3.3, np.random.default_rng(1), granularity=g)
    np.testing.assert_array_equal(noisy, want)
    assert release.granularity_ == g_want == g and np.all(noisy / g == np.rint(noisy / g))
    assert eff == g * discrete_gaussian_parameters(3.3 / g)[3] >= 3.3
    assert ledger.events == [GaussianEvent(eff, sensitivity=2.5, discrete=True, label="stat")]
    assert release.event is ledger.events[0] and release.sigma_ == eff


@pytest.mark.parametrize("nominal", [2.0, 1.0 / 3.0], ids=["dyadic", "one-third"])
def test_a_lattice_laplace_draw_states_its_effective_scale(nominal):
    # 1/3 is no multiple of g's grid: the scale drawn is above it, and the event must say
    # the drawn one (catches the nominal scale recorded: fresh round 6, M14)
    x = np.arange(12.0).reshape(3, 4)
    release = LatticeLaplaceRelease(nominal, 4.0, 2.0 ** -8)
    noisy = release.draw(x, np.random.default_rng(2))
    g = release.granularity_
    assert np.all(noisy / g == np.rint(noisy / g)) and not np.array_equal(noisy, x)
    scale = g * discrete_laplace_parameters(nominal / g)[2]
    assert release.event == LaplaceEvent(scale=scale, sensitivity=4.0, discrete=True)
    assert release.scale_ == scale >= nominal
    assert (scale > nominal) == (nominal != 2.0)


@pytest.mark.parametrize("cls,event", [(GaussianRelease, GaussianEvent(1.5, 2.0)),
                                       (LaplaceRelease, LaplaceEvent(1.5, 2.0))])
def test_floating_point_releases_say_they_are_not_discrete(cls, event):
    x = np.zeros((2, 1000))
    noisy = cls(1.5, 2.0).draw(x, np.random.default_rng(3))
    assert noisy.shape == x.shape and np.mean(noisy != np.rint(noisy)) > 0.99
    assert cls(1.5, 2.0).granularity_ is None
    r = cls(1.5, 2.0)
    r.draw(x, np.random.default_rng(3))
    assert r.event == event and r.event.discrete is False


def test_the_ledger_composes_runs_of_equal_releases():
    a, b = GaussianEvent(2.0, 1.0, discrete=True), GaussianEvent(3.0, 1.5, discrete=True)
    ledger = Ledger()
    for ev in (a, b, b, b, a):
        ledger.record(ev)
    assert ledger.composed() == ComposedEvent((a, SelfComposedEvent(b, 3), a), label="fit")
    one = Ledger()
    one.record(b), one.record(b)
    assert one.composed() == SelfComposedEvent(b, 2)
    with pytest.raises(ValueError, match="no release"):
        Ledger().composed()


def test_a_planned_report_must_cover_what_was_drawn():
    planned = GaussianEvent(2.0, 1.0, discrete=True)
    ledger = Ledger()
    ledger.record(planned), ledger.record(planned)
    ledger.check_within(planned, 2)
    ledger.check_within(planned, 5)                     # stopped early: fewer is fine
    with pytest.raises(RuntimeError, match="differs from the noise accounted"):
        ledger.check_within(planned, 1)                 # more releases than accounted
    ledger.record(GaussianEvent(1.0, 1.0, discrete=True))
    with pytest.raises(RuntimeError, match="differs from the noise accounted"):
        ledger.check_within(planned, 5)                 # less noise than accounted


def test_recording_sees_every_draw_only_inside_its_block():
    x = np.ones((2, 3))
    with recording() as draws:
        LatticeGaussianRelease(1.0, 1.0).draw(x, np.random.default_rng(4))
        x[:] = 7.0                                      # the record kept its own copy
    LatticeGaussianRelease(1.0, 1.0).draw(x, np.random.default_rng(5))
    (d,) = draws
    np.testing.assert_array_equal(d.statistic, np.ones((2, 3)))
    assert d.event == d.release.event and d.event.sigma >= 1.0
    assert math.isclose(d.event.sigma, 1.0, rel_tol=1e-4)
