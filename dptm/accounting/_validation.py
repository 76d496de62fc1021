"""Argument checks of the accounting modules: aliases of the shared ones in
``dptm._utils`` (one validation module; errors name the parameter and the range)."""
import math

from .._utils import check_delta_open as delta_open
from .._utils import check_int, check_orders as orders_array, check_real as real

__all__ = ["real", "positive", "probability", "delta_open", "orders_array", "count_int"]


def positive(value, name, allow_inf=False, strict=True):
    """``value`` as float, checked to be > 0 (or >= 0 when ``strict`` is False); +inf only
    when ``allow_inf``."""
    value = real(value, name)
    if math.isinf(value) and not (allow_inf and value > 0):
        raise ValueError(f"{name} must be finite and {'> 0' if strict else '>= 0'}, got {value}")
    if value < 0 or (strict and value == 0):
        raise ValueError(f"{name} must be {'> 0' if strict else '>= 0'}, got {value}")
    return value


def probability(value, name):
    """``value`` as float in (0, 1]."""
    value = real(value, name)
    if not 0.0 < value <= 1.0:
        raise ValueError(f"{name} must be in (0, 1], got {value}")
    return value


def count_int(value, name="count", minimum=1):
    """``value`` as int >= ``minimum`` (see ``dptm._utils.check_int``)."""
    return check_int(value, name, minimum)
