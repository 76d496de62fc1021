"""Release objects: one noisy release of a statistic, which draws its exact noise and records
the privacy event of what it drew.

A private fit makes one :class:`Ledger` and one release object per noisy statistic; each
``release.draw(statistic, generator)`` returns the noisy statistic and appends the event of
the noise actually sampled (the effective sigma or scale of the exact sampler, never the
nominal one) to the ledger. The fit then composes the ledger into its report
(:meth:`Ledger.composed`) or checks it against the event it planned
(:meth:`Ledger.check_within`), so that what a report states is what was drawn.

Tests observe the releases with :func:`recording` instead of patching module internals.

- :class:`LatticeGaussianRelease`: ``x`` rounded to the lattice g Z plus g times an exact
  discrete Gaussian (:func:`dptm.noise.mechanisms.lattice_gaussian`).
- :class:`LatticeLaplaceRelease`: the same with an exact discrete Laplace.
- :class:`GaussianRelease`, :class:`LaplaceRelease`: floating-point noise (not hardened:
  its low-order bits can reveal the statistic, Mironov 2012); only where a model offers it
  by name.
- :class:`SnapshotRelease`: the Gibbs samplers' noisy snapshot of the topic-word counts,
  drawn in the kernel with the word factor of the next sweep.
"""
import contextlib
import math
from dataclasses import dataclass

import numpy as np

from .laplace_table import MAX_DYADIC_SCALE, dyadic_laplace_parameter
from .mechanisms import (discrete_gaussian_parameters, discrete_gaussian_table,
                         discrete_laplace_parameters, gaussian_noise, laplace_noise,
                         lattice_gaussian, lattice_laplace)

__all__ = ["Ledger", "LatticeGaussianRelease", "LatticeLaplaceRelease", "GaussianRelease",
           "LaplaceRelease", "SnapshotRelease", "Draw", "recording"]

_RECORDINGS = []          # the open ``recording()`` blocks (tests only)
#: Snapshot mechanism -> the kernel's noise kind (5: the dyadic discrete Laplace).
SNAPSHOT_MECHANISMS = {"laplace": 1, "gaussian": 2, "discrete_laplace": 3, "discrete_gaussian": 4}
SNAPSHOT_LABEL = "noisy snapshot of the topic-word counts"
_SQRT2 = math.sqrt(2.0)


@dataclass(frozen=True)
class Draw:
    """One draw seen by :func:`recording`: the release object, the statistic it was given
    (private: the true value), what it returned and the event it recorded (a snapshot's
    statistic is None when recounted from the topics, its output None when not written)."""

    release: object
    statistic: np.ndarray
    noisy: np.ndarray
    event: object


@contextlib.contextmanager
def recording():
    """Testing hook: a list that receives a :class:`Draw` for every release drawn inside the
    block, in order. Its records hold the true statistics: for tests, never for a model
    that is published.

    Examples
    --------
    >>> with recording() as draws:          # doctest: +SKIP
    ...     model.fit(X)
    >>> [d.event.sigma for d in draws]      # doctest: +SKIP
    """
    draws = []
    _RECORDINGS.append(draws)
    try:
        yield draws
    finally:
        _RECORDINGS.remove(draws)


def _seen(release, statistic, noisy, event):
    def copy(x):
        return None if x is None else np.array(x, copy=True)
    for draws in _RECORDINGS:
        draws.append(Draw(release, copy(statistic), copy(noisy), event))


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


class _Release:
    """Shared draw: subclasses define ``_noisy(statistic, generator)`` returning (noisy
    statistic, event of the noise drawn)."""

    def __init__(self, ledger=None, label=""):
        self.ledger = ledger
        self.label = label

    def draw(self, statistic, generator):
        """The noisy ``statistic`` (float64 array of its shape); the event of the noise
        drawn from ``generator`` is appended to the ledger (and is ``self.event``)."""
        noisy, event = self._noisy(statistic, generator)
        self.event = event
        if self.ledger is not None:
            self.ledger.record(event)
        if _RECORDINGS:
            _seen(self, statistic, noisy, event)
        return noisy


