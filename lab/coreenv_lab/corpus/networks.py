"""The small torch models of the curve corpus, one per kind of architecture a user trains.

Every model maps a batch of a `Problem`'s inputs to what its objective reads: logits (classes,
tokens, labels), predicted values, or, for the likelihood models, each row's negative
log-likelihood (or its evidence bound). Written from scratch; sizes are drawn per run.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from coreenv_lab.corpus.problems import Problem
from curvegen.models import SmallCNN, TinyViT

__all__ = ["NETWORKS", "build_network"]


def _mlp(inputs: int, outputs: int, width: int, depth: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(inputs, width), nn.ReLU()]
        inputs = width
    return nn.Sequential(*layers, nn.Linear(inputs, outputs))


class MLP(nn.Module):
    """``depth`` hidden ReLU layers of ``width`` over float features (depth 0: a linear model)."""

    def __init__(self, problem: Problem, width: int = 32, depth: int = 1) -> None:
        super().__init__()
        self.net = _mlp(problem.features, problem.outputs, width, depth)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, F) -> (B, outputs)."""
        return self.net(x)


class TokenMLP(nn.Module):
    """Embedded tokens of a fixed context, concatenated, through an MLP (a neural n-gram model)."""

    def __init__(self, problem: Problem, embed: int = 8, width: int = 64, depth: int = 1) -> None:
        super().__init__()
        self.embed = nn.Embedding(problem.tokens, embed)
        self.net = _mlp(problem.features * embed, problem.outputs, width, depth)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T) tokens -> (B, outputs)."""
        return self.net(self.embed(x).flatten(1))


class Recurrent(nn.Module):
    """An LSTM or GRU reading a sequence (tokens, or one value per step); the last state is read."""

    def __init__(self, problem: Problem, hidden: int = 32, cell: str = "lstm") -> None:
        super().__init__()
        self.embed = nn.Embedding(problem.tokens, 16) if problem.tokens else None
        size = 16 if problem.tokens else 1
        self.rnn = (nn.LSTM if cell == "lstm" else nn.GRU)(size, hidden, batch_first=True)
        self.head = nn.Linear(hidden, problem.outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T) tokens or values -> (B, outputs)."""
        steps = self.embed(x) if self.embed is not None else x[..., None]  # (B, T, size)
        out, _ = self.rnn(steps)
        return self.head(out[:, -1])


class CausalTransformer(nn.Module):
    """A pre-LN transformer over tokens with causal attention; the last position is read out."""

    def __init__(self, problem: Problem, dim: int = 32, depth: int = 1, heads: int = 2) -> None:
        super().__init__()
        self.embed = nn.Embedding(problem.tokens, dim)
        self.position = nn.Parameter(0.02 * torch.randn(1, problem.features, dim))
        block = nn.TransformerEncoderLayer(
            dim, heads, dim_feedforward=2 * dim, dropout=0.0, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(block, depth, enable_nested_tensor=False)
        self.head = nn.Linear(dim, problem.outputs)
        mask = torch.triu(torch.full((problem.features, problem.features), -math.inf), 1)
        self.register_buffer("mask", mask)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T) tokens -> (B, outputs)."""
        encoded = self.encoder(self.embed(x) + self.position, mask=self.mask)  # (B, T, dim)
        return self.head(encoded[:, -1])


class Autoencoder(nn.Module):
    """An MLP encoder to a ``bottleneck`` and a mirrored decoder (reconstruction)."""

    def __init__(self, problem: Problem, width: int = 32, bottleneck: int = 4) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(problem.features, width),
            nn.ReLU(),
            nn.Linear(width, bottleneck),
            nn.ReLU(),
            nn.Linear(bottleneck, width),
            nn.ReLU(),
            nn.Linear(width, problem.features),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, F) -> (B, F) reconstruction."""
        return self.net(x)


