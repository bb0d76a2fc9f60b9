"""design §2 step order on hand-made tasks: training, success, deadlines, arrivals, admission."""

import math

import numpy as np
import pytest

from coreenv import InvalidActionError, SlotFeature
from coreenv.core.features import NO_PREDICTOR
from helpers import idle, power_curve, scripted_env, task

K = 3  # slots in these small envs


def serve(env, *slots):
    """Node i trains slots[i]; the other nodes idle."""
    actions = idle(env)
    for agent, slot in zip(env.possible_agents, slots):
        actions[agent] = slot
    return env.step(actions)


def make(schedule, **overrides):
    base = dict(num_nodes=2, num_slots=K, min_prefix=2, deadline_window=(10, 10))
    return scripted_env(schedule, **(base | overrides))


def test_arrival_enters_next_step_and_fills_a_slot():
    env = make({0: [task(demand=3, window=10)]})
    assert not env.view().occupied.any()
    env.step(idle(env))  # arrives during step 0
    view = env.view()
    assert view.occupied[0].tolist() == [True, False, False]
    assert (view.arrival[0, 0], view.deadline[0, 0], view.batches[0, 0]) == (1, 11, 0)


def test_served_task_succeeds_after_exactly_its_demand():
    env = make({0: [task(demand=3, window=10)]})
    env.step(idle(env))
    for step in range(3):
        _, rewards, *_, infos = serve(env, 0)
        expected = 1.0 if step == 2 else 0.0
        assert rewards["node_0"] == expected
        assert infos["node_0"]["successes"] == expected
    assert not env.agents  # it left: no task remains, so the episode is over
    assert env.metrics()["successes"] == 1


def test_one_node_per_task_the_later_node_idles():
    env = make({0: [task(demand=5, window=10)]})
    env.step(idle(env))
    _, _, _, _, infos = serve(env, 0, 0)
    assert env.view().batches[0, 0] == 1
    assert "already taken by node_0" in infos["node_1"]["invalid_action"]
    assert "invalid_action" not in infos["node_0"]
    assert env.metrics()["conflicts"] == 1


def test_empty_slot_and_out_of_range_actions_idle():
    env = make({0: [task(demand=5, window=10)]})
    env.step(idle(env))
    _, _, _, _, infos = env.step({"node_0": 2, "node_1": 99})
    assert "slot 2 is empty" in infos["node_0"]["invalid_action"]
    assert "not an int in [0, 3]" in infos["node_1"]["invalid_action"]
    _, _, _, _, infos = env.step({"node_0": "one", "node_1": 1.5})
    assert set(infos["node_0"]) == {"successes", "invalid_action"}
    assert env.view().batches[0, 0] == 0


def test_raise_policy_names_the_agents():
    env = make({0: [task(demand=5, window=10)]}, invalid_action="raise")
    env.step(idle(env))
    with pytest.raises(InvalidActionError, match="node_1: slot 0 is already taken"):
        serve(env, 0, 0)


def test_unknown_agent_name_is_refused():
    env = make({0: [task(demand=5, window=10)]})
    with pytest.raises(ValueError, match="unknown agents"):
        env.step({"node_7": 0})


def test_missing_agents_idle():
    env = make({0: [task(demand=5, window=10)]})
    env.step({})
    env.step({"node_1": 0})
    assert env.view().batches[0, 0] == 1


def test_deadline_failure_frees_the_slot_for_a_waiting_task():
    env = make({0: [task(5, window=3), task(5, window=10), task(5, window=10), task(2, window=10)]})
    env.step(idle(env))  # 4 arrive, 3 slots: the fourth waits
    assert env.view().uid[0].tolist() == [0, 1, 2]
    env.step(idle(env))
    env.step(idle(env))  # t + 1 = 3 < 4 = deadline of task 0
    assert env.view().uid[0, 0] == 0
    env.step(idle(env))  # t + 1 = 4: task 0 fails, task 3 takes its slot
    assert env.view().uid[0].tolist() == [3, 1, 2]
    assert env.metrics()["failures"] == 1


def test_waiting_tasks_fail_at_their_deadline_too():
    env = make({0: [task(5, 10), task(5, 10), task(5, 10), task(5, window=2)]})
    env.step(idle(env))
    env.step(idle(env))
    env.step(idle(env))
    metrics = env.metrics()
    assert metrics["failures"] == 1 and metrics["arrivals"] == 4


