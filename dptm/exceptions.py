"""Warnings and errors of dptm, as classes users can filter or catch.

``warnings.simplefilter("error", dptm.exceptions.PrivacyWarning)`` turns every privacy
caveat into an error, e.g. in a production pipeline that must never publish a seeded model.
"""

__all__ = ["PrivacyWarning", "SeededPrivacyWarning", "NotHardenedWarning",
           "VacuousGuaranteeWarning", "UtilityWarning", "UninformativeModelWarning",
           "TopicCountWarning"]


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


class UtilityWarning(UserWarning):
    """Base class of the warnings about what a model is good for."""


class UninformativeModelWarning(UtilityWarning):
    """On held-out data the model is no better than the uniform distribution over the
    vocabulary: its topics carry no information (usually too much noise)."""


class TopicCountWarning(UtilityWarning):
    """More topics than documents: most topics cannot be estimated."""
