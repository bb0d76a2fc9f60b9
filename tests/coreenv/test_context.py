"""The information model (`EnvConfig.information`): descriptions, category ids and the history."""

from __future__ import annotations

import json

import numpy as np
import pytest

from coreenv import (
    BatchedCore,
    ConfigError,
    CoreEnv,
    Description,
    EnvConfig,
    TaskContext,
    estimate_many,
)
from coreenv.context import HIDDEN_FIELDS, category_ids, describe
from coreenv.core.features import slot_width
from coreenv.curves import named_task_set
from coreenv.layout import slot_tables
from mara_agents.schedulers import LARA

SHORT = dict(arrival_horizon=300, arrival_prob=0.08, task_set="id")


def play(config: EnvConfig, seed: int, steps: int = 10_000) -> BatchedCore:
    """One lane played by LARA to its end (or ``steps``)."""
    core = BatchedCore(config, num_envs=1)
    core.reset([seed])
    lara = LARA()
    for _ in range(steps):
        if not core.active[0]:
            break
        core.step(lara.act_view(core.view()))
    return core


def test_describe_shows_the_config_but_never_what_names_a_run():
    description = describe("mlp-digits", json.dumps({"optimizer": "adam", "seed": 3, "index": 7}))
    assert dict(description.fields) == {"optimizer": "adam", "family": "mlp-digits"}
    assert description.kind(("family", "optimizer")) == ("mlp-digits", "adam")
    assert description.kind(("family", "width")) is None
    assert description == describe("mlp-digits", {"optimizer": "adam"})
    assert {"seed", "index", "batches"} <= HIDDEN_FIELDS


def test_bank_runs_describe_themselves():
    bank = named_task_set("id")
    for row in (0, len(bank) - 1):
        config = json.loads(bank.config[row])
        shown = dict(bank.description(row).fields)
        assert shown["family"] == bank.family[row]
        assert shown["optimizer"] == config["optimizer"]
        assert not HIDDEN_FIELDS & set(shown)


def test_category_ids_number_values_in_order_of_arrival():
    tasks = [describe(f, {"optimizer": o}) for f, o in [("b", "sgd"), ("a", "sgd"), ("b", "adam")]]
    tasks.append(Description({"family": "a"}))
    ids = category_ids(tasks, ("family", "optimizer"))
    assert ids.tolist() == [[1, 1], [2, 1], [1, 2], [2, 0]]


@pytest.mark.parametrize(
    "field, value",
    [("information", "everything"), ("kind_fields", ("family", "")), ("kind_fields", ("a", "a"))],
)
def test_bad_information_settings_are_named(field, value):
    with pytest.raises(ConfigError, match=field):
        EnvConfig(**{field: value})


def test_the_default_shows_nothing_more():
    core = play(EnvConfig(**SHORT), seed=5, steps=200)
    view = core.view()
    assert view.obs.shape[-1] == BatchedCore(EnvConfig(), 1).lanes.obs_shape[-1]
    assert not any(view.histories)
    j = int(np.flatnonzero(view.occupied[0])[0])
    assert view.description(0, j) == Description()


def test_a_described_task_shows_its_category_ids_in_its_slot():
    config = EnvConfig(information="description", **SHORT)
    core = play(config, seed=5, steps=200)
    view = core.view()
    tables = slot_tables(view.obs, config.num_nodes, slot_width(config))[0]
    uid = view.uid[0]
    episode = [view.descriptions[0][i] for i in range(uid.max() + 1)]
    ids = category_ids(episode, config.kind_fields)
    for j in np.flatnonzero(view.occupied[0]):
        assert tables[j, -2:].tolist() == ids[uid[j]].tolist()
        assert view.description(0, j).fields["family"]
    assert not any(view.histories)  # the history is the next level


def test_the_history_holds_each_finished_task_as_it_ended():
    config = EnvConfig(information="history", **SHORT)
    core = play(config, seed=11, steps=400)
    counters = core.lanes.counters(0)
    history = core.lanes.memory.history(0)
    completed = [task for task in history if task.completed]
    assert len(history) == len(completed) + counters.failures
    assert len(completed) == counters.successes > 0 and counters.failures > 0
    assert [task.ended for task in history] == sorted(task.ended for task in history)
    for task in completed:  # revealed through the first loss at or below the target
        assert task.losses[-1] <= task.target < task.losses[:-1].min()
    for task in history:
        assert task.arrival <= task.ended <= task.deadline
        assert len(task.losses) - 1 <= task.ended - task.arrival


