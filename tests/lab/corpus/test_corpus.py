"""The curve corpus: its kinds and families, runs reproducible from their seeds, both curves of
every run, the split, and the recorder that resumes and assembles them."""

import dataclasses
import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sklearn")

from coreenv.curves import load_bank  # noqa: E402
from coreenv_lab.corpus import (  # noqa: E402
    CORPUS_FAMILIES,
    KINDS,
    corpus_curves,
    plan_corpus,
    split_of,
)
from coreenv_lab.corpus.cache import is_cached  # noqa: E402
from coreenv_lab.corpus.store import CURVES, ema  # noqa: E402
from coreenv_lab.corpus.training import SCHEDULES, schedule_factor  # noqa: E402
from helpers import load_script  # noqa: E402


def test_the_corpus_spans_at_least_forty_families_in_at_least_eight_kinds():
    kinds = {family.kind for family in CORPUS_FAMILIES.values()}
    assert len(CORPUS_FAMILIES) >= 40 and kinds == set(KINDS) and len(kinds) >= 8
    for kind in KINDS:
        assert sum(f.kind == kind for f in CORPUS_FAMILIES.values()) >= 2


def test_runs_draw_schedules_optimisers_and_batch_sizes_and_one_in_three_is_a_test_run():
    specs = plan_corpus()
    supervised = [s for s in specs if CORPUS_FAMILIES[s.family].kind != "rl"]
    assert {s.hparams["schedule"] for s in supervised} == set(SCHEDULES)
    assert len({s.hparams["optimizer"] for s in supervised}) == 5
    assert len({s.hparams["batch_size"] for s in supervised}) == 4
    assert [split_of(s) for s in specs[:6]] == ["test", "train", "train"] * 2
    assert (
        plan_corpus(families=["mlp-moons"])[0]
        == specs[[s.family for s in specs].index("mlp-moons")]
    )


@pytest.mark.parametrize("family", sorted(CORPUS_FAMILIES))
def test_every_family_records_a_validation_and_a_training_curve_reproducibly(family):
    spec = plan_corpus(runs_per_family=1, batches=6, families=[family])[0]
    first, again = corpus_curves(spec), corpus_curves(spec)
    for curve in (first.validation, first.train):
        assert curve.shape == (7,) and np.all(np.isfinite(curve)) and np.all(curve > 0)
    np.testing.assert_array_equal(first.validation, again.validation)
    np.testing.assert_array_equal(first.train, again.train)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_schedules_stay_within_the_base_rate_and_decay_ones_end_lower(schedule):
    factors = [schedule_factor(schedule, step, 100) for step in range(100)]
    assert max(factors) <= 1.0 + 1e-12 and min(factors) > -1e-12
    if schedule not in ("constant", "warmup"):  # warm-up alone stays at the base rate after it
        assert factors[-1] < 0.5
    if schedule.startswith("warmup"):
        assert factors[0] < factors[10]


def test_the_smoothed_training_loss_is_an_exponential_moving_average():
    values = np.array([1.0, 0.0, 0.0, 2.0])
    np.testing.assert_allclose(ema(values, 0.5), [1.0, 0.5, 0.25, 1.125])


def test_the_recorder_resumes_and_assembles_each_runs_curves_with_kind_curve_and_split(tmp_path):
    script = load_script("make_corpus")
    argv = ["--families", "mlp-moons", "pg-bandit", "--runs-per-family", "3", "--batches", "30"]
    argv += ["--workers", "1", "--out", str(tmp_path / "c.npz"), "--work", str(tmp_path / "w")]
    script.main(argv)
    bank = load_bank(tmp_path / "c.npz")
    configs = [json.loads(text) for text in bank.config]
    manifest = json.loads((tmp_path / "c.json").read_text())
    assert len(bank) + len(manifest["failed"]) == 2 * 3 * len(CURVES)
    assert {c["kind"] for c in configs} == {"classification", "rl"}
    assert {c["curve"] for c in configs} <= set(CURVES)
    assert all(c["split"] == ("test" if c["index"] % 3 == 0 else "train") for c in configs)
    before = (tmp_path / "w" / "mlp-moons" / "0000-30.npz").stat().st_mtime_ns
    script.main(argv)  # every run cached: nothing retrained, the same bank
    assert (tmp_path / "w" / "mlp-moons" / "0000-30.npz").stat().st_mtime_ns == before
    np.testing.assert_array_equal(load_bank(tmp_path / "c.npz").losses, bank.losses)
    spec = plan_corpus(runs_per_family=1, batches=30, families=["mlp-moons"])[0]
    assert is_cached(tmp_path / "w", spec)
    changed = dataclasses.replace(spec, hparams={**spec.hparams, "learning_rate": 1.0})
    assert not is_cached(tmp_path / "w", changed)  # drawn otherwise since: trained again


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--families", "mlp-cifar", "--out", "x.npz"], "--families: unknown ['mlp-cifar']"),
        (["--runs-per-family", "0"], "argument --runs-per-family: a count must be an int >= 1"),
        (["--families", "mlp-moons", "--kinds", "rl", "--out", "x.npz"], "select no family"),
        (["--quick"], "would overwrite the shipped one"),
    ],
)
def test_bad_recorder_options_exit_2_naming_the_option(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        load_script("make_corpus").parse_args(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err
