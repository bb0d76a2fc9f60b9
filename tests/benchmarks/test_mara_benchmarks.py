"""Smoke tests of the MARA benchmark scripts: latency and training throughput print their ratios."""

import pytest

pytest.importorskip("torch")

from helpers import load_script  # noqa: E402


MARA_WLS = "coreenv_lab.methods:mara_wls"


def test_latency_benchmark_prints_ratios_to_lara_naming_a_lab_method_as_the_sweep_does(capsys):
    load_script("bench_latency").main(["--methods", "lara", MARA_WLS, "--episodes", "1"])
    out = capsys.readouterr().out
    assert "| lara |" in out and "| 1.00 |" in out and "| mara_wls |" in out
    assert "| mara_wls (lockstep, 1 episodes) |" in out and MARA_WLS not in out


def test_latency_benchmark_times_whole_episodes_with_and_without_the_compiled_policy(capsys):
    script = load_script("bench_latency")
    argv = ["--wall", "--methods", "lara", "mara", "--lanes", "1", "2", "--repeats", "1"]
    script.main(argv)
    out = capsys.readouterr().out
    for lanes in (1, 2):
        assert f"| {lanes} | lara |" in out and f"| {lanes} | mara |" in out
        assert f"| {lanes} | mara (MAT.act) |" in out and f"| {lanes} | lara (MAT.act) |" not in out
    assert out.count("| 1.00 |") == 2  # LARA is the reference of each lane count


def test_latency_benchmark_times_every_mara_uncompiled_too():
    script = load_script("bench_latency")
    for method in ("coreenv_lab.methods:mara_wls", "mara"):  # one cluster size, and sets
        mara = script.make_scheduler(method)
        assert script.networks(mara) == [mara] and mara.compiled
    assert script.networks(script.make_scheduler("lara")) == []


def test_latency_benchmark_refuses_an_unknown_method_before_any_work(capsys):
    with pytest.raises(SystemExit):
        load_script("bench_latency").main(["--methods", "mara_wls"])
    assert "--methods: method 'mara_wls' is a study's variant of MARA" in capsys.readouterr().err


def test_training_benchmark_prints_each_recipe_against_cartpole_and_refuses_bad_sizes(capsys):
    script = load_script("bench_training")
    tiny = ["--updates", "1", "--n-steps", "8", "--cartpole-steps", "1000", "--threads", "1"]
    script.main([*tiny, "--predictor", "none", "--held-episodes", "2"])
    out = capsys.readouterr().out
    assert "CartPole-v1, random actions:" in out
    recipes = ("ppo", "ppo_slots", "ppo_mlp", "ippo_live", "ippo_sets", "mat_ppo", "held_ppo")
    assert all(f"| {recipe} |" in out for recipe in recipes)
    assert "| ppo_slots | 512 |" in out  # 64 lanes x 8 steps
    assert "| ippo_live | 256 |" in out and ">= 0.15x |" in out
    assert "| recipe | update MFLOP per step |" in out and "| ppo_slots | 6.91 |" in out
    with pytest.raises(SystemExit):
        script.main([*tiny, "--updates", "0"])
    assert "argument --updates: a count must be an int >= 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        script.main([*tiny, "--to-lara", "0"])
    assert "minutes must be > 0, got 0" in capsys.readouterr().err
