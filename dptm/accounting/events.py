"""Privacy events: what a mechanism released, as plain, picklable, hashable data.

The event-tree idea follows Google's ``dp_accounting`` (``dp_event.py``): leaves describe a
single mechanism (Gaussian, Laplace, a pure / approximate / zCDP guarantee, randomized
response); inner nodes say how leaves were combined (Poisson subsampling, self-composition,
composition). Accountants walk the tree; events know nothing about accounting.

Every event takes an optional ``label`` naming what was released ("snapshot noise",
"minibatch statistics"...); reports print it.
"""
import math
from dataclasses import dataclass, field

from ._validation import count_int, delta_open, positive, probability, real

__all__ = [
    "PrivacyEvent", "GaussianEvent", "LaplaceEvent", "PureDPEvent", "ApproxDPEvent", "ZCDPEvent",
    "RandomizedResponseEvent", "PoissonSampledEvent", "GatedEvent", "SelfComposedEvent",
    "ComposedEvent", "epsilon_from_flip", "flip_from_epsilon", "randomized_response_epsilon",
    "leaf_events",
]


class PrivacyEvent:
    """Base class of every event (a marker; events are frozen dataclasses)."""

    __slots__ = ()

    def describe(self):  # pragma: no cover - overridden
        return type(self).__name__


def _set(obj, name, value):
    object.__setattr__(obj, name, value)


@dataclass(frozen=True)
class GaussianEvent(PrivacyEvent):
    """Gaussian mechanism: noise N(0, sigma^2) per coordinate, L2 ``sensitivity``.

    ``discrete=True`` is the discrete Gaussian of Canonne, Kamath & Steinke (2020); its
    RDP / zCDP bound alpha * Delta^2 / (2 sigma^2) is the same (CKS20, Theorem 4), so the
    accounting is identical. ``noise_multiplier`` = sigma / sensitivity.
    """

    sigma: float
    sensitivity: float = 1.0
    discrete: bool = False
    label: str = ""

    def __post_init__(self):
        _set(self, "sigma", positive(self.sigma, "sigma"))
        _set(self, "sensitivity", positive(self.sensitivity, "sensitivity"))
        _set(self, "discrete", bool(self.discrete))

    @property
    def noise_multiplier(self):
        return self.sigma / self.sensitivity

    def describe(self):
        kind = "discrete Gaussian" if self.discrete else "Gaussian"
        return (f"{kind} mechanism: sigma={self.sigma:.6g}, L2 sensitivity={self.sensitivity:.6g} "
                f"(noise multiplier {self.noise_multiplier:.6g})")


@dataclass(frozen=True)
class LaplaceEvent(PrivacyEvent):
    """Laplace mechanism: noise Lap(0, scale) per coordinate, L1 ``sensitivity``.

    Pure epsilon = sensitivity / scale. ``discrete=True`` is the discrete Laplace (geometric)
    mechanism with P(x) proportional to exp(-|x| / scale) on the integers: same epsilon.
    """

    scale: float
    sensitivity: float = 1.0
    discrete: bool = False
    label: str = ""

    def __post_init__(self):
        _set(self, "scale", positive(self.scale, "scale"))
        _set(self, "sensitivity", positive(self.sensitivity, "sensitivity"))
        _set(self, "discrete", bool(self.discrete))

    @property
    def noise_multiplier(self):
        return self.scale / self.sensitivity

    @property
    def epsilon(self):
        return self.sensitivity / self.scale

    def describe(self):
        kind = "discrete Laplace" if self.discrete else "Laplace"
        return (f"{kind} mechanism: scale={self.scale:.6g}, L1 sensitivity={self.sensitivity:.6g} "
                f"(pure epsilon {self.epsilon:.6g})")


@dataclass(frozen=True)
class PureDPEvent(PrivacyEvent):
    """Any epsilon-DP mechanism (delta = 0)."""

    epsilon: float
    label: str = ""

    def __post_init__(self):
        _set(self, "epsilon", positive(self.epsilon, "epsilon"))

    def describe(self):
        return f"epsilon-DP mechanism: epsilon={self.epsilon:.6g}"