class VAE(nn.Module):
    """A variational autoencoder with a Bernoulli decoder: returns each row's negative ELBO (nats).

    Targets in [0, 1] (binary or grey pixels); the reparameterisation noise comes from the global
    torch generator, which the run seeds.
    """

    def __init__(self, problem: Problem, width: int = 64, latent: int = 4) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(problem.features, width), nn.ReLU())
        self.mean, self.log_var = nn.Linear(width, latent), nn.Linear(width, latent)
        self.decoder = _mlp(latent, problem.features, width, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, F) -> (B,) negative ELBO."""
        hidden = self.encoder(x)
        mean, log_var = self.mean(hidden), self.log_var(hidden).clamp(-8, 8)
        z = mean + torch.exp(0.5 * log_var) * torch.randn_like(mean)
        logits = self.decoder(z)
        reconstruction = nn.functional.binary_cross_entropy_with_logits(
            logits, x, reduction="none"
        ).sum(1)
        kl = 0.5 * (mean**2 + log_var.exp() - 1 - log_var).sum(1)
        return reconstruction + kl


class AutoregressiveBinary(nn.Module):
    """A fully visible sigmoid belief net: pixel i is predicted from pixels < i (masked linear)."""

    def __init__(self, problem: Problem) -> None:
        super().__init__()
        features = problem.features
        self.weight = nn.Parameter(torch.zeros(features, features))
        self.bias = nn.Parameter(torch.zeros(features))
        self.register_buffer("mask", torch.tril(torch.ones(features, features), -1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, F) in [0, 1] -> (B,) negative log-likelihood."""
        logits = x @ (self.weight * self.mask).T + self.bias
        return nn.functional.binary_cross_entropy_with_logits(logits, x, reduction="none").sum(1)


class AutoregressivePair(nn.Module):
    """p(a) · p(b | a) over a pair of tokens (a discretised 2-D density): each row's NLL."""

    def __init__(self, problem: Problem, width: int = 32) -> None:
        super().__init__()
        self.first = nn.Parameter(torch.zeros(problem.tokens))
        self.second = nn.Sequential(
            nn.Embedding(problem.tokens, width), nn.ReLU(), nn.Linear(width, problem.tokens)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, 2) tokens -> (B,) negative log-likelihood."""
        first = nn.functional.cross_entropy(
            self.first.expand(len(x), -1), x[:, 0], reduction="none"
        )
        return first + nn.functional.cross_entropy(self.second(x[:, 0]), x[:, 1], reduction="none")


class Factorisation(nn.Module):
    """Matrix factorisation of (user, item) ratings: ⟨e_u, e_i⟩ + biases, or an MLP over both."""

    def __init__(self, problem: Problem, dim: int = 8, width: int = 0) -> None:
        super().__init__()
        self.embed = nn.Embedding(problem.tokens, dim)
        nn.init.normal_(self.embed.weight, std=0.1)
        self.bias = nn.Embedding(problem.tokens, 1)
        nn.init.zeros_(self.bias.weight)
        self.mlp = _mlp(2 * dim, 1, width, 1) if width else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, 2) indices -> (B, 1) predicted ratings."""
        e = self.embed(x)  # (B, 2, dim)
        if self.mlp is not None:
            return self.mlp(e.flatten(1))
        return (e[:, 0] * e[:, 1]).sum(1, keepdim=True) + self.bias(x).sum(1)


class Digits(nn.Module):
    """The bundled bank's CNN and ViT for 8x8 digits, behind the corpus models' constructor."""

    def __init__(self, problem: Problem, kind: str = "cnn", **shape: int) -> None:
        super().__init__()
        model = SmallCNN if kind == "cnn" else TinyViT
        self.net = model(problem.features, problem.outputs, **shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, 64) -> (B, classes)."""
        return self.net(x)


NETWORKS = {
    "mlp": MLP,
    "token_mlp": TokenMLP,
    "recurrent": Recurrent,
    "transformer": CausalTransformer,
    "autoencoder": Autoencoder,
    "vae": VAE,
    "fvsbn": AutoregressiveBinary,
    "pair": AutoregressivePair,
    "factorisation": Factorisation,
    "digits": Digits,
}
"""Network name -> class; each takes the `Problem` and its shape hyperparameters."""


def build_network(name: str, problem: Problem, **shape) -> nn.Module:
    """Network ``name`` for ``problem`` with the given shape."""
    return NETWORKS[name](problem, **shape)
