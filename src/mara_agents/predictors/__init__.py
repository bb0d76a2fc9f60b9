"""Remaining-demand predictors implementing `coreenv.Predictor`, and their registry by name.

To add a predictor: one module here with a class implementing ``estimate`` (and, if it can batch,
``estimate_batch``), and one entry in `PREDICTORS`. `mara_agents.predictor_eval` scores any
predictor by the common query protocol; `mara_agents.fm_training` trains the flow-matching one;
`mara_agents.diagnostics` holds the predictors that read what no scheduler may.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coreenv import Predictor
from mara_agents import compat
from mara_agents.predictors.horizon import HORIZON
from mara_agents.predictors.in_context import AnalogPredictor
from mara_agents.predictors.wls import WLSConfig, WLSFit, WLSPredictor

__all__ = [
    "AnalogPredictor",
    "HORIZON",
    "PREDICTORS",
    "RENAMED_PREDICTORS",
    "WEIGHER",
    "FMPredictor",
    "WLSConfig",
    "WLSFit",
    "WLSPredictor",
    "make_predictor",
    "predictor_name",
]


def _shipped_fm(**sampler: Any) -> Predictor:
    """The shipped flow-matching network with its calibration (needs torch: imported on use)."""
    from mara_agents.predictors.flow import FMPredictor

    return FMPredictor.pretrained(**sampler)


def _uncalibrated_fm(**sampler: Any) -> Predictor:
    """The shipped flow-matching network read without its calibration (needs torch)."""
    from mara_agents.predictors.flow import FMPredictor

    return FMPredictor.pretrained(calibrated=False, **sampler)


def _analog(base: Callable[..., Predictor]) -> Callable[..., Predictor]:
    """``base`` blended with analogs of each task's kind (`AnalogPredictor`, reading context).

    The analogs: the ID training runs and the tasks the episode finished.
    """

    def make(**sampler: Any) -> Predictor:
        from coreenv.curves import named_task_set
        from mara_agents.predictors.in_context import AnalogPredictor

        return AnalogPredictor(base(**sampler), reference=named_task_set("id_train"))

    return make


WEIGHER = Path(__file__).resolve().parent.parent / "checkpoints" / "analog_weigher.pt"
"""The shipped `AnalogWeigher` for ``fm_mara_student`` (``benchmarks/train_weigher.py``)."""


def _learned(base: str) -> Callable[..., Predictor]:
    """Predictor ``base`` moved towards analogs of each task's kind by the shipped weigher.

    The analogs are those of `_analog`; the weigher, trained for ``base``, weighs them (needs
    torch).
    """

    def make(**sampler: Any) -> Predictor:
        from coreenv.curves import named_task_set
        from mara_agents.predictors.analog_weigher import AnalogWeigher
        from mara_agents.predictors.in_context import AnalogPredictor

        return AnalogPredictor(
            PREDICTORS[base](**sampler),
            reference=named_task_set("id_train"),
            weigher=AnalogWeigher.load(WEIGHER, base=base),
        )

    return make


def _mara_student(**sampler: Any) -> Predictor:
    """The one-step network the shipped MARA policies read, raw (needs torch)."""
    from mara_agents.predictors.flow import MARA_NETWORK, FMPredictor

    return FMPredictor.pretrained(MARA_NETWORK, calibrated=False, **sampler)


def _mara_teacher(**sampler: Any) -> Predictor:
    """The network MARA's student was distilled from, raw (needs torch)."""
    from mara_agents.predictors.flow import MARA_TEACHER, FMPredictor

    return FMPredictor.pretrained(MARA_TEACHER, calibrated=False, **sampler)


PREDICTORS: dict[str, Callable[..., Predictor]] = {
    "wls": WLSPredictor,
    "fm": _shipped_fm,
    "fm_uncalibrated": _uncalibrated_fm,
    "fm_analog": _analog(_shipped_fm),
    "fm_mara_student": _mara_student,
    "fm_mara_teacher": _mara_teacher,
    "fm_mara_analog": _analog(_mara_student),
    "fm_mara_learned": _learned("fm_mara_student"),
}
"""Realisable predictors by name:

- ``"wls"``: LARA's power-law fit;
- ``"fm"``: the shipped flow-matching predictor, its network read through its calibration;
- ``"fm_uncalibrated"``: the same network read raw (median crossing and sampled share);
- ``"fm_analog"``: ``"fm"`` moved towards the nearest run of each task's kind, among the ID
  training runs and the tasks its episode finished (`AnalogPredictor`; it reads the context that
  ``EnvConfig(information=...)`` gives, and answers as ``"fm"`` without one);
- ``"fm_mara_student"``: what the shipped MARA policies read, raw: their teacher distilled to
  sample in one step instead of four;
- ``"fm_mara_teacher"``: the network the policies were trained on (recipe ``id_only``), raw;
- ``"fm_mara_analog"``: ``"fm_mara_student"`` blended with analogs as ``"fm_analog"`` is;
- ``"fm_mara_learned"``: ``"fm_mara_student"`` moved towards the same analogs by learned weights
  (`AnalogWeigher`, trained on corpus kinds that student never saw) instead of the fixed rule.
"""

RENAMED_PREDICTORS: dict[str, str] = {"fm_raw": "fm_uncalibrated", "fm_mara": "fm_mara_student"}
"""Old predictor names, accepted with a `DeprecationWarning` until 0.3.0 -> their new names."""


def predictor_name(name: str) -> str:
    """``name`` as `PREDICTORS` spells it: an old name (`RENAMED_PREDICTORS`) warns and is renamed.

    A name that is neither is returned as it is; `make_predictor` refuses it.
    """
    if name in RENAMED_PREDICTORS:
        new = RENAMED_PREDICTORS[name]
        warnings.warn(
            f"predictor {name!r} is deprecated and will be removed in 0.3.0; use {new!r}.",
            DeprecationWarning,
            stacklevel=2,
        )
        return new
    return name


def make_predictor(name: str, **sampler: Any) -> Predictor:
    """A fresh predictor from its name in `PREDICTORS`.

    ``sampler``: sampler settings of a flow-matching one (`FMConfig`'s ``SAMPLER_FIELDS``, such as
    ``samples=8``), to read its network with another sampler; WLS has none.
    """
    name = predictor_name(name)
    if name not in PREDICTORS:
        raise ValueError(f"unknown predictor {name!r}; valid names: {sorted(PREDICTORS)}.")
    if sampler and name == "wls":
        raise ValueError(f"predictor 'wls' has no sampler settings, got {sorted(sampler)}.")
    return PREDICTORS[name](**sampler)


def __getattr__(name: str):
    """`FMPredictor` is imported on first use (it needs torch); old names warn and hand on."""
    if name == "FMPredictor":
        from mara_agents.predictors.flow import FMPredictor

        return FMPredictor
    return compat.moved_name(__name__, name)
