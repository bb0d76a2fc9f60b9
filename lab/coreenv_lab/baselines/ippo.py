"""IPPO from scratch: one small actor-critic shared by the nodes, each acting on its own view.

The multi-agent baseline: every node samples its slot from a masked categorical over its own
observation (its one-hot id, then the global state, as `CoreEnv` gives it), and values its own
view; all nodes share the weights and the team reward, and learn by PPO with GAE on the vector
form's per-node arrays (``CoreVectorEnv(view="nodes")``). It differs from MARA's MAT in what it
lacks: no attention between nodes. By default it has no decision order either, so two nodes may
pick the same slot (the environment idles the later one); with ``live`` the nodes choose in index
order under the AEC form's live masks (`coreenv.masks.live_mask`), each seeing the slots the
nodes before it took, so every joint action is a matching, and ``decisions="events"`` holds the
joint action until the slot table changes. The network is an MLP (`NodeActorCritic`) or, over
live masks, the slot-set policy's encoder and pointer head (`SlotSetActorCritic`), which with
``policy="slot_sets"`` reads the nodes as a set too and plays any cluster size. Runs record the
same ``history.json`` as `mara_agents.training.maskable_ppo` (docs/rl.md). Its recipes are
`coreenv_lab.baselines.recipes` (``ippo_live``, ``ippo_sets``); no command trains it: call
`train_ippo` from a script.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from coreenv import DECISION_FORMS, CoreVectorEnv, Decisions, EnvConfig, SchedulerView
from coreenv.layout import slot_width, speed_columns, table_start
from coreenv_lab import CHECKPOINTS
from mara_agents.baselines.maskable_ppo import OBSERVED
from mara_agents.baselines.slot_set import (
    PointerHead,
    SlotSetExtractor,
    acting_weights,
    extractor_for,
    layout_key,
    orthogonal,
    sequential_size,
    slot_set_kwargs,
)
from mara_agents.checks import require
from mara_agents.predictors import make_predictor
from mara_agents.schedulers.base import Scheduler
from mara_agents.training.returns import gae
from mara_agents.training.runs import LOG, BaselineRun, judge, record

__all__ = [
    "SHIPPED",
    "SHIPPED_SETS",
    "Choices",
    "IPPOConfig",
    "IPPOLearner",
    "IPPOScheduler",
    "NodeActorCritic",
    "POLICIES",
    "SlotSetActorCritic",
    "choose",
    "train_ippo",
]

SHIPPED = CHECKPOINTS / "ippo_live.pt"
"""The lab's policy trained over live masks at events: ``coreenv_lab.methods:ippo_live`` (its
choice: studies/learnability/REPORT.md, *Shipped baselines before the current ones*)."""
SHIPPED_SETS = CHECKPOINTS / "ippo_sets.pt"
"""The same reading the nodes as a set, which plays any cluster size:
``coreenv_lab.methods:ippo_sets`` (studies/cluster/REPORT.md, *The slot-set baselines at other
sizes*)."""

POLICIES = ("mlp", "slot_set", "slot_sets")
"""`IPPOConfig.policy`: an MLP over a node's observation, or the slot-set network reading the
nodes by id or as a set (live only)."""


@dataclass(frozen=True)
class IPPOConfig(BaselineRun):
    """One from-scratch IPPO run (`BaselineRun`; CleanRL's PPO settings where they apply)."""

    env_seed: int = 400_000
    """Lane i's episodes play ``env_seed + i + j·envs`` (training seeds)."""
    lr: float = 2.5e-4
    """Adam's learning rate (CleanRL's)."""
    hidden: int = 128
    """Width of the two hidden layers of the actor and of the critic (``slot_set``: of the slot
    encodings, the context and the value MLP)."""
    live: bool = False
    """Nodes choose in index order under live masks, each seeing the slots taken before it."""
    decisions: str = "step"
    """When the nodes decide, one of `coreenv.DECISION_FORMS` (every step, or at events)."""
    hold: int = 8
    """The most steps a joint action is held (``decisions="events"``)."""
    policy: str = "mlp"
    """The network, one of `POLICIES`; the slot-set ones read the taken flags, so need ``live``."""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self, ">= 1", ("hidden", "hold"))
        for name, choices in (("decisions", DECISION_FORMS), ("policy", POLICIES)):
            if getattr(self, name) not in choices:
                raise ValueError(
                    f"IPPOConfig.{name} must be one of {choices}, got {getattr(self, name)!r}."
                )
        if self.policy != "mlp" and not self.live:
            raise ValueError(
                f"IPPOConfig.policy {self.policy!r} reads the slots taken before each node: it "
                "needs live=True (--live)."
            )

    @property
    def decision_form(self) -> Decisions:
        """The `coreenv.Decisions` the run trains (and its policy plays) in."""
        return Decisions(at=self.decisions, hold=self.hold)


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


