"""Value checks shared by the agents' configs and constructors, naming the bad field in the error.

Each rule is named by the words its error uses: ``check(value, "an int >= 1", "LARA explore")``
raises ``ValueError("LARA explore must be an int >= 1, got 0.")``. A bool is never a number
here (``True`` is no count and no probability); numpy scalars are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from coreenv.checks import is_int, is_number

__all__ = ["RULES", "check", "require"]


RULES: dict[str, Callable[[Any], bool]] = {
    ">= 1": lambda value: value >= 1,
    ">= 2": lambda value: value >= 2,
    "> 0": lambda value: value > 0,
    ">= 0": lambda value: value >= 0,
    "an int >= 0": lambda value: is_int(value) and value >= 0,
    "an int >= 1": lambda value: is_int(value) and value >= 1,
    "an int >= 2": lambda value: is_int(value) and value >= 2,
    "a number >= 0": lambda value: is_number(value) and value >= 0,  # NaN fails
    "in (0, 1]": lambda value: is_number(value) and 0.0 < value <= 1.0,
    "in [0, 1]": lambda value: is_number(value) and 0.0 <= value <= 1.0,
    "in [0, 1)": lambda value: is_number(value) and 0.0 <= value < 1.0,
    "in (0, 1)": lambda value: is_number(value) and 0.0 < value < 1.0,
}
"""The rules a value can be held to, by the words the error message uses."""


def check(value: Any, rule: str, name: str) -> None:
    """Raise ``ValueError("<name> must be <rule>, got <value>.")`` unless ``value`` keeps it."""
    if not RULES[rule](value):
        raise ValueError(f"{name} must be {rule}, got {value!r}.")


def require(config: Any, rule: str, names: Iterable[str]) -> None:
    """`check` each field of ``config`` named in ``names`` as ``<Config>.<name>``.

    The first field that breaks ``rule`` raises.
    """
    for name in names:
        check(getattr(config, name), rule, f"{type(config).__name__}.{name}")
