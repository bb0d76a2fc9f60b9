"""Curve sources: banks round-trip, malformed banks are refused, synthetic curves are valid;
named task sets are registered or declared by entry points."""

import json
import re
from importlib.metadata import EntryPoint

import numpy as np
import pytest

import coreenv
from coreenv import BankError, ConfigError, CoreEnv, EnvConfig
from coreenv.curves import (
    ENTRY_POINT_GROUP,
    TASK_SETS,
    CurveBank,
    SyntheticCurves,
    concat_banks,
    curve_problem,
    load_bank,
    pad_curves,
    register_task_set,
    resolve_task_set,
    save_bank,
    task_sets,
)
from coreenv.curves.bank import NEVER_FALLS, NOT_A_CURVE, NOT_POSITIVE


def good_arrays(n=3, length=30):
    losses = np.full((n, length), np.nan)
    for i in range(n):
        size = length - 5 * i
        losses[i, :size] = 2.0 * (1.0 + np.arange(size)) ** -0.5
    family = np.array(["mlp", "mlp", "cnn"][:n])
    config = np.array([json.dumps({"lr": 0.1 * (i + 1), "seed": i}) for i in range(n)])
    return {"losses": losses, "family": family, "config": config}


def write(tmp_path, arrays, name="bank.npz"):
    path = tmp_path / name
    np.savez(path, **arrays)
    return path


def test_bank_round_trips(tmp_path):
    bank = CurveBank(**good_arrays(), split=["train", "test", "train"], name="toy")
    path = tmp_path / "toy.npz"
    save_bank(bank, path, dtype=np.float32)
    loaded = load_bank(path)
    assert len(loaded) == 3 and loaded.families == ("mlp", "cnn")
    np.testing.assert_array_equal(loaded.lengths, [30, 25, 20])
    np.testing.assert_allclose(loaded.curve(1).losses, bank.curve(1).losses, rtol=1e-6)
    assert json.loads(loaded.config[2])["seed"] == 2
    assert list(loaded.split) == ["train", "test", "train"]


def test_bank_sample_and_subset():
    bank = CurveBank(**good_arrays())
    rng = np.random.default_rng(0)
    drawn = {bank.sample(rng).curve_id for _ in range(50)}
    assert drawn == {0, 1, 2}
    cnn = bank.subset(bank.family == "cnn")
    assert len(cnn) == 1 and cnn.families == ("cnn",)
    with pytest.raises(BankError, match="empty"):
        bank.subset(bank.family == "vit")


def malformed_cases():
    cases = {}
    for key in ("losses", "family", "config"):
        arrays = good_arrays()
        del arrays[key]
        cases[f"missing {key}"] = (arrays, f"lacks key.*{key}")
    arrays = good_arrays()
    arrays["losses"] = arrays["losses"][0]
    cases["1-D losses"] = (arrays, "2-D")
    arrays = good_arrays()
    arrays["family"] = arrays["family"][:2]
    cases["family too short"] = (arrays, "family must have shape")
    arrays = good_arrays()
    arrays["config"] = np.array(["{}", "{}", "not json"])
    cases["config not JSON"] = (arrays, "not JSON")
    arrays = good_arrays()
    arrays["losses"][1, 3] = np.inf
    cases["infinite loss"] = (arrays, "non-finite or non-positive")
    arrays = good_arrays()
    arrays["losses"][0, 5] = -1.0
    cases["negative loss"] = (arrays, "non-finite or non-positive")
    arrays = good_arrays()
    arrays["losses"][2, 1] = 0.0
    cases["zero loss"] = (arrays, "non-finite or non-positive")
    arrays = good_arrays()
    arrays["losses"][2, 1:] = np.nan
    cases["empty curve"] = (arrays, "empty")
    arrays = good_arrays()
    arrays["losses"][0, 10] = np.nan
    cases["NaN inside"] = (arrays, "NaN before its end")
    arrays = good_arrays()
    arrays["losses"][1, :25] = np.linspace(1.0, 2.0, 25)
    cases["never falls"] = (arrays, "never falls below")
    arrays = good_arrays()
    arrays["losses"] = arrays["losses"][:0]
    arrays["family"] = arrays["family"][:0]
    arrays["config"] = arrays["config"][:0]
    cases["no rows"] = (arrays, "no rows")
    return cases


@pytest.mark.parametrize("case", sorted(malformed_cases()))
def test_malformed_bank_is_refused(tmp_path, case):
    arrays, message = malformed_cases()[case]
    path = write(tmp_path, arrays)
    with pytest.raises(BankError, match=message):
        load_bank(path)


def test_a_bad_curve_is_named_by_its_run_not_only_its_row(tmp_path):
    arrays = good_arrays()
    arrays["losses"][1, 3] = np.inf
    with pytest.raises(BankError, match=r"curve 1 \(family 'mlp', \{.*\"seed\": 1.*\}\) has"):
        load_bank(write(tmp_path, arrays))


