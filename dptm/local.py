"""Moved to :mod:`dptm.noise.local_randomizers`; this name stays importable as the same module
object (its attributes and monkeypatches are that module's)."""
import sys

from .noise import local_randomizers as _module

sys.modules[__name__] = _module
