"""The simulator: episodes' draws, the compiled engine, lanes, events, observations, views.

It is written once for any number of episodes; the environments over it are `coreenv.shells`.
"""

from coreenv.core.features import NO_PREDICTOR, SlotFeature
from coreenv.core.views import SchedulerView

__all__ = ["NO_PREDICTOR", "SchedulerView", "SlotFeature"]
