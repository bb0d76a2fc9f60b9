"""The flow-matching loss-trajectory predictor (MARA's first contribution), written from scratch.

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

Decoding: each sampled trajectory's first crossing of ``log(ε / L_n)`` (linear between grid points)
gives remaining batches; the estimate is their median and ``p_success`` the share that cross
within the budget, or, for a predictor with a `Calibration`, a blend of a quantile and LARA's
estimate, and the share mapped through the calibration. Samples depend
only on the prefix, so they are cached per prefix and decoded against any target and budget.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from mara_agents.checks import require
from mara_agents.predictors.basis import FutureBasis
from mara_agents.predictors.calibration import (
    RAW,
    TASK_FEATURES,
    Calibration,
    point_estimates,
)
from mara_agents.predictors.horizon import HORIZON
from mara_agents.predictors.wls import WLSConfig, WLSPredictor

__all__ = [
    "FMConfig",
    "FMPredictor",
    "VelocityNet",
    "context_features",
    "context_matrix",
    "crossings",
    "decode",
    "flow_matching_loss",
    "future_offsets",
    "sample_futures",
]

PRETRAINED = Path(__file__).resolve().parent.parent / "checkpoints" / "fm.pt"
MARA_NETWORK = PRETRAINED.with_name("fm_mara.pt")
"""Package 0.2's network (trained on the ID runs alone): what the shipped MARA policies read."""

WLS_OFFSETS = (4, 16, 64, 250, 500)
"""Future offsets at which `wls_context` gives the power-law fit's extrapolated log-loss."""
WLS_WIDTH = 2 + len(WLS_OFFSETS)
"""Columns of `wls_context`: slope, residual spread, one per offset."""

SAMPLER_FIELDS = ("samples", "ode_steps", "solver", "seed", "cache_size", "backtest_lag")
"""`FMConfig` fields that change how a trained network is sampled, not what it reads or writes."""

SYMLOG_SCALE = 1e-3
"""Where `symlog` turns from linear to logarithmic, in nats."""
NOISE_SPAN = 16
"""Batches over which `noise_level` measures a prefix's noise."""

BACKTEST_WINDOW = 8
"""Batches averaged at the end of the revealed-progress check (against minibatch noise)."""
BACKTEST_MIN_PREFIX = 10
"""The check looks back only to prefixes at least this long (W_min: what predictors read)."""
BACKTEST_MIN_FALL = 0.01
"""A predicted fall of the log-loss smaller than this is no fall: the ratio stays 1."""
PROGRESS_RANGE = (0.1, 3.0)
"""Bounds of the progress ratio (a rising loss would give a negative one)."""


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
    log_losses = np.log(np.asarray(prefix, np.float64))
    return context_matrix(log_losses, np.array([len(prefix) - 1]), config)[0]


def context_matrix(log_losses: np.ndarray, ends: np.ndarray, config: FMConfig) -> np.ndarray:
    """(N, C) float32 `context_features` of the prefixes ``log_losses[: n + 1]`` for n in ``ends``.

    One curve's prefixes at once (training builds every prefix of every run this way).
    """
    ends = np.asarray(ends, np.int64)
    recent = np.clip(ends[:, None] + np.arange(1 - config.recent, 1), 0, None)
    spread = np.round(np.geomspace(1, ends + 1, config.spread, axis=1)).astype(np.int64) - 1
    positions = np.concatenate([recent, spread], axis=1)  # (N, recent + spread)
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
    # encoded per sample row, not per prefix: every matrix product then has B·S >= S rows, and
    # BLAS kernels for so many rows give each row the same bits whatever B is (fewer rows may not)
    encoded = net.encode(context.repeat_interleave(samples, dim=0))  # (B·S, context_dim)
    z = noise.reshape(batch * samples, -1)
    du = 1.0 / steps
    for k in range(steps):
        u = torch.full((z.shape[0],), k * du)
        velocity = net(z, u, encoded)
        if solver == "heun":
            ahead = net(z + du * velocity, u + du, encoded)
            velocity = 0.5 * (velocity + ahead)
        z = z + du * velocity
    return z.reshape(batch, samples, -1)


