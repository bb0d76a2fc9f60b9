"""The names coreenv 0.1.0's pickled environments refer to, kept so that they load.

0.1.0 kept an episode in a `State` (with `Counters`); a `CoreEnv` it pickled is rebuilt from
its config when loaded (`CoreEnv.__setstate__`), and what these held is dropped.
"""

from __future__ import annotations

__all__ = ["Counters", "State"]


class State:
    """What a 0.1.0 pickle's episode state loads as: nothing of it is kept."""

    def __setstate__(self, state: dict) -> None:
        """Drop the pickled state."""


Counters = State
