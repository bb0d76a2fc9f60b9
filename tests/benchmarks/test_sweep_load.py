"""Smoke tests of `coreenv sweep` and `coreenv stress`: tables, resume, user schedulers, the Ray
backend; and the scripts ablations.py and compare_rows.py."""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from importlib import import_module
from pathlib import Path

import pytest

from coreenv_lab.ablations import ABLATION_METHODS, ABLATIONS
from helpers import coreenv_executable, load_script
from mara_agents.cli import stress, sweep
from mara_agents.sweep import METHODS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

TINY = ["--task-sets", "synthetic", "--arrival-prob", "0.04", "--episodes", "2", "--workers", "1"]


def rows_of(out):
    return [json.loads(line) for line in (out / "rows.jsonl").read_text().splitlines()]


def test_tiny_sweep_prints_tables_saves_reports_and_resumes(tmp_path, capsys):
    argv = [*TINY, "--methods", "fifo", "lara", "mara", "oracle", "--out", str(tmp_path)]
    sweep.main(argv)
    out = capsys.readouterr().out
    assert out.startswith(f"results go to {tmp_path}/") and f"results in {tmp_path}/" in out
    assert "| fifo |" in out and "| lara |" in out and "+0.0" in out  # LARA's margin over itself
    assert "| mara |" in out and "full_queue_fraction" in out
    assert len(rows_of(tmp_path)) == 8
    for name in ("table.md", "cells.csv", "completion.png"):
        assert (tmp_path / name).stat().st_size > 0
    sweep.main(argv)
    assert "8 of 8 episodes already done" in capsys.readouterr().out
    assert len(rows_of(tmp_path)) == 8


def test_interrupted_row_is_redone(tmp_path, capsys):
    argv = [*TINY, "--methods", "fifo", "--out", str(tmp_path)]
    sweep.main(argv)
    lines = (tmp_path / "rows.jsonl").read_text().splitlines()
    (tmp_path / "rows.jsonl").write_text(lines[0] + "\n" + lines[1][:20])  # cut mid-line
    sweep.main(argv)
    assert "1 of 2 episodes already done" in capsys.readouterr().out


