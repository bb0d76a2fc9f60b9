"""Diagnostic predictors and schedulers: they read what no real scheduler can, to price it.

`ClairvoyantPredictor` answers with the recorded truth and `ErrorLog` scores another predictor
against it as a scheduler plays; `KindAnalog` is told each task's kind; `TruthLARA` and
`TruthHOP` plan on the hidden truth with errors of a chosen size. None is a realisable method:
they answer what information is worth (the value-of-information study).
"""

from coreenv_lab.diagnostics.analog import AnalogConfig, KindAnalog, kind_of
from coreenv_lab.diagnostics.clairvoyant import ClairvoyantPredictor, ErrorLog
from coreenv_lab.diagnostics.truth import TaskErrors, TruthHOP, TruthLARA

__all__ = [
    "AnalogConfig",
    "ClairvoyantPredictor",
    "ErrorLog",
    "KindAnalog",
    "TaskErrors",
    "TruthHOP",
    "TruthLARA",
    "kind_of",
]
