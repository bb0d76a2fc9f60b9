"""The table of trained MARA variants: one entry each (predictor, shaping β, checkpoint).

It needs no torch, so the sweep's method names can derive from it without loading a network.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from coreenv import parse_cluster
from mara_agents.predictors import POLICY_PREDICTORS

__all__ = ["CHECKPOINTS", "TRAINING_CLUSTERS", "VARIANTS", "MARAVariant"]

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
    clusters: tuple[str, ...] = ("4/8 equal",)
    """The clusters it trains on (`MARATrainConfig.clusters`, each ``"M/K name"``)."""

    @property
    def reads_cluster(self) -> bool:
        """Whether its network reads the cluster's columns (`MATConfig.cluster_column`): it
        trains on several clusters, or on one whose nodes differ or charge for moves."""
        shapes = [parse_cluster(shape) for shape in self.clusters]
        return len(shapes) > 1 or any(set(shape) - {"num_nodes", "num_slots"} for shape in shapes)

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


TRAINING_CLUSTERS = (
    "4/8 equal",
    "4/8 mixed_costly",
    "6/12 costly_moves",
    "8/16 equal",
    "8/16 mixed_costly",
    "12/24 mixed_speeds",
)
"""The clusters the shipped ``mara`` trains on: 4 to 12 nodes, equal or mixed speeds, switch
costs 0 or 5, each at its capacity's load. 16 nodes are left out, so that playing them shows
a size it never saw."""

VARIANTS: dict[str, MARAVariant] = {
    "mara": MARAVariant(
        predictor="fm_mara_student",
        shaping_beta=1.0,
        checkpoint="mara.pt",
        sets=True,
        clusters=TRAINING_CLUSTERS,
    ),
}
"""The shipped MARA network, read by `MARA.pretrained` and by training: one network for every
cluster (any number of nodes, their speeds, a switch cost), deciding at events. It reads the
network `predictors.flow.MARA_NETWORK`, raw, as in training: a policy reads the estimates it
learned on."""
