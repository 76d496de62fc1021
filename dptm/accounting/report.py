"""``PrivacyReport``: the guarantee a fitted private model states (``model.privacy_``).

It holds the released events (plain data), the adjacency notion, and optionally the
paper's own claimed accounting (:class:`PaperClaim`), kept apart from - and never used by -
``epsilon()``. Pickles with its events.
"""
import math
from dataclasses import dataclass, field, fields, is_dataclass
from functools import lru_cache

from ._validation import delta_open, real
from .accountants import epsilon_and_method as _epsilon_and_method, _pure_epsilon
from .events import (ApproxDPEvent, ComposedEvent, GatedEvent, GaussianEvent, LaplaceEvent,
                     ParallelComposedEvent, PrivacyEvent, PureDPEvent, RandomizedResponseEvent,
                     ZCDPEvent, leaf_events)

__all__ = ["PaperClaim", "PrivacyReport", "ADJACENCIES", "event_to_dict", "event_from_dict"]

# How str() names each route of ``epsilon_and_method``.
_ROUTE_NAMES = {"pure": "basic composition of pure/approximate DP"}

ADJACENCIES = {
    "word": "word-level: neighbouring corpora differ in one token (one word replaced by another)",
    "document": "document-level: neighbouring corpora differ by adding or removing one document",
    "document-replace": ("document-level (substitution): neighbouring corpora of the same public "
                         "size differ in one document replaced by another"),
    "user": "user-level: neighbouring corpora differ by adding or removing all documents of one user",
    "local": "local: each client randomizes its own data before it leaves the device",
}


@dataclass(frozen=True)
class PaperClaim:
    """A paper's own accounting, for reproduction: ``method`` names a function of
    :mod:`dptm.accounting.recipes` called as ``method(**params, delta=delta)`` (if it takes
    ``delta``) returning the paper's epsilon, which may be unsound."""

    citation: str
    method: str
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        from . import recipes
        fn = getattr(recipes, self.method, None)
        if fn is None or not callable(fn):
            raise ValueError(f"method must name a function in dptm.accounting.recipes, got {self.method!r}")
        object.__setattr__(self, "params", dict(self.params))

    def __hash__(self):
        return hash((self.citation, self.method, tuple(sorted(self.params.items()))))

    def epsilon(self, delta=None):
        import inspect

        from . import recipes
        fn = getattr(recipes, self.method)
        params = dict(self.params)
        if "delta" in inspect.signature(fn).parameters and delta is not None:
            params["delta"] = delta
        return float(fn(**params))


_NOT_HARDENED = " [floating-point sampler: not hardened against low-bit attacks]"


def _leaf_params(ev):
    if isinstance(ev, GatedEvent):
        return (f"run with probability {ev.probability:.6g}, else an output equal on neighbours: "
                + _leaf_params(ev.event))
    if isinstance(ev, GaussianEvent):
        return (f"{'discrete ' if ev.discrete else ''}Gaussian noise sigma={ev.sigma:.6g}, "
                f"L2 sensitivity={ev.sensitivity:.6g} (noise multiplier {ev.noise_multiplier:.6g})"
                + ("" if ev.discrete else _NOT_HARDENED))
    if isinstance(ev, LaplaceEvent):
        return (f"{'discrete ' if ev.discrete else ''}Laplace noise scale={ev.scale:.6g}, "
                f"L1 sensitivity={ev.sensitivity:.6g} (pure epsilon {ev.epsilon:.6g})"
                + ("" if ev.discrete else _NOT_HARDENED))
    if isinstance(ev, RandomizedResponseEvent):
        return f"randomized response flip f={ev.f:.6g}, sensitivity: one bit (pure epsilon {ev.epsilon:.6g})"
    if isinstance(ev, PureDPEvent):
        return f"pure DP release epsilon={ev.epsilon:.6g}"
    if isinstance(ev, ApproxDPEvent):
        return f"approximate DP release epsilon={ev.epsilon:.6g}, delta={ev.delta:.3g}"
    if isinstance(ev, ZCDPEvent):
        return f"zCDP release rho={ev.rho:.6g}"
    return ev.describe()  # pragma: no cover


