"""The seed plan: the episode seeds of training, selection, choices and evaluation, kept apart.

Everything that trains, tunes or chooses plays seeds below `EVALUATION`; the sweep's evaluation
episodes are seeded from it up (design §5), so no policy or setting is chosen on them. Each
range starts at its constant and runs up to the next one.
"""

from __future__ import annotations

__all__ = [
    "BASELINES",
    "CHOICE",
    "EVALUATION",
    "IMITATION",
    "RL",
    "SELECTION",
    "check_choice_episodes",
]

IMITATION = 100_000
"""The first episode of expert iteration: the teacher's demonstrations, then the DAgger rounds."""
RL = 200_000
"""The first episode of MARA's RL stage (and of the training-throughput benchmark)."""
BASELINES = 300_000
"""The first training episode of the RL baselines trained from scratch."""
SELECTION = 900_000
"""The first of the fixed selection episodes every training run is judged on (100 of them)."""
CHOICE = 950_000
"""The first of the episodes that choose between finished runs (``coreenv compare``)."""
EVALUATION = 1_000_000
"""The first evaluation episode of the sweep; nothing below it is an evaluation episode."""


def check_choice_episodes(seed: int, episodes: int) -> None:
    """Refuse a script's ``--seed``/``--episodes`` unless they name >= 2 paired training episodes.

    The episodes are seeded ``seed, seed + 1, …``; a setting chosen on them must not have seen
    an evaluation episode, so all of them lie below `EVALUATION`. ValueError says which is wrong.
    """
    if episodes < 2:
        raise ValueError(f"--episodes must be >= 2 (the differences are paired), got {episodes}.")
    if seed < 0 or seed + episodes > EVALUATION:
        raise ValueError(
            f"--seed must keep every episode on training seeds, in [0, {EVALUATION}), got "
            f"{seed} + {episodes} episodes."
        )
