"""Smoke tests of the MARA commands and scripts: training writes a policy and resumes; curves and
comparisons pair their runs; latency and training throughput print their ratios."""

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from helpers import load_script  # noqa: E402
from mara_agents.cli import compare, learning_curves, train_mara  # noqa: E402
from mara_agents.schedulers.mara import MARA, VARIANTS  # noqa: E402
from mara_agents.training import MARATrainConfig  # noqa: E402


def test_train_mara_writes_a_loadable_policy_and_resumes(tmp_path, capsys):
    argv = [
        "--variant",
        "mara_wls",
        "--workloads",
        "1",
        "--group",
        "2",
        "--demo-episodes",
        "1",
        "--dagger-rounds",
        "1",
        "--dagger-episodes",
        "1",
        "--demo-epochs",
        "1",
        "--eval-every",
        "1",
        "--eval-episodes",
        "2",
        "--work",
        str(tmp_path / "w"),
        "--out",
        str(tmp_path / "p.pt"),
    ]
    train_mara.main([*argv, "--max-updates", "1"])
    train_mara.main([*argv, "--max-updates", "2"])
    out = capsys.readouterr().out
    assert "imitation of hop, round 1" in out and "resumed from" in out and "update 2 " in out
    assert "over the start policy" in out
    history = (tmp_path / "w" / "history.json").read_text()
    assert '"update": 2' in history
    assert MARA.pretrained("mara_wls", path=tmp_path / "p.pt").name == "mara_wls"
    # --init starts the RL stage from a checkpoint, skipping imitation
    again = [*argv[:-4], "--work", str(tmp_path / "w2"), "--out", str(tmp_path / "p2.pt")]
    train_mara.main([*again, "--init", str(tmp_path / "p.pt"), "--max-updates", "1"])
    out = capsys.readouterr().out
    assert "starting the RL stage from" in out and "imitation of" not in out
    assert (tmp_path / "w2" / "checkpoint.pt").is_file()


def test_train_mara_from_scratch_with_held_ppo_stops_at_its_step_budget(tmp_path, capsys):
    work = tmp_path / "w"
    argv = ["--variant", "mara_wls", "--scratch", "--algorithm", "held_ppo", "--episodes", "2"]
    argv += ["--eval-every", "5", "--eval-episodes", "2", "--max-steps", "1", "--seed", "3"]
    train_mara.main([*argv, "--work", str(work), "--out", str(tmp_path / "p.pt")])
    out = capsys.readouterr().out
    assert "from random weights (seed 3)" in out and "imitation of" not in out
    assert "update 1 " in out and "update 2 " not in out  # one update passes one step
    history = json.loads((work / "history.json").read_text())
    assert history[0] == {"phase": "scratch", "seed": 3}
    assert (history[1]["phase"], history[1]["steps"], len(history[1]["rates"])) == ("start", 0, 2)
    assert (history[2]["phase"], history[2]["update"]) == ("held_ppo", 1)  # judged where it ended
    assert (work / "start.pt").is_file() and (work / "last.pt").is_file()
    # a resumed run must be the same run: other settings are refused, naming them
    with pytest.raises(ValueError, match=r"trained with other \['held'\]"):
        again = ["--episodes", "3", "--work", str(work), "--out", str(tmp_path / "p.pt")]
        train_mara.main([*argv, *again])


def test_train_mara_with_another_predictor_records_it_in_the_policy(tmp_path):
    argv = ["--variant", "mara", "--predictor", "wls", "--scratch", "--algorithm", "held_ppo"]
    argv += ["--episodes", "2", "--eval-episodes", "2", "--max-steps", "1"]
    train_mara.main([*argv, "--work", str(tmp_path / "w"), "--out", str(tmp_path / "p.pt")])
    policy = MARA.pretrained("mara", path=tmp_path / "p.pt")
    assert type(policy.observation_predictor).__name__ == "WLSPredictor"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--scratch", "--init", "README.md"], "--init and --scratch are two different starts"),
        (["--algorithm", "grouped", "--entropy", "0.1"], "grouped does not read --entropy"),
        (["--algorithm", "ppo", "--hold", "4"], "ppo does not read --hold"),
        (["--quantiles", "0.5", "1.5"], "estimate_quantiles must be a tuple of at most 9"),
        (["--max-steps", "-1"], "MARATrainConfig.max_steps must be None or >= 0, got -1"),
        (["--algorithm", "grouped", "--episodes", "8"], "grouped does not read --episodes"),
        (["--algorithm", "grouped", "--epochs", "10"], "grouped does not read --epochs"),
        (["--algorithm", "held_ppo", "--minibatches", "0"], "minibatches must be >= 1"),
        (["--init", "src/mara_agents/checkpoints/mara_wls.pt"], "reads the predictor 'wls'"),
    ],
)
def test_train_mara_refuses_contradictory_options(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        train_mara.main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.startswith("coreenv train-mara: error: ")
    assert message in err and err.count("\n") == 1, err  # one line


def test_train_mara_refuses_a_missing_init_checkpoint(tmp_path, capsys):
    with pytest.raises(SystemExit):
        train_mara.main(["--init", str(tmp_path / "none.pt")])
    assert "--init" in capsys.readouterr().err


def test_train_mara_passes_epochs_and_minibatches_to_the_rl_stage():
    argv = ["--algorithm", "held_ppo", "--epochs", "10", "--minibatches", "8"]
    held = train_mara.config_from(train_mara.parse_args(argv)).held
    assert (held.epochs, held.minibatches) == (10, 8)


def test_train_mara_symlog_sets_the_network_to_read_symlog():
    argv = ["--scratch", "--algorithm", "held_ppo", "--symlog"]
    assert train_mara.config_from(train_mara.parse_args(argv)).mat.symlog
    assert not train_mara.config_from(train_mara.parse_args([])).mat.symlog


def test_train_mara_defaults_are_the_library_recipe():
    config = train_mara.config_from(train_mara.parse_args([]))
    shipped = MARATrainConfig(work=Path("results/mara/mara"), out=VARIANTS["mara"].path)
    assert config == shipped


def test_latency_benchmark_prints_ratios_to_lara(capsys):
    load_script("bench_latency").main(["--methods", "lara", "mara_wls", "--episodes", "1"])
    out = capsys.readouterr().out
    assert "| lara |" in out and "| 1.00 |" in out and "| mara_wls |" in out
    assert "| mara_wls (lockstep, 1 episodes) |" in out


def test_training_benchmark_prints_both_setups_and_refuses_bad_sizes(capsys):
    script = load_script("bench_training")
    tiny = ["--predictor", "none", "--updates", "1", "--rollout", "8"]
    script.main(
        [*tiny, "--envs", "4", "--reference-envs", "2", "--threads", "1", "--held-episodes", "2"]
    )
    out = capsys.readouterr().out
    assert "| recipe's lanes | 2 |" in out and "| more lanes | 4 |" in out and "| 1.0x |" in out
    assert "| held decisions | 2 |" in out
    with pytest.raises(SystemExit):
        script.main([*tiny, "--envs", "0"])
    assert "--envs must be >= 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        script.main([*tiny, "--held-episodes", "-1"])
    assert "--held-episodes must be >= 0" in capsys.readouterr().err


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

    from mara_agents.training import curves_report

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
