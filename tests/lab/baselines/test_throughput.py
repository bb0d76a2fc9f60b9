"""The baselines' training speed: steps timed from scratch, and a run's evaluations timed."""

import pytest

pytest.importorskip("sb3_contrib")

from coreenv_lab.baselines.recipes import make_recipe  # noqa: E402
from coreenv_lab.baselines.throughput import (  # noqa: E402
    ippo_throughput,
    maskable_ppo_throughput,
    timeline,
    update_flops,
)


def test_each_update_counts_lanes_times_steps_and_the_rollout_is_faster_than_the_whole(tmp_path):
    config = make_recipe("ppo_slots", tmp_path, envs=2, n_steps=16, minibatches=2, epochs=1)
    speed = maskable_ppo_throughput(config, updates=2)
    assert speed.steps == 64 and speed.rollout > speed.training > 0
    ippo = make_recipe("ippo_live", tmp_path, envs=2, n_steps=8, minibatches=2, epochs=1)
    speed = ippo_throughput(ippo, updates=1)
    assert speed.steps == 16 and speed.rollout > speed.training > 0


def test_a_timeline_times_every_evaluation_after_the_start(tmp_path):
    config = make_recipe(
        "ppo_slots", tmp_path, envs=2, n_steps=16, minibatches=2, epochs=1, max_steps=64,
        eval_every=32, eval_episodes=1,
    )  # fmt: skip
    evaluations = timeline(config)
    assert [e.steps for e in evaluations] == [32, 64]
    assert 0 < evaluations[0].minutes < evaluations[1].minutes
    assert all(0 <= e.score <= 1 for e in evaluations)


def test_an_update_counts_every_epoch_of_forward_and_backward_passes(tmp_path):
    one = update_flops(make_recipe("ppo_slots", tmp_path, envs=2, epochs=1))
    assert update_flops(make_recipe("ppo_slots", tmp_path, envs=2, epochs=10)) == 10 * one
    assert one > update_flops(make_recipe("ppo_mlp", tmp_path, envs=2, epochs=1)) > 0
