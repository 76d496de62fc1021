"""DiscretePLDAccountant: the exact privacy loss distribution of the discrete Gaussian on
integer-valued queries, checked against a brute-force computation of the hockey-stick
divergence on small cases, against dp_accounting's continuous PLD where the two must
agree (large sigma), and never above the RDP bound the reports use."""
import math

import numpy as np
import pytest

pytest.importorskip("dp_accounting", reason="dp-accounting (test extra) for the PLD")

from dptm.accounting import epsilon_and_method                              # noqa: E402
from dptm.accounting.accountants import UnsupportedEventError                # noqa: E402
from dptm.accounting.discrete_pld import DiscretePLDAccountant               # noqa: E402
from dptm.accounting.events import (ComposedEvent, GatedEvent, GaussianEvent,  # noqa: E402
                                    PureDPEvent, SelfComposedEvent)
from dptm.accounting.pld import PLDAccountant                                # noqa: E402

SNAP = "noisy snapshot of the topic-word counts"


def _brute_loss_pmf(sigma, shifts, count):
    """pmf of the total privacy loss in units of 1 / (2 sigma^2): the loss of one
    coordinate with shift u at output x is (u^2 - 2 u x) / (2 sigma^2), x ~ N_Z(0, sigma^2)."""
    m = int(40 * sigma + 40)
    x = np.arange(-m, m + 1)
    p = np.exp(-x.astype(float) ** 2 / (2 * sigma ** 2))
    p /= p.sum()
    total = {0: 1.0}
    for u in list(shifts) * count:
        k = u * u - 2 * u * x
        one = {}
        for kk, pp in zip(k.tolist(), p.tolist()):
            one[kk] = one.get(kk, 0.0) + pp
        new = {}
        for a, pa in total.items():
            for b, pb in one.items():
                if pa * pb > 1e-300:
                    new[a + b] = new.get(a + b, 0.0) + pa * pb
        total = new
    ks = np.array(sorted(total))
    return ks / (2 * sigma ** 2), np.array([total[k] for k in sorted(total)])


def _brute_epsilon(losses, probs, delta):
    def hockey(eps):
        return float(np.sum(probs * np.clip(1 - np.exp(eps - losses), 0, None)))
    lo, hi = 0.0, float(losses.max())
    if hockey(0.0) <= delta:
        return 0.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if hockey(mid) > delta else (lo, mid)
    return hi


@pytest.mark.parametrize("sigma", [0.6, 1.0, 2.5])
@pytest.mark.parametrize("shifts", [(1,), (2,), (1, 1)])
@pytest.mark.parametrize("count", [1, 3])
def test_matches_brute_force_on_small_cases(sigma, shifts, count):
    sens = math.sqrt(sum(u * u for u in shifts))
    event = SelfComposedEvent(GaussianEvent(sigma, sens, discrete=True, label="q"), count)
    for delta in (1e-3, 1e-6):
        exact = _brute_epsilon(*_brute_loss_pmf(sigma, shifts, count), delta)
        ours = DiscretePLDAccountant({"q": shifts}).compose(event).get_epsilon(delta)
        # an upper bound (pessimistic grid of 1e-4 per composed PLD), and a tight one
        # (float rounding of the two hockey-stick sums: 1e-9 relative)
        assert exact * (1 - 1e-9) - 1e-9 <= ours, (exact, ours)
        assert ours <= exact + 1e-3 * count * len(shifts), (exact, ours)


def test_gated_pure_release_matches_brute_force():
    eps, p, delta = 2.0, 0.3, 1e-4
    P = np.array([p * math.exp(eps), p, (1 - p) * (1 + math.exp(eps))]) / (1 + math.exp(eps))
    Q = np.array([p, p * math.exp(eps), (1 - p) * (1 + math.exp(eps))]) / (1 + math.exp(eps))
    # two compositions: outcomes are pairs
    P2, Q2 = np.outer(P, P).ravel(), np.outer(Q, Q).ravel()
    keep = P2 > 0
    exact = _brute_epsilon(np.log(P2[keep] / Q2[keep]), P2[keep], delta)
    ours = DiscretePLDAccountant({"q": (1,)}).compose(
        SelfComposedEvent(GatedEvent(PureDPEvent(eps), p), 2)).get_epsilon(delta)
    assert exact - 1e-9 <= ours <= exact + 1e-3


