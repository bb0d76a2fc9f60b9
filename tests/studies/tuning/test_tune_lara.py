"""Smoke test of studies/tuning/tune_lara.py."""

import pytest

pytest.importorskip("torch")

from helpers import STUDIES, load_script  # noqa: E402

FOLDER = STUDIES / "tuning"


def test_tune_lara_prints_its_three_tables(capsys):
    argv = ["--task-set", "vit_ood", "--discounts", "0.7", "0.9", "--ridges", "0.0"]
    argv += ["--per-curve", "1", "--explore", "3", "--episodes", "1", "--workers", "1"]
    load_script("tune_lara", FOLDER).main(argv)
    out = capsys.readouterr().out
    assert "| 0.7 | 0.0 |" in out and "| 0.9 | 0.0 |" in out
    assert "| explore (batches) |" in out and "\n| 3 | " in out
    for label in ("FIFO", "EDF", "LARA (WLS)", "LARA (true demand)", "oracle"):
        assert f"| {label} | " in out
