"""coreenv: the CoRE-Learning scheduling environment (PettingZoo parallel, AEC and Gymnasium views).

Learning tasks arrive over time with deadlines and target losses; discrete compute nodes (the
agents) decide which tasks to train. See `CoreEnv` for the full specification.

The package is built in floors: `coreenv.core` is the simulator, `coreenv.shells` the
environments over it (one module per form), `coreenv.layout` the observation-layout helpers for
code that reads observations as arrays, and `coreenv.compat` the scheduler inputs of 0.1.0,
deprecated. The top level re-exports what a user of the environment imports.
"""

from importlib.metadata import PackageNotFoundError, version

from coreenv import compat, curves
from coreenv.compat import OracleView, SlotTable
from coreenv.config import (
    CLUSTERS,
    SPEED_MIXES,
    EnvConfig,
    default_arrival_prob,
    make_config,
    parse_cluster,
)
from coreenv.context import (
    INFORMATION_MODELS,
    Description,
    FinishedTask,
    TaskContext,
    describe,
    reads_context,
)
from coreenv.core import NO_PREDICTOR, SchedulerView, SlotFeature
from coreenv.core.events import DECISION_FORMS, Decisions
from coreenv.core.metrics import METRIC_KEYS
from coreenv.core_v1 import env, parallel_env, raw_env
from coreenv.errors import BankError, ConfigError, InvalidActionError, NoPredictorError
from coreenv.predictor import Estimate, Predictor, estimate_many
from coreenv.registration import ENV_ID, LEARN_ENV_ID, SEQUENTIAL_ENV_ID, register_envs
from coreenv.shells import (
    BatchedCore,
    CoreEnv,
    CoreGymEnv,
    CoreSequentialEnv,
    CoreVectorEnv,
    SequentialVectorEnv,
)
from coreenv.wls import WLSEstimates

__all__ = [
    "CLUSTERS",
    "DECISION_FORMS",
    "ENV_ID",
    "INFORMATION_MODELS",
    "LEARN_ENV_ID",
    "METRIC_KEYS",
    "NO_PREDICTOR",
    "SEQUENTIAL_ENV_ID",
    "SPEED_MIXES",
    "BankError",
    "BatchedCore",
    "ConfigError",
    "CoreEnv",
    "CoreGymEnv",
    "CoreSequentialEnv",
    "CoreVectorEnv",
    "Decisions",
    "Description",
    "EnvConfig",
    "Estimate",
    "FinishedTask",
    "InvalidActionError",
    "NoPredictorError",
    "OracleView",
    "Predictor",
    "SchedulerView",
    "SequentialVectorEnv",
    "SlotFeature",
    "SlotTable",
    "TaskContext",
    "WLSEstimates",
    "curves",
    "default_arrival_prob",
    "describe",
    "env",
    "estimate_many",
    "make_config",
    "parse_cluster",
    "parallel_env",
    "raw_env",
    "reads_context",
]

try:  # one source of truth: the version pyproject.toml declares
    __version__ = version("coreenv")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

register_envs()
compat.install()  # the module paths 0.1.0 pickles name
