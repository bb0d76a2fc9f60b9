"""A synthetic prior of loss curves: learning-curve laws with the events and noise of training.

A recorded corpus holds a few hundred runs of a few families; `CurvePrior` draws as many curves as
wanted, of far more shapes, for the flow-matching predictor to learn from (the idea of LC-PFN's
prior [2], written here from scratch). A curve is drawn in four steps:

1. a *form* from `FORMS`, uniformly: a decay ``g`` with ``g(0) = 1`` from the learning-curve
   extrapolation literature [1, 2], or a mixture of two with a late second phase;
2. a scale: ``L(t) = L0 · (r + (1 − r) · g(s(t)))``, with the initial loss ``L0`` log-uniform over
   six decades and the asymptote ``r · L0`` anywhere from almost 0 to close to ``L0``;
3. events: on the progress clock ``s(t)`` (a plateau at the start or mid-run, a warm-up, a cosine
   schedule: ``s`` advances at a rate in [0, 1] per batch), and on the loss itself (step
   learning-rate drops, overfitting, spikes);
4. noise as users log it: multiplicative minibatch noise (Gaussian or Student-t) and a slow
   correlated wobble on the log loss, and an exponential moving average (EMA) of the logged loss.

A curve that `coreenv.curves.curve_problem` refuses is redrawn with the same form. Every draw comes
from the generator passed in, and every feature's uniforms are drawn for every curve whether the
feature is on or not, so changing one probability leaves the other features' draws of the first
round alone (the Student-t noise and the redraws of refused curves still shift what follows).

[1] Domhan, Springenberg, Hutter (2015), Speeding up automatic hyperparameter optimization of deep
    neural networks by extrapolation of learning curves, IJCAI.
[2] Adriaensen, Rakotoarison, Müller, Hutter (2023), Efficient Bayesian learning curve
    extrapolation using prior-data fitted networks, NeurIPS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from coreenv.curves import CurveBank, bank_from_arrays, curve_problem
from mara_agents.checks import check

__all__ = ["FORMS", "SHAPES", "CurvePrior", "PriorCurve", "prior_bank"]


# region: forms, each a decay g(t) from g(0) = 1 on the progress clock t (batches)
# After scaling to the initial loss, Domhan's pow3 and pow4 differ in where the knee lies, and two
# pairs share a law (log power/MMF, Weibull/Janoschek): the prior draws each pair's exponent in a
# different regime (SHAPES), below 1 (a sharp start, a long tail) and above 1 (a flat start).
def _pow3(t, p):
    """pow3, ``c + a·(t + 1)^-α``: a power law with its knee at the first batch."""
    return (1.0 + t) ** -p["shape"]


def _pow4(t, p):
    """pow4, ``c + (a·t + b)^-α``: a power law with its knee at τ = b / a batches."""
    return (1.0 + t / p["tau"]) ** -p["shape"]


def _exp(t, p):
    """Exponential, ``c + a·exp(-t / τ)``."""
    return np.exp(-t / p["tau"])


def _logistic_in_log_t(t, p):
    """Log power and MMF, ``c + a / (1 + (t / τ)^δ)``: a logistic in log t, a tail ``t^-δ``."""
    return 1.0 / (1.0 + (t / p["tau"]) ** p["shape"])


def _weibull(t, p):
    """Weibull and Janoschek, ``c + a·exp(-(t / τ)^δ)``: a stretched (δ < 1) exponential."""
    return np.exp(-((t / p["tau"]) ** p["shape"]))


def _ilog2(t, p):
    """ilog2, ``c + a / ln(t / τ + e)``: falls as 1 / log t, slower than any power law."""
    return 1.0 / np.log(t / p["tau"] + np.e)


def _mix(t, p):
    """``w·g1(t) + (1 − w)·g2(t − t2)``: a first fall, then a second one from clock time t2 on."""
    first = FORMS[p["forms"][0]](t, {"tau": p["tau"][0], "shape": p["shape"][0]})
    late = np.maximum(t - p["start"], 0.0)
    second = FORMS[p["forms"][1]](late, {"tau": p["tau"][1], "shape": p["shape"][1]})
    return p["weight"] * first + (1.0 - p["weight"]) * second


FORMS: dict[str, Callable[[np.ndarray, dict], np.ndarray]] = {
    "pow3": _pow3,
    "pow4": _pow4,
    "exp": _exp,
    "logpower": _logistic_in_log_t,
    "mmf": _logistic_in_log_t,
    "weibull": _weibull,
    "janoschek": _weibull,
    "ilog2": _ilog2,
    "mix": _mix,
}
"""Form name -> decay ``g(t, params)`` with ``params = {"tau": τ, "shape": exponent}``; a mixture's
``{"forms", "tau", "shape"}`` hold pairs (first, second), plus the first's "weight" and "start"."""
SHAPES: dict[str, tuple[float, float]] = {
    "pow3": (0.05, 1.5),  # α: 0.05 is still falling at 800 batches, 1.5 is done in 10
    "pow4": (0.3, 3.0),
    "exp": (1.0, 1.0),  # no exponent
    "logpower": (0.3, 1.0),
    "mmf": (1.0, 4.0),
    "weibull": (0.3, 1.0),
    "janoschek": (1.0, 4.0),
    "ilog2": (1.0, 1.0),  # no exponent
}
"""Range of each simple form's exponent, drawn log-uniform."""
_SIMPLE = tuple(SHAPES)
_MIX_WEIGHT = (0.3, 0.9)  # share of the fall in the mixture's first phase
_SECOND_PHASE = (0.2, 0.6)  # clock time of the mixture's second phase, fraction of the length
_PLATEAU_AT = (0.1, 0.6)  # start of a mid-run plateau, fraction of the length
_DROP_AT = (0.2, 0.9)  # batch of a step learning-rate drop, fraction of the length
_OVERFIT_AT = (0.1, 0.7)  # batch where overfitting sets in, fraction of the length
_FADE = 0.1  # after it, progress fades with a time constant of 10% of the rest of the run
_TAIL_DF = (3.0, 10.0)  # degrees of freedom of Student-t minibatch noise
_CLIP = 8.0  # heavy-tailed draws beyond 8 scales are clipped (no 1e20 losses)
_DRIFT_MEMORY = (5.0, 100.0)  # correlation time of the slow wobble, batches
_SPIKES, _SPIKE_AT = 3, (0.02, 1.0)  # one to three spikes, anywhere after the first 2%
_SPIKE_DECAY = (1.0, 20.0)  # a spike decays over 1-20 batches
_MAX_REDRAWS = 100
# endregion

