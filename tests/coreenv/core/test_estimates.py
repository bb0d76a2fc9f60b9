"""Held steps put their estimates off until the lane decides (`Estimates.defer`): every observation
an agent is shown is the one estimating every step shows, bit for bit, for fewer predictor calls."""

import math

import numpy as np
import pytest

import coreenv.shells.batched
from coreenv import BatchedCore, CoreEnv, Decisions, EnvConfig, Estimate, WLSEstimates
from coreenv.core.estimates import defers_estimates
from helpers import SMALL_CURVES


class Counted:
    """A per-task predictor whose answer reads the budget too; it counts the tasks it is asked."""

    def __init__(self):
        self.asked = 0

    def estimate(self, prefix, target, budget):
        self.asked += 1
        remaining = 0.5 * len(prefix) + 10.0 * target
        return Estimate(remaining if len(prefix) % 7 else math.inf, budget / (budget + len(prefix)))


class InContext(Counted):
    """`Counted` moved by how many tasks of the episode have finished (it reads context)."""

    reads_context = True

    def estimate_batch(self, prefixes, targets, budgets, contexts):
        answers = [self.estimate(p, t, b) for p, t, b in zip(prefixes, targets, budgets)]
        shift = np.array([len(context.history) for context in contexts], np.float64)
        remaining = np.array([a.remaining for a in answers]) + shift
        return remaining, np.array([a.p_success for a in answers])


CONFIG = EnvConfig(
    task_set=SMALL_CURVES,
    num_nodes=3,
    num_slots=4,
    arrival_prob=0.4,
    arrival_horizon=60,
    deadline_window=(10, 40),
    min_prefix=2,
)
HISTORY = CONFIG.replace(task_set="id_train", information="history", arrival_prob=0.2)
HELD = Decisions("events", hold=6)
PREDICTORS = [(Counted, CONFIG), (InContext, HISTORY)]


@pytest.fixture
def every_step(monkeypatch):
    """Estimate at every held step, as before deferral (the reference)."""
    monkeypatch.setattr(coreenv.shells.batched, "defers_estimates", lambda *args: False)


def play_batched(predictor, config, seeds=range(6), lanes=3):
    core = BatchedCore(config, lanes, predictor, HELD)
    shown = core.reset(seeds)
    rng = np.random.default_rng(3)
    seen = []
    for _ in range(80):
        actions = rng.integers(0, config.num_slots + 1, (lanes, config.num_nodes))
        step = core.step(actions)
        seen.append((step.obs.copy(), step.final_obs.copy(), step.rewards, step.elapsed))
        seen.append(core.view().estimates.copy())
    return [shown.obs, *seen]


def play_single(predictor, config, seed=4):
    env = CoreEnv(config, predictor=predictor, decisions=HELD)
    observations, _ = env.reset(seed=seed)
    rng = np.random.default_rng(3)
    seen = [observations["node_0"]["observation"]]
    while env.agents:
        actions = {a: int(rng.integers(0, config.num_slots + 1)) for a in env.agents}
        observations, rewards, *_, infos = env.step(actions)
        seen += [observations["node_0"]["observation"], infos["node_0"]["elapsed"]]
        if env.agents:
            seen.append(env.view().estimates.copy())
    return seen


def assert_same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x, tuple):
            assert_same(x, y)
        else:
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("predictor, config", PREDICTORS)
@pytest.mark.parametrize("play", [play_batched, play_single])
def test_deferred_estimates_show_what_every_step_shows(play, predictor, config, request):
    deferred = predictor()
    shown = play(deferred, config)
    request.getfixturevalue("every_step")
    reference = predictor()
    assert_same(shown, play(reference, config))
    assert 0 < deferred.asked < reference.asked  # held steps asked nothing


def test_only_the_event_form_defers_and_not_where_a_decision_needs_estimates():
    predictor = Counted()
    assert defers_estimates(HELD, predictor)
    assert not defers_estimates(Decisions(), predictor)  # every step decides
    assert not defers_estimates(HELD, None)
    assert not defers_estimates(Decisions("events", feasibility=True), predictor)
    assert not defers_estimates(HELD, WLSEstimates())  # computed in the engine
    assert defers_estimates(HELD, InContext())


def test_a_task_that_left_its_slot_while_due_is_not_estimated():
    # tasks finish and are dropped within holds; a slot refilled at once holds another task
    predictor = Counted()
    config = CONFIG.replace(arrival_prob=0.9, deadline_window=(3, 8))
    core = BatchedCore(config, 2, predictor, Decisions("events", hold=8))
    core.reset(range(4))
    rng = np.random.default_rng(0)
    for _ in range(60):
        core.step(rng.integers(0, config.num_slots + 1, (2, config.num_nodes)))
        view = core.view()
        held = view.estimates[..., 0][~view.occupied]  # empty slots show no estimate
        assert not held.any()
    assert not (core.estimates.deferred >= 0).any()  # every put-off estimate was made or dropped
