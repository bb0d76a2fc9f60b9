"""Curve sources: banks round-trip, malformed banks are refused, synthetic curves are valid."""

import json

import numpy as np
import pytest

import coreenv
from coreenv import BankError, ConfigError
from coreenv.curves import CurveBank, SyntheticCurves, load_bank, resolve_task_set, save_bank


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


def test_a_csv_task_set_points_to_the_csv_import():
    with pytest.raises(ConfigError, match="bank_from_csv"):
        resolve_task_set("my_runs.csv")


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(BankError, match="no curve bank"):
        load_bank(tmp_path / "absent.npz")
    junk = tmp_path / "junk.npz"
    junk.write_text("not a zip")
    with pytest.raises(BankError, match="not a readable"):
        load_bank(junk)


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
    env.reset()
    with pytest.raises(ValueError, match="'flat'.*never falls below its start"):
        env.step({})


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
