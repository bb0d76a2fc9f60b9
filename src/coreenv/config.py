"""`EnvConfig`: every setting of a CoRE-Learning episode, validated once at construction."""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
from dataclasses import dataclass
from typing import Any

from coreenv.checks import checked_count, is_int, is_number
from coreenv.context import INFORMATION_MODELS
from coreenv.curves import CurveSource
from coreenv.errors import ConfigError

__all__ = [
    "INVALID_ACTION_POLICIES",
    "ADMISSION_RULES",
    "INFORMATION_MODELS",
    "MAX_QUANTILE_LEVELS",
    "SCENARIO_NAMES",
    "SPEED_MIXES",
    "CLUSTERS",
    "ARRIVAL_PER_SPEED",
    "REFERENCE_CAPACITY",
    "EnvConfig",
    "capacity_load",
    "check_arrival_prob",
    "parse_cluster",
    "default_arrival_prob",
    "make_config",
    "node_speeds_of",
]

INVALID_ACTION_POLICIES = ("idle", "raise")
SPEED_MIXES = {"uniform": (1,), "two_speed": (1, 2), "mixed": (1, 1, 2, 4)}
"""Named node-speed mixes (`EnvConfig.node_speeds`): a pattern of speeds repeated over the nodes,
so that one name serves every cluster size ("mixed" at 8 nodes is 1, 1, 2, 4, 1, 1, 2, 4)."""
CLUSTERS = {
    "equal": {},
    "mixed_speeds": {"node_speeds": "mixed"},
    "costly_moves": {"switch_cost": 5},
    "mixed_costly": {"node_speeds": "mixed", "switch_cost": 5},
}
"""Named cluster scenarios (``coreenv sweep --cluster``): the `EnvConfig` fields of their nodes.
"equal" is the default cluster: equal nodes, tasks move for free."""
SCENARIO_NAMES = ("default", "infeasible_stress")
"""The scenarios `EnvConfig.scenario` may name (`coreenv.episodes.scenarios.SCENARIOS`)."""
ADMISSION_RULES = ("fifo", "edf")
MAX_QUANTILE_LEVELS = 9  # keeps a slot block at most twice its width without quantiles


