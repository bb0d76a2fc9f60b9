"""Smoke tests of benchmarks/sweep_load.py: a tiny sweep prints the table and resumes."""

import json

import pytest

import sweep_load


def test_tiny_sweep_prints_the_table_and_resumes(tmp_path, capsys):
    argv = [
        "--loads",
        "0.04",
        "--methods",
        "fifo",
        "oracle",
        "--episodes",
        "2",
        "--workers",
        "1",
        "--out",
        str(tmp_path),
    ]
    sweep_load.main(argv)
    out = capsys.readouterr().out
    assert "| fifo |" in out and "| oracle |" in out and "(n=2)" in out
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and {r["method"] for r in rows} == {"fifo", "oracle"}
    sweep_load.main(argv)
    assert "4 of 4 episodes already done" in capsys.readouterr().out
    assert len((tmp_path / "rows.jsonl").read_text().splitlines()) == 4


def test_user_scheduler_as_module_class(tmp_path, capsys):
    argv = [
        "--loads",
        "0.05",
        "--methods",
        "mara_agents.schedulers:EDF",
        "--episodes",
        "1",
        "--workers",
        "1",
        "--out",
        str(tmp_path),
    ]
    sweep_load.main(argv)
    assert "| mara_agents.schedulers:EDF |" in capsys.readouterr().out


def test_unknown_method_fails_before_running(tmp_path):
    with pytest.raises(ValueError, match="unknown method"):
        sweep_load.main(["--methods", "magic", "--out", str(tmp_path)])
