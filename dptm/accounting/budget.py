"""``BudgetAccountant``: one privacy budget over several releases of the same data set.

A data owner who publishes a topic model, then a second one with other settings, then a
vocabulary, has spent the composition of all of them. The budget accountant keeps that
ledger: it composes the privacy reports of every release (adaptive composition of their
event trees, accounted by the tightest sound route), refuses a release that would take
the total beyond the cap (nothing is recorded then), and refuses releases whose adjacency
notion differs from the budget's, since guarantees about different neighbouring relations
do not compose into either of them. It keeps its own copies of the reports it recorded:
changing a report (or the model it came from) afterwards does not change what was spent.
"""
import math

from .events import ComposedEvent
from ._validation import delta_open, positive
from .report import ADJACENCIES, PrivacyReport

__all__ = ["BudgetAccountant", "BudgetExceededError"]


class BudgetExceededError(ValueError):
    """A release would take the total privacy loss beyond the budget's cap."""


def _copy(report):
    """An independent copy of ``report`` (its events are immutable; everything else is
    rebuilt), so that later changes to the caller's object leave the ledger as it was."""
    claim = report.paper_claim
    return PrivacyReport(
        report.event, report.adjacency, description=report.description, notes=report.notes,
        paper_claim=None if claim is None else type(claim)(claim.citation, claim.method,
                                                           dict(claim.params)),
        gamma=report.gamma, default_delta=report.default_delta, seeded=report.seeded,
        assumed_public=report.assumed_public, vocabulary=report.vocabulary)


def _report_of(release):
    """The privacy report of a report, a fitted private model or a ``Release``."""
    if isinstance(release, PrivacyReport):
        return release
    report = getattr(release, "privacy_", None) or getattr(release, "privacy", None)
    if not isinstance(report, PrivacyReport):
        raise TypeError("release must be a PrivacyReport, a fitted private model (privacy_) "
                        f"or a dptm.Release with a privacy report, got {type(release).__name__}")
    return report


class BudgetAccountant:
    """A cap on the total (epsilon, delta) of every release made from one data set.

    Parameters
    ----------
    epsilon : float > 0
        The cap on the composed epsilon.
    delta : float in (0, 1)
        The delta at which the composed epsilon is computed.
    adjacency : {"word", "document", "document-replace", "user", "local"}, optional
        The neighbouring relation all releases must share; default: the first release's.

    Examples
    --------
    >>> budget = BudgetAccountant(epsilon=8.0, delta=1e-5)       # doctest: +SKIP
    >>> budget.spend(model_a)              # raises BudgetExceededError past the cap
    >>> budget.spend(model_b.release())
    >>> print(budget)                      # the composed guarantee and what is left
    """

    def __init__(self, epsilon, delta, adjacency=None):
        self.epsilon_cap = positive(epsilon, "epsilon")
        self.delta = delta_open(delta, "delta")
        if adjacency is not None and adjacency not in ADJACENCIES:
            raise ValueError(f"adjacency must be one of {sorted(ADJACENCIES)}, got {adjacency!r}")
        self.adjacency = adjacency
        self._reports = []
        self._labels = []

    @property
    def reports(self):
        """Copies of the recorded reports, in spending order (a tuple: the ledger itself
        cannot be edited through it)."""
        return tuple(_copy(r) for r in self._reports)

    @property
    def labels(self):
        """The labels of the recorded releases, in spending order."""
        return tuple(self._labels)

    def _composed(self, reports):
        if not reports:
            return None
        gammas = [r.gamma for r in reports if r.gamma is not None]
        notes = [f"[{label}] {n}" for label, r in zip(self._labels + ["new release"], reports)
                 for n in r.notes]
        public = sorted({a for r in reports for a in r.assumed_public})
        vocab = sorted({r.vocabulary for r in reports if r.vocabulary is not None})
        return PrivacyReport(
            ComposedEvent(tuple(r.event for r in reports)), reports[0].adjacency,
            description=f"composition of {len(reports)} releases of one data set",
            notes=notes, default_delta=self.delta,
            # (eps, delta, gamma)-random DP composes with the union bound over the gammas
            gamma=min(sum(gammas), 0.999999) if gammas else None,
            seeded=any(r.seeded for r in reports), assumed_public=public,
            vocabulary="; ".join(vocab) if vocab else None)

    def epsilon_if_spent(self, release):
        """The total epsilon at ``delta`` if ``release`` were added (nothing is recorded)."""
        report = self._check(release)
        return self._composed(self._reports + [report]).epsilon(self.delta)

    def _check(self, release):
        report = _copy(_report_of(release))
        adjacency = self.adjacency or (self._reports[0].adjacency if self._reports else None)
        if adjacency is not None and report.adjacency != adjacency:
            raise ValueError(f"the release is {report.adjacency}-level but the budget is "
                             f"{adjacency}-level: guarantees about different neighbouring "
                             "relations do not compose; keep one budget per relation")
        return report

    def spend(self, release, label=None):
        """Record ``release`` (a report, a fitted private model or a ``Release``) if the
        total stays within the cap; otherwise raise :class:`BudgetExceededError` and
        record nothing. Returns the total epsilon after it."""
        report = self._check(release)
        total = self._composed(self._reports + [report]).epsilon(self.delta)
        if not math.isfinite(total):
            raise BudgetExceededError(
                f"this release has no finite guarantee at delta = {self.delta:.3g} (epsilon = "
                f"{total}: a degenerate noise scale or count); nothing was recorded")
        if total > self.epsilon_cap:
            raise BudgetExceededError(
                f"this release would bring the total to epsilon = {total:.4g} at delta = "
                f"{self.delta:.3g}, beyond the budget's cap of {self.epsilon_cap:.4g} "
                f"({self.spent:.4g} spent so far); nothing was recorded")
        self._reports.append(report)
        self._labels.append(label or f"release {len(self._reports)}")
        if self.adjacency is None:
            self.adjacency = report.adjacency
        return total

    @property
    def spent(self):
        """Total epsilon at ``delta`` of the recorded releases (0 before any)."""
        return 0.0 if not self._reports else self._composed(self._reports).epsilon(self.delta)

    @property
    def remaining(self):
        """How much epsilon the cap still allows (an upper bound: composition is not
        additive, so a release of this epsilon may cost less)."""
        return max(self.epsilon_cap - self.spent, 0.0)

    def report(self):
        """The composed :class:`PrivacyReport` of every recorded release (None before any)."""
        return self._composed(self._reports)

    def __str__(self):
        head = (f"Privacy budget: epsilon cap {self.epsilon_cap:.4g} at delta {self.delta:.3g}, "
                f"{self.spent:.4g} spent in {len(self._reports)} release(s), "
                f"{self.remaining:.4g} left")
        return head if not self._reports else head + "\n" + str(self.report())
