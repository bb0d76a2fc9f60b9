"""Checks of user input shared by coreenv: each error names the field, the value and the rule."""

from __future__ import annotations

import numbers
from typing import Any

__all__ = ["checked_count", "is_int", "is_number"]


def is_int(value: Any) -> bool:
    """Whether ``value`` is an integer (numpy integers too); a bool is not."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """Whether ``value`` is a real number (numpy scalars too; NaN is one); a bool is not."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def checked_count(
    value: Any, name: str, minimum: int = 1, *, unit: str = "", error: type[Exception] = ValueError
) -> int:
    """``value`` as an int, refused unless an int >= ``minimum`` (bools are refused).

    Raises ``error("<name> must be an int >= <minimum><unit>, got <value>.")``.
    """
    if not is_int(value) or value < minimum:
        raise error(f"{name} must be an int >= {minimum}{unit}, got {value!r}.")
    return int(value)
