"""The `live` curve source: every task is a real training run, advanced one batch per served step.

A live task replays the hyperparameters of a recorded run of the ``id_train`` split with a fresh
seed, so its curve is new. Its target is drawn from the recorded run's curve (the same rule as for
replayed tasks), so it is reachable in all likelihood but not surely; its true demand cannot be
known in advance, so the feasibility bound is NaN and the clairvoyant oracle refuses to run.
Supervised families only.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from coreenv.curves import Curve, CurveBank, CurveSource, named_task_set, target_at_fraction
from curvegen.specs import FAMILIES, RunSpec
from curvegen.supervised import SupervisedRun

__all__ = ["LiveCurve", "LiveCurves", "LiveLosses"]


class LiveLosses:
    """The losses of a live run, trained on demand: reading index n trains up to batch n.

    Behaves like the read-only 1-D array the environment indexes (``len``, integer and slice
    indexing). If training diverges (a non-finite loss), the run stops and keeps its last loss.
    """

    def __init__(self, run: SupervisedRun, batches: int) -> None:
        self.run = run
        self.batches = batches
        self.values = [run.validation_loss()]
        self.diverged = False

    def __len__(self) -> int:
        return self.batches + 1

    def __getitem__(self, key: int | slice) -> float | np.ndarray:
        if isinstance(key, slice):
            stop = len(self) if key.stop is None else min(key.stop, len(self))
            self._train_to(stop - 1)
            return np.asarray(self.values[:stop], np.float64)[key]
        if not -len(self) <= key < len(self):
            raise IndexError(f"batch {key} is beyond this run's {self.batches} batches.")
        self._train_to(key % len(self))
        return self.values[key]

    def _train_to(self, index: int) -> None:
        while len(self.values) <= index:
            loss = self.values[-1] if self.diverged else self.run.step()
            if not (math.isfinite(loss) and loss > 0):
                self.diverged, loss = True, self.values[-1]
            self.values.append(loss)


@dataclass(frozen=True)
class LiveCurve(Curve):
    """A live task's curve, with the recorded curve its target is drawn from."""

    reference: np.ndarray | None = None


class LiveCurves(CurveSource):
    """``task_set="live"``: tasks that really train a small torch model while they are served.

    Args:
        bank: recorded runs whose hyperparameters live tasks reuse (default: the bundled
            ``id_train`` split); RL runs are skipped.
        batches: the most batches a live run may train.
    """

    name = "live"
    validated = True  # losses are checked as they are produced

    def __init__(self, bank: CurveBank | None = None, batches: int = 1000) -> None:
        bank = named_task_set("id_train") if bank is None else bank
        supervised = [
            not FAMILIES[f].reinforcement if f in FAMILIES else False for f in bank.family
        ]
        if not any(supervised):
            raise ValueError("LiveCurves needs a bank with runs of the supervised families.")
        self.bank = bank.subset(np.asarray(supervised), name=bank.name)
        self.batches = batches

    @property
    def families(self) -> tuple[str, ...]:
        """The families live tasks are drawn from."""
        return self.bank.families

    def sample(self, rng: np.random.Generator) -> LiveCurve:
        """Start a new run with a recorded run's hyperparameters and a fresh seed."""
        index = int(rng.integers(len(self.bank)))
        config = json.loads(self.bank.config[index])
        hparams = {
            k: v for k, v in config.items() if k not in ("family", "index", "seed", "batches")
        }
        spec = RunSpec(config["family"], -1, int(rng.integers(2**31)), self.batches, hparams)
        losses = LiveLosses(SupervisedRun(spec), self.batches)
        return LiveCurve(losses, spec.family, -1, reference=self.bank.curve(index).losses)

    def target(self, curve: LiveCurve, fraction: float) -> tuple[float, None]:
        """The target from the recorded curve; the live run's demand is unknowable."""
        target, _ = target_at_fraction(curve.reference, fraction)
        return target, None
