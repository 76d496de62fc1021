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
    """

    __slots__ = ("generator", "seeded", "ledger", "transform_seed")

    def __init__(self, generator, seeded):
        from ..noise.releases import Ledger
        self.generator, self.seeded = generator, seeded
        self.ledger = Ledger()
        self.transform_seed = None

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

    def __init_subclass__(cls, **kwargs):
        fit = cls.__dict__.get("fit")
        if fit is not None and not getattr(fit, "_dptm_private", False):
            wrapped = private_fit(fit)
            wrapped._dptm_private = True
            cls.fit = wrapped
        super().__init_subclass__(**kwargs)

    def _run_private(self, algorithm, *args, **kwargs):
        """Run ``algorithm(fit, *args, **kwargs)`` (a :class:`PrivateFit` first) and set
        the attributes it returns, with ``transform_seed_``; returns ``self``."""
        gen, seeded = self._fit_generator()
        fit = PrivateFit(gen, seeded)
        if self._TRANSFORM_SEED == "first":
            fit.transform_seed = public_seed(gen, seeded)
        fitted = algorithm(fit, *args, **kwargs)
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


def topic_attributes(components):
    """``components_`` (the released K x V pseudo-counts, float64) and ``topic_word_`` (its
    rows normalised), as :meth:`TopicModelMixin._set_topics` sets them."""
    components = np.asarray(components, dtype=np.float64)
    return {"components_": components,
            "topic_word_": components / components.sum(axis=1, keepdims=True)}
