"""`Estimates`: the predictor's estimates of the lanes' tasks, asked for, put off and written.

`engine.step` calls no predictor: it returns the slots whose tasks trained without success
(the ready ones), and the shells ask their predictor about those here, in one call per step.
A predictor computed in the engine (`InEngine`, such as `coreenv.WLSEstimates`) writes them in
one compiled call instead; the estimator lives above the simulator and is only called here.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from coreenv.config import EnvConfig
from coreenv.context import reads_context
from coreenv.core import engine as e
from coreenv.core.events import Decisions
from coreenv.core.features import NO_PREDICTOR, OBS_BOUND, QUANTILES, SlotFeature
from coreenv.core.lanes import RECORD_ROW, Lanes
from coreenv.predictor import Predictor, observed_estimates

__all__ = ["Estimates", "InEngine", "defers_estimates", "in_engine"]

_OCCUPIED = int(SlotFeature.OCCUPIED)


class InEngine(Protocol):
    """An estimator the engine runs itself: it writes the estimates of ready slots in place."""

    def estimate_slots(self, ready: np.ndarray, lanes: Lanes, logs: np.ndarray) -> None:
        """Write the estimates of the flat slots ``ready`` of ``lanes`` (``logs``: the store's)."""


def in_engine(predictor: object) -> InEngine | None:
    """What the engine computes for ``predictor`` (its ``in_engine`` attribute), or None."""
    estimator = getattr(predictor, "in_engine", None)
    return estimator if callable(getattr(estimator, "estimate_slots", None)) else None


def defers_estimates(decisions: Decisions, predictor: Predictor | None) -> bool:
    """Whether held steps put their estimates off until the lane decides (`Estimates.defer`).

    In the event form, unless a decision waits on them (``feasibility``) or they are computed in
    the engine (cheap).
    """
    return (
        decisions.held
        and not decisions.feasibility
        and predictor is not None
        and in_engine(predictor) is None
    )


class Estimates:
    """The estimate features of ``lanes``: attached or not, made now, or put off.

    Attributes:
        deferred: (B·K,) int64 per flat slot, the task whose estimates `defer` put off (-1: none).
    """

    def __init__(self, lanes: Lanes) -> None:
        self.lanes = lanes
        self.deferred = np.full(lanes.num_lanes * lanes.num_slots, -1, np.int64)

    def attach(self, attached: bool) -> None:
        """A predictor was attached or detached: occupied slots' estimates restart from none."""
        lanes = self.lanes
        lanes.new_estimate = 0.0 if attached else NO_PREDICTOR
        occupied = lanes.occupied.reshape(-1)
        columns = lanes.estimate_columns
        lanes.table[occupied, columns] = lanes.new_estimate
        lanes.slot_floats[e.EST_REMAINING :, occupied] = 0.0
        tasks = lanes.records[:, :, RECORD_ROW + _OCCUPIED] == 1.0  # not the padding
        row = slice(RECORD_ROW + columns.start, RECORD_ROW + columns.stop)
        lanes.records[tasks, row] = lanes.new_estimate

    def estimate(
        self, ready: np.ndarray, predictor: Predictor, config: EnvConfig, logs: np.ndarray
    ) -> None:
        """Re-estimate the tasks in flat slots ``ready`` with one predictor call.

        A task's prefix is its revealed losses; its budget the batches its deadline still allows.
        A predictor computed `in_engine` is one compiled call over ``logs``, the curve store's
        log-losses, instead.
        """
        lanes = self.lanes
        estimator = in_engine(predictor)
        if estimator is not None:
            estimator.estimate_slots(ready, lanes, logs)
            return
        which = ready // lanes.num_slots
        ints = lanes.slot_ints[:, ready]
        tasks, cursors = ints[e.INDEX].tolist(), ints[e.CURSOR].tolist()
        prefixes = [
            lanes.curves[b][task][: cursor + 1]
            for b, task, cursor in zip(which.tolist(), tasks, cursors)
        ]
        budgets = config.fastest_batches * (ints[e.DEADLINE] - lanes.lane[which, e.T])
        targets = lanes.slot_floats[e.TARGET, ready]
        levels = config.estimate_quantiles
        contexts = lanes.memory.contexts(ready) if reads_context(predictor) else None
        estimates = observed_estimates(predictor, prefixes, targets, budgets, levels, contexts)
        self.record(ready, *estimates)

    def defer(self, ready: np.ndarray) -> None:
        """Put off the estimates slots ``ready`` are due now until their lane decides.

        No one sees a held step's estimates. A held action trains the same tasks every step
        until an event, so a task due in a hold is due again at its last step, where the lane
        decides: `estimate_deferred` then makes the estimates that step gives.
        """
        self.deferred[ready] = self.lanes.slot_ints[e.INDEX, ready]

    def estimate_deferred(
        self, predictor: Predictor, config: EnvConfig, logs: np.ndarray
    ) -> np.ndarray:
        """Make the estimates put off (`defer`) in one call; the lanes that had any.

        Every lane has decided when this is called. A task that has left its slot since is not
        estimated.
        """
        lanes = self.lanes
        flat = np.flatnonzero(self.deferred >= 0)
        there = lanes.occupied.ravel()[flat] & (lanes.slot_ints[e.INDEX, flat] == self.deferred[flat])
        self.deferred[flat] = -1
        flat = flat[there]
        if flat.size:
            self.estimate(flat, predictor, config, logs)
        return np.unique(flat // lanes.num_slots)

    def record(
        self,
        flat: np.ndarray,
        remaining: np.ndarray,
        p_success: np.ndarray,
        quantiles: np.ndarray | None,
    ) -> None:
        """Slots ``flat`` have new predictor estimates (and quantiles, (len(flat), Q)).

        Their features: remaining batches (and quantiles) over the batch scale (B · time_scale),
        at most OBS_BOUND, and P(success) as it is; the raw estimates go to ``slot_floats``.
        """
        table, scale = self.lanes.table, self.lanes.scales[e.BATCH_SCALE]
        table[flat, SlotFeature.EST_REMAINING] = np.minimum(remaining / scale, OBS_BOUND)
        table[flat, SlotFeature.EST_P_SUCCESS] = p_success
        if quantiles is not None:
            levels = slice(QUANTILES, QUANTILES + quantiles.shape[1])
            table[flat, levels] = np.minimum(quantiles / scale, OBS_BOUND)
        self.lanes.slot_floats[e.EST_REMAINING, flat] = remaining
        self.lanes.slot_floats[e.EST_P, flat] = p_success
