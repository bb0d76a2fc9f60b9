"""Smoke test of studies/tuning/calibrate_regime.py."""

from helpers import STUDIES, load_script

FOLDER = STUDIES / "tuning"


def test_calibrate_regime_prints_a_row_per_setting(capsys):
    load_script("calibrate_regime", FOLDER).main(
        [
            "--task-set",
            "synthetic",
            "--episodes",
            "1",
            "--workers",
            "1",
            "--horizons",
            "200",
            "--windows",
            "50:100",
            "100:200",
        ]
    )
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 4 | 8 |")]
    assert len(lines) == 2