# Features switched on by a `<name>_prob` field of `CurvePrior`.
_FEATURES = ("noise", "heavy_tail", "ema", "drift", "start_plateau", "plateau", "warmup")
_FEATURES += ("cosine", "drop", "overfit", "spike")
# Uniforms drawn for every curve, whether its feature is on or not (one (k,) row each).
_UNIFORMS = tuple(key + "_on" for key in _FEATURES) + (
    *("first", "initial", "asymptote", "tau", "shape"),  # the law (a mixture's first fall)
    *("second", "second_tau", "second_shape", "weight", "start"),  # a mixture's second fall
    *("noise", "tail_df", "ema", "drift", "drift_memory"),
    *("start_plateau", "plateau_at", "plateau", "warmup", "drops", "overfit_at", "overfit"),
    "spikes",
)


@dataclass(frozen=True)
class PriorCurve:
    """One drawn curve: its form, its ``(length + 1,)`` losses and the parameters of the draw."""

    form: str
    losses: np.ndarray
    params: dict


@dataclass(frozen=True)
class CurvePrior:
    """How synthetic curves are drawn; each range ``(lo, hi)`` is drawn log-uniform."""

    length: int = 800
    """Batches per curve; a curve has ``length + 1`` losses (index 0: before training)."""
    forms: tuple[str, ...] = tuple(FORMS)
    """Names of `FORMS` to draw from, uniformly."""
    initial: tuple[float, float] = (1e-3, 1e3)
    """Initial loss ``L0``."""
    asymptote: tuple[float, float] = (1e-3, 0.95)
    """Asymptote as a fraction ``r`` of the initial loss (near 1: the curve barely falls)."""
    time_scale: tuple[float, float] = (1.0, 1000.0)
    """Time scale τ of a form, batches (pow3's is set by its exponent alone)."""
    noise_prob: float = 0.6
    """Chance of multiplicative minibatch noise on the log loss (else a smooth curve)."""
    noise: tuple[float, float] = (0.01, 0.5)
    """Scale σ of the minibatch noise on the log loss."""
    heavy_tail_prob: float = 0.3
    """Chance that minibatch noise is Student-t (3-10 degrees of freedom), not Gaussian."""
    ema_prob: float = 0.3
    """Chance that the logged loss is an EMA, ``y_t = y_{t-1} + α (x_t - y_{t-1})``."""
    ema: tuple[float, float] = (0.01, 0.3)
    """EMA weight α of the newest loss."""
    drift_prob: float = 0.3
    """Chance of a slow correlated wobble (AR(1), 5-100 batches' memory) on the log loss."""
    drift: tuple[float, float] = (0.003, 0.03)
    """Standard deviation of the wobble on the log loss."""
    start_plateau_prob: float = 0.15
    """Chance of no progress at all for a while at the start (as RL curves show)."""
    start_plateau: tuple[float, float] = (0.02, 0.4)
    """Length of the start plateau, fraction of the length."""
    plateau_prob: float = 0.15
    """Chance of a mid-run plateau (from 10-60% of the run on), then a resumed fall."""
    plateau: tuple[float, float] = (0.05, 0.3)
    """Length of the mid-run plateau, fraction of the length."""
    warmup_prob: float = 0.15
    """Chance of a linear warm-up: the rate of progress rises from 0 to 1."""
    warmup: tuple[float, float] = (0.01, 0.15)
    """Length of the warm-up, fraction of the length."""
    cosine_prob: float = 0.15
    """Chance of a cosine schedule: the rate of progress falls to 0 by the end (not with drops)."""
    drop_prob: float = 0.15
    """Chance of step learning-rate drops (one or two, at 20-90% of the run)."""
    drop: tuple[float, float] = (0.3, 0.8)
    """Factor by which a step drop multiplies the loss."""
    overfit_prob: float = 0.15
    """Chance of overfitting: from 10-70% of the run on, progress fades and the loss rises."""
    overfit: tuple[float, float] = (0.05, 1.0)
    """Rise of the log loss by the end of the run due to overfitting."""
    spike_prob: float = 0.1
    """Chance of loss spikes (one to three, each decaying over 1-20 batches)."""
    spike: tuple[float, float] = (0.2, 2.0)
    """Height of a spike on the log loss."""

    def __post_init__(self) -> None:
        check(self.length, "an int >= 2", "CurvePrior.length")
        if not self.forms or any(form not in FORMS for form in self.forms):
            raise ValueError(
                f"CurvePrior.forms must name forms of {list(FORMS)}, got {self.forms!r}."
            )
        for name in _FEATURES:
            check(getattr(self, name + "_prob"), "in [0, 1]", f"CurvePrior.{name}_prob")
        for name, (low, high) in _BOUNDS.items():
            value = getattr(self, name)
            if not (np.shape(value) == (2,) and low < value[0] <= value[1] < high):
                raise ValueError(
                    f"CurvePrior.{name} must be a pair (lo, hi) with {low} < lo <= hi < {high}, "
                    f"got {value!r}."
                )

    def sample(self, count: int, rng: np.random.Generator) -> list[tuple[str, np.ndarray]]:
        """`count` curves as (form name, (length + 1,) float64 losses)."""
        return [(curve.form, curve.losses) for curve in self.draw(count, rng)]

    def draw(self, count: int, rng: np.random.Generator) -> list[PriorCurve]:
        """`count` curves with the parameters of their draws; each passes `curve_problem`."""
        forms = np.asarray(self.forms)[rng.integers(len(self.forms), size=count)]
        losses, params = self._draw(forms, rng)
        for _ in range(_MAX_REDRAWS):
            bad = [i for i, row in enumerate(losses) if curve_problem(row) is not None]
            if not bad:
                break
            losses[bad], redrawn = self._draw(forms[bad], rng)  # the same forms, new draws
            for i, p in zip(bad, redrawn):
                params[i] = p
        else:
            raise RuntimeError(f"{self} drew unusable curves {_MAX_REDRAWS} times in a row.")
        return [PriorCurve(str(f), row, p) for f, row, p in zip(forms, losses, params)]

    def _draw(self, forms: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, list]:
        """(k, length + 1) losses and k parameter dicts of curves of the given (k,) forms."""
        k, n = len(forms), self.length
        u = dict(zip(_UNIFORMS, rng.random((len(_UNIFORMS), k))))  # each (k,)
        u_drops = rng.random((2, k, 2))  # batch and factor of each possible step drop
        u_spikes = rng.random((3, k, _SPIKES))  # batch, height and decay of each possible spike
        white = rng.standard_normal((2, k, n + 1))  # minibatch noise, the wobble's innovations
        on = {name: u[name + "_on"] < getattr(self, name + "_prob") for name in _FEATURES}
        on["heavy_tail"] &= on["noise"]
        on["cosine"] &= ~on["drop"]  # one learning-rate schedule at a time
        on["drop"] = on["drop"][:, None] & (np.arange(2) <= 2 * u["drops"][:, None])  # 1 or 2
        on["spike"] = on["spike"][:, None] & (np.arange(_SPIKES) <= _SPIKES * u["spikes"][:, None])
        p = self._law(forms, u) | self._events(on, u, u_drops, u_spikes)

        t = np.arange(n + 1, dtype=np.float64)  # (n + 1,) batches
        r = p["asymptote"][:, None]
        g = _decay(p, _clock(p, n))  # (k, n + 1)
        log_loss = np.log(p["initial"])[:, None] + np.log(r + (1.0 - r) * g) + _loss_events(p, t)
        heavy = np.flatnonzero(on["heavy_tail"])  # drawn last: the other draws do not move
        df = p["tail_df"][heavy, None]
        white[0, heavy] = np.clip(rng.standard_t(df, (len(heavy), n + 1)), -_CLIP, _CLIP)
        log_loss += p["noise"][:, None] * white[0]
        wobbly = np.flatnonzero(on["drift"])
        log_loss[wobbly] += p["drift"][wobbly, None] * _wobble(
            white[1, wobbly], p["drift_memory"][wobbly]
        )
        losses = np.exp(log_loss)
        smoothed = np.flatnonzero(on["ema"])
        losses[smoothed] = _ema(losses[smoothed], p["ema"][smoothed])
        return losses, [_config(p, on, i) for i in range(k)]

    def _law(self, forms: np.ndarray, u: dict) -> dict:
        """(k,) parameters of the laws; a mixture's first fall ends well before its second."""
        n, (lo, hi) = self.length, self.time_scale
        simple = np.asarray(_SIMPLE)
        first = np.where(forms == "mix", simple[(u["first"] * len(simple)).astype(int)], forms)
        second = simple[(u["second"] * len(simple)).astype(int)]
        start = _uniform(_SECOND_PHASE, u["start"]) * n
        return {
            "form": forms,
            "first": first,
            "second": second,
            "initial": _log_uniform(self.initial, u["initial"]),
            "asymptote": _log_uniform(self.asymptote, u["asymptote"]),
            "tau": _log_uniform(
                (lo, np.where(forms == "mix", np.clip(start / 4, lo, hi), hi)), u["tau"]
            ),
            "shape": _log_uniform(_shapes(first), u["shape"]),
            "second_tau": _log_uniform(self.time_scale, u["second_tau"]),
            "second_shape": _log_uniform(_shapes(second), u["second_shape"]),
            "weight": _uniform(_MIX_WEIGHT, u["weight"]),
            "start": start,
        }

    def _events(self, on: dict, u: dict, u_drops: np.ndarray, u_spikes: np.ndarray) -> dict:
        """Parameters of the noise and events; where off, neutral: 0 (a drop's factor: 1)."""
        n = self.length

        def drawn(key: str, bounds: tuple, v: np.ndarray, off: float = 0.0) -> np.ndarray:
            return np.where(on[key], _log_uniform(bounds, v), off)

        return {
            "noise": drawn("noise", self.noise, u["noise"]),
            "tail_df": _log_uniform(_TAIL_DF, u["tail_df"]),
            "ema": drawn("ema", self.ema, u["ema"]),
            "drift": drawn("drift", self.drift, u["drift"]),
            "drift_memory": _log_uniform(_DRIFT_MEMORY, u["drift_memory"]),
            "start_plateau": drawn("start_plateau", self.start_plateau, u["start_plateau"]) * n,
            "plateau_at": np.floor(_uniform(_PLATEAU_AT, u["plateau_at"]) * n),
            "plateau": drawn("plateau", self.plateau, u["plateau"]) * n,
            "warmup": drawn("warmup", self.warmup, u["warmup"]) * n,
            "cosine": on["cosine"],
            "drop_at": np.floor(_uniform(_DROP_AT, u_drops[0]) * n),  # (k, 2)
            "drop": drawn("drop", self.drop, u_drops[1], off=1.0),
            "overfit_at": np.floor(_uniform(_OVERFIT_AT, u["overfit_at"]) * n),
            "overfit": drawn("overfit", self.overfit, u["overfit"]),
            "spike_at": np.floor(_uniform(_SPIKE_AT, u_spikes[0]) * n),  # (k, _SPIKES)
            "spike": drawn("spike", self.spike, u_spikes[1]),
            "spike_decay": _log_uniform(_SPIKE_DECAY, u_spikes[2]),
        }


