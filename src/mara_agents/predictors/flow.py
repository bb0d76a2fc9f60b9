"""The flow-matching loss-trajectory predictor: the trained network sampled per prefix.

Samples depend only on the prefix, so they are cached per prefix and decoded (`flow_decoding`)
against any target and budget: the estimate is the crossings' median and ``p_success`` the share
that cross within the budget, or, for a predictor with a `Calibration`, a blend of a quantile and
LARA's estimate, and the share mapped through the calibration.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from mara_agents.predictors.basis import FutureBasis
from mara_agents.predictors.batched import BatchPredictor
from mara_agents.predictors.calibration import (
    RAW,
    Calibration,
    point_estimates,
)
from mara_agents.predictors.flow_decoding import crossings, decode
from mara_agents.predictors.flow_model import (
    BACKTEST_WINDOW,
    SAMPLER_FIELDS,
    FMConfig,
    VelocityNet,
    context_rows,
    future_offsets,
    noise_level,
    sample_futures,
    task_features,
)
from mara_agents.predictors.wls import WLSPredictor

__all__ = ["MARA_NETWORK", "PRETRAINED", "FMPredictor"]

PRETRAINED = Path(__file__).resolve().parent.parent / "checkpoints" / "fm.pt"
"""The shipped flow-matching network with its calibration: predictor ``"fm"``."""
MARA_NETWORK = PRETRAINED.with_name("fm_mara_student.pt")
"""What the shipped MARA policies read, raw: a network trained on the ID runs alone, distilled to
one Euler step (``benchmarks/distill_fm.py``). Their checkpoints name it ``"fm_mara_student"``
(`POLICY_PREDICTORS`); it is no public predictor."""

BACKTEST_MIN_PREFIX = 10
"""The check looks back only to prefixes at least this long (W_min: what predictors read)."""
BACKTEST_MIN_FALL = 0.01
"""A predicted fall of the log-loss smaller than this is no fall: the ratio stays 1."""
PROGRESS_RANGE = (0.1, 3.0)
"""Bounds of the progress ratio (a rising loss would give a negative one)."""


class FMPredictor(BatchPredictor):
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
        stored = state.get("calibration")  # absent in checkpoints stored without one
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
                tuple(map(tuple, stored["farther"].tolist())) if "farther" in stored else (),
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
            if self.calibration.farther:  # absent in older checkpoints
                state["calibration"]["farther"] = torch.tensor(
                    self.calibration.farther, dtype=torch.float64
                )
            if self.calibration.coefficients is not None:
                state["calibration"]["coefficients"] = torch.from_numpy(
                    self.calibration.coefficients
                )
        if self.basis is not None:
            state["basis_mean"] = torch.from_numpy(self.basis.mean)
            state["basis"] = torch.from_numpy(self.basis.components)
        torch.save(state, path)

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
        if self.calibration.reads_wls:
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
                context_rows([prefixes[i] for i in missing], self.net.config)
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
