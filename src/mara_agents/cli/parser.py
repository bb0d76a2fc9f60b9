"""The argument parser of every `coreenv` command: bad input is refused in one line, status 2.

argparse prints its usage before an error, and some of the commands' own messages span lines; a
user (or a script reading stderr) then has to find the reason in a block of text. Here the whole
error is one line, ``coreenv sweep: error: ...``. ``--help`` shows each option's default where it
has one that its help does not already state. An option 0.1.0 had under another name keeps it as
a hidden alias (`DeprecatedOption`); every `DeprecationWarning` raised while parsing (an old
option or an old value) is printed as one ``PROG: warning: ...`` line on stderr.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from coreenv import CLUSTERS, ConfigError, EnvConfig, parse_cluster
from coreenv.config import check_arrival_prob
from mara_agents.checks import check

__all__ = [
    "CommandParser",
    "DEFAULT_CLUSTER",
    "DefaultsFormatter",
    "DeprecatedOption",
    "METHODS_HELP",
    "SHAPE_HELP",
    "add_arrival_prob",
    "add_cluster",
    "arrival_prob",
    "cluster_shape",
    "count",
    "methods_listing",
    "whole",
]

METHODS_HELP = (
    "schedulers: the methods listed below, or module:Class from the current directory or the "
    "path, with keyword arguments if any: module:Class(key=value, ...)"
)
"""The help of a command's ``--methods``."""
DEFAULT_CLUSTER = "4/8 equal"
"""The cluster a command plays unless told: the paper's four equal nodes and eight slots."""
SHAPE_HELP = (
    f"written 'M/K name': M nodes, K slots (K = 2 M if left out) and the nodes' speeds and "
    f"switch cost, one of {tuple(CLUSTERS)} (default {DEFAULT_CLUSTER!r})"
)
"""How a command's ``--cluster`` or ``--clusters`` help says a cluster is written."""


def methods_listing() -> str:
    """The sweep's methods, a line each with what it is: the epilog of the commands that play
    them."""
    from mara_agents.sweep.methods import METHODS

    width = max(map(len, METHODS))
    lines = [f"  {name:<{width}}  {method.about}" for name, method in METHODS.items()]
    return "methods:\n" + "\n".join(lines)


REMOVAL = "0.4.0"
"""The release that removes the deprecated option names (those of 0.1.0)."""


class DefaultsFormatter(
    argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter
):
    """argparse's defaults formatter, minus ``(default: None)`` and defaults said twice; the
    epilog (a command's list of methods) keeps its lines."""

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

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:
        """`argparse.ArgumentParser.parse_args`, each deprecation met printed as a warning line."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DeprecationWarning)
            parsed = super().parse_args(args, namespace)
        for warning in caught:
            if issubclass(warning.category, DeprecationWarning):
                print(f"{self.prog}: warning: {warning.message}", file=sys.stderr)
            else:
                warnings.warn_explicit(
                    warning.message, warning.category, warning.filename, warning.lineno
                )
        return parsed

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: error: MESSAGE`` (its lines joined into one) and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


def _option_value(text: str, convert: Callable[[str], Any], checked: Callable[[Any], Any]) -> Any:
    """An option's value: ``checked(convert(text))``, as argparse's `ArgumentTypeError` if refused.

    A text ``convert`` cannot read goes to ``checked`` as it is, so the rule's message refuses it.
    """
    try:
        value: Any = convert(text)
    except ValueError:
        value = text
    try:
        return checked(value)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def arrival_prob(text: str) -> float:
    """An option's arrival probability p (`coreenv.config.check_arrival_prob`'s rule)."""
    return _option_value(text, float, lambda p: check_arrival_prob(p, "an arrival probability"))


def count(text: str) -> int:
    """An option's count: an int >= 1 (`mara_agents.checks`' rule), e.g. ``--episodes``."""
    return _option_value(text, int, lambda n: check(n, "an int >= 1", "a count") or n)


def whole(text: str) -> int:
    """An option's count that may be zero: an int >= 0, e.g. ``--finished``."""
    return _option_value(text, int, lambda n: check(n, "an int >= 0", "a count") or n)


class DeprecatedOption(argparse.Action):
    """An option's old name, kept until `REMOVAL`: stores into the new option and warns.

    Add it with ``help=argparse.SUPPRESS`` and ``new="--new-name"``; its other arguments (type,
    nargs, dest) are the new option's.
    """

    def __init__(self, option_strings: list[str], dest: str, new: str, **kwargs: Any) -> None:
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        """Store ``values`` as the new option would, with a `DeprecationWarning` naming it."""
        warnings.warn(
            f"{option_string} is deprecated and will be removed in {REMOVAL}; use {self.new}",
            DeprecationWarning,
            stacklevel=2,
        )
        setattr(namespace, self.dest, values)


def add_arrival_prob(
    parser: argparse.ArgumentParser,
    default: float | list[float],
    old: str,
    several: bool = False,
    help: str = "arrival probability p",
) -> None:
    """Add ``--arrival-prob`` to ``parser``, and its old name ``old`` as a `DeprecatedOption`.

    Each value is checked by `arrival_prob`; ``several``: the option takes one or more.
    """
    nargs = "+" if several else None
    parser.add_argument(
        "--arrival-prob", type=arrival_prob, nargs=nargs, default=default, metavar="P", help=help
    )
    parser.add_argument(
        old,
        type=arrival_prob,
        nargs=nargs,
        dest="arrival_prob",
        action=DeprecatedOption,
        new="--arrival-prob",
        help=argparse.SUPPRESS,
    )


def cluster_shape(shape: str) -> dict[str, Any]:
    """A cluster written ``"M/K name"`` (`coreenv.parse_cluster`) as the `EnvConfig` fields that
    differ from the default cluster, four equal nodes and eight slots (none for it)."""
    try:
        fields = parse_cluster(shape)
        EnvConfig(**fields)  # a cluster that cannot be built, such as fewer slots than nodes
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    default = EnvConfig()
    return {name: value for name, value in fields.items() if value != getattr(default, name)}


def add_cluster(parser: argparse.ArgumentParser) -> None:
    """Add ``--cluster SHAPE``, read as its `EnvConfig` fields (`cluster_shape`)."""
    parser.add_argument(
        "--cluster",
        type=cluster_shape,
        default=DEFAULT_CLUSTER,
        metavar="SHAPE",
        help=f"the cluster, {SHAPE_HELP}",
    )
