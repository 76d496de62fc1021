"""Moved to :mod:`dptm.noise.laplace_table`; this name stays importable as the same module object
(its attributes and monkeypatches are that module's)."""
import sys

from .noise import laplace_table as _module

sys.modules[__name__] = _module
