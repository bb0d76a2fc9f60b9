"""Plain PPO from scratch: sb3-contrib's `MaskablePPO` on the SB3 vector form, and its scheduler.

The baseline an RL researcher asks for first: a generic learner with an MLP over the global state
(`coreenv.CoreEnv.state`, WLS estimates in the slot features) and MaskablePPO's per-node masks,
trained on the ID training runs at p = 0.04 with the environment's own reward (unshaped unless
``shaping_beta`` says otherwise). Evaluations on the fixed selection episodes give its learning
curve in the format of MARA's runs (``history.json``: steps and per-episode rates), so
`mara_agents.training.curves` and ``coreenv learning-curves`` read both.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecMonitor

from coreenv import CoreVectorEnv, SchedulerView
from mara_agents.baselines.runs import LOG, OBSERVED, BaselineRun, judge, record
from mara_agents.baselines.sb3_env import SB3VecEnv
from mara_agents.checks import require
from mara_agents.predictors import make_predictor
from mara_agents.schedulers.base import Scheduler
from mara_agents.schedulers.variants import CHECKPOINTS

__all__ = ["SHIPPED", "MaskablePPOConfig", "MaskablePPOScheduler", "train_maskable_ppo"]

SHIPPED = CHECKPOINTS / "ppo_sb3.zip"
"""The shipped model: the sweep's ``ppo_sb3`` (its choice: docs/rl.md, *Shipped policies*)."""


@dataclass(frozen=True)
class MaskablePPOConfig(BaselineRun):
    """One from-scratch MaskablePPO run (`BaselineRun`; SB3's PPO settings where they apply)."""

    batch_size: int = 1024
    """Minibatch size."""
    hidden: tuple[int, ...] = (256, 256)
    """Hidden widths of the policy and value MLPs."""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self, ">= 1", ("batch_size",))


class MaskablePPOScheduler(Scheduler):
    """A trained `MaskablePPO` as a scheduler: the deterministic action of the global state.

    Each node takes its own most likely allowed slot, as MaskablePPO's ``predict`` does, so two
    nodes may name one slot (a conflict: the environment idles one). With ``distinct`` the nodes
    choose one after another, each its most likely slot that no earlier node took (the order of
    MAT's decoder): the same choices where there is no conflict. It reads the observation arrays
    only, so runners play it in lockstep (`act_view`).
    """

    name = "ppo_sb3"
    observation_predictor = OBSERVED

    def __init__(self, model: MaskablePPO, distinct: bool = False) -> None:
        self.model = model
        self.distinct = distinct

    @classmethod
    def load(cls, path: Path = SHIPPED, distinct: bool = False) -> MaskablePPOScheduler:
        """The scheduler of a saved model: a run's ``model.zip`` or ``best.zip``, or the shipped."""
        if not Path(path).is_file():
            raise FileNotFoundError(f"no MaskablePPO model at {path}.")
        return cls(MaskablePPO.load(path, device="cpu"), distinct)

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


def train_maskable_ppo(config: MaskablePPOConfig, log: Any = LOG) -> list[dict]:
    """Train (or continue) a run; its history: one entry per evaluation, the start included.

    A run continues from ``model.zip`` with its network, optimiser and step count; episodes that
    were in flight start afresh, on seeds after the ones played, so a resumed run is not the
    straight run bit for bit. ``best.zip`` keeps the best policy on the selection episodes.
    """
    work = Path(config.work)
    work.mkdir(parents=True, exist_ok=True)
    vector = CoreVectorEnv(config.envs, predictor=make_predictor(OBSERVED), **config.env)
    envs = VecMonitor(SB3VecEnv(vector))
    saved = work / "model.zip"
    if saved.is_file():
        model = MaskablePPO.load(saved, env=envs, device="cpu")
        history = json.loads((work / "history.json").read_text())
    else:
        model = MaskablePPO(
            "MlpPolicy",
            envs,
            learning_rate=config.lr,
            n_steps=config.n_steps,
            batch_size=config.batch_size,
            n_epochs=config.epochs,
            gamma=config.gamma,
            gae_lambda=config.gae_lambda,
            ent_coef=config.entropy,
            policy_kwargs={"net_arch": list(config.hidden)},
            seed=config.seed,
            device="cpu",
        )
        history = [judge(MaskablePPOScheduler(model), config, 0, 0.0)]
        model.save(work / "best.zip")  # the best so far
    envs.seed(config.env_seed + model.num_timesteps)  # learn() starts the lanes on these seeds
    began = time.perf_counter()
    budget, spent = 60 * config.minutes, history[-1]["minutes"]  # minutes of earlier calls
    while model.num_timesteps < config.max_steps and time.perf_counter() - began < budget:
        chunk = min(config.eval_every, config.max_steps - model.num_timesteps)
        model.learn(chunk, reset_num_timesteps=False)
        minutes = spent + (time.perf_counter() - began) / 60
        entry = judge(MaskablePPOScheduler(model), config, int(model.num_timesteps), minutes)
        record(
            history,
            entry,
            work,
            lambda: model.save(work / "best.zip"),
            lambda: model.save(saved),
            log,
        )
    return history
