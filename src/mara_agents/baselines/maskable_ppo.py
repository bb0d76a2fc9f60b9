"""Plain PPO from scratch: sb3-contrib's `MaskablePPO` on the environment's forms, as schedulers.

The baseline an RL researcher asks for first: a generic learner over the global state
(`coreenv.CoreEnv.state`, WLS estimates in the slot features), trained on the ID training runs at
p = 0.04 with the environment's own reward (unshaped unless ``shaping_beta`` says otherwise), in
one of two action forms (``form``):

- ``"joint"``: one ``MultiDiscrete`` action of every node's slot on the SB3 vector form, with
  MaskablePPO's per-node masks (the every-step baseline; its heads cannot say "distinct slots");
- ``"sequential"``: lanes of `coreenv.CoreSequentialEnv` on the batched engine
  (`coreenv.SequentialVectorEnv`), one node's choice per step under live masks, so every joint
  action is a matching, with an MLP or the slot-set policy (`slot_set`) and, with
  ``decisions="events"``, the joint action held until the slot table changes.

Evaluations on the fixed selection episodes give its learning curve in the format of MARA's runs
(``history.json``: steps and per-episode rates), so `mara_agents.training.curves` and ``coreenv
learning-curves`` read both.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.preprocessing import get_flattened_obs_dim
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

from coreenv import (
    DECISION_FORMS,
    CoreVectorEnv,
    Decisions,
    EnvConfig,
    SchedulerView,
    SequentialVectorEnv,
    make_config,
)
from coreenv.layout import SLOT_ORDERS, listed_state, live_mask, sequential_layout, slot_listing
from mara_agents.baselines.runs import LOG, OBSERVED, BaselineRun, judge, record
from mara_agents.baselines.sb3_env import SB3VecEnv
from mara_agents.baselines.slot_set import SlotSetPolicy, layout_key, resized, slot_set_kwargs
from mara_agents.checks import require
from mara_agents.policy.mat import symlog
from mara_agents.predictors import PREDICTORS, make_predictor
from mara_agents.schedulers.base import Scheduler
from mara_agents.schedulers.variants import CHECKPOINTS

__all__ = [
    "FORMS",
    "POLICIES",
    "SHIPPED",
    "SymlogFlatten",
    "MaskablePPOConfig",
    "MaskablePPOScheduler",
    "SequentialPPOScheduler",
    "load_scheduler",
    "new_model",
    "train_maskable_ppo",
    "training_envs",
]

FORMS = ("joint", "sequential")
"""`MaskablePPOConfig.form`: every node's slot in one action, or one node's choice per step."""
POLICIES = ("mlp", "symlog_mlp", "slot_set", "slot_sets")
"""`MaskablePPOConfig.policy`: SB3's MLP, the same MLP reading ``sign(x)·log(1 + |x|)`` of the
observations (`SymlogFlatten`), the slot-set policy, or the slot-set policy reading the nodes as
a set too, which plays any cluster size (the last two: sequential form only)."""
_DECISIONS = "coreenv_decisions"
"""The saved model's attribute naming the decision form it was trained in."""
_SLOT_ORDER = "coreenv_slot_order"
"""The saved sequential model's attribute naming how its observations list the slots."""
_OBSERVES = "coreenv_observes"
"""The saved model's attribute naming the predictor whose estimates it observes and the
description fields of its category columns (none: a model saved before it observed WLS alone)."""

SHIPPED = {name: CHECKPOINTS / f"{name}.zip" for name in ("ppo_slots", "ppo_sets", "ppo_mlp")}
"""The shipped models by sweep method: the slot-set policy, the same reading the nodes as a set
(any cluster size) and the MLP, all trained on the sequential event form at 4 nodes and 8 slots
(their choice: docs/rl.md, *Shipped policies* and *Any cluster size*)."""


