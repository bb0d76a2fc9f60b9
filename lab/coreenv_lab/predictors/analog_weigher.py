"""`AnalogWeigher`: learned weights of a base predictor's answer and of each analog's.

`AnalogPredictor`'s fixed rule gives the analogs half the weight (a geometric mean with the base)
whether one analog or sixteen say it, near or far. The weigher reads, per task, the base's sampled
futures and up to `neighbours` analogs (`analogs.Match`: distance, crossing, whether it is a
lower bound, where it was found) and answers the log of the remaining batches as the base's plus
an attention-weighted sum of shifts: one token for the base (shift 0) and one per analog (its
crossing's gap to the base's, corrected by the network). With no analog it answers as the base.
Trained by `coreenv_lab.fm_training.weigher` on corpus kinds the base never saw.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from coreenv_lab.predictors.analogs import Match
from mara_agents.checks import require
from mara_agents.predictors.horizon import HORIZON

__all__ = ["AnalogWeigher", "WeigherConfig", "WeigherInputs", "weigher_inputs"]

QUERY_FEATURES = 6
"""Per task: the base's log answer, its spread and share of never, the prefix's length, its gap
to the target, the number of analogs found."""
TOKEN_FEATURES = 6
"""Per analog: its gap to the base's answer, distance, rank, and flags for a lower bound, never,
and found among finished tasks."""


@dataclass(frozen=True)
class WeigherConfig:
    """The weigher's shape."""

    neighbours: int = 8
    """Analogs read per task, nearest first."""
    hidden: int = 32
    """Width of the token and query networks."""
    horizon: int = HORIZON
    """Remaining batches beyond which an answer counts as never (the predictors' H)."""

    def __post_init__(self) -> None:
        require(self, "an int >= 1", ("neighbours", "hidden", "horizon"))


@dataclass(frozen=True)
class WeigherInputs:
    """What the weigher reads of B tasks: float32 arrays."""

    base: np.ndarray
    """(B,) log1p of the base's median remaining batches, capped at the horizon."""
    query: np.ndarray
    """(B, QUERY_FEATURES)"""
    tokens: np.ndarray
    """(B, neighbours, TOKEN_FEATURES), zero where ``mask`` is False."""
    mask: np.ndarray
    """(B, neighbours) bool: which tokens are analogs."""


def weigher_inputs(
    samples: np.ndarray,
    prefixes: Sequence[np.ndarray],
    targets: np.ndarray,
    matches: Sequence[Sequence[Match]],
    config: WeigherConfig,
) -> WeigherInputs:
    """The weigher's inputs for B tasks.

    From the base's (B, S) sampled remaining batches, each task's prefix and target, and its
    analogs (nearest first; the first ``neighbours`` are read).
    """
    cap = math.log1p(config.horizon)
    capped = np.log1p(np.minimum(np.asarray(samples, np.float64), config.horizon))
    base = np.median(capped, axis=1)
    spread = np.quantile(capped, 0.9, axis=1) - np.quantile(capped, 0.1, axis=1)
    never = np.mean(np.isinf(samples), axis=1)
    lengths = np.array([len(p) for p in prefixes], np.float64)
    gaps = np.array(
        [math.log(float(np.min(p[-8:]))) - math.log(float(t)) for p, t in zip(prefixes, targets)]
    )
    found = np.array([min(len(m), config.neighbours) for m in matches], np.float64)
    query = np.stack(
        [base / cap, spread / cap, never, np.log1p(lengths) / cap, gaps, found / config.neighbours],
        axis=1,
    )
    tokens = np.zeros((len(matches), config.neighbours, TOKEN_FEATURES))
    mask = np.zeros((len(matches), config.neighbours), bool)
    for i, task in enumerate(matches):
        for j, match in enumerate(task[: config.neighbours]):
            crossing = math.log1p(min(match.batches, config.horizon))
            tokens[i, j] = (
                (crossing - base[i]) / cap,
                match.distance,
                j / config.neighbours,
                match.at_least,
                math.isinf(match.batches),
                match.revealed,
            )
            mask[i, j] = True
    return WeigherInputs(
        base.astype(np.float32),
        query.astype(np.float32),
        tokens.astype(np.float32),
        mask,
    )


