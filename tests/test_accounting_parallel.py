"""Parallel composition (ParallelComposedEvent): each record in exactly one part."""
import json
import math

import numpy as np
import pytest

from dptm.accounting import (ComposedEvent, GaussianEvent, LaplaceEvent, ParallelComposedEvent,
                             PrivacyReport, PureDPAccountant, RDPAccountant, SelfComposedEvent,
                             ZCDPAccountant, calibrate_gaussian, epsilon)
from dptm.accounting.report import event_from_dict, event_to_dict

A = SelfComposedEvent(GaussianEvent(2.0, discrete=True), 6)
B = GaussianEvent(1.0, discrete=True)


def test_rdp_is_the_orderwise_maximum_of_the_parts():
    ra, rb = RDPAccountant().compose(A).rdp, RDPAccountant().compose(B).rdp
    rp = RDPAccountant().compose(ParallelComposedEvent((A, B))).rdp
    np.testing.assert_array_equal(rp, np.maximum(ra, rb))
    # the two curves cross (6 releases at sigma 2 vs one at sigma 1: rho 0.75 vs 0.5): the
    # maximum is neither part alone
    assert np.any(ra > rb) or np.any(rb > ra)


def test_zcdp_and_pure_take_the_worst_part():
    assert ZCDPAccountant().compose(ParallelComposedEvent((A, B))).rho == pytest.approx(
        max(6 / (2 * 4.0), 1 / 2.0))
    la, lb = LaplaceEvent(2.0), LaplaceEvent(0.5)
    acc = PureDPAccountant().compose(ParallelComposedEvent((la, SelfComposedEvent(lb, 3))))
    assert acc.get_epsilon(0.0) == pytest.approx(max(0.5, 3 * 2.0))


def test_parallel_parts_each_calibrated_to_the_target_meet_it():
    # every part (e.g. stages on disjoint documents) calibrated to (1, 1e-5) on its own
    za = calibrate_gaussian(1.0, 1e-5, steps=6, discrete=True)
    zb = calibrate_gaussian(1.0, 1e-5, steps=1, discrete=True)
    ev = ParallelComposedEvent((SelfComposedEvent(GaussianEvent(za, discrete=True), 6),
                                GaussianEvent(zb, discrete=True)))
    eps = epsilon(ev, 1e-5, method="rdp")
    assert eps <= 1.0 + 1e-6
    # sequential composition of the same releases would be much worse
    assert epsilon(ComposedEvent(ev.events), 1e-5, method="rdp") > 1.3


def test_identical_parts_cost_one_part():
    assert epsilon(ParallelComposedEvent((A, A, A)), 1e-5, method="rdp") == pytest.approx(
        epsilon(A, 1e-5, method="rdp"))


def test_report_round_trip_and_text():
    rep = PrivacyReport(ParallelComposedEvent((A, B), label="stages"), "document",
                        default_delta=1e-5)
    state = json.loads(json.dumps(rep.to_state()))
    again = PrivacyReport.from_state(state)
    assert again.event == rep.event
    assert again.epsilon() == rep.epsilon()
    assert event_from_dict(event_to_dict(rep.event)) == rep.event
    assert "parallel composition" in rep.event.describe()
    # PLD cannot bound a maximum: the auto route answers with RDP
    assert rep.epsilon_and_method()[1] in ("rdp", "zcdp")


def test_bad_parts():
    with pytest.raises(ValueError, match="at least one"):
        ParallelComposedEvent(())
    with pytest.raises(TypeError, match="PrivacyEvent"):
        ParallelComposedEvent((A, 3.0))
    # a parallel composition on one shared Poisson subsample is refused, not amplified per part
    from dptm.accounting import PoissonSampledEvent
    assert not RDPAccountant().supports(PoissonSampledEvent(ParallelComposedEvent((A, B)), 0.1))
    assert math.isfinite(epsilon(ParallelComposedEvent((A, B)), 1e-5))
