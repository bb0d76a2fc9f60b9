"""The query protocols: bounds from the environment, draws a task could be, exact scores."""

import hashlib

import numpy as np
import pytest

from coreenv import EnvConfig
from coreenv.curves import bank_from_arrays, bank_to_csv, named_task_set, save_bank
from coreenv.curves.targets import demand_of
from coreenv.errors import BankError
from coreenv_lab.diagnostics import ClairvoyantPredictor
from mara_agents.predictor_eval.queries import (
    TARGETS,
    PredictorScore,
    QueryConfig,
    compare_scores,
    make_queries,
    read_bank,
    reliability,
    roc_auc,
    score_banks,
    score_predictor,
)
from mara_agents.predictors import WLSPredictor


def test_query_bounds_are_the_environments_defaults():
    env = EnvConfig()
    config = QueryConfig()
    assert config.min_prefix == env.min_prefix
    assert config.budget == env.deadline_window
    assert config.target_fraction == env.target_fraction


def test_queries_are_ready_unfinished_tasks_within_the_deadline_window():
    bank = named_task_set("vit_ood").subset(np.arange(12))
    config = QueryConfig(per_curve=3, min_prefix=15, budget=(20, 30))
    queries = make_queries(bank, config)
    assert 0 < len(queries) <= 36
    lengths = np.array([len(p) - 1 for p in queries.prefixes])
    assert np.all(lengths >= 15) and np.all(queries.remaining >= 1)
    assert np.all((queries.budgets >= 20) & (queries.budgets <= 30))
    again = make_queries(bank, config)
    np.testing.assert_array_equal(again.targets, queries.targets)


def test_the_truth_scores_perfectly():
    bank = named_task_set("vit_ood").subset(np.arange(8))
    queries = make_queries(bank, QueryConfig(per_curve=2))
    score = score_predictor(ClairvoyantPredictor(bank), queries)
    assert (score.capped_mae, score.success_accuracy, score.queries) == (0.0, 1.0, len(queries))
    assert score_predictor(WLSPredictor(), queries).capped_mae > 0


def score(capped_mae, success_accuracy, latency_ms):
    diagram = reliability(np.array([0.5]), np.array([1.0]))
    return PredictorScore(capped_mae, success_accuracy, 0.5, 0.8, latency_ms, 10, diagram, 0.7)


def test_a_score_compared_with_a_baseline():
    baseline = score(capped_mae=100.0, success_accuracy=0.6, latency_ms=0.5)
    better = score(capped_mae=25.0, success_accuracy=0.9, latency_ms=2.0)
    comparison = compare_scores(better, baseline)
    assert comparison.mae_reduction == 0.75 and comparison.latency_ratio == 4.0
    assert comparison.accuracy_gain == pytest.approx(0.3)


def test_calibration_error_weighs_each_bins_gap_by_its_share():
    # bin [0.1, 0.2): predicted 0.15, observed 1/2; bin [0.9, 1.0]: predicted 0.95 and 1.0, all 1
    probabilities = np.array([0.1, 0.2 - 1e-9, 0.9, 1.0])
    outcomes = np.array([0.0, 1.0, 1.0, 1.0])
    diagram = reliability(probabilities, outcomes)
    assert diagram.count.tolist() == [0, 2, 0, 0, 0, 0, 0, 0, 0, 2]
    assert diagram.observed[1] == 0.5 and diagram.observed[9] == 1.0
    expected = 0.5 * abs(0.15 - 0.5) + 0.5 * abs(0.95 - 1.0)
    assert diagram.calibration_error == pytest.approx(expected)
    assert np.isnan(diagram.predicted[0])  # an empty bin


def test_a_calibrated_predictor_scores_a_small_error_and_a_biased_one_a_large_error():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=20_000)
    outcome = rng.uniform(size=p.size) < p
    assert reliability(p, outcome).calibration_error < 0.02
    assert reliability(p, outcome).calibration_error < reliability(p / 2, outcome).calibration_error
    assert reliability(p / 2, outcome).calibration_error == pytest.approx(0.25, abs=0.02)


