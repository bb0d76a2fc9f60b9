"""The history protocol: histories as the environment holds them, drawn from the other runs of a
query's kind; a predictor reading them changes with k, one that does not stays put."""

import numpy as np
import pytest

from coreenv.context import TaskContext, describe
from coreenv.curves import bank_from_arrays, named_task_set
from coreenv.curves.targets import demand_of, target_at_fraction
from coreenv_lab.predictor_eval.history import (
    HistoryConfig,
    draw_histories,
    run_kinds,
    score_history,
)
from mara_agents.predictor_eval.queries import QueryConfig, make_queries, score_predictor
from mara_agents.predictors import WLSPredictor


class MedianOfKind:
    """A toy predictor that reads context: the median first crossing of the query's target on
    the history's runs of its kind, minus the prefix; ``fallback`` where none crosses."""

    reads_context = True

    def __init__(self, fallback: float = 400.0) -> None:
        self.fallback = fallback

    def estimate_batch(self, prefixes, targets, budgets, contexts):
        remaining = []
        for prefix, target, context in zip(prefixes, targets, contexts):
            kind = context.description.kind(("family",))
            crossings = [
                demand_of(task.losses, target)
                for task in context.history
                if task.description.kind(("family",)) == kind and task.losses[1:].min() <= target
            ]
            n = len(prefix) - 1
            remaining.append(max(np.median(crossings) - n, 1.0) if crossings else self.fallback)
        remaining = np.array(remaining)
        return remaining, (remaining <= np.asarray(budgets)).astype(np.float64)


def small_config(**fields) -> HistoryConfig:
    return HistoryConfig(queries=QueryConfig(per_curve=1), **fields)


def test_a_predictor_reading_context_changes_with_k_and_one_that_does_not_stays_put():
    banks = {"rl_ood": named_task_set("rl_ood")}
    predictors = {"wls": WLSPredictor(), "toy": MedianOfKind()}
    results = score_history(banks, predictors, small_config(finished=(0, 1, 8)))
    toy = [results.scores[("rl_ood", k, "toy")].capped_mae for k in (0, 1, 8)]
    wls = [results.scores[("rl_ood", k, "wls")] for k in (0, 1, 8)]
    assert toy[0] > toy[1] > toy[2]  # the fallback alone, then more and more runs of its kind
    assert len({(s.capped_mae, s.success_accuracy, s.auc) for s in wls}) == 1
    assert results.reads_context == {"wls": False, "toy": True}
    assert results.task_sets["rl_ood"].kinds == 5 and results.task_sets["rl_ood"].runs == 64


def test_histories_hold_other_runs_of_the_querys_kind_each_up_to_its_targets_first_crossing():
    bank = named_task_set("rl_ood")
    config = small_config(finished=(0, 3, 16))
    queries = make_queries(bank, config.queries)
    kinds = run_kinds(bank, ("family",))
    histories = draw_histories(bank, queries, config)
    low, high = config.queries.target_fraction
    for k in config.finished:
        for i, (rows, context) in enumerate(zip(histories.rows_at(k), histories.contexts(k))):
            own = int(queries.rows[i])
            assert own not in rows.tolist()  # never the query's own run
            same = [r for r in rows.tolist() if kinds[r] == kinds[own]]
            of_kind = kinds.count(kinds[own])
            assert len(same) == min(k, of_kind - 1)  # all the others where it has fewer
            assert len(rows) - len(same) == min(k, len(bank) - of_kind)  # as many of other kinds
            assert context.description.fields["family"] == bank.family[own]
            end = 0
            for row, task in zip(rows.tolist(), context.history):
                losses = bank.curve(row).losses
                n = len(task.losses) - 1
                np.testing.assert_array_equal(task.losses, losses[: n + 1])
                assert n == demand_of(losses, task.target)  # through its first crossing
                # drawn as the environment draws targets, at a fraction in [low, high]
                lowest, highest = (target_at_fraction(losses, f)[0] for f in (high, low))
                assert lowest <= task.target <= highest
                assert task.completed and task.arrival == end and task.ended == end + n
                end = task.ended
    size = histories.size(16)
    assert size.same_kind < 16 and size.fewest_same_kind == 11 and size.other_kinds == 16


