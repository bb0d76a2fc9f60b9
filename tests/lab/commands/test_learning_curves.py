"""`python -m coreenv_lab.commands.learning_curves`: curves, pairs, last policies against LARA."""

import json

import numpy as np
import pytest

pytest.importorskip("torch")

from coreenv_lab.commands import learning_curves  # noqa: E402
from coreenv_lab.training import curves_report  # noqa: E402
from mara_agents.schedulers.mara import MARA  # noqa: E402


def test_learning_curves_prints_curves_pairs_and_last_policies_against_lara(
    tmp_path, capsys, monkeypatch
):
    torch = pytest.importorskip("torch")
    from mara_agents.policy import MAT, MATConfig
    from mara_agents.predictors import WLSPredictor

    arms = []
    for label, rate in (("shaped", 0.6), ("unshaped", 0.5)):
        runs = []
        for seed in (1, 2):
            run = tmp_path / f"{label}_{seed}"
            run.mkdir()
            history = [{"steps": s, "rates": [rate * s / 10, rate]} for s in (0, 5, 10)]
            (run / "history.json").write_text(json.dumps(history))
            torch.manual_seed(seed)
            MARA(MAT(MATConfig()), WLSPredictor()).save(run / "last.pt", "wls", 1.0)
            runs.append(str(run))
        arms += ["--arm", label, *runs]
    played = []

    def completion_rates(scheduler, episodes, seed, **env):  # full episodes take minutes here
        played.append((scheduler.name, episodes, seed, env["task_set"]))
        return np.array([0.4, 0.5]) if scheduler.name == "lara" else np.array([0.5, 0.7])

    monkeypatch.setattr(learning_curves, "completion_rates", completion_rates)
    monkeypatch.setattr(curves_report, "completion_rates", completion_rates)
    learning_curves.main([*arms, "--test-episodes", "2", "--plot", str(tmp_path / "c.png")])
    out = capsys.readouterr().out
    assert "| 2 | 0.00 | 60.0 ± 0.0 (60.0–60.0) | 50.0 ± 0.0 (50.0–50.0) |" in out
    assert "| final | +10.00 ± 0.00 | +10.00 ± 0.00 | +10.00 ± 0.00 |" in out
    assert "LARA: 45.0" in out and "| unshaped | unshaped_2 | 60.0 | +15.00 ± 5.00 |" in out
    assert "LARA on the same selection episodes: 45.0" in out
    assert "| shaped | shaped_1 | 0.00 | 60.0 | 60.0 | +0.0 | 45.0 | +15.00 ± 5.00 |" in out
    assert played[:2] == [("lara", 2, 900_000, "id_train"), ("lara", 2, 1_000_000, "id")]
    assert played[-1][0] == "unshaped_2"
    assert (tmp_path / "c.png").stat().st_size > 0
    with pytest.raises(SystemExit):
        learning_curves.main(["--arm", "shaped", str(tmp_path)])
    assert "has no history.json" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        learning_curves.main(["--arm", "a", arms[2], arms[3], "--arm", "b", arms[6]])
    assert "the first two arms are paired run by run" in capsys.readouterr().err
