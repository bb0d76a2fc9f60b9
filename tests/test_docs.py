"""The documentation's Python examples: each runs as written, or is listed here with why not.

An example is named by its page, its place among the page's Python blocks and the start of its
first line (so that blocks swapped or replaced are noticed). It runs as a script (``__name__`` is
``"__main__"``) in a fresh namespace, in a folder holding only what it reads (`SETUP`), with
``examples/`` importable, the task-set registry restored after it and its printing captured;
what the text says it prints is checked (`CHECKS`). Calling deprecated API directly is an error.
"""

import contextlib
import io
import re
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^([ \t]*)```python[^\n]*\n(.*?)^\1```[ \t]*$", re.M | re.S)

RUN = {
    ("README.md", 0, "import coreenv"),
    ("docs/curves.md", 0, "from coreenv.curves import bank_from_csv"),
    ("docs/curves.md", 1, "import coreenv"),
    ("docs/environment.md", 0, "import coreenv"),
    ("docs/environment.md", 1, "from sb3_contrib import MaskablePPO"),
    ("docs/environment.md", 2, "import coreenv"),
    ("docs/environment.md", 3, "import coreenv"),
    ("docs/environment.md", 4, "import coreenv"),
    ("docs/environment.md", 5, "import coreenv"),
    ("docs/environment.md", 6, "import gymnasium"),
    ("docs/environment.md", 8, "import gymnasium"),
    ("docs/environment.md", 9, "import gymnasium"),
    ("docs/environment.md", 11, "import numpy as np"),
    ("docs/environment.md", 12, "import coreenv"),
    ("docs/index.md", 0, "import coreenv"),
    ("docs/index.md", 1, "from mara_agents import evaluate"),
    ("docs/rl.md", 0, "from sb3_contrib import MaskablePPO"),
    ("docs/rl.md", 1, "from mara_agents.evaluation import compl"),
    ("docs/schedulers.md", 0, "class Scheduler:"),
    ("docs/schedulers.md", 3, "import numpy as np"),
    ("docs/tutorial.md", 1, "from mara_agents import evaluate"),
}
SKIPPED = {
    ("docs/benchmark.md", 0, "from mara_agents.schedulers import LARA"): "a sweep of 180 episodes",
    ("docs/environment.md", 7, "from sb3_contrib import MaskablePPO"): "trains MaskablePPO",
    ("docs/environment.md", 10, "from sb3_contrib import MaskablePPO"): "100,000 steps of PPO",
    ("docs/mara.md", 0, "from mara_agents.schedulers.mara import"): "MARA with FM: ~40 s",
    ("docs/mara.md", 1, "from pathlib import Path"): "trains MARA for an hour",
    ("docs/schedulers.md", 1, "def act_view(self, view: coreenv.Schedul"): "a signature",
    ("docs/schedulers.md", 2, "import time"): "times HOP and LARA on 12 episodes",
    ("docs/tutorial.md", 0, '--8<-- "examples/my_scheduler.py"'): (
        "includes examples/my_scheduler.py, which the tutorial's sweep test runs"
    ),
    ("docs/tutorial.md", 2, '--8<-- "examples/linear_policy.py"'): (
        "includes examples/linear_policy.py, which the tutorial's compare and sweep tests run"
    ),
}


def examples(page: str) -> dict[tuple[str, int, str], str]:
    """The page's Python blocks by name, dedented (a block may sit in a list item)."""
    found = {}
    for index, match in enumerate(FENCE.finditer((ROOT / page).read_text())):
        code = textwrap.dedent(match.group(2))
        found[page, index, code.splitlines()[0].split("  #")[0][:40].rstrip()] = code
    return found


ALL = {name: code for page in PAGES for name, code in examples(page).items()}


def run(name: tuple[str, int, str]) -> str:
    """Run one example as a script in the current folder; what it printed."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(ALL[name], f"{name[0]} example {name[1]}", "exec"), {"__name__": "__main__"})
    return printed.getvalue()


def write_logs(folder: Path) -> None:
    """The reader's CSV of training logs that curves.md reads: three runs of 60 batches."""
    rows = [f"r{r},{b},{2 / (1 + b) ** (0.3 + r / 10):.6f}" for r in range(3) for b in range(60)]
    (folder / "my_logs.csv").write_text("\n".join(["run,batch,loss", *rows]) + "\n")


def bank_written(folder: Path) -> None:
    write_logs(folder)
    run(
        (
            "docs/curves.md",
            0,
            "from coreenv.curves import bank_from_csv",
        )
    )


def quoted_completion(printed: str, text: str) -> None:
    """The completion the schedulers page quotes for its example, within half a point (WLS fits
    differ in the last bits between CPUs): LARA's quoted 46.0% stays above it."""
    assert "completes 45.8% of the tasks" in text
    assert abs(100 * float(printed.split()[-1]) - 45.8) <= 0.5


def all_episodes(printed: str, text: str) -> None:
    """The batched-core example plays all 200 seeds it was given."""
    assert "range(200)" in text
    assert printed.split()[0] == "200"


def no_conflicts(printed: str, text: str) -> None:
    """The tutorial's scheduler: "`conflicts` … should be 0"."""
    assert "should be 0" in text
    assert float(printed.split()[-1]) == 0.0


SETUP = {  # what an example expects to find in its folder
    (
        "docs/curves.md",
        0,
        "from coreenv.curves import bank_from_csv",
    ): (write_logs),
    ("docs/curves.md", 1, "import coreenv"): bank_written,
}
CHECKS = {
    ("docs/schedulers.md", 3, "import numpy as np"): quoted_completion,
    ("docs/tutorial.md", 1, "from mara_agents import evaluate"): no_conflicts,
    ("docs/environment.md", 11, "import numpy as np"): all_episodes,
}


def test_every_example_runs_here_or_says_why_not():
    assert set(ALL) == RUN | set(SKIPPED), "classify new, moved or changed examples"
    assert not RUN & set(SKIPPED)
    assert set(SETUP) | set(CHECKS) <= RUN


@pytest.mark.filterwarnings("error::DeprecationWarning:__main__")  # called by the example itself
@pytest.mark.parametrize("name", sorted(RUN))
def test_example_runs_as_written(name, tmp_path, monkeypatch, registry):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(ROOT / "examples"), *sys.path])
    SETUP.get(name, lambda folder: None)(tmp_path)
    printed = run(name)
    CHECKS.get(name, lambda printed, text: None)(printed, (ROOT / name[0]).read_text())
