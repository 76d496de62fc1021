"""Accountants: ledgers that compose events and answer ``get_epsilon(delta)``.

One contract for all (after Google's dp_accounting ``PrivacyAccountant``):
``supports(event) -> bool``, ``compose(event, count=1) -> self``,
``get_epsilon(delta) -> float`` (+inf when unbounded, never NaN).

* :class:`RDPAccountant` - Renyi DP over a grid of orders (the dependency-free default;
  the only one that amplifies Gaussian noise by Poisson subsampling).
* :class:`ZCDPAccountant` - zero-concentrated DP (Gaussian, pure-DP events).
* :class:`PureDPAccountant` - basic composition of pure (and approximate) DP events.
* ``PLDAccountant`` (``dptm.accounting.pld``) - privacy loss distributions through
  Google's ``dp-accounting`` (optional extra ``dptm[pld]``).

:func:`epsilon` / :func:`epsilon_and_method` return the tightest sound answer among the
built-in accountants that support an event.
"""
import math
from functools import lru_cache

import numpy as np

from ._validation import count_int, delta_open, real
from .conversions import amplify_dp_by_subsampling, rdp_to_dp
from .events import (ApproxDPEvent, ComposedEvent, GatedEvent, GaussianEvent, LaplaceEvent,
                     ParallelComposedEvent,
                     PoissonSampledEvent, PrivacyEvent, PureDPEvent, RandomizedResponseEvent,
                     SelfComposedEvent, ZCDPEvent)
from .rdp import (DEFAULT_ORDERS, rdp_gated, rdp_gaussian, rdp_laplace, rdp_pure_dp,
                  rdp_subsampled_gaussian)
from .zcdp import zcdp_gaussian, zcdp_to_dp

__all__ = ["RDPAccountant", "ZCDPAccountant", "PureDPAccountant", "epsilon",
           "epsilon_and_method", "METHODS"]

METHODS = ("rdp", "zcdp", "pure", "pld")


class UnsupportedEventError(ValueError):
    """The accountant cannot bound this event."""


def _check_event(event):
    if not isinstance(event, PrivacyEvent):
        raise TypeError(f"event must be a dptm.accounting PrivacyEvent, got {type(event).__name__}")


def _pure_epsilon(event):
    """Pure epsilon of a leaf, or None if the leaf is not pure DP."""
    if isinstance(event, GatedEvent):
        return _pure_epsilon(event.event)          # gating does not amplify pure DP
    if isinstance(event, LaplaceEvent):
        return event.epsilon
    if isinstance(event, (PureDPEvent, RandomizedResponseEvent)):
        return event.epsilon
    return None


class _Accountant:
    """Shared plumbing: event validation, ``supports``, ``compose``."""

    method = ""

    def supports(self, event):
        """Whether this accountant can bound ``event`` (never raises for a valid event)."""
        _check_event(event)
        try:
            self._cost(event)
        except UnsupportedEventError:
            return False
        return True

    def compose(self, event, count=1):
        """Record ``count`` adaptive repetitions of ``event``; returns ``self``."""
        _check_event(event)
        count = count_int(count, "count", minimum=0)
        cost = self._cost(event)
        self._add(cost, count)
        self.ledger.append((event, count))
        return self

    def _cost(self, event):  # pragma: no cover - abstract
        raise NotImplementedError

    def _add(self, cost, count):  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}({len(self.ledger)} events)"


def _composite_pure_epsilon(event, route):
    """Pure epsilon of a whole composite event run on one shared subsample, or
    UnsupportedEventError (the route cannot amplify a composite that is not pure DP)."""
    acc = PureDPAccountant()
    try:
        eps, delta = acc._cost(event)
    except UnsupportedEventError:
        eps, delta = math.inf, 1.0
    if delta > 0 or not eps < math.inf:
        raise UnsupportedEventError(
            f"{route}: Poisson sampling of a composite event (several mechanisms on one shared "
            "subsample, e.g. nested PoissonSampledEvent around a ComposedEvent) is only "
            "supported when the composite is pure DP; account each mechanism's own "
            "subsampling instead")
    return eps


# --------------------------------------------------------------------------- RDP
@lru_cache(maxsize=512)
def _rdp_leaf(event, q, orders):
    """RDP vector of a leaf event run on a Poisson subsample at rate q (cached)."""
    if isinstance(event, GatedEvent) and q == 1.0:
        return rdp_gated(_rdp_leaf(event.event, 1.0, orders), event.probability, orders)
    orders = np.asarray(orders)
    if isinstance(event, GaussianEvent):
        if q == 1.0:
            return rdp_gaussian(event.sigma, orders, event.sensitivity)
        rdp = rdp_subsampled_gaussian(q, event.noise_multiplier, orders)
        if event.discrete:
            # At integer orders the subsampled bound is a binomial expansion in the moments
            # E[(p1/p0)^j] = exp(j (j - 1) Delta^2 / (2 sigma^2)), which the discrete
            # Gaussian shares exactly for shifts on its lattice; the fractional-order series
            # rests on the continuous density, so those orders are not used for it.
            rdp = np.where(orders == np.floor(orders), rdp, np.inf)
        return rdp
    if isinstance(event, ZCDPEvent):
        if q != 1.0:
            raise UnsupportedEventError("RDP: Poisson subsampling of a generic zCDP event")
        return orders * event.rho
    eps = _pure_epsilon(event)
    if eps is not None:
        if math.isinf(eps):  # e.g. Laplace scale 5e-324: no effective noise
            return np.full(len(orders), np.inf)
        if q != 1.0:
            # amplification by subsampling of a pure-DP mechanism, then its tight RDP
            eps, _ = amplify_dp_by_subsampling(eps, 0.0, q)
            return rdp_pure_dp(eps, orders)
        if isinstance(event, LaplaceEvent):
            return np.minimum(rdp_laplace(event.scale, orders, event.sensitivity),
                              rdp_pure_dp(eps, orders))
        return rdp_pure_dp(eps, orders)
    raise UnsupportedEventError(f"RDP cannot bound {type(event).__name__} (no finite RDP)")