@dataclass(frozen=True)
class EnvConfig:
    """Settings of the CoRE-Learning environment (design §2). Frozen: derive variants by `replace`.

    Every field is public and stable; `docs/environment.md` explains each default.
    """

    num_nodes: int = 4
    """M, the number of compute nodes (the agents)."""
    num_slots: int = 8
    """K, the number of task slots in the active set; tasks beyond it wait in a queue."""
    arrival_prob: float | None = None
    """p, the Bernoulli probability that a task arrives at a step (default scenario). None
    (default): the cluster's default load, `default_arrival_prob` (0.04 at four equal nodes)."""
    arrival_horizon: int = 1000
    """Steps during which tasks may arrive; the episode ends after it, once no task remains."""
    deadline_window: tuple[int, int] = (150, 400)
    """Inclusive range of d_k - b_k in steps, drawn uniformly and independently of the demand."""
    target_fraction: tuple[float, float] = (0.03, 0.35)
    """Target = the curve's running minimum at a uniform fraction (in this range) of its length."""
    batches_per_step: int = 1
    """Batches a served task trains per step on a node of speed 1."""
    min_prefix: int = 10
    """W_min: observed batches after which a task is prediction-ready."""
    shaping_beta: float = 0.0
    """beta of the log-progress potential shaping; 0 gives the plain success reward."""
    invalid_action: str = "idle"
    """What an empty-slot or conflicting action does: "idle" (the node idles) or "raise"."""
    admission: str = "fifo"
    """Order in which waiting tasks fill free slots: "fifo" (arrival) or "edf" (deadline)."""
    scenario: str = "default"
    """"default" (Bernoulli arrivals) or "infeasible_stress" (design §2's fixed 20-task test)."""
    task_set: Any = "id_train"
    """Where curves come from: a name ("id_train", "id", "rl_ood", "vit_ood", "synthetic",
    "live"), a path to a bank `.npz` or to a CSV of training logs (`bank_from_csv`), a `CurveBank`
    or a `CurveSource`. The default is the ID *training* runs, so code that trains on the
    defaults never sees the test runs (``"id"``)."""
    seed: int | None = None
    """Seed used by the first `reset()` that is given none."""
    max_steps: int | None = None
    """Safety truncation; None derives a bound no episode reaches (horizon + longest window + 1)."""
    estimate_quantiles: tuple[float, ...] = ()
    """Quantile levels, strictly increasing in (0, 1), at most `MAX_QUANTILE_LEVELS`: each adds a
    slot feature, the predictor's quantile of the remaining batches (it needs
    ``estimate_quantiles``). Empty (default): no such features."""
    information: str = "prefix"
    """What schedulers may read of a task (`coreenv.context`): ``"prefix"`` (default) its revealed
    losses alone; ``"description"`` also what it is (its run's config: a `Description` in the
    view and the predictor's context, category ids in the observation); ``"history"`` also the
    tasks its episode has finished, their revealed losses and outcomes (`FinishedTask`)."""
    warm_history: int = 0
    """At ``information="history"``: tasks of earlier episodes of the same stream that each
    episode's history starts with (what the cluster kept from before), drawn after the
    episode's own tasks as the scenario draws a task, each trained alone until it reached its
    target (completed) or its deadline window ran out (failed)."""
    kind_fields: tuple[str, ...] = ("family", "optimizer")
    """Description fields shown in the observation, a slot column each, once ``information`` is
    not ``"prefix"``: the task's category id for that field, numbered within its episode in the
    order values first arrive (1, 2, ...; 0 where the task's description lacks the field)."""
    node_speeds: tuple[int, ...] | str | None = None
    """Each node's speed, an int >= 1: node i trains ``node_speeds[i] * batches_per_step``
    batches per step. A tuple of M speeds, a name of `SPEED_MIXES`, or None (default): every
    node speed 1, and the observation as without the option. Read the speeds as `speeds`."""
    switch_cost: int = 0
    """Steps a task loses when it resumes: trained on a node other than the one it last trained
    on, or after a step without training, its node first spends ``switch_cost`` steps restoring
    it (training nothing) before it trains again. A task's first training costs nothing."""

    def __post_init__(self) -> None:
        _check_int(self, "num_nodes", minimum=1)
        _check_int(self, "num_slots", minimum=1)
        _check_int(self, "arrival_horizon", minimum=1)
        _check_pair(self, "deadline_window", int, minimum=1)
        _check_pair(self, "target_fraction", float, minimum=0.0, maximum=1.0, open_low=True)
        _check_int(self, "batches_per_step", minimum=1)
        _check_int(self, "min_prefix", minimum=1)
        _check_float(self, "shaping_beta", 0.0, float("inf"))
        _check_choice(self, "invalid_action", INVALID_ACTION_POLICIES)
        _check_choice(self, "admission", ADMISSION_RULES)
        _check_choice(self, "scenario", SCENARIO_NAMES)
        _check_task_set(self.task_set)
        if self.seed is not None:
            _check_int(self, "seed", minimum=0)
        if self.max_steps is not None:
            _check_int(self, "max_steps", minimum=1)
        _check_levels(self, "estimate_quantiles", MAX_QUANTILE_LEVELS)
        _check_choice(self, "information", INFORMATION_MODELS)
        _check_int(self, "warm_history", minimum=0)
        if self.warm_history and self.information != "history":
            raise ConfigError(
                f"EnvConfig.warm_history={self.warm_history} needs information='history', got "
                f"information={self.information!r}."
            )
        _check_fields(self, "kind_fields")
        _check_speeds(self)
        _check_int(self, "switch_cost", minimum=0)
        _check_slots_cover_nodes(self)
        if self.arrival_prob is None:  # marked, so that `replace` keeps following the cluster
            object.__setattr__(self, "_default_load", True)
            load = default_arrival_prob(self.num_nodes, self.node_speeds)
        else:
            load = check_arrival_prob(self.arrival_prob)
        object.__setattr__(self, "arrival_prob", load)

    def replace(self, **overrides: Any) -> EnvConfig:
        """Return a copy with some fields changed (validated like the constructor).

        A config on the default load keeps it: ``EnvConfig().replace(num_nodes=8)`` is
        ``EnvConfig(num_nodes=8)``, whose `arrival_prob` is the 8-node cluster's default.
        """
        _check_names(overrides)
        return dataclasses.replace(self, **_keeping_default_load(self, overrides))

    @property
    def speeds(self) -> tuple[int, ...]:
        """Each node's speed (`node_speeds` resolved): M ints, all 1 without the option."""
        return node_speeds_of(self.num_nodes, self.node_speeds)

    @property
    def capacity(self) -> int:
        """The cluster's total speed: batches per step (in `batches_per_step`) it can train."""
        return sum(self.speeds)

    @property
    def fastest_batches(self) -> int:
        """Batches per step of the fastest node: a task's budget is counted at this rate."""
        return self.batches_per_step * max(self.speeds)

    @property
    def cluster_shown(self) -> bool:
        """Whether the observation shows the cluster (node speeds, each slot's last node).

        Once `node_speeds` or `switch_cost` is set; without them the layout is as before.
        """
        return self.node_speeds is not None or self.switch_cost > 0

    @property
    def time_scale(self) -> int:
        """Steps that scale time-like observation features (the longest deadline window)."""
        return self.deadline_window[1]