@dataclass(frozen=True)
class MaskablePPOConfig(BaselineRun):
    """One from-scratch MaskablePPO run (`BaselineRun`; SB3's PPO settings where they apply)."""

    hidden: int = 256
    """Width of the two hidden layers of the policy MLP and of the value MLP (``policy="mlp"`` or
    ``"symlog_mlp"``; SB3's own default is 64)."""
    form: str = "joint"
    """The action form, one of `FORMS`."""
    policy: str = "mlp"
    """The policy network, one of `POLICIES`."""
    decisions: str = "step"
    """When the nodes decide, one of `coreenv.DECISION_FORMS` (every step, or at events)."""
    hold: int = 8
    """The most steps a joint action is held (``decisions="events"``)."""
    slot_order: str = "table"
    """How the sequential form lists the slots, one of `coreenv.layout.SLOT_ORDERS`."""
    observe: str = OBSERVED
    """The predictor whose estimates the policy observes, a name in `PREDICTORS` (one that reads
    context sees what ``env["information"]`` gives)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self, ">= 1", ("hold", "hidden"))
        if self.observe not in PREDICTORS:
            raise ValueError(
                f"MaskablePPOConfig.observe must be one of {sorted(PREDICTORS)}, "
                f"got {self.observe!r}."
            )
        named = (("form", FORMS), ("policy", POLICIES), ("decisions", DECISION_FORMS))
        for name, choices in (*named, ("slot_order", SLOT_ORDERS)):
            if getattr(self, name) not in choices:
                raise ValueError(
                    f"MaskablePPOConfig.{name} must be one of {choices}, "
                    f"got {getattr(self, name)!r}."
                )
        sequential = (
            self.policy in ("slot_set", "slot_sets"),
            self.decisions != "step",
            self.slot_order != "table",
        )
        if self.form == "joint" and any(sequential):
            raise ValueError(
                "MaskablePPOConfig.form 'joint' trains the MLP deciding every step (the every-step "
                f"baseline), got policy {self.policy!r}, decisions {self.decisions!r}, slot_order "
                f"{self.slot_order!r}: use form 'sequential'."
            )

    @property
    def decision_form(self) -> Decisions:
        """The `coreenv.Decisions` the run trains (and its policy plays) in."""
        return Decisions(at=self.decisions, hold=self.hold)

    @property
    def batch_size(self) -> int:
        """SB3's minibatch size: an update's envs × n_steps steps in ``minibatches`` parts."""
        return -(-self.envs * self.n_steps // self.minibatches)


class SymlogFlatten(BaseFeaturesExtractor):
    """Flat observations read as ``sign(x)·log(1 + |x|)`` (policy ``symlog_mlp``).

    The remaining-batch estimates reach OBS_BOUND (1000) while every other feature lies within
    about ±4 (docs/mara.md), so a plain MLP reads them on a scale far from the rest.
    """

    def __init__(self, observation_space: gym.spaces.Box) -> None:
        super().__init__(observation_space, get_flattened_obs_dim(observation_space))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """(B, ...) observations -> (B, size) symlog features."""
        return symlog(obs.flatten(1))


def policy_name(model: MaskablePPO) -> str:
    """Which of `POLICIES` a MaskablePPO model's network is."""
    if issubclass(model.policy_class, SlotSetPolicy):
        sets = model.policy_kwargs["features_extractor_kwargs"].get("sets", False)
        return "slot_sets" if sets else "slot_set"
    extractor = model.policy_kwargs.get("features_extractor_class")
    return "symlog_mlp" if extractor is SymlogFlatten else "mlp"


