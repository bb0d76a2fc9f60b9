"""Smoke tests of the MARA commands and scripts: training writes a policy and resumes; curves and
comparisons pair their runs; latency and training throughput print their ratios."""

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from helpers import load_script  # noqa: E402
from mara_agents.cli import compare, learning_curves, train_mara  # noqa: E402
from mara_agents.predictors.flow import MARA_NETWORK, MARA_TEACHER  # noqa: E402
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


def test_tune_hop_tries_each_value_of_a_stage_paired_and_keeps_the_best(capsys, monkeypatch):
    script = load_script("tune_hop")
    monkeypatch.setattr(script, "STAGES", {"slack": [0, 2]})  # two settings: a short test
    script.main(["--predictor", "wls", "--episodes", "2", "--stages", "slack", "--workers", "1"])
    out = capsys.readouterr().out
    assert "| slack | completion (%) | − best so far (points) |" in out
    assert "\n| 0 | " in out and "\n| 2 | " in out and "keep slack = " in out
    assert "best: HOPConfig(" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--episodes", "1"], "--episodes must be >= 2"),
        (["--seed", "999999"], "reaches the evaluation seeds"),
        (["--workers", "0"], "--workers must be >= 1"),
    ],
)
def test_tune_hop_refuses_bad_options_before_any_work(argv, message, capsys):
    with pytest.raises(SystemExit):
        load_script("tune_hop").main(argv)
    assert message in capsys.readouterr().err


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


def test_compare_policies_pairs_every_policy_with_the_first(tmp_path, capsys, monkeypatch):
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


def test_mara_samplers_pairs_settings_on_training_seeds(capsys):
    samplers = load_script("mara_samplers")
    # the reference: the teacher the policies were trained on, then the shipped student
    first, second = samplers.parse_args([]).settings[:2]
    assert first == (32, 4, "heun", MARA_TEACHER) and second == (32, 1, "euler", None)
    samplers.main(["--episodes", "2", "--settings", "4:1:euler", "2:1:euler"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 4 ")]
    assert rows and "+0.00 ± 0.00" in rows[0]  # the first setting is the reference


def test_mara_samplers_reads_a_named_checkpoint_raw_on_the_task_set_asked(capsys):
    samplers = load_script("mara_samplers")
    settings = ["2:1:euler", f"2:1:euler@{MARA_NETWORK}"]  # fm_mara itself, by its path
    samplers.main(["--episodes", "2", "--task-set", "vit_ood", "--settings", *settings])
    out = capsys.readouterr().out
    assert out.startswith("mara on 2 vit_ood episodes at p = 0.04 from seed 960000")
    rows = [line for line in out.splitlines() if line.startswith("| 2 ")]
    assert len(rows) == 2 and str(MARA_NETWORK) in rows[1]
    assert "+0.00 ± 0.00" in rows[1]  # the same network and sampler: the same episodes


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--settings", "8:4"], "SAMPLES:STEPS:SOLVER"),
        (["--settings", "8:4:rk4"], "SAMPLES:STEPS:SOLVER"),
        (["--settings", "8:1:euler@no/such.pt"], "no FM checkpoint at 'no/such.pt'"),
        (["--settings", f"8:1:euler@{__file__}"], "is not an FM checkpoint"),
        (["--episodes", "1"], "--episodes must be >= 2"),
        (["--seed", "999990", "--episodes", "20"], "training seeds"),
        (["--task-set", "id_tset"], "invalid choice: 'id_tset'"),
    ],
)
def test_mara_samplers_refuses_bad_input_before_work(argv, message, capsys):
    with pytest.raises(SystemExit):
        load_script("mara_samplers").parse_args(argv)
    assert message in capsys.readouterr().err


def table_rows(out: str) -> dict[str, str]:
    """The rows of a printed markdown table by their first cell (the header row left out)."""
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    return {name: row for name, row in rows.items() if name != "method"}


def cell_counts(out: str) -> set[int]:
    """The numbers of cells of a printed table's lines: header, separator and rows."""
    return {line.count("|") for line in out.splitlines() if line.startswith("|")}