_BOUNDS = {
    key: (0.0, np.inf) for key in ("initial", "time_scale", "noise", "drift", "overfit", "spike")
}
_BOUNDS |= {
    key: (0.0, 1.0) for key in ("asymptote", "ema", "start_plateau", "plateau", "warmup", "drop")
}
# Events in a curve's config: each occurrence as a list of these parameters (cosine: true).
_EVENTS = {
    "heavy_tail": ("tail_df",),
    "drift": ("drift", "drift_memory"),
    "start_plateau": ("start_plateau",),
    "plateau": ("plateau_at", "plateau"),
    "warmup": ("warmup",),
    "cosine": (),
    "drop": ("drop_at", "drop"),
    "overfit": ("overfit_at", "overfit"),
    "spike": ("spike_at", "spike", "spike_decay"),
}
_DEFAULT_PRIOR = CurvePrior()


def prior_bank(count: int, seed: int = 0, prior: CurvePrior = _DEFAULT_PRIOR) -> CurveBank:
    """`count` prior curves as a `CurveBank` named "prior", of families "prior-<form>".

    A run's config is its draw's parameters: "form"; "initial" and "asymptote" (a fraction); the
    law's "tau" and "shape" (a mixture: "forms", "tau", "shape", "weight", "start", as `FORMS`
    reads them); "noise" (σ, 0 for none) and "ema" (α, 0 for none); and each event that happened
    as a list of its occurrences (batches from 0): "heavy_tail" [[df]], "drift" [[σ, memory]],
    "start_plateau" [[length]], "plateau" [[batch, length]], "warmup" [[length]], "cosine" true,
    "drop" [[batch, factor], ...], "overfit" [[batch, rise]], "spike" [[batch, height, decay], ...].
    """
    curves = prior.draw(count, np.random.default_rng(seed))
    families = [f"prior-{c.form}" for c in curves]
    return bank_from_arrays(
        [c.losses for c in curves], families, [c.params for c in curves], "prior"
    )