class LatticeGaussianRelease(_Release):
    """``statistic`` rounded to g Z plus g times an exact discrete Gaussian(sigma / g).

    Parameters
    ----------
    sigma : float
        Nominal standard deviation (the statistic's units); the event states the effective
        one, ``g`` times the rational sigma the sampler draws (>= ``sigma``).
    sensitivity : float
        L2 sensitivity of the statistic as recorded (including any lattice rounding slack
        the caller accounts for).
    granularity : float, optional
        Lattice spacing g (a power of two); default
        :func:`~dptm.noise.mechanisms.lattice_granularity` of ``sigma``.
    ledger : Ledger, optional
    label : str
        Label of the event.

    After a draw: ``granularity_`` (g used), ``sigma_`` (effective sigma), ``event``.
    """

    def __init__(self, sigma, sensitivity, granularity=None, *, ledger=None, label=""):
        super().__init__(ledger, label)
        self.sigma, self.sensitivity, self.granularity = sigma, sensitivity, granularity

    def _noisy(self, statistic, generator):
        from ..accounting import GaussianEvent
        noisy, self.granularity_, self.sigma_ = lattice_gaussian(
            statistic, self.sigma, generator, granularity=self.granularity)
        return noisy, GaussianEvent(self.sigma_, sensitivity=self.sensitivity, discrete=True,
                                    label=self.label)


class LatticeLaplaceRelease(_Release):
    """``statistic`` rounded to g Z plus g times an exact discrete Laplace(scale / g); the
    event states the effective scale and the L1 ``sensitivity`` given (with any rounding
    slack). Parameters as :class:`LatticeGaussianRelease` (``scale`` for ``sigma``); after a
    draw ``granularity_``, ``scale_`` and ``event``."""

    def __init__(self, scale, sensitivity, granularity=None, *, ledger=None, label=""):
        super().__init__(ledger, label)
        self.scale, self.sensitivity, self.granularity = scale, sensitivity, granularity

    def _noisy(self, statistic, generator):
        from ..accounting import LaplaceEvent
        noisy, self.granularity_, self.scale_ = lattice_laplace(
            statistic, self.scale, generator, granularity=self.granularity)
        return noisy, LaplaceEvent(scale=self.scale_, sensitivity=self.sensitivity,
                                   discrete=True, label=self.label)


class GaussianRelease(_Release):
    """``statistic`` plus floating-point N(0, sigma^2) noise (not hardened)."""

    def __init__(self, sigma, sensitivity, *, ledger=None, label=""):
        super().__init__(ledger, label)
        self.sigma, self.sensitivity = sigma, sensitivity
        self.granularity_, self.sigma_ = None, sigma

    def _noisy(self, statistic, generator):
        from ..accounting import GaussianEvent
        statistic = np.asarray(statistic)
        return (statistic + gaussian_noise(statistic.shape, self.sigma, generator),
                GaussianEvent(self.sigma, sensitivity=self.sensitivity, discrete=False,
                              label=self.label))


class LaplaceRelease(_Release):
    """``statistic`` plus floating-point Laplace(scale) noise (not hardened)."""

    def __init__(self, scale, sensitivity, *, ledger=None, label=""):
        super().__init__(ledger, label)
        self.scale, self.sensitivity = scale, sensitivity
        self.granularity_, self.scale_ = None, scale

    def _noisy(self, statistic, generator):
        from ..accounting import LaplaceEvent
        statistic = np.asarray(statistic)
        return (statistic + laplace_noise(statistic.shape, self.scale, generator),
                LaplaceEvent(scale=self.scale, sensitivity=self.sensitivity, discrete=False,
                             label=self.label))


