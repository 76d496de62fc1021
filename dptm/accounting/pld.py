"""Privacy-loss-distribution accounting through Google's ``dp-accounting`` (optional).

The tightest route for compositions of (Poisson-subsampled) Gaussian and Laplace
mechanisms: the PLD of each mechanism is discretised pessimistically (an upper bound)
and composed by FFT (Koskela et al. 2020; Doroshenko et al. 2022). Install with
``pip install dptm[pld]``; ``dp_accounting`` is imported only when a
:class:`PLDAccountant` is created.
"""
import math

from ._validation import delta_open, positive
from .accountants import UnsupportedEventError, _Accountant
from .events import (ComposedEvent, GaussianEvent, LaplaceEvent, PoissonSampledEvent,
                     SelfComposedEvent)

__all__ = ["PLDAccountant", "pld_available"]

_INSTALL_HINT = ("PLD accounting needs Google's dp-accounting package: "
                 "pip install dptm[pld]  (or: pip install dp-accounting)")


def _import_dp_accounting():
    try:
        import dp_accounting  # noqa: F401
        from dp_accounting import dp_event
        from dp_accounting.pld import pld_privacy_accountant
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from exc
    return dp_event, pld_privacy_accountant


def pld_available():
    """True when ``dp_accounting`` can be imported."""
    try:
        _import_dp_accounting()
    except ImportError:
        return False
    return True


class PLDAccountant(_Accountant):
    """PLD accountant (add/remove-one adjacency) wrapping ``dp_accounting``'s.

    Supports Gaussian (continuous) and Laplace (continuous; discrete with integer
    sensitivity) leaves, their Poisson subsampling, self-composition and composition.
    Pessimistic discretisation: reported epsilons are upper bounds.

    Parameters
    ----------
    value_discretization_interval : float > 0
        Grid step of the privacy loss; smaller is tighter and slower (1e-4 is
        dp_accounting's default).
    """

    method = "pld"

    def __init__(self, value_discretization_interval=1e-4):
        self._dp_event, mod = _import_dp_accounting()
        self.value_discretization_interval = positive(
            value_discretization_interval, "value_discretization_interval")
        self._acc = mod.PLDAccountant(value_discretization_interval=self.value_discretization_interval)
        self.ledger = []

    def _convert(self, event):
        ev = self._dp_event
        if isinstance(event, SelfComposedEvent):
            return ev.SelfComposedDpEvent(self._convert(event.event), event.count)
        if isinstance(event, ComposedEvent):
            return ev.ComposedDpEvent([self._convert(e) for e in event.events])
        if isinstance(event, PoissonSampledEvent):
            return ev.PoissonSampledDpEvent(event.sampling_probability, self._convert(event.event))
        if isinstance(event, GaussianEvent):
            if event.discrete:
                raise UnsupportedEventError("PLD: discrete Gaussian is not supported (use RDP)")
            return ev.GaussianDpEvent(event.noise_multiplier)
        if isinstance(event, LaplaceEvent):
            if event.discrete:
                if not float(event.sensitivity).is_integer():
                    raise UnsupportedEventError("PLD: discrete Laplace needs an integer sensitivity")
                return ev.DiscreteLaplaceDpEvent(1.0 / event.scale, int(event.sensitivity))
            return ev.LaplaceDpEvent(event.noise_multiplier)
        raise UnsupportedEventError(f"PLD cannot bound {type(event).__name__}")

    def _cost(self, event):
        converted = self._convert(event)
        if not self._acc.supports(converted):
            raise UnsupportedEventError(f"dp_accounting's PLD accountant rejects {type(event).__name__}")
        return converted

    def _add(self, cost, count):
        if count:
            self._acc.compose(cost, count)

    def get_epsilon(self, delta):
        delta = delta_open(delta)
        eps = float(self._acc.get_epsilon(delta))
        if math.isnan(eps):  # pragma: no cover - defensive
            return math.inf
        return max(0.0, eps)
