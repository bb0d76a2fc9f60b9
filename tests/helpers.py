"""Shared test helpers: hand-made curves and a scripted scenario to put exact tasks in an env."""

from __future__ import annotations

import numpy as np

from coreenv import CoreEnv
from coreenv.core.scenarios import Scenario
from coreenv.core.tasks import TaskDraw
from coreenv.curves import Curve, SyntheticCurves
from coreenv.curves.targets import demand_of

SMALL_CURVES = SyntheticCurves(length=80)  # short curves keep property tests fast


def power_curve(length: int = 50, scale: float = 2.0, exponent: float = 0.5) -> Curve:
    """A noiseless, strictly decreasing power law L(n) = scale (1 + n)^-exponent."""
    n = np.arange(length + 1, dtype=np.float64)
    return Curve(scale * (1.0 + n) ** -exponent, "power")


def task(demand: int, window: int, curve: Curve | None = None) -> TaskDraw:
    """A task whose target is reached after exactly ``demand`` batches."""
    curve = curve or power_curve(max(demand + 5, 20))
    target = float(curve.losses[demand])
    assert demand_of(curve.losses, target) == demand
    return TaskDraw(curve, target, demand, window)


class Scripted(Scenario):
    """Arrivals given as {step: [TaskDraw, ...]}."""

    def __init__(self, env: CoreEnv, schedule: dict[int, list[TaskDraw]]) -> None:
        super().__init__(env.config, env.source)
        self.schedule = schedule

    def reset(self, rng):
        pass

    def arrivals(self, t, rng):
        return list(self.schedule.get(t, []))

    def pending(self, t):
        return any(step >= t for step in self.schedule)

    def step_bound(self):
        return 10_000


def scripted_env(schedule: dict[int, list[TaskDraw]], **overrides) -> CoreEnv:
    """A reset env whose arrivals follow ``schedule``."""
    env = CoreEnv(**overrides)
    env.scenario = Scripted(env, schedule)
    env.reset(seed=0)
    return env


def idle(env: CoreEnv) -> dict[str, int]:
    return dict.fromkeys(env.agents, env.config.num_slots)


def play_checking_matchings(env, scheduler) -> None:
    """Play a reset parallel env to the end, asserting every joint action is a valid matching.

    Valid: no slot chosen twice, every chosen slot occupied, no action flagged invalid.
    """
    observations, infos = env.reset()
    scheduler.reset(env)
    while env.agents:
        actions = scheduler.act(observations, infos)
        chosen = [a for a in actions.values() if a != env.config.num_slots]
        assert len(chosen) == len(set(chosen))
        assert all(env.slot_table().occupied[a] for a in chosen)
        observations, _, _, _, infos = env.step(actions)
        assert not any("invalid_action" in info for info in infos.values())
    assert env.metrics()["conflicts"] == 0
