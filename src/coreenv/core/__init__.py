"""The simulator: the compiled engine, lanes, events, observations, views.

It plays the episodes `coreenv.episodes` draws, written once for any number of episodes; the
environments over it are `coreenv.shells`. Its face for code that builds on the engine:
`compiled` (numba's njit with a cache that works on read-only installs) and the decision form's
rule (`DecisionEvents`, `make_decisions`).
"""

from coreenv.core.engine import compiled
from coreenv.core.events import DecisionEvents, make_decisions
from coreenv.core.features import NO_PREDICTOR, SlotFeature
from coreenv.core.views import SchedulerView

__all__ = [
    "NO_PREDICTOR",
    "DecisionEvents",
    "SchedulerView",
    "SlotFeature",
    "compiled",
    "make_decisions",
]
