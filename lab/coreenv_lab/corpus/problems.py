"""The learning problems of the curve corpus: data generated or bundled, never downloaded.

A `Problem` is fixed training and validation arrays and an objective. Every problem is built from
a fixed seed (`PROBLEM_SEED`), so all runs of a family see the same data; runs differ by their
hyperparameters and seeds. Inputs are float32 features or int64 tokens; targets are int64 classes
or tokens, or float32 values. Sizes are small on purpose: a run of 800 batches must take a few
seconds on one CPU core.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from curvegen.data import load

__all__ = ["OBJECTIVES", "PROBLEMS", "Problem", "problem"]

PROBLEM_SEED = 0
VALIDATION_ROWS = 0.25  # share of rows held out for the validation loss
MAX_VALIDATION = 256  # rows: the validation loss is evaluated after every batch

OBJECTIVES = ("cross_entropy", "mse", "bce", "likelihood")
"""How a model's output becomes a loss (`coreenv_lab.corpus.training.batch_loss`); under
``likelihood`` the model returns each row's negative log-likelihood (or its ELBO bound) itself."""


@dataclass(frozen=True)
class Problem:
    """Training and validation arrays with the objective to minimise on them."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    objective: str
    outputs: int
    """Classes, tokens or target columns the model predicts."""
    tokens: int = 0
    """Vocabulary size of token inputs (0: float features)."""

    @property
    def features(self) -> int:
        """Input width (features, or context length of token inputs)."""
        return self.x_train.shape[1]


def _split(x: np.ndarray, y: np.ndarray, objective: str, outputs: int, tokens: int = 0) -> Problem:
    """Shuffle once, hold out a validation share (at most `MAX_VALIDATION` rows)."""
    order = np.random.default_rng(PROBLEM_SEED).permutation(len(x))
    held = min(int(round(len(x) * VALIDATION_ROWS)), MAX_VALIDATION)
    val, train = order[:held], order[held:]
    if tokens == 0:
        x = x.astype(np.float32)
    if objective in ("mse", "bce") or (objective == "likelihood" and tokens == 0):
        y = y.astype(np.float32)
    return Problem(x[train], y[train], x[val], y[val], objective, outputs, tokens)


def _standardise(x: np.ndarray) -> np.ndarray:
    return (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-8)


# --- classification ---------------------------------------------------------------------------


def _bundled(name: str, label_noise: float = 0.0) -> Problem:
    data = load(name)
    y_train = data.y_train.copy()
    if label_noise:
        rng = np.random.default_rng(PROBLEM_SEED)
        flip = rng.random(len(y_train)) < label_noise
        y_train[flip] = rng.integers(data.classes, size=int(flip.sum()))
    return Problem(data.x_train, y_train, data.x_val, data.y_val, "cross_entropy", data.classes)


def _sklearn_classes(maker: str, **kwargs) -> Problem:
    from sklearn import datasets

    x, y = getattr(datasets, maker)(random_state=PROBLEM_SEED, **kwargs)
    y = (y > 0).astype(np.int64) if maker == "make_hastie_10_2" else y.astype(np.int64)
    return _split(_standardise(x), y, "cross_entropy", int(y.max()) + 1)


def _multilabel() -> Problem:
    from sklearn.datasets import make_multilabel_classification

    x, y = make_multilabel_classification(
        n_samples=1200, n_features=20, n_classes=8, n_labels=3, random_state=PROBLEM_SEED
    )
    return _split(_standardise(x), y, "bce", 8)


# --- regression and reconstruction -------------------------------------------------------------


def _regression(maker: str, **kwargs) -> Problem:
    from sklearn import datasets

    if maker == "load_diabetes":
        x, y = datasets.load_diabetes(return_X_y=True)
    else:
        x, y = getattr(datasets, maker)(random_state=PROBLEM_SEED, **kwargs)
    return _split(_standardise(x), _standardise(y)[:, None], "mse", 1)


def _sine() -> Problem:
    rng = np.random.default_rng(PROBLEM_SEED)
    x = rng.uniform(-3, 3, size=(1000, 1))
    y = np.sin(2 * x) + 0.3 * np.sin(7 * x) + 0.1 * rng.standard_normal(x.shape)
    return _split(x, y, "mse", 1)


def _reconstruction(name: str) -> Problem:
    from sklearn import datasets

    if name == "digits":
        x = load("digits").x_train
    elif name == "swiss_roll":
        x = _standardise(datasets.make_swiss_roll(1000, noise=0.2, random_state=PROBLEM_SEED)[0])
    elif name == "low_rank":
        x = 5 * datasets.make_low_rank_matrix(1000, 32, effective_rank=4, random_state=PROBLEM_SEED)
        x = _standardise(x)
    else:
        x = load(name).x_train
    return _split(x, x, "mse", x.shape[1])


# --- generative ---------------------------------------------------------------------------------


def _binary_digits() -> Problem:
    data = load("digits")
    x = (np.concatenate([data.x_train, data.x_val]) > 0.5).astype(np.float32)
    return _split(x, x, "likelihood", 64)


def _soft_digits() -> Problem:
    data = load("digits")
    x = np.concatenate([data.x_train, data.x_val])
    return _split(x, x, "likelihood", 64)


def _moons_tokens(bins: int = 24) -> Problem:
    """2-D moons discretised to a pair of tokens: an autoregressive density model's data."""
    from sklearn.datasets import make_moons

    x, _ = make_moons(2000, noise=0.08, random_state=PROBLEM_SEED)
    cells = np.clip(((x - x.min(0)) / (np.ptp(x, 0) + 1e-9) * bins).astype(np.int64), 0, bins - 1)
    return _split(cells, cells, "likelihood", bins, tokens=bins)


