"""`coreenv compare`: every policy paired with the first."""

import numpy as np
import pytest

pytest.importorskip("torch")

from mara_agents.cli import compare  # noqa: E402
from mara_agents.schedulers.mara import MARA  # noqa: E402


def test_compare_pairs_every_policy_with_the_first(tmp_path, capsys, monkeypatch):
    torch = pytest.importorskip("torch")
    from mara_agents.policy import MAT, MATConfig
    from mara_agents.predictors import WLSPredictor

    torch.manual_seed(0)
    MARA(MAT(MATConfig()), WLSPredictor()).save(tmp_path / "mine.pt", "wls", 1.0)
    seen = []

    def completion_rates(scheduler, episodes, seed, **env):  # full episodes take minutes here
        seen.append((scheduler.name, episodes, seed, env))
        return np.array([0.5, 0.6]) if scheduler.name == "mara_wls" else np.array([0.6, 0.9])

    monkeypatch.setattr(compare, "completion_rates", completion_rates)
    compare.main(["mara_wls", str(tmp_path / "mine.pt"), "--episodes", "2"])
    out = capsys.readouterr().out
    # two episodes: resampled means take three values, the percentile interval spans them
    assert "| mara_wls | 55.00 [50.00, 60.00] | 55.00 | +0.00 [0.00, 0.00] | 0.50 |" in out
    mine = "| 75.00 [60.00, 90.00] | 75.00 | +20.00 [10.00, 30.00] | 1.00 |"
    assert f"| {tmp_path / 'mine.pt'} {mine}" in out
    env = {"task_set": "id_train", "arrival_prob": 0.04}
    assert seen == [("mara_wls", 2, 950_000, env), ("mine", 2, 950_000, env)]
    with pytest.raises(SystemExit):
        compare.main(["mara_typo"])
    assert "mara_typo: neither a sweep method (['edf'" in capsys.readouterr().err


def test_compare_plays_the_cluster_asked_for_at_the_load_per_node(capsys, monkeypatch):
    seen = []

    def completion_rates(scheduler, episodes, seed, **env):
        seen.append(env)
        return np.array([0.5, 0.6])

    monkeypatch.setattr(compare, "completion_rates", completion_rates)
    compare.main(["lara", "fifo", "--episodes", "2", "--nodes", "8", "--cluster", "mixed_costly"])
    assert seen[0] == {
        "task_set": "id_train",
        "arrival_prob": 0.08,
        "num_nodes": 8,
        "num_slots": 16,
        "node_speeds": "mixed",
        "switch_cost": 5,
    }
    assert "cluster" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        compare.main(["lara", "--slots", "0"])
    assert "--slots must be an int >= 1, got 0." in capsys.readouterr().err
