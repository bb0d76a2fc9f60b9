"""The models behind the recorded curves map flat 8x8 digits to class logits."""

import pytest

torch = pytest.importorskip("torch")

from curvegen.models import build  # noqa: E402


@pytest.mark.parametrize("kind", ["mlp", "cnn", "lstm", "vit"])
def test_models_map_flat_digits_to_logits(kind):
    model = build(kind, 64, 10)
    assert model(torch.zeros(5, 64)).shape == (5, 10)