@pytest.mark.parametrize(("rule", "admitted"), [("fifo", 3), ("edf", 4)])
def test_admission_rule_picks_who_takes_a_freed_slot(rule, admitted):
    # task 0 fails at t = 6 and frees one slot; tasks 3 (deadline 34) and 4 (deadline 24) wait
    schedule = {0: [task(5, 5)], 1: [task(5, 25)], 2: [task(5, 25)], 3: [task(5, 30), task(5, 20)]}
    env = make(schedule, admission=rule)
    for _ in range(6):
        env.step(idle(env))
    assert env.view().uid[0].tolist() == [admitted, 1, 2]


def test_batches_per_step_stops_at_the_target():
    env = make({0: [task(demand=5, window=10)]}, batches_per_step=2)
    env.step(idle(env))
    serve(env, 0)
    serve(env, 0)
    assert env.view().batches[0, 0] == 4
    _, rewards, *_ = serve(env, 0)  # batches 5 and 6 would be trained; the target is hit at 5
    assert rewards["node_0"] == 1.0


def test_readiness_and_steps_to_ready():
    env = make({0: [task(demand=8, window=20)]}, min_prefix=3)
    env.step(idle(env))  # arrives at t = 1
    env.step(idle(env))  # waits one step
    for _ in range(3):
        obs, *_ = serve(env, 0)
    block = obs["node_0"]["observation"][2 + 3 :][: len(SlotFeature)]
    assert block[SlotFeature.READY] == 1.0
    assert env.metrics()["steps_to_ready"] == 4  # t = 5 minus arrival 1


def test_slot_features_follow_the_formulas():
    curve = power_curve(60)
    draw = task(demand=40, window=30, curve=curve)
    env = make({0: [draw]})
    env.step(idle(env))
    for _ in range(6):
        obs, *_ = serve(env, 0)
    m = env.config.num_nodes
    vector = obs["node_1"]["observation"]
    assert vector[:m].tolist() == [0.0, 1.0]
    scale = env.config.time_scale
    assert vector[m] == pytest.approx(7 / env.config.arrival_horizon)
    block = vector[m + 3 : m + 3 + len(SlotFeature)]
    l0, loss, eps = curve.losses[0], curve.losses[6], draw.target
    expected = {
        SlotFeature.OCCUPIED: 1.0,
        SlotFeature.LOG_LOSS: math.log(loss / l0),
        SlotFeature.LOG_TARGET: math.log(eps / l0),
        SlotFeature.TIME_LEFT: (31 - 7) / scale,
        SlotFeature.BATCHES: 6 / scale,
        SlotFeature.PROGRESS: math.log(l0 / loss) / math.log(l0 / eps),
        SlotFeature.READY: 1.0,
        SlotFeature.EST_REMAINING: NO_PREDICTOR,  # no predictor attached: flagged, not zero
        SlotFeature.EST_P_SUCCESS: NO_PREDICTOR,
    }
    for feature, value in expected.items():
        assert block[feature] == pytest.approx(value, rel=1e-5, abs=1e-6), feature.name
    assert not np.any(vector[m + 3 + len(SlotFeature) :])  # empty slots are zero


def test_shaped_reward_is_beta_times_potential_change():
    curve = power_curve(60)
    draw = task(demand=40, window=30, curve=curve)
    env = make({0: [draw]}, shaping_beta=0.5)
    env.step(idle(env))
    _, rewards, *_ = serve(env, 0)
    l0, eps = curve.losses[0], draw.target
    q1 = math.log(l0 / curve.losses[1]) / math.log(l0 / eps)
    assert rewards["node_0"] == pytest.approx(0.5 * q1)


def test_episode_terminates_once_arrivals_end_and_the_system_is_empty():
    env = make({0: [task(demand=2, window=10)]})
    env.step(idle(env))
    serve(env, 0)
    _, _, terminations, truncations, infos = serve(env, 0)
    assert all(terminations.values()) and not any(truncations.values())
    assert env.agents == []
    assert infos["node_0"]["metrics"]["completion_rate"] == 1.0
    with pytest.raises(RuntimeError, match="reset"):
        env.step({})


def test_max_steps_truncates():
    env = make({0: [task(demand=5, window=10)]}, max_steps=3)
    for _ in range(2):
        _, _, _, truncations, _ = env.step(idle(env))
        assert not any(truncations.values())
    _, _, terminations, truncations, _ = env.step(idle(env))
    assert all(truncations.values()) and not any(terminations.values())