def test_large_sigma_agrees_with_the_continuous_pld():
    for sigma, count in ((20.0, 1), (8.0, 10)):
        disc = SelfComposedEvent(GaussianEvent(sigma, math.sqrt(2), discrete=True, label=SNAP),
                                 count)
        cont = SelfComposedEvent(GaussianEvent(sigma, math.sqrt(2)), count)
        a = DiscretePLDAccountant({SNAP: (1, 1)}).compose(disc).get_epsilon(1e-5)
        b = PLDAccountant().compose(cont).get_epsilon(1e-5)
        assert a == pytest.approx(b, rel=2e-3)


def test_never_above_the_reports_bound_on_the_gibbs_compositions():
    # NoisyGibbsLDA / SubsampledGibbsLDA snapshots: word replacement moves two counts by one
    snapshot = GaussianEvent(2.8284, math.sqrt(2), discrete=True, label=SNAP)
    for step in (ComposedEvent((snapshot, PureDPEvent(1.5))),
                 ComposedEvent((snapshot, GatedEvent(PureDPEvent(1.5), 0.5)))):
        event = SelfComposedEvent(step, 20)
        ours = DiscretePLDAccountant({SNAP: (1, 1)}).compose(event).get_epsilon(1e-5)
        old, _ = epsilon_and_method(event, 1e-5)
        assert ours <= old


def test_refusals():
    acc = DiscretePLDAccountant({SNAP: (1, 1)})
    assert not acc.supports(GaussianEvent(2.0, math.sqrt(2), label=SNAP))        # continuous
    # a lattice release (any label not declared) is not accounted as a count query
    assert not acc.supports(GaussianEvent(2.0, 1.0, discrete=True, label="lattice release"))
    with pytest.raises(UnsupportedEventError):
        acc.compose(GaussianEvent(2.0, 3.0, discrete=True))
    with pytest.raises(ValueError, match="L2 norm"):
        acc.compose(GaussianEvent(2.0, 1.0, discrete=True, label=SNAP))
    with pytest.raises(ValueError, match="integers"):
        DiscretePLDAccountant({SNAP: (1.0,)})
    with pytest.raises(TypeError, match="labels"):
        DiscretePLDAccountant({1.0: (1,)})
    assert DiscretePLDAccountant({SNAP: (1,)}).get_epsilon(1e-5) == 0.0


def test_a_shift_smaller_than_the_sensitivity_is_refused():
    # Catches the norm check relaxed to "not above the sensitivity": a caller declaring a
    # smaller integer shift than the event's sensitivity would be accounted a smaller loss
    # than the release has (here one count instead of two, or a shift of 1 for 2).
    with pytest.raises(ValueError, match="L2 norm"):
        DiscretePLDAccountant({SNAP: (1,)}).compose(
            GaussianEvent(2.0, math.sqrt(2), discrete=True, label=SNAP))
    with pytest.raises(ValueError, match="L2 norm"):
        DiscretePLDAccountant({SNAP: (1,)}).compose(
            GaussianEvent(2.0, 2.0, discrete=True, label=SNAP))
    # the honest declaration is accepted and costs more than the under-declared one would
    honest = DiscretePLDAccountant({SNAP: (1, 1)}).compose(
        GaussianEvent(2.0, math.sqrt(2), discrete=True, label=SNAP)).get_epsilon(1e-5)
    under = DiscretePLDAccountant({SNAP: (1,)}).compose(
        GaussianEvent(2.0, 1.0, discrete=True, label=SNAP)).get_epsilon(1e-5)
    assert honest > under


def test_the_gibbs_models_snapshot_label_is_the_documented_one():
    from dptm.models.private_gibbs import _SNAPSHOT_LABEL
    assert _SNAPSHOT_LABEL == SNAP
