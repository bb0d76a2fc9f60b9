"""A trained policy of your own: a linear slot scorer whose weights come from a file.

The tutorial's second example (docs/tutorial.md). However you trained the weights, the sweep and
``coreenv compare`` build the policy with them from the command line, from this folder::

    python linear_policy.py weights.npy     # writes hand-set weights, standing in for yours
    coreenv compare lara "linear_policy:LinearPolicy(weights=weights.npy)" --episodes 10

``module:Class(key=value, ...)`` calls ``Class(key=value, ...)``; each value is a Python literal,
else text (here the path ``weights.npy``).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from mara_agents.schedulers import Scheduler, serve_in_order

FEATURES = ("steps needed / steps left", "chance of success", "ready")


class LinearPolicy(Scheduler):
    """Serve the occupied slots by a linear score of three features of each (`FEATURES`)."""

    name = "linear"
    observation_predictor = "wls"

    def __init__(self, weights: str, temperature: float = 0.0) -> None:
        self.weights = np.load(weights)  # (3,): one weight per feature
        if self.weights.shape != (len(FEATURES),):
            raise ValueError(f"{weights} holds {self.weights.shape} weights, not {len(FEATURES)}")
        self.temperature = temperature  # > 0: noise on the scores, seeded by the episode

    def reset(self, env: Any) -> None:
        super().reset(env)
        self.rng = np.random.default_rng(env.view().seed[0])

    def act(self, observations: dict[str, Any], infos: dict[str, Any]) -> dict[str, int]:
        view = self.env.view()
        slots = np.flatnonzero(view.occupied[0])
        needed = view.est_remaining[0, slots] / view.batches_per_step[0]
        left = np.maximum(view.deadline[0, slots] - view.t[0], 1)
        features = np.stack(
            [
                np.minimum(needed / left, 10.0),  # inf (no crossing within the horizon): 10
                view.est_p_success[0, slots],
                view.batches[0, slots] >= self.env.config.min_prefix,
            ],
            axis=1,
        )
        scores = features @ self.weights
        if self.temperature > 0:
            scores = scores + self.temperature * self.rng.standard_normal(len(slots))
        return serve_in_order(self.env, slots[np.argsort(-scores, kind="stable")])


if __name__ == "__main__":
    # Stand-in weights: prefer tasks that need little of their time left and will likely finish.
    np.save(sys.argv[1] if len(sys.argv) > 1 else "weights.npy", np.array([-1.0, 2.0, -0.5]))
