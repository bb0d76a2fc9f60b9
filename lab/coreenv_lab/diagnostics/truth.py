"""Diagnostics that plan on the hidden truth with errors of a chosen size.

They price estimation error in completion (docs/mara.md;
`studies/value_of_information/value_of_information.py`). Like the oracle they read a clairvoyant
view; they are not realisable methods.

Each task of a seeded episode gets one error factor ``exp(σ z)``, ``z ~ N(0, 1)`` drawn from the
diagnostic's seed, the episode's seed and the task's number, so its estimates are off by the same
factor all its life, as a predictor biased for that task would be, and an episode replays exactly.
`TruthLARA` plans on that one estimate; `TruthHOP` also knows how unsure it is: its samples
spread by the same σ around the estimate, as a calibrated predictor's would.
"""

from __future__ import annotations

import math

import numpy as np

from coreenv import SchedulerView
from mara_agents.checks import check
from mara_agents.predictors import WLSPredictor
from mara_agents.schedulers.hop import HOP, HOPConfig
from mara_agents.schedulers.lara import LARA
from mara_agents.schedulers.oracle import true_remaining

__all__ = ["TaskErrors", "TruthHOP", "TruthLARA"]


class TaskErrors:
    """Each task's error factor ``exp(σ z)`` and ``count`` draws ``exp(σ (z + ε))`` around it."""

    def __init__(self, noise: float, seed: int) -> None:
        check(noise, "a number >= 0", "the truth's noise")
        check(seed, "an int >= 0", "the truth's seed")
        self.noise = float(noise)
        self.seed = seed
        self._normals: dict[tuple[int, int, int], np.ndarray] = {}

    def truth(self, view: SchedulerView, episodes: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """(R,) float64 the true remaining batches of the tasks in ``(episodes, slots)``."""
        return true_remaining(view, "planning on the truth")[episodes, slots].astype(np.float64)

    def factors(
        self, view: SchedulerView, episodes: np.ndarray, slots: np.ndarray, count: int = 0
    ) -> np.ndarray:
        """(R,) each task's ``exp(σ z)``; with ``count``, (R, count) ``exp(σ (z + ε_s))``."""
        seeds, uids = view.seed[episodes].tolist(), view.uid[episodes, slots].tolist()
        z = np.array([self._normal(s, u, 0, 1)[0] for s, u in zip(seeds, uids)]).reshape(-1)
        if not count:  # math.exp, as the value-of-information figures were measured with
            return np.array([math.exp(self.noise * value) for value in z.tolist()])
        spread = [self._normal(s, u, 1, count) for s, u in zip(seeds, uids)]
        return np.exp(self.noise * (z[:, None] + np.array(spread).reshape(-1, count)))

    def _normal(self, episode_seed: int, uid: int, stream: int, count: int) -> np.ndarray:
        """``count`` standard normals of one task's stream (0: its error, 1: its samples)."""
        if episode_seed < 0:
            raise ValueError("planning on noisy truth needs seeded episodes (reset(seed=...)).")
        key = (episode_seed, uid, stream)
        if key not in self._normals:
            entropy = [self.seed, episode_seed, uid] + ([stream] if stream else [])
            self._normals[key] = np.random.default_rng(entropy).standard_normal(count)
        return self._normals[key]


class TruthLARA(LARA):
    """LARA planning on each task's true remaining batches times its error factor.

    ``noise = 0``: LARA on the true demand.
    """

    clairvoyant = True

    name = "lara_truth"

    def __init__(self, noise: float = 0.0, seed: int = 0, explore: int = 3) -> None:
        super().__init__(explore=explore)
        self.errors = TaskErrors(noise, seed)

    def _remaining(self, view: SchedulerView, ready: np.ndarray) -> np.ndarray:
        episodes, slots = np.nonzero(ready)
        truth = self.errors.truth(view, episodes, slots)
        return truth * self.errors.factors(view, episodes, slots) if self.errors.noise else truth


class TruthHOP(HOP):
    """HOP over ``samples`` futures per task spread by σ around its noisy estimate.

    ``noise = 0``: every sample is the true demand, and HOP serves what LARA on it serves.
    """

    clairvoyant = True

    name = "hop_truth"

    def __init__(
        self,
        noise: float = 0.0,
        seed: int = 0,
        samples: int = 32,
        config: HOPConfig | None = None,
    ) -> None:
        check(samples, "an int >= 1", "TruthHOP samples")
        super().__init__(predictor=WLSPredictor(), config=config)  # not read: _samples replaces it
        self.errors = TaskErrors(noise, seed)
        self.samples = samples

    def _samples(self, view: SchedulerView, ready: np.ndarray) -> np.ndarray:
        episodes, slots = np.nonzero(ready)
        truth = self.errors.truth(view, episodes, slots)
        return truth[:, None] * self.errors.factors(view, episodes, slots, self.samples)
