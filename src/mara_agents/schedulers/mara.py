"""MARA: the MAT allocator acting on observations that carry a predictor's estimates.

``MARA.pretrained("mara")`` is MAT + the flow-matching predictor; ``"mara_wls"`` MAT + WLS;
``"mara_noshape"`` MAT + FM trained without the potential shaping. Each loads a shipped
checkpoint; no network access and no training.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from coreenv import Predictor
from mara_agents.policy.mat import MAT, MATConfig
from mara_agents.predictors import make_predictor
from mara_agents.schedulers.base import Scheduler

__all__ = ["CHECKPOINTS", "MARA", "VARIANTS"]

CHECKPOINTS = Path(__file__).resolve().parent.parent / "checkpoints"
VARIANTS = {"mara": "fm", "mara_wls": "wls", "mara_noshape": "fm"}
"""Shipped variants and the predictor each observes (a name in `predictors.PREDICTORS`)."""


class MARA(Scheduler):
    """Nodes choose slots with a trained `MAT`; the environment gets ``observation_predictor``.

    Args:
        policy: the trained allocator.
        predictor: the predictor whose estimates the policy was trained to read.
        deterministic: take each node's most likely action (evaluation) rather than sampling.
        name: the method's name in results.
    """

    def __init__(
        self, policy: MAT, predictor: Predictor, deterministic: bool = True, name: str = "mara"
    ) -> None:
        self.policy = policy.eval()
        self.observation_predictor = predictor
        self.deterministic = deterministic
        self.name = name

    @classmethod
    def pretrained(cls, variant: str = "mara", path: str | Path | None = None) -> MARA:
        """A shipped variant (see `VARIANTS`), or a checkpoint written by ``train_mara.py``."""
        path = Path(path) if path is not None else CHECKPOINTS / f"{variant}.pt"
        if not path.is_file():
            raise FileNotFoundError(
                f"no MARA checkpoint at {path}; train one with benchmarks/train_mara.py."
            )
        state = torch.load(path, map_location="cpu", weights_only=True)
        policy = MAT(MATConfig(**state["mat_config"]))
        policy.load_state_dict(state["model"])
        return cls(policy, make_predictor(state["predictor"]), name=variant)

    def act(self, observations: dict[str, Any], infos: dict[str, Any]) -> dict[str, int]:
        """One decoder pass per node, in node order, masked to a feasible matching."""
        agents = self.env.agents
        obs = np.stack([observations[a]["observation"] for a in agents])[None]  # (1, M, D)
        occupied = observations[agents[0]]["action_mask"][None, :-1].astype(bool)  # (1, K)
        out = self.policy.act(
            torch.from_numpy(obs), torch.from_numpy(occupied), deterministic=self.deterministic
        )
        return dict(zip(agents, out.actions[0].tolist()))
