"""Smoke tests of the curve scripts: the figure and the task-set description, on tiny inputs."""

import numpy as np
import pytest

from coreenv.curves import bank_from_arrays, save_bank
from helpers import load_script


def test_plot_curves_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    plot_curves = load_script("plot_curves")

    curves = [2.0 * (1 + np.arange(30)) ** -(0.2 + 0.1 * i) for i in range(6)]
    bank = bank_from_arrays(curves, ["a", "a", "b", "b", "c", "c"])
    save_bank(bank, tmp_path / "bank.npz")
    out = tmp_path / "curves.png"
    plot_curves.main(["--bank", str(tmp_path / "bank.npz"), "--out", str(out)])
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_describe_task_sets_prints_a_row(capsys):
    load_script("describe_task_sets").main(
        ["--task-sets", "synthetic", "--episodes", "1", "--tasks", "50"]
    )
    out = capsys.readouterr().out
    assert "| synthetic |" in out


def test_describe_task_sets_takes_its_old_load_option_with_a_warning(capsys):
    load_script("describe_task_sets").main(
        ["--task-sets", "synthetic", "--episodes", "1", "--tasks", "50", "--load", "0.05"]
    )
    captured = capsys.readouterr()
    assert "| synthetic |" in captured.out
    assert "--load is deprecated and will be removed in 0.4.0; use --arrival-prob" in captured.err
