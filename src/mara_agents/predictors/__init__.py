"""Remaining-demand predictors implementing `coreenv.Predictor`, and their registry by name.

To add a predictor: one module here with a class implementing ``estimate`` (and, if it can batch,
``estimate_batch``), and one entry in `PREDICTORS`. `mara_agents.predictor_eval` scores any
predictor by the common query protocol; `mara_agents.fm_training` trains the flow-matching one;
`mara_agents.diagnostics` holds the predictors that read what no scheduler may.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coreenv import Predictor
from mara_agents import compat
from mara_agents.predictors.horizon import HORIZON
from mara_agents.predictors.wls import WLSConfig, WLSFit, WLSPredictor

__all__ = [
    "HORIZON",
    "PREDICTORS",
    "FMPredictor",
    "WLSConfig",
    "WLSFit",
    "WLSPredictor",
    "make_predictor",
]


def _pretrained_fm(**sampler: Any) -> Predictor:
    """The shipped flow-matching predictor (needs torch: imported on use)."""
    from mara_agents.predictors.flow import FMPredictor

    return FMPredictor.pretrained(**sampler)


def _raw_fm(**sampler: Any) -> Predictor:
    """The shipped flow-matching network read without its calibration (needs torch)."""
    from mara_agents.predictors.flow import FMPredictor

    return FMPredictor.pretrained(calibrated=False, **sampler)


def _mara_fm(**sampler: Any) -> Predictor:
    """The network the shipped MARA policies read (package 0.2's, distilled), raw (needs torch)."""
    from mara_agents.predictors.flow import MARA_NETWORK, FMPredictor

    return FMPredictor.pretrained(MARA_NETWORK, calibrated=False, **sampler)


PREDICTORS: dict[str, Callable[..., Predictor]] = {
    "wls": WLSPredictor,
    "fm": _pretrained_fm,
    "fm_raw": _raw_fm,
    "fm_mara": _mara_fm,
}
"""Realisable predictors by name: ``"wls"`` (LARA's power-law fit), ``"fm"`` (pretrained, with its
calibration), ``"fm_raw"`` (the same network read raw: median and sampled share) and
``"fm_mara"`` (what the shipped MARA policies read, raw: package 0.2's network, on whose estimates
they were trained, distilled to sample in one step instead of four)."""


def make_predictor(name: str, **sampler: Any) -> Predictor:
    """A fresh predictor from its name in `PREDICTORS`.

    ``sampler``: sampler settings of a flow-matching one (`FMConfig`'s ``SAMPLER_FIELDS``, such as
    ``samples=8``), to read its network with another sampler; WLS has none.
    """
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
