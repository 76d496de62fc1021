"""The lifecycle of a private fit, written once: :class:`PrivateModelMixin`.

A private estimator validates its parameters and data (public decisions), then calls
``self._run_private(algorithm, ...)``, which

1. obtains the generator from ``_fit_generator()``: by default
   :func:`dptm.noise.secret.private_generator` (the secret AES-CTR generator, or the
   labelled test mode for a seed);
2. draws the public seed of ``transform`` (:func:`~dptm.noise.secret.public_seed`) first or
   last, as the model's ``_TRANSFORM_SEED`` says (fixed per model: the draws of a seeded
   fit stay those of earlier versions), or none (None: a pipeline whose model stage has
   its own);
3. runs ``algorithm(fit, ...)``, which draws everything from ``fit.generator``, records its
   releases in ``fit.ledger`` and returns the fitted attributes as a dict (``privacy_``
   among them, built with :meth:`PrivateFit.report`); it sets nothing on the estimator
   (but for an online model's state, which ``partial_fit`` continues from and the callback
   reads: :class:`~dptm.models.svi.PrivateOnlineLDA`);
4. sets those attributes on the estimator, all at once, and drops the generator.

Every ``fit`` a subclass defines is wrapped in :func:`dptm.noise.secret.private_fit`: when it
raises, the frames it went through are cleared (no generator, noise or statistic survives
in the traceback) and the estimator is left unfitted.
"""
import numpy as np

from ..noise.secret import private_fit, private_generator, public_seed

__all__ = ["PrivateFit", "PrivateModelMixin", "UNSET", "topic_attributes"]

#: A fitted-attribute value meaning "remove it" (left by an earlier fit, not set by this one).
UNSET = object()


class PrivateFit:
    """What one private fit draws from and records; handed to the algorithm, dropped when
    the fit returns (never stored on the estimator).

    Attributes
    ----------
    generator : numpy.random.Generator
        The secret generator (test mode: keyed from the seed).
    seeded : bool
        True in test mode.
    ledger : dptm.noise.releases.Ledger
        The events of the releases drawn so far.
    transform_seed : int or None
        The public seed of ``transform`` once drawn (at the start for models drawing it
        first, else after the algorithm).
    adjacency : str
        The adjacency of the fit's releases (the model's ``_privacy_adjacency``; an algorithm whose
        adjacency depends on its input, e.g. user level, sets it before its first release).
    """

    __slots__ = ("generator", "seeded", "ledger", "transform_seed", "adjacency")

    def __init__(self, generator, seeded, adjacency):
        from ..noise.releases import Ledger
        self.generator, self.seeded = generator, seeded
        self.ledger = Ledger()
        self.transform_seed = None
        self.adjacency = adjacency

    def report(self, event, adjacency, **kwargs):
        """``PrivacyReport(event, adjacency, seeded=<test mode>, **kwargs)``."""
        from ..accounting import PrivacyReport
        return PrivacyReport(event, adjacency, seeded=self.seeded, **kwargs)


class PrivateModelMixin:
    """Base of the private estimators: owns the lifecycle of a fit (see the module
    docstring). Put it before :class:`~dptm.models._base.TopicModelMixin` in the bases, so
    that ``fit`` is wrapped in ``private_fit`` inside the progress scope."""

    #: "first": the transform seed is the generator's first draw (in test mode the same on
    #: neighbouring data sets); "last": drawn after the algorithm; None: not drawn.
    _TRANSFORM_SEED = "first"
    #: What the guarantee protects, known before fit (a vocabulary pipeline reads it; a
    #: failed fit is charged at it, see ``_run_private``).
    _privacy_adjacency = "document"

    def __init_subclass__(cls, **kwargs):
        fit = cls.__dict__.get("fit")
        if fit is not None and not getattr(fit, "_dptm_private", False):
            wrapped = private_fit(fit)
            wrapped._dptm_private = True
            cls.fit = wrapped
        super().__init_subclass__(**kwargs)

    def _run_private(self, algorithm, *args, **kwargs):
        """Run ``algorithm(fit, *args, **kwargs)`` (a :class:`PrivateFit` first) and set
        the attributes it returns, with ``transform_seed_``; returns ``self``.

        When the algorithm raises after drawing releases, their noisy values may have
        reached its exception (a message quoting a noisy count, a warning raised as an
        error): the releases its ledger holds are then spent from the budget of an enclosing
        :func:`dptm.selection.spending`, as a fit that returned would be."""
        gen, seeded = self._fit_generator()
        fit = PrivateFit(gen, seeded, self._privacy_adjacency)
        if self._TRANSFORM_SEED == "first":
            fit.transform_seed = public_seed(gen, seeded)
        try:
            fitted = algorithm(fit, *args, **kwargs)
        except BaseException as exc:
            _charge_failed_fit(type(self).__name__, fit, exc)
            raise
        if self._TRANSFORM_SEED == "last":
            fit.transform_seed = public_seed(gen, seeded)
        if self._TRANSFORM_SEED is not None:
            fitted.setdefault("transform_seed_", fit.transform_seed)
        self._set_fitted(fitted)
        return self

    def _fit_generator(self):
        """``(generator, seeded)`` of one fit: the secret generator, or the labelled test
        mode for a seed. A model that can also be fitted without privacy overrides it."""
        return private_generator(self.random_state, type(self).__name__)

    def _set_fitted(self, fitted):
        """Set every attribute of ``fitted`` (remove those whose value is ``UNSET``)."""
        state = vars(self)
        for name, value in fitted.items():
            if value is UNSET:
                state.pop(name, None)
            else:
                setattr(self, name, value)


def _charge_failed_fit(name, fit, exc):
    """Spend the releases ``fit`` drew before ``exc`` from the active budget (if any); a
    budget that refuses them (beyond its cap, another adjacency) is said in a note on
    ``exc``, which stays the exception raised."""
    if not len(fit.ledger):
        return
    from ..accounting import BudgetExceededError
    from ..selection import _record_report
    n = len(fit.ledger)
    report = fit.report(fit.ledger.composed(f"{name}.fit (failed)"), fit.adjacency,
                        description=f"the {n} release{'s' if n > 1 else ''} a failed "
                        f"{name}.fit drew before it raised")
    try:
        _record_report(report, f"{name}.fit (failed after {n} release{'s' if n > 1 else ''})")
    except (BudgetExceededError, ValueError) as refused:
        exc.add_note(f"dptm: the budget refused the releases this fit drew: {refused}")


def topic_attributes(components):
    """``components_`` (the released K x V pseudo-counts, float64) and ``topic_word_`` (its
    rows normalised), as :meth:`TopicModelMixin._set_topics` sets them."""
    components = np.asarray(components, dtype=np.float64)
    return {"components_": components,
            "topic_word_": components / components.sum(axis=1, keepdims=True)}
