"""The studies' sweep methods, as ``coreenv_lab.methods:NAME`` (run from a clone, lab installed).

    coreenv sweep --methods lara mara coreenv_lab.methods:mara_wls coreenv_lab.methods:mara_noshape

Each is a function taking no arguments that returns a scheduler named as the study's tables name
it (``coreenv_lab.methods:mara_wls`` plays as ``mara_wls``): the ablations of MARA (``mara_wls``,
``mara_noshape``: `coreenv_lab.variants`), the cluster-memory and task-kind studies' planners and
policies (``*_analog``, ``*_learned``, ``mara_history``; play them with ``--information
history``), the shipped MARA deciding at events (``mara_events``, now its default), the
first set-reading network, trained at four equal nodes (``mara_sets``), HOP on WLS
(``hop_wls``), and the RL baselines the shipped ``ppo`` superseded (``ppo_slots``, ``ppo_mlp``,
``ippo_live``, ``ippo_sets``: `coreenv_lab.baselines.recipes`).
Before 0.3.0 each was a sweep method of that name (``coreenv sweep --methods mara_wls``).
"""

from __future__ import annotations

from coreenv import Decisions
from coreenv_lab import CHECKPOINTS
from coreenv_lab.predictors import make_predictor
from coreenv_lab.variants import LAB_VARIANTS
from mara_agents.schedulers import HOP, LARA, Scheduler
from mara_agents.schedulers.hop import HOP_TUNED

EVENT_HOLD = 8
"""The most steps `mara_events` holds an action (chosen on training episodes: docs/mara.md)."""


def _mara(name: str) -> Scheduler:
    """The lab's MARA variant ``name`` (`LAB_VARIANTS`), reading its predictor."""
    from mara_agents.schedulers.mara import MARA

    variant = LAB_VARIANTS[name]
    reads = {variant.predictor: make_predictor(variant.predictor)}
    return MARA.pretrained(name, path=variant.path, predictors=reads)


def _reading(name: str, predictor: str) -> Scheduler:
    """The shipped MARA, not retrained, reading ``predictor`` for its network's estimates."""
    from mara_agents.schedulers.mara import MARA

    policy = MARA.pretrained("mara", predictors={"fm_mara_student": make_predictor(predictor)})
    policy.name = name
    return policy


def mara_wls() -> Scheduler:
    """MAT on WLS estimates (the predictor ablation)."""
    return _mara("mara_wls")


def mara_noshape() -> Scheduler:
    """MAT on FM estimates trained without the potential shaping (the shaping ablation)."""
    return _mara("mara_noshape")


def mara_history() -> Scheduler:
    """MARA trained on the information model (``--information history``)."""
    return _mara("mara_history")


def mara_analog() -> Scheduler:
    """The shipped MARA, not retrained, reading its network moved towards analogs."""
    return _reading("mara_analog", "fm_mara_analog")


def mara_learned() -> Scheduler:
    """The shipped MARA, not retrained, reading its network moved by the learned weigher."""
    return _reading("mara_learned", "fm_mara_learned")


def mara_events() -> Scheduler:
    """The shipped MARA deciding at events of the slot table or every `EVENT_HOLD` steps."""
    from mara_agents.schedulers.mara import MARA

    policy = MARA.pretrained("mara")
    policy.decisions = Decisions("events", hold=EVENT_HOLD)
    policy.name = "mara_events"
    return policy


def mara_sets() -> Scheduler:
    """The first set-reading MARA network, trained at four equal nodes, at every size."""
    return _mara("mara_sets")


def _planner(planner: Scheduler, name: str) -> Scheduler:
    planner.name = name
    return planner


def lara_analog() -> Scheduler:
    """LARA on ``fm_analog``."""
    return _planner(LARA(predictor=make_predictor("fm_analog")), "lara_analog")


def hop_analog() -> Scheduler:
    """HOP on ``fm_analog``."""
    return _planner(HOP(make_predictor("fm_analog"), HOP_TUNED), "hop_analog")


def lara_learned() -> Scheduler:
    """LARA on ``fm_mara_learned``."""
    return _planner(LARA(predictor=make_predictor("fm_mara_learned")), "lara_learned")


def hop_learned() -> Scheduler:
    """HOP on ``fm_mara_learned``."""
    return _planner(HOP(make_predictor("fm_mara_learned"), HOP_TUNED), "hop_learned")


def hop_wls() -> Scheduler:
    """HOP on WLS: one sample per task, its point estimate (a LARA-like planner)."""
    return _planner(HOP(make_predictor("wls"), HOP_TUNED), "hop_wls")


def _ppo(name: str) -> Scheduler:
    from mara_agents.baselines.maskable_ppo import load_scheduler

    scheduler = load_scheduler(CHECKPOINTS / f"{name}.zip")
    scheduler.name = name
    return scheduler


def ppo_slots() -> Scheduler:
    """The slot-set MaskablePPO reading node ids (trained at 4 nodes, 8 slots)."""
    return _ppo("ppo_slots")


def ppo_mlp() -> Scheduler:
    """The MLP MaskablePPO on the sequential event form."""
    return _ppo("ppo_mlp")


def _ippo(name: str) -> Scheduler:
    from coreenv_lab.baselines.ippo import IPPOScheduler

    scheduler = IPPOScheduler.load(CHECKPOINTS / f"{name}.pt")
    scheduler.name = name
    return scheduler


def ippo_live() -> Scheduler:
    """IPPO over live masks at events, reading node ids."""
    return _ippo("ippo_live")


def ippo_sets() -> Scheduler:
    """IPPO over live masks at events, reading the nodes as a set."""
    return _ippo("ippo_sets")
