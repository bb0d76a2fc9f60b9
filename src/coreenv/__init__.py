"""coreenv: the CoRE-Learning scheduling environment (PettingZoo parallel, AEC and Gymnasium views).

Learning tasks arrive over time with deadlines and target losses; discrete compute nodes (the
agents) decide which tasks to train. See `CoreEnv` for the full specification.

The package is built in floors: `coreenv.core` is the simulator, `coreenv.shells` the
environments over it (one module per form), `coreenv.layout` the observation-layout helpers for
code that reads observations as arrays, and `coreenv.compat` every old name and path, each with
its removal version. The top level re-exports what most users need.
"""

from importlib.metadata import PackageNotFoundError, version

from coreenv import compat, curves
from coreenv.compat import OracleView, SlotTable
from coreenv.config import (
    CLUSTERS,
    SPEED_MIXES,
    EnvConfig,
    check_arrival_prob,
    make_config,
    per_node_load,
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
from coreenv.core.events import (
    DECISION_FORMS,
    DecisionEvents,
    Decisions,
    make_decisions,
    table_changed,
)
from coreenv.core.metrics import METRIC_KEYS
from coreenv.core_v1 import env, parallel_env, raw_env
from coreenv.errors import BankError, ConfigError, InvalidActionError, NoPredictorError
from coreenv.predictor import Estimate, Predictor, check_remaining, estimate_many
from coreenv.recording import (
    Fingerprint,
    fingerprint,
    fingerprint_differences,
    fingerprint_vector,
)
from coreenv.registration import ENV_ID, SEQUENTIAL_ENV_ID, register_envs
from coreenv.shells import (
    BatchedCore,
    BatchedObservation,
    BatchedStep,
    CoreEnv,
    CoreGymEnv,
    CoreSequentialEnv,
    CoreVectorEnv,
    SequentialVectorEnv,
)
from coreenv.core.engine import compiled
from coreenv.wls import WLSEstimates, WLSFit

__all__ = [
    "CLUSTERS",
    "DECISION_FORMS",
    "ENV_ID",
    "INFORMATION_MODELS",
    "SEQUENTIAL_ENV_ID",
    "SPEED_MIXES",
    "METRIC_KEYS",
    "NO_PREDICTOR",
    "BankError",
    "BatchedCore",
    "BatchedObservation",
    "BatchedStep",
    "ConfigError",
    "DecisionEvents",
    "Description",
    "FinishedTask",
    "Decisions",
    "CoreEnv",
    "CoreGymEnv",
    "CoreSequentialEnv",
    "CoreVectorEnv",
    "EnvConfig",
    "Estimate",
    "Fingerprint",
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
    "WLSFit",
    "check_remaining",
    "curves",
    "describe",
    "env",
    "estimate_many",
    "fingerprint",
    "fingerprint_differences",
    "fingerprint_vector",
    "check_arrival_prob",
    "compiled",
    "make_config",
    "per_node_load",
    "make_decisions",
    "parallel_env",
    "raw_env",
    "reads_context",
    "table_changed",
]

try:  # one source of truth: the version pyproject.toml declares
    __version__ = version("coreenv")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

register_envs()
compat.install()  # the old paths (`coreenv.compat`), each warning where it moved
