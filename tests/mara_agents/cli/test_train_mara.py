"""`coreenv train-mara`: the shipped networks' recipe, with the few options a user of it needs.

The training itself (imitation, the grouped policy gradient, resuming) is tested through the
lab's full command line (tests/lab/commands/test_train_mara.py), which runs the same
`train_mara` on cheaper estimates.
"""

import re
from pathlib import Path

import pytest

pytest.importorskip("torch")

from coreenv import Decisions  # noqa: E402
from mara_agents.cli import train_mara  # noqa: E402
from mara_agents.schedulers.mara import VARIANTS  # noqa: E402
from mara_agents.training import MARATrainConfig  # noqa: E402
from mara_agents.training.recipe import MARARun, recipe_network  # noqa: E402


def test_the_defaults_are_the_recipe_of_the_shipped_mara_writing_into_the_work_folder():
    config = train_mara.parse_args([]).config
    work = Path("results/mara/mara")
    clusters = VARIANTS["mara"].clusters
    network = recipe_network(VARIANTS["mara"], clusters)
    assert config == MARATrainConfig(work=work, out=work / "mara.pt", clusters=clusters, mat=network)
    assert config.observed == VARIANTS["mara"].predictor and config.beta == 1.0
    assert network.sets and network.cluster_column == 9  # reads speeds, last node, resume cost
    assert len(clusters) > 1 and config.decisions == Decisions("events", hold=8)


def test_clusters_choose_the_training_clusters_and_a_bad_shape_exits_2(capsys):
    config = train_mara.parse_args(["--clusters", "8/16 mixed_costly", "12"]).config
    assert [(env["num_nodes"], env.get("switch_cost")) for env in config.envs] == [(8, 5), (12, None)]
    assert config.mat.num_nodes == 8
    with pytest.raises(SystemExit) as exit_:
        train_mara.parse_args(["--clusters", "8/16 fast"])
    assert exit_.value.code == 2 and "the name must be one of" in capsys.readouterr().err


def test_the_budget_options_reach_the_run_and_main_says_where_the_policy_is(
    tmp_path, capsys, monkeypatch
):
    ran = []

    def train(config):
        ran.append(config)
        return MARARun(0.5, [], config.out)

    monkeypatch.setattr(train_mara, "train_mara", train)
    argv = ["--minutes", "0.5", "--demo-episodes", "3", "--dagger-rounds", "0", "--seed", "2"]
    train_mara.main([*argv, "--eval-every", "2", "--eval-episodes", "4", "--work", str(tmp_path)])
    (config,) = ran
    assert (config.minutes, config.seed, config.grouped.seed) == (0.5, 2, 2)
    assert (config.imitation.episodes, config.imitation.dagger_rounds) == (3, 0)
    assert (config.eval_every, config.eval_episodes) == (2, 4)
    assert f"50.0%, in {tmp_path / 'mara.pt'}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--variant", "mara_sets"], "unrecognized arguments: --variant mara_sets"),
        (["--dagger-rounds", "-1"], "--dagger-rounds must be an int >= 0, got -1"),
        (["--eval-episodes", "0"], "a count must be an int >= 1, got 0"),
        (["--algorithm", "ppo"], "unrecognized arguments: --algorithm ppo"),
    ],
)
def test_bad_options_exit_2_with_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        train_mara.parse_args(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1 and re.search(message, err)