def write_logs(tmp_path, name="my_logs.csv"):
    """A CSV of training logs: runs 'a' (family mlp, 12 batches) and 'b' (cnn, 7)."""
    path = tmp_path / name
    lines = ["run,batch,loss,family,lr"]
    for run, family, length in (("a", "mlp", 12), ("b", "cnn", 7)):
        curve = 2.0 * (1 + np.arange(length)) ** -0.4
        lines += [f"{run},{b},{float(loss)!r},{family},0.01" for b, loss in enumerate(curve)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_csv_of_training_logs_is_a_task_set_wherever_a_bank_is(tmp_path, monkeypatch):
    path = write_logs(tmp_path)
    monkeypatch.chdir(tmp_path)
    for task_set in ("my_logs.csv", str(path), path):
        bank = resolve_task_set(task_set)
        assert isinstance(bank, CurveBank) and bank.families == ("mlp", "cnn")
    assert EnvConfig(task_set="my_logs.csv").task_set == "my_logs.csv"
    env = coreenv.parallel_env(task_set="my_logs.csv", deadline_window=(5, 20), seed=0)
    env.reset()
    while env.agents:
        env.step(dict.fromkeys(env.agents, 0))
    assert env.metrics()["arrivals"] > 0


def test_a_missing_csv_is_named(tmp_path):
    with pytest.raises(BankError, match="no CSV of training logs at .*absent.csv"):
        resolve_task_set(str(tmp_path / "absent.csv"))


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(BankError, match="no curve bank"):
        load_bank(tmp_path / "absent.npz")
    np.save(tmp_path / "array.npy", np.arange(3))
    (tmp_path / "array.npy").rename(tmp_path / "array.npz")
    (tmp_path / "empty.npz").write_bytes(b"")
    (tmp_path / "text.npz").write_text("not a zip")
    (tmp_path / "cut.npz").write_bytes(b"PK\x03\x04 cut short")
    for name in ("text.npz", "empty.npz", "array.npz", "cut.npz"):
        with pytest.raises(BankError, match=f"'.*{name}' is not a curve bank") as info:
            resolve_task_set(str(tmp_path / name))
        assert "save_bank" in str(info.value) and "pickle" not in str(info.value)


def test_synthetic_curves_are_valid_and_reproducible():
    source = SyntheticCurves(length=200)
    first = [source.sample(np.random.default_rng(7)).losses for _ in range(2)]
    np.testing.assert_array_equal(first[0], first[1])
    rng = np.random.default_rng(0)
    for _ in range(200):
        losses = source.sample(rng).losses
        assert losses.shape == (201,)
        assert np.all(np.isfinite(losses)) and np.all(losses > 0)
        assert losses[1:].min() < losses[0]


def test_task_set_accepts_name_path_bank_and_source(tmp_path):
    bank = CurveBank(**good_arrays())
    path = tmp_path / "bank.npz"
    save_bank(bank, path)
    assert isinstance(resolve_task_set("synthetic"), SyntheticCurves)
    assert len(resolve_task_set(str(path))) == 3
    assert len(resolve_task_set(path)) == 3
    assert resolve_task_set(bank) is bank
    env = coreenv.parallel_env(task_set=path, deadline_window=(20, 40), seed=0)
    env.reset()
    while env.agents:
        env.step(dict.fromkeys(env.agents, 0))
    assert env.metrics()["arrivals"] > 0


def test_bad_custom_source_is_reported():
    class Flat(coreenv.curves.CurveSource):
        name = "flat"

        def sample(self, rng):
            return coreenv.curves.Curve(np.ones(10), "flat")

    env = coreenv.parallel_env(task_set=Flat(), arrival_prob=1.0, seed=0)
    with pytest.raises(ValueError, match="'flat' gave a curve that never falls below its initial"):
        env.reset()  # an episode's tasks are drawn at reset


def test_bank_from_a_csv_of_training_logs_round_trips(tmp_path):
    from coreenv.curves import bank_from_csv, bank_to_csv

    path = tmp_path / "logs.csv"
    lines = ["run,batch,loss,family,lr"]
    rng = np.random.default_rng(0)
    curves = {"a": 2.0 * (1 + np.arange(12)) ** -0.4, "b": 1.5 * np.exp(-np.arange(7) / 3) + 0.1}
    for run, curve in curves.items():
        for batch in rng.permutation(len(curve)):  # loggers need not write rows in order
            lines.append(
                f"{run},{batch},{float(curve[batch])!r},{'mlp' if run == 'a' else 'cnn'},0.01"
            )
    path.write_text("\n".join(lines) + "\n")
    bank = bank_from_csv(path)
    assert bank.families == ("mlp", "cnn") and list(bank.lengths) == [12, 7]
    np.testing.assert_array_equal(bank.curve(0).losses, curves["a"])
    assert json.loads(bank.config[1]) == {"run": "b", "lr": "0.01"}
    again = tmp_path / "again.csv"
    bank_to_csv(bank, again)
    back = bank_from_csv(again)
    np.testing.assert_array_equal(back.losses, bank.losses)
    assert list(back.family) == list(bank.family) and list(back.config) == list(bank.config)
    env = coreenv.parallel_env(task_set=back, deadline_window=(5, 20), arrival_prob=0.2, seed=0)
    env.reset()
    while env.agents:
        env.step(dict.fromkeys(env.agents, 0))
    assert env.metrics()["arrivals"] > 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("run,loss\na,1.0\n", "lacks column"),
        ("run,batch,loss\na,0,1.0\na,2,0.5\n", "every batch from 0"),
        ("run,batch,loss\na,0,1.0\na,0,0.5\n", "twice"),
        ("run,batch,loss\na,0,x\n", "numbers"),
        ("run,batch,loss\na,0,1.0\na,1,-0.5\n", "non-positive"),
    ],
)
def test_bad_csv_logs_are_refused(tmp_path, text, message):
    from coreenv.curves import bank_from_csv

    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(BankError, match=message):
        bank_from_csv(path)


