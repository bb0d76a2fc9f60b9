"""Episodes told by their actions (`mara_agents.replay`): the log is compact and exact, and a replay
gives the played episode's metrics again."""

import numpy as np
import pytest

from coreenv import Decisions, EnvConfig
from mara_agents.evaluation import run_episodes
from mara_agents.replay import decode_actions, encode_actions, episode_digest, replay
from mara_agents.schedulers import FIFO, RandomScheduler

EPISODES = [(EnvConfig(task_set="synthetic", arrival_prob=0.06), seed) for seed in (3, 4)]


def test_an_action_log_decodes_to_the_actions_it_encodes():
    actions = np.array([[0, 1, 8, 9], [2, 2, 8, 8]])
    log = encode_actions(list(actions), num_nodes=4)
    assert log["dtype"] == "uint8" and log["shape"] == [2, 4]
    assert (decode_actions(log) == actions).all()


def test_a_log_that_is_not_one_says_so():
    with pytest.raises(ValueError, match="not an action log"):
        decode_actions({"dtype": "uint8", "shape": [3, 4], "data": "AAAA"})


@pytest.mark.parametrize("scheduler", [FIFO(), RandomScheduler(seed=2)], ids=["fifo", "random"])
def test_replaying_a_logged_episode_gives_its_metrics_bit_for_bit(scheduler):
    rows = run_episodes(scheduler, EPISODES, log=True)
    for (config, seed), row in zip(EPISODES, rows):
        actions = decode_actions(row["actions"])
        replayed = replay(config, seed, Decisions(**row["decisions"]), actions)
        assert all(replayed[k] == row[k] or np.isnan(row[k]) for k in replayed)


def test_a_log_cut_short_or_run_long_does_not_replay():
    (config, seed), row = EPISODES[0], run_episodes(FIFO(), EPISODES[:1], log=True)[0]
    actions = decode_actions(row["actions"])
    with pytest.raises(ValueError, match="end before the episode"):
        replay(config, seed, Decisions(), actions[:-1])
    with pytest.raises(ValueError, match="ended at decision"):
        replay(config, seed, Decisions(), np.vstack([actions, actions[-1:]]))


def test_a_decision_form_that_waits_on_estimates_is_not_replayed():
    with pytest.raises(ValueError, match="feasibility"):
        replay(*EPISODES[0], Decisions("events", feasibility=True), np.zeros((1, 4), np.int64))


def test_the_digest_names_the_episode_a_config_and_seed_draw():
    config, seed = EPISODES[0]
    assert episode_digest(config, seed) == episode_digest(config, seed)
    assert episode_digest(config, seed) != episode_digest(config, seed + 1)
    assert episode_digest(config, seed) != episode_digest(EnvConfig(task_set="synthetic"), seed)