class SnapshotRelease:
    """The noisy snapshot of the Gibbs samplers' V x K topic-word counts, drawn in the
    kernel (``dptm._cgs.noisy_snapshot``) with the word factor the sweep reads: the kernel
    code, the parameters of the noise actually drawn and its privacy event (``event``:
    Laplace of L1 sensitivity 2, or Gaussian of L2 sensitivity sqrt 2, one word replaced).

    ``mechanism``: 'discrete_laplace' (scale 2 / ``epsilon``; the dyadic exact sampler up to
    its largest scale, else the CKS20 one), 'discrete_gaussian' (sigma ``noise_multiplier``
    sqrt 2), or the floating-point 'laplace' / 'gaussian'."""

    def __init__(self, mechanism, *, epsilon=None, noise_multiplier=None, ledger=None):
        self.mechanism, self.ledger = mechanism, ledger
        self.kind = SNAPSHOT_MECHANISMS[mechanism]
        self.discrete = mechanism.startswith("discrete")
        self.a = self.b = self.c = 0
        self.table = None
        from ..accounting import GaussianEvent, LaplaceEvent
        if mechanism.endswith("laplace"):
            scale = 2.0 / epsilon          # L1 sensitivity 2 under word replacement
            if self.discrete and scale <= MAX_DYADIC_SCALE:
                self.kind = 5
                self.a, scale = dyadic_laplace_parameter(scale)   # table: on first use
            elif self.discrete:
                self.a, self.b, scale = discrete_laplace_parameters(scale)
            self.scale = scale
            self.event = LaplaceEvent(scale=scale, sensitivity=2.0, discrete=self.discrete,
                                      label=SNAPSHOT_LABEL)
        else:
            sigma = noise_multiplier * _SQRT2  # L2 sensitivity sqrt(2)
            if self.discrete:
                self.a, self.b, self.c, sigma = discrete_gaussian_parameters(sigma)
            self.scale = sigma
            self.event = GaussianEvent(sigma=sigma, sensitivity=_SQRT2, discrete=self.discrete,
                                       label=SNAPSHOT_LABEL)

    @property
    def sigma(self):
        return self.scale

    def snapshot(self, n_wk, clip, beta, bit_generator, out=None, n_threads=1, *,
                 word_blocks=None, clipped=None, recount=None):
        """(snapshot, word factor, word mass) of ``_cgs.noisy_snapshot``, written into
        ``out`` (a previous return value) when given. ``bit_generator``: one BitGenerator,
        or a list (one per block of rows, see ``_snapshot_generators``). ``word_blocks``
        (optional, V x ceil(K / 16)): filled in the same pass with the word factor's
        running sums at the end of each block of 16 topics (the sweep's two-level search
        table). ``clipped`` (optional, from ``clipped_buffer``): the snapshot is then not
        written (``out[0]`` keeps its old contents); the kernel keeps the clamped, clipped
        noisy counts there instead, for a snapshot that is not released (same draws, same
        factor). ``recount`` (optional, ``(z, word_ptr, word_tokens)``): the counts are
        those of the topics ``z`` (``n_wk`` is not read), counted row by row as the noise
        is drawn (``_cgs.noisy_snapshot``'s ``topics``). ``event`` is appended to
        ``ledger`` (when set) for every snapshot drawn."""
        from .. import _cgs
        if out is None:
            out = (np.empty(n_wk.shape), np.empty(n_wk.shape, dtype=np.float32),
                   np.empty(n_wk.shape[0]))
        if self.table is None and self.kind in (4, 5):
            # built here, not in __init__: calibration creates many of these objects
            from .laplace_table import dyadic_table
            self.table = (dyadic_table(self.a) if self.kind == 5
                          else discrete_gaussian_table(self.a, self.b))
        gauss, laplace = (self.table, None) if self.kind == 4 else (None, self.table)
        topics, word_ptr, word_tokens = recount if recount is not None else (None,) * 3
        _cgs.noisy_snapshot(n_wk, self.kind, self.scale, self.a, self.b, self.c, clip, beta,
                            *out, bit_generator, n_threads, gauss, laplace,
                            word_blocks=word_blocks, clipped=clipped, topics=topics,
                            word_ptr=word_ptr, word_tokens=word_tokens)
        if self.ledger is not None:
            self.ledger.record(self.event)
        if _RECORDINGS:     # the counts read (None when recounted) and the snapshot written
            _seen(self, None if recount is not None else n_wk,
                  None if clipped is not None else out[0], self.event)
        return out

    def clipped_buffer(self, shape, clip):
        """A V x K int32 buffer for ``snapshot(..., clipped=)``, or None where it would not
        be exact (float noise, or a clip of 2^31 or more)."""
        if self.discrete and math.ceil(clip) < 2 ** 31:
            return np.empty(shape, dtype=np.int32)
        return None
