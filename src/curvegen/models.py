"""The small torch models behind the recorded curves: MLP, CNN, row-LSTM, logistic regression, ViT.

Written from scratch; each takes a flat feature vector (digits images are 8x8 = 64 features).
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["MLP", "RowLSTM", "SmallCNN", "TinyViT", "build"]


class MLP(nn.Sequential):
    """``depth`` hidden ReLU layers of ``width`` units; depth 0 is logistic regression."""

    def __init__(self, features: int, classes: int, width: int = 32, depth: int = 1) -> None:
        layers: list[nn.Module] = []
        size = features
        for _ in range(depth):
            layers += [nn.Linear(size, width), nn.ReLU()]
            size = width
        super().__init__(*layers, nn.Linear(size, classes))


class SmallCNN(nn.Module):
    """One 3x3 convolution with ``channels`` maps, 2x2 max-pooling, a linear read-out (8x8 in)."""

    def __init__(self, features: int, classes: int, channels: int = 8) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, channels, 3, padding=1)
        self.head = nn.Linear(channels * 16, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, 64)
        """Logits (B, classes)."""
        x = torch.relu(self.conv(x.view(-1, 1, 8, 8)))  # (B, C, 8, 8)
        return self.head(nn.functional.max_pool2d(x, 2).flatten(1))  # (B, C·16) -> (B, classes)


class RowLSTM(nn.Module):
    """An LSTM reading an 8x8 image row by row; the last hidden state is classified."""

    def __init__(self, features: int, classes: int, hidden: int = 32) -> None:
        super().__init__()
        self.lstm = nn.LSTM(8, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, 64)
        """Logits (B, classes)."""
        out, _ = self.lstm(x.view(-1, 8, 8))  # (B, 8 rows, hidden)
        return self.head(out[:, -1])


class TinyViT(nn.Module):
    """A vision transformer for 8x8 images: square patches, a class token, pre-LN encoder blocks."""

    def __init__(
        self,
        features: int,
        classes: int,
        patch: int = 2,
        dim: int = 32,
        depth: int = 2,
        heads: int = 2,
    ) -> None:
        super().__init__()
        self.patch = patch
        tokens = (8 // patch) ** 2
        self.embed = nn.Linear(patch * patch, dim)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.position = nn.Parameter(0.02 * torch.randn(1, tokens + 1, dim))
        block = nn.TransformerEncoderLayer(
            dim, heads, dim_feedforward=2 * dim, dropout=0.0, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(block, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, 64)
        """Logits (B, classes)."""
        p = self.patch
        images = x.view(-1, 8 // p, p, 8 // p, p)  # (B, rows, p, cols, p)
        patches = images.permute(0, 1, 3, 2, 4).reshape(x.shape[0], -1, p * p)  # (B, T, p·p)
        tokens = torch.cat([self.cls.expand(x.shape[0], -1, -1), self.embed(patches)], dim=1)
        encoded = self.encoder(tokens + self.position)  # (B, T + 1, dim)
        return self.head(self.norm(encoded[:, 0]))


_MODELS = {"mlp": MLP, "cnn": SmallCNN, "lstm": RowLSTM, "vit": TinyViT}


def build(kind: str, features: int, classes: int, **shape: int) -> nn.Module:
    """Model ``kind`` with the given shape hyperparameters."""
    return _MODELS[kind](features, classes, **shape)
