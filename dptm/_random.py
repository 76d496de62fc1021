"""Moved to :mod:`dptm.noise.secret`; this name stays importable as the same module object
(its attributes and monkeypatches are that module's)."""
import sys

from .noise import secret as _module

sys.modules[__name__] = _module
