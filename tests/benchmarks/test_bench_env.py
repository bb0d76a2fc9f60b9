"""Smoke test of benchmarks/bench_env.py with a tiny budget."""

import sys

from helpers import load_script

bench_env = load_script("bench_env")


def test_bench_env_prints_the_ratio(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["bench_env.py", "--steps", "300", "--repeats", "1"])
    bench_env.main()
    out = capsys.readouterr().out
    assert "ratio coreenv / CartPole" in out