def _uniform(bounds, u: np.ndarray) -> np.ndarray:
    """Uniform draws in ``bounds = (lo, hi)`` (scalars or arrays) from uniforms ``u``."""
    return bounds[0] + (bounds[1] - bounds[0]) * u


def _log_uniform(bounds, u: np.ndarray) -> np.ndarray:
    """Log-uniform draws in ``bounds = (lo, hi)`` (scalars or arrays) from uniforms ``u``."""
    return np.exp(_uniform((np.log(bounds[0]), np.log(bounds[1])), u))


def _shapes(forms: np.ndarray) -> np.ndarray:
    """(2, k) exponent ranges of the given simple forms."""
    return np.array([SHAPES[form] for form in forms]).T


def _clock(p: dict, n: int) -> np.ndarray:
    """(k, n + 1) progress clock: s(0) = 0, each batch adds the rate of progress in [0, 1]."""
    mid = np.arange(n) + 0.5  # (n,) the steps, between losses
    at, start = p["plateau_at"][:, None], p["start_plateau"][:, None]
    rate = (mid >= start) & ~((mid >= at) & (mid < at + p["plateau"][:, None]))  # (k, n)
    rate = rate * np.minimum(1.0, mid / np.maximum(p["warmup"], 1e-9)[:, None])  # linear ramp
    rate *= np.where(p["cosine"][:, None], 0.5 * (1.0 + np.cos(np.pi * mid / n)), 1.0)
    onset = np.where(p["overfit"] > 0, p["overfit_at"], np.inf)[:, None]  # overfitting: the
    rate *= np.exp(-np.maximum(mid - onset, 0.0) / (_FADE * (n - onset)))  # progress fades
    return np.concatenate([np.zeros((len(rate), 1)), np.cumsum(rate, axis=1)], axis=1)


