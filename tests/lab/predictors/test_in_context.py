"""`AnalogPredictor` reads each task's context: it answers as its base until runs of the task's
kind are known (reference runs, or tasks its episode finished), then moves towards the nearest."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coreenv import BatchedCore, Description, EnvConfig, Estimate, FinishedTask, TaskContext
from coreenv.curves import CurveBank, named_task_set
from coreenv_lab.predictors.analogs import AnalogConfig
from coreenv_lab.predictors.in_context import AnalogPredictor
from mara_agents.predictors import WLSPredictor
from mara_agents.schedulers import LARA

CURVE = 2.0 * (1.0 + np.arange(400)) ** -0.5  # losses[n] after n batches
KIND = Description({"family": "mlp-digits", "optimizer": "adam"})


class Constant:
    """Always the same estimate."""

    def __init__(self, remaining: float) -> None:
        self.remaining = remaining

    def estimate(self, prefix, target, budget):
        return Estimate(self.remaining, 0.25)


def finished(
    losses: np.ndarray, description: Description = KIND, target: float = 0.0
) -> FinishedTask:
    return FinishedTask(description, losses, target, True, 0, 400, len(losses))


def ask(predictor, context: TaskContext, prefix: int = 50, target_batch: int = 200) -> float:
    """The predictor's remaining batches for CURVE's first ``prefix`` batches, target at 200."""
    target = float(CURVE[target_batch])
    remaining, _ = predictor.estimate_batch(
        [CURVE[: prefix + 1]], np.array([target]), np.array([500]), [context]
    )
    return float(remaining[0])


def test_without_a_context_it_answers_as_its_base():
    predictor = AnalogPredictor(Constant(100.0), named_task_set("id"))
    assert ask(predictor, TaskContext(Description())) == 100.0
    assert predictor.estimate(CURVE[:51], float(CURVE[200]), 500) == Estimate(100.0, 0.25)
    assert predictor.fallbacks == predictor.queries == 2


def test_a_finished_task_of_the_kind_moves_the_answer_to_its_crossing():
    predictor = AnalogPredictor(Constant(100.0))
    analog = finished(1.5 * CURVE[:300])  # the same shape, scaled: it crosses at batch 200
    answer = ask(predictor, TaskContext(KIND, (analog,)))
    assert answer == math.sqrt(100.0 * 150.0)  # geometric mean of the base and 200 - 50
    assert predictor.from_history == 1


def test_a_finished_task_of_another_kind_is_no_analog():
    predictor = AnalogPredictor(Constant(100.0))
    other = finished(1.5 * CURVE[:300], Description({"family": "cnn-digits"}))
    assert ask(predictor, TaskContext(KIND, (other,))) == 100.0


def test_a_task_revealed_short_of_the_target_bounds_the_answer_from_below():
    analog = finished(1.5 * CURVE[:181])  # revealed through batch 180: at least 131 more
    assert ask(AnalogPredictor(Constant(100.0)), TaskContext(KIND, (analog,))) == 131.0
    assert ask(AnalogPredictor(Constant(300.0)), TaskContext(KIND, (analog,))) == 300.0


def test_the_kind_falls_back_to_the_family_where_the_full_kind_has_no_run():
    sgd = finished(1.5 * CURVE[:300], Description({"family": "mlp-digits", "optimizer": "sgd"}))
    answer = ask(AnalogPredictor(Constant(100.0)), TaskContext(KIND, (sgd,)))
    assert answer == math.sqrt(100.0 * 150.0)
    family_only = AnalogConfig(kind_fields=("optimizer",))
    assert (
        ask(AnalogPredictor(Constant(100.0), config=family_only), TaskContext(KIND, (sgd,)))
        == 100.0
    )


def test_reference_runs_are_read_by_their_descriptions():
    bank = named_task_set("id")
    row = 3
    losses = bank.curve(row).losses
    prefix, target = losses[:61], float(losses[61:400].min()) * (1 + 1e-9)  # clear of rounding
    context = TaskContext(bank.description(row))
    other = int(np.flatnonzero(bank.family != bank.family[row])[0])
    rows = [row, other]  # a scaled copy of the task's run, and a run of another kind
    scaled = CurveBank(bank.losses[rows] * 1.25, bank.family[rows], bank.config[rows])
    predictor = AnalogPredictor(Constant(100.0), scaled)
    remaining, _ = predictor.estimate_batch(
        [prefix], np.array([target]), np.array([500]), [context]
    )
    crossing = float(np.flatnonzero(losses[61:] <= target)[0] + 1)
    assert remaining[0] == pytest.approx(math.sqrt(100.0 * crossing), rel=1e-12)


def test_in_the_environment_it_reads_the_episode_s_history():
    wls = AnalogPredictor(WLSPredictor())
    config = EnvConfig(information="history", task_set="id", arrival_horizon=300, arrival_prob=0.1)
    core = BatchedCore(config, num_envs=2, predictor=wls)
    core.reset([1, 2])
    lara = LARA()
    for _ in range(300):
        core.step(lara.act_view(core.view()))
    assert wls.queries > wls.fallbacks and wls.from_history > 0


def test_without_the_information_model_the_environment_shows_the_base_s_estimates():
    config = EnvConfig(task_set="id", arrival_horizon=200, arrival_prob=0.1)
    cores = [BatchedCore(config, 1, p) for p in (WLSPredictor(), AnalogPredictor(WLSPredictor()))]
    lara = LARA()
    for core in cores:
        core.reset([7])
    for _ in range(200):
        views = [core.view() for core in cores]
        np.testing.assert_array_equal(views[0].obs, views[1].obs)
        actions = lara.act_view(views[0])
        for core in cores:
            core.step(actions)


def test_a_task_s_own_run_in_the_reference_is_no_analog():
    bank = named_task_set("id")
    row = 3
    losses = bank.curve(row).losses
    prefix, target = losses[:61], float(losses[61:400].min())
    context = TaskContext(bank.description(row))
    own = bank.subset([row])
    predictor = AnalogPredictor(Constant(100.0), own)
    remaining, _ = predictor.estimate_batch(
        [prefix], np.array([target]), np.array([500]), [context]
    )
    assert remaining[0] == 100.0 and predictor.fallbacks == 1
