"""The exact privacy loss distribution of the discrete Gaussian on integer-valued queries.

The RDP / zCDP bound of the discrete Gaussian (CKS20, Theorem 4) is the continuous one's,
and converting it to (epsilon, delta) loses a few per cent. For a query on the integer
lattice (counts) whose neighbouring values differ by a known integer vector u (up to sign
and order of coordinates), the privacy loss of N_Z(0, sigma^2)^d at output x is
``sum_i (u_i^2 - 2 u_i x_i) / (2 sigma^2)``, with x ~ N_Z(0, sigma^2)^d: a sum of
independent one-dimensional losses. :class:`DiscretePLDAccountant` composes them exactly
with ``dp_accounting``'s discrete-Gaussian PLD (pessimistic discretisation of the loss:
upper bounds), with the truncation of its noise support (mass below 1e-30 per coordinate)
charged to delta.

Which vector u a release has is a statement about the query that the event does not
carry: the caller declares it per release label (``integer_shifts``), e.g.
``{"noisy snapshot of the topic-word counts": (1, 1)}`` for the word-level count
snapshots of the Gibbs models, where replacing one token moves two counts by one each
(one count by one, the other case, is a post-processing of it, hence dominated). Lattice
releases of real-valued statistics (``mechanisms.lattice_gaussian``: any integer vector of
bounded norm on the lattice) are not covered and must not be declared: the worst vector is
not known, and the continuous Gaussian's PLD is not proven to bound the discrete one's.

Supported leaves: discrete Gaussians with a declared shift, pure-DP releases, Laplace (as
``PLDAccountant``), pure-DP releases gated with probability p (``GatedEvent``: the
randomized-response pair mixed with an output equal on neighbours, which every such
release post-processes), their self-composition and composition. No Poisson subsampling.
Needs ``dp-accounting`` (``pip install dptm[pld]``).
"""
import math

from ._validation import delta_open, positive
from .accountants import UnsupportedEventError, _Accountant
from .events import (ComposedEvent, GatedEvent, GaussianEvent, LaplaceEvent, PureDPEvent,
                     SelfComposedEvent)

__all__ = ["DiscretePLDAccountant", "discrete_gaussian_pld"]

# dp_accounting truncates N_Z(0, s^2) to |x| <= ceil(11.6 s); the mass beyond is below
# this (CKS20, Proposition 25 of the supplement; checked in _tail_mass).
_TAIL_BOUND = 1e-30


def _pld_module():
    try:
        from dp_accounting.pld import privacy_loss_distribution as pld
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("the discrete PLD accountant needs dp-accounting: "
                          "pip install dptm[pld]") from exc
    return pld


def _tail_mass(sigma):
    """Upper bound on P(|X| > ceil(11.6 sigma)) for X ~ N_Z(0, sigma^2) (the normaliser is
    at least 1, the tail a geometric series bound)."""
    t = math.ceil(11.6 * sigma) + 1
    ratio = math.exp(-(2 * t + 1) / (2 * sigma ** 2))
    return 2 * math.exp(-t * t / (2 * sigma ** 2)) / (1 - ratio)


def discrete_gaussian_pld(sigma, shifts=(1,), value_discretization_interval=1e-4):
    """PLD (``dp_accounting``) of N_Z(0, sigma^2)^d against its shift by the integer
    vector ``shifts``. Returns ``(pld, tail)``: the PLD and the total-variation distance
    between the sampled noise and the truncated noise the PLD describes."""
    sigma = positive(sigma, "sigma")
    shifts = tuple(shifts)
    if not shifts or not all(isinstance(s, int) and not isinstance(s, bool) for s in shifts):
        raise ValueError(f"shifts must be a non-empty tuple of integers, got {shifts!r}")
    pld_mod = _pld_module()
    out, tail = None, 0.0
    for s in sorted((abs(s) for s in shifts if s), reverse=True):
        one = pld_mod.from_discrete_gaussian_mechanism(
            sigma, sensitivity=s, value_discretization_interval=value_discretization_interval)
        out = one if out is None else out.compose(one)
        tail += _tail_mass(sigma)
    if out is None:
        raise ValueError("shifts must have a non-zero entry")
    return out, tail


def _gated_pure_pld(epsilon, probability, interval):
    """PLD of a pure epsilon-DP release run with ``probability``, else an output equal on
    neighbours: the randomized-response pair mixed with a common outcome."""
    pld_mod = _pld_module()
    a = -math.log1p(math.exp(-epsilon))                 # log(e^eps / (1 + e^eps))
    b = -epsilon - math.log1p(math.exp(-epsilon))       # log(1 / (1 + e^eps))
    lp, lq = math.log(probability), math.log1p(-probability) if probability < 1 else -math.inf
    upper = {"x": lp + a, "y": lp + b}
    lower = {"x": lp + b, "y": lp + a}
    if lq > -math.inf:
        upper["c"] = lower["c"] = lq
    return pld_mod.from_two_probability_mass_functions(
        lower, upper, value_discretization_interval=interval)


