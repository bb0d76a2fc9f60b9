"""Denoising sampled futures: their shape is kept, their noise only as far as the prefix's."""

import numpy as np
import pytest

pytest.importorskip("torch")

from mara_agents.predictors.basis import FutureBasis, fit_basis  # noqa: E402
from mara_agents.predictors.flow import FMPredictor  # noqa: E402
from mara_agents.predictors.flow_model import FMConfig, VelocityNet, future_offsets  # noqa: E402


def shapes(n, rng, grid=47):
    """Futures that are combinations of two smooth shapes of the offsets."""
    t = np.log1p(future_offsets(500)[:grid].astype(float))
    weights = rng.normal(size=(n, 2))
    return weights @ np.stack([-t / t.max(), np.sin(t)])


def test_a_basis_keeps_the_shape_and_scales_the_noise_down_to_the_prefixs():
    rng = np.random.default_rng(0)
    basis = fit_basis(shapes(500, rng), components=2)
    clean = shapes(4, rng)[:, None, :].repeat(8, axis=1)  # (B=4, S=8, G)
    noisy = clean + 0.1 * rng.normal(size=clean.shape)
    smooth = basis.denoise(noisy, np.zeros(4))
    assert np.abs(smooth - clean).max() < 0.1 and np.abs(noisy - clean).max() > 0.2
    kept = basis.denoise(noisy, np.full(4, 1.0))  # a noisier prefix: the residual stays whole
    np.testing.assert_allclose(kept, noisy, atol=1e-6)
    half = basis.denoise(noisy, np.full(4, 0.05))
    residual = np.sqrt(np.mean((half - smooth)[:, :, :16] ** 2, axis=(1, 2)))
    np.testing.assert_allclose(residual, 0.05, rtol=1e-4)


def test_a_bad_basis_is_refused():
    with pytest.raises(ValueError, match="components"):
        fit_basis(np.zeros((10, 5)), components=6)
    with pytest.raises(ValueError, match="FutureBasis needs"):
        FutureBasis(np.zeros(5), np.zeros((4, 2)))


def test_a_predictor_without_a_basis_refuses_to_denoise_and_one_with_it_saves_it(tmp_path):
    config = FMConfig(hidden=8, context_dim=4, time_dim=4)
    predictor = FMPredictor(VelocityNet(config))
    prefix = [2.0 * (1.0 + np.arange(40.0)) ** -0.4]
    with pytest.raises(ValueError, match="no FutureBasis"):
        predictor.sampled_crossings(prefix, np.array([0.5]), (True, 0.0))
    grid = predictor.net.grid
    basis = fit_basis(np.random.default_rng(0).normal(size=(100, grid)), components=3)
    FMPredictor(predictor.net, basis=basis).save(tmp_path / "fm.pt")
    loaded = FMPredictor.pretrained(tmp_path / "fm.pt")
    np.testing.assert_array_equal(loaded.basis.components, basis.components)
    denoised = loaded.sampled_crossings(prefix, np.array([prefix[0][-1] * 0.9]), (True, 0.0))
    assert denoised.shape == (1, config.samples)
