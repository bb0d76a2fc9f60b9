"""Imitation for the MAT allocator: a teacher's demonstrations, cross-entropy, and DAgger rounds.

The warm start of MARA's training (docs/mara.md, *Training* 1): the MAT learns to copy a teacher
(HOP or LARA with the variant's own predictor, or the clairvoyant oracle) by cross-entropy on the
teacher's node actions, teacher-forced under the masks MAT itself would have sampled under. A
DAgger round lets the student play while the teacher labels the states it visits, so the student
learns to recover from its own mistakes.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from coreenv import CoreEnv, EnvConfig, Predictor
from mara_agents import seeds
from mara_agents.checks import require
from mara_agents.policy.mat import MAT
from mara_agents.policy.observations import stack_observations
from mara_agents.schedulers import HOP, LARA, Oracle, Scheduler
from mara_agents.schedulers.hop import HOP_TUNED
from mara_agents.schedulers.mara import MARA

__all__ = [
    "TEACHERS",
    "Demonstrations",
    "ImitationConfig",
    "demonstrations",
    "imitate",
    "make_teacher",
    "sequential_masks",
    "warm_start",
]

TEACHERS = ("hop", "lara", "oracle")

_flush_print = functools.partial(print, flush=True)


@dataclass(frozen=True)
class ImitationConfig:
    """The warm start by imitation (defaults: the recipe of the shipped checkpoints)."""

    teacher: str = "hop"
    """"hop": HOP (`HOP_TUNED`) on the variant's predictor; "lara": LARA with it, exploring
    W_min batches; "oracle": the clairvoyant oracle."""
    episodes: int = 60
    """Episodes the teacher plays for the first demonstrations (shared out among the clusters)."""
    dagger_rounds: int = 3
    """DAgger rounds after the first imitation (0: plain imitation)."""
    dagger_episodes: int = 20
    """Episodes the student plays in each DAgger round (shared out among the clusters)."""
    epochs: int = 8
    """Passes over all demonstrations so far, after each round."""
    lr: float = 1e-3
    """Adam's learning rate (a fresh optimiser each round)."""
    batch: int = 512
    """Demonstration steps per minibatch."""
    seed: int = seeds.IMITATION
    """Seed of the first demonstration episode; DAgger round r plays from seed + 10,000 r."""
    shuffle_seed: int = 0
    """Seeds the minibatch order (afresh each round)."""

    def __post_init__(self) -> None:
        if self.teacher not in TEACHERS:
            raise ValueError(
                f"ImitationConfig.teacher must be one of {TEACHERS}, got {self.teacher!r}."
            )
        require(self, ">= 1", ("episodes", "dagger_episodes", "epochs", "batch"))
        require(self, ">= 0", ("dagger_rounds",))
        require(self, "> 0", ("lr",))

    def round_seed(self, round_: int) -> int:
        """The first episode seed of round ``round_`` (0: the teacher's own demonstrations)."""
        return self.seed + 10_000 * round_


@dataclass(frozen=True)
class Demonstrations:
    """Labelled steps: what the teacher did in each state, and the masks MAT would have used."""

    obs: torch.Tensor  # (N, M, D)
    masks: torch.Tensor  # (N, M, K + 1) bool
    actions: torch.Tensor  # (N, M) long, the teacher's node actions

    def __len__(self) -> int:
        return len(self.obs)

    def concat(self, other: Demonstrations) -> Demonstrations:
        """These steps followed by ``other``'s."""
        return Demonstrations(
            torch.cat([self.obs, other.obs]),
            torch.cat([self.masks, other.masks]),
            torch.cat([self.actions, other.actions]),
        )


def make_teacher(name: str, predictor: Predictor, env: CoreEnv) -> Scheduler:
    """The teacher ``name``: HOP or LARA (exploring ``W_min`` batches) on ``predictor``."""
    if name not in TEACHERS:
        raise ValueError(f"teacher must be one of {TEACHERS}, got {name!r}.")
    if name == "oracle":
        return Oracle()
    if name == "hop":
        return HOP(predictor, HOP_TUNED)
    return LARA(predictor=predictor, explore=env.config.min_prefix)


def sequential_masks(action_mask: np.ndarray, actions: np.ndarray, num_slots: int) -> np.ndarray:
    """(M, K + 1) the masks `MAT.act` samples node i under, given the earlier nodes' ``actions``.

    Node i may take any slot of ``action_mask`` (K + 1,) not taken by nodes 0 … i − 1, or idle.
    """
    mask = action_mask.astype(bool).copy()
    masks = []
    for action in actions:
        masks.append(mask.copy())
        if action < num_slots:
            mask[action] = False
    return np.stack(masks)


