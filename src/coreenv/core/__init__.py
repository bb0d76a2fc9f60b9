"""The simulator core (state, dynamics, observations, scenarios) and the `CoreEnv` shell."""

from coreenv.core.env import CoreEnv
from coreenv.core.features import SlotFeature
from coreenv.core.views import OracleView, SlotTable, TaskTruth

__all__ = ["CoreEnv", "OracleView", "SlotFeature", "SlotTable", "TaskTruth"]
