"""The flow-matching predictor's representation and network (MARA's first contribution).

Representation (shift- and scale-invariant): with ``L_n`` the last revealed loss,

- the **context** is ``log(L_p / L_n)`` at the last `FMConfig.recent` positions and at
  `FMConfig.spread` log-spaced positions over the whole prefix, plus ``log(1 + n) / log(1 + H)``;
- the **future** is ``z_h = log(L_{n + t_h} / L_n)`` on a grid of offsets ``t_h`` from 1 to the
  generation cap ``H`` (dense at first, then log-spaced; `future_offsets`).

Model: a velocity network ``v_θ(z_u, u, c)`` (an MLP over the noisy future, a sinusoidal
embedding of the flow time ``u`` and the encoded context ``c``) trained by conditional flow matching
on the straight path ``z_u = (1 − u) z_0 + u z_1``, ``z_0 ~ N(0, I)``:
``L(θ) = E ‖v_θ(z_u, u, c) − (z_1 − z_0)‖²`` (Lipman et al., 2023). Sampling integrates
``dz/du = v_θ`` from noise at ``u = 0`` to ``u = 1`` with Euler or Heun steps.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from mara_agents.checks import require
from mara_agents.predictors.calibration import (
    TASK_FEATURES,
)
from mara_agents.predictors.horizon import HORIZON
from mara_agents.predictors.wls import WLSConfig

__all__ = [
    "BACKTEST_WINDOW",
    "SAMPLER_FIELDS",
    "WLS_WIDTH",
    "FMConfig",
    "VelocityNet",
    "context_features",
    "context_matrix",
    "context_positions",
    "context_rows",
    "flow_matching_loss",
    "future_offsets",
    "integrate",
    "noise_level",
    "sample_futures",
    "symlog",
    "task_features",
    "wls_context",
]

WLS_OFFSETS = (4, 16, 64, 250, 500)
"""Future offsets at which `wls_context` gives the power-law fit's extrapolated log-loss."""
WLS_WIDTH = 2 + len(WLS_OFFSETS)
"""Columns of `wls_context`: slope, residual spread, one per offset."""

SYMLOG_SCALE = 1e-3
"""Where `symlog` turns from linear to logarithmic, in nats."""
NOISE_SPAN = 16
"""Batches over which `noise_level` measures a prefix's noise."""

BACKTEST_WINDOW = 8
"""Batches averaged at the end of the revealed-progress check (against minibatch noise)."""
SAMPLER_FIELDS = ("samples", "ode_steps", "solver", "seed", "cache_size", "backtest_lag")
"""`FMConfig` fields that change how a trained network is sampled, not what it reads or writes."""


@dataclass(frozen=True)
class FMConfig:
    """Shape of the representation, the network and the sampler."""

    horizon: int = HORIZON
    """H: the generation cap in batches (crossings beyond it are unknown)."""
    recent: int = 16
    """Context: the last ``recent`` losses."""
    spread: int = 16
    """Context: losses at ``spread`` log-spaced positions over the whole prefix."""
    hidden: int = 128
    """Width of the hidden layers (context encoder and velocity MLP)."""
    context_dim: int = 64
    """Width of the encoded context."""
    time_dim: int = 32
    """Width of the sinusoidal flow-time embedding (even: a sine and a cosine per frequency)."""
    layers: int = 2
    """Hidden layers of the velocity MLP."""
    samples: int = 32
    """S: trajectories sampled per estimate."""
    ode_steps: int = 4
    """Integration steps from noise (u = 0) to a sample (u = 1)."""
    solver: str = "heun"
    """"euler" or "heun" (second order, two network calls per step)."""
    scaled_context: bool = False
    """Also give the network the context's log-ratios on a symmetric log scale (`symlog`) and
    the prefix's noise level (`noise_level`), so that the slow fall of a flat curve (1e-4 nats per
    batch), which decides when a near target is reached, registers as clearly as a steep one."""
    wls_context: bool = False
    """Also give the network LARA's power-law fit of the prefix (`wls_context`): its slope, its
    residual spread and where it extrapolates the loss, so the network can learn when to trust
    the fit rather than replace it."""
    backtest_lag: int = 32
    """Revealed-progress check: the prefix is also read as it was this many batches ago, and
    what the futures sampled then said of the batches since is set against what was revealed
    (`FMPredictor.progress_ratios`); only a `Calibration` with ``backtest > 0`` asks for it."""
    seed: int = 0
    """Seeds the sampling noise (mixed with a hash of the prefix, so estimates are reproducible)."""
    cache_size: int = 65536
    """Prefixes whose sampled futures are kept (least recently used ones are dropped): about
    6 kB each at the default sizes, so up to ~400 MB. A runtime setting, not part of a trained
    model: `FMPredictor.pretrained` does not read it from the checkpoint."""

    def __post_init__(self) -> None:
        if self.solver not in ("euler", "heun"):
            raise ValueError(f"FMConfig.solver must be 'euler' or 'heun', got {self.solver!r}.")
        sizes = ("horizon", "recent", "spread", "hidden", "context_dim", "samples", "ode_steps")
        require(self, ">= 1", (*sizes, "layers"))
        if self.backtest_lag < BACKTEST_WINDOW:
            raise ValueError(
                f"FMConfig.backtest_lag must be >= {BACKTEST_WINDOW} (the check averages its last "
                f"{BACKTEST_WINDOW} batches), got {self.backtest_lag!r}."
            )
        if self.time_dim < 2 or self.time_dim % 2:
            raise ValueError(f"FMConfig.time_dim must be even and >= 2, got {self.time_dim!r}.")

    @property
    def context_size(self) -> int:
        """Width of `context_features`."""
        shape = self.recent + self.spread
        scaled = shape + 1 if self.scaled_context else 0
        return shape + 1 + scaled + (WLS_WIDTH if self.wls_context else 0)


