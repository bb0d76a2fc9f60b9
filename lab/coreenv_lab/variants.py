"""The lab's trained MARA variants: the ablations and the information-model policy.

The shipped network (``mara``) is `mara_agents.schedulers.variants.VARIANTS`; these are the ones
the studies trained before or beside it, each the recipe of their day on one cluster with
another predictor, shaping β or information model, or (``mara_sets``) the first network that read
nodes and slots as sets, trained at four equal nodes. ``python -m coreenv_lab.commands.train_mara
--variant NAME`` trains one (its checkpoint by default, as ``coreenv train-mara --variant NAME``
did before 0.3.0) and `coreenv_lab.methods` plays it in the sweep.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from coreenv_lab import CHECKPOINTS

__all__ = ["LAB_VARIANTS", "LabVariant"]


@dataclass(frozen=True)
class LabVariant:
    """A lab MARA: the shipped recipe with the predictor, β and information model given."""

    predictor: str
    """The predictor its policy reads: a name of `coreenv_lab.predictors.make_predictor`."""
    shaping_beta: float
    """β of the potential-shaped training reward; 0: unshaped."""
    checkpoint: str
    """File name of its checkpoint in `coreenv_lab.CHECKPOINTS`."""
    information: str = "prefix"
    """`coreenv.EnvConfig.information` of its training episodes."""

    @property
    def path(self) -> Path:
        """Its checkpoint."""
        return CHECKPOINTS / self.checkpoint


LAB_VARIANTS: dict[str, LabVariant] = {
    "mara_wls": LabVariant(predictor="wls", shaping_beta=1.0, checkpoint="mara_wls.pt"),
    "mara_noshape": LabVariant(
        predictor="fm_mara_student", shaping_beta=0.0, checkpoint="mara_noshape.pt"
    ),
    "mara_sets": LabVariant(
        predictor="fm_mara_student", shaping_beta=1.0, checkpoint="mara_sets.pt"
    ),
    "mara_history": LabVariant(
        predictor="fm_mara_analog",
        shaping_beta=1.0,
        checkpoint="mara_history.pt",
        information="history",
    ),
}
"""``mara_sets``: the sets network trained at four equal nodes (0.3's ``mara`` off 4 / 8);
``mara_wls``: MAT on WLS estimates (the predictor ablation); ``mara_noshape``: MAT on the FM
network the shipped MARA reads, trained unshaped (the shaping ablation); ``mara_history``: trained
on the information model (``information="history"``), reading ``fm_mara_analog`` and the category
columns, so it plays only where tasks are described."""