@pytest.mark.parametrize(
    ("losses", "rule", "message"),
    [
        ([2.0], NOT_A_CURVE, r"shape \(1,\)"),
        ([[2.0, 1.0]], NOT_A_CURVE, r"shape \(1, 2\)"),
        ([2.0, np.nan, 1.0], NOT_POSITIVE, "nan at batch 1"),
        ([2.0, 1.0, -1.0], NOT_POSITIVE, "-1.0 at batch 2"),
        ([2.0, 2.0, 3.0], NEVER_FALLS, "initial loss 2.0, so no reachable target"),
    ],
)
def test_curve_problem_names_the_rule_and_the_offending_value(losses, rule, message):
    problem = curve_problem(np.array(losses))
    assert problem.rule == rule and problem.message.startswith(("has", rule))
    assert re.search(message, problem.message)
    assert curve_problem(np.array([2.0, 1.0])) is None


@pytest.mark.parametrize(
    ("losses", "message"),
    [
        (
            [2.0, np.inf, 1.0],
            "gave a curve that has a non-finite or non-positive loss inf at batch 1",
        ),
        ([2.0], r"gave a curve that has shape \(1,\); needs 1-D"),
    ],
)
def test_an_unvalidated_source_is_checked_by_the_bank_rules(losses, message):
    class Bad(coreenv.curves.CurveSource):
        name = "bad"

        def sample(self, rng):
            return coreenv.curves.Curve(np.array(losses), "bad")

    env = coreenv.parallel_env(task_set=Bad(), arrival_prob=1.0, seed=0)
    with pytest.raises(ValueError, match=f"'bad' {message}"):
        env.reset()  # an episode's tasks are drawn at reset


def test_pad_curves_pads_at_the_end_with_nan():
    losses = pad_curves([np.array([3.0, 2.0, 1.0]), [2.0, 1.5]])
    assert losses.dtype == np.float64 and losses.shape == (2, 3)
    np.testing.assert_array_equal(losses, [[3.0, 2.0, 1.0], [2.0, 1.5, np.nan]])
    assert pad_curves([]).shape == (0, 0)
    with pytest.raises(BankError, match=r"curve 1 must be 1-D.*\(1, 2\)"):
        pad_curves([[2.0, 1.0], [[2.0, 1.0]]])


def test_concat_banks_keeps_every_row_in_order_and_splits_only_if_all_have_them():
    a = CurveBank(**good_arrays(n=2, length=30), split=["x", "y"], name="a")
    b = CurveBank(**good_arrays(n=1, length=40), split=["z"], name="b")
    joined = concat_banks([a, b], "ab")
    assert (joined.name, len(joined), joined.losses.shape) == ("ab", 3, (3, 40))
    np.testing.assert_array_equal(joined.curve(1).losses, a.curve(1).losses)
    np.testing.assert_array_equal(joined.curve(2).losses, b.curve(0).losses)
    assert joined.split.tolist() == ["x", "y", "z"]
    assert concat_banks([a, CurveBank(**good_arrays(n=1))], "c").split is None
    with pytest.raises(BankError, match="bank 'none': no banks to join"):
        concat_banks([], "none")


def test_a_registered_task_set_is_used_by_env_config_and_core_env(registry):
    bank = CurveBank(**good_arrays(), name="mine")
    register_task_set("mine", lambda: bank)
    assert "mine" in registry and "mine" in sorted(TASK_SETS)
    assert resolve_task_set("mine") is bank
    env = CoreEnv(EnvConfig(task_set="mine", deadline_window=(20, 40), arrival_prob=0.2))
    assert env.source is bank
    env.reset(seed=0)
    while env.agents:
        env.step(dict.fromkeys(env.agents, 0))
    assert env.metrics()["arrivals"] > 0
    assert coreenv.parallel_env(task_set="mine").source is bank


