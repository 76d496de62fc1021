"""The ledger of a private fit: the privacy events of the releases it drew, in order.

A private fit (:class:`dptm.models._private_base.PrivateFit`) holds one :class:`Ledger`;
the fit then composes it into its report (:meth:`Ledger.composed`) or checks it against the
event it planned (:meth:`Ledger.check_within`), so that what a report states is what was
drawn.
"""
__all__ = ["Ledger"]


class Ledger:
    """The privacy events of the releases one fit drew, in order (public: parameters of the
    noise only). Made by the fit, dropped with it."""

    def __init__(self):
        self.events = []

    def record(self, event):
        """Append ``event`` (a :class:`dptm.accounting.PrivacyEvent`) and return it."""
        self.events.append(event)
        return event

    def __len__(self):
        return len(self.events)

    def composed(self, label="fit"):
        """The sequential composition of the recorded events: each run of equal events one
        :class:`~dptm.accounting.SelfComposedEvent`, the runs a
        :class:`~dptm.accounting.ComposedEvent` labelled ``label`` (a single run alone)."""
        from ..accounting import ComposedEvent, SelfComposedEvent
        if not self.events:
            raise ValueError("the ledger holds no release")
        parts, i = [], 0
        while i < len(self.events):
            j = i
            while j + 1 < len(self.events) and self.events[j + 1] == self.events[i]:
                j += 1
            ev = self.events[i]
            parts.append(SelfComposedEvent(ev, j - i + 1) if j > i else ev)
            i = j + 1
        return ComposedEvent(tuple(parts), label=label) if len(parts) > 1 else parts[0]

    def check_within(self, planned, count):
        """Raise RuntimeError unless every recorded event is ``planned`` and there are at
        most ``count`` of them: a report accounted in advance (``count`` releases of
        ``planned``) covers what was drawn."""
        if len(self.events) > count or any(ev != planned for ev in self.events):
            raise RuntimeError("the noise drawn differs from the noise accounted")