class MaskablePPOScheduler(Scheduler):
    """A trained `MaskablePPO` as a scheduler: the deterministic action of the global state.

    Each node takes its own most likely allowed slot, as MaskablePPO's ``predict`` does, so two
    nodes may name one slot (a conflict: the environment idles one). With ``distinct`` the nodes
    choose one after another, each its most likely slot that no earlier node took (the order of
    MAT's decoder): the same choices where there is no conflict. It reads the observation arrays
    only, so runners play it in lockstep (`act_view`).
    """

    observation_kind_fields: tuple[str, ...] = ()  # trained without category columns

    name = "ppo_joint"
    observation_predictor = OBSERVED

    def __init__(self, model: MaskablePPO, distinct: bool = False) -> None:
        self.model = model
        self.distinct = distinct

    @classmethod
    def load(cls, path: Path, distinct: bool = False) -> MaskablePPOScheduler:
        """The scheduler of a saved joint-form model: a run's ``model.zip`` or ``best.zip``."""
        if not Path(path).is_file():
            raise FileNotFoundError(f"no MaskablePPO model at {path}.")
        model = MaskablePPO.load(path, device="cpu")
        if hasattr(model, _DECISIONS):
            raise ValueError(
                f"{path} holds a sequential-form model: load it with "
                "mara_agents.baselines.maskable_ppo.load_scheduler, which plays it in its form."
            )
        return cls(model, distinct)

    def act_view(self, view: SchedulerView) -> np.ndarray:
        """(E, M) actions of the view's observations (`actions`)."""
        return self.actions(view.obs, view.action_mask)

    def actions(self, obs: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """(E, M) actions of (E, M, D) observations: the state is one without its one-hot id."""
        nodes = obs.shape[1]
        state = obs[:, 0, nodes:]
        masks = np.tile(action_mask.astype(bool), nodes)  # (E, M·(K + 1)), node after node
        if not self.distinct:
            actions, _ = self.model.predict(state, action_masks=masks, deterministic=True)
            return actions.reshape(len(obs), nodes)
        with torch.no_grad():
            heads = self.model.policy.get_distribution(
                torch.as_tensor(state), action_masks=masks
            ).distributions
        free = action_mask.astype(bool)  # (E, K + 1); the last choice, idling, is never taken
        lanes = np.arange(len(obs))
        actions = np.empty((len(obs), nodes), np.int64)
        for node, head in enumerate(heads):
            actions[:, node] = np.where(free, head.logits.numpy(), -np.inf).argmax(1)
            free[lanes, actions[:, node]] = False
            free[:, -1] = True
        return actions


class SequentialPPOScheduler(Scheduler):
    """A `MaskablePPO` trained on the sequential form, as a scheduler: nodes choose in turn.

    Node i's observation is the state, the slots the nodes before it took and its one-hot id
    (`coreenv.CoreSequentialEnv`); it takes its most likely slot under the live mask. It plays in
    the decision form it was trained in (``decisions``), in lockstep (`act_view`). A slot-set
    policy that reads sets (``slot_sets``) plays any cluster size (`slot_set.resized`).
    """

    observation_kind_fields: tuple[str, ...] = ()  # trained without category columns

    name = "ppo_seq"
    observation_predictor = OBSERVED

    def __init__(self, model: MaskablePPO, decisions: Decisions, slot_order: str = "table") -> None:
        self.model = model
        self.decisions = decisions
        self.slot_order = slot_order
        self._sized: dict[tuple, Any] = {}  # the network resized to each layout played

    def act_view(self, view: SchedulerView) -> np.ndarray:
        """(E, M) actions: node after node, each the greedy choice under its live mask."""
        nodes, k = view.num_nodes, view.num_slots
        policy = self._policy(view.configs[0])
        state = view.obs[:, 0, nodes:]
        listing = slot_listing(state, view.configs[0], self.slot_order)
        lanes = np.arange(view.num_episodes)[:, None]
        actions = np.full((view.num_episodes, nodes), k, np.int64)
        obs = np.zeros((view.num_episodes, state.shape[1] + k + nodes), np.float32)
        obs[:, : state.shape[1]] = listed_state(state, listing, view.configs[0])
        masks = np.empty((view.num_episodes, k + 1), bool)
        for node in range(nodes):
            for e in range(view.num_episodes):
                live, taken = live_mask(view.action_mask[e], actions[e, :node].tolist())
                masks[e], obs[e, state.shape[1] : -nodes] = live, taken
            masks[:, :k] = masks[lanes, listing]
            obs[:, state.shape[1] : -nodes] = obs[:, state.shape[1] : -nodes][lanes, listing]
            obs[:, -nodes:] = 0.0
            obs[:, -nodes + node] = 1.0
            chosen, _ = policy.predict(obs, action_masks=masks, deterministic=True)
            listed = listing[lanes[:, 0], np.minimum(chosen, k - 1)]  # the slot a position shows
            actions[:, node] = np.where(chosen < k, listed, k)  # k idles
        return actions

    def _policy(self, config: EnvConfig) -> Any:
        """The network reading ``config``'s observations, made once per layout."""
        layout = layout_key(config)
        if layout not in self._sized:  # one layout in play at a time
            self._sized = {layout: self._network_for(config)}
        return self._sized[layout]

    def _network_for(self, config: EnvConfig) -> Any:
        """The model's network, resized to ``config`` if it reads sets; ValueError if it cannot."""
        policy = self.model.policy
        if isinstance(policy, SlotSetPolicy):
            return resized(policy, config)
        size = sequential_layout(config)[2]
        if policy.observation_space.shape != (size,):
            raise ValueError(
                f"this policy reads sequential observations of {policy.observation_space.shape[0]}"
                f" features, this cluster's have {size} ({config.num_nodes} nodes, "
                f"{config.num_slots} slots): it was trained on another layout; the policy that "
                "plays any cluster size is 'ppo_sets'."
            )
        return policy


def load_scheduler(path: Path) -> MaskablePPOScheduler | SequentialPPOScheduler:
    """The scheduler of a saved model (``model.zip``, ``best.zip``) in the form it was trained."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"no MaskablePPO model at {path}.")
    return _scheduler(MaskablePPO.load(path, device="cpu"))


def train_maskable_ppo(config: MaskablePPOConfig, log: Any = LOG) -> list[dict]:
    """Train (or continue) a run; its history: one entry per evaluation, the start included.

    A run continues from ``model.zip`` with its network, optimiser and step count; episodes that
    were in flight start afresh, on seeds after the ones played, so a resumed run is not the
    straight run bit for bit. ``best.zip`` keeps the best policy on the selection episodes.
    """
    work = Path(config.work)
    work.mkdir(parents=True, exist_ok=True)
    envs = VecMonitor(training_envs(config))
    saved = work / "model.zip"
    if saved.is_file():
        model = MaskablePPO.load(saved, device="cpu")
        _check_resumed(model, config, saved)
        model.set_env(envs)
        history = json.loads((work / "history.json").read_text())
    else:
        model = new_model(config, envs)
        history = [judge(_scheduler(model), config, 0, 0.0)]
        model.save(work / "best.zip", include=_saved(model))  # the best so far
    envs.seed(config.env_seed + model.num_timesteps)  # learn() starts the lanes on these seeds
    began = time.perf_counter()
    budget, spent = 60 * config.minutes, history[-1]["minutes"]  # minutes of earlier calls
    while model.num_timesteps < config.max_steps and time.perf_counter() - began < budget:
        chunk = min(config.eval_every, config.max_steps - model.num_timesteps)
        model.learn(chunk, reset_num_timesteps=False)
        minutes = spent + (time.perf_counter() - began) / 60
        entry = judge(_scheduler(model), config, int(model.num_timesteps), minutes)
        record(
            history,
            entry,
            work,
            lambda: model.save(work / "best.zip", include=_saved(model)),
            lambda: model.save(saved, include=_saved(model)),
            log,
        )
    return history


def training_envs(config: MaskablePPOConfig) -> VecEnv:
    """The run's SB3 lanes on the batched engine: the joint form, or the sequential form."""
    predictor = make_predictor(config.observe)
    if config.form == "joint":
        return SB3VecEnv(CoreVectorEnv(config.envs, predictor=predictor, **config.env))
    return SB3VecEnv(
        SequentialVectorEnv(
            config.envs,
            predictor=predictor,
            decisions=config.decision_form,
            slot_order=config.slot_order,
            **config.env,
        )
    )


def new_model(config: MaskablePPOConfig, envs: VecEnv) -> MaskablePPO:
    """A MaskablePPO from random weights with the run's settings."""
    if config.policy in ("slot_set", "slot_sets"):
        policy = SlotSetPolicy
        sets = config.policy == "slot_sets"
        policy_kwargs = slot_set_kwargs(make_config(None, **config.env), sets=sets)
    else:
        policy, policy_kwargs = "MlpPolicy", {"net_arch": [config.hidden] * 2}
        if config.policy == "symlog_mlp":
            policy_kwargs["features_extractor_class"] = SymlogFlatten
    model = MaskablePPO(
        policy,
        envs,
        learning_rate=config.lr,
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.epochs,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        ent_coef=config.entropy,
        clip_range=config.clip,
        vf_coef=config.value_coef,
        max_grad_norm=config.max_grad_norm,
        policy_kwargs=policy_kwargs,
        seed=config.seed,
        device="cpu",
    )
    if config.form == "sequential":
        setattr(model, _DECISIONS, dataclasses.asdict(config.decision_form))
        setattr(model, _SLOT_ORDER, config.slot_order)
    env = make_config(None, **config.env)
    kind_fields = list(env.kind_fields) if env.information != "prefix" else []
    setattr(model, _OBSERVES, {"predictor": config.observe, "kind_fields": kind_fields})
    return model


def _check_resumed(model: MaskablePPO, config: MaskablePPOConfig, saved: Path) -> None:
    """Refuse to continue a saved run in another form, decisions, policy, order or observation."""
    trained = getattr(model, _DECISIONS, None)
    asked = dataclasses.asdict(config.decision_form) if config.form == "sequential" else None
    policy, order = policy_name(model), getattr(model, _SLOT_ORDER, "table")
    observes = _observes(model)["predictor"]
    if (trained, policy, order, observes) != (
        asked,
        config.policy,
        config.slot_order,
        config.observe,
    ):
        raise ValueError(
            f"{saved} holds a run of form {'joint' if trained is None else 'sequential'}, policy "
            f"{policy!r}, decisions {trained}, slot_order {order!r}, observing {observes!r}; this "
            f"config asks for form {config.form!r}, policy {config.policy!r}, decisions {asked}, "
            f"slot_order {config.slot_order!r}, observing {config.observe!r}: give the new run "
            "another work folder."
        )


def _saved(model: MaskablePPO) -> list[str]:
    """What a save adds to SB3's own data: the decision form, slot order and what it observes."""
    return [name for name in (_DECISIONS, _SLOT_ORDER, _OBSERVES) if hasattr(model, name)]


def _observes(model: MaskablePPO) -> dict:
    """The predictor ``model`` observes and the fields of its category columns."""
    return getattr(model, _OBSERVES, {"predictor": OBSERVED, "kind_fields": []})


def _scheduler(model: MaskablePPO) -> MaskablePPOScheduler | SequentialPPOScheduler:
    """The scheduler of ``model`` in the form and on the observation it was trained in.

    A joint-form model plays as the every-step baseline.
    """
    decisions = getattr(model, _DECISIONS, None)
    if decisions is None:
        scheduler = MaskablePPOScheduler(model)
    else:
        scheduler = SequentialPPOScheduler(
            model, Decisions(**decisions), getattr(model, _SLOT_ORDER, "table")
        )
    observes = _observes(model)
    scheduler.observation_predictor = observes["predictor"]
    scheduler.observation_kind_fields = tuple(observes["kind_fields"])
    return scheduler