def test_user_scheduler_as_module_class_is_named_by_its_scheduler(tmp_path, capsys):
    sweep.main([*TINY, "--methods", "mara_agents.schedulers:EDF", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "| edf |" in out and "| mara_agents.schedulers:EDF |" not in out  # EDF.name
    assert {row["method"] for row in rows_of(tmp_path)} == {"edf"}


def test_a_lab_method_plays_under_its_scheduler_s_name(tmp_path, capsys):
    sweep.main([*TINY, "--methods", "coreenv_lab.methods:hop_wls", "--out", str(tmp_path)])
    assert "| hop_wls |" in capsys.readouterr().out
    assert {row["method"] for row in rows_of(tmp_path)} == {"hop_wls"}


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--methods", "magic", r"unknown method 'magic': use one of \[.*'fifo'"),
        ("--task-sets", "ood_rl", r"task set 'ood_rl'.*Valid names: \[.*'rl_ood'"),
        ("--task-sets", "runs.csv", r"task set 'runs.csv': no CSV of training logs at"),
        ("--arrival-prob", "1.5", r"--arrival-prob: an arrival probability must be .* got 1.5"),
        ("--methods", "no_such_module:Cls", r"cannot import scheduler.*current directory"),
        ("--information", "all", r"--information: invalid choice: 'all'"),
        ("--warm-history", "4", r"--warm-history .* needs --information history; got 4"),
        ("--clusters", "0", r"--clusters: a cluster is written 'M/K name'"),
        ("--clusters", "8/16 fast", r"--clusters: cluster '8/16 fast': the name must be one of"),
        (
            "--methods",
            "mara_wls",
            r"method 'mara_wls' is a study's variant .*coreenv_lab\.methods:mara_wls",
        ),
        ("--methods", "hop_fm", r"method 'hop_fm' is now called 'hop'"),
    ],
)
def test_bad_names_exit_2_with_one_line_before_any_work(tmp_path, capsys, option, value, message):
    with pytest.raises(SystemExit) as exit_info:
        sweep.main([*TINY, option, value, "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("coreenv sweep: error: ") and error.count("\n") == 1, error
    assert re.search(message, error), error
    assert not (tmp_path / "out").exists()  # nothing started


def test_a_policy_that_reads_no_cluster_on_one_exits_2_before_any_work(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    argv = [*TINY, "--methods", "ppo", "--clusters", "4 mixed_costly", "--out", str(tmp_path / "o")]
    with pytest.raises(SystemExit) as exit_info:
        sweep.main(argv)
    error = capsys.readouterr().err
    assert exit_info.value.code == 2 and error.count("\n") == 1, error
    assert "method 'ppo': this policy reads slot blocks of 9 columns" in error
    assert not (tmp_path / "o").exists()


def test_help_documents_every_option_and_lists_the_valid_names(capsys):
    with pytest.raises(SystemExit):
        sweep.parse_args(["--help"])
    text = capsys.readouterr().out
    for option in (
        "--arrival-prob",
        "--task-sets",
        "--methods",
        "--seeds",
        "--episodes",
        "--workers",
        "--backend",
        "--ray-address",
        "--out",
        "--strict",
        "--quick",
    ):
        assert option in text
    assert "rl_ood" in text and "module:Class" in text
    for name, method in METHODS.items():  # each method with what it is, one line each
        assert re.search(rf"^  {name} +{re.escape(method.about)}$", text, re.M), name
    assert "mara_wls" not in text  # a lab method (coreenv_lab.methods) is not the package's


def test_ray_backend_runs_the_same_rows(tmp_path):
    # CI sets COREENV_REQUIRE_RAY=1 (.ci/run installs Ray): there a missing Ray fails, not skips
    ray = (
        import_module("ray")
        if os.environ.get("COREENV_REQUIRE_RAY")
        else pytest.importorskip("ray")
    )
    argv = [*TINY, "--methods", "fifo", "--backend", "ray", "--out", str(tmp_path / "ray")]
    try:
        sweep.main(argv)
    finally:
        ray.shutdown()
    sweep.main([*TINY, "--methods", "fifo", "--out", str(tmp_path / "local")])
    strip = lambda rows: sorted((r["seed"], r["completion_rate"]) for r in rows)  # noqa: E731
    assert strip(rows_of(tmp_path / "ray")) == strip(rows_of(tmp_path / "local"))


def test_stress_script_prints_every_method(capsys):
    stress.main(["--methods", "fifo", "oracle", "--episodes", "1", "--task-set", "synthetic"])
    out = capsys.readouterr().out
    assert "| fifo | 0.0 |" in out and "| oracle | 65.0 | 0.0 | 13.0 | 0.0 |" in out


def test_stress_script_validates_names_before_work(capsys):
    with pytest.raises(SystemExit) as exit_info:
        stress.main(["--methods", "fifo", "--task-set", "ood_rl"])
    assert exit_info.value.code == 2 and "Valid names" in capsys.readouterr().err


def test_ablations_script_prints_its_table(tmp_path, capsys):
    ablations = load_script("ablations")
    ablations.main(
        [
            "--task-sets",
            "synthetic",
            "--episodes",
            "1",
            "--workers",
            "1",
            "--methods",
            "lara",
            "fifo",
            "--out",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert "| LARA (LARA + WLS) |" in out and "| fifo |" in out


def test_ablations_script_plays_the_lab_s_variants_under_their_rows(tmp_path, capsys):
    ablations = load_script("ablations")
    config = ablations.parse_args(["--task-sets", "synthetic", "--episodes", "1", "--workers", "1"])
    assert config.methods == tuple(ABLATION_METHODS.values())
    assert config.names == tuple(ABLATIONS)  # coreenv_lab.methods:mara_wls plays as mara_wls
    argv = ["--task-sets", "synthetic", "--episodes", "1", "--workers", "1", "--out", str(tmp_path)]
    ablations.main([*argv, "--methods", "lara", "coreenv_lab.methods:mara_wls"])
    out = capsys.readouterr().out
    assert "| LARA (LARA + WLS) |" in out and "| MARA-WLS (MAT + WLS) |" in out
    assert (tmp_path / "ablations.md").read_text() in out


def write_scheduler(folder, body):
    """A user's scheduler module ``mysched`` in ``folder`` (as if written in their own file)."""
    source = """
        from mara_agents.schedulers import Scheduler, serve_in_order
        import numpy as np

        class Mine(Scheduler):
            def act(self, observations, infos):
                occupied = np.flatnonzero(self.env.view().occupied[0])
                return serve_in_order(self.env, {body})
    """
    (folder / "mysched.py").write_text(textwrap.dedent(source).format(body=body))
    sys.modules.pop("mysched", None)  # a new run is a new process: it imports the file afresh


@pytest.fixture
def user_dir(tmp_path, monkeypatch):
    """The current directory holds the user's module and is not on sys.path (no PYTHONPATH)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    yield tmp_path
    sys.modules.pop("mysched", None)


def test_module_class_is_found_in_the_current_directory(user_dir, capsys):
    write_scheduler(user_dir, "occupied")
    sweep.main([*TINY, "--methods", "mysched:Mine", "--out", str(user_dir / "out")])
    assert "| mysched:Mine |" in capsys.readouterr().out


def test_edited_scheduler_redoes_its_rows_instead_of_reusing_them(user_dir, capsys):
    argv = [*TINY, "--methods", "mysched:Mine", "fifo", "--out", str(user_dir / "out")]
    write_scheduler(user_dir, "occupied")
    sweep.main(argv)
    first = {r["seed"]: r for r in rows_of(user_dir / "out") if r["method"] == "mysched:Mine"}
    write_scheduler(user_dir, "occupied[::-1]")  # the user edits their scheduler
    sweep.main(argv)
    out = capsys.readouterr().out
    assert "2 of 4 episodes already done; running 2" in out  # FIFO's rows are still good
    assert "2 earlier rows of these episodes were made by other code" in out
    rows = [r for r in rows_of(user_dir / "out") if r["method"] == "mysched:Mine"]
    assert len(rows) == 4 and rows[2]["fingerprint"] != first[rows[2]["seed"]]["fingerprint"]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("class Mine:\n    def __init__(self, x): pass\n", "missing 1 required positional"),
        ("class Mine:\n    pass\n", "has no reset or act method"),
        ("class Mine(:\n", "cannot import scheduler"),
        (
            "from mara_agents.schedulers import FIFO\n"
            "class Mine(FIFO):\n    observation_predictor = 'magic'\n",
            "observation_predictor must be",
        ),
    ],
)
def test_a_broken_user_scheduler_exits_2_with_one_line(user_dir, capsys, source, message):
    (user_dir / "mysched.py").write_text(source)
    with pytest.raises(SystemExit) as exit_info:
        sweep.main([*TINY, "--methods", "mysched:Mine", "--out", str(user_dir / "out")])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_invalid_actions_are_counted_warned_about_and_strict_stops_them(user_dir, capsys):
    write_scheduler(user_dir, "occupied + 1")  # an off-by-one bug
    out_dir = user_dir / "out"
    sweep.main([*TINY, "--methods", "mysched:Mine", "fifo", "--out", str(out_dir)])
    out = capsys.readouterr().out
    buggy = [r for r in rows_of(out_dir) if r["method"] == "mysched:Mine"]
    per_episode = sum(r["conflicts"] for r in buggy) / len(buggy)
    assert per_episode > 0
    assert re.search(r"\| mysched:Mine \|.* \| [1-9][0-9.]* \|\n", out)  # the table's last column
    assert f"WARNING: mysched:Mine made {per_episode:.1f} invalid actions per episode" in out
    assert "WARNING: fifo" not in out
    header, *lines = (out_dir / "cells.csv").read_text().splitlines()
    column = header.split(",").index("conflicts_mean")
    assert float(next(x for x in lines if "mysched" in x).split(",")[column]) == per_episode
    with pytest.raises(SystemExit, match=r"--strict: mysched:Mine on synthetic .* slot"):
        sweep.main([*TINY, "--methods", "mysched:Mine", "--strict", "--out", str(out_dir)])


def test_a_user_scheduler_that_declares_nothing_reads_real_estimates(user_dir, capsys):
    source = """
        import numpy as np
        from coreenv import NO_PREDICTOR, SlotFeature
        from mara_agents.schedulers import Scheduler, serve_in_order

        SEEN = []

        class Reader(Scheduler):  # declares no observation_predictor
            def act(self, observations, infos):
                m, k = self.env.config.num_nodes, self.env.config.num_slots
                slots = observations["node_0"]["observation"][m + 3 :].reshape(k, -1)
                ready = slots[:, SlotFeature.READY] == 1
                assert not np.any(slots[ready, SlotFeature.EST_REMAINING] == NO_PREDICTOR)
                SEEN.extend(slots[ready, SlotFeature.EST_P_SUCCESS].tolist())
                return serve_in_order(self.env, np.flatnonzero(slots[:, SlotFeature.OCCUPIED]))
    """
    (user_dir / "reader.py").write_text(textwrap.dedent(source))
    sweep.main([*TINY, "--methods", "reader:Reader", "--out", str(user_dir / "out")])
    import reader

    assert reader.SEEN and any(0.0 < p for p in reader.SEEN)  # real estimates, not zeros
    sys.modules.pop("reader", None)


def test_tutorial_example_runs_in_the_sweep_from_its_folder(tmp_path):
    """docs/tutorial.md: the example scheduler beside the baselines, then the plot script."""
    work = tmp_path / "examples"
    shutil.copytree(EXAMPLES, work)
    out = tmp_path / "out"
    command = [
        coreenv_executable(),
        "sweep",
        *TINY,
        "--methods",
        "fifo",
        "lara",
        "oracle",
        "my_scheduler:ShortestHopeful",
        "--out",
        str(out),
    ]
    result = subprocess.run(command, cwd=work, capture_output=True, text=True, check=True)
    assert "| shortest_hopeful |" in result.stdout and "WARNING" not in result.stdout
    subprocess.run([sys.executable, "plot_margins.py", str(out)], cwd=work, check=True)
    assert (out / "margins.png").stat().st_size > 0


def test_compare_rows_finds_no_difference_in_a_rerun_and_names_a_changed_metric(tmp_path, capsys):
    compare_rows = load_script("compare_rows")
    sweep.main([*TINY, "--methods", "fifo", "--out", str(tmp_path / "a")])
    sweep.main([*TINY, "--methods", "fifo", "--out", str(tmp_path / "b")])
    a, b = tmp_path / "a" / "rows.jsonl", tmp_path / "b" / "rows.jsonl"
    capsys.readouterr()
    compare_rows.main([str(a), str(b)])
    assert "2 and 2 rows; 0 differences." in capsys.readouterr().out
    rows = rows_of(tmp_path / "b")
    rows[0]["successes"] += 1
    b.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(SystemExit):
        compare_rows.main([str(a), str(b)])
    assert "successes" in capsys.readouterr().out


def test_compare_rows_prints_paired_differences_with_their_standard_error(tmp_path, capsys):
    compare_rows = load_script("compare_rows")
    sweep.main([*TINY, "--methods", "fifo", "--out", str(tmp_path / "a")])
    a, b = tmp_path / "a" / "rows.jsonl", tmp_path / "b.jsonl"
    rows = rows_of(tmp_path / "a")
    assert len(rows) == 2
    rows[0]["completion_rate"] += 0.1
    rows[1]["completion_rate"] += 0.3
    b.write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    compare_rows.main([str(a), str(b), "--paired", "completion_rate"])
    out = capsys.readouterr().out
    assert "| fifo | synthetic | 0.04 | 2 | +0.2000 ± 0.1000 | 100% | 0% |" in out
    for r in rows:
        r["method"] = "edf"
    b.write_text("".join(json.dumps(r) + "\n" for r in rows))
    compare_rows.main([str(a), str(b), "--paired", "completion_rate", "--methods", "fifo", "edf"])
    out = capsys.readouterr().out
    assert "| edf vs fifo | synthetic | 0.04 | 2 | +0.2000 ± 0.1000 | 100% | 0% |" in out


@pytest.mark.parametrize("old", ["--loads", "--load"])
def test_the_old_option_name_still_sets_the_arrival_probabilities_with_a_warning(capsys, old):
    (config,) = sweep.parse_args([*TINY[:2], old, "0.05", "0.06", "--out", "unused"])
    assert config.arrival_prob == (0.05, 0.06)
    warning = capsys.readouterr().err
    assert warning == (
        "coreenv sweep: warning: --loads is deprecated and will be removed in 0.4.0; "
        "use --arrival-prob\n"
    )


def test_the_information_model_is_a_sweep_option(tmp_path, capsys):
    argv = [*TINY, "--methods", "lara", "--information", "history", "--warm-history", "3"]
    (config,) = sweep.parse_args([*argv, "--out", str(tmp_path)])
    assert dict(config.env) == {"information": "history", "warm_history": 3}
    assert sweep.parse_args(TINY)[0].env == {}
    sweep.main([*argv, "--out", str(tmp_path / "history")])
    sweep.main([*TINY, "--methods", "lara", "--out", str(tmp_path / "prefix")])
    rows = [rows_of(tmp_path / name) for name in ("history", "prefix")]
    assert [r["completion_rate"] for r in rows[0]] == [r["completion_rate"] for r in rows[1]]


def test_the_cluster_is_a_sweep_option_with_loads_per_unit_of_node_speed(tmp_path, capsys):
    (config,) = sweep.parse_args(["--clusters", "8/16 mixed_costly", "--methods", "lara"])
    assert dict(config.env) == {
        "num_nodes": 8,
        "num_slots": 16,
        "node_speeds": "mixed",
        "switch_cost": 5,
    }
    assert config.arrival_prob == (0.16, 0.2, 0.24, 0.28)  # speeds 1, 1, 2, 4 twice: 16 units
    (equal,) = sweep.parse_args(["--clusters", "8", "--methods", "lara"])
    assert equal.arrival_prob == (0.08, 0.1, 0.12, 0.14)
    (given,) = sweep.parse_args([*TINY, "--methods", "lara", "--clusters", "8/10"])
    assert given.arrival_prob == (0.04,) and given.env["num_slots"] == 10
    argv = [*TINY, "--methods", "fifo", "lara", "--clusters", "2 costly_moves"]
    sweep.main([*argv, "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "Cluster: 2 nodes, 4 slots; node speeds 1, 1; switch cost 5 steps" in out
    assert "switches / success" in out
    assert all(row["switches"] >= 0 for row in rows_of(tmp_path))


def test_clusters_sweeps_each_cluster_into_its_folder_then_tables_every_method_on_each(
    tmp_path, capsys
):
    shapes = ["2/4 equal", "2/4 costly_moves"]
    sweep.main([*TINY, "--methods", "fifo", "lara", "--clusters", *shapes, "--out", str(tmp_path)])
    out = capsys.readouterr().out
    for shape, folder in zip(shapes, ["2-4_equal", "2-4_costly_moves"]):
        rows = rows_of(tmp_path / folder)
        assert {row["env"].get("switch_cost", 0) for row in rows} == {5 * ("costly" in shape)}
        assert f"| {shape} | synthetic |" in out
    assert "Switches per completed task" in out and (tmp_path / "clusters.md").is_file()