def test_reliability_refuses_mismatched_inputs():
    with pytest.raises(ValueError, match="as many outcomes as probabilities"):
        reliability(np.array([0.5, 0.2]), np.array([1.0]))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"per_curve": 0}, "QueryConfig.per_curve must be an int >= 1, got 0"),
        ({"min_prefix": True}, "QueryConfig.min_prefix must be an int >= 1, got True"),
        ({"target_fraction": (0.5, 0.2)}, "target_fraction"),
        ({"budget": (10, 5)}, "budget"),
        (
            {"targets": "users"},
            r"QueryConfig.targets must be one of \('environment', 'user'\), "
            r"got 'users'",
        ),
        ({"user_prefix": (0, 10)}, "QueryConfig.user_prefix"),
        ({"user_prefix": (30, 20)}, r"QueryConfig.user_prefix .* got \(30, 20\)"),
        ({"reach": 0}, "QueryConfig.reach must be an int >= 1, got 0"),
        ({"user_budget": (-1, 5)}, "QueryConfig.user_budget"),
        ({"user_budget": (50, 40)}, "QueryConfig.user_budget"),
    ],
)
def test_bad_query_config_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        QueryConfig(**fields)


# --- the environment protocol is pinned ------------------------------------------------------


def digest(queries) -> str:
    """The draw of a set of queries: targets, budgets, truths, rows and prefix lengths."""
    h = hashlib.sha256()
    lengths = np.array([len(p) for p in queries.prefixes], np.int64)
    for part in (queries.targets.astype(np.float64), queries.budgets.astype(np.int64)):
        h.update(part.tobytes())
    for part in (queries.remaining, queries.rows, lengths):
        h.update(np.asarray(part, np.int64).tobytes())
    return h.hexdigest()[:16]


@pytest.mark.parametrize(
    ("task_set", "fields", "count", "expected"),
    [  # digests of the queries make_queries drew before the user protocol was added
        ("id", {}, 1024, "abfec6f150320f16"),
        ("rl_ood", {}, 512, "a2dd1d97e9e20e58"),
        ("vit_ood", {}, 512, "c97e3beacba6e9bf"),
        ("id", dict(per_curve=3, seed=5, min_prefix=15, budget=(20, 30)), 381, "b79e355bb8af1a38"),
    ],
)
def test_the_environment_protocol_draws_what_it_always_drew(task_set, fields, count, expected):
    config = QueryConfig(**fields)
    assert config.targets == "environment" == TARGETS[0]
    queries = make_queries(named_task_set(task_set), config)
    assert (len(queries), digest(queries)) == (count, expected)


# --- the user protocol -----------------------------------------------------------------------


def test_user_queries_ask_for_a_loss_the_run_reaches_later():
    bank = named_task_set("rl_ood").subset(np.arange(16))
    config = QueryConfig(
        per_curve=6, targets="user", user_prefix=(20, 120), reach=150, user_budget=(30, 60), seed=3
    )
    queries = make_queries(bank, config)
    assert 0.8 * 96 <= len(queries) <= 96
    lengths = np.array([len(p) - 1 for p in queries.prefixes])
    assert np.all((lengths >= 20) & (lengths <= 120))
    assert np.all((queries.budgets >= 30) & (queries.budgets <= 60))
    assert np.all(queries.remaining >= 1) and np.all(queries.remaining <= 150)
    for i, prefix in enumerate(queries.prefixes):
        losses = bank.curve(int(queries.rows[i])).losses
        np.testing.assert_array_equal(prefix, losses[: len(prefix)])
        assert queries.targets[i] < prefix.min()  # not yet succeeded
        assert queries.targets[i] in losses[len(prefix) :]  # a loss the run really reaches
        demand = demand_of(losses, queries.targets[i])
        assert queries.remaining[i] == demand - lengths[i]  # the first crossing
        assert np.all(losses[len(prefix) : demand] > queries.targets[i])
    assert queries.families.tolist() == bank.family[queries.rows].tolist()


def test_user_queries_are_deterministic_and_follow_the_seed():
    bank = named_task_set("vit_ood").subset(np.arange(8))
    config = QueryConfig(per_curve=4, targets="user")
    first, again = make_queries(bank, config), make_queries(bank, config)
    assert digest(first) == digest(again)
    assert digest(make_queries(bank, QueryConfig(per_curve=4, targets="user", seed=1))) != digest(
        first
    )
    assert digest(make_queries(bank, QueryConfig(per_curve=4))) != digest(first)


def test_user_prefixes_are_clipped_to_the_curve_and_short_curves_get_no_query():
    falling = 1.0 / np.arange(1, 41)  # 40 losses: batches 0..39, every loss a new best
    bank = bank_from_arrays([falling, falling[:21]])  # the second is too short for n >= 20
    queries = make_queries(bank, QueryConfig(per_curve=50, targets="user", user_prefix=(20, 300)))
    assert len(queries) == 50 and np.all(queries.rows == 0)
    lengths = np.array([len(p) - 1 for p in queries.prefixes])
    assert lengths.min() == 20 and lengths.max() == 38  # at least one batch left after n
    assert np.all(lengths + queries.remaining <= 39)


