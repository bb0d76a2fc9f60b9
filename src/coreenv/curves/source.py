"""The curve-source interface: where a task's loss curve comes from."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from coreenv.context import Description, describe
from coreenv.curves.targets import target_at_fraction

__all__ = ["Curve", "CurveSource"]


@dataclass(frozen=True)
class Curve:
    """One task's loss curve: ``losses[n]`` is the loss after ``n`` training batches.

    Attributes:
        losses: (n_max + 1,) float64, finite and positive; ``losses[0]`` is the initial loss.
        family: the model–dataset configuration the curve came from.
        curve_id: row of the bank it came from, or -1 for generated curves; with the source it
            identifies the curve, so predictors may cache per (curve, prefix length).
    """

    losses: np.ndarray
    family: str
    curve_id: int = -1

    def __len__(self) -> int:
        return len(self.losses)


class CurveSource(ABC):
    """Supplies loss curves to new tasks. Subclass it to bring your own curves."""

    name: str = "custom"
    validated: bool = False
    """True if every curve it gives is known valid (finite, positive, falling below its start);
    otherwise the environment checks each curve it draws."""

    @abstractmethod
    def sample(self, rng: np.random.Generator) -> Curve:
        """Draw the curve of a new task, making every random choice through ``rng``."""

    @property
    def families(self) -> tuple[str, ...]:
        """Names of the families this source can produce."""
        return ()

    def describe(self, curve: Curve) -> Description:
        """What the task of ``curve`` is (`EnvConfig.information`): its family unless overridden."""
        return describe(curve.family)

    def target(self, curve: Curve, fraction: float) -> tuple[float, int | None]:
        """A task's target and true demand R* (None if unknowable).

        The target is drawn at ``fraction`` of the curve (design §2: the running minimum there).
        """
        return target_at_fraction(curve.losses, fraction)
