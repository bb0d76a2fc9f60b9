"""How the shells read node actions: as the engine's claims, why one idles, the live masks.

The rule itself, claims in node order into a feasible matching (design §2, step 1), is the
engine's (`coreenv.core.engine.claims`); this module gives the shells' side of it.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from coreenv.core import engine

__all__ = [
    "IDLE_REASONS",
    "action_indices",
    "action_int",
    "idle_reasons",
    "invalid_actions",
    "live_mask",
    "live_masks",
]

IDLE_REASONS = {
    "range": "action {a!r} is not an int in [0, {k}]",
    "empty": "slot {a} is empty",
    "taken": "slot {a} is already taken by {other}",
}
"""Why a node's action was turned into idling (text of ``infos[agent]["invalid_action"]``)."""


def action_indices(actions: Mapping, agents: Sequence[str], k: int, out: np.ndarray) -> None:
    """Write each node's action into ``out`` as `engine.claims` reads it, nodes in index order.

    ``K`` idles (so does a node missing from ``actions``, or None); ``K + 1`` stands for anything
    that is not an int in ``[0, K]`` (numpy integers are ints; bools are not).
    """
    for i, action in enumerate(map(actions.get, agents)):  # a missing node's action: None
        a = action if type(action) is int else action_int(action, k)  # type(): the common case
        out[i] = a if 0 <= a <= k else k + 1


def idle_reasons(
    actions: Mapping, agents: Sequence[str], k: int, chosen: np.ndarray, takes: np.ndarray
) -> dict[str, str]:
    """Why each node whose action was not carried out idles (`IDLE_REASONS`), from its claims.

    ``chosen`` (M,): `action_indices` of ``actions`` among K slots; ``takes`` (M,):
    `engine.claims` of them. A node that did not take the occupied slot it named lost it to an
    earlier node; otherwise the slot was empty.
    """
    reasons: dict[str, str] = {}
    for i, agent in enumerate(agents):
        a = int(chosen[i])
        if takes[i] or a == k:
            continue
        if a > k:
            reasons[agent] = IDLE_REASONS["range"].format(a=actions.get(agent, k), k=k)
            continue
        owners = [agents[o] for o in range(i) if takes[o] and chosen[o] == a]
        if owners:
            reasons[agent] = IDLE_REASONS["taken"].format(a=a, other=owners[0])
        else:
            reasons[agent] = IDLE_REASONS["empty"].format(a=a)
    return reasons


def action_int(action: object, k: int) -> int:
    """An action as an int: ``k`` (idle) for None, -1 (out of range) for a non-integer or bool."""
    if action is None:
        return k
    if action is True or action is False:
        return -1
    try:
        return operator.index(action)  # numpy integers, 0-d integer arrays
    except TypeError:
        return -1


def live_mask(mask: np.ndarray, chosen: Iterable[object]) -> tuple[np.ndarray, np.ndarray]:
    """A node's mask when the nodes before it in the same step chose ``chosen`` (design §2).

    The rule of the forms in which nodes choose one after another (the AEC form and the
    sequential Gymnasium form): a slot an earlier node validly took is no longer allowed, so
    every joint action the masks admit is a matching. ``mask``: the (K + 1,) step mask (occupied
    slots, then idle). Returns the live (K + 1,) int8 mask and the (K,) float32 taken flags.
    """
    mask = np.asarray(mask)
    if mask.ndim != 1 or mask.size < 1:
        raise ValueError(f"live_mask takes one (K + 1,) step mask, got shape {mask.shape}.")
    if not isinstance(chosen, Iterable):
        raise ValueError(
            f"live_mask takes the earlier nodes' actions as a sequence, got {chosen!r}."
        )
    k = len(mask) - 1
    taken = np.zeros(k, np.float32)
    for action in chosen:
        a = action if type(action) is int else action_int(action, k)
        if 0 <= a < k and mask[a]:
            taken[a] = 1.0
    live = mask.astype(np.int8, copy=True)
    live[:k] &= taken == 0
    return live, taken


def live_masks(
    masks: np.ndarray, chosen: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """`live_mask`'s rule for B lanes, each at its own node: (B, K + 1) int8, (B, K) float32.

    ``masks``: (B, K + 1) step masks; ``chosen``: (B, C) the nodes' actions as `engine.claims`
    reads them (``K`` idles, ``K + 1`` is out of range); ``counts``: (B,) how many of each lane's
    nodes chose before the one the mask is for (a lane's later entries are not read).
    """
    masks = np.asarray(masks)
    b, k = masks.shape[0], masks.shape[1] - 1
    earlier = np.arange(chosen.shape[1]) < np.asarray(counts)[:, None]
    occupied = masks[np.arange(b)[:, None], np.minimum(chosen, k)] != 0
    lanes, nodes = np.nonzero(earlier & (chosen < k) & occupied)
    taken = np.zeros((b, k), np.float32)
    taken[lanes, chosen[lanes, nodes]] = 1.0
    live = masks.astype(np.int8, copy=True)
    live[:, :k] &= taken == 0
    return live, taken


def invalid_actions(actions: Mapping, agents: Sequence[str], mask: np.ndarray) -> dict[str, str]:
    """`idle_reasons` of one step's ``actions`` under the (K + 1,) step ``mask``, before the step.

    The rule is `engine.claims`', as the parallel env applies it.
    """
    k = len(mask) - 1
    chosen = np.empty((1, len(agents)), np.int64)
    action_indices(actions, agents, k, chosen[0])
    lane = np.zeros((1, engine.LANE_COLUMNS), np.int64)
    lane[0, engine.ACTIVE] = 1
    takes = np.zeros(chosen.shape, bool)
    engine.claims(chosen, np.append(mask, 0).astype(np.int8)[None], lane, takes)
    return idle_reasons(actions, agents, k, chosen[0], takes[0])
