"""The curve prior: usable curves of every form, bit-for-bit determinism, its events and noise."""

import json
import re

import numpy as np
import pytest

from coreenv.curves import CurveBank, curve_problem
from mara_agents.fm_training.prior import FORMS, SHAPES, CurvePrior, prior_bank

FEATURES = (
    *("noise", "heavy_tail", "ema", "drift", "start_plateau", "plateau", "warmup", "cosine"),
    *("drop", "overfit", "spike"),
)
QUIET = {f"{feature}_prob": 0.0 for feature in FEATURES}  # no noise, no events
LOUD = {f"{feature}_prob": 1.0 for feature in FEATURES}


def assert_usable(curves, length=800):
    for i, (form, losses) in enumerate(curves):
        assert form in FORMS, f"[{i}]"
        assert losses.shape == (length + 1,) and losses.dtype == np.float64, f"[{i}]"
        assert curve_problem(losses) is None, f"[{i}] {form}: {curve_problem(losses)}"


def roughness(losses):
    """Mean size of the second difference of the log loss: noise, not trend."""
    return np.mean(np.abs(np.diff(np.log(losses), n=2)))


def test_every_form_appears_and_every_curve_is_usable():
    curves = CurvePrior().sample(1000, np.random.default_rng(0))
    assert len(curves) == 1000
    assert_usable(curves)
    assert {form for form, _ in curves} == set(FORMS)


@pytest.mark.parametrize("form", list(FORMS))
def test_each_form_alone_gives_falling_usable_curves(form):
    curves = CurvePrior(forms=(form,)).sample(100, np.random.default_rng(1))
    assert_usable(curves)
    assert {name for name, _ in curves} == {form}
    drop = np.array([losses[-1] / losses[0] for _, losses in curves])
    assert np.median(drop) < 0.8  # they fall, not merely wobble below the start


@pytest.mark.parametrize(
    "prior",
    [
        CurvePrior(**LOUD),
        CurvePrior(**LOUD, noise=(0.5, 0.5), asymptote=(0.95, 0.95), time_scale=(1e3, 1e3)),
        CurvePrior(**QUIET, asymptote=(0.99, 0.99), forms=("janoschek",)),
        CurvePrior(length=2),
        CurvePrior(length=5, **LOUD),
    ],
    ids=["all-events", "noisy-and-barely-falling", "barely-falling", "length-2", "length-5"],
)
def test_extreme_priors_still_give_usable_curves(prior):
    assert_usable(prior.sample(300, np.random.default_rng(2)), prior.length)


@pytest.mark.parametrize("form", list(SHAPES))
@pytest.mark.parametrize("end", [0, 1])
@pytest.mark.parametrize("tau", [1.0, 1000.0])
def test_forms_fall_from_one(form, end, tau):
    t = np.arange(2001.0)
    g = FORMS[form](t, {"tau": tau, "shape": SHAPES[form][end]})
    assert g[0] == 1.0
    assert np.all(np.diff(g) <= 0) and np.all(g >= 0) and g[-1] < 1.0  # exp may reach 0


def test_the_mixture_is_two_phases():
    t = np.arange(801.0)
    params = {"forms": ["exp", "pow4"], "tau": [5.0, 20.0], "shape": [1.0, 1.0]}
    g = FORMS["mix"](t, params | {"weight": 0.6, "start": 400.0})
    np.testing.assert_allclose(g[:401], 0.6 * np.exp(-t[:401] / 5.0) + 0.4)
    np.testing.assert_allclose(g[400:], 0.6 * np.exp(-t[400:] / 5.0) + 0.4 / (1 + t[:401] / 20))


@pytest.mark.parametrize("form", ["exp", "pow3", "weibull"])
def test_a_quiet_curve_is_its_law(form):
    prior = CurvePrior(**QUIET, forms=(form,))
    t = np.arange(801.0)
    for curve in prior.draw(20, np.random.default_rng(3)):
        p = curve.params
        g = FORMS[form](t, {"tau": p["tau"], "shape": p["shape"]})
        expected = p["initial"] * (p["asymptote"] + (1 - p["asymptote"]) * g)
        np.testing.assert_allclose(curve.losses, expected, rtol=1e-12)
        assert p["noise"] == 0.0 and p["ema"] == 0.0