class RDPAccountant(_Accountant):
    """Renyi-DP accountant over a grid of orders (Mironov 2017).

    Supports Gaussian (plain, discrete, Poisson-subsampled), Laplace, pure-DP, randomized
    response and zCDP events and their compositions; not ApproxDPEvent (which has no finite
    RDP). Conversion to (epsilon, delta) by :func:`rdp_to_dp`.

    Parameters
    ----------
    orders : sequence of float > 1
    """

    method = "rdp"

    def __init__(self, orders=DEFAULT_ORDERS):
        from ._validation import orders_array
        self.orders = tuple(float(a) for a in orders_array(orders))
        self._rdp = np.zeros(len(self.orders))
        self.ledger = []

    @property
    def rdp(self):
        """Current RDP vector (copy), aligned with ``orders``."""
        return self._rdp.copy()

    def _cost(self, event, q=1.0):
        if q < 1.0 and isinstance(event, (SelfComposedEvent, ComposedEvent, ParallelComposedEvent)):
            # Several mechanisms run on ONE shared subsample (e.g. nested Poisson sampling of
            # a composition): amplifying each leaf on its own would be unsound. A pure-DP
            # composite is amplified as a whole mechanism; anything else is refused.
            return _rdp_leaf(PureDPEvent(epsilon=_composite_pure_epsilon(event, "RDP")), q,
                             self.orders)
        if isinstance(event, SelfComposedEvent):
            return event.count * self._cost(event.event, q) if event.count else np.zeros(len(self.orders))
        if isinstance(event, ComposedEvent):
            total = np.zeros(len(self.orders))
            for e in event.events:
                total = total + self._cost(e, q)
            return total
        if isinstance(event, ParallelComposedEvent):
            return np.maximum.reduce([self._cost(e, q) for e in event.events])
        if isinstance(event, PoissonSampledEvent):
            return self._cost(event.event, q * event.sampling_probability)
        return _rdp_leaf(event, q, self.orders)

    def _add(self, cost, count):
        if count:
            self._rdp = self._rdp + count * cost

    def get_epsilon_and_order(self, delta):
        """``(epsilon, order)`` at ``delta`` in (0, 1)."""
        delta = delta_open(delta)
        if not np.any(self._rdp):
            return 0.0, self.orders[0]
        return rdp_to_dp(self._rdp, self.orders, delta)

    def get_epsilon(self, delta):
        return self.get_epsilon_and_order(delta)[0]


# --------------------------------------------------------------------------- zCDP
class ZCDPAccountant(_Accountant):
    """zCDP accountant (Bun & Steinke 2016): rho adds up under composition.

    Supports Gaussian (rho = Delta^2 / (2 sigma^2)), zCDP and pure-DP events (eps^2 / 2);
    not Poisson subsampling with q < 1 (zCDP does not capture amplification) nor
    ApproxDPEvent. ``conversion`` is passed to :func:`zcdp_to_dp`."""

    method = "zcdp"

    def __init__(self, conversion="cks"):
        if conversion not in ("cks", "bun-steinke"):
            raise ValueError(f"conversion must be 'cks' or 'bun-steinke', got {conversion!r}")
        self.conversion = conversion
        self.rho = 0.0
        self.ledger = []

    def _cost(self, event):
        if isinstance(event, SelfComposedEvent):
            return event.count * self._cost(event.event) if event.count else 0.0
        if isinstance(event, ComposedEvent):
            return sum((self._cost(e) for e in event.events), 0.0)
        if isinstance(event, ParallelComposedEvent):
            return max(self._cost(e) for e in event.events)
        if isinstance(event, PoissonSampledEvent):
            if event.sampling_probability < 1.0:
                raise UnsupportedEventError("zCDP: no amplification by subsampling")
            return self._cost(event.event)
        if isinstance(event, GatedEvent):
            return self._cost(event.event)          # D_alpha(gated) <= D_alpha(event)
        if isinstance(event, GaussianEvent):
            return zcdp_gaussian(event.sigma, event.sensitivity)
        if isinstance(event, ZCDPEvent):
            return event.rho
        eps = _pure_epsilon(event)
        if eps is not None:
            return 0.5 * eps * eps
        raise UnsupportedEventError(f"zCDP cannot bound {type(event).__name__}")

    def _add(self, cost, count):
        if count:
            self.rho += count * cost

    def get_epsilon(self, delta):
        delta = delta_open(delta)
        return zcdp_to_dp(self.rho, delta, method=self.conversion)