def make_config(config: EnvConfig | None = None, **overrides: Any) -> EnvConfig:
    """Build an `EnvConfig` from an optional base and keyword overrides, naming unknown keys."""
    _check_names(overrides)
    base = EnvConfig() if config is None else config
    if not isinstance(base, EnvConfig):
        raise ConfigError(f"config must be an EnvConfig, got {type(base).__name__}: {base!r}.")
    return base.replace(**overrides) if overrides else base


# --- the default load --------------------------------------------------------------------------

ARRIVAL_PER_SPEED = 0.01
"""The default arrival probability per unit of node speed: the paper's p = 0.04 on its four
equal nodes. Every cluster's default load (`default_arrival_prob`) keeps this rate, so that a
bigger or faster cluster is as contended as the paper's."""
REFERENCE_CAPACITY = 4
"""Total speed of the paper's cluster (four nodes of speed 1), at which loads are quoted."""


def parse_cluster(shape: str) -> dict[str, Any]:
    """The `EnvConfig` fields of a cluster written ``"M/K name"``: ``"8/16 mixed_costly"``.

    M nodes, K slots (``"M"`` alone: K = 2 M) and a name of `CLUSTERS` (omitted: ``"equal"``).
    This is how commands and results name a cluster; a bad shape raises `ConfigError`.
    """
    size, _, name = str(shape).strip().partition(" ")
    nodes, _, slots = size.partition("/")
    name = name.strip() or "equal"
    if not (nodes.isdigit() and (slots.isdigit() or not slots) and int(nodes) >= 1):
        raise ConfigError(
            f"a cluster is written 'M/K name' (e.g. '8/16 mixed_costly'), got {shape!r}."
        )
    if name not in CLUSTERS:
        raise ConfigError(f"cluster {shape!r}: the name must be one of {tuple(CLUSTERS)}.")
    fields = {"num_nodes": int(nodes), "num_slots": int(slots or 2 * int(nodes))}
    return fields | CLUSTERS[name]


