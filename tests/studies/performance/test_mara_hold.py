"""Smoke test of studies/performance/mara_hold.py: a row per hold, against every step."""

from helpers import STUDIES, load_script

mara_hold = load_script("mara_hold", STUDIES / "performance")


def test_the_script_prints_every_step_and_a_row_per_hold(capsys):
    mara_hold.main(["--holds", "4", "--episodes", "2"])
    out = capsys.readouterr().out
    assert "| every step |" in out
    assert "| 4 |" in out and "±" in out
