"""IPPO from scratch: one small actor-critic shared by the nodes, each acting on its own view.

The multi-agent baseline: every node samples its slot from a masked categorical over its own
observation (its one-hot id, then the global state, as `CoreEnv` gives it), and values its own
view; all nodes share the weights and the team reward, and learn by PPO with GAE on the vector
form's per-node arrays (``CoreVectorEnv(view="nodes")``). It differs from MARA's MAT in what it
lacks: no attention between nodes and no decision order, so two nodes may pick the same slot
(the environment idles the later one). Runs record the same ``history.json`` as
`mara_agents.baselines.maskable_ppo` (docs/rl.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from coreenv import CoreVectorEnv, SchedulerView
from mara_agents.baselines.runs import LOG, OBSERVED, BaselineRun, judge, record
from mara_agents.checks import require
from mara_agents.predictors import make_predictor
from mara_agents.schedulers.base import Scheduler
from mara_agents.schedulers.variants import CHECKPOINTS
from mara_agents.training.returns import gae

__all__ = ["SHIPPED", "IPPOConfig", "IPPOScheduler", "NodeActorCritic", "train_ippo"]

SHIPPED = CHECKPOINTS / "ippo.pt"
"""The shipped policy: the sweep's ``ippo`` (its choice: docs/rl.md, *Shipped policies*)."""


@dataclass(frozen=True)
class IPPOConfig(BaselineRun):
    """One from-scratch IPPO run (`BaselineRun`; CleanRL's PPO settings where they apply)."""

    env_seed: int = 400_000
    """Lane i's episodes play ``env_seed + i + j·envs`` (training seeds)."""
    lr: float = 2.5e-4
    """Adam's learning rate (CleanRL's)."""
    minibatches: int = 4
    """Minibatches per pass over a rollout."""
    clip: float = 0.2
    """ε of the clipped policy objective."""
    value_coef: float = 0.5
    """Weight of the value loss."""
    max_grad_norm: float = 0.5
    """Gradients are rescaled to at most this norm."""
    hidden: int = 128
    """Width of the two hidden layers of the actor and of the critic."""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self, ">= 1", ("minibatches", "hidden"))
        require(self, "> 0", ("clip", "max_grad_norm"))
        require(self, ">= 0", ("value_coef",))


