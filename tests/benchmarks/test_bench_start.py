"""Smoke test of benchmarks/bench_start.py with one process per figure."""

import pytest

from helpers import load_script

bench_start = load_script("bench_start")


def test_bench_start_prints_every_figure_and_the_install_size(capsys):
    bench_start.main(["--repeats", "1"])
    out = capsys.readouterr().out
    for figure in ["import coreenv", "first step, cache empty", "first step, cache warm"]:
        line = next(line for line in out.splitlines() if line.startswith(figure))
        assert "x gymnasium + pettingzoo" in line, line
    assert "numba" in out and "llvmlite" in out and "MB" in out


def test_a_bad_repeat_count_is_refused(capsys):
    with pytest.raises(SystemExit):
        bench_start.main(["--repeats", "0"])
    assert "argument --repeats: must be an int >= 1, got 0" in capsys.readouterr().err
