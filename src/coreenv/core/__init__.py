"""The simulator core (state, dynamics, observations, scenarios) and its shells.

`CoreEnv` is the PettingZoo environment; `BatchedCore` steps many of its episodes at once.
"""

from coreenv.core.batched import BatchedCore, BatchedObservation, BatchedStep
from coreenv.core.env import CoreEnv
from coreenv.core.features import NO_PREDICTOR, SlotFeature
from coreenv.core.legacy import OracleView, SlotTable, TaskTruth
from coreenv.core.views import SchedulerView

__all__ = [
    "NO_PREDICTOR",
    "BatchedCore",
    "BatchedObservation",
    "BatchedStep",
    "CoreEnv",
    "OracleView",
    "SchedulerView",
    "SlotFeature",
    "SlotTable",
    "TaskTruth",
]
