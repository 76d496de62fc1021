"""Warnings and errors of dptm, as classes users can filter or catch.

``warnings.simplefilter("error", dptm.exceptions.PrivacyWarning)`` turns every privacy
caveat into an error, e.g. in a production pipeline that must never publish a seeded model.
"""

__all__ = ["PrivacyWarning", "SeededPrivacyWarning", "NotHardenedWarning"]


class PrivacyWarning(UserWarning):
    """Base class of the warnings about a privacy guarantee."""


class SeededPrivacyWarning(PrivacyWarning):
    """A private mechanism was given a seed: test mode. Whoever knows the seed can
    regenerate the noise and subtract it, so the guarantee holds only while the seed stays
    secret; never publish a model fitted this way."""


class NotHardenedWarning(PrivacyWarning):
    """A floating-point noise sampler was chosen explicitly. Its outputs' low-order bits can
    reveal the exact input (Mironov 2012); the default exact samplers do not."""
