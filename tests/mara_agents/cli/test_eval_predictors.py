"""`coreenv eval-predictors`: the comparison, user queries, users' banks, bad options (the
studies' protocols are the lab's: tests/lab/commands/test_eval_predictors.py)."""

import csv
import json

import numpy as np
import pytest

pytest.importorskip("torch")

from coreenv.curves import bank_to_csv, named_task_set  # noqa: E402
from mara_agents.cli import eval_predictors  # noqa: E402


def test_eval_predictors_prints_the_comparison(tmp_path, capsys):
    argv = ["--task-sets", "vit_ood", "--per-curve", "1", "--out", str(tmp_path)]
    eval_predictors.main(argv)
    out = capsys.readouterr().out
    assert "| vit_ood | wls |" in out and "| vit_ood | fm |" in out and "MAE reduction" in out
    assert "ECE" in out and "worst fold" not in out
    for name in ("predictors.csv", "predictors.md", "reliability.png"):
        assert (tmp_path / name).exists()
    with (tmp_path / "predictors.csv").open(newline="") as handle:
        header, *rows = list(csv.reader(handle))
    assert "success_share" in header and "auc" in header and len(rows) == 2
    assert all(len(row) == len(header) for row in rows)  # every column has its value
    assert "| AUC |" in out and "queries: environment protocol" in out


def test_eval_predictors_asks_user_queries(tmp_path, capsys):
    argv = ["--queries", "user", "--task-sets", "vit_ood", "--predictors", "wls"]
    argv += ["--per-curve", "1", "--out", str(tmp_path)]
    eval_predictors.main(argv)
    out = capsys.readouterr().out
    assert "queries: user protocol" in out and "| vit_ood | wls | 64 |" in out
    assert "| rl_ood |" not in out


def test_eval_predictors_asks_both_kinds_of_queries_in_one_run(tmp_path, capsys):
    argv = ["--queries", "environment", "user", "--task-sets", "vit_ood", "--predictors", "wls"]
    argv += ["--per-curve", "1", "--out", str(tmp_path)]
    eval_predictors.main(argv)
    out = capsys.readouterr().out
    assert "queries: environment protocol" in out and "queries: user protocol" in out
    assert (tmp_path / "reliability-environment.png").is_file()
    assert (tmp_path / "reliability-user.png").is_file()
    with (tmp_path / "predictors.csv").open(newline="") as handle:
        header, *rows = list(csv.reader(handle))
    targets = [row[header.index("targets")] for row in rows]
    assert targets == ["environment", "user"]


def test_eval_predictors_scores_a_users_bank(tmp_path, capsys):
    bank_to_csv(named_task_set("rl_ood").subset(np.arange(4)), tmp_path / "my_runs.csv")
    argv = ["--bank", str(tmp_path / "my_runs.csv"), "--predictors", "wls", "--per-curve", "2"]
    argv += ["--out", str(tmp_path / "out")]
    eval_predictors.main(argv)
    out = capsys.readouterr().out
    assert "| my_runs | wls | 8 |" in out
    assert "| id |" not in out and "| vit_ood |" not in out  # with --bank: only the banks
    eval_predictors.main([*argv, "--task-sets", "vit_ood", "--queries", "user"])
    out = capsys.readouterr().out
    assert "| vit_ood | wls |" in out and "| my_runs | wls |" in out


def test_eval_predictors_refuses_a_bad_bank_naming_the_file(tmp_path, capsys):
    missing = tmp_path / "missing.csv"
    with pytest.raises(SystemExit) as exit_info:
        eval_predictors.main(["--bank", str(missing), "--out", str(tmp_path)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"--bank {missing}: no file at" in err and len(err.strip().splitlines()[-1]) > 0
    (tmp_path / "bad.csv").write_text("run,batch\na,0\n")
    with pytest.raises(SystemExit) as exit_info:
        eval_predictors.main(["--bank", str(tmp_path / "bad.csv")])
    assert exit_info.value.code == 2
    assert "bad.csv" in capsys.readouterr().err.splitlines()[-1]
    assert not (tmp_path / "predictors.csv").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--task-sets", "nope"], "--task-sets"),
        (["--per-curve", "0"], "--per-curve"),
        (["--queries", "users"], "--queries: invalid choice: 'users'"),
        (["--predictors", "fm_uncalibrated"], "--predictors: invalid choice"),
        (["--protocol", "lofo"], "unrecognized arguments: --protocol lofo"),
    ],
)
def test_eval_predictors_refuses_bad_options_before_any_work(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        eval_predictors.main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in err and err.count("\n") == 1, err
