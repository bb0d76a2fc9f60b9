"""MARA's training run: imitation warm start, then RL, keeping the best policy by selection.

``train_mara(MARATrainConfig(work, out, variant="mara"))`` is one run of the recipe that
trained the shipped checkpoints (docs/mara.md, *Training*): `MARATrainConfig`'s defaults, i.e.
expert iteration on HOP (`ImitationConfig`), then the grouped policy gradient (`MARA_GROUPED`;
``algorithm="ppo"`` runs `MARA_PPO`, PPO with small steps, instead; ``algorithm="held_ppo"``
with ``scratch=True`` is the paper's MAT + PPO from random weights, `MARA_SCRATCH`). All training
is on the ID training runs at the training load (`TRAINING_ENV`), with seeds below the sweep's
evaluation seeds (1,000,000+): imitation 100,000+, RL 200,000+, selection 900,000+. Selection
scores the deterministic policy on the same ``eval_episodes`` episodes each time, paired with
the start policy's scores on them (the imitation policy, or the random one from scratch).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import torch

from coreenv import Decisions, EnvConfig, Predictor, parse_cluster
from coreenv.config import default_arrival_prob
from coreenv.curves import TASK_SETS, resolve_task_set
from coreenv.layout import cluster_columns, slot_width
from mara_agents import seeds
from mara_agents.checks import require
from mara_agents.evaluation import completion_rates, paired_difference
from mara_agents.policy.mat import MAT, MATConfig
from mara_agents.predictors import POLICY_PREDICTORS, make_predictor
from mara_agents.schedulers.mara import MARA, VARIANTS, MARAVariant
from mara_agents.training.grouped import GroupedConfig, GroupedTrainer
from mara_agents.training.held_ppo import HeldPPOConfig, HeldPPOTrainer
from mara_agents.training.imitation import ImitationConfig, warm_start
from mara_agents.training.lanes import rollout_lanes
from mara_agents.training.ppo import PPOConfig, PPOTrainer

__all__ = [
    "ALGORITHMS",
    "MARA_GROUPED",
    "MARA_PPO",
    "MARA_SCRATCH",
    "TRAINING_ENV",
    "MARARun",
    "MARATrainConfig",
    "make_trainer",
    "recipe_network",
    "selection_rates",
    "train_mara",
    "training_env",
    "warm_predictor",
]

TRAINING_ENV = MappingProxyType({"task_set": "id_train", "arrival_prob": default_arrival_prob()})
"""`EnvConfig` fields of every training episode: the ID training runs at the training load."""


def recipe_network(variant: MARAVariant, clusters: Sequence[str]) -> MATConfig:
    """The recipe's MAT for ``variant`` trained on ``clusters``: sets and the cluster's columns
    where the variant reads them, sized to the first cluster (a bad shape raises ValueError)."""
    first = parse_cluster(clusters[0])
    shown = EnvConfig(**{"node_speeds": "uniform", **first}) if variant.reads_cluster else None
    return MATConfig(
        num_nodes=first["num_nodes"],
        num_slots=first["num_slots"],
        sets=variant.sets,
        encoder="slots" if variant.sets else MATConfig.encoder,
        slot_features=slot_width(shown or EnvConfig()),
        cluster_column=-1 if shown is None else cluster_columns(shown).start,
    )


def training_env(cluster: Mapping[str, Any]) -> dict[str, Any]:
    """`TRAINING_ENV` on the cluster of ``cluster`` (`EnvConfig` fields), at its default load."""
    load = default_arrival_prob(cluster.get("num_nodes", 4), cluster.get("node_speeds"))
    return {**TRAINING_ENV, **cluster, "arrival_prob": load}


MARA_PPO = PPOConfig(lr=3e-5, clip=0.1, entropy=0.0)
"""PPO with small steps, a tight clip and no entropy bonus (the
other fields are `PPOConfig`'s defaults: 32 environments × 128 steps, 4 × 4 minibatches, γ 1,
λ 0.95)."""

MARA_GROUPED = GroupedConfig()
"""The grouped policy gradient of the shipped checkpoints (`GroupedConfig`'s defaults)."""

MARA_SCRATCH = HeldPPOConfig()
"""PPO over whole episodes and held decisions from random weights (`HeldPPOConfig`'s defaults:
MAT's published settings where they apply; studies/learnability/REPORT.md, *Learning from
scratch*)."""

ALGORITHMS = ("grouped", "ppo", "held_ppo")
"""The RL stages `MARATrainConfig.algorithm` chooses from."""

LONGEST_WARM_PREFIX = 360
"""Longest prefix whose FM futures are sampled ahead (the shipped runs' value): a task's demand is
at most the 35% point of a 1,000-batch curve, 350 batches, so longer prefixes are (almost) never
asked about; any that are get sampled on demand."""

_flush_print = functools.partial(print, flush=True)


@dataclass(frozen=True)
class MARATrainConfig:
    """One MARA training run (defaults: the recipe of the shipped checkpoints)."""

    work: Path
    """Folder of the resumable training state (``checkpoint.pt``), ``history.json``, and the
    policy the RL stage starts from (``start.pt``)."""
    out: Path
    """Where the best policy so far is written (`MARA.save`)."""
    variant: str = "mara"
    """The `VARIANTS` entry trained: its predictor and shaping β."""
    shaping_beta: float | None = None
    """Overrides the variant's β when set."""
    predictor: str | None = None
    """Overrides the variant's predictor when set (a name in `predictors.POLICY_PREDICTORS`): what the
    policy reads, the teacher plans on, and its checkpoint records."""
    minutes: float = 60.0
    """RL wall-time budget, counted across resumed runs."""
    max_updates: int | None = None
    """Stop after this many RL updates (None: only the time budget stops the run)."""
    algorithm: str = "grouped"
    """The RL stage: "grouped" (`GroupedTrainer`), "ppo" (`PPOTrainer`, `MARA_PPO`) or
    "held_ppo" (`HeldPPOTrainer`, PPO over whole episodes and held decisions)."""
    grouped: GroupedConfig = MARA_GROUPED
    """Grouped policy-gradient settings (``algorithm="grouped"``)."""
    ppo: PPOConfig = MARA_PPO
    """PPO settings (``algorithm="ppo"``)."""
    held: HeldPPOConfig = MARA_SCRATCH
    """Held-decision PPO settings (``algorithm="held_ppo"``)."""
    imitation: ImitationConfig = ImitationConfig()
    """The warm start."""
    init: Path | None = None
    """Start the RL stage from this MARA checkpoint's policy instead of the warm start (a
    `MARA.save` file, e.g. another run's ``start.pt``, that reads the run's predictor, `observed`);
    None: the warm start, or random weights with ``scratch``."""
    scratch: bool = False
    """Start the RL stage from the random initial weights (no imitation, no ``init``)."""
    max_steps: int | None = None
    """Stop once the RL stage has played this many environment steps (None: no such limit)."""
    quantiles: tuple[float, ...] = ()
    """Levels of `EnvConfig.estimate_quantiles` the policy reads (one slot column each; ``mat``
    must have ``slot_features`` 9 + their number). Empty: the point estimates only."""
    information: str | None = None
    """Overrides the variant's `EnvConfig.information` of the training and selection episodes
    when set: past ``"prefix"`` the policy also reads the category columns
    (``mat.slot_features`` 2 more, for the default ``kind_fields``), and a predictor that reads
    context gets it."""
    warm_history: int = 0
    """`EnvConfig.warm_history` of the training and selection episodes."""
    clusters: tuple[str, ...] = ("4/8 equal",)
    """The clusters of the training and selection episodes, each written ``"M/K name"``
    (`coreenv.parse_cluster`), each at its default load (the training load per unit of speed).
    Several clusters need a network that reads sets (``mat.sets``): imitation shares its
    episodes out among them, the grouped stage's update u plays cluster ``u mod n``, and
    selection plays ``ceil(eval_episodes / n)`` episodes of each. A network that reads the
    cluster (``mat.cluster_column`` >= 0) is shown it on every cluster, equal nodes as speeds
    of 1; a cluster whose nodes differ or charge for moves needs such a network."""
    mat: MATConfig = MATConfig()
    """The network."""
    critic_warmup: int = 20
    """First PPO updates that train only the value head (``algorithm="ppo"``)."""
    eval_every: int = 5
    """RL updates between selection evaluations (and saves of the training state)."""
    eval_episodes: int = 100
    """Episodes of each selection evaluation (the same ones each time)."""
    env_seed: int = seeds.RL
    """Seed of the first RL episode."""
    task_set: str = TRAINING_ENV["task_set"]
    """Task set of the training and selection episodes (e.g. ``"corpus_train"``: every kind of
    training in the curve corpus)."""
    selection_seed: int = seeds.SELECTION
    """Seed of the first selection episode (the same episodes at every evaluation)."""
    seed: int = 0
    """Seeds the network's initial weights."""
    device: str = "cpu"
    """Where the network runs ("cuda" works)."""

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise ValueError(
                f"MARATrainConfig.algorithm must be one of {ALGORITHMS}, got {self.algorithm!r}."
            )
        if self.variant not in VARIANTS:
            raise ValueError(
                f"MARATrainConfig.variant must be one of {sorted(VARIANTS)}, got {self.variant!r}."
            )
        if self.shaping_beta is not None and self.shaping_beta < 0:
            raise ValueError(
                f"MARATrainConfig.shaping_beta must be None or >= 0, got {self.shaping_beta!r}."
            )
        if self.predictor is not None and self.predictor not in POLICY_PREDICTORS:
            raise ValueError(
                f"MARATrainConfig.predictor must be None or one of {sorted(POLICY_PREDICTORS)}, "
                f"got {self.predictor!r}."
            )
        if self.task_set not in TASK_SETS:
            raise ValueError(
                f"MARATrainConfig.task_set must be one of {sorted(TASK_SETS)}, "
                f"got {self.task_set!r}."
            )
        require(self, ">= 1", ("eval_every", "eval_episodes"))
        require(self, ">= 0", ("critic_warmup",))
        if self.scratch and self.init is not None:
            raise ValueError(
                f"MARATrainConfig: scratch starts from random weights, init from {self.init}; "
                "choose one."
            )
        if self.max_steps is not None and self.max_steps < 0:
            raise ValueError(
                f"MARATrainConfig.max_steps must be None or >= 0, got {self.max_steps!r}."
            )
        if self.max_updates is not None and self.max_updates < 0:
            raise ValueError(
                f"MARATrainConfig.max_updates must be None or >= 0, got {self.max_updates!r}."
            )
        try:
            envs = [EnvConfig(**env) for env in self.envs]
        except ValueError as e:
            raise ValueError(f"MARATrainConfig.clusters: {e}") from None
        if not envs:
            raise ValueError("MARATrainConfig.clusters must name at least one cluster.")
        if len(envs) > 1 and not self.mat.sets:
            raise ValueError(
                f"MARATrainConfig: {len(envs)} clusters need a network that reads sets "
                "(mat.sets)."
            )
        if len(envs) > 1 and self.algorithm != "grouped":
            raise ValueError(
                f"MARATrainConfig: algorithm {self.algorithm!r} trains on one cluster only; "
                "'grouped' trains on several."
            )
        for shape, env in zip(self.clusters, envs):
            self._check_network(shape, env)
        first = envs[0]
        if (self.mat.num_nodes, self.mat.num_slots) != (first.num_nodes, first.num_slots):
            raise ValueError(
                f"MARATrainConfig.mat must record the first cluster's {first.num_nodes} nodes "
                f"and {first.num_slots} slots, got {self.mat.num_nodes} and {self.mat.num_slots}."
            )

    def _check_network(self, shape: str, env: EnvConfig) -> None:
        """Refuse a network that cannot read the observations of cluster ``shape``."""
        column = cluster_columns(env).start if env.cluster_shown else -1
        if env.cluster_shown and not (self.mat.sets and self.mat.cluster_column == column):
            raise ValueError(
                f"MARATrainConfig: on the cluster {shape!r} the network must read sets with "
                f"cluster_column {column}, got sets={self.mat.sets} and cluster_column "
                f"{self.mat.cluster_column}."
            )
        if self.mat.slot_features != slot_width(env):
            raise ValueError(
                f"MARATrainConfig.mat reads {self.mat.slot_features} columns per slot; the "
                f"training environment with quantiles {self.quantiles} and information "
                f"{self.shown!r} has {slot_width(env)}."
            )

    @property
    def decisions(self) -> Decisions | None:
        """The decision form of the RL stage, the one the policy is judged and shipped in: at
        events for the stages that hold decisions, every step (None) for ``"ppo"``."""
        held = {"grouped": self.grouped, "held_ppo": self.held}.get(self.algorithm)
        if held is None:
            return None
        return Decisions("events", hold=held.hold, feasibility=held.feasibility)

    @property
    def envs(self) -> tuple[dict[str, Any], ...]:
        """`EnvConfig` fields of each cluster's training episodes: `TRAINING_ENV` on
        ``task_set``, the cluster at its default load (`coreenv.default_arrival_prob`)."""
        base: dict[str, Any] = {"task_set": self.task_set}
        if self.quantiles:
            base["estimate_quantiles"] = tuple(self.quantiles)
        if self.shown != "prefix":
            base["information"] = self.shown
        if self.warm_history:
            base["warm_history"] = self.warm_history
        envs = []
        for shape in self.clusters:
            cluster = parse_cluster(shape)
            if self.mat.cluster_column >= 0:  # a network that reads the cluster is shown it
                cluster.setdefault("node_speeds", "uniform")
            envs.append(training_env(cluster) | base)
        return tuple(envs)

    @property
    def beta(self) -> float:
        """The shaping β trained with: the override, else the variant's."""
        if self.shaping_beta is not None:
            return self.shaping_beta
        return VARIANTS[self.variant].shaping_beta

    @property
    def shown(self) -> str:
        """The information model trained on: the override, else the variant's."""
        return self.information or VARIANTS[self.variant].information

    @property
    def observed(self) -> str:
        """The predictor trained with: the override, else the variant's."""
        return self.predictor or VARIANTS[self.variant].predictor


@dataclass
class MARARun:
    """What `train_mara` returns."""

    best: float
    """The best selection completion rate, that of the policy in ``out``."""
    history: list[dict]
    """One entry per imitation round and per selection evaluation."""
    out: Path
    """Where the best policy is."""


def warm_predictor(
    name: str,
    log: Callable[[str], None] = _flush_print,
    task_set: str = TRAINING_ENV["task_set"],
) -> Predictor:
    """The predictor ``name``; FM gets the futures of every prefix of ``task_set`` sampled once.

    With every estimate served from the cache, a run (and its resumption) does not depend on the
    order of queries.
    """
    predictor = make_predictor(name)
    if hasattr(predictor, "warm"):  # a flow-matching predictor
        bank = resolve_task_set(task_set)
        shortest = EnvConfig(**TRAINING_ENV).min_prefix
        prefixes = [
            bank.curve(i).losses[: n + 1]
            for i in range(len(bank))
            for n in range(shortest, LONGEST_WARM_PREFIX + 1)
        ]
        start = time.perf_counter()
        predictor.warm(prefixes)
        seconds = time.perf_counter() - start
        log(f"sampled the futures of {len(prefixes)} prefixes in {seconds:.0f} s")
    return predictor


def selection_rates(
    model: MAT,
    predictor: Predictor,
    episodes: int,
    seed: int,
    envs: Sequence[Mapping[str, Any]] = (TRAINING_ENV,),
    decisions: Decisions | None = None,
) -> np.ndarray:
    """Completion rates of the deterministic policy on training episodes from ``seed``.

    ``envs``: the `EnvConfig` fields of each cluster's episodes (`MARATrainConfig.envs`), each
    playing ``ceil(episodes / len(envs))`` of them, their rates in cluster order; ``decisions``:
    the form the policy plays in. Leaves the model on the CPU in evaluation mode.
    """
    model.eval()
    each = -(-episodes // len(envs))
    rates = []
    for env in envs:
        policy = MARA.reading(model.cpu(), predictor, EnvConfig(**env), decisions)
        rates.append(completion_rates(policy, each, seed, **env))
    return np.concatenate(rates)


def make_trainer(
    config: MARATrainConfig, model: MAT, predictor: Predictor
) -> GroupedTrainer | PPOTrainer | HeldPPOTrainer:
    """The RL stage of ``config``, starting from ``model`` (the grouped one anchored to it)."""
    envs = [{**env, "shaping_beta": config.beta} for env in config.envs]
    if config.algorithm == "grouped":
        grouped = config.grouped
        return GroupedTrainer(model, predictor, grouped, envs, config.env_seed, config.device)
    env = envs[0]  # the other stages train on one cluster
    if config.algorithm == "held_ppo":
        return HeldPPOTrainer(model, predictor, config.held, env, config.env_seed, config.device)
    lanes = rollout_lanes(config.ppo.envs, config.env_seed, predictor, **env)
    return PPOTrainer(model, lanes, config.ppo, config.device, config.critic_warmup)


def check_init(config: MARATrainConfig) -> None:
    """Refuse an ``init`` checkpoint of another predictor, quantile layout or network (cheap)."""
    state = torch.load(config.init, map_location="cpu", weights_only=True)
    if state["predictor"] != config.observed:
        raise ValueError(
            f"MARATrainConfig.init {config.init} reads the predictor {state['predictor']!r}; "
            f"the run trains on {config.observed!r}."
        )
    levels = tuple(state.get("estimate_quantiles", ()))
    if levels != tuple(config.quantiles):
        raise ValueError(
            f"MARATrainConfig.init {config.init} reads the quantile levels {levels}; "
            f"the run's are {config.quantiles}."
        )
    network = MATConfig(**state["mat_config"])
    if network != config.mat:
        raise ValueError(
            f"MARATrainConfig.init {config.init} holds a MAT of {network}, "
            f"not the configured {config.mat}."
        )


RESUMABLE = frozenset({"work", "out", "minutes", "max_updates", "max_steps", "device"})
"""`MARATrainConfig` fields a resumed run may change; any other must match its checkpoint."""


def run_settings(config: MARATrainConfig) -> dict[str, str]:
    """The fields that define a run (all but `RESUMABLE`), as text, kept in its checkpoint."""
    return {
        f.name: repr(getattr(config, f.name))
        for f in dataclasses.fields(config)
        if f.name not in RESUMABLE
    }


def train_mara(config: MARATrainConfig, log: Callable[[str], None] = _flush_print) -> MARARun:
    """Train (or resume training) one MARA variant; see the module docstring.

    A run that finds ``config.work/checkpoint.pt`` resumes from it (the training state is saved
    at each selection evaluation) and continues bit for bit; otherwise it starts with the warm
    start and writes its policy to ``config.out``. The wall-time budget counts across runs.
    """
    checkpoint = config.work / "checkpoint.pt"
    state = None
    if checkpoint.exists():
        state = torch.load(checkpoint, map_location="cpu", weights_only=False)
        stored = state.get("settings", {})  # absent in checkpoints before package 0.4
        changed = sorted(k for k, v in stored.items() if run_settings(config).get(k) != v)
        if changed:
            raise ValueError(
                f"{checkpoint} was trained with other {changed} "
                f"({', '.join(f'{k}={stored[k]}' for k in changed)}); resume with the same "
                "settings or use a fresh work folder."
            )
    elif config.init is not None:
        check_init(config)
    with torch.random.fork_rng(devices=[]):  # the initial weights, from the seed alone
        torch.manual_seed(config.seed)
        # FM's network draws first (as shipped)
        predictor = warm_predictor(config.observed, log, config.task_set)
        model = MAT(config.mat)

    judged: list[np.ndarray] = []  # the selection scores so far, in order

    def judge(policy: MAT) -> np.ndarray:
        judged.append(
            selection_rates(
                policy,
                predictor,
                config.eval_episodes,
                config.selection_seed,
                config.envs,
                config.decisions,
            )
        )
        return judged[-1]

    def write_policy(history: list[dict], path: Path = config.out) -> None:
        policy = MARA.reading(model, predictor, EnvConfig(**config.envs[0]), config.decisions)
        policy.save(path, config.observed, config.beta, history)
        model.train()

    if state is not None:
        trainer = make_trainer(config, model, predictor)
        trainer.load_state_dict(state["trainer"])
        history, best, spent = state["history"], state["best"], state["minutes"]
        start_rates = state["start_rates"]
        log(f"resumed from {checkpoint}: update {trainer.updates}, {spent:.1f} min spent")
    else:
        if config.init is None and not config.scratch:
            history = warm_start(
                model, predictor, config.imitation, config.envs, judge, config.device, log
            )
        else:
            if config.scratch:
                start = {"phase": "scratch", "seed": config.seed}
                log(f"starting the RL stage from random weights (seed {config.seed})")
            else:
                start_policy = MARA.pretrained(config.variant, path=config.init).policy
                model.load_state_dict(start_policy.state_dict())
                start = {"phase": "init", "path": str(config.init)}
                log(f"starting the RL stage from {config.init}")
            judge(model)
            history = [start]
        start_rates = judged[-1]  # the warm start's last round judged this very policy
        history.append(
            {
                "phase": "start",
                "steps": 0,
                "eval": float(start_rates.mean()),
                "rates": start_rates.tolist(),
            }
        )
        best = float(start_rates.mean())
        write_policy(history)
        write_policy(history, config.work / "start.pt")  # the RL stage's start, kept
        trainer = make_trainer(config, model, predictor)
        spent = 0.0
    config.work.mkdir(parents=True, exist_ok=True)

    def select(stats: dict[str, float], best: float) -> float:
        """Judge the policy, record it, keep it if best, save the training state; the best."""
        rates = judge(model)
        model.to(config.device).train()
        gain, se = paired_difference(start_rates, rates)
        history.append(
            {
                "phase": config.algorithm,
                "update": trainer.updates,
                "steps": trainer.env_steps,
                "eval": float(rates.mean()),
                "gain": gain,
                "gain_se": se,
                "rates": rates.tolist(),  # per selection episode, for paired curves
                **stats,
            }
        )
        if rates.mean() > best:
            best = float(rates.mean())
            write_policy(history)
        write_policy(history, config.work / "last.pt")  # for learning curves' final policy
        (config.work / "history.json").write_text(json.dumps(history, indent=1))
        log(
            f"  eval {100 * rates.mean():.2f}% on {len(rates)} episodes: "
            f"{100 * gain:+.2f} ± {100 * se:.2f} over the start policy (best {100 * best:.2f}%)"
        )
        torch.save(
            {
                "trainer": trainer.state_dict(),
                "history": history,
                "best": best,
                "start_rates": start_rates,
                "minutes": (time.perf_counter() - began) / 60,
                "settings": run_settings(config),
            },
            checkpoint,
        )
        return best

    began = time.perf_counter() - 60 * spent
    judged_at = trainer.updates  # a checkpoint is written where a selection judged the policy
    stats: dict[str, float] = {}
    while (
        (time.perf_counter() - began) / 60 < config.minutes
        and (config.max_updates is None or trainer.updates < config.max_updates)
        and (config.max_steps is None or trainer.env_steps < config.max_steps)
    ):
        stats = trainer.iterate()
        log(
            f"update {trainer.updates}  steps {trainer.env_steps}  "
            + "  ".join(f"{key} {value:.3f}" for key, value in stats.items())
            + f"  ({(time.perf_counter() - began) / 60:.1f} min)"
        )
        if trainer.updates % config.eval_every == 0:
            best = select(stats, best)
            judged_at = trainer.updates
    if trainer.updates != judged_at:  # the run stopped between evaluations: judge where it ended
        best = select(stats, best)
    (config.work / "history.json").write_text(json.dumps(history, indent=1))
    return MARARun(best, history, config.out)