def future_offsets(horizon: int) -> np.ndarray:
    """The grid of future offsets: every batch up to 16, then 32 log-spaced points up to H."""
    dense = np.arange(1, min(16, horizon) + 1)
    sparse = np.round(np.geomspace(17, horizon, 32)) if horizon > 16 else np.array([])
    return np.unique(np.concatenate([dense, sparse])).astype(np.int64)


def context_features(prefix: np.ndarray, config: FMConfig) -> np.ndarray:
    """(C,) float32 features of a prefix ``L[0..n]`` (n >= 1), see the module docstring."""
    return context_rows([prefix], config)[0]


def context_rows(prefixes: Sequence[np.ndarray], config: FMConfig) -> np.ndarray:
    """(B, C) float32 `context_features` of several prefixes, of any curves, as the predictor asks.

    The plain representation (neither ``scaled_context`` nor ``wls_context``) costs one gather
    per prefix; the others are `context_matrix` of each prefix.
    """
    ends = np.array([len(prefix) - 1 for prefix in prefixes], np.int64)
    logs = [np.log(np.asarray(prefix, np.float64)) for prefix in prefixes]
    if config.scaled_context or config.wls_context:
        return np.concatenate(
            [context_matrix(x, ends[i : i + 1], config) for i, x in enumerate(logs)]
        )
    shape = config.recent + config.spread
    features = np.empty((len(prefixes), config.context_size), np.float32)
    for row, (log_losses, end) in enumerate(zip(logs, ends.tolist())):
        positions = _positions_of(end, config.recent, config.spread)
        features[row, :shape] = log_losses[positions] - log_losses[end]
    features[:, shape] = np.log1p(ends) / math.log1p(config.horizon)
    return features


def context_matrix(log_losses: np.ndarray, ends: np.ndarray, config: FMConfig) -> np.ndarray:
    """(N, C) float32 `context_features` of the prefixes ``log_losses[: n + 1]`` for n in ``ends``.

    One curve's prefixes at once (training builds every prefix of every run this way).
    """
    ends = np.asarray(ends, np.int64)
    if len(ends) == 1:  # one prefix: the positions of its length, kept
        positions = _positions_of(int(ends[0]), config.recent, config.spread)[None]
    else:
        positions = context_positions(ends, config.recent, config.spread)
    features = np.empty((len(ends), config.context_size), np.float32)
    shape = config.recent + config.spread
    features[:, :shape] = log_losses[positions] - log_losses[ends, None]
    features[:, shape] = np.log1p(ends) / math.log1p(config.horizon)
    column = shape + 1
    if config.scaled_context:
        features[:, column : column + shape] = symlog(features[:, :shape])
        features[:, column + shape] = symlog(noise_level(log_losses, ends))
        column += shape + 1
    if config.wls_context:
        features[:, column:] = wls_context(log_losses, ends)
    return features


