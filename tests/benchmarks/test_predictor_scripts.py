"""Smoke tests of the predictor scripts: FM training resumes; the evaluation prints its table."""

import pytest

pytest.importorskip("torch")

import eval_predictors  # noqa: E402
import train_fm  # noqa: E402
from mara_agents.predictors.flow import FMPredictor  # noqa: E402


def test_train_fm_writes_a_checkpoint_and_resumes(tmp_path, capsys):
    argv = [
        "--runs",
        "12",
        "--batch",
        "64",
        "--every",
        "10",
        "--work",
        str(tmp_path / "w"),
        "--out",
        str(tmp_path / "fm.pt"),
    ]
    train_fm.main([*argv, "--steps", "20"])
    train_fm.main([*argv, "--steps", "30"])
    out = capsys.readouterr().out
    assert "resumed from" in out and "at step 20" in out and "step 30/30" in out
    predictor = FMPredictor.pretrained(tmp_path / "fm.pt")
    assert predictor.net.config.layers == 2


def test_eval_predictors_prints_the_comparison(tmp_path, capsys):
    eval_predictors.main(["--task-sets", "vit_ood", "--per-curve", "1", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "| vit_ood | wls |" in out and "| vit_ood | fm |" in out and "MAE reduction" in out
    assert (tmp_path / "predictors.csv").exists() and (tmp_path / "predictors.md").exists()
