"""Moved to :mod:`dptm.noise.gauss_inversion`; this name stays importable as the same module object
(its attributes and monkeypatches are that module's)."""
import sys

from .noise import gauss_inversion as _module

sys.modules[__name__] = _module