def test_same_rng_state_gives_the_same_curves_bit_for_bit():
    prior = CurvePrior(**LOUD | {"ema_prob": 0.5, "heavy_tail_prob": 0.5})
    rngs = np.random.default_rng(7), np.random.default_rng(7)
    first, second = (prior.draw(200, rng) for rng in rngs)
    for i, (a, b) in enumerate(zip(first, second)):
        assert a.form == b.form and a.params == b.params, f"[{i}]"
        assert a.losses.tobytes() == b.losses.tobytes(), f"[{i}]"
    assert rngs[0].bit_generator.state == rngs[1].bit_generator.state
    other = prior.sample(200, np.random.default_rng(8))
    assert not all(np.array_equal(a.losses, b) for a, (_, b) in zip(first, other))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("length", 1),
        ("length", 800.0),
        ("forms", ()),
        ("forms", ("pow3", "pow5")),
        ("noise_prob", 1.5),
        ("spike_prob", -0.1),
        ("initial", (2.0, 1.0)),
        ("initial", (0.0, 1.0)),
        ("asymptote", (0.5, 1.0)),
        ("ema", (0.1, 0.3, 0.5)),
        ("drop", (0.3, 1.2)),
        ("time_scale", (-1.0, 10.0)),
    ],
)
def test_invalid_fields_are_named(field, value):
    with pytest.raises(ValueError, match=rf"CurvePrior\.{field} .*got {re.escape(repr(value))}"):
        CurvePrior(**{field: value})


def test_prior_bank_is_a_valid_bank_of_the_forms():
    bank = prior_bank(180, seed=3)
    assert isinstance(bank, CurveBank) and bank.name == "prior" and len(bank) == 180
    assert bank.losses.shape == (180, 801)
    assert set(bank.families) == {f"prior-{form}" for form in FORMS}
    for family, text in zip(bank.family, bank.config):
        config = json.loads(text)
        assert family == f"prior-{config['form']}"
        assert {"form", "noise", "ema", "initial", "asymptote", "tau", "shape"} <= set(config)
    again = prior_bank(180, seed=3)
    assert np.array_equal(bank.losses, again.losses) and list(bank.config) == list(again.config)


def test_without_events_or_noise_every_curve_is_non_increasing():
    curves = CurvePrior(**QUIET).sample(1000, np.random.default_rng(4))
    for i, (form, losses) in enumerate(curves):
        assert np.all(np.diff(losses) <= 0), f"[{i}] {form}"


def test_an_ema_makes_noisy_curves_smoother():
    # every feature's uniforms are drawn whether it is on or not: the same curves, smoothed
    noisy = CurvePrior(noise_prob=1.0, ema_prob=0.0).draw(300, np.random.default_rng(5))
    smooth = CurvePrior(noise_prob=1.0, ema_prob=1.0).draw(300, np.random.default_rng(5))
    pairs = [(a, b) for a, b in zip(noisy, smooth) if a.params["noise"] == b.params["noise"]]
    assert len(pairs) > 290  # the rest were redrawn in one of the two
    for i, (a, b) in enumerate(pairs):
        assert a.params["ema"] == 0.0 and b.params["ema"] > 0.0
        assert roughness(b.losses) < roughness(a.losses), f"[{i}]"


def test_step_drops_fall_by_their_factor():
    prior = CurvePrior(**QUIET | {"drop_prob": 1.0})
    for i, curve in enumerate(prior.draw(100, np.random.default_rng(6))):
        for at, factor in curve.params["drop"]:
            at = int(at)
            assert curve.losses[at] <= factor * curve.losses[at - 1] * (1 + 1e-12), f"[{i}]"


def test_overfitting_turns_the_curve_up():
    prior = CurvePrior(**QUIET | {"overfit_prob": 1.0}, overfit=(0.3, 1.0))
    for i, curve in enumerate(prior.draw(100, np.random.default_rng(7))):
        ((at, rise),) = curve.params["overfit"]
        low = np.flatnonzero(curve.losses == curve.losses.min())[-1]  # the last, if flat
        assert low >= at and curve.losses[-1] > curve.losses[low], f"[{i}]"


def test_a_start_plateau_holds_the_initial_loss():
    prior = CurvePrior(**QUIET | {"start_plateau_prob": 1.0})
    for i, curve in enumerate(prior.draw(100, np.random.default_rng(8))):
        ((length,),) = curve.params["start_plateau"]
        head = curve.losses[: int(length)]
        assert np.all(head == curve.losses[0]) and curve.losses[-1] < curve.losses[0], f"[{i}]"