@dataclass(frozen=True)
class ApproxDPEvent(PrivacyEvent):
    """Any (epsilon, delta)-DP mechanism. Only linear / advanced composition apply to it;
    it has no finite RDP or zCDP bound."""

    epsilon: float
    delta: float
    label: str = ""

    def __post_init__(self):
        _set(self, "epsilon", positive(self.epsilon, "epsilon", strict=False))
        _set(self, "delta", delta_open(self.delta, "delta"))

    def describe(self):
        return f"(epsilon, delta)-DP mechanism: epsilon={self.epsilon:.6g}, delta={self.delta:.3g}"


@dataclass(frozen=True)
class ZCDPEvent(PrivacyEvent):
    """Any rho-zCDP mechanism (Bun & Steinke 2016): RDP alpha * rho at every order."""

    rho: float
    label: str = ""

    def __post_init__(self):
        _set(self, "rho", positive(self.rho, "rho"))

    def describe(self):
        return f"rho-zCDP mechanism: rho={self.rho:.6g}"


def epsilon_from_flip(f):
    """Epsilon of randomized response on one bit with flip parameter ``f``.

    Each bit is replaced by a fair coin with probability ``f`` (kept with probability
    1 - f), so it is reported truthfully with probability 1 - f/2:
    epsilon = log((1 - f/2) / (f/2)) (Zhao et al. 2021, Theorem 4).
    """
    f = real(f, "f")
    if not 0.0 < f <= 1.0:
        raise ValueError(f"f (flip probability) must be in (0, 1], got {f}")
    return math.log1p(-f / 2.0) - math.log(f / 2.0)


def flip_from_epsilon(epsilon):
    """Inverse of :func:`epsilon_from_flip`: f = 2 / (1 + e^epsilon)."""
    epsilon = positive(epsilon, "epsilon")
    return 2.0 / (1.0 + math.exp(epsilon)) if epsilon < 700 else 2.0 * math.exp(-epsilon)


randomized_response_epsilon = epsilon_from_flip


@dataclass(frozen=True)
class RandomizedResponseEvent(PrivacyEvent):
    """Randomized response on one bit with flip parameter ``f`` (Zhao et al. 2021, Theorem 4).

    A pure-DP event with epsilon = :func:`epsilon_from_flip` (f)."""

    f: float
    label: str = ""

    def __post_init__(self):
        _set(self, "f", real(self.f, "f"))
        epsilon_from_flip(self.f)  # validates

    @property
    def epsilon(self):
        return epsilon_from_flip(self.f)

    def describe(self):
        return f"randomized response: flip f={self.f:.6g} (pure epsilon {self.epsilon:.6g})"


@dataclass(frozen=True)
class PoissonSampledEvent(PrivacyEvent):
    """``event`` run on a Poisson subsample: each record kept independently with
    probability ``sampling_probability`` (add/remove-one adjacency)."""

    event: PrivacyEvent
    sampling_probability: float
    label: str = ""

    def __post_init__(self):
        if not isinstance(self.event, PrivacyEvent):
            raise TypeError(f"event must be a PrivacyEvent, got {type(self.event).__name__}")
        _set(self, "sampling_probability", probability(self.sampling_probability, "sampling_probability"))

    def describe(self):
        return f"Poisson subsampling at rate q={self.sampling_probability:.6g} of: {self.event.describe()}"


@dataclass(frozen=True)
class GatedEvent(PrivacyEvent):
    """``event`` runs with probability ``probability``, decided independently of the data;
    otherwise the output is the same on both neighbouring datasets (given what was
    released before).

    This is the structure of a subsampled Gibbs step on the replaced token: selected, it
    draws a fresh topic (``event``); not selected, it keeps its previous topic. Unlike
    :class:`PoissonSampledEvent` (add/remove adjacency, where an unselected record is
    simply absent), the unselected output need not be close to the selected one, so the
    pure epsilon is *not* amplified: a topic that differs from the previous one is only
    reachable through ``event``. The Renyi divergence is, by joint convexity of
    exp((alpha - 1) D_alpha) (the common component cancels):

        D_alpha <= log(1 - p + p exp((alpha - 1) D_alpha(event))) / (alpha - 1).
    """

    event: PrivacyEvent
    probability: float
    label: str = ""

    def __post_init__(self):
        if not isinstance(self.event, PrivacyEvent):
            raise TypeError(f"event must be a PrivacyEvent, got {type(self.event).__name__}")
        _set(self, "probability", probability(self.probability, "probability"))

    def describe(self):
        return (f"run with probability p={self.probability:.6g} (otherwise an output equal on "
                f"neighbours) of: {self.event.describe()}")


