"""The predictor hook of the shells: what fills the lanes' estimate features (design §2)."""

from __future__ import annotations

from coreenv.config import EnvConfig
from coreenv.core.estimates import Estimates
from coreenv.predictor import Predictor, checked_predictor

__all__ = ["PredictorHook"]


class PredictorHook:
    """A shell whose ``predictor`` fills the estimate features of its lanes.

    The shell holds ``config`` and ``_predictor`` and names its lanes' estimates in
    `_hooked_estimates`.
    """

    config: EnvConfig
    _predictor: Predictor | None

    def _hooked_estimates(self) -> Estimates:
        """The estimate features the predictor fills."""
        raise NotImplementedError

    @property
    def predictor(self) -> Predictor | None:
        """The predictor filling the estimate features; None: they read ``NO_PREDICTOR``."""
        return self._predictor

    @predictor.setter
    def predictor(self, predictor: Predictor | None) -> None:
        """Attach or detach a predictor; mid-episode, the estimate features follow at once."""
        self._predictor = checked_predictor(predictor, self.config.estimate_quantiles)
        self._hooked_estimates().attach(predictor is not None)
