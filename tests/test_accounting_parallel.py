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


def test_report_says_which_mechanisms_are_parallel():
    # before the fix the mechanism list flattened the parts: "count=12" for two identical
    # parts of 6 releases each, with nothing saying that each document meets one part
    a = SelfComposedEvent(GaussianEvent(2.0, discrete=True), 6, label="stage")
    rep = PrivacyReport(ParallelComposedEvent((a, a)), "document", default_delta=1e-5)
    mech = str(rep).split("mechanisms :")[1].split("\n  guarantee")[0]
    assert "count=12" not in mech and mech.count("count=6") == 2
    assert "in parallel" in mech and "part 1:" in mech and "part 2:" in mech
    parts = rep.to_dict()["parallel_parts"]
    assert [[m["count"] for m in p] for p in parts] == [[6], [6]]
    # a sequential composition is still listed flat, merged
    from dptm.accounting import ComposedEvent
    flat = str(PrivacyReport(ComposedEvent((a, a)), "document", default_delta=1e-5))
    assert "count=12" in flat and "parallel" not in flat


def test_fixed_size_partition_breaks_the_maximum_but_iid_assignment_does_not():
    # Why ParallelComposedEvent needs each record's part drawn independently. Two parts, each releasing its sum of contributions in
    # [0, 1] plus N(0, 1). D = {y = 1}; D' = D + {x = 0}.
    from scipy import integrate
    a = 10.0
    bound = a / 2.0                                  # RDP of one part at order a
    # (i) parts of prescribed sizes (floor(n/2), n - floor(n/2)): D puts y in part 2; D'
    # puts (x, y) in parts (1, 2) or (2, 1) with probability 1/2 each. The second case
    # changes both parts: w = z1 - z2 ~ N(-1, 2) under D, likelihood ratio 1/2 + e^w / 2.
    v, _ = integrate.quad(lambda w: (0.5 + 0.5 * np.exp(w)) ** a
                          * np.exp(-(w + 1) ** 2 / 4) / np.sqrt(4 * np.pi), -60, 60, limit=400)
    assert np.log(v) / (a - 1) > 1.8 * bound         # 9.23 vs 5.0: the maximum is unsound
    # (ii) i.i.d. assignment (each record in part 1 or 2 with probability 1/2): the
    # others' parts have the same law on D and D'. With y = 0 and x = 1, D releases
    # N(0, I) and D' moves the mean of x's part by 1: likelihood ratio
    # (e^(z1 - 1/2) + e^(z2 - 1/2)) / 2, within the one-part bound (quasi-convexity).
    nodes, weights = np.polynomial.hermite_e.hermegauss(200)
    weights = weights / np.sqrt(2 * np.pi)
    z1, z2 = np.meshgrid(nodes, nodes)
    ratio = 0.5 * np.exp(z1 - 0.5) + 0.5 * np.exp(z2 - 0.5)
    v2 = (np.outer(weights, weights) * ratio ** a).sum()
    assert np.log((weights * np.exp(a * (nodes - 0.5))).sum()) / (a - 1) == pytest.approx(bound)
    assert np.log(v2) / (a - 1) <= bound              # 4.31 <= 5.0