class NodeActorCritic(nn.Module):
    """Per node: masked logits over the K + 1 choices, and a value, from its own observation."""

    def __init__(self, obs_dim: int, choices: int, hidden: int) -> None:
        super().__init__()

        def mlp(out: int, last_gain: float) -> nn.Sequential:
            layers = [nn.Linear(obs_dim, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, out)]
            for layer, gain in zip(layers, (np.sqrt(2), np.sqrt(2), last_gain)):
                nn.init.orthogonal_(layer.weight, gain)  # PPO's usual start (CleanRL's too)
                nn.init.zeros_(layer.bias)
            return nn.Sequential(layers[0], nn.Tanh(), layers[1], nn.Tanh(), layers[2])

        # a small last actor layer: every node starts near uniform over its allowed choices
        self.actor, self.critic = mlp(choices, 0.01), mlp(1, 1.0)

    def forward(self, obs: torch.Tensor, masks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(…, K + 1) masked logits and (…) values of (…, D) observations."""
        logits = self.actor(obs).masked_fill(~masks, -1e9)
        return logits, self.critic(obs).squeeze(-1)


class IPPOScheduler(Scheduler):
    """A trained `NodeActorCritic` as a scheduler: each node's most likely allowed slot."""

    name = "ippo"
    observation_predictor = OBSERVED

    def __init__(self, model: NodeActorCritic) -> None:
        self.model = model.eval()

    @classmethod
    def load(cls, path: Path = SHIPPED) -> IPPOScheduler:
        """The scheduler of a saved policy (``best.pt`` of a run; the shipped one by default)."""
        if not Path(path).is_file():
            raise FileNotFoundError(f"no IPPO policy at {path}.")
        saved = torch.load(path, map_location="cpu", weights_only=True)
        model = NodeActorCritic(**saved["shape"])
        model.load_state_dict(saved["model"])
        return cls(model)

    def act_view(self, view: SchedulerView) -> np.ndarray:
        """(E, M) actions: every node's arg-max over its masked logits."""
        obs, action_mask = view.obs, view.action_mask
        masks = torch.from_numpy(action_mask.astype(bool))[:, None, :]
        with torch.no_grad():
            logits, _ = self.model(torch.from_numpy(obs), masks)
        return logits.argmax(-1).numpy()


def train_ippo(config: IPPOConfig, log: Any = LOG) -> list[dict]:
    """Train (or continue) a run; its history: one entry per evaluation, the start included.

    ``checkpoint.pt`` holds the network, the optimiser and the counters; episodes in flight when
    a run stopped start afresh on later seeds, so a resumed run is not the straight one bit for
    bit. ``best.pt`` keeps the best policy on the selection episodes.
    """
    c, work = config, Path(config.work)
    work.mkdir(parents=True, exist_ok=True)
    envs = CoreVectorEnv(c.envs, predictor=make_predictor(OBSERVED), view="nodes", **c.env)
    _, obs_dim = envs.single_observation_space.shape
    shape = {"obs_dim": obs_dim, "choices": envs.config.num_slots + 1, "hidden": c.hidden}
    torch.manual_seed(c.seed)
    model = NodeActorCritic(**shape)
    optimizer = torch.optim.Adam(model.parameters(), lr=c.lr, eps=1e-5)
    generator = torch.Generator().manual_seed(c.seed)
    steps, history = 0, []
    checkpoint = work / "checkpoint.pt"

    def save_best() -> None:
        torch.save({"model": model.state_dict(), "shape": shape}, work / "best.pt")

    def save_state() -> None:  # after `record` appended the evaluation of the current step
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
        state |= {"generator": generator.get_state(), "steps": history[-1]["steps"]}
        torch.save(state | {"history": history}, checkpoint)

    if checkpoint.is_file():
        state = torch.load(checkpoint, map_location="cpu", weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        generator.set_state(state["generator"])
        steps, history = state["steps"], state["history"]
    else:
        history = [_judge(model, c, 0, 0.0)]
        save_best()  # the best so far
    obs, _ = envs.reset(seed=c.env_seed + steps)
    began, judged, spent = time.perf_counter(), steps, history[-1]["minutes"]
    while steps < c.max_steps and time.perf_counter() - began < 60 * c.minutes:
        rollout, obs = _collect(model, envs, obs, c, generator)
        steps += c.envs * c.n_steps
        _learn(model, optimizer, rollout, c, generator)
        if steps - judged >= c.eval_every or steps >= c.max_steps:
            judged = steps
            entry = _judge(model, c, steps, spent + (time.perf_counter() - began) / 60)
            record(history, entry, work, save_best, save_state, log)
    return history


def _collect(
    model: NodeActorCritic,
    envs: CoreVectorEnv,
    obs: np.ndarray,
    c: IPPOConfig,
    generator: torch.Generator,
) -> tuple[dict[str, torch.Tensor], np.ndarray]:
    """``n_steps`` steps of every lane, sampled; the rollout's tensors and the next observation."""
    names = ("obs", "masks", "actions", "log_probs", "values", "final_values")
    rollout: dict[str, list] = {name: [] for name in (*names, "rewards", "ends")}
    for _ in range(c.n_steps):
        x = torch.from_numpy(obs)
        masks = torch.from_numpy(envs.node_action_masks())
        with torch.no_grad():
            logits, values = model(x, masks)
            dist = torch.distributions.Categorical(logits=logits)
            probs = dist.probs.reshape(-1, logits.shape[-1])
            actions = torch.multinomial(probs, 1, generator=generator).reshape(values.shape)
        obs, rewards, terminated, truncated, infos = envs.step(actions.numpy())
        final = torch.zeros_like(values)
        if truncated.any():  # bootstrap a cut episode from the state it was cut in
            cut = np.flatnonzero(truncated)
            last = torch.from_numpy(np.stack(infos["final_obs"][cut]))
            with torch.no_grad():
                final[cut] = model.critic(last).squeeze(-1)
        for name, value in zip(names, (x, masks, actions, dist.log_prob(actions), values, final)):
            rollout[name].append(value)
        rollout["rewards"].append(torch.from_numpy(rewards).float())
        rollout["ends"].append(torch.from_numpy(np.stack([terminated, truncated])))
    with torch.no_grad():
        _, last_values = model(torch.from_numpy(obs), torch.from_numpy(envs.node_action_masks()))
    batch = {name: torch.stack(rollout[name]) for name in (*names, "rewards")}
    ends = torch.stack(rollout["ends"])  # (T, 2, E)
    values = torch.cat([batch["values"], last_values[None]])
    estimate = gae(
        batch["rewards"], values, ends[:, 0], ends[:, 1], batch["final_values"], c.gamma,
        c.gae_lambda,
    )  # fmt: skip
    batch["advantages"], batch["returns"] = estimate.advantages, estimate.returns
    return batch, obs


def _learn(
    model: NodeActorCritic,
    optimizer: torch.optim.Optimizer,
    batch: dict[str, torch.Tensor],
    c: IPPOConfig,
    generator: torch.Generator,
) -> None:
    """``epochs`` passes of clipped PPO over the rollout's steps (every node of a step at once)."""
    keys = ("obs", "masks", "actions", "log_probs", "advantages", "returns")
    flat = {k: batch[k].flatten(0, 1) for k in keys}  # (T·E, M, …)
    n = flat["obs"].shape[0]
    size = -(-n // c.minibatches)
    for _ in range(c.epochs):
        order = torch.randperm(n, generator=generator)
        for start in range(0, n, size):
            rows = order[start : start + size]
            logits, values = model(flat["obs"][rows], flat["masks"][rows])
            dist = torch.distributions.Categorical(logits=logits)
            ratio = (dist.log_prob(flat["actions"][rows]) - flat["log_probs"][rows]).exp()
            advantages = flat["advantages"][rows]
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
            clipped = ratio.clamp(1 - c.clip, 1 + c.clip)
            policy = -torch.min(ratio * advantages, clipped * advantages).mean()
            value = (values - flat["returns"][rows]).pow(2).mean()
            loss = policy + c.value_coef * value - c.entropy * dist.entropy().mean()
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), c.max_grad_norm)
            optimizer.step()


def _judge(model: NodeActorCritic, config: IPPOConfig, steps: int, minutes: float) -> dict:
    """`judge` of the greedy policy; the model goes back to training mode."""
    entry = judge(IPPOScheduler(model), config, steps, minutes)
    model.train()
    return entry
