"""benchmarks/sweep_load.py and benchmarks/stress_infeasible.py run `coreenv sweep` and
`coreenv stress`; the scripts removed from benchmarks/ name commands that `coreenv --help` lists,
or the lab's command modules that replace them (benchmarks/README.md)."""

import os
import re
import subprocess
import sys
from importlib import import_module

import pytest

from helpers import BENCHMARKS, load_script
from mara_agents import cli

SCRIPTS = {"sweep_load": "sweep", "stress_infeasible": "stress"}
"""Each script of benchmarks/ that runs a `coreenv` command, and that command's module."""

REMOVED = {
    "compare_policies": "compare",
    "eval_predictors": "eval-predictors",
    "train_mara": "train-mara",
}
"""Each script removed from benchmarks/ (CHANGELOG, Unreleased) and the command that replaces it."""
LAB = BENCHMARKS.parent / "lab"
"""The lab's distribution: on the path of a fresh interpreter even where it is not installed."""
LAB_COMMANDS = ("train_mara", "eval_predictors", "learning_curves")
"""The lab's command modules, ``python -m coreenv_lab.commands.NAME`` (benchmarks/README.md); the
removed ``learning_curves.py`` is the last one's."""


@pytest.mark.parametrize(("script", "module"), SCRIPTS.items())
def test_each_script_runs_its_command(script, module):
    assert load_script(script).main is import_module(f"mara_agents.cli.{module}").main


def test_the_stress_script_runs_from_the_command_line():
    command = [sys.executable, str(BENCHMARKS / "stress_infeasible.py"), "--methods", "fifo"]
    command += ["--episodes", "1", "--task-set", "synthetic"]
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    assert "| fifo | 0.0 |" in run.stdout


@pytest.mark.parametrize(("script", "command"), REMOVED.items())
def test_a_removed_scripts_command_is_listed_by_coreenv_help(script, command, capsys):
    assert not (BENCHMARKS / f"{script}.py").exists()
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--help"])
    assert exit_info.value.code == 0
    assert re.search(rf"^  {re.escape(command)} ", capsys.readouterr().out, re.M)


def lab_environ() -> dict[str, str]:
    """This environment with the lab first on ``PYTHONPATH`` (pytest's path is not inherited)."""
    path = os.pathsep.join(p for p in (str(LAB), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path}


def test_a_removed_scripts_lab_command_is_named_by_the_readme():
    assert not (BENCHMARKS / "learning_curves.py").exists()
    readme = (BENCHMARKS / "README.md").read_text()
    assert "`pip install -e lab`" in readme
    for name in LAB_COMMANDS:
        assert f"`python -m coreenv_lab.commands.{name}`" in readme


@pytest.mark.parametrize("name", LAB_COMMANDS)
def test_each_lab_command_runs_as_a_module(name):
    module = import_module(f"coreenv_lab.commands.{name}")
    assert callable(module.main) and module.PROG == f"python -m coreenv_lab.commands.{name}"
    run = subprocess.run(
        [sys.executable, "-m", f"coreenv_lab.commands.{name}", "--help"],
        capture_output=True,
        text=True,
        env=lab_environ(),
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"usage: {module.PROG} ")