def _event_dict(ev):
    """A leaf event as plain data (JSON-ready); nested events (GatedEvent) recursively."""
    out = {"mechanism": type(ev).__name__}
    for k, v in vars(ev).items():
        if k != "label":
            out[k] = _event_dict(v) if isinstance(v, PrivacyEvent) else v
    return out


# PLD only tightens bounds that mean something: above this built-in epsilon (a guarantee
# that is vacuous anyway) its grid would need up to gigabytes (noise multiplier 0.01).
_PLD_MAX_EPSILON = 64.0


@lru_cache(maxsize=256)
def _tightest(event, delta):
    """(epsilon, route) at ``delta``: the built-in routes (RDP, zCDP, pure DP), and PLD
    when ``dp-accounting`` is installed and supports every leaf (continuous Gaussian and
    Laplace, discrete Laplace) and the built-in epsilon is at most ``_PLD_MAX_EPSILON``;
    the smallest, since each is an upper bound. Cached: events are immutable."""
    eps, route = _epsilon_and_method(event, delta)
    if 0 < delta and eps <= _PLD_MAX_EPSILON:
        from .pld import PLDAccountant, pld_available
        if pld_available():
            acc = PLDAccountant()
            if acc.supports(event):
                try:
                    pld_eps = acc.compose(event).get_epsilon(delta)
                except (ArithmeticError, MemoryError, ValueError):
                    # a degenerate event for the library's grid (overflow, huge support):
                    # the built-in bound, sound on its own, stands
                    pld_eps = math.inf
                if pld_eps < eps:
                    eps, route = pld_eps, "pld"
    return eps, route


def _leaf_lines(event, indent):
    out = []
    for e, c, q, label in leaf_events(event):
        name = f"[{label}] " if label else ""
        rate = "no subsampling" if q == 1.0 else f"Poisson sampling rate q={q:.6g}"
        out.append(f"{indent}- {name}{_leaf_params(e)}; {rate}; count={c}")
    return out


def _has_parallel(event):
    if isinstance(event, ParallelComposedEvent):
        return True
    return isinstance(event, ComposedEvent) and any(_has_parallel(e) for e in event.events)


def _mechanism_lines(event, indent):
    """The report's mechanism list. A parallel composition (possibly inside a composition)
    is shown part by part: flattening it would merge identical parts and add their counts,
    although each record meets one part only."""
    if isinstance(event, ParallelComposedEvent):
        label = f" [{event.label}]" if event.label else ""
        out = [f"{indent}- in parallel{label}: each record is in exactly one part; the "
               "guarantee is the worst part's"]
        for i, part in enumerate(event.events, 1):
            out.append(f"{indent}  part {i}:")
            out.extend(_mechanism_lines(part, indent + "    "))
        return out
    if _has_parallel(event):
        out = []
        for sub in event.events:
            out.extend(_mechanism_lines(sub, indent))
        return out
    return _leaf_lines(event, indent)


_KIND_KEY = "__event__"


def event_to_dict(event):
    """The whole event tree as plain data (JSON-ready); inverse of :func:`event_from_dict`."""
    out = {_KIND_KEY: type(event).__name__}
    for f in fields(event):
        v = getattr(event, f.name)
        if isinstance(v, PrivacyEvent):
            v = event_to_dict(v)
        elif isinstance(v, tuple) and all(isinstance(e, PrivacyEvent) for e in v):
            v = [event_to_dict(e) for e in v]
        out[f.name] = v
    return out