def test_a_querys_history_at_k_holds_its_history_at_every_smaller_k():
    bank = named_task_set("id").subset(np.arange(0, 128, 3))
    config = small_config(finished=(1, 4, 8))
    histories = draw_histories(bank, make_queries(bank, config.queries), config)
    for small, large in zip(histories.rows_at(4), histories.rows_at(8)):
        kept = [row for row in large.tolist() if row in small.tolist()]
        assert kept == small.tolist()


def test_a_kind_with_few_runs_gives_what_it_has():
    falling = 2.0 / np.arange(1, 201)
    curves = [falling * (1 + 0.1 * i) for i in range(4)]
    bank = bank_from_arrays(curves, ["a", "a", "a", "b"])
    config = small_config(finished=(4,))
    queries = make_queries(bank, config.queries)
    assert queries.rows.tolist() == [0, 1, 2, 3]
    histories = draw_histories(bank, queries, config)
    same = [int(np.sum(s)) for s in histories.same]
    other = [int(np.sum(~s)) for s in histories.same]
    assert (same, other) == ([2, 2, 2, 0], [1, 1, 1, 3])
    assert histories.size(4).fewest_same_kind == 0 and histories.size(4).same_kind == 1.5


def test_the_same_seed_draws_the_same_histories_and_another_seed_others():
    bank = named_task_set("vit_ood").subset(np.arange(16))
    queries = make_queries(bank, QueryConfig(per_curve=1))
    draws = [draw_histories(bank, queries, small_config(seed=s)) for s in (0, 0, 1)]
    rows = [[r.tolist() for r in draw.rows_at(4)] for draw in draws]
    targets = [np.concatenate(draw.targets) for draw in draws]
    assert rows[0] == rows[1] and rows[0] != rows[2]
    np.testing.assert_array_equal(targets[0], targets[1])


def test_score_predictor_gives_contexts_to_a_predictor_reading_them_only():
    bank = named_task_set("vit_ood").subset(np.arange(4))
    queries = make_queries(bank, QueryConfig(per_curve=2))
    empty = [TaskContext(describe("vit-digits"))] * len(queries)  # no history: the fallback
    score = score_predictor(MedianOfKind(fallback=7.0), queries, contexts=empty)
    assert score.capped_mae == pytest.approx(np.mean(np.abs(7.0 - queries.remaining)))
    with pytest.raises(ValueError, match="one context per query, got 1 for 8 queries"):
        score_predictor(WLSPredictor(), queries, contexts=empty[:1])


def test_a_run_without_a_kind_field_is_named_with_its_bank_and_fields():
    with pytest.raises(ValueError) as error:
        run_kinds(named_task_set("rl_ood"), ("family", "optimizer"))
    message = str(error.value)
    assert "kind field 'optimizer': run 0 (family 'ppo-cartpole') of bank 'rl_ood'" in message
    assert "its fields: ['family', 'gamma', 'learning_rate', 'n_steps']" in message
    assert "fields every run of 'rl_ood' has: ['family', 'gamma', 'learning_rate']" in message
    assert len(set(run_kinds(named_task_set("vit_ood"), ("family", "optimizer")))) == 2


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kind_fields": ()}, "kind_fields must be one or more field names, got ()"),
        ({"kind_fields": ("family", 3)}, "kind_fields must be one or more field names"),
        ({"kind_fields": ("family", "family")}, r"kind_fields names \['family'\] more than once"),
        ({"finished": ()}, "finished must hold one or more numbers, got none"),
        ({"finished": (0, -1)}, "every number finished must be an int >= 0, got -1"),
        ({"finished": (2, 2.5)}, "every number finished must be an int >= 0, got 2.5"),
        ({"finished": (4, 1, 4)}, r"finished names \[4\] more than once"),
        ({"queries": QueryConfig(targets="user")}, "targets='user'"),
        ({"seed": -1}, "HistoryConfig.seed must be an int >= 0, got -1"),
    ],
)
def test_bad_history_config_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        HistoryConfig(**fields)


def test_score_history_refuses_nothing_to_score():
    with pytest.raises(ValueError, match="one or more banks and predictors, got 0 bank"):
        score_history({}, {"wls": WLSPredictor()})