def context_positions(ends: np.ndarray, recent: int, spread: int) -> np.ndarray:
    """(N, recent + spread) int64 positions the context reads in each prefix ``[0, n]``.

    The last ``recent`` (repeating position 0 where the prefix is shorter), then ``spread``
    log-spaced ones (`spread_positions`).
    """
    last = np.clip(ends[:, None] + np.arange(1 - recent, 1), 0, None)
    return np.concatenate([last, spread_positions(ends, spread)], axis=1)


def spread_positions(ends: np.ndarray, count: int) -> np.ndarray:
    """(N, count) int64 log-spaced positions over each prefix ``[0, n]``, n in ``ends``."""
    return np.round(np.geomspace(1, ends + 1, count, axis=1)).astype(np.int64) - 1


@functools.lru_cache(maxsize=16384)
def _positions_of(end: int, recent: int, spread: int) -> np.ndarray:
    """`context_positions` of one prefix length, computed once; read-only.

    ``geomspace`` was most of the cost of one prefix's context features.
    """
    positions = context_positions(np.array([end]), recent, spread)[0]
    positions.flags.writeable = False
    return positions


def symlog(x: np.ndarray) -> np.ndarray:
    """``sign(x) · log(1 + |x| / SYMLOG_SCALE) / log(1 + 1 / SYMLOG_SCALE)``.

    1 at x = 1, and about 0.014 at 1e-4, which a linear scale leaves at 1e-4.
    """
    return np.sign(x) * np.log1p(np.abs(x) / SYMLOG_SCALE) / math.log1p(1.0 / SYMLOG_SCALE)


