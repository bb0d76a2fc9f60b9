"""`coreenv_lab.ablations`: each row of the table is a sweep method playing under the row's name."""

import dataclasses

import pytest

from coreenv_lab.ablations import ABLATION_METHODS, ABLATIONS, ablation_table
from mara_agents.sweep import SweepConfig, run_sweep
from mara_agents.sweep.methods import method_factory


def test_every_row_has_its_method_in_table_order():
    assert list(ABLATION_METHODS) == list(ABLATIONS)
    lab = [method for method in ABLATION_METHODS.values() if ":" in method]
    assert lab == ["coreenv_lab.methods:mara_wls", "coreenv_lab.methods:mara_noshape"]


@pytest.mark.parametrize("row", ["mara_wls", "mara_noshape"])
def test_a_lab_row_plays_under_its_row_s_name(row):
    pytest.importorskip("torch")
    assert method_factory(ABLATION_METHODS[row])[0] == row


def test_the_table_labels_each_row_and_refuses_several_loads():
    config = SweepConfig(
        arrival_prob=(0.04,), task_sets=("synthetic",), methods=("lara", "fifo"), episodes=2
    )
    table = ablation_table(run_sweep(dataclasses.replace(config, workers=1)), config)
    assert "| LARA (LARA + WLS) |" in table and "| fifo |" in table
    assert table.startswith("Ablations at p = 0.04: completion rate (%)")
    two = SweepConfig(arrival_prob=(0.04, 0.05), task_sets=("synthetic",), methods=("fifo",))
    with pytest.raises(ValueError, match="one arrival probability"):
        ablation_table([], two)
