"""What every RL baseline run shares: its settings, and its judge on the selection episodes."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coreenv import EnvConfig
from mara_agents import seeds
from mara_agents.checks import require
from mara_agents.evaluation import completion_rates
from mara_agents.schedulers.base import Scheduler
from mara_agents.training.recipe import TRAINING_ENV
from mara_agents.training.settings import ActorCriticSettings

__all__ = ["LOG", "BaselineRun", "check_work", "claim_work", "judge", "record"]

EPISODES = "episodes.json"
"""The file of a run's work folder that names the episodes it trains on (`claim_work`)."""

LOG = functools.partial(print, flush=True)
"""Where runs report each evaluation: stdout, flushed (a run's log file shows it at once)."""

@dataclass(frozen=True, kw_only=True)
class BaselineRun(ActorCriticSettings):
    """The settings every baseline run has; each algorithm's config adds its own.

    The PPO settings are `ActorCriticSettings` (SB3's PPO defaults where they apply).
    """

    work: Path
    """Folder of the state to resume from, the best policy and ``history.json``."""
    max_steps: int = 2_000_000
    """The learner's steps to train for, counted across resumed runs: environment steps in the
    default form, decisions in the event form, node choices in the sequential form."""
    minutes: float = 60.0
    """Wall-time budget of this call (a later call continues)."""
    seed: int = 1
    """Seeds the initial weights and the sampling."""
    env_seed: int = seeds.BASELINES
    """Lane i's episodes play ``env_seed + i + j·envs`` (training seeds; selection is apart)."""
    envs: int = 32
    """Lanes of the vector environment."""
    n_steps: int = 128
    """Steps per lane between updates (an update learns from envs × n_steps steps, in
    ``minibatches`` minibatches)."""
    gamma: float = 0.999
    """Discount: close to 1, since a completion counts the same late or early."""
    eval_every: int = 200_000
    """The learner's steps (as ``max_steps``) between evaluations (and saves)."""
    eval_episodes: int = 100
    """Selection episodes of each evaluation (always the same ones)."""
    selection_seed: int = seeds.SELECTION
    """The first selection episode's seed (MARA's selection episodes too)."""
    env: Mapping[str, Any] = field(default_factory=lambda: dict(TRAINING_ENV))
    """`EnvConfig` fields of the training and selection episodes."""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self, ">= 1", ("max_steps", "envs", "n_steps", "eval_every", "eval_episodes"))
        require(self, "> 0", ("minutes",))
        require(self, ">= 0", ("env_seed", "selection_seed"))
        require(self, "in (0, 1]", ("gamma",))
        EnvConfig(**self.env)  # a bad field or cluster is refused here, naming it


def check_work(run: BaselineRun) -> None:
    """Refuse a ``work`` folder holding a run on other episodes (another cluster, load, task set).

    A run writes its `EnvConfig` fields to ``work/episodes.json`` when it starts (`claim_work`);
    resuming it with other ones would train one network on two observation layouts or mix two
    learning curves in one history.
    """
    saved = Path(run.work) / EPISODES
    if not saved.is_file():
        return
    stored, asked = json.loads(saved.read_text()), _episodes(run)
    if stored != asked:
        changed = sorted(k for k in stored.keys() | asked.keys() if stored.get(k) != asked.get(k))
        there, here = ({k: fields.get(k) for k in changed} for fields in (stored, asked))
        raise ValueError(
            f"{run.work} holds a run on other episodes ({', '.join(changed)}: {there} there, "
            f"{here} asked): give the new run another work folder."
        )


def claim_work(run: BaselineRun) -> Path:
    """``run.work``, made if new, after `check_work`; it records the run's episodes."""
    check_work(run)
    work = Path(run.work)
    work.mkdir(parents=True, exist_ok=True)
    (work / EPISODES).write_text(json.dumps(_episodes(run)))
    return work


def _episodes(run: BaselineRun) -> dict:
    """``run.env`` as JSON reads it back; an object (a curve source) by its type's name."""
    return json.loads(json.dumps(dict(run.env), default=lambda value: type(value).__name__))


def judge(scheduler: Scheduler, run: BaselineRun, steps: int, minutes: float) -> dict:
    """A history entry: the greedy policy's completion on each selection episode."""
    rates = completion_rates(scheduler, run.eval_episodes, run.selection_seed, **run.env)
    mean = float(rates.mean())
    return {"steps": steps, "eval": mean, "rates": rates.tolist(), "minutes": minutes}


def record(
    history: list[dict],
    entry: dict,
    work: Path,
    save_best: Callable[[], None],
    save_state: Callable[[], None],
    log: Callable[[str], None],
) -> None:
    """Append an evaluation to a run's history, saving what goes with it.

    Keeps the policy if it is the best so far, saves the state to resume from, rewrites
    ``history.json`` and logs the score.
    """
    if entry["eval"] > max(h["eval"] for h in history):
        save_best()
    history.append(entry)
    save_state()
    (Path(work) / "history.json").write_text(json.dumps(history, indent=1))
    log(f"steps {entry['steps']}: {100 * entry['eval']:.2f}% on the selection episodes")
