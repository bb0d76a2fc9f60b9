"""The simulator core (state, dynamics, observations, scenarios) and the `CoreEnv` shell."""

from coreenv.core.env import CoreEnv
from coreenv.core.features import NO_PREDICTOR, SlotFeature
from coreenv.core.views import OracleView, SlotTable, TaskTruth

__all__ = ["NO_PREDICTOR", "CoreEnv", "OracleView", "SlotFeature", "SlotTable", "TaskTruth"]
