"""Smoke test of studies/cluster_memory/choose_analog.py: a row per setting, training seeds only."""

import pytest

from helpers import STUDIES, load_script

choose_analog = load_script("choose_analog", STUDIES / "cluster_memory")


def test_the_script_prints_a_row_per_setting(capsys):
    choose_analog.main(["--predictor", "wls", "--episodes", "2", "--horizon", "60"])
    out = capsys.readouterr().out
    assert "| wls alone |" in out
    for name in choose_analog.CANDIDATES:
        assert f"| {name} |" in out


def test_evaluation_seeds_are_refused(capsys):
    with pytest.raises(SystemExit):
        choose_analog.main(["--seed", "1000000"])
    assert "training seeds" in capsys.readouterr().err