def test_value_of_information_prices_errors_on_paired_training_seeds(capsys):
    script = load_script("value_of_information")
    argv = ["--task-sets", "vit_ood", "--episodes", "2", "--noise", "0", "1", "--workers", "1"]
    script.main(argv)
    out = capsys.readouterr().out
    rows = table_rows(out)
    assert "| − mara (paired ± SE) |" in out  # every row set against the shipped MARA too
    truth = {"truth 0", "hedged 0", "truth 1", "hedged 1"}
    expected = {"fifo", "edf", "lara", "lara_fm", *truth, "oracle", "mara"}
    assert expected == set(rows)
    assert len(cell_counts(out)) == 1  # one table, full rows
    # differences are the row's method minus the column's: the oracle leads, MARA against itself 0
    oracle, mara = rows["oracle"].split("|"), rows["mara"].split("|")
    assert all(cell.strip().startswith("+") for cell in oracle[3:6])
    assert mara[5].strip() == "+0.00 ± 0.00"
    assert "%" in rows["lara_fm"].split("|")[-4]  # the share of estimates that were never


def test_value_of_information_tells_the_planners_and_mara_the_kind(capsys):
    script = load_script("value_of_information")
    argv = ["--task-sets", "vit_ood", "--episodes", "2", "--noise", "--workers", "1"]
    script.main([*argv, "--kinds", "family", "--hop"])
    rows = table_rows(capsys.readouterr().out)
    planners = ["lara_fm", "hop_fm", "hop_mara", "mara"]
    told = [f"{planner} kind family" for planner in planners]
    assert {"fifo", "edf", "lara", *planners, *told, "oracle"} == set(rows)
    # no ID training run is of ViT OOD's kind: a planner told the kind plays as without it
    for planner in planners:
        cells = rows[f"{planner} kind family"].split("|")
        assert cells[2:-2] == rows[planner].split("|")[2:-2]
        assert cells[-2].strip() == "100%"  # FM alone


@pytest.mark.parametrize(
    "method, network",
    [
        ("mara kind family", "fm_mara"),
        ("hop_mara kind family", "fm_mara"),
        ("hop_mara", "fm_mara"),
        ("hop_fm", "fm"),
    ],
)
def test_value_of_information_blends_the_analog_into_the_network_each_row_reads(
    method, network, monkeypatch
):
    torch = pytest.importorskip("torch")
    script = load_script("value_of_information")
    played = []
    monkeypatch.setattr(script, "completion_rates", lambda s, *a, **k: played.append(s) or [])
    args = script.parse_args(["--task-sets", "vit_ood", "--kinds", "family", "--analogs", "own"])
    script.play(method, "vit_ood", args)
    (scheduler,) = played
    predictor = getattr(scheduler, "predictor", None) or scheduler.observation_predictor
    if " kind " in method:
        assert isinstance(predictor, script.KindAnalog)
        predictor = predictor.base
    expected = script.make_predictor(network)
    assert (predictor.calibration is None) == (expected.calibration is None)
    read, shipped = predictor.net.state_dict(), expected.net.state_dict()
    assert read.keys() == shipped.keys()
    assert all(torch.equal(read[name], shipped[name]) for name in read)


def test_value_of_information_finds_analogs_among_the_task_sets_other_runs(capsys):
    argv = ["--task-sets", "vit_ood", "--episodes", "2", "--noise", "--no-mara", "--workers", "1"]
    load_script("value_of_information").main([*argv, "--kinds", "family", "--analogs", "own"])
    out = capsys.readouterr().out
    assert "analogs: the task set's other runs" in out
    assert "− mara" not in out  # --no-mara: no MARA rows, no column against it
    assert len(cell_counts(out)) == 1
    row = table_rows(out)["lara_fm kind family"].split("|")
    assert row[-2].strip() != "100%"  # other ViT runs are of its kind: analogs found


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--episodes", "1"], "--episodes must be >= 2"),
        (["--seed", "999990", "--episodes", "20"], "training seeds"),
        (["--noise", "-1"], "--noise values must be >= 0"),
        (["--load", "1.5"], "--load must be in (0, 1)"),
        (["--task-sets", "live"], "invalid choice"),
        (["--kinds", "family,colour"], "no config field 'colour'"),
        (["--kinds", "family", "--analogs", "own", "--task-sets", "rl_ood"], None),
        (["--kinds", "family,optimizer", "--analogs", "own", "--task-sets", "rl_ood"], "'rl_ood'"),
        (["--analogs", "own"], "--analogs needs --kinds"),
        (["--kinds", "family", "family"], "names a kind twice"),
    ],
)
def test_value_of_information_refuses_bad_input_before_work(argv, message, capsys):
    script = load_script("value_of_information")
    if message is None:  # a valid neighbour of the bad inputs
        assert script.parse_args(argv).analogs == "own"
        return
    with pytest.raises(SystemExit):
        script.parse_args(argv)
    assert message in capsys.readouterr().err
