"""The table of trained MARA variants: one entry each (predictor, shaping β, checkpoint).

It needs no torch, so the sweep's method names can derive from it without loading a network.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mara_agents.predictors import POLICY_PREDICTORS

__all__ = ["CHECKPOINTS", "VARIANTS", "MARAVariant"]

CHECKPOINTS = Path(__file__).resolve().parent.parent / "checkpoints"


@dataclass(frozen=True)
class MARAVariant:
    """A trained MARA: the predictor it reads, the reward it trained on and where it is stored."""

    predictor: str
    """The predictor whose estimates the policy reads: a name in `predictors.POLICY_PREDICTORS`."""
    shaping_beta: float
    """β of the potential-shaped training reward (`coreenv.EnvConfig.shaping_beta`); 0: unshaped."""
    checkpoint: str
    """File name of the shipped checkpoint in `CHECKPOINTS`."""
    information: str = "prefix"
    """`coreenv.EnvConfig.information` of its training episodes (past ``"prefix"`` the policy
    reads the category columns, and plays only where tasks are described)."""
    sets: bool = False
    """Whether its network reads nodes and slots as sets (`MATConfig.sets`): one checkpoint for
    every cluster size."""

    def __post_init__(self) -> None:
        if self.predictor not in POLICY_PREDICTORS:
            raise ValueError(
                f"MARAVariant.predictor must be one of {sorted(POLICY_PREDICTORS)}, "
                f"got {self.predictor!r}."
            )
        if self.shaping_beta < 0:
            raise ValueError(f"MARAVariant.shaping_beta must be >= 0, got {self.shaping_beta!r}.")

    @property
    def path(self) -> Path:
        """The shipped checkpoint."""
        return CHECKPOINTS / self.checkpoint


VARIANTS: dict[str, MARAVariant] = {
    "mara": MARAVariant(predictor="fm_mara_student", shaping_beta=1.0, checkpoint="mara.pt"),
    "mara_sets": MARAVariant(
        predictor="fm_mara_student", shaping_beta=1.0, checkpoint="mara_sets.pt", sets=True
    ),
}
"""The shipped MARA networks by name, read by `MARA.pretrained` and by training: ``mara`` plays
four equal nodes and eight slots; ``mara_sets`` reads nodes and slots as sets (trained at 4 / 8,
it plays any number of equal nodes). Both read the network `predictors.flow.MARA_NETWORK`, raw,
as in training: a policy reads the estimates it learned on. The sweep's method ``mara`` plays
the one that fits the cluster (`mara_agents.sweep.methods`)."""
