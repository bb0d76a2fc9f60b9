"""Runs reproduce from their seeds (the bundled bank within float tolerance); live tasks train."""

import json
import math

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sklearn")

import coreenv  # noqa: E402
import make_curve_bank  # noqa: E402
from coreenv.curves import bundled_bank  # noqa: E402
from helpers import CROSS_MACHINE_RTOL, assert_curve_matches_recording  # noqa: E402
from mara_agents.curvegen import FAMILIES, plan_runs  # noqa: E402
from mara_agents.curvegen.live import LiveCurves, LiveLosses  # noqa: E402
from mara_agents.curvegen.models import build  # noqa: E402
from mara_agents.curvegen.supervised import SupervisedRun, supervised_curve  # noqa: E402
from mara_agents.schedulers import FIFO, Oracle  # noqa: E402

QUICK_FAMILIES = ["logreg-digits", "mlp-wine", "lstm-digits"]


def recorded_rows(bank):
    """Row of the bundled bank for each (family, run index)."""
    configs = zip(bank.family, bank.config)
    return {(f, json.loads(c)["index"]): i for i, (f, c) in enumerate(configs)}


def test_quick_generator_reproduces_recorded_curves_within_float_tolerance(tmp_path):
    # the bundled bank was recorded on another machine: same seeds and configs exactly, same
    # losses to CROSS_MACHINE_RTOL (float32 torch training differs in the last bits between CPUs)
    families = QUICK_FAMILIES
    argv = [
        "--families",
        *families,
        "--runs-per-family",
        "2",
        "--batches",
        "40",
        "--workers",
        "1",
        "--out",
        str(tmp_path / "q.npz"),
        "--work",
        str(tmp_path / "w"),
    ]
    make_curve_bank.main(argv)
    quick = coreenv.curves.load_bank(tmp_path / "q.npz")
    assert len(quick) == 2 * len(families)
    bank = bundled_bank()
    recorded = recorded_rows(bank)
    for i in range(len(quick)):
        config = json.loads(quick.config[i])
        row = recorded[(quick.family[i], config["index"])]
        assert json.loads(bank.config[row])["seed"] == config["seed"]
        # the first 41 losses of a 1000-batch run are those of the same run cut at 40 batches
        assert_curve_matches_recording(
            quick.curve(i).losses, bank.curve(row).losses[:41], err_msg=quick.config[i]
        )


@pytest.mark.parametrize("family", QUICK_FAMILIES)
def test_cross_machine_tolerance_admits_last_bits_and_rejects_other_runs(family):
    bank = bundled_bank()
    rows = recorded_rows(bank)
    recorded = bank.curve(rows[(family, 0)]).losses[:41]
    # admitted: what another CPU's kernels give (a few float32 ulps, here up to 4e-7 relative)
    assert_curve_matches_recording(recorded * (1 + 4e-7), recorded)
    assert_curve_matches_recording(recorded * (1 - 4e-7), recorded)
    ulps = np.random.default_rng(0).integers(-3, 4, size=recorded.shape)
    as32 = recorded.astype(np.float32)
    jittered = as32 + ulps * np.spacing(as32)  # each loss moved by up to 3 float32 ulps
    assert_curve_matches_recording(jittered, recorded)
    # rejected: another run of the family, a 1e-3 change, one changed batch, a shifted or cut curve
    other_run = bank.curve(rows[(family, 1)]).losses[:41]
    one_batch = recorded.copy()
    one_batch[17] *= 1 + 10 * CROSS_MACHINE_RTOL
    for wrong in (
        other_run,
        recorded * (1 + 1e-3),
        one_batch,
        bank.curve(rows[(family, 0)]).losses[1:42],
    ):
        with pytest.raises(AssertionError):
            assert_curve_matches_recording(wrong, recorded)
    with pytest.raises(AssertionError, match="shapes"):
        assert_curve_matches_recording(recorded[:40], recorded)


def test_generator_resumes_without_redoing_runs(tmp_path, capsys):
    argv = [
        "--families",
        "logreg-breast_cancer",
        "--runs-per-family",
        "2",
        "--batches",
        "10",
        "--workers",
        "1",
        "--out",
        str(tmp_path / "q.npz"),
        "--work",
        str(tmp_path / "w"),
    ]
    make_curve_bank.main(argv)
    make_curve_bank.main(argv)
    assert "2 of 2 runs cached" in capsys.readouterr().out
    manifest = json.loads((tmp_path / "q.json").read_text())
    assert manifest["per_family"] == {"logreg-breast_cancer": 2} and manifest["failed"] == []


def test_plans_are_stable_and_hyperparameters_valid():
    specs = plan_runs(batches=5)
    assert specs == plan_runs(batches=5)
    assert len({s.seed for s in specs}) == len(specs)
    for spec in specs:
        family = FAMILIES[spec.family]
        for name, values in family.choices.items():
            assert spec.hparams[name] in values
        assert spec.hparams["learning_rate"] > 0


@pytest.mark.parametrize("kind", ["mlp", "cnn", "lstm", "vit"])
def test_models_map_flat_digits_to_logits(kind):
    import torch

    model = build(kind, 64, 10)
    assert model(torch.zeros(5, 64)).shape == (5, 10)


def test_live_losses_train_on_demand_and_match_the_recorded_rule():
    spec = plan_runs(batches=30, runs_per_family=1, families=["logreg-digits"])[0]
    losses = LiveLosses(SupervisedRun(spec), batches=30)
    assert len(losses) == 31 and len(losses.values) == 1
    assert losses[5] == losses.values[5] and len(losses.values) == 6
    # both trained here, in this process: bit for bit
    np.testing.assert_array_equal(losses[:], supervised_curve(spec))
    with pytest.raises(IndexError):
        losses[31]


def test_live_task_set_trains_real_models():
    env = coreenv.parallel_env(
        task_set="live", arrival_horizon=40, arrival_prob=0.2, deadline_window=(20, 40), seed=0
    )
    observations, infos = env.reset()
    scheduler = FIFO()
    scheduler.reset(env)
    trained = 0
    while env.agents:
        observations, *_, infos = env.step(scheduler.act(observations, infos))
        trained = max(trained, int(env.slot_table().batches.max()))
    metrics = env.metrics()
    assert metrics["arrivals"] > 0 and trained > 0
    assert math.isnan(metrics["feasibility_bound"])
    assert isinstance(env.source, LiveCurves)


def test_oracle_refuses_live_tasks():
    env = coreenv.parallel_env(task_set="live", arrival_prob=1.0, seed=0)
    observations, infos = env.reset()
    env.step({})
    oracle = Oracle()
    oracle.reset(env)
    with pytest.raises(ValueError, match="true demand"):
        oracle.act(observations, infos)


def test_live_runs_stop_at_their_last_batch():
    source = LiveCurves(batches=3)
    env = coreenv.parallel_env(
        task_set=source, arrival_prob=1.0, arrival_horizon=1, deadline_window=(10, 10), seed=0
    )
    env.reset()
    for _ in range(9):
        if not env.agents:
            break
        env.step({"node_0": 0})
    assert env.slot_table().batches.max() <= 3
