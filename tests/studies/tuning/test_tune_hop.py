"""Smoke tests of studies/tuning/tune_hop.py."""

import pytest

pytest.importorskip("torch")

from helpers import STUDIES, load_script  # noqa: E402

FOLDER = STUDIES / "tuning"


def test_tune_hop_tries_each_value_of_a_stage_paired_and_keeps_the_best(capsys, monkeypatch):
    script = load_script("tune_hop", FOLDER)
    monkeypatch.setattr(script, "STAGES", {"slack": [0, 2]})  # two settings: a short test
    script.main(["--predictor", "wls", "--episodes", "2", "--stages", "slack", "--workers", "1"])
    out = capsys.readouterr().out
    assert "| slack | completion (%) | − best so far (points) |" in out
    assert "\n| 0 | " in out and "\n| 2 | " in out and "keep slack = " in out
    assert "best: HOPConfig(" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--episodes", "1"], "--episodes must be >= 2"),
        (["--seed", "999999"], "reaches the evaluation seeds"),
        (["--workers", "0"], "argument --workers: a count must be an int >= 1"),
    ],
)
def test_tune_hop_refuses_bad_options_before_any_work(argv, message, capsys):
    with pytest.raises(SystemExit):
        load_script("tune_hop", FOLDER).main(argv)
    assert message in capsys.readouterr().err
