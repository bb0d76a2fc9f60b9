"""benchmarks/sweep_load.py and benchmarks/stress_infeasible.py run `coreenv sweep` and
`coreenv stress`; the scripts removed in 0.3.0 name commands that `coreenv --help` lists."""

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
    "learning_curves": "learning-curves",
    "train_mara": "train-mara",
}
"""Each script removed from benchmarks/ (CHANGELOG, Unreleased) and the command that replaces it."""


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
