"""The history protocol's report: a row per predictor and k, the same file for the same seed."""

import csv

import numpy as np

from coreenv.curves import named_task_set
from coreenv_lab.predictor_eval.history import HistoryConfig, score_history
from coreenv_lab.predictor_eval.history_report import HISTORY_COLUMNS, history_table, write_history
from mara_agents.predictor_eval.queries import QueryConfig
from mara_agents.predictors import WLSPredictor


class HistoryLength:
    """Reads context: answers one batch more than its history holds tasks."""

    reads_context = True

    def estimate_batch(self, prefixes, targets, budgets, contexts):
        remaining = np.array([1.0 + len(context.history) for context in contexts])
        return remaining, np.ones(len(contexts))


class Restless:
    """Reads no context, yet answers each call differently (a predictor drawing fresh noise)."""

    def __init__(self) -> None:
        self.calls = 0

    def estimate_batch(self, prefixes, targets, budgets):
        self.calls += 1
        return np.full(len(prefixes), float(self.calls)), np.ones(len(prefixes))


BANKS = {"vit_ood": named_task_set("vit_ood").subset(np.arange(12))}
BANKS["rl_ood"] = named_task_set("rl_ood").subset(np.arange(0, 64, 4))
CONFIG = HistoryConfig(finished=(0, 2, 5), queries=QueryConfig(per_curve=1))


def test_the_same_seed_writes_the_same_csv(tmp_path):
    predictors = {"wls": WLSPredictor(), "length": HistoryLength()}
    for out in ("first", "again"):
        write_history(score_history(BANKS, predictors, CONFIG), tmp_path / out)
    first = (tmp_path / "first" / "history.csv").read_text()
    assert first == (tmp_path / "again" / "history.csv").read_text()
    with (tmp_path / "first" / "history.csv").open(newline="") as handle:
        header, *rows = list(csv.reader(handle))
    assert header == HISTORY_COLUMNS and len(rows) == 2 * 3 * 2  # sets x k x predictors
    row = dict(zip(header, rows[-1]))
    assert (row["rows"], row["predictor"], row["finished"]) == ("rl_ood", "length", "5")
    assert row["reads_context"] == "True" and float(row["other_kinds"]) == 5.0
    # rl_ood's every 4th run: 4 runs of one kind, 3 of four others; a query per run
    assert float(row["capped_mae"]) > 0 and float(row["same_kind"]) == (4 * 3 + 12 * 2) / 16
    md = (tmp_path / "first" / "history.md").read_text()
    assert md == history_table(score_history(BANKS, predictors, CONFIG)) + "\n"


def test_the_table_has_a_row_per_predictor_and_k_and_checks_the_plain_predictors():
    predictors = {"wls": WLSPredictor(), "length": HistoryLength(), "restless": Restless()}
    table = history_table(score_history(BANKS, predictors, CONFIG))
    assert "history protocol: kinds by family;" in table
    assert "- vit_ood: 1 kind(s) over 12 runs, 12 queries" in table
    assert "| predictor | k | vit_ood MAE | vit_ood accuracy (%) | rl_ood MAE |" in table
    for k in CONFIG.finished:
        assert f"| wls (no context) | {k} |" in table and f"| length | {k} |" in table
    assert "| 5 | 5.0 + 0.0 | 2.2 + 5.0 |" in table  # vit_ood: one kind, nothing else to mix in
    assert "wls reads no context: its figures are equal at every k" in table
    assert "restless reads no context, yet its figures differ by up to" in table
    assert "length reads" not in table
