"""Warnings and errors of dptm, as classes users can filter or catch.

``warnings.simplefilter("error", dptm.exceptions.PrivacyWarning)`` turns every privacy
caveat into an error, e.g. in a production pipeline that must never publish a seeded model.
"""
import os
import sys

__all__ = ["PrivacyWarning", "SeededPrivacyWarning", "NotHardenedWarning",
           "VacuousGuaranteeWarning", "UtilityWarning", "UninformativeModelWarning",
           "TopicCountWarning", "PrivateVocabularyWarning", "RepeatedFitWarning"]


class PrivacyWarning(UserWarning):
    """Base class of the warnings about a privacy guarantee."""


class SeededPrivacyWarning(PrivacyWarning):
    """A private mechanism was given a seed: test mode. Whoever knows the seed can
    regenerate the noise and subtract it, so the guarantee holds only while the seed stays
    secret; never publish a model fitted this way."""


class NotHardenedWarning(PrivacyWarning):
    """A floating-point noise sampler was chosen explicitly. Its outputs' low-order bits can
    reveal the exact input (Mironov 2012); the default exact samplers do not."""


class VacuousGuaranteeWarning(PrivacyWarning):
    """The stated guarantee protects little: epsilon above 10 (an adversary's odds can grow
    e^10 ~ 22,000-fold), or delta >= 1/n (a mechanism that publishes one record in the
    clear satisfies it)."""


class PrivateVocabularyWarning(PrivacyWarning):
    """The vocabulary was learned from the private data (a ``CountVectorizer`` fitted on
    it, e.g. the step before the model in a ``Pipeline``): which words exist is then not
    covered by the guarantee. Give the vectorizer a public ``vocabulary=`` or use
    :class:`dptm.DPVocabulary`."""


class RepeatedFitWarning(PrivacyWarning):
    """A private model is fitted inside scikit-learn model selection (``GridSearchCV``,
    ``cross_validate``, ...): every fit is a separate release of (part of) the data, the
    model's ``privacy_`` covers one fit only, and a selection by score on private folds is
    not private. Record the fits with :func:`dptm.selection.spending` and choose with
    :func:`dptm.selection.select_private` or on public data."""


class UtilityWarning(UserWarning):
    """Base class of the warnings about what a model is good for."""


class UninformativeModelWarning(UtilityWarning):
    """On held-out data the model is no better than the uniform distribution over the
    vocabulary: its topics carry no information (usually too much noise)."""


class TopicCountWarning(UtilityWarning):
    """More topics than documents: most topics cannot be estimated."""


# Frames of these packages are skipped when a warning is pointed at the caller's line.
_INTERNAL = (os.path.dirname(os.path.abspath(__file__)) + os.sep,)


def _internal_prefixes():
    prefixes = list(_INTERNAL)
    for name in ("sklearn", "joblib"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            prefixes.append(os.path.dirname(os.path.abspath(module.__file__)) + os.sep)
    return tuple(prefixes)


def user_stacklevel():
    """The ``stacklevel`` that makes a ``warnings.warn`` in the calling function point at
    the first frame outside dptm, scikit-learn and joblib: the user's line, also when the
    call came through a ``Pipeline`` or ``GridSearchCV``."""
    prefixes = _internal_prefixes()
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(prefixes):
        frame, level = frame.f_back, level + 1
    return level
