"""Train the MaskablePPO baseline from scratch: sb3-contrib's `MaskablePPO` on the batched forms.

A generic learner over the global state (`coreenv.CoreEnv.state`, WLS estimates in the slot
features), trained on the ID training runs at p = 0.04 with the environment's own reward, in one
of two action forms (``form``): ``"joint"``, one ``MultiDiscrete`` action of every node's slot
deciding every step; or ``"sequential"``, lanes of `coreenv.SequentialVectorEnv`, one node's
choice per step under live masks (every joint action a matching), with an MLP or the slot-set
policy and, with ``decisions="events"``, the joint action held until the slot table changes.
Evaluations on the fixed selection episodes give its learning curve (``history.json``).
The trained model plays through `mara_agents.baselines.maskable_ppo`.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

from coreenv import DECISION_FORMS, CoreVectorEnv, Decisions, SequentialVectorEnv, make_config
from coreenv.layout import SLOT_ORDERS
from mara_agents.baselines.maskable_ppo import (
    DECISIONS,
    OBSERVED,
    OBSERVES,
    SLOT_ORDER,
    SymlogFlatten,
    observes,
    policy_name,
    scheduler_of,
)
from mara_agents.baselines.slot_set import SlotSetPolicy, slot_set_kwargs
from mara_agents.checks import require
from mara_agents.predictors import PREDICTORS, make_predictor
from mara_agents.training.runs import LOG, BaselineRun, claim_work, judge, record
from mara_agents.training.sb3_env import SB3VecEnv

__all__ = [
    "FORMS",
    "POLICIES",
    "MaskablePPOConfig",
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


@dataclass(frozen=True)
class MaskablePPOConfig(BaselineRun):
    """One from-scratch MaskablePPO run (`BaselineRun`; SB3's PPO settings where they apply)."""

    hidden: int = 256
    """Width of the two hidden layers of the policy MLP and of the value MLP (``policy="mlp"`` or
    ``"symlog_mlp"``; SB3's own default is 64)."""
    width: int = 64
    """Width of the slot-set network's slot encodings, context and value layer (``policy``
    ``"slot_set"`` or ``"slot_sets"``)."""
    anneal: int = 0
    """Steps over which the learning rate falls linearly from ``lr`` to 0, set before each
    update from the run's step count (0: constant)."""
    target_kl: float | None = None
    """Stop an update's epochs once the policy has moved this far (approximate KL, SB3's
    ``target_kl``); None: every epoch runs."""
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
        require(self, ">= 1", ("hold", "hidden", "width"))
        require(self, ">= 0", ("anneal",))
        if self.target_kl is not None and not self.target_kl > 0:
            raise ValueError(
                f"MaskablePPOConfig.target_kl must be None or > 0, got {self.target_kl!r}."
            )
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


def train_maskable_ppo(config: MaskablePPOConfig, log: Any = LOG) -> list[dict]:
    """Train (or continue) a run; its history: one entry per evaluation, the start included.

    A run continues from ``model.zip`` with its network, optimiser and step count; episodes that
    were in flight start afresh, on seeds after the ones played, so a resumed run is not the
    straight run bit for bit. ``best.zip`` keeps the best policy on the selection episodes.
    """
    work = claim_work(config)
    envs = VecMonitor(training_envs(config))
    saved = work / "model.zip"
    if saved.is_file():
        model = MaskablePPO.load(saved, device="cpu")
        _check_resumed(model, config, saved)
        model.set_env(envs)
        history = json.loads((work / "history.json").read_text())
    else:
        model = new_model(config, envs)
        history = [judge(scheduler_of(model), config, 0, 0.0)]
        model.save(work / "best.zip", include=_saved(model))  # the best so far
    envs.seed(config.env_seed + model.num_timesteps)  # learn() starts the lanes on these seeds
    began = time.perf_counter()
    budget, spent = 60 * config.minutes, history[-1]["minutes"]  # minutes of earlier calls
    annealing = _Annealing(config) if config.anneal else None
    while model.num_timesteps < config.max_steps and time.perf_counter() - began < budget:
        chunk = min(config.eval_every, config.max_steps - model.num_timesteps)
        model.learn(chunk, reset_num_timesteps=False, callback=annealing)
        minutes = spent + (time.perf_counter() - began) / 60
        entry = judge(scheduler_of(model), config, int(model.num_timesteps), minutes)
        record(
            history,
            entry,
            work,
            lambda: model.save(work / "best.zip", include=_saved(model)),
            lambda: model.save(saved, include=_saved(model)),
            log,
        )
    return history


class _Annealing(BaseCallback):
    """Sets the learning rate before each update: `MaskablePPOConfig.anneal`'s linear fall."""

    def __init__(self, config: MaskablePPOConfig) -> None:
        super().__init__()
        self.lr, self.steps = config.lr, config.anneal

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        rate = self.lr * max(0.0, 1.0 - self.model.num_timesteps / self.steps)
        self.model.lr_schedule = lambda _: rate


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
        width = config.width
        policy_kwargs = slot_set_kwargs(make_config(None, **config.env), width, (width,), sets)
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
        target_kl=config.target_kl,
        policy_kwargs=policy_kwargs,
        seed=config.seed,
        device="cpu",
    )
    if config.form == "sequential":
        setattr(model, DECISIONS, dataclasses.asdict(config.decision_form))
        setattr(model, SLOT_ORDER, config.slot_order)
    env = make_config(None, **config.env)
    kind_fields = list(env.kind_fields) if env.information != "prefix" else []
    setattr(model, OBSERVES, {"predictor": config.observe, "kind_fields": kind_fields})
    return model


def _check_resumed(model: MaskablePPO, config: MaskablePPOConfig, saved: Path) -> None:
    """Refuse to continue a saved run in another form, decisions, policy, order or observation."""
    trained = getattr(model, DECISIONS, None)
    asked = dataclasses.asdict(config.decision_form) if config.form == "sequential" else None
    policy, order = policy_name(model), getattr(model, SLOT_ORDER, "table")
    observed = observes(model)["predictor"]
    if (trained, policy, order, observed) != (
        asked,
        config.policy,
        config.slot_order,
        config.observe,
    ):
        raise ValueError(
            f"{saved} holds a run of form {'joint' if trained is None else 'sequential'}, policy "
            f"{policy!r}, decisions {trained}, slot_order {order!r}, observing {observed!r}; this "
            f"config asks for form {config.form!r}, policy {config.policy!r}, decisions {asked}, "
            f"slot_order {config.slot_order!r}, observing {config.observe!r}: give the new run "
            "another work folder."
        )


def _saved(model: MaskablePPO) -> list[str]:
    """What a save adds to SB3's own data: the decision form, slot order and what it observes."""
    return [name for name in (DECISIONS, SLOT_ORDER, OBSERVES) if hasattr(model, name)]
