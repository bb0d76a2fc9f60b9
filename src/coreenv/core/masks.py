"""Action masks and the resolution of node actions into a feasible matching (design §2, step 1)."""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["IDLE_REASONS", "live_mask", "resolve_actions"]

IDLE_REASONS = {
    "range": "action {a!r} is not an int in [0, {k}]",
    "empty": "slot {a} is empty",
    "taken": "slot {a} is already taken by {other}",
}
"""Why a node's action was turned into idling (text of ``infos[agent]["invalid_action"]``)."""


def resolve_actions(
    actions: dict, agents: list[str], occupied: Sequence[bool]
) -> tuple[list[int], dict[str, str]]:
    """Turn node actions into served slots, nodes in index order; the later of two claimants idles.

    Args:
        actions: agent name -> action; ``K`` idles, and so does an agent missing from the dict.
        agents: node names in index order.
        occupied: (K,) bools, which slots hold a task (a list reads fastest).

    Returns:
        ``slots``, the slot each node trains (-1 for idle), and ``invalid``: for each node whose
        action could not be carried out, the reason.
    """
    k = len(occupied)
    slots = []
    owner: dict[int, str] = {}
    invalid: dict[str, str] = {}
    for agent in agents:
        action = actions.get(agent, k)
        a = action if type(action) is int else _as_int(action, k)  # type(): the common case
        if 0 <= a < k and occupied[a] and a not in owner:
            owner[a] = agent
            slots.append(a)
            continue
        slots.append(-1)
        if a == k:
            continue
        if not 0 <= a <= k:
            invalid[agent] = IDLE_REASONS["range"].format(a=action, k=k)
        elif not occupied[a]:
            invalid[agent] = IDLE_REASONS["empty"].format(a=a)
        else:
            invalid[agent] = IDLE_REASONS["taken"].format(a=a, other=owner[a])
    return slots, invalid


def _as_int(action: object, k: int) -> int:
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
        a = action if type(action) is int else _as_int(action, k)
        if 0 <= a < k and mask[a]:
            taken[a] = 1.0
    live = mask.astype(np.int8, copy=True)
    live[:k] &= taken == 0
    return live, taken
