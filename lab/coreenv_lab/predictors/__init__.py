"""The lab's predictors by name: the shipped ones plus the studies' (analogs, raw networks).

`make_predictor` knows every name of `mara_agents.predictors.POLICY_PREDICTORS` and of
`LAB_PREDICTORS`:

- ``"fm_uncalibrated"``: the shipped FM network read raw (median crossing and sampled share);
- ``"fm_mara_teacher"``: the network MARA's is distilled from (recipe ``id_only``), raw;
- ``"fm_analog"`` / ``"fm_mara_analog"``: ``"fm"`` / MARA's network moved towards the nearest run
  of each task's kind, among the ID training runs and the tasks its episode finished
  (`AnalogPredictor`; it reads the context ``EnvConfig(information=...)`` gives);
- ``"fm_mara_learned"``: MARA's network moved towards the same analogs by learned weights
  (`AnalogWeigher`, `WEIGHER`).

`make_readable` lets MARA's training (`MARATrainConfig.predictor`) and `MARA.pretrained` name a
lab predictor in this process, as ``python -m coreenv_lab.commands.train_mara`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coreenv import Predictor
from coreenv_lab import CHECKPOINTS
from mara_agents.predictors import POLICY_PREDICTORS

__all__ = ["LAB_PREDICTORS", "MARA_TEACHER", "WEIGHER", "make_predictor", "make_readable"]

MARA_TEACHER = CHECKPOINTS / "fm_mara_teacher.pt"
"""The network trained on the ID runs alone (recipe ``id_only``, 4 Heun steps), on whose
estimates the shipped MARA policies were trained; distilled into `flow.MARA_NETWORK`."""
WEIGHER = CHECKPOINTS / "analog_weigher.pt"
"""The trained `AnalogWeigher` for MARA's network (``benchmarks/train_weigher.py``)."""


def _raw(path_of: Callable[[], Any]) -> Callable[..., Predictor]:
    """A flow-matching network read raw (needs torch)."""

    def make(**sampler: Any) -> Predictor:
        from mara_agents.predictors.flow import FMPredictor

        return FMPredictor.pretrained(path_of(), calibrated=False, **sampler)

    return make


def _shipped_path() -> Any:
    from mara_agents.predictors.flow import PRETRAINED

    return PRETRAINED


def _analog(base: str) -> Callable[..., Predictor]:
    """``base`` blended with analogs of each task's kind (the ID training runs as reference)."""

    def make(**sampler: Any) -> Predictor:
        from coreenv.curves import named_task_set
        from coreenv_lab.predictors.in_context import AnalogPredictor

        base_predictor = make_predictor(base, **sampler)
        return AnalogPredictor(base_predictor, reference=named_task_set("id_train"))

    return make


def _learned(base: str) -> Callable[..., Predictor]:
    """``base`` moved towards analogs of each task's kind by the lab's `WEIGHER` (needs torch)."""

    def make(**sampler: Any) -> Predictor:
        from coreenv.curves import named_task_set
        from coreenv_lab.predictors.analog_weigher import AnalogWeigher
        from coreenv_lab.predictors.in_context import AnalogPredictor

        return AnalogPredictor(
            make_predictor(base, **sampler),
            reference=named_task_set("id_train"),
            weigher=AnalogWeigher.load(WEIGHER, base=base),
        )

    return make


LAB_PREDICTORS: dict[str, Callable[..., Predictor]] = {
    "fm_uncalibrated": _raw(_shipped_path),
    "fm_mara_teacher": _raw(lambda: MARA_TEACHER),
    "fm_analog": _analog("fm"),
    "fm_mara_analog": _analog("fm_mara_student"),
    "fm_mara_learned": _learned("fm_mara_student"),
}
"""The studies' predictors (the module docstring says what each is)."""


def make_predictor(name: str, **sampler: Any) -> Predictor:
    """A fresh predictor by name: a shipped one, or one of `LAB_PREDICTORS`."""
    known = {**POLICY_PREDICTORS, **LAB_PREDICTORS}
    if name not in known:
        raise ValueError(f"unknown predictor {name!r}; valid names: {sorted(known)}.")
    if sampler and name == "wls":
        raise ValueError(f"predictor 'wls' has no sampler settings, got {sorted(sampler)}.")
    return known[name](**sampler)


def make_readable(name: str, make: Callable[..., Predictor] | None = None) -> None:
    """Let MARA's checkpoints and training name the predictor ``name``, in this process.

    `mara_agents.predictors.POLICY_PREDICTORS` is what `MARATrainConfig.predictor`,
    `MARA.pretrained` and the training's predictor know; ``name`` joins it, built by ``make``
    (default: its entry in `LAB_PREDICTORS`). A name it holds already is left as it is.
    """
    if make is None:
        if name not in LAB_PREDICTORS:
            raise ValueError(
                f"unknown lab predictor {name!r}; valid names: {sorted(LAB_PREDICTORS)}."
            )
        make = LAB_PREDICTORS[name]
    POLICY_PREDICTORS.setdefault(name, make)
