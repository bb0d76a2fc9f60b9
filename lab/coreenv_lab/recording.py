"""Fingerprints of whole episodes, to show that a change of the engine moved nothing.

`fingerprint` plays episodes with a seeded policy that reads only the action masks (a random
allowed slot per node, now and then an out-of-range or taken one, so that conflicts and invalid
actions are played too) and digests, step by step, what the environment gave back: observations,
masks, rewards and flags, infos (metrics included). Digests are kept per block of steps, so a
comparison names the first block and stream that differ. Bit for bit holds on one machine; the
floating-point features may differ in the last bits between CPUs (docs/performance.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "STREAMS",
    "Fingerprint",
    "fingerprint",
    "fingerprint_differences",
    "fingerprint_vector",
]

STREAMS = ("observations", "masks", "rewards", "infos")
"""What is digested at every step, each in its own stream."""
BLOCK = 100
"""Steps per digest: a difference is located to a block of this many steps."""


@dataclass
class Fingerprint:
    """The digests of one recorded case: per stream, one hex digest per block of steps."""

    steps: int = 0
    blocks: dict[str, list[str]] = field(default_factory=lambda: {s: [] for s in STREAMS})

    def __post_init__(self) -> None:
        self._open = {stream: hashlib.sha256() for stream in STREAMS}

    def add(self, **parts: bytes) -> None:
        """One step's bytes, by stream; a block's digest closes every `BLOCK` steps."""
        for stream, data in parts.items():
            self._open[stream].update(data)
        self.steps += 1
        if self.steps % BLOCK == 0:
            self._close()

    def finish(self) -> Fingerprint:
        """Close the last, partial block; returns self."""
        if self.steps % BLOCK:
            self._close()
        return self

    def as_dict(self) -> dict[str, Any]:
        """The JSON form: steps and the blocks' digests."""
        return {"steps": self.steps, "blocks": self.blocks}

    def _close(self) -> None:
        for stream in STREAMS:
            self.blocks[stream].append(self._open[stream].hexdigest()[:16])
            self._open[stream] = hashlib.sha256()


def fingerprint(
    env: Any, seeds: Iterable[int], invalid_rate: float = 0.05, max_steps: int | None = None
) -> Fingerprint:
    """Digest ``env`` (a PettingZoo parallel `CoreEnv`) over one episode per seed.

    The policy's generator is seeded by each episode's seed, so a case is a function of the
    environment alone. ``max_steps`` cuts each episode (None: to its end).
    """
    record = Fingerprint()
    for seed in seeds:
        rng = np.random.default_rng([seed, 7])
        observations, infos = env.reset(seed=seed)
        record.add(**_parallel_parts(observations, {}, {}, {}, infos))
        steps = 0
        while env.agents and (max_steps is None or steps < max_steps):
            masks = [observations[a]["action_mask"] for a in env.agents]
            actions = dict(zip(env.agents, _policy(rng, np.stack(masks), invalid_rate).tolist()))
            observations, rewards, terms, truncs, infos = env.step(actions)
            record.add(**_parallel_parts(observations, rewards, terms, truncs, infos))
            steps += 1
    return record.finish()


def fingerprint_vector(env: Any, seed: int, steps: int, invalid_rate: float = 0.05) -> Fingerprint:
    """Digest ``env`` (a `CoreVectorEnv`) over ``steps`` steps of all lanes from ``reset(seed)``."""
    record = Fingerprint()
    rng = np.random.default_rng([seed, 7])
    obs, infos = env.reset(seed=seed)
    record.add(**_vector_parts(obs, env.node_action_masks(), None, infos))
    for _ in range(steps):
        masks = env.node_action_masks()
        actions = _policy(rng, masks.reshape(-1, masks.shape[-1]), invalid_rate)
        obs, rewards, terms, truncs, infos = env.step(actions.reshape(masks.shape[:2]))
        record.add(**_vector_parts(obs, env.node_action_masks(), (rewards, terms, truncs), infos))
    return record.finish()


def fingerprint_differences(reference: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between two fingerprints (`Fingerprint.as_dict`): first block per stream."""
    found = []
    if reference["steps"] != new["steps"]:
        found.append(f"steps: {reference['steps']} then {new['steps']}")
    for stream in STREAMS:
        pairs = zip(reference["blocks"][stream], new["blocks"][stream])
        block = next((i for i, (a, b) in enumerate(pairs) if a != b), None)
        if block is not None:
            found.append(f"{stream}: first differs in steps {block * BLOCK}-{(block + 1) * BLOCK}")
    return found


def _policy(rng: np.random.Generator, masks: np.ndarray, invalid_rate: float) -> np.ndarray:
    """One action per mask row: a uniformly random allowed one, or any in [-1, K + 1]."""
    k = masks.shape[1] - 1
    scores = rng.random(masks.shape) + masks.astype(bool)  # allowed actions score above 1
    actions = scores.argmax(axis=1)
    wild = rng.random(len(masks)) < invalid_rate
    return np.where(wild, rng.integers(-1, k + 2, len(masks)), actions)


def _parallel_parts(
    observations: dict, rewards: dict, terms: dict, truncs: dict, infos: dict
) -> dict[str, bytes]:
    agents = sorted(observations)
    return {
        "observations": b"".join(observations[a]["observation"].tobytes() for a in agents),
        "masks": b"".join(observations[a]["action_mask"].tobytes() for a in agents),
        "rewards": _json([rewards, terms, truncs]),
        "infos": _json(infos),
    }


def _vector_parts(
    obs: np.ndarray, masks: np.ndarray, outcome: tuple | None, infos: dict
) -> dict[str, bytes]:
    rewards = b"" if outcome is None else b"".join(np.asarray(x).tobytes() for x in outcome)
    return {
        "observations": np.ascontiguousarray(obs).tobytes(),
        "masks": masks.tobytes(),
        "rewards": rewards,
        "infos": _json(infos),
    }


def _json(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, default=_plain).encode()


def _plain(value: object) -> object:
    """Arrays and scalars of numpy in infos as JSON: an array by its bytes' digest."""
    if isinstance(value, np.ndarray) and value.dtype == object:  # its bytes are pointers
        return value.tolist()
    if isinstance(value, np.ndarray):
        return [str(value.dtype), value.shape, hashlib.sha256(value.tobytes()).hexdigest()]
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot fingerprint a {type(value).__name__} in infos")
