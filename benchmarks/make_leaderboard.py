"""Write docs/leaderboard.md from the entries of leaderboard/ (the suite checks it is current).

    python benchmarks/make_leaderboard.py
"""

from pathlib import Path

from mara_agents.benchmark.leaderboard import read_entries, render
from mara_agents.benchmark.protocol import CORE_BENCH_V1
from mara_agents.benchmark.references import load_references

ROOT = Path(__file__).resolve().parent.parent


def leaderboard_page() -> str:
    """The page: leaderboard/README.md, then the ranked entries of CoRE-Bench-v1."""
    entries = read_entries(ROOT / "leaderboard", CORE_BENCH_V1)
    intro = (ROOT / "leaderboard" / "README.md").read_text()
    return render(entries, CORE_BENCH_V1, load_references(CORE_BENCH_V1.name), intro)


if __name__ == "__main__":
    (ROOT / "docs" / "leaderboard.md").write_text(leaderboard_page())
    print(f"wrote {ROOT / 'docs' / 'leaderboard.md'}")