def noise_level(log_losses: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """(N,) robust per-batch noise of the log-loss over each prefix's last `NOISE_SPAN` batches.

    From second differences, so that a steady fall is not counted as noise:
    1.4826 · median |Δ²| / √6 is the standard deviation of Gaussian noise around a straight line.
    """
    ends = np.asarray(ends, np.int64)
    positions = np.clip(ends[:, None] + np.arange(-NOISE_SPAN, 1), 0, None)  # (N, span + 1)
    curvature = np.abs(np.diff(log_losses[positions], n=2, axis=1))
    return 1.4826 * np.median(curvature, axis=1) / math.sqrt(6.0)


def task_features(prefixes: list[np.ndarray], targets: np.ndarray) -> np.ndarray:
    """(B, `TASK_FEATURES`) what a calibrated ``p_success`` reads of each task besides its samples.

    The log of how far (in nats, at least 1e-3) the target lies below the lowest loss so far, the
    log of the prefix's per-batch noise (`noise_level`, at least 1e-4) and ``log(1 + n)``.
    """
    rows = []
    for prefix, target in zip(prefixes, np.asarray(targets, np.float64)):
        log_losses = np.log(np.asarray(prefix, np.float64))
        n = len(log_losses) - 1
        depth = max(float(log_losses.min() - math.log(target)), 0.0)
        noise = noise_level(log_losses, np.array([n]))[0]
        rows.append([math.log(depth + 1e-3), math.log(noise + 1e-4), math.log1p(n)])
    return np.array(rows, np.float64).reshape(len(rows), TASK_FEATURES)


def wls_context(log_losses: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """(N, `WLS_WIDTH`) LARA's discounted power-law fit (`WLSConfig` defaults) of each prefix.

    Columns: the slope ``θ₁`` of ``ln L = θ₁ ln s + θ₂``, the weighted residual spread, and the
    fit's ``ln(L̂(n + t) / L_n)`` at each `WLS_OFFSETS` ``t``; each clipped to a sane range.
    """
    discount = WLSConfig().discount
    window = math.ceil(math.log(1e-12) / math.log(discount))  # older points weigh < 1e-12
    batches = ends[:, None] - np.arange(window)[None, :]  # (N, W) s = n, n-1, ...
    weights = discount ** np.arange(window)[None, :] * (batches >= 1)
    log_s = np.log(np.maximum(batches, 1))
    log_l = log_losses[np.maximum(batches, 0)]
    s0, s1, s2 = weights.sum(1), (weights * log_s).sum(1), (weights * log_s**2).sum(1)
    t0, t1 = (weights * log_l).sum(1), (weights * log_s * log_l).sum(1)
    det = np.maximum(s2 * s0 - s1 * s1, 1e-12)
    slope = (s0 * t1 - s1 * t0) / det
    intercept = (s2 * t0 - s1 * t1) / det
    residual = log_l - slope[:, None] * log_s - intercept[:, None]
    spread = np.sqrt((weights * residual**2).sum(1) / s0)
    ahead = np.log(ends[:, None] + np.array(WLS_OFFSETS)[None, :])
    extrapolated = slope[:, None] * ahead + intercept[:, None] - log_losses[ends, None]
    return np.column_stack(
        [np.clip(slope, -5.0, 1.0), np.clip(spread, 0.0, 1.0), np.clip(extrapolated, -10.0, 2.0)]
    )


class VelocityNet(nn.Module):
    """v_θ(z_u, u, c): context encoder, sinusoidal time embedding, and an MLP over the three."""

    def __init__(self, config: FMConfig) -> None:
        super().__init__()
        self.config = config
        grid = len(future_offsets(config.horizon))
        self.grid = grid
        self.context = nn.Sequential(
            nn.Linear(config.context_size, config.hidden),
            nn.SiLU(),
            nn.Linear(config.hidden, config.context_dim),
        )
        layers: list[nn.Module] = []
        width = grid + config.time_dim + config.context_dim
        for _ in range(config.layers):
            layers += [nn.Linear(width, config.hidden), nn.SiLU()]
            width = config.hidden
        self.mlp = nn.Sequential(*layers, nn.Linear(width, grid))
        half = config.time_dim // 2
        self.register_buffer("frequencies", torch.exp(torch.linspace(0.0, math.log(1000.0), half)))

    def encode(self, context: torch.Tensor) -> torch.Tensor:
        """(B, C) -> (B, context_dim)."""
        return self.context(context)

    def forward(self, z: torch.Tensor, u: torch.Tensor, encoded: torch.Tensor) -> torch.Tensor:
        """Velocity (B, G) at noisy futures ``z`` (B, G), flow times ``u`` (B,), encoded context."""
        return self.mlp(torch.cat([z, self.time_embedding(u), encoded], dim=1))

    def time_embedding(self, u: torch.Tensor) -> torch.Tensor:
        """(B,) flow times -> (B, time_dim) sinusoidal features."""
        angles = u[:, None] * self.frequencies[None, :]  # (B, time_dim / 2)
        return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)


def flow_matching_loss(
    net: VelocityNet, future: torch.Tensor, context: torch.Tensor, generator: torch.Generator
) -> torch.Tensor:
    """Conditional flow matching on the straight path: E‖v(z_u, u, c) − (z_1 − z_0)‖²."""
    noise = torch.randn(future.shape, generator=generator, device=future.device)  # z_0
    u = torch.rand(future.shape[0], generator=generator, device=future.device)
    z_u = (1.0 - u[:, None]) * noise + u[:, None] * future
    target = future - noise
    return ((net(z_u, u, net.encode(context)) - target) ** 2).mean()


@torch.no_grad()
def sample_futures(
    net: VelocityNet,
    context: torch.Tensor,
    samples: int,
    steps: int,
    solver: str,
    noise: torch.Tensor,
) -> torch.Tensor:
    """Integrate dz/du = v from ``noise`` (B, S, G) at u = 0 to u = 1; returns (B, S, G)."""
    batch = context.shape[0]
    # each prefix encoded once, but in a product of at least S rows (the contexts repeated): BLAS
    # kernels for so many rows give each row the same bits whatever their number (fewer may not),
    # so these are the bits of encoding every sample row, at 1/S of the cost
    rows = torch.arange(max(batch, samples)) % batch
    encoded = net.encode(context[rows])[:batch].repeat_interleave(samples, dim=0)  # (B·S, dim)
    z = integrate(net, noise.reshape(batch * samples, -1), encoded, steps, solver)
    return z.reshape(batch, samples, -1)


def integrate(
    net: VelocityNet, z: torch.Tensor, encoded: torch.Tensor, steps: int, solver: str
) -> torch.Tensor:
    """Integrate dz/du = v from ``z`` (N, G) at u = 0 to u = 1 in ``steps`` equal steps.

    ``encoded`` (N, context_dim) is each row's encoded context. Differentiable: `sample_futures`
    calls it without gradients, distillation (`coreenv_lab.fm_training.distill`) through a
    student's steps.
    """
    du = 1.0 / steps
    for k in range(steps):
        u = torch.full((z.shape[0],), k * du, device=z.device)
        velocity = net(z, u, encoded)
        if solver == "heun":
            ahead = net(z + du * velocity, u + du, encoded)
            velocity = 0.5 * (velocity + ahead)
        z = z + du * velocity
    return z
