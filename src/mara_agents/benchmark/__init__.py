"""CoRE-Bench: the fixed, versioned protocol, its shipped references, the scorecard and the checks.

    rows = play_protocol(CORE_BENCH_V1, ["my_pkg.sched:Mine"], Path("results/mine"), quick=True)
    print(scorecard(rows, CORE_BENCH_V1, load_references(CORE_BENCH_V1.name), quick=True))

`coreenv benchmark` and `coreenv validate` are the command lines over it (docs/benchmark.md,
*CoRE-Bench*). Modules: `protocol` (what is played), `play` (the rows), `references` (the
built-in methods' shipped results), `scorecard`, `validate` (rows checked by replay) and
`leaderboard` (the entries of ``leaderboard/`` and their page).
"""

from mara_agents.benchmark.play import play_protocol
from mara_agents.benchmark.protocol import CORE_BENCH_V1, Protocol
from mara_agents.benchmark.references import load_references
from mara_agents.benchmark.scorecard import scorecard

__all__ = ["CORE_BENCH_V1", "Protocol", "load_references", "play_protocol", "scorecard"]
