"""Moved to :mod:`dptm.models.topicdp`; this name stays importable as the same module object
(its attributes and monkeypatches are that module's)."""
import sys

from . import topicdp as _module

sys.modules[__name__] = _module
