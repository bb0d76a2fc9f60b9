"""Field checks shared by the agents' dataclass configs, naming the first bad field in the error."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["require"]

RULES: dict[str, Callable[[Any], bool]] = {
    ">= 1": lambda value: value >= 1,
    ">= 2": lambda value: value >= 2,
    "> 0": lambda value: value > 0,
    ">= 0": lambda value: value >= 0,
    "an int >= 1": lambda value: type(value) is int and value >= 1,  # bool is no count
}
"""The rules a field can be held to, by the words the error message uses."""


def require(config: Any, rule: str, names: Iterable[str]) -> None:
    """Raise ``ValueError("<Config>.<name> must be <rule>, got <value>.")`` for the first breach."""
    check = RULES[rule]
    for name in names:
        value = getattr(config, name)
        if not check(value):
            raise ValueError(f"{type(config).__name__}.{name} must be {rule}, got {value!r}.")
