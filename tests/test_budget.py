"""BudgetAccountant: one cap over several releases of the same data set."""
import math

import numpy as np
import pytest

from dptm.accounting import (BudgetAccountant, BudgetExceededError, GaussianEvent, LaplaceEvent,
                             PrivacyReport, epsilon)
from dptm.release import Release


def _gauss(sigma, adjacency="document", **kw):
    return PrivacyReport(GaussianEvent(sigma, discrete=True), adjacency, **kw)


def test_composition_equals_the_single_equivalent_gaussian():
    # Gaussians compose exactly in RDP: sigma 1 and 2 together are one Gaussian with
    # 1 / sigma^2 = 1 + 1/4.
    budget = BudgetAccountant(epsilon=100, delta=1e-5)
    budget.spend(_gauss(1.0))
    total = budget.spend(_gauss(2.0))
    expected = epsilon(GaussianEvent(1 / math.sqrt(1.25)), 1e-5)
    assert total == pytest.approx(expected, rel=1e-9) == budget.spent
    assert budget.remaining == pytest.approx(100 - expected)


def test_release_beyond_the_cap_is_refused_and_not_recorded():
    budget = BudgetAccountant(epsilon=2.5, delta=1e-5)
    budget.spend(PrivacyReport(LaplaceEvent(1.0, discrete=True), "word"), label="first")
    before = budget.spent
    with pytest.raises(BudgetExceededError, match="beyond the budget's cap of 2.5"):
        budget.spend(PrivacyReport(LaplaceEvent(0.5, discrete=True), "word"))
    assert budget.spent == before and len(budget.reports) == 1
    assert budget.epsilon_if_spent(PrivacyReport(LaplaceEvent(0.5), "word")) > 2.5
    budget.spend(PrivacyReport(LaplaceEvent(4.0, discrete=True), "word"))   # 0.25 more fits
    assert budget.spent <= 2.5


def test_adjacencies_must_agree():
    budget = BudgetAccountant(epsilon=10, delta=1e-5)
    budget.spend(_gauss(1.0, "document"))
    with pytest.raises(ValueError, match="word-level but the budget is document-level"):
        budget.spend(_gauss(1.0, "word"))
    fixed = BudgetAccountant(epsilon=10, delta=1e-5, adjacency="user")
    with pytest.raises(ValueError, match="do not compose"):
        fixed.spend(_gauss(1.0, "document"))


def test_caveats_survive_composition():
    budget = BudgetAccountant(epsilon=50, delta=1e-5)
    budget.spend(_gauss(1.0, gamma=0.1, notes=("topics from TopicDP",)), label="topicdp")
    budget.spend(_gauss(1.0, gamma=0.05, seeded=True, assumed_public=("D = 10",),
                        vocabulary="public (given)"))
    report = budget.report()
    assert report.gamma == pytest.approx(0.15)        # union bound over the random-DP gammas
    assert report.seeded and str(report).startswith("TEST MODE")
    assert report.assumed_public == ("D = 10",)
    assert "[topicdp] topics from TopicDP" in report.notes
    assert "random DP" in str(budget)


def test_accepts_releases_and_models():
    report = _gauss(2.0)
    rel = Release(np.ones((2, 3)), doc_topic_prior=0.5, privacy=report)

    class Fitted:
        privacy_ = report
    budget = BudgetAccountant(epsilon=10, delta=1e-5)
    budget.spend(rel)
    budget.spend(Fitted())
    assert len(budget.reports) == 2
    with pytest.raises(TypeError, match="PrivacyReport"):
        budget.spend(Release(np.ones((2, 3)), doc_topic_prior=0.5))      # non-private
    with pytest.raises(TypeError, match="PrivacyReport"):
        budget.spend("eps=1")


@pytest.mark.parametrize("kwargs, match", [(dict(epsilon=0, delta=1e-5), "epsilon"),
                                           (dict(epsilon=1, delta=1.0), "delta"),
                                           (dict(epsilon=1, delta=1e-5, adjacency="row"), "adjacency")])
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        BudgetAccountant(**kwargs)


def test_empty_budget():
    budget = BudgetAccountant(epsilon=1, delta=1e-5)
    assert budget.spent == 0.0 and budget.report() is None
    assert "0 spent in 0 release(s)" in str(budget)


def test_a_spent_report_changed_afterwards_does_not_change_what_was_spent():
    budget = BudgetAccountant(epsilon=10, delta=1e-5)
    report = _gauss(3.0, notes=("a",))
    budget.spend(report, label="first")
    before, text = budget.spent, str(budget)
    assert before > 0.5
    # the caller's object edited in every way: the ledger keeps what was recorded
    report.event = GaussianEvent(1e6)
    report.adjacency = "word"
    report.notes = ()
    assert budget.spent == before and str(budget) == text
    # and what the budget hands out is a copy, not its ledger
    budget.reports[0].event = GaussianEvent(1e6)
    assert budget.spent == before
    with pytest.raises(AttributeError):
        budget.reports.append(_gauss(1.0))
    with pytest.raises(AttributeError):
        budget.labels.append("x")
    assert budget.labels == ("first",)


@pytest.mark.parametrize("event", [GaussianEvent(1e-300), GaussianEvent(1.0, sensitivity=1e300),
                                   LaplaceEvent(1e-300), GaussianEvent(1e-10),
                                   GaussianEvent(0.01)])
def test_degenerate_events_are_refused_clearly(event):
    # the PLD library overflows, divides by zero or would need gigabytes on these; the
    # budget answers with its own error, and the report with its built-in bound
    budget = BudgetAccountant(epsilon=10, delta=1e-5)
    report = PrivacyReport(event, "document")
    with pytest.raises(BudgetExceededError, match="nothing was recorded"):
        budget.spend(report)
    assert budget.spent == 0.0 and not budget.reports
    assert report.epsilon(1e-5) == epsilon(event, 1e-5)


def test_huge_noise_costs_nothing_without_an_overflow():
    budget = BudgetAccountant(epsilon=1, delta=1e-5)
    assert budget.spend(PrivacyReport(GaussianEvent(1e300), "document")) == pytest.approx(0.0)
