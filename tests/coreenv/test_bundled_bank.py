"""The bundled bank of recorded curves and the named task sets cut from it (design §3)."""

import json

import numpy as np
import pytest

import coreenv
from coreenv.curves import bundled_bank, named_task_set
from coreenv.curves.bundled import BUNDLED_BANK, TEST_EVERY

ID_FAMILIES = [
    "mlp-digits",
    "cnn-digits",
    "lstm-digits",
    "logreg-digits",
    "mlp-wine",
    "mlp-breast_cancer",
    "logreg-breast_cancer",
    "mlp-generated",
]


def test_bundled_bank_is_small_and_valid():
    assert BUNDLED_BANK.stat().st_size <= 25e6
    bank = bundled_bank()
    for i in range(len(bank)):
        losses = bank.curve(i).losses
        assert np.all(np.isfinite(losses)) and np.all(losses > 0)
        assert losses[1:].min() < losses[0]


def test_every_family_is_present_with_its_minimum_count():
    bank = bundled_bank()
    counts = {f: int(np.sum(bank.family == f)) for f in bank.families}
    for family in ID_FAMILIES:
        assert counts[family] >= 60, family
    assert counts["vit-digits"] >= 60
    rl = [f for f in counts if f.startswith(("ppo-", "a2c-", "dqn-"))]
    assert len(rl) >= 3 and sum(counts[f] for f in rl) >= 60


def test_id_split_is_by_run():
    bank = bundled_bank()
    for i in range(len(bank)):
        config = json.loads(bank.config[i])
        if bank.family[i] in ID_FAMILIES:
            expected = "id_test" if config["index"] % TEST_EVERY == 0 else "id_train"
            assert bank.split[i] == expected
        assert {"seed", "batches", "learning_rate"} <= set(config)
    train, test = named_task_set("id_train"), named_task_set("id")
    assert set(train.family) == set(test.family) == set(ID_FAMILIES)
    train_runs = {c for c in train.config}
    assert not train_runs & set(test.config)  # no run in both


@pytest.mark.parametrize("name", ["id", "id_train", "rl_ood", "vit_ood"])
def test_env_runs_on_each_named_task_set(name):
    env = coreenv.parallel_env(task_set=name, arrival_horizon=300, seed=0)
    observations, _ = env.reset()
    while env.agents:
        env.step({a: int(np.argmax(observations[a]["action_mask"])) for a in env.agents})
    metrics = env.metrics()
    assert metrics["arrivals"] > 0 and 0 <= metrics["completion_rate"] <= 1
    assert set(env.source.family) <= set(named_task_set(name).family)