def demonstrations(
    predictor: Predictor,
    teacher: str,
    episodes: int,
    seed: int,
    env_overrides: Mapping[str, Any],
    student: Scheduler | None = None,
) -> Demonstrations:
    """The teacher's node actions on ``episodes`` episodes seeded ``seed, seed + 1, …``.

    The teacher plays, unless ``student`` is given: then the student plays and the teacher only
    labels the states the student visits (a DAgger round).
    """
    env = CoreEnv(predictor=predictor, **env_overrides)
    expert = make_teacher(teacher, predictor, env)
    obs, masks, actions = [], [], []
    for episode in range(episodes):
        observations, infos = env.reset(seed=seed + episode)
        for scheduler in (expert, student):
            if scheduler is not None:
                scheduler.reset(env)
        while env.agents:
            chosen = expert.act(observations, infos)
            row = np.array([chosen[a] for a in env.agents])
            nodes = stack_observations(observations, env.agents)
            obs.append(nodes.obs)
            masks.append(sequential_masks(nodes.action_mask, row, env.config.num_slots))
            actions.append(row)
            played = chosen if student is None else student.act(observations, infos)
            observations, _, _, _, infos = env.step(played)
    return Demonstrations(
        torch.from_numpy(np.stack(obs)),
        torch.from_numpy(np.stack(masks)),
        torch.from_numpy(np.stack(actions)).long(),
    )


def imitate(
    model: MAT, demos: Sequence[Demonstrations], config: ImitationConfig, device: str
) -> float:
    """``config.epochs`` of cross-entropy on the teacher's actions; the last epoch's mean loss.

    ``demos``: one set per cluster (their shapes differ); each minibatch holds one cluster's
    steps, and the minibatches of every cluster come in one shuffled order.
    """
    sets = [tuple(t.to(device) for t in (d.obs, d.masks, d.actions)) for d in demos]
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    generator = torch.Generator(device=device).manual_seed(config.shuffle_seed)
    loss_sum = 0.0
    for _ in range(config.epochs):
        batches = []
        for index, (obs, _, _) in enumerate(sets):
            order = torch.randperm(len(obs), generator=generator, device=device)
            starts = range(0, len(obs), config.batch)
            batches += [(index, order[i : i + config.batch]) for i in starts]
        loss_sum = 0.0
        for position in torch.randperm(len(batches), generator=generator).tolist():
            index, rows = batches[position]
            obs, masks, actions = sets[index]
            loss = -model.score_actions(obs[rows], actions[rows], masks[rows]).log_probs.mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum += loss.item()
        loss_sum /= len(batches)
    return loss_sum


def warm_start(
    model: MAT,
    predictor: Predictor,
    config: ImitationConfig,
    envs: Sequence[Mapping[str, Any]],
    judge: Callable[[MAT], np.ndarray],
    device: str = "cpu",
    log: Callable[[str], None] = _flush_print,
) -> list[dict]:
    """Imitation of the teacher, then ``config.dagger_rounds`` DAgger rounds; the history.

    ``envs``: the `EnvConfig` fields of each cluster trained on; a round's episodes are shared
    out among them (``ceil(episodes / len(envs))`` each, the same seeds on every cluster).
    After each round ``judge(model)`` scores the policy (MARA's training: its completion rate on
    each selection episode); the history has one entry per round, with the mean score. The model
    ends on ``device`` in training mode.
    """

    def share(episodes: int) -> int:
        return -(-episodes // len(envs))

    first = share(config.episodes)
    demos = [
        demonstrations(predictor, config.teacher, first, config.round_seed(0), env)
        for env in envs
    ]
    history = []
    for round_ in range(config.dagger_rounds + 1):
        start = time.perf_counter()
        if round_:
            for index, env in enumerate(envs):
                student = MARA.reading(model.cpu(), predictor, EnvConfig(**env))
                more = demonstrations(
                    predictor,
                    config.teacher,
                    share(config.dagger_episodes),
                    config.round_seed(round_),
                    env,
                    student,
                )
                demos[index] = demos[index].concat(more)
        model.to(device).train()
        loss = imitate(model, demos, config, device)
        rate = float(np.mean(judge(model)))
        samples = sum(len(d) for d in demos)
        history.append(
            {
                "phase": "imitation",
                "teacher": config.teacher,
                "round": round_,
                "samples": samples,
                "loss": loss,
                "eval": rate,
            }
        )
        log(
            f"imitation of {config.teacher}, round {round_}: {samples} steps, loss {loss:.3f}, "
            f"completion {100 * rate:.1f}% ({(time.perf_counter() - start) / 60:.1f} min)"
        )
    model.to(device).train()
    return history
