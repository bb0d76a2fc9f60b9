"""Remaining-demand predictors implementing `coreenv.Predictor`, and their registry by name.

Two predictors play: ``"wls"`` (LARA's power-law fit) and ``"fm"`` (the shipped flow-matching
predictor). To add one: a module here with a class implementing ``estimate`` (and, if it can
batch, ``estimate_batch``), and an entry in `PREDICTORS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coreenv import Predictor
from mara_agents.predictors.horizon import HORIZON
from mara_agents.predictors.wls import WLSConfig, WLSFit, WLSPredictor

__all__ = [
    "HORIZON",
    "POLICY_PREDICTORS",
    "PREDICTORS",
    "FMPredictor",
    "WLSConfig",
    "WLSFit",
    "WLSPredictor",
    "make_predictor",
]


def _shipped_fm(**sampler: Any) -> Predictor:
    """The shipped flow-matching network with its calibration (needs torch: imported on use)."""
    from mara_agents.predictors.flow import FMPredictor

    return FMPredictor.pretrained(**sampler)


def _mara_network(**sampler: Any) -> Predictor:
    """The one-step network the shipped MARA policies read, raw (needs torch)."""
    from mara_agents.predictors.flow import MARA_NETWORK, FMPredictor

    return FMPredictor.pretrained(MARA_NETWORK, calibrated=False, **sampler)


PREDICTORS: dict[str, Callable[..., Predictor]] = {"wls": WLSPredictor, "fm": _shipped_fm}
"""The predictors a scheduler may name: ``"wls"``, LARA's power-law fit; ``"fm"``, the shipped
flow-matching predictor, its network read through its calibration."""

POLICY_PREDICTORS: dict[str, Callable[..., Predictor]] = {
    **PREDICTORS,
    "fm_mara_student": _mara_network,
}
"""What a MARA checkpoint may name as the predictor its policy reads: a public one, or the network
the shipped MARA policies were trained on (`flow.MARA_NETWORK`), which is a field of their
checkpoints rather than a predictor to choose."""


def make_predictor(name: str, **sampler: Any) -> Predictor:
    """A fresh predictor from its name in `POLICY_PREDICTORS` (the public ones: `PREDICTORS`).

    ``sampler``: sampler settings of a flow-matching one (`FMConfig`'s ``SAMPLER_FIELDS``, such as
    ``samples=8``), to read its network with another sampler; WLS has none.
    """
    if name not in POLICY_PREDICTORS:
        raise ValueError(f"unknown predictor {name!r}; valid names: {sorted(PREDICTORS)}.")
    if sampler and name == "wls":
        raise ValueError(f"predictor 'wls' has no sampler settings, got {sorted(sampler)}.")
    return POLICY_PREDICTORS[name](**sampler)


def __getattr__(name: str):
    """`FMPredictor` is imported on first use (it needs torch)."""
    if name == "FMPredictor":
        from mara_agents.predictors.flow import FMPredictor

        return FMPredictor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