def node_speeds_of(num_nodes: int, node_speeds: tuple[int, ...] | str | None) -> tuple[int, ...]:
    """Each of ``num_nodes`` nodes' speed, from an `EnvConfig.node_speeds` value (checked)."""
    if node_speeds is None:
        return (1,) * num_nodes
    if isinstance(node_speeds, str) and node_speeds in SPEED_MIXES:
        pattern = SPEED_MIXES[node_speeds]
        return tuple(pattern[i % len(pattern)] for i in range(num_nodes))
    if (
        isinstance(node_speeds, (tuple, list))
        and len(node_speeds) == num_nodes
        and all(is_int(v) and v >= 1 for v in node_speeds)
    ):
        return tuple(int(v) for v in node_speeds)
    raise ConfigError(
        f"EnvConfig.node_speeds must be None, one of {tuple(SPEED_MIXES)} or a tuple of "
        f"num_nodes={num_nodes} ints >= 1, got {node_speeds!r}."
    )


def capacity_load(
    arrival_prob: float, num_nodes: int, node_speeds: tuple[int, ...] | str | None = None
) -> float:
    """The arrival probability that loads each unit of speed of a cluster as ``arrival_prob``
    loads the paper's four equal nodes: ``arrival_prob`` times the cluster's total speed / 4.

    Rounded to 6 decimals, so the paper's loads stay the same floats (0.04 at 4 equal nodes,
    0.08 at 8, 0.16 at 8 "mixed" nodes of total speed 16). Raises `ConfigError` if the result
    is not a probability.
    """
    check_arrival_prob(arrival_prob, "capacity_load's arrival_prob")
    capacity = sum(node_speeds_of(num_nodes, node_speeds))
    load = round(float(arrival_prob) * capacity / REFERENCE_CAPACITY, 6)
    return check_arrival_prob(
        load, f"the load {arrival_prob} at 4 nodes scaled to total speed {capacity}"
    )


def default_arrival_prob(
    num_nodes: int = 4, node_speeds: tuple[int, ...] | str | None = None
) -> float:
    """A cluster's default arrival probability: `ARRIVAL_PER_SPEED` times its total speed.

    0.04 at four equal nodes (the paper's setting, bit for bit), 0.08 at eight, 0.16 at the
    eight "mixed" nodes (speeds 1, 1, 2, 4 twice).
    """
    return capacity_load(ARRIVAL_PER_SPEED * REFERENCE_CAPACITY, num_nodes, node_speeds)


# --- validation helpers ------------------------------------------------------------------------


def check_arrival_prob(value: Any, name: str = "EnvConfig.arrival_prob") -> float:
    """``value`` as an arrival probability p: a finite real number in [0, 1], as a float.

    The one rule for p wherever it is given (`EnvConfig`, a sweep's grid, the commands); p = 0
    is an episode without arrivals. Raises `ConfigError` naming ``name``, the value and the range.
    """
    if not is_number(value) or not math.isfinite(value) or not 0.0 <= float(value) <= 1.0:
        raise ConfigError(f"{name} must be a finite number in [0.0, 1.0], got {value!r}.")
    return float(value)


_FIELD_NAMES = tuple(f.name for f in dataclasses.fields(EnvConfig))


def _check_names(overrides: dict[str, Any]) -> None:
    for name in overrides:
        if name not in _FIELD_NAMES:
            close = difflib.get_close_matches(name, _FIELD_NAMES, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"EnvConfig has no field {name!r}.{hint} Fields: {_FIELD_NAMES}.")


def _check_int(cfg: EnvConfig, name: str, minimum: int) -> None:
    value = checked_count(getattr(cfg, name), f"EnvConfig.{name}", minimum, error=ConfigError)
    object.__setattr__(cfg, name, value)


def _check_float(cfg: EnvConfig, name: str, low: float, high: float) -> None:
    value = getattr(cfg, name)
    if not is_number(value) or not math.isfinite(value) or not low <= float(value) <= high:
        raise ConfigError(
            f"EnvConfig.{name} must be a finite number in [{low}, {high}], got {value!r}."
        )
    object.__setattr__(cfg, name, float(value))


