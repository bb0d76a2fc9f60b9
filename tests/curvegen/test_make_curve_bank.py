"""The bank recorder: runs reproduce from their seeds (the bundled bank within float tolerance)."""

import json

import numpy as np
import pytest

from coreenv.curves import bundled_bank, load_bank
from coreenv.curves.bundled import BUNDLED_BANK
from curvegen import LOSS_DEFINITIONS
from helpers import CROSS_MACHINE_RTOL, assert_curve_matches_recording, load_script

QUICK_FAMILIES = ["logreg-digits", "mlp-wine", "lstm-digits"]


def recorded_rows(bank):
    """Row of the bundled bank for each (family, run index)."""
    configs = zip(bank.family, bank.config)
    return {(f, json.loads(c)["index"]): i for i, (f, c) in enumerate(configs)}


def quick_argv(tmp_path, families, batches):
    return [
        "--families",
        *families,
        "--runs-per-family",
        "2",
        "--batches",
        str(batches),
        "--workers",
        "1",
        "--out",
        str(tmp_path / "q.npz"),
        "--work",
        str(tmp_path / "w"),
    ]


def test_quick_generator_reproduces_recorded_curves_within_float_tolerance(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("sklearn")
    # the bundled bank was recorded on another machine: same seeds and configs exactly, same
    # losses to CROSS_MACHINE_RTOL (float32 torch training differs in the last bits between CPUs)
    load_script("make_curve_bank").main(quick_argv(tmp_path, QUICK_FAMILIES, 40))
    quick = load_bank(tmp_path / "q.npz")
    assert len(quick) == 2 * len(QUICK_FAMILIES)
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
    pytest.importorskip("torch")
    pytest.importorskip("sklearn")
    make_curve_bank = load_script("make_curve_bank")
    argv = quick_argv(tmp_path, ["logreg-breast_cancer"], 10)
    make_curve_bank.main(argv)
    make_curve_bank.main(argv)
    assert "2 of 2 runs cached" in capsys.readouterr().out
    manifest = json.loads((tmp_path / "q.json").read_text())
    assert manifest["per_family"] == {"logreg-breast_cancer": 2} and manifest["failed"] == []
    assert manifest["loss"] == LOSS_DEFINITIONS


def test_bundled_manifest_states_the_loss_the_code_defines():
    # LOSS_DEFINITIONS is built from the training code's constants: if one changes, the bundled
    # bank no longer holds curves of that loss and must be recorded again
    manifest = json.loads(BUNDLED_BANK.with_suffix(".json").read_text())
    assert manifest["loss"] == LOSS_DEFINITIONS
