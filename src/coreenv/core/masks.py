"""Action masks and the resolution of node actions into a feasible matching (design §2, step 1)."""

from __future__ import annotations

import operator

import numpy as np

__all__ = ["IDLE_REASONS", "resolve_actions"]

IDLE_REASONS = {
    "range": "action {a!r} is not an int in [0, {k}]",
    "empty": "slot {a} is empty",
    "taken": "slot {a} is already taken by {other}",
}
"""Why a node's action was turned into idling (text of ``infos[agent]["invalid_action"]``)."""


def resolve_actions(
    actions: dict, agents: list[str], occupied: np.ndarray
) -> tuple[list[int], dict[str, str]]:
    """Turn node actions into served slots, nodes in index order; the later of two claimants idles.

    Args:
        actions: agent name -> action; ``K`` idles, and so does an agent missing from the dict.
        agents: node names in index order.
        occupied: (K,) bool, which slots hold a task.

    Returns:
        ``slots``, the slot each node trains (-1 for idle), and ``invalid``: for each node whose
        action could not be carried out, the reason.
    """
    k = occupied.size
    slots = [-1] * len(agents)
    owner: dict[int, str] = {}
    invalid: dict[str, str] = {}
    for i, agent in enumerate(agents):
        action = actions.get(agent)
        if action is None:
            continue
        if type(action) is int:  # fast path for the common case
            a = action
        else:
            try:
                a = operator.index(action)  # numpy integers, 0-d integer arrays
            except TypeError:
                a = -1  # not an integer: reported as out of range
            if action is True or action is False:
                a = -1
        if not 0 <= a <= k:
            invalid[agent] = IDLE_REASONS["range"].format(a=action, k=k)
        elif a == k:
            continue
        elif not occupied[a]:
            invalid[agent] = IDLE_REASONS["empty"].format(a=a)
        elif a in owner:
            invalid[agent] = IDLE_REASONS["taken"].format(a=a, other=owner[a])
        else:
            owner[a] = agent
            slots[i] = a
    return slots, invalid
