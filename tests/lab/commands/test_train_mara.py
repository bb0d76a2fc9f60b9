"""`python -m coreenv_lab.commands.train_mara`: every training option of the lab, the lab's
variants as the defaults of their settings, a lab predictor trained on, bad options refused."""

import dataclasses
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from coreenv_lab.commands import train_mara  # noqa: E402
from coreenv_lab.predictors import LAB_PREDICTORS  # noqa: E402
from coreenv_lab.variants import LAB_VARIANTS  # noqa: E402
from mara_agents.predictors import POLICY_PREDICTORS  # noqa: E402
from mara_agents.policy.mat import MATConfig  # noqa: E402
from mara_agents.schedulers.mara import MARA  # noqa: E402
from mara_agents.schedulers.variants import VARIANTS  # noqa: E402
from mara_agents.training import MARATrainConfig  # noqa: E402

TINY_SCRATCH = ["--scratch", "--algorithm", "held_ppo", "--episodes", "2", "--eval-episodes", "2"]
TINY_SCRATCH += ["--max-steps", "1"]


@pytest.fixture
def policy_predictors():
    """`POLICY_PREDICTORS`, left as the test found it whatever a command registered into it."""
    before = dict(POLICY_PREDICTORS)
    yield POLICY_PREDICTORS
    POLICY_PREDICTORS.clear()
    POLICY_PREDICTORS.update(before)


def test_train_mara_writes_a_loadable_policy_and_resumes(tmp_path, capsys):
    argv = ["--variant", "mara_wls", "--workloads", "1", "--group", "2", "--demo-episodes", "1"]
    argv += ["--dagger-rounds", "1", "--dagger-episodes", "1", "--demo-epochs", "1"]
    argv += ["--eval-every", "1", "--eval-episodes", "2"]
    argv += ["--work", str(tmp_path / "w"), "--out", str(tmp_path / "p.pt")]
    train_mara.main([*argv, "--max-updates", "1"])
    train_mara.main([*argv, "--max-updates", "2"])
    out = capsys.readouterr().out
    assert "imitation of hop, round 1" in out and "resumed from" in out and "update 2 " in out
    assert "over the start policy" in out
    history = (tmp_path / "w" / "history.json").read_text()
    assert '"update": 2' in history
    policy = MARA.pretrained("mara_wls", path=tmp_path / "p.pt")
    assert policy.name == "mara_wls"
    assert type(policy.observation_predictor).__name__ == "WLSPredictor"  # the variant's
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
    argv = ["--variant", "mara", "--predictor", "wls", *TINY_SCRATCH]
    train_mara.main([*argv, "--work", str(tmp_path / "w"), "--out", str(tmp_path / "p.pt")])
    policy = MARA.pretrained("mara", path=tmp_path / "p.pt")
    assert type(policy.observation_predictor).__name__ == "WLSPredictor"


def test_train_mara_on_the_information_model_reads_the_category_columns(tmp_path):
    argv = ["--variant", "mara", "--predictor", "wls", "--information", "history"]
    argv += ["--warm-history", "2", *TINY_SCRATCH]
    train_mara.main([*argv, "--work", str(tmp_path / "w"), "--out", str(tmp_path / "p.pt")])
    policy = MARA.pretrained("mara", path=tmp_path / "p.pt")
    assert policy.observation_kind_fields == ("family", "optimizer")
    assert policy.policy.config.slot_features == 11


@pytest.mark.parametrize("name", sorted(LAB_VARIANTS))
def test_a_lab_variant_sets_the_shipped_recipe_s_predictor_beta_information_and_checkpoint(
    name, policy_predictors
):
    variant = LAB_VARIANTS[name]
    config = train_mara.config_from(train_mara.parse_args(["--variant", name]))
    assert (config.variant, config.observed, config.beta) == (
        "mara",
        variant.predictor,
        variant.shaping_beta,
    )
    assert config.shown == variant.information
    assert config.out == variant.path and config.work == Path("results/mara") / name
    assert config.mat.slot_features == (11 if variant.information == "history" else 9)
    # the lab's predictor is one the run and its checkpoints may name, in this process only
    assert variant.predictor in policy_predictors
    given = ["--variant", name, "--beta", "0.5", "--out", "elsewhere.pt", "--predictor", "wls"]
    overridden = train_mara.config_from(train_mara.parse_args(given))
    assert (overridden.beta, overridden.out, overridden.observed) == (
        0.5,
        Path("elsewhere.pt"),
        "wls",
    )


def test_a_lab_predictor_is_registered_only_when_the_run_reads_it(policy_predictors):
    train_mara.parse_args(["--predictor", "wls"])
    assert not set(LAB_PREDICTORS) & set(policy_predictors)
    config = train_mara.config_from(train_mara.parse_args(["--predictor", "fm_analog"]))
    assert config.observed == "fm_analog" and "fm_analog" in policy_predictors
    assert policy_predictors["fm_analog"] is LAB_PREDICTORS["fm_analog"]


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
        (["--init", str(LAB_VARIANTS["mara_wls"].path)], "reads the predictor 'wls'"),
        (["--warm-history", "4"], "warm_history=4 needs information='history'"),
        (["--information", "all"], "--information: invalid choice: 'all'"),
        (["--nodes", "0"], "--nodes must be an int >= 1, got 0"),
        (["--cluster", "fast"], "--cluster: invalid choice: 'fast'"),
        (["--variant", "mara_magic"], "--variant: invalid choice: 'mara_magic'"),
        (["--predictor", "truth"], "--predictor: invalid choice: 'truth'"),
    ],
)
def test_train_mara_refuses_contradictory_options(argv, message, capsys, policy_predictors):
    with pytest.raises(SystemExit) as exit_info:
        train_mara.main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.startswith(f"{train_mara.PROG}: error: ")
    assert message in err and err.count("\n") == 1, err  # one line


def test_train_mara_on_a_cluster_trains_a_sets_network_reading_its_columns(tmp_path):
    argv = ["--variant", "mara", "--predictor", "wls", "--cluster", "mixed_costly", "--nodes", "2"]
    argv += [*TINY_SCRATCH, "--work", str(tmp_path / "w"), "--out", str(tmp_path / "p.pt")]
    config = train_mara.config_from(train_mara.parse_args(argv))
    (env,) = config.envs
    assert env["node_speeds"] == "mixed" and env["switch_cost"] == 5
    assert (env["num_nodes"], env["num_slots"], env["arrival_prob"]) == (
        2,
        4,
        0.02,
    )
    assert config.mat.sets and config.mat.cluster_column == 9 and config.mat.slot_features == 11
    train_mara.main(argv)
    policy = MARA.pretrained("mara", path=tmp_path / "p.pt")
    assert policy.policy.config.sets and policy.policy.config.shows_cluster


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
    shipped = MARATrainConfig(
        work=Path("results/mara/mara"),
        out=VARIANTS["mara"].path,
        mat=MATConfig(encoder="slots", sets=True) if VARIANTS["mara"].sets else MATConfig(),
    )
    assert config == shipped  # the library's recipe on one cluster of four equal nodes
    sets = train_mara.config_from(train_mara.parse_args(["--variant", "mara_sets"]))
    assert sets.mat.sets and sets.out == LAB_VARIANTS["mara_sets"].path
    assert (sets.beta, sets.observed) == (config.beta, config.observed)
    assert dataclasses.replace(sets, out=config.out, shaping_beta=None, predictor=None) == (
        dataclasses.replace(config, work=Path("results/mara/mara_sets"))
    )