class SlotSetActorCritic(nn.Module):
    """Per node: the slot-set policy's logits and a value, from its live observation.

    The same `SlotSetExtractor` and `PointerHead` as MaskablePPO's `SlotSetPolicy`, with a value
    MLP over the slot encodings and the context; a node's view (its one-hot id, the state, the
    taken flags) is read in the sequential form's order (the state, the flags, the node). The
    arguments are the extractor's.
    """

    def __init__(
        self,
        num_slots: int,
        slot_width: int,
        num_nodes: int,
        hidden: int,
        sets: bool = False,
        speeds: int = 0,
        cluster_column: int = -1,
    ) -> None:
        super().__init__()
        self.num_nodes, self.sets = num_nodes, sets
        size = sequential_size(num_slots, slot_width, num_nodes, speeds)
        space = gym.spaces.Box(-np.inf, np.inf, (size,))
        extractor = SlotSetExtractor(
            space, num_slots, slot_width, num_nodes, hidden, sets, speeds, cluster_column
        )
        self.extract, self.actor = extractor, PointerHead(num_slots, hidden)
        self.critic = nn.Sequential(
            nn.Linear(extractor.features_dim, hidden), nn.ReLU(), nn.Linear(hidden, 1)
        )
        orthogonal(self.extract, np.sqrt(2))
        self.actor.initialise()
        orthogonal(self.critic[0], np.sqrt(2))
        orthogonal(self.critic[2], 1.0)

    def sequential(self, obs: torch.Tensor) -> torch.Tensor:
        """Live node views (id, state, taken flags) in the sequential order (state, flags, id)."""
        return torch.cat((obs[..., self.num_nodes :], obs[..., : self.num_nodes]), dim=-1)

    def forward(self, obs: torch.Tensor, masks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(…, K + 1) masked logits and (…) values of (…, D) live observations."""
        lead = obs.shape[:-1]
        features = self.extract(self.sequential(obs).reshape(-1, obs.shape[-1]))
        logits = self.actor(features).reshape(*lead, -1).masked_fill(~masks, -1e9)
        return logits, self.critic(features).reshape(lead)


def slot_set_shape(config: EnvConfig, hidden: int, sets: bool) -> dict[str, Any]:
    """The arguments of a `SlotSetActorCritic` for ``config``'s nodes (what a run saves)."""
    shape = dict(slot_set_kwargs(config, hidden, sets=sets)["features_extractor_kwargs"])
    shape["hidden"] = shape.pop("width")
    return shape


def resized(model: Network, shape: dict[str, Any], config: EnvConfig) -> Network:
    """``model`` (built from ``shape``) reading ``config``'s nodes; ValueError if it cannot.

    Itself at its own layout, else (``sets`` only, `slot_set.extractor_for`) a copy acting with
    the same weights (its value starts afresh).
    """
    if not isinstance(model, SlotSetActorCritic):
        k = config.num_slots
        width = table_start(config.num_nodes, speed_columns(config)) + k * slot_width(config)
        if shape["choices"] == k + 1 and shape["obs_dim"] in (width, width + k):
            return model
        raise ValueError(
            f"this IPPO policy reads observations of {shape['obs_dim']} features with "
            f"{shape['choices'] - 1} slots; this cluster's have {width} ({config.num_nodes} "
            f"nodes, {k} slots): it was trained on another layout (a policy trained with policy "
            "'slot_sets' plays any size)."
        )
    asked = extractor_for(model.extract, config)
    if asked == model.extract.arguments:
        return model
    copy = SlotSetActorCritic(**slot_set_shape(config, asked["width"], sets=True))
    copy.load_state_dict(acting_weights(model, ("critic.",)), strict=False)
    return copy.eval()


Network = NodeActorCritic | SlotSetActorCritic
NETWORKS = {"mlp": NodeActorCritic, "slot_set": SlotSetActorCritic, "slot_sets": SlotSetActorCritic}
"""Each of `POLICIES`: its network, built from the ``shape`` a run saves."""


class IPPOScheduler(Scheduler):
    """A trained network as a scheduler: each node's most likely allowed slot.

    A policy trained ``live`` decodes node after node under live masks and plays in the decision
    form it was trained in (``decisions``). Given its ``shape`` (`load` passes it), a network
    that reads sets plays any cluster size (`resized`); others refuse another layout.
    """

    observation_kind_fields: tuple[str, ...] = ()  # trained without category columns

    name = "ippo"
    observation_predictor = OBSERVED

    def __init__(
        self,
        model: Network,
        live: bool = False,
        decisions: Decisions | None = None,
        shape: dict[str, Any] | None = None,
    ) -> None:
        self.model = model.eval()
        self.live = live
        self.decisions = decisions
        self.shape = shape
        self._sized: dict[tuple, Network] = {}  # the network resized to each layout played

    @classmethod
    def load(cls, path: Path = SHIPPED) -> IPPOScheduler:
        """A saved policy as a scheduler (``best.pt`` of a run; the lab's `SHIPPED` by default)."""
        if not Path(path).is_file():
            raise FileNotFoundError(f"no IPPO policy at {path}.")
        saved = torch.load(path, map_location="cpu", weights_only=True)
        model = NETWORKS[saved.get("policy", "mlp")](**saved["shape"])
        model.load_state_dict(saved["model"])
        decisions = saved.get("decisions")
        live, shape = saved.get("live", False), saved["shape"]
        return cls(model, live, decisions and Decisions(**decisions), shape)

    def act_view(self, view: SchedulerView) -> np.ndarray:
        """(E, M) actions: every node's arg-max over its masked logits."""
        model = self.model
        if self.shape is not None:
            config = view.configs[0]
            layout = layout_key(config)
            if layout not in self._sized:  # one layout in play at a time
                self._sized = {layout: resized(self.model, self.shape, config)}
            model = self._sized[layout]
        with torch.no_grad():
            return choose(model, view.obs, view.action_mask, self.live).actions.numpy()


@dataclass(frozen=True)
class Choices:
    """What the nodes of E lanes chose, with what they saw: each tensor (E, M, …)."""

    obs: torch.Tensor  # (E, M, D') what each node read (with the taken flags when live)
    masks: torch.Tensor  # (E, M, K + 1) bool, the masks it chose under
    actions: torch.Tensor  # (E, M)
    log_probs: torch.Tensor  # (E, M)
    values: torch.Tensor  # (E, M)


def choose(
    model: Network,
    obs: np.ndarray,
    action_mask: np.ndarray,
    live: bool,
    generator: torch.Generator | None = None,
) -> Choices:
    """The nodes' choices from (E, M, D) observations and (E, K + 1) masks.

    Sampled with ``generator``, greedy without. ``live``: node after node, each reading the
    slots taken before it (K flags after its observation) and masked from them.
    """
    x = torch.from_numpy(obs)
    base = torch.from_numpy(action_mask.astype(bool))[:, None, :].expand(-1, obs.shape[1], -1)
    if not live:
        return _sampled(model, x, base.contiguous(), generator)
    e, m = obs.shape[:2]
    k = action_mask.shape[1] - 1
    taken = torch.zeros(e, k)
    parts = []
    for node in range(m):
        masks = base[:, node].clone()
        masks[:, :k] &= taken == 0
        seen = torch.cat((x[:, node], taken), dim=-1)
        part = _sampled(model, seen[:, None], masks[:, None], generator)
        parts.append(part)
        chosen = part.actions[:, 0]
        served = chosen < k
        taken[served, chosen[served]] = 1.0
    return Choices(
        *(torch.cat([getattr(p, f) for p in parts], dim=1) for f in Choices.__dataclass_fields__)
    )


def _sampled(
    model: Network,
    obs: torch.Tensor,
    masks: torch.Tensor,
    generator: torch.Generator | None,
) -> Choices:
    logits, values = model(obs, masks)
    dist = torch.distributions.Categorical(logits=logits)
    if generator is None:
        actions = logits.argmax(-1)
    else:
        probs = dist.probs.reshape(-1, logits.shape[-1])
        actions = torch.multinomial(probs, 1, generator=generator).reshape(values.shape)
    return Choices(obs, masks, actions, dist.log_prob(actions), values)


class IPPOLearner:
    """What an IPPO run steps: its lanes, network, optimiser, sampling generator and step count.

    ``update`` collects ``envs × n_steps`` decisions and learns from them; `train_ippo` adds the
    evaluations, saves and resuming, `coreenv_lab.baselines.throughput` times it bare.
    """

    def __init__(self, config: IPPOConfig) -> None:
        c = self.config = config
        predictor, decisions = make_predictor(OBSERVED), c.decision_form
        self.envs = CoreVectorEnv(
            c.envs, predictor=predictor, view="nodes", decisions=decisions, **c.env
        )
        _, obs_dim = self.envs.single_observation_space.shape
        k = self.envs.config.num_slots
        if c.policy != "mlp":
            self.shape = slot_set_shape(self.envs.config, c.hidden, c.policy == "slot_sets")
        else:
            self.shape = {"obs_dim": obs_dim + k * c.live, "choices": k + 1, "hidden": c.hidden}
        self.form = {"live": c.live, "decisions": dataclasses.asdict(decisions), "policy": c.policy}
        torch.manual_seed(c.seed)
        self.model = NETWORKS[c.policy](**self.shape)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=c.lr, eps=1e-5)
        self.generator = torch.Generator().manual_seed(c.seed)
        self.steps = 0
        self.obs: np.ndarray | None = None

    def update(self) -> None:
        """One rollout of every lane, then PPO on it."""
        self.learn(self.collect())

    def collect(self) -> dict[str, torch.Tensor]:
        """``n_steps`` sampled decisions of every lane (lanes start on ``env_seed + steps``)."""
        c = self.config
        if self.obs is None:
            self.obs, _ = self.envs.reset(seed=c.env_seed + self.steps)
        rollout, self.obs = _collect(self.model, self.envs, self.obs, c, self.generator)
        self.steps += c.envs * c.n_steps
        return rollout

    def learn(self, rollout: dict[str, torch.Tensor]) -> None:
        """``epochs`` passes of clipped PPO over a rollout of `collect`."""
        _learn(self.model, self.optimizer, rollout, self.config, self.generator)