def _check_pair(
    cfg: EnvConfig,
    name: str,
    kind: type,
    minimum: float,
    maximum: float | None = None,
    open_low: bool = False,
) -> None:
    value = getattr(cfg, name)
    ok_item = is_int if kind is int else is_number
    problem = None
    if not isinstance(value, (tuple, list)) or len(value) != 2 or not all(map(ok_item, value)):
        problem = f"a pair of {kind.__name__}s (low, high)"
    else:
        low, high = value
        too_low = low <= minimum if open_low else low < minimum
        if too_low or low > high or (maximum is not None and high > maximum):
            bound = f"{minimum} < low" if open_low else f"{minimum} <= low"
            top = f" <= {maximum}" if maximum is not None else ""
            problem = f"a pair with {bound} <= high{top}"
    if problem:
        raise ConfigError(f"EnvConfig.{name} must be {problem}, got {value!r}.")
    object.__setattr__(cfg, name, tuple(kind(v) for v in value))


def _check_levels(cfg: EnvConfig, name: str, most: int) -> None:
    value = getattr(cfg, name)
    ok = (
        isinstance(value, (tuple, list))
        and len(value) <= most
        and all(is_number(v) and 0.0 < v < 1.0 for v in value)
        and all(low < high for low, high in zip(value, value[1:]))
    )
    if not ok:
        raise ConfigError(
            f"EnvConfig.{name} must be a tuple of at most {most} strictly increasing levels in "
            f"(0, 1), got {value!r}."
        )
    object.__setattr__(cfg, name, tuple(float(v) for v in value))


def _check_fields(cfg: EnvConfig, name: str) -> None:
    value = getattr(cfg, name)
    ok = (
        isinstance(value, (tuple, list))
        and all(isinstance(v, str) and v for v in value)
        and len(set(value)) == len(value)
    )
    if not ok:
        raise ConfigError(
            f"EnvConfig.{name} must be a tuple of distinct non-empty field names, got {value!r}."
        )
    object.__setattr__(cfg, name, tuple(value))


def _check_speeds(cfg: EnvConfig) -> None:
    value = cfg.node_speeds
    speeds = node_speeds_of(cfg.num_nodes, value)
    if isinstance(value, (tuple, list)):
        object.__setattr__(cfg, "node_speeds", speeds)


def _check_slots_cover_nodes(cfg: EnvConfig) -> None:
    """Each slot's task trains on one node at a time, so nodes beyond K would idle for ever."""
    if cfg.num_slots < cfg.num_nodes:
        raise ConfigError(
            f"EnvConfig.num_slots={cfg.num_slots} is fewer than num_nodes={cfg.num_nodes}: a "
            f"slot's task trains on one node at a time, so {cfg.num_nodes - cfg.num_slots} "
            "node(s) would idle for ever. Give num_slots >= num_nodes (the default cluster has "
            "num_slots = 2 * num_nodes)."
        )


def _keeping_default_load(cfg: EnvConfig, overrides: dict[str, Any]) -> dict[str, Any]:
    """``overrides`` for `EnvConfig.replace`: a config on the default load stays on it."""
    if cfg.__dict__.get("_default_load") and "arrival_prob" not in overrides:
        return {**overrides, "arrival_prob": None}
    return overrides


def _check_choice(cfg: EnvConfig, name: str, choices: tuple[str, ...]) -> None:
    value = getattr(cfg, name)
    if value not in choices:
        raise ConfigError(f"EnvConfig.{name} must be one of {choices}, got {value!r}.")


def _check_task_set(value: Any) -> None:
    if isinstance(value, (str, os.PathLike, CurveSource)):
        return
    raise ConfigError(
        "EnvConfig.task_set must be a task-set name, a path to a bank .npz or a CSV, a CurveBank "
        f"or a CurveSource, got {type(value).__name__}: {value!r}."
    )