def event_from_dict(data):
    """Rebuild an event tree saved by :func:`event_to_dict` (validated by the events)."""
    from . import events as _events
    if not isinstance(data, dict) or _KIND_KEY not in data:
        raise ValueError(f"not a saved privacy event: {data!r:.80}")
    cls = getattr(_events, str(data[_KIND_KEY]), None)
    # a concrete event only: the bare marker class bounds nothing
    if not (isinstance(cls, type) and issubclass(cls, PrivacyEvent) and is_dataclass(cls)):
        raise ValueError(f"unknown privacy event {data[_KIND_KEY]!r:.80}")
    types = {f.name: f.type for f in fields(cls)}
    kwargs = {}
    for k, v in data.items():
        if k == _KIND_KEY:
            continue
        if k not in types:
            raise ValueError(f"{cls.__name__} has no field {k!r:.80}")
        if isinstance(v, dict) and _KIND_KEY in v:
            v = event_from_dict(v)
        elif isinstance(v, list) and v and all(isinstance(e, dict) and _KIND_KEY in e for e in v):
            v = tuple(event_from_dict(e) for e in v)
        elif types[k] in (bool, "bool") and not isinstance(v, bool):
            raise ValueError(f"{cls.__name__}.{k} must be a bool, got {type(v).__name__}")
        elif types[k] in (str, "str") and not isinstance(v, str):
            raise ValueError(f"{cls.__name__}.{k} must be a string, got {type(v).__name__}")
        kwargs[k] = v
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise ValueError(f"invalid {cls.__name__}: {exc}") from None


_STATE_KEYS = frozenset({"event", "adjacency", "description", "notes", "paper_claim", "gamma",
                         "default_delta", "seeded", "assumed_public", "vocabulary"})


