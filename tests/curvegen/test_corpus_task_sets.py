"""The corpus as task sets: corpus_train and corpus_test, every kind of training, no raw losses."""

import json

import numpy as np

from coreenv import BatchedCore, CoreEnv
from coreenv.curves import TASK_SETS, load_bank, resolve_task_set
from curvegen import CORPUS, CORPUS_TASK_CURVES


def rows_of(bank):
    return [json.loads(config) for config in bank.config]


def test_each_split_is_a_named_task_set_of_validation_and_smoothed_curves_of_every_kind():
    assert {"corpus_train", "corpus_test"} <= set(TASK_SETS)
    corpus = rows_of(load_bank(CORPUS))
    for split in ("train", "test"):
        bank = resolve_task_set(f"corpus_{split}")
        rows = rows_of(bank)
        assert bank.name == f"corpus_{split}"
        assert {row["split"] for row in rows} == {split}
        assert {row["curve"] for row in rows} == set(CORPUS_TASK_CURVES)  # no raw train losses
        expected = [r for r in corpus if r["split"] == split and r["curve"] in CORPUS_TASK_CURVES]
        assert len(rows) == len(expected)
        assert {row["kind"] for row in rows} == {row["kind"] for row in corpus}


def test_an_episode_on_the_corpus_plays_the_same_in_both_engines():
    env = CoreEnv(task_set="corpus_test", arrival_prob=0.04, arrival_horizon=200)
    core = BatchedCore(env.config, 1)
    observations, _ = env.reset(seed=3)
    view = core.reset([3])
    rng = np.random.default_rng(0)
    while env.agents:
        actions = rng.integers(0, env.config.num_slots + 1, (1, env.config.num_nodes))
        observations, rewards, *_ = env.step(dict(zip(env.agents, actions[0].tolist())))
        view = core.step(actions)
        assert view.rewards[0] == rewards["node_0"]
    assert view.finished[0][2] == env.metrics()


def test_mixed_train_holds_the_id_and_the_corpus_training_runs_and_nothing_else():
    mixed = resolve_task_set("mixed_train")
    ids, corpus = resolve_task_set("id_train"), resolve_task_set("corpus_train")
    assert len(mixed) == len(ids) + len(corpus)
    assert mixed.family.tolist() == ids.family.tolist() + corpus.family.tolist()
    for index in (0, len(ids) - 1):
        np.testing.assert_array_equal(mixed.curve(index).losses, ids.curve(index).losses)
    last = len(mixed) - 1
    np.testing.assert_array_equal(mixed.curve(last).losses, corpus.curve(len(corpus) - 1).losses)
    assert set(mixed.split.tolist()) == {"id_train", "train"}  # no test run of either
