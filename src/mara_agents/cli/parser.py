"""The argument parser of every `coreenv` command: bad input is refused in one line, status 2.

argparse prints its usage before an error, and some of the commands' own messages span lines; a
user (or a script reading stderr) then has to find the reason in a block of text. Here the whole
error is one line, ``coreenv sweep: error: ...``. ``--help`` shows each option's default where it
has one that its help does not already state.
"""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

__all__ = ["CommandParser", "DefaultsFormatter"]


class DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """argparse's defaults formatter, minus ``(default: None)`` and defaults said twice."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        # the hook ArgumentDefaultsHelpFormatter itself overrides to append the default
        unset = action.default is None or action.default is False
        if unset or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


class CommandParser(argparse.ArgumentParser):
    """An `argparse.ArgumentParser` whose errors are one line on stderr, exit status 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: error: MESSAGE`` (its lines joined into one) and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")
