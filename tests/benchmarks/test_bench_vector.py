"""Smoke test of benchmarks/bench_vector.py with a tiny budget."""

import pytest

pytest.importorskip("sb3_contrib")

from helpers import load_script  # noqa: E402

bench_vector = load_script("bench_vector")


def test_bench_vector_prints_both_setups_and_their_ratio(capsys):
    bench_vector.main(["--envs", "2", "--n-steps", "16", "--steps", "64"])
    out = capsys.readouterr().out
    assert "| one CoreGymEnv (gymnasium.make) | 1 | " in out and "| 1.0x |" in out
    assert "| SB3VecEnv over CoreVectorEnv | 2 | " in out


def test_the_sequential_setups_are_measured_in_the_same_run(capsys):
    bench_vector.main(["--envs", "2", "--n-steps", "16", "--steps", "64", "--sequential"])
    out = capsys.readouterr().out
    assert "| sequential events, slot-set (DummyVecEnv) | 8 | " in out
    assert "| sequential events, slot-set (SequentialVectorEnv) | 8 | " in out


def test_bad_budgets_are_refused():
    with pytest.raises(SystemExit):
        bench_vector.parse_args(["--envs", "0"])