def test_history_and_descriptions_are_the_same_in_both_engines():
    config = EnvConfig(information="history", **SHORT)
    core = play(config, seed=4, steps=150)
    env = CoreEnv(config)
    env.reset(seed=4)
    lara = LARA()
    for _ in range(150):
        env.step(_lara_dict(env, lara))
    ours, theirs = core.view(), env.view()
    np.testing.assert_array_equal(ours.obs[0], theirs.obs[0])
    assert [t.ended for t in ours.histories[0]] == [t.ended for t in theirs.histories[0]]
    for a, b in zip(ours.histories[0], theirs.histories[0]):
        np.testing.assert_array_equal(a.losses, b.losses)
        assert a.description == b.description


def _lara_dict(env: CoreEnv, lara: LARA) -> dict:
    chosen = lara.act_view(env.view())[0]
    return {agent: int(chosen[i]) for i, agent in enumerate(env.possible_agents)}


class Spy:
    """A predictor reading context that records what it is told."""

    reads_context = True

    def __init__(self):
        self.contexts: list[TaskContext] = []

    def estimate(self, prefix, target, budget):
        raise AssertionError("a predictor reading context is asked in batches")

    def estimate_batch(self, prefixes, targets, budgets, contexts):
        self.contexts.extend(contexts)
        return np.full(len(prefixes), 10.0), np.full(len(prefixes), 0.5)


def test_an_attached_predictor_reading_context_gets_each_task_s_context():
    spy = Spy()
    config = EnvConfig(information="history", **SHORT)
    core = BatchedCore(config, num_envs=2, predictor=spy)
    core.reset([1, 2])
    lara = LARA()
    for _ in range(200):
        core.step(lara.act_view(core.view()))
    assert spy.contexts and all(c.description.fields["family"] for c in spy.contexts)
    assert max(len(c.history) for c in spy.contexts) > 0
    assert np.all(
        core.view().est_remaining[core.view().occupied & (core.view().batches >= 10)] == 10
    )


def test_estimate_many_gives_a_reader_empty_contexts_when_it_has_none():
    spy = Spy()
    estimate_many(spy, [np.array([2.0, 1.0])], np.array([0.5]), np.array([5]))
    assert spy.contexts[0].description == Description() and spy.contexts[0].history == ()


def test_a_warm_history_starts_each_episode_without_changing_its_tasks():
    warm = EnvConfig(information="history", warm_history=6, **SHORT)
    cold = warm.replace(warm_history=0)
    played = [play(config, seed=9, steps=120) for config in (warm, cold, warm)]
    views = [core.view() for core in played]
    np.testing.assert_array_equal(views[0].obs, views[1].obs)
    kept, fresh, again = (view.histories[0] for view in views)
    assert len(kept) == 6 + len(fresh)
    for before, task in zip(again, kept):  # the same seed, the same warm tasks
        np.testing.assert_array_equal(before.losses, task.losses)
    for task in kept[:6]:
        assert task.ended == 0 and task.description.fields["family"]
        if task.completed:
            assert task.losses[-1] <= task.target < task.losses[:-1].min()
        else:
            assert task.losses[1:].min() > task.target
            assert len(task.losses) - 1 <= -task.arrival * warm.batches_per_step


def test_a_warm_history_needs_the_history():
    with pytest.raises(ConfigError, match="warm_history"):
        EnvConfig(information="description", warm_history=2)


def test_a_description_and_an_env_that_caches_them_pickle():
    import copy
    import pickle

    import coreenv

    description = coreenv.describe("resnet", {"optimizer": "adam", "seed": 3})
    assert pickle.loads(pickle.dumps(description)) == description
    assert copy.deepcopy(description).fields["optimizer"] == "adam"
    env = coreenv.parallel_env(seed=1, information="description", task_set="id_train")
    env.reset()
    env.step(dict.fromkeys(env.agents, 0))
    assert pickle.loads(pickle.dumps(env)).view().descriptions
