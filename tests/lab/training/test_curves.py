"""Learning curves: read from a run's history, areas, and recipes paired by seed and episode."""

import json

import numpy as np
import pytest

pytest.importorskip("torch")

from coreenv_lab.training.curves import LearningCurve, paired_runs, read_curve  # noqa: E402


def write_run(folder, steps, rates):
    """A train_mara-like history: a start entry and evaluations with per-episode rates."""
    folder.mkdir(parents=True)
    history = [{"phase": "imitation", "round": 0, "eval": 0.1}]  # no per-episode rates: skipped
    history += [{"phase": "held_ppo", "steps": s, "rates": r} for s, r in zip(steps, rates)]
    (folder / "history.json").write_text(json.dumps(history))
    return folder


def test_a_curve_reads_the_evaluations_with_per_episode_rates(tmp_path):
    run = write_run(tmp_path / "shaped_1", [0, 10, 30], [[0.0, 0.2], [0.4, 0.6], [0.5, 0.5]])
    curve = read_curve(run)
    assert curve.name == "shaped_1" and curve.steps.tolist() == [0, 10, 30]
    np.testing.assert_allclose(curve.means, [0.1, 0.5, 0.5])
    assert (curve.final, curve.best) == (0.5, 0.5)


def test_the_area_is_the_completion_averaged_over_steps():
    curve = LearningCurve("r", np.array([0, 10, 30]), np.array([[0.0], [1.0], [1.0]]))
    # trapezoids: 10 steps at 0.5, then 20 at 1.0 -> 25 / 30
    np.testing.assert_allclose(curve.area(), [25 / 30])


def test_recipes_are_paired_by_seed_on_the_same_episodes():
    steps = np.array([0, 10])
    a = [LearningCurve("a1", steps, np.array([[0.0, 0.0], [0.5, 0.7]]))]
    a.append(LearningCurve("a2", steps, np.array([[0.0, 0.0], [0.6, 0.6]])))
    b = [LearningCurve(f"b{i}", steps, np.array([[0.0, 0.0], [0.4, 0.4]])) for i in (1, 2)]
    final = paired_runs(a, b, "final")
    np.testing.assert_allclose(final.per_seed, [0.2, 0.2])
    np.testing.assert_allclose(final.per_seed_se, [0.1, 0.0])  # differences 0.1 and 0.3
    assert final.mean == pytest.approx(0.2) and final.se == pytest.approx(0.0)
    with pytest.raises(ValueError, match="need runs paired by seed, got 2 and 1"):
        paired_runs(a, b[:1], "final")
    with pytest.raises(ValueError, match="measure must be one of"):
        paired_runs(a, b, "best")


def test_a_folder_without_history_or_rates_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a train_mara run folder"):
        read_curve(tmp_path)
    run = write_run(tmp_path / "short", [0], [[0.5]])
    with pytest.raises(ValueError, match="has 1 evaluations with per-episode rates; need 2"):
        read_curve(run)


def test_the_report_spreads_and_tables_the_curves():
    from coreenv_lab.training.curves_report import curve_table, spread

    assert spread(np.array([0.5, 0.7])) == "60.0 ± 14.1 (50.0–70.0)"
    curves = [
        LearningCurve("a", np.array([0, 10]), np.array([[0.5, 0.5], [0.6, 0.8]])),
        LearningCurve("b", np.array([0, 10]), np.array([[0.5, 0.5], [0.8, 0.6]])),
    ]
    lines = curve_table({"arm": curves})
    assert lines[0].startswith("## Completion (%) on the 2 selection episodes")
    assert lines[-1] == "| 1 | 0.00 | 70.0 ± 0.0 (70.0–70.0) |"
