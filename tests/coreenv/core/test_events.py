"""Decisions at events: the rule of when a lane decides, and the environment's event form."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coreenv import ConfigError, CoreEnv, Decisions
from coreenv.core.events import DecisionEvents
from coreenv.core.events import make_decisions
from coreenv.core.features import SlotFeature, slot_width
from helpers import SMALL_CURVES, env_settings

NODES, SLOTS, WIDTH = 2, 3, len(SlotFeature)


def observation(lanes=1):
    """(lanes, M, D) observations whose slot tables are all empty."""
    return np.zeros((lanes, NODES, NODES + 3 + SLOTS * WIDTH), np.float32)


def set_slot(obs, lane, slot, feature, value):
    obs[lane, :, NODES + 3 + slot * WIDTH + feature] = value


def events(hold=4, feasibility=False):
    return DecisionEvents(NODES, WIDTH, hold=hold, feasibility=feasibility)


def test_the_first_step_decides_then_a_quiet_table_holds_for_hold_steps():
    rule, obs = events(hold=4), observation()
    due = [bool(rule.due(obs)[0]) for _ in range(9)]
    assert due == [True, False, False, False, True, False, False, False, True]


@pytest.mark.parametrize(
    ("feature", "before", "after"),
    [
        (SlotFeature.OCCUPIED, 0.0, 1.0),  # a task enters
        (SlotFeature.OCCUPIED, 1.0, 0.0),  # a task leaves
        (SlotFeature.READY, 0.0, 1.0),  # a task becomes ready
        (SlotFeature.LOG_TARGET, -1.0, -2.0),  # another task in the slot
        (SlotFeature.BATCHES, 0.5, 0.0),  # another task in the slot, same target
    ],
)
def test_a_change_of_kind_in_the_table_decides_at_once(feature, before, after):
    rule, obs = events(hold=100), observation(lanes=2)
    set_slot(obs, 0, 1, feature, before)
    set_slot(obs, 1, 1, feature, before)
    rule.due(obs)
    set_slot(obs, 0, 1, feature, after)  # lane 0 changes, lane 1 does not
    np.testing.assert_array_equal(rule.due(obs), [True, False])


def test_time_passing_and_training_do_not_decide():
    rule, obs = events(hold=100), observation()
    set_slot(obs, 0, 0, SlotFeature.OCCUPIED, 1.0)
    rule.due(obs)
    set_slot(obs, 0, 0, SlotFeature.TIME_LEFT, 0.3)
    set_slot(obs, 0, 0, SlotFeature.BATCHES, 0.1)  # more batches: the same task trained
    set_slot(obs, 0, 0, SlotFeature.LOG_LOSS, -0.5)
    assert not rule.due(obs)[0]


def test_feasibility_crossing_one_half_decides_only_when_asked():
    for feasibility, expected in ((False, False), (True, True)):
        rule, obs = events(hold=100, feasibility=feasibility), observation()
        set_slot(obs, 0, 2, SlotFeature.EST_P_SUCCESS, 0.4)
        rule.due(obs)
        set_slot(obs, 0, 2, SlotFeature.EST_P_SUCCESS, 0.6)
        assert bool(rule.due(obs)[0]) is expected


def test_a_real_episode_decides_whenever_its_occupied_slots_change():
    env = CoreEnv(num_nodes=NODES, num_slots=SLOTS, arrival_prob=0.3, arrival_horizon=60)
    rule = DecisionEvents(NODES, slot_width(env.config), hold=1000, feasibility=False)
    observations, _ = env.reset(seed=0)
    last = None
    while env.agents:
        occupied = env.view().occupied[0]
        nodes = np.stack([observations[agent]["observation"] for agent in env.agents])
        due = rule.due(nodes[None])[0]
        if last is not None and not np.array_equal(occupied, last):
            assert due
        last = occupied
        observations, *_ = env.step(dict.fromkeys(env.agents, 0))


def test_hold_must_be_a_positive_int():
    with pytest.raises(ValueError, match="hold must be an int >= 1"):
        DecisionEvents(NODES, WIDTH, hold=0, feasibility=False)


# -- the environment's event form -------------------------------------------------------------

EVENT_ENV = dict(
    num_nodes=2,
    num_slots=3,
    arrival_prob=0.3,
    arrival_horizon=60,
    deadline_window=(10, 40),
    task_set=SMALL_CURVES,
)


def test_decisions_are_checked_and_named():
    assert make_decisions(None) == Decisions() and not Decisions().held
    assert make_decisions("events") == Decisions(at="events")
    with pytest.raises(ConfigError, match=r"Decisions.at must be one of \('step', 'events'\)"):
        Decisions(at="sometimes")
    with pytest.raises(ConfigError, match="Decisions.hold must be an int >= 1 step, got 0"):
        Decisions(at="events", hold=0)
    with pytest.raises(ConfigError, match="Decisions.feasibility must be a bool"):
        Decisions(at="events", feasibility="yes")
    with pytest.raises(ConfigError, match="decisions must be a Decisions"):
        CoreEnv(decisions=3)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    settings_=env_settings(nodes=3, slots=4, horizon=50, window=30),
    seed=st.integers(0, 10_000),
    hold=st.integers(1, 12),
    action_seed=st.integers(0, 1_000),
)
def test_the_event_form_plays_exactly_the_held_actions_step_by_step(
    settings_, seed, hold, action_seed
):
    """Each event-form step equals its actions repeated ``elapsed`` times in the step form."""
    config = {**settings_, "task_set": SMALL_CURVES}
    held = CoreEnv(decisions=Decisions(at="events", hold=hold), **config)
    plain = CoreEnv(**config)
    rule = DecisionEvents(held.config.num_nodes, slot_width(held.config), hold, False)
    agents, k = held.possible_agents, held.config.num_slots
    rng = np.random.default_rng(action_seed)
    obs_held, _ = held.reset(seed=seed)
    obs_plain, _ = plain.reset(seed=seed)
    rule.due(np.stack([obs_plain[a]["observation"] for a in agents])[None])
    while held.agents:
        for agent in agents:
            np.testing.assert_array_equal(
                obs_held[agent]["observation"], obs_plain[agent]["observation"]
            )
        actions = dict(zip(agents, rng.integers(-1, k + 2, len(agents)).tolist()))
        obs_held, rewards, terms, truncs, infos = held.step(actions)
        reward, successes = 0.0, 0
        for step in range(infos[agents[0]]["elapsed"]):
            obs_plain, plain_rewards, plain_terms, plain_truncs, plain_infos = plain.step(actions)
            reward += plain_rewards[agents[0]]
            successes += plain_infos[agents[0]]["successes"]
            ended = plain_terms[agents[0]] or plain_truncs[agents[0]]
            nodes = np.stack([obs_plain[a]["observation"] for a in agents])
            due = bool(rule.due(nodes[None])[0])
            last = step == infos[agents[0]]["elapsed"] - 1
            assert (due or ended) == last  # held exactly until an event, the hold or the end
        assert rewards[agents[0]] == reward and infos[agents[0]]["successes"] == successes
        assert (terms[agents[0]], truncs[agents[0]]) == (
            plain_terms[agents[0]],
            plain_truncs[agents[0]],
        )
    np.testing.assert_equal(held.metrics(), plain.metrics())  # NaN where nothing got ready


def test_the_event_form_decides_far_less_often_and_says_how_long_each_decision_lasted():
    held = CoreEnv(decisions="events", **EVENT_ENV)
    held.reset(seed=4)
    decisions = steps = 0
    while held.agents:
        _, _, _, _, infos = held.step(dict.fromkeys(held.agents, 0))
        assert all(info["elapsed"] == infos["node_0"]["elapsed"] for info in infos.values())
        assert 1 <= infos["node_0"]["elapsed"] <= 8
        decisions, steps = decisions + 1, steps + infos["node_0"]["elapsed"]
    assert steps == held.t and decisions < steps / 2


def test_the_step_form_is_the_default_and_its_infos_are_unchanged():
    env = CoreEnv(**EVENT_ENV)
    assert env.decisions == Decisions()
    env.reset(seed=1)
    _, _, _, _, infos = env.step({})
    assert "elapsed" not in infos["node_0"] and env.t == 1
