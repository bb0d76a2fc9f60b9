"""Smoke test of benchmarks/bench_env.py with a tiny budget."""

import pytest

from helpers import load_script

bench_env = load_script("bench_env")

TINY = [
    "--steps",
    "300",
    "--repeats",
    "1",
    "--lanes",
    "4",
    "--batched-steps",
    "20",
    "--warmup",
    "5",
    "--event-lanes",
    "3",
    "--sequential-lanes",
    "4",
    "--choices",
    "200",
]


def test_bench_env_prints_every_ratio(capsys):
    bench_env.main(TINY)
    out = capsys.readouterr().out
    assert "CartPole-v1" in out
    figures = ["env.step alone", "FIFO acting", "batched B=4, matching", "batched B=4, random"]
    sequential = ["sequential alone", "sequential vector N=4"]
    for figure in [*figures, "vector events B=3", *sequential]:
        line = next(line for line in out.splitlines() if figure in line)
        assert "ratio" in line, line
    assert "(target >= 1.5)" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--steps", "0"], "argument --steps: a count must be an int >= 1, got 0."),
        (["--lanes", "256", "x"], "argument --lanes: a count must be an int >= 1, got 'x'."),
        (["--warmup", "-1"], "argument --warmup: must be an int >= 0, got -1"),
    ],
)
def test_bad_arguments_end_with_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench_env.main(argv)
    assert str(exit_info.value) == f"bench_env.py: error: {message}"
