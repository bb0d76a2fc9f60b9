"""Smoke tests of the MARA benchmark scripts: latency and training throughput print their ratios."""

import pytest

pytest.importorskip("torch")

from helpers import load_script  # noqa: E402


def test_latency_benchmark_prints_ratios_to_lara(capsys):
    load_script("bench_latency").main(["--methods", "lara", "mara_wls", "--episodes", "1"])
    out = capsys.readouterr().out
    assert "| lara |" in out and "| 1.00 |" in out and "| mara_wls |" in out
    assert "| mara_wls (lockstep, 1 episodes) |" in out


def test_training_benchmark_prints_both_setups_and_refuses_bad_sizes(capsys):
    script = load_script("bench_training")
    tiny = ["--predictor", "none", "--updates", "1", "--rollout", "8"]
    script.main(
        [*tiny, "--envs", "4", "--reference-envs", "2", "--threads", "1", "--held-episodes", "2"]
    )
    out = capsys.readouterr().out
    assert "| recipe's lanes | 2 |" in out and "| more lanes | 4 |" in out and "| 1.0x |" in out
    assert "| held decisions | 2 |" in out
    with pytest.raises(SystemExit):
        script.main([*tiny, "--envs", "0"])
    assert "argument --envs: a count must be an int >= 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        script.main([*tiny, "--held-episodes", "-1"])
    assert "--held-episodes must be >= 0" in capsys.readouterr().err