def _mix_params(p: dict, i: int) -> dict:
    """The parameters of curve ``i``'s mixture, as `_mix` reads them."""
    return {
        "forms": [str(p["first"][i]), str(p["second"][i])],
        "tau": [float(p["tau"][i]), float(p["second_tau"][i])],
        "shape": [float(p["shape"][i]), float(p["second_shape"][i])],
        "weight": float(p["weight"][i]),
        "start": float(p["start"][i]),
    }


def _decay(p: dict, clock: np.ndarray) -> np.ndarray:
    """(k, n + 1) decays g of each curve's form on its clock, one call per simple form."""
    g = np.empty_like(clock)
    for form in np.unique(p["form"]):
        rows = np.flatnonzero(p["form"] == form)
        if form == "mix":
            for i in rows:
                g[i] = _mix(clock[i], _mix_params(p, i))
        else:
            law = {"tau": p["tau"][rows, None], "shape": p["shape"][rows, None]}
            g[rows] = FORMS[form](clock[rows], law)
    return g


def _loss_events(p: dict, t: np.ndarray) -> np.ndarray:
    """(k, n + 1) change of the log loss by step drops, overfitting and spikes."""
    out = np.zeros((len(p["form"]), len(t)))
    rows = np.flatnonzero((p["drop"] < 1.0).any(axis=1))
    dropped = t >= p["drop_at"][rows, :, None]  # (k', 2, n + 1)
    out[rows] += (dropped * np.log(p["drop"][rows, :, None])).sum(axis=1)
    rows = np.flatnonzero(p["overfit"] > 0.0)
    at = p["overfit_at"][rows, None]  # the rise has zero slope at its onset: a smooth minimum
    out[rows] += p["overfit"][rows, None] * (np.maximum(t - at, 0.0) / (t[-1] - at)) ** 1.5
    rows = np.flatnonzero((p["spike"] > 0.0).any(axis=1))
    since = t - p["spike_at"][rows, :, None]  # (k', S, n + 1)
    decay = np.exp(-np.maximum(since, 0.0) / p["spike_decay"][rows, :, None])
    out[rows] += (p["spike"][rows, :, None] * decay * (since >= 0)).sum(axis=1)
    return out