class PrivacyReport:
    """Privacy guarantee of a release.

    Parameters
    ----------
    event : PrivacyEvent
        Everything that was released, as an event tree.
    adjacency : {"word", "document", "document-replace", "user", "local"}
    description : str
        One line on what the model released.
    notes : sequence of str
        Extra caveats printed with the report (clipping, caps, ...).
    paper_claim : PaperClaim or None
        The paper's own accounting; shown labelled as such, never used by ``epsilon``.
    gamma : float in (0, 1) or None
        For (epsilon, delta, gamma)-random DP (Wang et al. 2022): the guarantee holds with
        probability >= 1 - gamma over the sensitivity sampling.
    default_delta : float
        Delta used by ``str()`` (ignored for pure-DP-only events, reported at delta = 0).
    seeded : bool
        True when the mechanism drew from a caller-given seed (test mode): the first line of
        the report then says that the guarantee holds only while the seed stays secret.
    assumed_public : sequence of str
        Quantities the guarantee treats as public (the number of documents, the
        vocabulary, length caps, ...), printed under "assumed public".
    vocabulary : str or None
        Provenance of the vocabulary: "public (given)", "DP-selected (epsilon=.., delta=..)".

    Every field is a declared public parameter or a function of the mechanism's
    parameters, never of the data: reports of neighbouring data sets are identical.

    Scope: the guarantee is for data sets the estimators accept. Input validation refuses,
    with an error, data outside fixed public limits: a corpus without any token, a count or
    a total of 2**63 tokens or more (the int64 count type), more than 2**31 - 1 tokens for
    the Gibbs kernels' int32 counts, more than 2**24 distinct words for a DP vocabulary.
    Such a refusal depends on the data (a neighbour just across a limit is refused), so the
    guarantee covers pairs of neighbouring data sets that are both within the limits; the
    errors name the limit, never the private quantity.
    """

    def __init__(self, event, adjacency, *, description="", notes=(), paper_claim=None,
                 gamma=None, default_delta=1e-5, seeded=False, assumed_public=(),
                 vocabulary=None):
        if not isinstance(event, PrivacyEvent):
            raise TypeError(f"event must be a PrivacyEvent, got {type(event).__name__}")
        if adjacency not in ADJACENCIES:
            raise ValueError(f"adjacency must be one of {sorted(ADJACENCIES)}, got {adjacency!r}")
        if paper_claim is not None and not isinstance(paper_claim, PaperClaim):
            raise TypeError("paper_claim must be a PaperClaim or None")
        if gamma is not None:
            gamma = real(gamma, "gamma")
            if not 0.0 < gamma < 1.0:
                raise ValueError(f"gamma must be in (0, 1), got {gamma}")
        self.event = event
        self.adjacency = adjacency
        self.description = str(description)
        self.notes = tuple(str(n) for n in notes)
        self.paper_claim = paper_claim
        self.gamma = gamma
        self.default_delta = delta_open(default_delta, "default_delta")
        self.seeded = bool(seeded)
        self.assumed_public = tuple(str(a) for a in assumed_public)
        self.vocabulary = None if vocabulary is None else str(vocabulary)

    # -- guarantees -------------------------------------------------------------------
    @property
    def events(self):
        """Flat list of ``(leaf_event, count, sampling_probability, label)``."""
        return leaf_events(self.event)

    @property
    def pure_only(self):
        """True if every leaf has a pure-DP bound (then epsilon at delta = 0 is finite)."""
        return all(_pure_epsilon(e) is not None for e, _, _, _ in self.events)

    def epsilon_and_method(self, delta=None, method="auto", **kwargs):
        """(epsilon, route) at ``delta`` (default: ``default_delta``; 0 allowed if pure).

        ``method="auto"``: the tightest sound route, PLD included when ``dp-accounting`` is
        installed (``pip install dptm[pld]``) and supports the mechanisms; the route's name
        says which answered ("pld", "rdp", "zcdp" or "pure")."""
        if delta is None:
            delta = 0.0 if self.pure_only else self.default_delta
        if method == "auto" and not kwargs:
            return _tightest(self.event, float(delta))
        return _epsilon_and_method(self.event, delta, method, **kwargs)

    def epsilon(self, delta=None, method="auto", **kwargs):
        """Sound epsilon at ``delta`` (tightest built-in route unless ``method`` given)."""
        return self.epsilon_and_method(delta, method, **kwargs)[0]

    def paper_epsilon(self, delta=None):
        """The paper's claimed epsilon (may be unsound); None without a ``paper_claim``."""
        if self.paper_claim is None:
            return None
        return self.paper_claim.epsilon(self.default_delta if delta is None else delta)

    # -- presentation -----------------------------------------------------------------
    def to_dict(self):
        eps, method = self._safe_eps(self.default_delta)
        d = {
            "adjacency": self.adjacency,
            "description": self.description,
            "notes": list(self.notes),
            "default_delta": self.default_delta,
            "epsilon": eps,
            "method": method,
            "gamma": self.gamma,
            "seeded": self.seeded,
            "assumed_public": list(self.assumed_public),
            "vocabulary": self.vocabulary,
            "mechanisms": [{**_event_dict(e), "label": label, "count": c,
                            "sampling_probability": q} for e, c, q, label in self.events],
        }
        if isinstance(self.event, ParallelComposedEvent):
            # "mechanisms" flattens the parts (identical parts merged, counts added)
            d["parallel_parts"] = [
                [{**_event_dict(e), "label": label, "count": c, "sampling_probability": q}
                 for e, c, q, label in leaf_events(part)] for part in self.event.events]
        if self.pure_only:
            d["epsilon_pure"] = self._safe_eps(0.0)[0]
        if self.paper_claim is not None:
            d["paper_claim"] = {"citation": self.paper_claim.citation,
                                "method": self.paper_claim.method,
                                "params": dict(self.paper_claim.params),
                                "epsilon": self._safe_paper(self.default_delta)}
        return d

    def to_state(self):
        """Everything needed to rebuild the report (the full event tree), JSON-ready;
        :meth:`from_state` inverts it exactly."""
        claim = self.paper_claim
        return {
            "event": event_to_dict(self.event), "adjacency": self.adjacency,
            "description": self.description, "notes": list(self.notes),
            "paper_claim": None if claim is None else {
                "citation": claim.citation, "method": claim.method, "params": dict(claim.params)},
            "gamma": self.gamma, "default_delta": self.default_delta, "seeded": self.seeded,
            "assumed_public": list(self.assumed_public), "vocabulary": self.vocabulary,
        }

    @classmethod
    def from_state(cls, state):
        """Rebuild a report saved by :meth:`to_state` (every key of it required, each of its
        type: a state may come from an untrusted file)."""
        if not isinstance(state, dict):
            raise TypeError(f"state must be a dict, got {type(state).__name__}")
        missing = sorted(_STATE_KEYS - set(state))
        if missing:
            raise ValueError(f"not a complete privacy report: {', '.join(missing)} missing")
        extra = sorted(set(state) - _STATE_KEYS)
        if extra:
            raise ValueError(f"not a privacy report: unknown keys {extra!r:.80}")
        for key, types in (("description", str), ("notes", list), ("seeded", bool),
                           ("assumed_public", list), ("vocabulary", (str, type(None))),
                           ("paper_claim", (dict, type(None)))):
            if not isinstance(state[key], types):
                raise ValueError(f"privacy report field {key} has the wrong type "
                                 f"({type(state[key]).__name__})")
        if not all(isinstance(x, str) for x in state["notes"] + state["assumed_public"]):
            raise ValueError("privacy report notes and assumed_public must be strings")
        claim = state["paper_claim"]
        if claim is not None and not (set(claim) == {"citation", "method", "params"}
                                      and isinstance(claim["params"], dict)):
            raise ValueError("privacy report paper_claim must have citation, method and params")
        state = dict(state)
        claim = state.pop("paper_claim", None)
        return cls(event_from_dict(state.pop("event")), state.pop("adjacency"),
                   paper_claim=None if claim is None else PaperClaim(**claim), **state)

    def _safe_eps(self, delta):
        try:
            return self.epsilon_and_method(delta)
        except ValueError as exc:
            return math.inf, f"unsupported ({exc})"

    def _safe_paper(self, delta):
        try:
            return self.paper_epsilon(delta)
        except (ValueError, TypeError) as exc:
            return f"n/a ({exc})"

    def __str__(self):
        return self.format()

    def format(self, notes=True):
        """The report as text (``str(report)``); ``notes=False`` replaces the notes (each
        mechanism's parameters and caveats) by one line saying how many there are."""
        lines = []
        if self.seeded:
            lines.append("TEST MODE (seeded): the guarantee below holds only while the seed stays "
                         "secret; whoever knows it can subtract the noise. Do not publish.")
        lines.append("Privacy report")
        if self.description:
            lines.append(f"  release    : {self.description}")
        lines.append(f"  adjacency  : {ADJACENCIES[self.adjacency]}")
        lines.append("  mechanisms :")
        lines.extend(_mechanism_lines(self.event, "    "))
        if self.pure_only:
            eps0, _ = self._safe_eps(0.0)
            lines.append(f"  guarantee  : epsilon = {eps0:.6g} with delta = 0 (pure DP)")
        eps, method = self._safe_eps(self.default_delta)
        lines.append(f"  guarantee  : epsilon = {eps:.6g} at delta = {self.default_delta:.3g} "
                     f"(accountant: {_ROUTE_NAMES.get(method, method)})")
        if self.gamma is not None:
            lines.append(f"  random DP  : (epsilon, delta, gamma)-random DP - the guarantee holds with "
                         f"probability >= {1 - self.gamma:.6g} (1 - gamma, gamma = {self.gamma:.3g}) "
                         "over the sensitivity sampling")
        if self.paper_claim is not None:
            pe = self._safe_paper(self.default_delta)
            pe_s = f"{pe:.6g}" if isinstance(pe, float) else str(pe)
            lines.append(f"  paper      : epsilon = {pe_s} at delta = {self.default_delta:.3g} as claimed by "
                         f"{self.paper_claim.citation} (not the default guarantee; method "
                         f"recipes.{self.paper_claim.method})")
        if self.vocabulary is not None:
            lines.append(f"  vocabulary : {self.vocabulary}")
        for a in self.assumed_public:
            lines.append(f"  assumed public : {a}")
        if notes:
            lines.extend(f"  note       : {n}" for n in self.notes)
        elif self.notes:
            lines.append(f"  notes      : {len(self.notes)} (the mechanisms' parameters and "
                         "caveats): -v prints them; --json and a saved release.json hold them")
        return "\n".join(lines)

    def __repr__(self):
        eps, method = self._safe_eps(self.default_delta)
        mode = "TEST MODE (seeded), " if self.seeded else ""
        return (f"PrivacyReport({mode}adjacency={self.adjacency!r}, epsilon={eps:.4g} at "
                f"delta={self.default_delta:.3g} via "
                f"{'basic composition' if method == 'pure' else method})")

    def __eq__(self, other):
        return isinstance(other, PrivacyReport) and self.__dict__ == other.__dict__

    __hash__ = None
