"""evaluate(): averages design §2 metrics over seeded episodes, reproducibly; a scheduler with a
batched form plays them in lockstep with the same rows."""

import math

import numpy as np
import pytest

from coreenv import CoreEnv, Decisions, EnvConfig
from coreenv.core.metrics import METRIC_KEYS
from mara_agents import evaluate
from mara_agents.evaluation import decisions_of, run_episode, run_episodes
from mara_agents.schedulers import EDF, FIFO, Oracle, Scheduler
from mara_agents.schedulers.base import acts_in_batches


def test_evaluate_returns_every_metric_and_is_reproducible():
    first = evaluate(FIFO(), episodes=2, seed=5, arrival_horizon=300)
    assert set(METRIC_KEYS) <= set(first) and first["episodes"] == 2
    assert 0.0 <= first["completion_rate"] <= first["feasibility_bound"] <= 1.0
    assert 0.0 <= first["utilisation"] <= 1.0 and math.isfinite(first["steps_to_ready"])
    assert evaluate(FIFO(), episodes=2, seed=5, arrival_horizon=300) == first


def test_oracle_beats_fifo_on_the_default_regime():
    fifo = evaluate(FIFO(), episodes=4, seed=0)
    oracle = evaluate(Oracle(), episodes=4, seed=0)
    assert oracle["completion_rate"] > fifo["completion_rate"]


@pytest.mark.parametrize(("episodes", "seed"), [(0, 0), (2.5, 0), (2, -1)])
def test_bad_arguments_are_refused(episodes, seed):
    with pytest.raises(ValueError):
        evaluate(FIFO(), episodes=episodes, seed=seed)


class FirstSlots(Scheduler):
    """Serves the lowest-numbered occupied slots, from the observation arrays alone."""

    observation_predictor = None

    def act_view(self, view):
        k = view.action_mask.shape[1] - 1
        actions = np.full((view.num_episodes, view.obs.shape[1]), k)
        for e, mask in enumerate(view.action_mask):
            slots = np.flatnonzero(mask[:k])[: view.obs.shape[1]]
            actions[e, : len(slots)] = slots
        return actions


class OnlyAct(Scheduler):
    """A user's scheduler of the original interface: ``act`` over the env's dicts only."""

    observation_predictor = None

    def act(self, observations, infos):
        return {agent: len(obs["action_mask"]) - 1 for agent, obs in observations.items()}


def test_a_scheduler_with_only_act_plays_one_episode_after_another():
    assert not acts_in_batches(OnlyAct()) and acts_in_batches(FirstSlots())
    assert acts_in_batches(FIFO())  # every shipped scheduler acts on views
    rows = run_episodes(OnlyAct(), [(EnvConfig(arrival_horizon=100), seed) for seed in (1, 2)])
    assert [row["completion_rate"] for row in rows] == [0.0, 0.0]


def test_a_scheduler_with_neither_method_says_so():
    env = CoreEnv(arrival_horizon=50)
    observations, infos = env.reset(seed=0)
    scheduler = Scheduler()
    scheduler.reset(env)
    with pytest.raises(NotImplementedError, match="neither act"):
        scheduler.act(observations, infos)


def test_lockstep_rows_equal_one_episode_after_another_across_configs():
    """Two configs (loads) in one lockstep run: one core each, one act_view per step for all."""
    configs = [EnvConfig(arrival_prob=p, arrival_horizon=200) for p in (0.05, 0.1)]
    episodes = [(config, seed) for config in configs for seed in (3, 4, 5)]
    batched = FirstSlots()
    batched.act = None  # never called in lockstep
    np.testing.assert_equal(
        run_episodes(batched, episodes),
        [run_episode(FirstSlots(), CoreEnv(c, predictor=None), s) for c, s in episodes],
    )


def test_mara_in_lockstep_equals_mara_one_episode_at_a_time():
    """Holds because FM's futures and MAT's outputs do not depend on the batch they are in."""
    pytest.importorskip("torch")
    from mara_agents.schedulers.mara import MARA

    config = EnvConfig(task_set="id", arrival_prob=0.1, arrival_horizon=120, node_speeds="uniform")
    episodes = [(config, seed) for seed in (0, 1, 2)]
    mara = MARA.pretrained()
    env = CoreEnv(config, predictor=mara.observation_predictor, decisions=mara.decisions)
    alone = [run_episode(mara, env, seed) for _, seed in episodes]
    np.testing.assert_equal(run_episodes(MARA.pretrained(), episodes), alone)


class CountingEDF(EDF):
    """EDF counting the episode-decisions it is asked for."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def act_view(self, view):
        self.calls += view.num_episodes
        return super().act_view(view)


class HeldEDF(CountingEDF):
    """EDF declaring the event form: runners hold its decisions between events."""

    decisions = Decisions(at="events", hold=5)


def test_a_scheduler_declaring_events_plays_them_alone_and_in_lockstep_alike():
    """Lockstep play in the event form gives the rows of `CoreEnv`'s own event form."""
    episodes = [(EnvConfig(arrival_prob=0.06), 7 + i) for i in range(3)]
    lockstep_edf = HeldEDF()
    lockstep = run_episodes(lockstep_edf, episodes)
    alone = [
        run_episode(HeldEDF(), CoreEnv(c, decisions=HeldEDF.decisions), s) for c, s in episodes
    ]
    assert lockstep == alone
    every_step = CountingEDF()
    plain = run_episodes(every_step, episodes)
    assert lockstep_edf.calls < every_step.calls / 2  # decisions far fewer than steps
    assert lockstep == plain  # EDF's choice changes only when tasks come or go: holding keeps it


def test_a_form_named_by_a_string_is_a_form_and_a_mismatched_env_is_refused():
    class Named(EDF):
        decisions = "events"

    episodes = [(EnvConfig(arrival_prob=0.06), 7)]
    alone = run_episode(Named(), CoreEnv(episodes[0][0], decisions="events"), 7)
    assert run_episodes(Named(), episodes) == [alone]  # lockstep reads the name too
    assert decisions_of(Named()) == Decisions(at="events")
    with pytest.raises(ValueError, match="plays in Decisions.*the env decides in"):
        run_episode(Named(), CoreEnv(), 0)