# --- language ------------------------------------------------------------------------------------


def _markov_text(length: int, rng: np.random.Generator) -> np.ndarray:
    """Tokens of a sparse second-order Markov chain over 20 symbols."""
    symbols = 20
    table = rng.dirichlet(np.full(symbols, 0.15), size=(symbols, symbols))
    out = np.zeros(length, np.int64)
    out[:2] = rng.integers(symbols, size=2)
    draws = rng.random(length)
    cumulative = np.cumsum(table, axis=2)
    for i in range(2, length):
        out[i] = min(np.searchsorted(cumulative[out[i - 2], out[i - 1]], draws[i]), symbols - 1)
    return out


def _word_text(length: int, rng: np.random.Generator) -> np.ndarray:
    """Characters of Zipf-distributed words (a generated vocabulary), space separated."""
    letters = 26
    vocabulary = [rng.integers(1, letters + 1, size=rng.integers(2, 8)) for _ in range(300)]
    weights = 1.0 / np.arange(1, len(vocabulary) + 1) ** 1.1
    words = rng.choice(len(vocabulary), size=length // 3, p=weights / weights.sum())
    text = np.concatenate([np.append(vocabulary[w], 0) for w in words])  # 0: the space
    return text[:length]


def _arithmetic_text(length: int, rng: np.random.Generator) -> np.ndarray:
    """Characters of sums ``a+b=c;`` with a, b < 100: the tokens after '=' are computable."""
    alphabet = {c: i for i, c in enumerate("0123456789+=;")}
    pieces, size = [], 0
    while size < length:
        a, b = rng.integers(100, size=2)
        piece = [alphabet[c] for c in f"{a}+{b}={a + b};"]
        pieces.append(piece)
        size += len(piece)
    return np.concatenate(pieces)[:length]


def _bracket_text(length: int, rng: np.random.Generator) -> np.ndarray:
    """Balanced sequences of two kinds of brackets with letters between (tokens 0-5)."""
    out, stack = [], []
    while len(out) < length:
        r = rng.random()
        if stack and (r < 0.35 or len(stack) > 6):
            out.append(stack.pop() + 1)  # closing bracket of the open kind
        elif r < 0.75:
            kind = int(rng.integers(2)) * 2
            stack.append(kind)
            out.append(kind)
        else:
            out.append(4 + int(rng.integers(2)))
    return np.asarray(out[:length], np.int64)


_TEXTS = {
    "markov": (_markov_text, 20),
    "words": (_word_text, 27),
    "arithmetic": (_arithmetic_text, 13),
    "brackets": (_bracket_text, 6),
}


def _language(name: str, context: int = 16) -> Problem:
    """Next-token prediction from the previous ``context`` tokens of a generated text."""
    make, vocabulary = _TEXTS[name]
    text = make(24_000, np.random.default_rng(PROBLEM_SEED))
    starts = np.arange(0, len(text) - context - 1, 7)
    x = text[starts[:, None] + np.arange(context)]
    y = text[starts + context]
    return _split(x, y, "cross_entropy", vocabulary, tokens=vocabulary)


# --- forecasting ---------------------------------------------------------------------------------


def _series(name: str, length: int = 4000) -> np.ndarray:
    rng = np.random.default_rng(PROBLEM_SEED)
    t = np.arange(length, dtype=np.float64)
    if name == "sines":
        values = sum(np.sin(2 * np.pi * t / p + rng.uniform(0, 6)) for p in (17, 43, 101))
        values = values + 0.2 * rng.standard_normal(length)
    elif name == "ar2":
        values = np.zeros(length)
        noise = rng.standard_normal(length)
        for i in range(2, length):
            values[i] = 1.6 * values[i - 1] - 0.8 * values[i - 2] + noise[i]
    elif name == "mackey_glass":
        values = np.full(length + 300, 1.2)
        for i in range(17, length + 299):  # tau 17, Euler step 1
            delayed = values[i - 17]
            values[i + 1] = values[i] + 0.2 * delayed / (1 + delayed**10) - 0.1 * values[i]
        values = values[300:] + 0.01 * rng.standard_normal(length)
    else:  # "seasonal": trend, weekly season, bursts
        values = 0.002 * t + np.sin(2 * np.pi * t / 7) + 0.5 * np.sin(2 * np.pi * t / 30)
        values = values + 0.3 * rng.standard_normal(length)
        values[rng.random(length) < 0.02] += 3.0
    return (values - values.mean()) / values.std()


def _forecasting(name: str, window: int = 24) -> Problem:
    """Predict the next value of a standardised series from the previous ``window``."""
    series = _series(name)
    starts = np.arange(len(series) - window)
    x = series[starts[:, None] + np.arange(window)]
    return _split(x, series[starts + window, None], "mse", 1)


# --- recommendation ------------------------------------------------------------------------------


def _ratings(rank: int, users: int = 300, items: int = 200, observed: int = 12_000) -> Problem:
    """Ratings of a low-rank matrix plus noise; the inputs are (user, item) index pairs."""
    rng = np.random.default_rng(PROBLEM_SEED + rank)
    u, v = rng.standard_normal((users, rank)), rng.standard_normal((items, rank))
    pairs = np.stack([rng.integers(users, size=observed), rng.integers(items, size=observed)], 1)
    truth = np.sum(u[pairs[:, 0]] * v[pairs[:, 1]], axis=1) / np.sqrt(rank)
    pairs[:, 1] += users  # one vocabulary: users first, then items
    ratings = truth + 0.3 * rng.standard_normal(observed)
    return _split(pairs.astype(np.int64), ratings[:, None], "mse", 1, tokens=users + items)


PROBLEMS = {
    # classification
    "digits": lambda: _bundled("digits"),
    "digits_noisy": lambda: _bundled("digits", label_noise=0.3),
    "wine": lambda: _bundled("wine"),
    "breast_cancer": lambda: _bundled("breast_cancer"),
    "iris": lambda: _sklearn_iris(),
    "moons": lambda: _sklearn_classes("make_moons", n_samples=1000, noise=0.3),
    "circles": lambda: _sklearn_classes("make_circles", n_samples=1000, noise=0.15, factor=0.5),
    "blobs": lambda: _sklearn_classes(
        "make_blobs", n_samples=1200, centers=6, n_features=10, cluster_std=4.0
    ),
    "quantiles": lambda: _sklearn_classes(
        "make_gaussian_quantiles", n_samples=1200, n_features=6, n_classes=3
    ),
    "hastie": lambda: _sklearn_classes("make_hastie_10_2", n_samples=1600),
    "multilabel": _multilabel,
    # regression
    "diabetes": lambda: _regression("load_diabetes"),
    "friedman1": lambda: _regression("make_friedman1", n_samples=1200, noise=1.0),
    "friedman2": lambda: _regression("make_friedman2", n_samples=1200, noise=50.0),
    "friedman3": lambda: _regression("make_friedman3", n_samples=1200, noise=0.2),
    "linear": lambda: _regression(
        "make_regression", n_samples=1200, n_features=30, n_informative=10, noise=20.0
    ),
    "sine": _sine,
    # reconstruction
    "digits_images": lambda: _reconstruction("digits"),
    "swiss_roll": lambda: _reconstruction("swiss_roll"),
    "low_rank": lambda: _reconstruction("low_rank"),
    "breast_cancer_features": lambda: _reconstruction("breast_cancer"),
    # generative
    "binary_digits": _binary_digits,
    "soft_digits": _soft_digits,
    "moons_tokens": _moons_tokens,
    # language
    **{f"text_{name}": functools.partial(_language, name) for name in _TEXTS},
    # forecasting
    **{
        f"series_{name}": functools.partial(_forecasting, name)
        for name in ("sines", "ar2", "mackey_glass", "seasonal")
    },
    # recommendation
    "ratings_rank3": lambda: _ratings(3),
    "ratings_rank10": lambda: _ratings(10),
}
"""Problem name -> its builder."""


def _sklearn_iris() -> Problem:
    from sklearn.datasets import load_iris

    x, y = load_iris(return_X_y=True)
    return _split(_standardise(x), y.astype(np.int64), "cross_entropy", 3)


@functools.cache
def problem(name: str) -> Problem:
    """Problem ``name`` (built once per process)."""
    if name not in PROBLEMS:
        raise ValueError(f"unknown problem {name!r}; known: {sorted(PROBLEMS)}.")
    return PROBLEMS[name]()