def train_ippo(config: IPPOConfig, log: Any = LOG) -> list[dict]:
    """Train (or continue) a run; its history: one entry per evaluation, the start included.

    ``checkpoint.pt`` holds the network, the optimiser and the counters; episodes in flight when
    a run stopped start afresh on later seeds, so a resumed run is not the straight one bit for
    bit. ``best.pt`` keeps the best policy on the selection episodes.
    """
    c, work = config, Path(config.work)
    work.mkdir(parents=True, exist_ok=True)
    run = IPPOLearner(c)
    model, optimizer, generator = run.model, run.optimizer, run.generator
    history: list[dict] = []
    checkpoint = work / "checkpoint.pt"

    def save_best() -> None:
        torch.save({"model": model.state_dict(), "shape": run.shape, **run.form}, work / "best.pt")

    def save_state() -> None:  # after `record` appended the evaluation of the current step
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
        state |= {"generator": generator.get_state(), "steps": history[-1]["steps"], **run.form}
        torch.save(state | {"history": history}, checkpoint)

    if checkpoint.is_file():
        state = torch.load(checkpoint, map_location="cpu", weights_only=False)
        trained = {
            "live": state.get("live"),
            "decisions": state.get("decisions"),
            "policy": state.get("policy", "mlp"),
        }
        if "live" in state and trained != run.form:  # (checkpoints before forms were recorded)
            raise ValueError(
                f"{checkpoint} holds a run with {trained}; this config asks for {run.form}: "
                "give the new run another work folder."
            )
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        generator.set_state(state["generator"])
        run.steps, history = state["steps"], state["history"]
    else:
        history = [_judge(model, c, 0, 0.0)]
        save_best()  # the best so far
    began, judged, spent = time.perf_counter(), run.steps, history[-1]["minutes"]
    while run.steps < c.max_steps and time.perf_counter() - began < 60 * c.minutes:
        run.update()
        if run.steps - judged >= c.eval_every or run.steps >= c.max_steps:
            judged = run.steps
            entry = _judge(model, c, run.steps, spent + (time.perf_counter() - began) / 60)
            record(history, entry, work, save_best, save_state, log)
    return history