@dataclass(frozen=True)
class SelfComposedEvent(PrivacyEvent):
    """``count`` adaptive repetitions of ``event``."""

    event: PrivacyEvent
    count: int
    label: str = ""

    def __post_init__(self):
        if not isinstance(self.event, PrivacyEvent):
            raise TypeError(f"event must be a PrivacyEvent, got {type(self.event).__name__}")
        _set(self, "count", count_int(self.count, "count", minimum=0))

    def describe(self):
        return f"{self.count} x [{self.event.describe()}]"


@dataclass(frozen=True)
class ComposedEvent(PrivacyEvent):
    """Adaptive composition of several events (any order)."""

    events: tuple = field(default_factory=tuple)
    label: str = ""

    def __post_init__(self):
        events = tuple(self.events)
        for e in events:
            if not isinstance(e, PrivacyEvent):
                raise TypeError(f"events must all be PrivacyEvent instances, got {type(e).__name__}")
        _set(self, "events", events)

    def describe(self):
        return "composition of " + "; ".join(e.describe() for e in self.events)


@dataclass(frozen=True)
class ParallelComposedEvent(PrivacyEvent):
    """Events run on DISJOINT parts of the data (parallel composition).

    Each record (document, user) is in exactly one part, and the parts are chosen
    independently of the data, so a neighbour changes the input of one part only; later
    parts may depend on earlier parts' outputs. For add/remove neighbours each record's
    part must be drawn independently of the others (e.g. i.i.d. with fixed probabilities):
    a random partition into parts of prescribed sizes is NOT enough, since adding a record
    then moves another one between parts and two parts change (at
    order 10 the RDP of two Gaussian parts is then about twice the maximum). The unit of
    adjacency must be the unit partitioned: documents split into parts do not give a
    user-level guarantee.
    The guarantee is the worst part's: conditionally on the part a record falls in, only
    that part's events see it, and Renyi divergence is jointly quasi-convex, so the RDP of
    the mixture over parts is at most the order-wise maximum (likewise rho, pure epsilon
    and delta). Part sizes are not needed and are not published.
    """

    events: tuple = field(default_factory=tuple)
    label: str = ""

    def __post_init__(self):
        events = tuple(self.events)
        if not events:
            raise ValueError("events must hold at least one part's event")
        for e in events:
            if not isinstance(e, PrivacyEvent):
                raise TypeError(f"events must all be PrivacyEvent instances, got {type(e).__name__}")
        _set(self, "events", events)

    def describe(self):
        return ("parallel composition (each record in exactly one part) of: "
                + "; ".join(e.describe() for e in self.events))


def leaf_events(event, count=1, sampling_probability=1.0):
    """Flatten an event tree into ``[(leaf, count, sampling_probability, label), ...]``.

    Identical leaves (same event, same rate) are merged with their counts added. Nested
    Poisson sampling multiplies the rates. ``label`` is the nearest non-empty label.
    """
    out = {}
    order = []

    def walk(e, c, q, label):
        label = getattr(e, "label", "") or label
        if isinstance(e, SelfComposedEvent):
            walk(e.event, c * e.count, q, label)
        elif isinstance(e, (ComposedEvent, ParallelComposedEvent)):
            for sub in e.events:
                walk(sub, c, q, label)
        elif isinstance(e, PoissonSampledEvent):
            walk(e.event, c, q * e.sampling_probability, label)
        else:
            key = (e, q, label)
            if key not in out:
                out[key] = 0
                order.append(key)
            out[key] += c

    walk(event, count, sampling_probability, "")
    return [(k[0], out[k], k[1], k[2]) for k in order if out[k] > 0]
