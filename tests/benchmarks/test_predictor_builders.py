"""Smoke tests of the predictor builders: train_fm.py and distill_fm.py write checkpoints and
refuse bad settings."""

import pytest

pytest.importorskip("torch")

from helpers import load_script  # noqa: E402
from mara_agents.fm_training.calibration_fit import REACH_EDGES  # noqa: E402
from mara_agents.predictors.flow import FMPredictor  # noqa: E402


def test_train_fm_writes_a_checkpoint_and_resumes(tmp_path, capsys):
    argv = ["--recipe", "id_only", "--no-calibrate", "--runs", "12", "--batch", "64"]
    argv += ["--every", "10"]
    argv += ["--work", str(tmp_path / "w"), "--out", str(tmp_path / "fm.pt")]
    train_fm = load_script("train_fm")
    train_fm.main([*argv, "--steps", "20"])
    train_fm.main([*argv, "--steps", "30"])
    out = capsys.readouterr().out
    assert "resumed from" in out and "at step 20" in out and "step 30/30" in out
    predictor = FMPredictor.pretrained(tmp_path / "fm.pt")
    assert predictor.net.config.layers == 2 and predictor.calibration is None
    assert sorted(p.name for p in (tmp_path / "w").iterdir()) == ["all"]


def test_train_fm_calibrates_on_the_eight_folds_and_ships_the_calibration(
    tmp_path, capsys, monkeypatch
):
    argv = ["--recipe", "id_only", "--runs", "8", "--batch", "32", "--steps", "2", "--every", "2"]
    argv += ["--work", str(tmp_path / "w"), "--out", str(tmp_path / "fm.pt")]
    load_script("train_fm").main(argv)
    assert "calibrated on the folds" in capsys.readouterr().out
    assert len(list((tmp_path / "w").iterdir())) == 9  # eight folds and all
    shipped = FMPredictor.pretrained(tmp_path / "fm.pt")
    assert shipped.calibration is not None and shipped.calibration.farther == ()  # one blend
    # far-target blends when asked: the fit of each reach band is calibration_fit's own test
    script, asked = load_script("train_fm"), []
    monkeypatch.setattr(
        script, "train_calibrated", lambda *a, reach_edges: asked.append(reach_edges) or shipped
    )
    script.main([*argv, "--reach-bands", "--out", str(tmp_path / "far.pt")])
    assert asked == [REACH_EDGES] and (tmp_path / "far.pt").is_file()


def test_train_fm_refuses_a_bad_setting_before_any_work(tmp_path, capsys):
    with pytest.raises(SystemExit):
        load_script("train_fm").main(["--steps", "0", "--work", str(tmp_path / "w")])
    assert "FMTrainConfig.steps must be >= 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        load_script("train_fm").main(["--reach-bands", "--no-calibrate"])
    assert "--reach-bands is a calibration's: it needs --calibrate" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # would overwrite the shipped predictor
        load_script("train_fm").main(["--reach-bands", "--work", str(tmp_path / "w")])
    assert "give an --out other than" in capsys.readouterr().err
    assert not (tmp_path / "w").exists()


def test_distill_fm_writes_a_student_that_samples_in_one_step(tmp_path, capsys):
    argv = ["--steps", "2", "--batch", "8", "--prefixes-per-run", "2", "--runs", "12"]
    load_script("distill_fm").main([*argv, "--out", str(tmp_path / "student.pt")])
    assert "step 2/2" in capsys.readouterr().out
    student = FMPredictor.pretrained(tmp_path / "student.pt")
    assert (student.config.ode_steps, student.config.solver) == (1, "euler")
    assert student.calibration is not None  # the teacher's, kept


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--student-steps", "0"], "DistillConfig.student_steps must be >= 1"),
        (["--recipe", "nope"], "DistillConfig.recipe must be one of"),
        (["--teacher", "no/such.pt"], "--teacher: no checkpoint at no/such.pt"),
        (["--teacher", __file__], "is not an FM checkpoint"),
    ],
)
def test_distill_fm_refuses_a_bad_setting_before_any_work(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit):
        load_script("distill_fm").main([*argv, "--out", str(tmp_path / "student.pt")])
    assert message in capsys.readouterr().err
    assert not (tmp_path / "student.pt").exists()


def test_train_weigher_writes_a_weigher_and_its_table(tmp_path, capsys):
    from coreenv_lab.predictors.analog_weigher import AnalogWeigher

    argv = ["--epochs", "1", "--runs", "40", "--episodes", "1", "--out", str(tmp_path / "w.pt")]
    load_script("train_weigher").main(argv)
    out = capsys.readouterr().out
    assert "kept epoch 1" in out and "reference   k queries    base    rule weigher" in out
    assert " protocol " in out and " episodes " in out
    assert AnalogWeigher.load(tmp_path / "w.pt").neighbours == 8


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--validation-share", "1.5"], "WeigherTrainConfig.validation_share must be in (0, 1)"),
        (["--epochs", "0"], "WeigherTrainConfig.epochs must be an int >= 1"),
        (["--sources", "survey"], "WeigherTrainConfig.sources must be one or more of"),
        (["--base", "nope"], "argument --base: invalid choice: 'nope'"),
        (["--out", "no/such/folder/w.pt"], "--out: no folder no/such/folder"),
    ],
)
def test_train_weigher_refuses_a_bad_setting_before_any_work(argv, message, capsys):
    with pytest.raises(SystemExit):
        load_script("train_weigher").main(argv)
    assert message in capsys.readouterr().err
