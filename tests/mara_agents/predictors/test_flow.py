"""The flow-matching predictor: learns a toy conditional law, decodes exactly, reproducible."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mara_agents.predictors.flow import FMPredictor  # noqa: E402
from mara_agents.predictors.flow_decoding import crossings, decode  # noqa: E402
from mara_agents.predictors.flow_model import (  # noqa: E402
    WLS_OFFSETS,
    FMConfig,
    VelocityNet,
    context_features,
    context_matrix,
    context_rows,
    flow_matching_loss,
    future_offsets,
    integrate,
    sample_futures,
    wls_context,
)
from mara_agents.predictors.wls import WLSPredictor  # noqa: E402

TOY = FMConfig(
    horizon=20,
    recent=2,
    spread=2,
    hidden=64,
    context_dim=16,
    layers=2,
    samples=256,
    ode_steps=20,
    solver="euler",
)


def toy_batch(generator, size=256):
    """z_1 = w(c) + 0.05 noise, with w linear in the context: a Gaussian conditional law."""
    grid = len(future_offsets(TOY.horizon))
    context = torch.rand((size, TOY.context_size), generator=generator) * 2 - 1
    mean = context[:, :1] * torch.linspace(-1, 1, grid)[None, :] + 0.5 * context[:, 1:2]
    return context, mean + 0.05 * torch.randn((size, grid), generator=generator), mean


def test_flow_matching_loss_decreases_and_the_sampler_recovers_the_mean():
    torch.manual_seed(0)
    net = VelocityNet(TOY)
    optimizer = torch.optim.Adam(net.parameters(), lr=3e-3)
    generator = torch.Generator().manual_seed(0)
    losses = []
    for _ in range(1500):
        context, future, _ = toy_batch(generator)
        loss = flow_matching_loss(net, future, context, generator)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert np.mean(losses[-100:]) < 0.5 * np.mean(losses[:100])
    context, _, mean = toy_batch(torch.Generator().manual_seed(1), size=4)
    noise = torch.randn((4, TOY.samples, net.grid), generator=torch.Generator().manual_seed(2))
    samples = sample_futures(net, context, TOY.samples, TOY.ode_steps, "euler", noise)
    assert torch.allclose(samples.mean(dim=1), mean, atol=0.1)
    assert float(samples.std(dim=1).mean()) < 0.3  # near the 0.05 noise, far from N(0, 1)


def test_decoding_is_exact_on_hand_built_trajectories():
    offsets = np.array([1, 2, 4, 8])
    futures = np.array(
        [
            [
                [-0.1, -0.2, -0.5, -0.9],  # crosses -0.5 exactly at offset 4
                [-0.1, -0.2, -0.4, -0.6],  # crosses between 4 and 8: 4 + (0.1 / 0.2) * 4 = 6
                [-1.0, -1.1, -1.2, -1.3],  # already below at offset 1
                [-0.1, -0.1, -0.1, -0.1],  # never: beyond the horizon
            ]
        ]
    )
    remaining, p_success = decode(futures, np.array([-0.5]), offsets, np.array([5]))
    per_sample = [4, 6, 1, math.inf]
    assert remaining[0] == np.median(per_sample) == 5.0
    assert p_success[0] == 0.5  # offsets 4 and 1 are within a budget of 5


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_decoding_matches_the_rule_written_out_per_sample(dtype):
    rng = np.random.default_rng(0)
    offsets = np.array([1, 2, 3, 5, 9, 17])
    futures = np.cumsum(rng.normal(-0.1, 0.2, size=(5, 9, 6)), axis=2).astype(dtype)
    futures[0, 0, 2:4] = futures[0, 0, 1]  # a flat stretch: no fall to divide by
    log_target = rng.uniform(-0.8, 0.1, size=5)
    budgets = np.array([1, 3, 5, 9, 20])

    def rule(path, target):  # the first crossing, interpolated from the grid point before it
        below = np.flatnonzero(path <= target)
        if below.size == 0:
            return math.inf
        i = below[0]
        before_t, before_z = (offsets[i - 1], path[i - 1]) if i else (0, dtype(0.0))
        fall = max(dtype(before_z - path[i]), dtype(1e-12))  # in the futures' dtype
        share = min(max((before_z - target) / fall, 0.0), 1.0)
        return max(math.ceil(before_t + share * (offsets[i] - before_t) - 1e-9), 1.0)

    expected = np.array(
        [[rule(path, t) for path in paths] for paths, t in zip(futures, log_target)]
    )
    np.testing.assert_array_equal(crossings(futures, log_target, offsets), expected)
    remaining, p_success = decode(futures, log_target, offsets, budgets)
    np.testing.assert_array_equal(remaining, np.median(expected, axis=1))
    np.testing.assert_array_equal(p_success, np.mean(expected <= budgets[:, None], axis=1))


def test_quantiles_are_sampled_crossings_and_beyond_the_horizon_is_inf():
    predictor = FMPredictor(
        VelocityNet(
            FMConfig(
                horizon=20, recent=2, spread=2, hidden=8, context_dim=4, time_dim=4, samples=16
            )
        )
    )
    prefixes = [2.0 * (1.0 + np.arange(n + 1.0)) ** -0.5 for n in (5, 9, 14)]
    targets = np.array([p[-1] * f for p, f in zip(prefixes, (0.99, 0.9, 0.5))])
    levels = np.array([0.1, 0.25, 0.5, 0.75, 0.9])
    quantiles = predictor.estimate_quantiles(prefixes, targets, levels)
    assert quantiles.shape == (3, 5)
    assert np.all(np.diff(quantiles, axis=1) >= 0) and np.all(quantiles >= 1)
    log_targets = np.log(targets / np.array([p[-1] for p in prefixes]))
    samples = crossings(predictor.futures(prefixes), log_targets, predictor.offsets)
    samples[samples > 20] = np.inf
    for row in range(3):  # each quantile is one of the task's sampled crossings
        assert set(quantiles[row]) <= set(samples[row])
        share_at_or_below = [np.mean(samples[row] <= q) for q in quantiles[row]]
        assert np.all(np.array(share_at_or_below) >= levels)


def test_the_wls_context_is_laras_fit_and_extends_the_plain_context():
    losses = 2.0 * (1.0 + np.arange(301.0)) ** -0.4 * (1 + 0.02 * np.sin(np.arange(301.0)))
    ends = np.array([10, 57, 300])
    features = wls_context(np.log(losses), ends)
    for n, row in zip(ends, features):
        fit = WLSPredictor().fit(losses[: n + 1])
        assert row[0] == pytest.approx(fit.slope, rel=1e-9)
        ahead = [
            fit.slope * math.log(n + t) + fit.intercept - math.log(losses[n]) for t in WLS_OFFSETS
        ]
        np.testing.assert_allclose(row[2:], ahead, rtol=1e-6, atol=1e-9)  # summation order
    plain, with_fit = FMConfig(), FMConfig(wls_context=True)
    assert with_fit.context_size == plain.context_size + 2 + len(WLS_OFFSETS)
    both = context_features(losses[:58], with_fit)
    np.testing.assert_array_equal(both[: plain.context_size], context_features(losses[:58], plain))


def test_context_features_are_shift_and_scale_invariant():
    prefix = 2.0 * (1.0 + np.arange(40.0)) ** -0.4
    a = context_features(prefix, FMConfig())
    b = context_features(7.5 * prefix, FMConfig())
    np.testing.assert_allclose(a, b, atol=1e-6)
    assert a.shape == (FMConfig().context_size,) and a[-1] == pytest.approx(
        math.log1p(39) / math.log1p(500)
    )


def test_same_seed_same_samples_and_the_cache_is_transparent():
    torch.manual_seed(0)
    net = VelocityNet(FMConfig())
    prefix = 2.0 * (1.0 + np.arange(30.0)) ** -0.4
    first = FMPredictor(net).futures([prefix])
    np.testing.assert_array_equal(first, FMPredictor(net).futures([prefix]))
    other_seed = FMPredictor(net, FMConfig(seed=1)).futures([prefix])
    assert not np.array_equal(first, other_seed)


def test_a_prefix_gets_the_same_futures_alone_or_in_any_batch():
    """What lets one cache serve episodes played in lockstep: no dependence on the batch."""
    torch.manual_seed(0)
    net = VelocityNet(FMConfig())
    rng = np.random.default_rng(0)
    prefixes = [2.0 * (1.0 + np.arange(n)) ** -rng.uniform(0.2, 0.8) for n in range(11, 60)]
    together = FMPredictor(net).futures(prefixes)
    for size in (1, 2, 3, 5, 8, 13):
        predictor = FMPredictor(net)
        chunks = [predictor.futures(prefixes[i : i + size]) for i in range(0, len(prefixes), size)]
        np.testing.assert_array_equal(np.concatenate(chunks), together)


@pytest.mark.parametrize("batch", [1, 2, 3, 5, 31, 40])
def test_each_prefix_is_encoded_once_with_the_bits_of_encoding_every_sample_row(batch):
    torch.manual_seed(0)
    config = FMConfig(ode_steps=2)
    net = VelocityNet(config).eval()
    context = torch.randn(batch, config.context_size)
    noise = torch.randn(batch, config.samples, net.grid)
    with torch.no_grad():  # the rule written out: the encoder reads all B·S sample rows
        every_row = net.encode(context.repeat_interleave(config.samples, dim=0))
        flat = noise.reshape(batch * config.samples, -1)
        expected = integrate(net, flat, every_row, 2, "heun").reshape(noise.shape)
    sampled = sample_futures(net, context, config.samples, 2, "heun", noise)
    torch.testing.assert_close(sampled, expected, rtol=0, atol=0)


@pytest.mark.parametrize(
    "config", [FMConfig(), FMConfig(scaled_context=True, wls_context=True)], ids=["plain", "all"]
)
def test_context_rows_are_each_prefixs_context_matrix(config):
    rng = np.random.default_rng(1)
    prefixes = [2.0 * (1.0 + np.arange(n)) ** -rng.uniform(0.2, 0.8) for n in (2, 5, 17, 40, 301)]
    rows = context_rows(prefixes, config)
    for prefix, row in zip(prefixes, rows):
        log_losses = np.log(prefix)
        expected = context_matrix(log_losses, np.array([len(prefix) - 1]), config)[0]
        np.testing.assert_array_equal(row, expected)
    ends = np.array([len(prefix) - 1 for prefix in prefixes[-1:]] + [10, 100])
    one_curve = context_matrix(np.log(prefixes[-1]), ends, config)  # as training builds them
    alone = context_rows([prefixes[-1][: n + 1] for n in ends], config)
    np.testing.assert_array_equal(one_curve, alone)


def test_pretrained_ignores_the_checkpoints_cache_size():
    assert FMPredictor.pretrained().config.cache_size == FMConfig().cache_size


def test_bad_config_is_refused():
    with pytest.raises(ValueError, match="solver"):
        FMConfig(solver="rk45")
    with pytest.raises(ValueError, match="samples"):
        FMConfig(samples=0)
    with pytest.raises(ValueError, match="FMConfig.time_dim must be even and >= 2, got 7"):
        FMConfig(time_dim=7)


def test_save_writes_what_pretrained_reads(tmp_path):
    torch.manual_seed(0)
    predictor = FMPredictor(VelocityNet(TOY))
    path = tmp_path / "deep" / "fm.pt"
    predictor.save(path)
    loaded = FMPredictor.pretrained(path, samples=8)
    assert loaded.net.config == TOY and loaded.config.samples == 8
    for a, b in zip(predictor.net.state_dict().values(), loaded.net.state_dict().values()):
        assert torch.equal(a, b)


def test_pretrained_loads_offline_and_is_finite_for_every_prefix_length():
    from coreenv.curves import named_task_set

    predictor = FMPredictor.pretrained()
    curve = named_task_set("id").curve(0).losses
    prefixes = [curve[: n + 1] for n in range(10, len(curve) - 1, 37)]
    remaining, p_success = predictor.estimate_batch(
        prefixes, np.full(len(prefixes), curve.min()), np.full(len(prefixes), 300)
    )
    assert not np.isnan(remaining).any() and np.all(remaining >= 1)
    assert np.all((p_success >= 0) & (p_success <= 1))


class LinearFutures(FMPredictor):
    """Every sampled future falls by 0.01 nats per batch: a predictor with a known forecast."""

    def futures(self, prefixes):
        z = -0.01 * self.offsets.astype(float)
        return np.broadcast_to(z, (len(prefixes), self.config.samples, len(z))).copy()


def linear_predictor(**calibration):
    from mara_agents.predictors.calibration import Calibration

    config = FMConfig(hidden=8, context_dim=4, time_dim=4)
    knots = np.array([0.0, 1.0])
    return LinearFutures(VelocityNet(config), calibration=Calibration(knots, knots, **calibration))


def test_the_revealed_progress_check_measures_how_much_slower_the_curve_fell_than_forecast():
    predictor = linear_predictor()
    half_as_fast = np.exp(-0.005 * np.arange(120.0))  # forecast: 0.01 nats per batch
    as_fast = np.exp(-0.01 * np.arange(120.0))
    short = np.exp(-0.005 * np.arange(30.0))  # too short to look 32 batches back
    ratios = predictor.progress_ratios([half_as_fast, as_fast, short])
    np.testing.assert_allclose(ratios, [0.5, 1.0, 1.0])
    rising = np.exp(0.01 * np.arange(120.0))
    assert predictor.progress_ratios([rising])[0] == 0.1  # clipped: never a negative speed


def test_with_the_check_on_a_slow_curve_the_sampled_crossings_come_later():
    slow = np.exp(-0.005 * np.arange(120.0))
    target = np.array([slow[-1] * math.exp(-0.1)])
    raw = linear_predictor().sampled_crossings([slow], target)
    checked = linear_predictor(backtest=1.0).sampled_crossings([slow], target)
    np.testing.assert_array_equal(raw, 10.0)  # 0.1 nats at the forecast 0.01 per batch
    np.testing.assert_array_equal(checked, 20.0)  # at the revealed 0.005


def test_symlog_magnifies_small_falls_and_keeps_their_sign():
    from mara_agents.predictors.flow_model import symlog

    np.testing.assert_allclose(symlog(np.array([1.0, -1.0, 0.0])), [1.0, -1.0, 0.0])
    assert symlog(np.array([1e-4]))[0] == pytest.approx(0.0138, abs=2e-4)  # linear: 1e-4


@pytest.mark.parametrize("sigma", [0.0, 0.01, 0.1])
def test_the_noise_level_recovers_gaussian_noise_around_a_steady_fall(sigma):
    from mara_agents.predictors.flow_model import noise_level

    rng = np.random.default_rng(0)
    log_losses = -0.01 * np.arange(4000.0) + sigma * rng.standard_normal(4000)
    ends = np.arange(100, 4000, 17)
    assert np.median(noise_level(log_losses, ends)) == pytest.approx(sigma, rel=0.25, abs=1e-12)


def test_scaled_context_adds_the_symlog_columns_and_the_noise_level_before_the_wls_fit():
    from mara_agents.predictors.flow_model import WLS_WIDTH, noise_level, symlog

    config = FMConfig(recent=4, spread=4, scaled_context=True, wls_context=True)
    log_losses = np.log(2.0 * (1.0 + np.arange(60.0)) ** -0.5)
    features = context_features(np.exp(log_losses), config)
    shape = 8
    assert config.context_size == len(features) == 2 * (shape + 1) + WLS_WIDTH
    np.testing.assert_allclose(features[shape + 1 : 2 * shape + 1], symlog(features[:shape]), 1e-6)
    noise = noise_level(log_losses, np.array([59]))
    np.testing.assert_allclose(features[2 * shape + 1], symlog(noise), atol=1e-6)
    np.testing.assert_allclose(
        features[-WLS_WIDTH:], wls_context(log_losses, np.array([59]))[0], 1e-5
    )


def test_a_pretrained_network_refuses_overrides_that_change_what_it_reads_or_writes(tmp_path):
    FMPredictor(VelocityNet(FMConfig(hidden=8, context_dim=4, time_dim=4))).save(tmp_path / "f.pt")
    assert FMPredictor.pretrained(tmp_path / "f.pt", samples=4, ode_steps=2).config.samples == 4
    with pytest.raises(ValueError, match=r"\['horizon'\] shape the trained network"):
        FMPredictor.pretrained(tmp_path / "f.pt", horizon=1000)


@pytest.mark.parametrize("lag", [0, 7])
def test_a_revealed_progress_lag_shorter_than_its_window_is_refused(lag):
    with pytest.raises(ValueError, match="FMConfig.backtest_lag must be >= 8"):
        FMConfig(backtest_lag=lag)


def test_a_revealed_progress_lag_beyond_the_horizon_is_refused_when_the_check_runs():
    predictor = FMPredictor(VelocityNet(FMConfig(horizon=20, hidden=8, context_dim=4, time_dim=4)))
    with pytest.raises(ValueError, match="beyond the horizon 20"):
        predictor.progress_ratios([np.linspace(2.0, 1.0, 60)])


def test_a_raw_read_is_the_same_before_and_after_denoised_and_checked_reads():
    from mara_agents.predictors.basis import fit_basis

    net = VelocityNet(FMConfig(hidden=8, context_dim=4, time_dim=4))
    basis = fit_basis(np.random.default_rng(0).normal(size=(200, net.grid)), components=4)
    predictor = FMPredictor(net, basis=basis)
    prefixes = [2.0 * (1.0 + np.arange(n + 1.0)) ** -0.4 for n in (40, 60)]
    targets = np.array([p[-1] * 0.9 for p in prefixes])
    before = predictor.sampled_crossings(prefixes, targets, (False, 0.0)).copy()
    predictor.sampled_crossings(prefixes, targets, (True, 1.0))
    np.testing.assert_array_equal(
        predictor.sampled_crossings(prefixes, targets, (False, 0.0)), before
    )


def test_task_features_say_how_deep_the_target_how_noisy_the_prefix_how_long_it_is():
    from mara_agents.predictors.flow_model import task_features

    smooth = np.exp(-0.01 * np.arange(101.0))  # n = 100, lowest loss e^-1, no noise
    features = task_features([smooth, smooth], np.array([np.exp(-1.5), np.exp(-1.0)]))
    np.testing.assert_allclose(features[:, 0], np.log([0.5 + 1e-3, 1e-3]))  # 0.5 nats below; none
    np.testing.assert_allclose(features[:, 1], np.log(1e-4), atol=1e-9)  # noise-free
    np.testing.assert_allclose(features[:, 2], np.log1p(100.0))