def test_a_curve_that_never_improves_after_the_prefix_gets_no_user_query():
    flat = np.concatenate([np.linspace(2.0, 1.0, 15), np.full(85, 1.5)])  # best at batch 14
    queries = make_queries(bank_from_arrays([flat]), QueryConfig(targets="user"))
    assert len(queries) == 0


# --- AUC -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("probabilities", "outcomes", "expected"),
    [
        ([0.1, 0.4, 0.6, 0.9], [0, 0, 1, 1], 1.0),  # a perfect ranking
        ([0.9, 0.6, 0.4, 0.1], [0, 0, 1, 1], 0.0),  # reversed
        ([0.5, 0.5, 0.5, 0.5], [0, 1, 0, 1], 0.5),  # all tied: one half each
        ([0.2, 0.7, 0.7, 0.9], [0, 0, 1, 1], 0.875),  # 4 pairs: 3 won, 1 tied
        ([0.3, 0.8, 0.1], [1, 0, 0], 0.5),  # one success above one failure, below the other
    ],
)
def test_auc_on_hand_sized_cases(probabilities, outcomes, expected):
    assert roc_auc(np.array(probabilities), np.array(outcomes)) == pytest.approx(expected)


@pytest.mark.parametrize("outcome", [0, 1])
def test_auc_is_nan_with_one_class_only(outcome):
    assert np.isnan(roc_auc(np.array([0.2, 0.6, 0.9]), np.full(3, outcome)))


def test_auc_refuses_mismatched_inputs():
    with pytest.raises(ValueError, match="one shape"):
        roc_auc(np.array([0.5, 0.2]), np.array([1]))


def test_the_truth_ranks_perfectly_on_user_queries():
    bank = named_task_set("vit_ood").subset(np.arange(8))
    queries = make_queries(bank, QueryConfig(per_curve=4, targets="user"))
    success = queries.remaining <= queries.budgets
    assert 0 < success.sum() < len(queries)  # both classes, so the AUC is defined
    score = score_predictor(ClairvoyantPredictor(bank), queries)
    assert (score.capped_mae, score.success_accuracy, score.auc) == (0.0, 1.0, 1.0)
    assert 0.0 <= score_predictor(WLSPredictor(), queries).auc <= 1.0


# --- a user's own banks ----------------------------------------------------------------------


def test_a_users_bank_is_read_from_csv_or_npz_and_named_after_the_file(tmp_path):
    bank = named_task_set("vit_ood").subset(np.arange(3))
    bank_to_csv(bank, tmp_path / "mine.csv")
    save_bank(bank, tmp_path / "theirs.npz", dtype=np.float64)
    for path in (tmp_path / "mine.csv", tmp_path / "theirs.npz"):
        read = read_bank(path)
        assert read.name == path.stem and len(read) == 3
        np.testing.assert_allclose(read.losses, bank.losses)


def test_a_bad_bank_file_raises_a_bank_error_naming_it(tmp_path):
    with pytest.raises(BankError, match="nowhere.csv"):
        read_bank(tmp_path / "nowhere.csv")
    (tmp_path / "bad.csv").write_text("run,step,value\na,0,1.0\n")
    with pytest.raises(BankError, match="bad.csv.*lacks column"):
        read_bank(tmp_path / "bad.csv")
    (tmp_path / "binary.csv").write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(BankError, match="binary.csv"):
        read_bank(tmp_path / "binary.csv")
    (tmp_path / "broken.npz").write_text("not a zip")
    with pytest.raises(BankError, match="broken.npz"):
        read_bank(tmp_path / "broken.npz")


def test_score_banks_asks_every_predictor_the_same_queries():
    banks = {"a": named_task_set("vit_ood").subset(np.arange(4))}
    banks["b"] = named_task_set("rl_ood").subset(np.arange(3))
    predictors = {"wls": WLSPredictor(), "truth": ClairvoyantPredictor(banks["a"])}
    config = QueryConfig(per_curve=2, targets="user")
    results = score_banks({"a": banks["a"]}, predictors, config)
    assert list(results) == [("a", "wls"), ("a", "truth")]
    assert results[("a", "wls")].queries == results[("a", "truth")].queries
    assert results[("a", "truth")].capped_mae == 0.0
    results = score_banks(banks, {"wls": WLSPredictor()}, config)
    assert [key[0] for key in results] == ["a", "b"]


def test_scoring_no_query_is_refused():
    flat = np.concatenate([np.linspace(2.0, 1.0, 15), np.full(85, 1.5)])  # best at batch 14
    queries = make_queries(bank_from_arrays([flat]), QueryConfig(targets="user"))
    with pytest.raises(ValueError, match="at least one query"):
        score_predictor(WLSPredictor(), queries)