def test_the_built_in_names_are_registered():
    assert {"synthetic", "id", "id_train", "rl_ood", "vit_ood"} <= set(TASK_SETS)
    assert isinstance(resolve_task_set("synthetic"), SyntheticCurves)


def test_a_taken_name_is_refused_unless_replaced(registry):
    with pytest.raises(
        ConfigError, match=r"'synthetic' is already registered.*replace=True.*id_train"
    ):
        register_task_set("synthetic", SyntheticCurves)
    register_task_set("mine", SyntheticCurves)
    with pytest.raises(ConfigError, match="'mine' is already registered"):
        register_task_set("mine", SyntheticCurves)
    short = SyntheticCurves(length=40)
    register_task_set("mine", lambda: short, replace=True)
    assert resolve_task_set("mine") is short


@pytest.mark.parametrize(
    ("name", "factory", "message"),
    [
        (3, SyntheticCurves, "name must be a non-empty str, got int: 3"),
        ("", SyntheticCurves, "name must be a non-empty str"),
        ("mine.npz", SyntheticCurves, "reads as the path of a file"),
        ("mine.csv", SyntheticCurves, "reads as the path of a file"),
        ("runs/mine", SyntheticCurves, "reads as the path of a file"),
        (
            "mine",
            SyntheticCurves(),
            "'mine': the factory given to register_task_set must be callable",
        ),
        ("mine", None, "must be callable with no arguments.*got NoneType"),
    ],
)
def test_bad_registrations_are_refused(registry, name, factory, message):
    with pytest.raises(ConfigError, match=message):
        register_task_set(name, factory)
    assert "mine" not in registry


def test_a_factory_must_return_a_curve_source(registry):
    register_task_set("mine", lambda: "id_train")
    with pytest.raises(
        ConfigError, match="'mine': its factory .* returned a str, not a CurveSource"
    ):
        CoreEnv(task_set="mine")


def fake_entry_points(monkeypatch, *points):
    """Installed packages that declare ``points`` (and nothing else) in the task-set group."""

    def select(group, name=None):
        return [p for p in points if p.group == group and name in (None, p.name)]

    monkeypatch.setattr(task_sets, "entry_points", select)


def declared(name, value):
    return EntryPoint(name=name, value=value, group=ENTRY_POINT_GROUP)


def test_a_declared_task_set_is_listed_and_loaded_only_when_asked_for(registry, monkeypatch):
    fake_entry_points(monkeypatch, declared("plugin", "coreenv.curves.synthetic:SyntheticCurves"))
    assert "plugin" in TASK_SETS and "plugin" in sorted(TASK_SETS)
    assert "plugin" not in registry._factories  # listed from metadata, not imported
    with pytest.raises(
        ConfigError,
        match="'plugin' is already declared by the entry point "
        "'coreenv.curves.synthetic:SyntheticCurves'.*replace=True",
    ):
        register_task_set("plugin", SyntheticCurves)
    env = CoreEnv(task_set="plugin")
    assert isinstance(env.source, SyntheticCurves)
    assert registry._factories["plugin"] is SyntheticCurves  # imported once, then registered


def test_an_unknown_name_lists_the_declared_ones_too(monkeypatch):
    fake_entry_points(monkeypatch, declared("plugin", "coreenv.curves.synthetic:SyntheticCurves"))
    with pytest.raises(ConfigError, match=r"'nope' is not a known task set \[.*'plugin'.*\]"):
        resolve_task_set("nope")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("no_such_module_for_coreenv:make", "'no_such_module_for_coreenv:make'.*failed to import"),
        ("coreenv.curves.synthetic:NoSuchFactory", "failed to import"),
        (
            "coreenv.curves.task_sets:ENTRY_POINT_GROUP",
            "declared by the entry point.*must be callable",
        ),
    ],
)
def test_a_broken_declaration_is_reported_with_its_entry_point(
    registry, monkeypatch, value, message
):
    fake_entry_points(monkeypatch, declared("plugin", value))
    with pytest.raises(ConfigError, match=message):
        CoreEnv(task_set="plugin")


def test_two_packages_declaring_one_name_are_refused(registry, monkeypatch):
    fake_entry_points(
        monkeypatch,
        declared("plugin", "coreenv.curves.synthetic:SyntheticCurves"),
        declared("plugin", "coreenv.curves.bank:CurveBank"),
    )
    with pytest.raises(ConfigError, match="'plugin' is declared by more than one"):
        CoreEnv(task_set="plugin")
