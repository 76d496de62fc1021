"""Argument checks shared by the accounting modules (errors name the parameter and range)."""
import math
import numbers

import numpy as np

__all__ = ["real", "positive", "probability", "delta_open", "orders_array", "count_int"]


def real(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must be a finite real number, got nan")
    return value


def positive(value, name, allow_inf=False, strict=True):
    """``value`` as float, checked to be > 0 (or >= 0 when ``strict`` is False)."""
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


def delta_open(value, name="delta"):
    """``value`` as float in the open interval (0, 1)."""
    value = real(value, name)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be in the open interval (0, 1), got {value}")
    return value


def orders_array(orders, name="orders"):
    """Orders as a 1-D float array, every entry finite and > 1."""
    arr = np.atleast_1d(np.asarray(orders, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of Renyi orders > 1")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 1.0):
        raise ValueError(f"{name} must all be finite and > 1, got {arr[~(np.isfinite(arr) & (arr > 1))][:3]}")
    return arr


def count_int(value, name="count", minimum=1):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)