def _ema(x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Rows of ``x`` (k, n) smoothed, ``y_0 = x_0, y_t = α x_t + (1 - α) y_{t-1}``; alpha (k,)."""
    y = x.T.copy()  # (n, k): a time step is one vector operation over the curves
    for j in range(1, len(y)):
        y[j] += (1.0 - alpha) * (y[j - 1] - y[j])
    return y.T


def _wobble(white: np.ndarray, memory: np.ndarray) -> np.ndarray:
    """(k, n + 1) AR(1) noise of unit variance from white noise: an EMA with α = 1 / memory."""
    alpha = 1.0 / memory  # (k,)
    white = white.copy()
    white[:, 0] *= np.sqrt(alpha / (2.0 - alpha))  # stationary from the start
    return _ema(white, alpha) * np.sqrt((2.0 - alpha) / alpha)[:, None]


def _config(p: dict, on: dict, i: int) -> dict:
    """The JSON-ready parameters of curve ``i``'s draw (see `prior_bank`)."""
    form = str(p["form"][i])
    law = _mix_params(p, i) if form == "mix" else {"tau": p["tau"][i], "shape": p["shape"][i]}
    config = {"form": form, "initial": p["initial"][i], "asymptote": p["asymptote"][i], **law}
    config |= {"noise": p["noise"][i], "ema": p["ema"][i]}
    for event, keys in _EVENTS.items():
        used = np.atleast_1d(on[event][i])  # (m,) occurrences
        if used.any() and not keys:
            config[event] = True
        elif used.any():
            values = np.stack([np.atleast_1d(p[key][i])[used] for key in keys], axis=1)
            config[event] = values[np.argsort(values[:, 0])].tolist()  # in order of batch
    return {key: float(v) if isinstance(v, np.floating) else v for key, v in config.items()}