def _collect(
    model: Network,
    envs: CoreVectorEnv,
    obs: np.ndarray,
    c: IPPOConfig,
    generator: torch.Generator,
) -> tuple[dict[str, torch.Tensor], np.ndarray]:
    """``n_steps`` steps of every lane, sampled; the rollout's tensors and the next observation."""
    names = ("obs", "masks", "actions", "log_probs", "values", "final_values")
    rollout: dict[str, list] = {name: [] for name in (*names, "rewards", "ends")}
    for _ in range(c.n_steps):
        with torch.no_grad():
            chosen = choose(model, obs, envs.node_action_masks()[:, 0], c.live, generator)
        obs, rewards, terminated, truncated, infos = envs.step(chosen.actions.numpy())
        final = torch.zeros_like(chosen.values)
        if truncated.any():  # bootstrap a cut episode from the state it was cut in
            cut = np.flatnonzero(truncated)
            last = np.stack(infos["final_obs"][cut])
            with torch.no_grad():
                final[cut] = choose(model, last, envs.node_action_masks()[:, 0][cut], c.live).values
        parts = (chosen.obs, chosen.masks, chosen.actions, chosen.log_probs, chosen.values, final)
        for name, value in zip(names, parts):
            rollout[name].append(value)
        rollout["rewards"].append(torch.from_numpy(rewards).float())
        rollout["ends"].append(torch.from_numpy(np.stack([terminated, truncated])))
    with torch.no_grad():
        last_values = choose(model, obs, envs.node_action_masks()[:, 0], c.live).values
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
    model: Network,
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


def _judge(model: Network, config: IPPOConfig, steps: int, minutes: float) -> dict:
    """`judge` of the greedy policy; the model goes back to training mode."""
    entry = judge(IPPOScheduler(model, config.live, config.decision_form), config, steps, minutes)
    model.train()
    return entry