class DiscretePLDAccountant(_Accountant):
    """Exact (up to a pessimistic loss grid) accounting of discrete-Gaussian count releases.

    Parameters
    ----------
    integer_shifts : dict {str: tuple of int}
        For the label of each discrete ``GaussianEvent`` to account, the integer vector by
        which neighbouring values of its (integer-valued) query differ in the worst case:
        the caller's statement about the query. Its L2 norm must equal the event's
        sensitivity; an event whose label is not a key is unsupported.
    value_discretization_interval : float, default=1e-4

    Privacy
    -------
    Sound for releases of integer-valued queries with the declared shifts, noise drawn
    from N_Z(0, sigma^2) with sigma at least the event's (the reported sigma is the drawn
    one rounded down, one ulp at most), and adjacency as the report states it. Declaring
    a lattice release of a real-valued statistic is unsound.

    Examples
    --------
    >>> acc = DiscretePLDAccountant({"noisy snapshot of the topic-word counts": (1, 1)})
    >>> acc.compose(model.privacy_.event).get_epsilon(1e-5)   # doctest: +SKIP
    """

    method = "discrete-pld"

    def __init__(self, integer_shifts, value_discretization_interval=1e-4):
        self.interval = positive(value_discretization_interval, "value_discretization_interval")
        if not isinstance(integer_shifts, dict) or not integer_shifts:
            raise TypeError("integer_shifts must be a non-empty dict {label: shifts}")
        self.integer_shifts = {}
        for label, shifts in integer_shifts.items():
            shifts = tuple(shifts)
            if not isinstance(label, str):
                raise TypeError(f"integer_shifts keys must be release labels, got {label!r}")
            if not shifts or not all(isinstance(s, int) and not isinstance(s, bool)
                                     for s in shifts):
                raise ValueError(f"shifts for {label!r} must be integers, got {shifts!r}")
            self.integer_shifts[label] = shifts
        self._pld = None
        self._tail = 0.0
        self.ledger = []

    def _shifts(self, event):
        shifts = self.integer_shifts.get(event.label)
        if shifts is None:
            raise UnsupportedEventError(f"discrete PLD: no integer shifts declared for the "
                                        f"release {event.label!r}")
        norm = math.sqrt(sum(s * s for s in shifts))
        if not math.isclose(norm, event.sensitivity, rel_tol=1e-12):
            raise ValueError(f"the shifts declared for {event.label!r} have L2 norm {norm:.6g}, "
                             f"not the event's sensitivity {event.sensitivity:.6g}")
        return shifts

    def _cost(self, event):
        """(pld, tail mass) of one occurrence of ``event``."""
        pld_mod = _pld_module()
        if isinstance(event, SelfComposedEvent):
            pld, tail = self._cost(event.event)
            return pld.self_compose(event.count), tail * event.count
        if isinstance(event, ComposedEvent):
            parts = [self._cost(e) for e in event.events]
            pld, tail = parts[0]
            for p, t in parts[1:]:
                pld, tail = pld.compose(p), tail + t
            return pld, tail
        if isinstance(event, GaussianEvent):
            if not event.discrete:
                raise UnsupportedEventError("discrete PLD: continuous Gaussian (use PLDAccountant)")
            return discrete_gaussian_pld(event.sigma, self._shifts(event), self.interval)
        if isinstance(event, PureDPEvent):
            return _gated_pure_pld(event.epsilon, 1.0, self.interval), 0.0
        if isinstance(event, GatedEvent) and isinstance(event.event, PureDPEvent):
            return _gated_pure_pld(event.event.epsilon, event.probability, self.interval), 0.0
        if isinstance(event, LaplaceEvent):
            if event.discrete and float(event.sensitivity).is_integer():
                return pld_mod.from_discrete_laplace_mechanism(
                    1.0 / event.scale, int(event.sensitivity),
                    value_discretization_interval=self.interval), 0.0
            if not event.discrete:
                return pld_mod.from_laplace_mechanism(
                    event.scale, event.sensitivity,
                    value_discretization_interval=self.interval), 0.0
        raise UnsupportedEventError(f"discrete PLD cannot bound {type(event).__name__}")

    def _add(self, cost, count):
        if not count:
            return
        pld, tail = cost
        if count > 1:
            pld, tail = pld.self_compose(count), tail * count
        self._pld = pld if self._pld is None else self._pld.compose(pld)
        self._tail += tail

    def get_epsilon(self, delta):
        """Epsilon at ``delta``, the truncation of the noise's support charged.

        The PLD's noise is the sampled noise conditioned on the truncated support, of mass
        at least 1 - tau (tau: the truncated mass over every coordinate and step), so for
        every event S: P(S) - e^eps Q(S) <= P'(S) - e^(eps + log(1 - tau)) Q'(S) + tau.
        Hence epsilon(delta) <= epsilon'(delta - tau) + 2 tau.
        """
        delta = delta_open(delta)
        if self._pld is None:
            return 0.0
        tau = self._tail
        if tau >= delta / 2:                 # pragma: no cover - tau is below 1e-25 here
            raise ValueError("discrete PLD: the truncated noise mass does not fit in delta")
        eps = max(0.0, float(self._pld.get_epsilon_for_delta(delta - tau)))
        return math.nextafter(eps + 2 * tau, math.inf) if tau else eps