# --------------------------------------------------------------------------- pure / basic
class PureDPAccountant(_Accountant):
    """Basic (linear) composition: epsilons and deltas add (Dwork & Roth 2014, Thm. 3.16).

    Supports pure-DP leaves (Laplace, discrete Laplace, randomized response, PureDPEvent),
    their Poisson subsampling (amplification log(1 + q(e^eps - 1))) and ApproxDPEvent
    (its delta is added; ``get_epsilon(delta)`` is +inf when ``delta`` is below the total).
    ``get_epsilon(0)`` is allowed and is the pure epsilon when no delta was spent."""

    method = "pure"

    def __init__(self):
        self.epsilon = 0.0
        self.delta = 0.0
        self.ledger = []

    def _cost(self, event, q=1.0):
        if q < 1.0 and isinstance(event, (SelfComposedEvent, ComposedEvent, ParallelComposedEvent)):
            # One subsample shared by the whole composite: amplify the composed mechanism
            # as a whole (it is (e, d)-DP), never each leaf on its own.
            e, d = self._cost(event, 1.0)
            return amplify_dp_by_subsampling(e, d, q) if e < math.inf else (e, min(1.0, q * d))
        if isinstance(event, SelfComposedEvent):
            if event.count == 0:  # 0 x (an infinite epsilon) is 0, not nan
                return 0.0, 0.0
            e, d = self._cost(event.event, q)
            return event.count * e, event.count * d
        if isinstance(event, ComposedEvent):
            te, td = 0.0, 0.0
            for sub in event.events:
                e, d = self._cost(sub, q)
                te, td = te + e, td + d
            return te, td
        if isinstance(event, ParallelComposedEvent):
            costs = [self._cost(sub, q) for sub in event.events]
            return max(c[0] for c in costs), max(c[1] for c in costs)
        if isinstance(event, PoissonSampledEvent):
            return self._cost(event.event, q * event.sampling_probability)
        if isinstance(event, ApproxDPEvent):
            return amplify_dp_by_subsampling(event.epsilon, event.delta, q)
        eps = _pure_epsilon(event)
        if eps is not None:
            if math.isinf(eps):
                return math.inf, 0.0
            return amplify_dp_by_subsampling(eps, 0.0, q)
        raise UnsupportedEventError(f"pure DP cannot bound {type(event).__name__}")

    def _add(self, cost, count):
        if count:
            self.epsilon += count * cost[0]
            self.delta += count * cost[1]

    def get_epsilon(self, delta=0.0):
        delta = real(delta, "delta")
        if not 0.0 <= delta < 1.0:
            raise ValueError(f"delta must be in [0, 1), got {delta}")
        if self.delta > delta * (1 + 1e-12):
            return math.inf
        return float(self.epsilon)


# --------------------------------------------------------------------------- routing
def _make(method, **kwargs):
    if method == "rdp":
        return RDPAccountant(**kwargs)
    if method == "zcdp":
        return ZCDPAccountant(**kwargs)
    if method == "pure":
        return PureDPAccountant()
    if method == "pld":
        from .pld import PLDAccountant
        return PLDAccountant(**kwargs)
    raise ValueError(f"method must be one of {METHODS} or 'auto', got {method!r}")


def epsilon_and_method(event, delta, method="auto", **kwargs):
    """Tightest sound epsilon at ``delta`` and the name of the route that gave it.

    ``method="auto"`` takes the minimum over the built-in accountants (rdp, zcdp, pure)
    that support ``event`` (every one of them is an upper bound, so the minimum is too).
    ``delta`` must be in (0, 1), or 0 for events with a pure-DP bound.
    Raises ValueError if no route supports the event.
    """
    _check_event(event)
    delta = real(delta, "delta")
    if delta == 0.0:
        if method not in ("auto", "pure"):
            raise ValueError("delta = 0 is only meaningful for pure-DP events (method 'pure')")
        routes = ["pure"]
    else:
        delta_open(delta)
        routes = ["rdp", "zcdp", "pure"] if method == "auto" else [method]
    best, best_name = math.inf, None
    errors = []
    for name in routes:
        acc = _make(name, **(kwargs if method != "auto" else {}))
        if not acc.supports(event):
            errors.append(name)
            continue
        eps = acc.compose(event).get_epsilon(delta)
        if best_name is None or eps < best:
            best, best_name = eps, name
    if best_name is None:
        raise ValueError(f"no accountant among {routes} supports this event "
                         f"({type(event).__name__}); delta={delta}")
    return float(best), best_name


def epsilon(event, delta, method="auto", **kwargs):
    """Epsilon of ``event`` at ``delta`` (see :func:`epsilon_and_method`)."""
    return epsilon_and_method(event, delta, method, **kwargs)[0]
