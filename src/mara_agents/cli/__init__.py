"""The installed command line, ``coreenv <command> [options]``: one module per command.

    coreenv sweep --quick                 # the main job: a quick load sweep
    coreenv sweep --help                  # every option of one command, with its valid choices
    python -m mara_agents sweep --quick   # the same, without the installed executable

A command's module is imported only when that command runs, so ``coreenv --help`` starts fast
and works without torch; a command that needs torch (or scikit-learn) where it is missing says
how to install it, in one line. In a source checkout, ``benchmarks/sweep_load.py`` and
``benchmarks/stress_infeasible.py`` run ``sweep`` and ``stress`` as scripts.
"""

from __future__ import annotations

import argparse
import importlib

from mara_agents.cli.parser import CommandParser

__all__ = ["COMMANDS", "main"]

COMMANDS = {
    "sweep": "sweep the arrival rate and tabulate every method's completion (the main job)",
    "benchmark": "play CoRE-Bench for your methods: the scorecard against the shipped references",
    "validate": "check a benchmark's results by replaying every episode from its actions",
    "stress": "the infeasible-task stress test: every method's completion rate",
    "compare": "compare schedulers or trained policies paired on the same episodes",
    "eval-predictors": "judge the loss predictors on runs they never saw, or on your curves",
    "train-mara": "train MARA: the shipped networks' recipe (imitation of HOP, then RL)",
    "train-baseline": "train the RL baseline from scratch: the slot-set MaskablePPO recipe",
}
"""Each command and its one-line summary; its module is ``mara_agents.cli.<name, - as _>``."""

AGENTS_MODULES = ("torch", "sklearn", "scipy", "tqdm", "stable_baselines3", "sb3_contrib")
"""Top-level modules that the ``[agents]`` extra installs."""


def _top_parser() -> CommandParser:
    """The parser of ``coreenv`` itself: a command, then that command's own arguments."""
    width = max(len(name) for name in COMMANDS)
    listing = "\n".join(f"  {name:<{width}}  {summary}" for name, summary in COMMANDS.items())
    parser = CommandParser(
        prog="coreenv",
        description="CoRE-Learning benchmarks and the training of their shipped models.",
        epilog=f"commands:\n{listing}\n\n'coreenv COMMAND --help' lists a command's options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("command", choices=COMMANDS, metavar="COMMAND", help="what to run")
    rest = parser.add_argument("arguments", nargs=argparse.REMAINDER, help="the command's options")
    rest.required = False  # a missing command is the error to report, not missing options
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run ``coreenv COMMAND ARGS...`` (``argv`` without the program name; default sys.argv).

    Importing the command's module and running it both happen here, so that a missing optional
    dependency, found at either point, is reported as one line with the install command.
    """
    args = _top_parser().parse_args(argv)
    try:
        module = importlib.import_module(f"{__name__}.{args.command.replace('-', '_')}")
        module.main(args.arguments)
    except ModuleNotFoundError as e:
        if (e.name or "").partition(".")[0] not in AGENTS_MODULES:
            raise
        CommandParser(prog=f"coreenv {args.command}").error(
            f'this needs {e.name}, which is not installed: pip install "coreenv[agents]"'
        )
