"""Smoke tests of studies/value_of_information/value_of_information.py: the rows it pairs, the
kind it tells, and the input it refuses."""

import pytest

pytest.importorskip("torch")

from helpers import STUDIES, load_script  # noqa: E402

FOLDER = STUDIES / "value_of_information"


def table_rows(out: str) -> dict[str, str]:
    """The rows of a printed markdown table by their first cell (the header row left out)."""
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    return {name: row for name, row in rows.items() if name != "method"}


def cell_counts(out: str) -> set[int]:
    """The numbers of cells of a printed table's lines: header, separator and rows."""
    return {line.count("|") for line in out.splitlines() if line.startswith("|")}


def test_value_of_information_prices_errors_on_paired_training_seeds(capsys):
    script = load_script("value_of_information", FOLDER)
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
    """LARA-FM and MARA, told the kind; HOP's rows (``--hop``) read the same analog predictor
    (the test below), and playing them would cost a minute here."""
    script = load_script("value_of_information", FOLDER)
    argv = ["--task-sets", "vit_ood", "--episodes", "2", "--noise", "--workers", "1"]
    script.main([*argv, "--kinds", "family"])
    rows = table_rows(capsys.readouterr().out)
    planners = ["lara_fm", "mara"]
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
        ("mara kind family", "fm_mara_student"),
        ("hop_mara kind family", "fm_mara_student"),
        ("hop_mara", "fm_mara_student"),
        ("hop_fm", "fm"),
    ],
)
def test_value_of_information_blends_the_analog_into_the_network_each_row_reads(
    method, network, monkeypatch
):
    torch = pytest.importorskip("torch")
    script = load_script("value_of_information", FOLDER)
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
    argv += ["--kinds", "family", "--analogs", "own"]
    load_script("value_of_information", FOLDER).main(argv)
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
        (["--arrival-prob", "1.5"], "in [0.0, 1.0], got 1.5"),
        (["--task-sets", "live"], "invalid choice"),
        (["--kinds", "family,colour"], "no config field 'colour'"),
        (["--kinds", "family", "--analogs", "own", "--task-sets", "rl_ood"], None),
        (["--kinds", "family,optimizer", "--analogs", "own", "--task-sets", "rl_ood"], "'rl_ood'"),
        (["--analogs", "own"], "--analogs needs --kinds"),
        (["--kinds", "family", "family"], "names a kind twice"),
    ],
)
def test_value_of_information_refuses_bad_input_before_work(argv, message, capsys):
    script = load_script("value_of_information", FOLDER)
    if message is None:  # a valid neighbour of the bad inputs
        assert script.parse_args(argv).analogs == "own"
        return
    with pytest.raises(SystemExit):
        script.parse_args(argv)
    assert message in capsys.readouterr().err
