"""The `coreenv` dispatcher: its help, one-line errors, lazy imports and its two entry points."""

import re
import subprocess
import sys

import pytest

from coreenv.curves import TASK_SETS
from helpers import coreenv_executable, run_python
from mara_agents.cli import COMMANDS, main

TORCH_COMMANDS = ("eval-predictors", "train-mara", "train-baseline", "compare")
"""Commands whose module imports torch."""


def refused(capsys, argv: list[str]) -> str:
    """What ``coreenv ARGV`` prints to stderr, checking that it exits 2 having printed one line."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and err.endswith("\n"), err
    return err


def test_help_lists_every_command_on_one_line_with_its_summary(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0 and out.startswith("usage: coreenv ")
    for name, summary in COMMANDS.items():
        assert re.search(rf"^  {name} +{re.escape(summary)}$", out, re.MULTILINE), name


def test_help_imports_no_command_and_not_torch():
    code = (
        "import sys\nfrom mara_agents.cli import main\ntry:\n    main(['--help'])\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('torch', 'mara_agents.cli.'))))"
    )
    assert run_python(code).splitlines()[-1] == "['mara_agents.cli.parser']"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["swep"], "coreenv: error: argument COMMAND: invalid choice: 'swep' (choose from 'sweep'"),
        ([], "coreenv: error: the following arguments are required: COMMAND\n"),
        (["sweep", "--backend", "no"], "coreenv sweep: error: argument --backend: invalid choice"),
        (
            ["sweep", "--arrival-prob", "2.5"],
            "coreenv sweep: error: argument --arrival-prob: an arrival probability must be a "
            "finite number in [0.0, 1.0], got 2.5.",
        ),
        (["sweep", "--workers", "two"], "coreenv sweep: error: argument --workers: invalid int"),
        (
            ["stress", "--episodes", "0"],
            "coreenv stress: error: argument --episodes: a count must be an int >= 1, got 0.",
        ),
        (["stress", "--methods", "magic"], "coreenv stress: error: unknown method 'magic'"),
        (
            ["sweep", "--clusters", "8/4", "--methods", "fifo"],
            "coreenv sweep: error: argument --clusters: EnvConfig.num_slots=4 is fewer than "
            "num_nodes=8",
        ),
        (
            ["compare", "lara", "nothere.zip"],
            "coreenv compare: error: nothere.zip: no checkpoint file at nothere.zip.",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_the_command(capsys, argv, message):
    assert refused(capsys, argv).startswith(message)


@pytest.mark.parametrize(
    ("command", "names"),
    [
        (
            "sweep",
            ["--backend {local,ray}", "rl_ood", "module:Class(key=value, ...)", "--quick"]
            + ["hop  HOP:", "mara  MARA:", "ppo  MaskablePPO", "edf  earliest deadline first"],
        ),
        ("stress", ["--task-set", "synthetic", "oracle  the clairvoyant", "(default: 10)"]),
        ("eval-predictors", ["{environment,user}", "{fm,wls}", "rl_ood", "--bank PATH"]),
        ("train-mara", ["--clusters", "'8/16 mixed_costly'", "--dagger-rounds", "--work"]),
        ("train-baseline", ["--max-steps", "(default 5,000,000)", "--cluster", "--seed"]),
        ("compare", ["module:Class", "policies", "lara_fm  LARA on the flow-matching", "--task-set"]),
        ("benchmark", ["METHOD", "--quick", "--out", "oracle  the clairvoyant planner"]),
        ("validate", ["results", "--sample", "--seed"]),
    ],
)
def test_each_command_help_lists_its_options_and_valid_names(capsys, command, names):
    if command in TORCH_COMMANDS:
        pytest.importorskip("torch")
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0 and out.startswith(f"usage: coreenv {command} ")
    assert "(default: None)" not in out
    for name in names:  # options and choices, wherever argparse wraps the lines
        assert "".join(name.split()) in "".join(out.split()), name


def test_the_installed_commands_have_few_options(capsys):
    """A product is also what it leaves out: at most 60 options across the installed commands."""
    pytest.importorskip("torch")
    options = 0
    for command in COMMANDS:
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = capsys.readouterr().out
        options += len(set(re.findall(r"^  (--[a-z-]+)", out, re.MULTILINE)) - {"--help"})
    assert sorted(COMMANDS) == sorted(
        ["sweep", "benchmark", "validate", "stress", "compare", "eval-predictors", "train-mara",
         "train-baseline"]
    )  # fmt: skip
    assert options <= 60, options


def test_a_command_runs_with_the_arguments_after_it(capsys):
    main(["stress", "--methods", "fifo", "oracle", "--episodes", "1", "--task-set", "synthetic"])
    out = capsys.readouterr().out
    assert "| fifo | 0.0 |" in out and "| oracle | 65.0 |" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["train-mara", "--help"],  # the command's module imports torch
        ["sweep", "--methods", "fifo", "mara", "--quick"],  # a method imports it on use
    ],
)
def test_missing_torch_is_one_line_with_the_install_command(argv):
    blocked = (  # as on a machine without torch: importing it fails, and it is not in sys.modules
        "import sys\n"
        "class NoTorch:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] == 'torch':\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, NoTorch())\n"
    )
    code = f"{blocked}from mara_agents.cli import main\nmain({argv})"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 2, run.stderr
    install = 'this needs torch, which is not installed: pip install "coreenv[agents]"'
    assert run.stderr == f"coreenv {argv[0]}: error: {install}\n"


def test_python_dash_m_mara_agents_runs_the_dispatcher():
    run = subprocess.run(
        [sys.executable, "-m", "mara_agents", "--help"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("usage: coreenv ") and "train-baseline" in run.stdout


def test_the_installed_coreenv_executable_runs():
    executable = coreenv_executable()
    run = subprocess.run([executable, "--help"], capture_output=True, text=True)
    assert run.returncode == 0 and "train-mara" in run.stdout, run.stderr
    run = subprocess.run([executable, "swep"], capture_output=True, text=True)
    assert run.returncode == 2 and run.stderr.startswith("coreenv: error: ")
    assert run.stderr.count("\n") == 1, run.stderr
