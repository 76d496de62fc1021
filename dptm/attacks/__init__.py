"""Membership-inference auditing of topic models (papers/manzonelli2024, papers/zhao2021).

Names are loaded lazily from their modules.
"""
import importlib

_LAZY = {
    "zeta": "dptm.attacks.statistics",
    "topic_based_attack": "dptm.attacks.topic_based",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'dptm.attacks' has no attribute {name!r}")


def __dir__():
    return __all__
