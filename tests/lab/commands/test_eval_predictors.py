"""`python -m coreenv_lab.commands.eval_predictors`: the lab's predictors and a reference FM, the
fold protocols (lofo, loko) and the history protocol, bad options refused before any work."""

import csv
import json

import pytest

pytest.importorskip("torch")

from coreenv_lab.commands import eval_predictors  # noqa: E402
from mara_agents.predictors.flow import PRETRAINED  # noqa: E402


def test_eval_predictors_scores_a_lab_predictor_and_a_reference_fm(tmp_path, capsys):
    argv = ["--task-sets", "vit_ood", "--per-curve", "1", "--out", str(tmp_path)]
    argv += ["--predictors", "wls", "fm_uncalibrated", "--reference-fm", str(PRETRAINED)]
    eval_predictors.main(argv)
    out = capsys.readouterr().out
    assert "| vit_ood | wls |" in out and "| vit_ood | fm_uncalibrated |" in out
    assert "| vit_ood | fm_reference |" in out and "worst fold" not in out
    with (tmp_path / "predictors.csv").open(newline="") as handle:
        header, *rows = list(csv.reader(handle))
    assert [row[header.index("predictor")] for row in rows] == [
        "wls",
        "fm_uncalibrated",
        "fm_reference",
    ]


def test_eval_predictors_lofo_trains_the_asked_folds_and_names_the_worst(tmp_path, capsys):
    argv = ["--protocol", "lofo", "--recipe", "id_only", "--families", "mlp-wine", "logreg-digits"]
    argv += ["--steps", "2"]
    argv += ["--runs", "8", "--task-sets", "vit_ood", "--per-curve", "1"]
    argv += ["--work", str(tmp_path / "folds"), "--out", str(tmp_path / "out")]
    eval_predictors.main(argv)
    out = capsys.readouterr().out
    assert "| fold mlp-wine | fm |" in out and "| fold logreg-digits | wls |" in out
    assert "| fold cnn-digits |" not in out and "| vit_ood | fm |" in out
    assert "worst fold: " in out and " of 2 folds meet" in out
    assert (tmp_path / "folds" / "mlp-wine" / "fm.pt").is_file()
    assert (tmp_path / "out" / "reliability.png").is_file()


def test_eval_predictors_loko_trains_a_fold_without_a_kind_and_scores_it_on_that_kind(
    tmp_path, capsys
):
    argv = ["--protocol", "loko", "--recipe", "broad_noprior", "--kinds", "recommendation"]
    argv += ["--steps", "2", "--runs", "4", "--no-calibrate", "--task-sets", "vit_ood"]
    argv += ["--per-curve", "1", "--work", str(tmp_path / "folds"), "--out", str(tmp_path / "o")]
    eval_predictors.main(argv)
    out = capsys.readouterr().out
    assert "| fold recommendation | fm |" in out and "| fold recommendation | wls |" in out
    assert "| fold rl |" not in out and "worst fold: recommendation" in out
    recipe = json.loads((tmp_path / "folds" / "recommendation" / "recipe.json").read_text())
    assert recipe["exclude_kinds"] == ["recommendation"] and recipe["corpus"] == "bundled"


def test_eval_predictors_history_scores_each_k_and_writes_its_report(tmp_path, capsys):
    argv = ["--protocol", "history", "--task-sets", "rl_ood", "--predictors", "wls"]
    argv += ["--per-curve", "1", "--finished", "0", "3", "--out", str(tmp_path)]
    eval_predictors.main(argv)
    out = capsys.readouterr().out
    assert "- rl_ood: 5 kind(s) over 64 runs, 64 queries" in out
    assert "| wls (no context) | 0 |" in out and "| wls (no context) | 3 |" in out
    assert "| 3 | 3.0 + 3.0 |" in out and "wls reads no context: its figures are equal" in out
    assert (tmp_path / "history.md").read_text() == out
    with (tmp_path / "history.csv").open(newline="") as handle:
        header, *rows = list(csv.reader(handle))
    assert [row[header.index("finished")] for row in rows] == ["0", "3"]
    assert not (tmp_path / "predictors.csv").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--protocol", "lofo", "--recipe", "id_only", "--families", "mlp-cifar"], "['mlp-cifar']"),
        (["--protocol", "lofo"], "recipe 'broad' trains on the corpus"),
        (["--kinds", "rl"], "--kinds does not apply to --protocol standard"),
        (["--protocol", "loko", "--reference-fm", str(PRETRAINED)], "--reference-fm does not"),
        (["--protocol", "loko", "--recipe", "broad", "--kinds", "poetry"], "--kinds: ['poetry']"),
        (["--protocol", "loko", "--recipe", "id_only"], "recipe 'id_only' has no corpus; use"),
        (["--protocol", "lofo", "--predictors", "wls"], "--predictors does not apply to"),
        (["--reference-fm", "nowhere.pt"], "--reference-fm: no checkpoint at nowhere.pt"),
        (["--protocol", "lofo", "--recipe", "id_only", "--steps", "0"], "--steps"),
        (["--reach-bands"], "--reach-bands does not apply to --protocol standard"),
        (["--protocol", "loko", "--reach-bands", "--no-calibrate"], "--reach-bands shapes the"),
        (["--protocol", "history", "--task-sets", "nope"], "--task-sets"),
        (["--protocol", "history", "--finished", "2", "-1"], "--finished: a count must be an int"),
        (["--protocol", "history", "--finished"], "--finished: expected at least one argument"),
        (["--protocol", "history", "--finished", "4", "4"], "--finished: HistoryConfig.finished"),
        (["--protocol", "history", "--kind-fields"], "--kind-fields: expected at least one"),
        (
            ["--protocol", "history", "--kind-fields", "family", "optimizer"],
            "--kind-fields: kind field 'optimizer': run 0 (family 'ppo-cartpole') of bank 'rl_ood'",
        ),
        (["--protocol", "history", "--queries", "user"], "--queries user does not apply"),
        (["--protocol", "history", "--bank", "my.csv"], "--bank does not apply to --protocol"),
        (["--protocol", "history", "--predictors", "nope"], "--predictors: invalid choice"),
        (["--protocol", "folds"], "--protocol: invalid choice: 'folds'"),
        (["--finished", "2"], "--finished does not apply to --protocol standard"),
        (["--protocol", "loko", "--kind-fields", "family"], "--kind-fields does not apply"),
    ],
)
def test_eval_predictors_refuses_bad_options_before_any_work(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        eval_predictors.main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.startswith(f"{eval_predictors.PROG}: error: ")
    assert message in err and err.count("\n") == 1, err
