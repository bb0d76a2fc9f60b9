"""`coreenv compare`: every policy paired with the first; every kind of method the sweep takes,
policy files and bank paths."""

import sys

import numpy as np
import pytest

pytest.importorskip("torch")

from coreenv.curves import bank_to_csv, named_task_set  # noqa: E402
from mara_agents.cli import compare  # noqa: E402
from mara_agents.schedulers.mara import MARA  # noqa: E402


@pytest.fixture
def played(monkeypatch):
    """The episodes each policy was asked to play: (name, episodes, seed, env)."""
    seen = []

    def completion_rates(scheduler, episodes, seed, **env):  # full episodes take minutes here
        seen.append((scheduler.name, episodes, seed, env))
        return np.array([0.5, 0.6]) if scheduler.name == "lara" else np.array([0.6, 0.9])

    monkeypatch.setattr(compare, "completion_rates", completion_rates)
    return seen


def test_compare_pairs_every_policy_with_the_first(tmp_path, capsys, played):
    torch = pytest.importorskip("torch")
    from mara_agents.policy import MAT, MATConfig
    from mara_agents.predictors import WLSPredictor

    torch.manual_seed(0)
    MARA(MAT(MATConfig()), WLSPredictor()).save(tmp_path / "mine.pt", "wls", 1.0)
    compare.main(["lara", str(tmp_path / "mine.pt"), "--episodes", "2"])
    out = capsys.readouterr().out
    # two episodes: resampled means take three values, the percentile interval spans them
    assert "| lara | 55.00 [50.00, 60.00] | 55.00 | +0.00 [0.00, 0.00] | 0.50 |" in out
    mine = "| 75.00 [60.00, 90.00] | 75.00 | +20.00 [10.00, 30.00] | 1.00 |"
    assert f"| {tmp_path / 'mine.pt'} {mine}" in out
    env = {"task_set": "id_train", "arrival_prob": 0.04}
    assert played == [("lara", 2, 950_000, env), ("mine", 2, 950_000, env)]
    with pytest.raises(SystemExit):
        compare.main(["mara_typo"])
    assert "mara_typo: unknown method 'mara_typo'" in capsys.readouterr().err


def test_compare_takes_module_class_with_arguments_and_a_bank_path(tmp_path, played, monkeypatch):
    (tmp_path / "mine.py").write_text(
        "from mara_agents.schedulers import FIFO\n\n"
        "class Mine(FIFO):\n    def __init__(self, name='mine'):\n        self.name = name\n"
    )
    bank_to_csv(named_task_set("id").subset(np.arange(6)), tmp_path / "logs.csv")
    monkeypatch.chdir(tmp_path)
    try:
        compare.main(["lara", "mine:Mine(name=serf)", "--task-set", "logs.csv", "--episodes", "2"])
    finally:
        sys.modules.pop("mine", None)
    assert [(name, env["task_set"]) for name, *_, env in played] == [
        ("lara", "logs.csv"),
        ("serf", "logs.csv"),
    ]


def test_compare_plays_the_cluster_asked_for_at_its_default_load(capsys, played):
    compare.main(["lara", "fifo", "--episodes", "2", "--cluster", "8/16 mixed_costly"])
    assert played[0][3] == {
        "task_set": "id_train",
        "arrival_prob": 0.16,  # 0.01 per unit of speed: 1, 1, 2, 4 twice
        "num_nodes": 8,
        "num_slots": 16,
        "node_speeds": "mixed",
        "switch_cost": 5,
    }
    assert "cluster 8/16 mixed_costly" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        compare.main(["lara", "--cluster", "4/0"])
    error = capsys.readouterr().err
    assert "argument --cluster: EnvConfig.num_slots must be an int >= 1, got 0." in error
