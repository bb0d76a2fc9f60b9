"""Smoke tests of studies/samplers_distillation/mara_samplers.py: settings paired on training
seeds, a named checkpoint read raw, bad input refused."""

import pytest

pytest.importorskip("torch")

from coreenv_lab.predictors import MARA_TEACHER  # noqa: E402
from coreenv_lab.variants import LAB_VARIANTS  # noqa: E402
from helpers import STUDIES, load_script  # noqa: E402
from mara_agents.predictors.flow import MARA_NETWORK  # noqa: E402

FOLDER = STUDIES / "samplers_distillation"


def test_mara_samplers_pairs_settings_on_training_seeds(capsys):
    samplers = load_script("mara_samplers", FOLDER)
    # the reference: the teacher the policies were trained on, then the shipped student
    first, second = samplers.parse_args([]).settings[:2]
    assert first == (32, 4, "heun", MARA_TEACHER) and second == (32, 1, "euler", None)
    samplers.main(["--episodes", "2", "--settings", "4:1:euler", "2:1:euler"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 4 ")]
    assert rows and "+0.00 ± 0.00" in rows[0]  # the first setting is the reference


def test_mara_samplers_reads_a_named_checkpoint_raw_on_the_task_set_asked(capsys):
    samplers = load_script("mara_samplers", FOLDER)
    settings = ["2:1:euler", f"2:1:euler@{MARA_NETWORK}"]  # fm_mara_student itself, by its path
    samplers.main(["--episodes", "2", "--task-set", "vit_ood", "--settings", *settings])
    out = capsys.readouterr().out
    assert out.startswith("mara on 2 vit_ood episodes at p = 0.04 from seed 960000")
    rows = [line for line in out.splitlines() if line.startswith("| 2 ")]
    assert len(rows) == 2 and str(MARA_NETWORK) in rows[1]
    assert "+0.00 ± 0.00" in rows[1]  # the same network and sampler: the same episodes


def test_mara_samplers_plays_a_lab_variant_from_its_checkpoint(capsys):
    samplers = load_script("mara_samplers", FOLDER)
    assert set(samplers.FM_VARIANTS) == {"mara", "mara_sets", "mara_noshape", "mara_history"}
    predictor, path = samplers.FM_VARIANTS["mara_noshape"]
    assert predictor == "fm_mara_student" and path == LAB_VARIANTS["mara_noshape"].path
    samplers.main(["--variant", "mara_noshape", "--episodes", "2", "--settings", "2:1:euler"])
    out = capsys.readouterr().out
    assert out.startswith("mara_noshape on 2 id_train episodes")
    assert [line for line in out.splitlines() if line.startswith("| 2 | 1 | euler |")]


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
        (["--variant", "mara_wls"], "invalid choice: 'mara_wls'"),  # reads WLS: no sampler
    ],
)
def test_mara_samplers_refuses_bad_input_before_work(argv, message, capsys):
    with pytest.raises(SystemExit):
        load_script("mara_samplers", FOLDER).parse_args(argv)
    assert message in capsys.readouterr().err
