"""coreenv train-baseline: the shipped baseline's recipe, a tiny run end to end, bad input refused
in one line."""

import re

import pytest

pytest.importorskip("sb3_contrib")

from coreenv import CLUSTERS  # noqa: E402
from mara_agents.cli import train_baseline  # noqa: E402
from mara_agents.training import TRAINING_ENV  # noqa: E402
from mara_agents.training.recipes import RECIPES, make_recipe  # noqa: E402

TINY = ["--max-steps", "64", "--eval-every", "64", "--eval-episodes", "2"]


def test_the_command_runs_the_shipped_recipe():
    config = train_baseline.parse_args(["--seed", "3"]).config
    algorithm, settings = RECIPES["ppo"]
    assert algorithm == "maskable_ppo" and config.policy == "slot_sets" == settings["policy"]
    assert (config.form, config.decisions, config.envs, config.epochs) == (
        "sequential",
        "events",
        64,
        10,
    )
    assert config.seed == 3 and str(config.work).endswith("ppo/seed_3")
    assert dict(config.env) == dict(TRAINING_ENV)


def test_a_tiny_run_trains_judges_and_says_where_it_is(tmp_path, capsys, monkeypatch):
    def two_lanes(name, work, **fields):  # the recipe's 64 x 64 steps per update take minutes
        return make_recipe(name, work, **fields, envs=2, n_steps=32)

    monkeypatch.setattr(train_baseline, "make_recipe", two_lanes)
    train_baseline.main([*TINY, "--work", str(tmp_path)])
    out = capsys.readouterr().out
    assert "done at " in out and "best " in out and str(tmp_path) in out
    assert (tmp_path / "model.zip").is_file() and (tmp_path / "history.json").is_file()
    assert ("no policy so far completed a task" in out) == ("best 0.0%" in out)


def test_a_cluster_trains_at_its_size_and_its_default_load():
    big = train_baseline.parse_args(["--cluster", "8"]).config
    assert dict(big.env) == {
        "task_set": "id_train",
        "arrival_prob": 0.08,
        "num_nodes": 8,
        "num_slots": 16,
    }
    costly = train_baseline.parse_args(["--cluster", "8/16 mixed_costly"]).config
    assert dict(costly.env) == {
        "task_set": "id_train",
        "arrival_prob": 0.16,  # 0.01 per unit of speed: 1, 1, 2, 4 twice
        "num_nodes": 8,
        "num_slots": 16,
        **CLUSTERS["mixed_costly"],
    }


def test_a_work_folder_of_other_episodes_is_refused_before_training(tmp_path, capsys):
    (tmp_path / "episodes.json").write_text('{"task_set": "id_train", "arrival_prob": 0.04}')
    train_baseline.parse_args(["--work", str(tmp_path)])  # the same episodes: it resumes
    with pytest.raises(SystemExit) as exit_:
        train_baseline.parse_args(["--cluster", "8/16", "--work", str(tmp_path)])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1
    assert "holds a run on other episodes (arrival_prob, num_nodes, num_slots:" in err
    assert "give the new run another work folder" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--threads", "0"], "argument --threads: a count must be an int >= 1, got 0"),
        (["--max-steps", "0"], "argument --max-steps: a count must be an int >= 1, got 0"),
        (["--cluster", "0"], "argument --cluster: a cluster is written 'M/K name'"),
        (["--cluster", "8/4"], "argument --cluster: .*num_slots=4 is fewer than num_nodes=8"),
        (["--cluster", "8 fast"], "argument --cluster: cluster '8 fast': the name must be one of"),
        (["--recipe", "ppo_slots"], "unrecognized arguments: --recipe ppo_slots"),
    ],
)
def test_bad_values_exit_2_with_one_line_naming_them(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        train_baseline.parse_args(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1
    assert re.search(message, err)
