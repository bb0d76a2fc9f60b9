"""The scripts of benchmarks/ that became `coreenv` commands still run, as shims."""

import subprocess
import sys
from importlib import import_module

import pytest

from helpers import BENCHMARKS, load_script

SHIMS = {
    "sweep_load": "sweep",
    "stress_infeasible": "stress",
    "eval_predictors": "eval_predictors",
    "train_mara": "train_mara",
    "compare_policies": "compare",
    "learning_curves": "learning_curves",
}
"""Each shim script and the module of `mara_agents.cli` whose command it runs."""


@pytest.mark.parametrize(("script", "module"), SHIMS.items())
def test_each_shim_runs_its_command(script, module):
    if module not in ("sweep", "stress"):
        pytest.importorskip("torch")
    assert load_script(script).main is import_module(f"mara_agents.cli.{module}").main


def test_a_shim_still_runs_from_the_command_line():
    command = [sys.executable, str(BENCHMARKS / "stress_infeasible.py"), "--methods", "fifo"]
    command += ["--episodes", "1", "--task-set", "synthetic"]
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    assert "| fifo | 0.0 |" in run.stdout
