"""coreenv train-baseline: a tiny run end to end, and bad input refused in one line."""

import re

import pytest

pytest.importorskip("sb3_contrib")

from coreenv import CLUSTERS  # noqa: E402
from mara_agents.cli import train_baseline  # noqa: E402
from mara_agents.training import TRAINING_ENV  # noqa: E402

TINY = ["--envs", "2", "--n-steps", "32", "--eval-every", "64"]


def test_a_tiny_run_trains_judges_and_says_where_it_is(tmp_path, capsys):
    argv = [*TINY, "--max-steps", "64", "--eval-episodes", "2", "--work", str(tmp_path)]
    train_baseline.main(argv)
    out = capsys.readouterr().out
    assert "steps 64: " in out and "done at 64 steps: best " in out and str(tmp_path) in out
    assert (tmp_path / "model.zip").is_file() and (tmp_path / "history.json").is_file()


def test_a_recipe_sets_its_algorithm_and_settings_and_options_beside_it_win():
    args = train_baseline.parse_args(["--recipe", "ippo_live", "--hidden", "32", "--seed", "3"])
    config = args.config
    assert args.algorithm == "ippo" and config.live and config.policy == "slot_set"
    assert (config.hidden, config.epochs, config.minibatches) == (32, 10, 16)
    assert str(config.work).endswith("ippo_live/seed_3")
    slots = train_baseline.parse_args(["--recipe", "ppo_slots", "--envs", "8"]).config
    assert (slots.form, slots.decisions, slots.policy) == ("sequential", "events", "slot_set")
    assert (slots.envs, slots.n_steps, slots.epochs) == (8, 64, 10)


def test_a_cluster_trains_at_its_size_and_the_training_load_per_node():
    sets = train_baseline.parse_args(["--recipe", "ppo_sets", "--nodes", "8"]).config
    assert sets.policy == "slot_sets"
    assert dict(sets.env) == {
        "task_set": "id_train",
        "arrival_prob": 0.08,
        "num_nodes": 8,
        "num_slots": 16,
    }
    costly = train_baseline.parse_args(["--recipe", "ppo_sets", "--cluster", "mixed_costly"])
    assert dict(costly.config.env) == {
        "task_set": "id_train",
        "arrival_prob": 0.04,
        **CLUSTERS["mixed_costly"],
    }
    assert dict(train_baseline.parse_args([]).config.env) == dict(TRAINING_ENV)


def test_a_policy_trained_on_the_information_model_plays_on_what_it_observed(tmp_path, capsys):
    from mara_agents.baselines.maskable_ppo import load_scheduler
    from mara_agents.evaluation import completion_rates

    argv = ["--recipe", "ppo_sets", *TINY, "--max-steps", "64", "--eval-episodes", "1"]
    argv += ["--observe", "fm_mara_analog", "--information", "history", "--work", str(tmp_path)]
    train_baseline.main(argv)
    scheduler = load_scheduler(tmp_path / "best.zip")
    assert scheduler.observation_predictor == "fm_mara_analog"
    assert scheduler.observation_kind_fields == ("family", "optimizer")
    rates = completion_rates(scheduler, 1, 1_000_000, task_set="id", information="history")
    assert 0.0 <= rates[0] <= 1.0
    with pytest.raises(ValueError, match="observing 'fm_mara_analog'; this config asks .*'wls'"):
        train_baseline.main([*argv[:-6], "--information", "history", "--work", str(tmp_path)])
    capsys.readouterr()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--observe", "nope"], "MaskablePPOConfig.observe must be one of"),
        (["--information", "gossip"], "argument --information: invalid choice: 'gossip'"),
        (["--gamma", "1.5"], r"MaskablePPOConfig.gamma must be in \(0, 1\], got 1.5"),
        (["--envs", "0"], "MaskablePPOConfig.envs must be >= 1, got 0"),
        (["--threads", "0"], "argument --threads: a count must be an int >= 1, got 0"),
        (["--live"], "--algorithm maskable_ppo does not read --live"),
        (["--algorithm", "ippo", "--form", "joint"], "ippo does not read --form"),
        (["--minibatches", "0"], "MaskablePPOConfig.minibatches must be >= 1, got 0"),
        (["--algorithm", "a2c"], "invalid choice: 'a2c'"),
        (["--recipe", "ppo_slots", "--live"], "--algorithm maskable_ppo does not read --live"),
        (["--recipe", "ppo_slots", "--algorithm", "ippo"], "trains maskable_ppo, not --algorithm"),
        (["--recipe", "dqn"], "argument --recipe: invalid choice: 'dqn'"),
        (["--nodes", "0"], "--nodes must be an int >= 1, got 0"),
        (["--cluster", "fast"], "argument --cluster: invalid choice: 'fast'"),
    ],
)
def test_bad_values_exit_2_with_one_line_naming_them(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        train_baseline.parse_args(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1
    assert re.search(message, err)
