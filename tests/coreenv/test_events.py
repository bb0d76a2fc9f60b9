"""Decision events: a lane decides when its slot table changes in kind, or after ``hold`` steps."""

import numpy as np
import pytest

from coreenv import CoreEnv, DecisionEvents
from coreenv.core.features import SlotFeature, slot_width

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
