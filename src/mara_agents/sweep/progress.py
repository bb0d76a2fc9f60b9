"""The sweep's progress bar: episodes done per method and a time left weighted by their cost."""

from __future__ import annotations

import sys
import time
from collections import Counter, defaultdict
from typing import TextIO

import numpy as np
from tqdm import tqdm

from mara_agents.sweep.jobs import Job

__all__ = ["Progress"]


class Progress:
    """A tqdm bar whose time left weights each remaining episode by its method's cost.

    Costs are the mean measured seconds per episode of each method so far (the mean of all
    methods for one not yet measured), so a slow method left for last is not underestimated (tqdm's
    own rate-based estimate would be). ``workers`` divides the work; None (a Ray cluster) uses
    the parallelism measured so far. The bar also shows each method's episodes done.
    """

    def __init__(self, jobs: list[Job], workers: int | None, stream: TextIO | None = None) -> None:
        self.total = Counter(job.method for job in jobs)
        self.left = Counter(self.total)
        self.workers = workers
        self.seconds: dict[str, list[float]] = defaultdict(list)
        self.start = time.perf_counter()
        self.bar = tqdm(
            total=len(jobs),
            file=stream or sys.stdout,
            unit="episode",
            mininterval=0.5,
            bar_format="{percentage:3.0f}%|{bar:20}| {n_fmt}/{total_fmt} episodes, "
            "{elapsed} elapsed{postfix}",
        )

    def update(self, row: dict) -> None:
        """Count a finished row and redraw (tqdm redraws at most twice a second)."""
        self.left[row["method"]] -= 1
        self.seconds[row["method"]].append(row["seconds"])
        methods = " ".join(f"{m} {self.total[m] - n}/{self.total[m]}" for m, n in self.left.items())
        self.bar.set_postfix_str(f"~{self.time_left():.0f}s left; {methods}", refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        """End the bar's line."""
        self.bar.close()

    def time_left(self) -> float:
        """Estimated seconds until every remaining episode is done."""
        measured = [s for values in self.seconds.values() for s in values]
        default = float(np.mean(measured)) if measured else 0.0
        cost = {m: float(np.mean(v)) for m, v in self.seconds.items()}
        work = sum(n * cost.get(method, default) for method, n in self.left.items())
        if self.workers is not None:
            return work / self.workers
        elapsed = time.perf_counter() - self.start  # unknown parallelism (Ray): as measured
        return work * elapsed / sum(measured) if measured else 0.0