class AnalogWeigher(nn.Module):
    """Log remaining batches = the base's + Σ weight × shift over the base and its analogs."""

    def __init__(self, config: WeigherConfig = WeigherConfig(), trained_for: str = "") -> None:
        super().__init__()
        self.config = config
        self.trained_for = trained_for
        """The name of the predictor whose answers it was trained to weigh ("" if none yet)."""
        width = config.hidden
        self.query_net = nn.Sequential(nn.Linear(QUERY_FEATURES, width), nn.GELU())
        self.token_net = nn.Sequential(
            nn.Linear(TOKEN_FEATURES + width, width), nn.GELU(), nn.Linear(width, width), nn.GELU()
        )
        self.token_score = nn.Linear(width, 1)
        self.token_shift = nn.Linear(width, 1)
        self.base_score = nn.Linear(width, 1)

    @property
    def neighbours(self) -> int:
        """Analogs read per task."""
        return self.config.neighbours

    def forward(
        self, base: torch.Tensor, query: torch.Tensor, tokens: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        """(B,) log1p of the remaining batches, within [0, log1p(horizon)]."""
        context = self.query_net(query)
        width = context.shape[-1]
        hidden = self.token_net(
            torch.cat([tokens, context[:, None, :].expand(-1, tokens.shape[1], width)], dim=-1)
        )
        cap = math.log1p(self.config.horizon)
        shifts = tokens[..., 0] * cap + self.token_shift(hidden)[..., 0]
        scores = self.token_score(hidden)[..., 0].masked_fill(~mask, -torch.inf)
        scores = torch.cat([self.base_score(context), scores], dim=1)
        weights = torch.softmax(scores, dim=1)[:, 1:]
        return torch.clamp(base + (weights * shifts.masked_fill(~mask, 0.0)).sum(dim=1), 0.0, cap)

    def answer(self, inputs: WeigherInputs) -> np.ndarray:
        """(B,) float64 remaining batches for ``inputs`` (the base's median where no analog)."""
        with torch.no_grad():
            logs = self(*(torch.from_numpy(a) for a in _tensors(inputs)))
        return np.expm1(logs.numpy().astype(np.float64))

    def reweigh(
        self,
        samples: np.ndarray,
        prefixes: Sequence[np.ndarray],
        targets: np.ndarray,
        matches: Sequence[Sequence[Match]],
    ) -> None:
        """Scale each task's (S,) sampled remaining batches to the weighed median, in place.

        A task without analogs keeps its samples; one whose samples all say never takes the
        weighed answer where it is within the horizon.
        """
        found = [i for i, m in enumerate(matches) if m]
        if not found:
            return
        inputs = weigher_inputs(
            samples[found],
            [prefixes[i] for i in found],
            targets[found],
            [matches[i] for i in found],
            self.config,
        )
        answers = self.answer(inputs)
        for i, weighed in zip(found, answers.tolist()):
            median = float(np.median(samples[i]))
            if math.isinf(median):
                if weighed < self.config.horizon:
                    samples[i] = weighed
            elif median > 0:
                samples[i] *= weighed / median

    def save(self, path: str | Path) -> None:
        """Its config and weights, for `load`."""
        state = {"config": asdict(self.config), "state": self.state_dict()}
        torch.save({**state, "trained_for": self.trained_for}, path)

    @classmethod
    def load(cls, path: str | Path, base: str | None = None) -> AnalogWeigher:
        """A weigher `save` wrote; ValueError if trained for a predictor other than ``base``."""
        saved = torch.load(path, map_location="cpu", weights_only=True)
        trained_for = saved.get("trained_for", "")
        if base is not None and trained_for != base:
            raise ValueError(
                f"the weigher at {path} was trained for predictor {trained_for!r}, not {base!r}: "
                f"train one for it (benchmarks/train_weigher.py --base {base} --out PATH)."
            )
        weigher = cls(WeigherConfig(**saved["config"]), trained_for)
        weigher.load_state_dict(saved["state"])
        return weigher.eval()


def _tensors(inputs: WeigherInputs) -> tuple[np.ndarray, ...]:
    """The forward pass's arguments, in its order."""
    return inputs.base, inputs.query, inputs.tokens, inputs.mask
