"""The sweep's reports: paired margins over the strongest classic baseline."""

from mara_agents.sweep import SweepConfig
from mara_agents.sweep.report import margin_table


def test_margin_is_over_the_best_classic_baseline_paired_by_seed():
    rates = {"fifo": [0.2, 0.4], "edf": [0.1, 0.1], "lara": [0.35, 0.35], "mara": [0.5, 0.4]}
    rates["oracle"] = [0.8, 0.8]
    rows = [
        dict(method=m, task_set="id", load=0.04, seed=s, completion_rate=r[s])
        for m, r in rates.items()
        for s in (0, 1)
    ]
    config = SweepConfig(task_sets=["id"], loads=[0.04], methods=list(rates))
    table = margin_table(rows, config)
    # LARA is best on average (FIFO wins one seed); per-seed gains 15 and 5 points
    assert "| mara | id | +10.0 ± 5.0 (56%) |" in table
    assert "| lara |" not in table and "| oracle |" not in table


def test_report_of_a_method_without_rows_says_so_instead_of_crashing():
    from coreenv.core.metrics import METRIC_KEYS
    from mara_agents.sweep.report import report

    metrics = dict.fromkeys(METRIC_KEYS, 0.0) | {"completion_rate": 0.5, "seconds": 0.1}
    rows = [dict(method="fifo", task_set="id", load=0.04, seed=0, **metrics)]
    text = report(rows, SweepConfig(task_sets=["id"], loads=[0.04], methods=["fifo", "lara"]))
    assert "| lara | – |" in text and "WARNING" not in text