def crossings(futures: np.ndarray, log_target: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """(B, S) batches until each sampled trajectory first reaches its target (``inf``: never).

    Args:
        futures: (B, S, G) sampled ``z`` on the grid ``offsets``.
        log_target: (B,) ``log(ε / L_n)`` (negative: the target lies below the current loss).
        offsets: (G,) the future offsets, in batches, of the grid.
    """
    below = futures <= log_target[:, None, None]  # (B, S, G)
    crossed = below.any(axis=2)
    first = np.argmax(below, axis=2)  # (B, S) index of the first grid point at or below
    before_t = np.where(first > 0, offsets[np.maximum(first - 1, 0)], 0)
    before_z = np.where(
        first > 0, np.take_along_axis(futures, np.maximum(first - 1, 0)[..., None], 2)[..., 0], 0.0
    )
    at_z = np.take_along_axis(futures, first[..., None], 2)[..., 0]
    at_t = offsets[first]
    share = np.clip((before_z - log_target[:, None]) / np.maximum(before_z - at_z, 1e-12), 0.0, 1.0)
    crossing = np.ceil(before_t + share * (at_t - before_t) - 1e-9)
    return np.where(crossed, np.maximum(crossing, 1.0), np.inf)


def decode(
    futures: np.ndarray, log_target: np.ndarray, offsets: np.ndarray, budgets: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Remaining batches (median over samples) and P(crossing within budget), per task.

    ``futures``, ``log_target`` and ``offsets`` as in `crossings`; ``budgets`` (B,) batches
    available.
    """
    remaining = crossings(futures, log_target, offsets)  # (B, S)
    p_success = np.mean(remaining <= budgets[:, None], axis=1)
    return np.median(remaining, axis=1), p_success


class FMPredictor:
    """A `coreenv.Predictor` that samples future loss trajectories by flow matching.

    Args:
        net: the trained velocity network (its config fixes the representation).
        config: sampler settings to use instead of the network's (samples, steps, solver, seed).
        calibration: maps the sampled success share to ``p_success``; None: the share itself.
        basis: the principal components of the network's training futures, for a calibration
            that reads denoised futures (`FutureBasis`).
    """

    def __init__(
        self,
        net: VelocityNet,
        config: FMConfig | None = None,
        calibration: Calibration | None = None,
        basis: FutureBasis | None = None,
    ) -> None:
        self.net = net.eval()
        self.config = config or net.config
        self.calibration = calibration
        self.basis = basis
        if calibration is not None and calibration.denoise and basis is None:
            raise ValueError(
                "FMPredictor: the calibration reads denoised futures but no basis came."
            )
        if basis is not None and basis.mean.shape != (net.grid,):
            raise ValueError(
                f"FMPredictor: the basis has {basis.mean.shape[0]} grid points, the network "
                f"{net.grid}."
            )
        self._wls = WLSPredictor()  # the blend's WLS estimates (`Calibration.remaining`)
        self.offsets = future_offsets(self.config.horizon)
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()

    @classmethod
    def pretrained(
        cls, path: str | Path | None = None, *, calibrated: bool = True, **overrides
    ) -> FMPredictor:
        """The shipped checkpoint (trained on the ID training runs only); no network needed.

        ``calibrated=False`` leaves out the checkpoint's `Calibration` (the raw reading);
        ``overrides`` are sampler settings (`SAMPLER_FIELDS` of `FMConfig`); a field that shapes
        the network's input or output is refused.
        """
        fixed = sorted(set(overrides) - set(SAMPLER_FIELDS))
        if fixed:
            raise ValueError(
                f"FMPredictor.pretrained: {fixed} shape the trained network and cannot be "
                f"overridden; sampler settings are {list(SAMPLER_FIELDS)}."
            )
        path = Path(path) if path is not None else PRETRAINED
        if not path.is_file():
            raise FileNotFoundError(
                f"no flow-matching checkpoint at {path}; train one with benchmarks/train_fm.py."
            )
        state = torch.load(path, map_location="cpu", weights_only=True)
        stored = {k: v for k, v in state["config"].items() if k != "cache_size"}
        config = FMConfig(**stored)
        net = VelocityNet(config)
        net.load_state_dict(state["model"])
        stored = state.get("calibration")  # absent in checkpoints of package 0.2.0
        calibration = None
        if stored is not None and calibrated:
            calibration = Calibration(
                stored["knots"].numpy(),
                stored["values"].numpy(),
                float(stored["level"]),
                float(stored["wls_weight"]),
                float(stored.get("backtest", 0.0)),  # absent before package 0.3
                bool(stored.get("denoise", False)),
                stored["coefficients"].numpy() if "coefficients" in stored else None,
            )
        basis = None
        if "basis_mean" in state:  # absent before package 0.3
            basis = FutureBasis(state["basis_mean"].numpy(), state["basis"].numpy())
        config = FMConfig(**{**asdict(config), **overrides}) if overrides else None
        return cls(net, config, calibration, basis)

    def save(self, path: str | Path) -> None:
        """Write the network, its config and calibration: the format `pretrained` reads."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        state = {"config": asdict(self.net.config), "model": self.net.state_dict()}
        if self.calibration is not None:
            state["calibration"] = {
                "knots": torch.from_numpy(self.calibration.knots),
                "values": torch.from_numpy(self.calibration.values),
                "level": self.calibration.level,
                "wls_weight": self.calibration.wls_weight,
                "backtest": self.calibration.backtest,
                "denoise": self.calibration.denoise,
            }
            if self.calibration.coefficients is not None:
                state["calibration"]["coefficients"] = torch.from_numpy(
                    self.calibration.coefficients
                )
        if self.basis is not None:
            state["basis_mean"] = torch.from_numpy(self.basis.mean)
            state["basis"] = torch.from_numpy(self.basis.components)
        torch.save(state, path)

    def estimate(self, prefix: np.ndarray, target: float, budget: int):
        """`coreenv.Predictor.estimate` for one task."""
        from coreenv import Estimate

        remaining, p_success = self.estimate_batch([prefix], np.array([target]), np.array([budget]))
        return Estimate(float(remaining[0]), float(p_success[0]))

    def estimate_batch(
        self, prefixes: list[np.ndarray], targets: np.ndarray, budgets: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Remaining batches (``inf`` beyond H) and success probabilities of several tasks."""
        if self.calibration is None:
            futures = self.futures(prefixes)
            log_target = self._log_targets(prefixes, targets)
            remaining, p_success = decode(futures, log_target, self.offsets, np.asarray(budgets))
            remaining[remaining > self.config.horizon] = np.inf
            return remaining, p_success
        sampled = self.sampled_crossings(prefixes, targets)
        wls = np.ones(len(prefixes))  # unused at weight 0 without coefficients
        if self.calibration.wls_weight > 0 or self.calibration.coefficients is not None:
            wls, _ = self._wls.estimate_batch(prefixes, targets, budgets)
        horizon = self.config.horizon
        remaining = self.calibration.remaining(sampled, wls, horizon)
        tasks = task_features(prefixes, targets)
        return remaining, self.calibration.p_success(sampled, budgets, wls, tasks, horizon)

    def estimate_quantiles(
        self, prefixes: list[np.ndarray], targets: np.ndarray, levels: np.ndarray
    ) -> np.ndarray:
        """(B, Q) quantiles of remaining batches over the sampled futures (``inf`` beyond H).

        Each quantile is one of the S sampled crossings (the inverted empirical CDF), so a level
        never interpolates between a crossing and ``inf``.
        """
        sampled = self.sampled_crossings(prefixes, targets)
        return np.stack([point_estimates(sampled, level) for level in levels], axis=1)

    def sampled_crossings(
        self,
        prefixes: list[np.ndarray],
        targets: np.ndarray,
        reading: tuple[bool, float] | None = None,
    ) -> np.ndarray:
        """(B, S) batches until each sampled future reaches its task's target (``inf`` beyond H).

        ``reading`` is a (denoise, revealed-progress strength) pair, default the calibration's
        (none: the raw samples): the futures are denoised through the network's `FutureBasis`,
        then rescaled by the revealed-progress check at that strength (0: not at all).
        """
        if reading is None:
            calibration = self.calibration
            reading = RAW if calibration is None else (calibration.denoise, calibration.backtest)
        denoise, strength = reading
        futures = self.read_futures(prefixes, denoise)
        if strength > 0:
            futures = futures * self.progress_ratios(prefixes, denoise)[:, None, None] ** strength
        sampled = crossings(futures, self._log_targets(prefixes, targets), self.offsets)
        sampled[sampled > self.config.horizon] = np.inf
        return sampled

    def read_futures(self, prefixes: list[np.ndarray], denoise: bool) -> np.ndarray:
        """(B, S, G) `futures`, denoised through the network's `FutureBasis` if asked."""
        futures = self.futures(prefixes)
        if not denoise:
            return futures
        if self.basis is None:
            raise ValueError(
                "this FMPredictor has no FutureBasis to denoise with; its checkpoint predates "
                "them or was saved without one (train_fm writes one)."
            )
        ends = [len(p) - 1 for p in prefixes]
        noise = np.array(
            [noise_level(np.log(np.asarray(p, np.float64)), [n])[0] for p, n in zip(prefixes, ends)]
        )
        return self.basis.denoise(futures, noise)

    def progress_ratios(self, prefixes: list[np.ndarray], denoise: bool = False) -> np.ndarray:
        """(B,) revealed over predicted progress of each task in its last `backtest_lag` batches.

        For a prefix ``L[0..n]`` and lag ``k``: the futures sampled at ``L[0..n−k]`` (their median
        trajectory) predicted a fall of the log-loss by batch ``n`` (averaged over the last
        `BACKTEST_WINDOW` batches, as the revealed fall is, against noise); the ratio of the
        revealed fall to it, clipped to `PROGRESS_RANGE`, says how much faster (> 1) or slower
        (< 1) the curve goes than the predictor expects of it. 1 where the prefix is too short to
        look back or no fall was predicted. A `Calibration` scales the sampled futures by it.
        """
        lag = self.config.backtest_lag
        if lag > self.config.horizon:
            raise ValueError(
                f"FMConfig.backtest_lag {lag} is beyond the horizon {self.config.horizon}: the "
                "futures sampled then do not reach now."
            )
        ratios = np.ones(len(prefixes))
        rows = [i for i, p in enumerate(prefixes) if len(p) - 1 - lag >= BACKTEST_MIN_PREFIX]
        if not rows:
            return ratios
        earlier = [prefixes[i][: len(prefixes[i]) - lag] for i in rows]
        futures = self.read_futures(earlier, denoise)  # (R, S, G); sampled `lag` batches ago
        window = np.arange(lag - BACKTEST_WINDOW + 1, lag + 1)
        median = np.median(futures, axis=1)  # (R, G)
        predicted = np.array([np.interp(window, self.offsets, m).mean() for m in median])
        revealed = np.array(
            [
                np.log(prefixes[i][-BACKTEST_WINDOW:]).mean() - math.log(float(e[-1]))
                for i, e in zip(rows, earlier)
            ]
        )
        falls = predicted < -BACKTEST_MIN_FALL
        ratio = np.where(falls, revealed / np.where(falls, predicted, -1.0), 1.0)
        ratios[rows] = np.clip(ratio, *PROGRESS_RANGE)
        return ratios

    def futures(self, prefixes: list[np.ndarray]) -> np.ndarray:
        """(B, S, G) sampled futures of each prefix, from the cache where possible.

        A prefix's noise depends only on the seed and the prefix, and every matrix product has
        at least S rows per prefix, which BLAS computes row by row the same whatever the batch:
        a prefix gets the same futures bit for bit alone or among others, in any order of calls
        (tested), so one cache can serve many episodes at once.
        """
        keys = [self._key(p) for p in prefixes]
        missing = [i for i, key in enumerate(keys) if key not in self._cache]
        if missing:
            context = torch.from_numpy(
                np.stack([context_features(prefixes[i], self.net.config) for i in missing])
            )
            noise = torch.stack([self._noise(keys[i]) for i in missing])
            sampled = sample_futures(
                self.net,
                context,
                self.config.samples,
                self.config.ode_steps,
                self.config.solver,
                noise,
            ).numpy()
            for i, futures in zip(missing, sampled):
                self._cache[keys[i]] = futures
        result = np.stack([self._cache[key] for key in keys])
        for key in keys:
            self._cache.move_to_end(key)
        while len(self._cache) > self.config.cache_size:
            self._cache.popitem(last=False)
        return result

    def warm(self, prefixes: list[np.ndarray], chunk: int = 64) -> None:
        """Sample and cache the futures of many prefixes ahead of time, in chunks.

        Training uses it so that every estimate during rollouts comes from the cache (no sampling
        in the rollout loop). Raises the cache size to fit them.
        """
        self.config = FMConfig(
            **{
                **asdict(self.config),
                "cache_size": max(self.config.cache_size, len(self._cache) + len(prefixes)),
            }
        )
        for start in range(0, len(prefixes), chunk):
            self.futures(prefixes[start : start + chunk])

    def _log_targets(self, prefixes: list[np.ndarray], targets: np.ndarray) -> np.ndarray:
        """(B,) ``log(ε / L_n)`` of each task."""
        last = np.array([float(p[-1]) for p in prefixes])
        return np.log(np.asarray(targets, np.float64) / last)

    def _key(self, prefix: np.ndarray) -> bytes:
        data = np.ascontiguousarray(prefix, np.float64).tobytes()
        return hashlib.blake2b(data, digest_size=16).digest()

    def _noise(self, key: bytes) -> torch.Tensor:
        """Noise for one prefix: a function of the seed and the prefix, not of call order."""
        seed = (self.config.seed * 1_000_003 + int.from_bytes(key[:8], "little")) % 2**63
        generator = torch.Generator().manual_seed(seed)
        return torch.randn((self.config.samples, self.net.grid), generator=generator)
