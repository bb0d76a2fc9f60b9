"""The pure simulator core: one step of design §2's step order over a `State`.

`transition` is a function of (state, resolved actions, the step's arrivals) so that the
environment classes stay thin adapters and the dynamics can be tested on hand-built states. It
draws nothing: an episode's tasks are drawn at reset (`Scenario.draw_episode`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from coreenv.config import EnvConfig
from coreenv.core.features import potential as slot_potential
from coreenv.core.state import State
from coreenv.core.tasks import Task, TaskDraw
from coreenv.predictor import Predictor, observed_estimates

__all__ = ["StepResult", "terminal", "transition"]


class StepResult(NamedTuple):
    """What one step gave the team."""

    reward: float
    """The team reward: successes plus the shaping term (design §2)."""
    successes: int
    """Tasks that reached their target this step (the unshaped count)."""


def transition(
    state: State,
    slots: list[int],
    config: EnvConfig,
    arrivals: Sequence[TaskDraw],
    predictor: Predictor | None = None,
    conflicts: int = 0,
) -> StepResult:
    """Advance ``state`` (in place) by one step and return the team's reward and successes.

    Args:
        state: the state at decision time t.
        slots: the slot each node trains, -1 for idle; already a feasible matching.
        config: the environment settings.
        arrivals: the tasks arriving during this step (they enter at t + 1), in order.
        predictor: fills the estimate features of tasks whose prefix changed, if given.
        conflicts: node actions the caller turned into idling this step (for the metrics).
    """
    counters = state.counters
    t = state.t
    # -- statistics at the decision point
    counters.steps += 1
    counters.full_queue_steps += state.num_occupied == len(state.tasks)
    counters.waiting_sum += len(state.waiting)
    counters.conflicts += conflicts

    # -- steps 2-3: served tasks train, reveal losses; those reaching the target succeed and leave
    reached, trained = state.train(slots, config.batches_per_step)
    successes = len(reached)
    counters.busy_node_steps += successes + len(trained)
    for j in reached:
        state.clear_slot(j)
    counters.successes += successes

    # -- step 4: every unfinished task whose deadline has come fails and leaves
    if state.next_expiry <= t + 1:
        for j in np.flatnonzero(state.deadline <= t + 1).tolist():
            state.clear_slot(j)
            counters.failures += 1
    if state.waiting and min(task.deadline for task in state.waiting) <= t + 1:
        alive = [task for task in state.waiting if task.deadline > t + 1]
        counters.failures += len(state.waiting) - len(alive)
        state.waiting = alive

    # -- step 5: arrivals join the waiting queue
    for draw in arrivals:
        task = Task(
            state.next_uid, draw.curve, draw.target, draw.demand, t + 1, t + 1 + draw.window
        )
        state.next_uid += 1
        state.waiting.append(task)
        counters.arrivals += 1
        feasible = task.feasible(config.batches_per_step)
        if feasible is None:
            counters.unknown_demand += 1
        else:
            counters.feasible += feasible

    # -- step 6: waiting tasks fill free slots; the clock moves on
    state.t = t + 1
    state.time_left -= state.slot_scale
    if state.waiting and state.num_occupied < len(state.tasks):
        _admit(state, config.admission)

    if predictor is not None:
        _update_estimates(state, [j for j in trained if state.filled[j]], config, predictor)
    if config.shaping_beta == 0.0:
        return StepResult(float(successes), successes)
    potential = slot_potential(state.progress)
    reward = successes + config.shaping_beta * (potential - state.potential)
    state.potential = potential
    return StepResult(reward, successes)


def terminal(
    t: int | np.ndarray, in_system: int | np.ndarray, arrival_end: int
) -> bool | np.ndarray:
    """The episode ends once no task can arrive any more (``t >= arrival_end``) and none remains.

    Both engines' rule: ``t`` and ``in_system`` (tasks in the slots or waiting) are one episode's
    ints, or (B,) arrays of lanes.
    """
    return (t >= arrival_end) & (in_system == 0)


def _admit(state: State, rule: str) -> None:
    """Move waiting tasks into the free slots, in arrival or deadline order."""
    free = np.flatnonzero(~state.occupied)
    queue = state.waiting
    if rule == "edf":
        queue = sorted(queue, key=lambda task: (task.deadline, task.arrival))
    for j, task in zip(free, queue):
        state.fill_slot(int(j), task)
    admitted = {task.uid for task in queue[: free.size]}
    state.waiting = [task for task in state.waiting if task.uid not in admitted]


def _update_estimates(state: State, slots: list, config: EnvConfig, predictor: Predictor) -> None:
    """Re-estimate the ready tasks whose prefix changed this step (design §2 predictor hook)."""
    ready = [j for j in slots if state.cursor[j] >= config.min_prefix]
    if not ready:
        return
    prefixes = [state.tasks[j].curve.losses[: state.cursor[j] + 1] for j in ready]
    targets = state.target[ready]
    budgets = config.batches_per_step * (state.deadline[ready] - state.t)
    levels = config.estimate_quantiles
    estimates = observed_estimates(predictor, prefixes, targets, budgets, levels)
    state.record_estimates(ready, *estimates)
