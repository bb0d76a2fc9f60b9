"""Smoke test of studies/learnability/feature_scale.py, and what `feature_scales` gathers."""

import pytest

from coreenv import Decisions, SlotFeature, make_config
from coreenv.layout import OBS_BOUND
from coreenv_lab.training.observed import feature_scales, play_decisions
from helpers import STUDIES, load_script
from mara_agents.schedulers import LARA

feature_scale = load_script("feature_scale", STUDIES / "learnability")
CONFIG = make_config(None, task_set="id_train", arrival_prob=0.04)


def test_decisions_are_played_to_the_end_of_the_episode():
    decisions = list(play_decisions(LARA(), CONFIG, 900_000, Decisions(at="events")))
    assert len(decisions) > 10
    last = next(iter(decisions[-1].infos.values()))
    assert "metrics" in last  # the episode's end is reported by its last decision


def test_slot_features_are_read_on_occupied_slots_only_and_stay_in_bounds():
    scales = {s.name: s for s in feature_scales(LARA(), CONFIG, [900_000], Decisions("events"))}
    occupied = scales[SlotFeature.OCCUPIED.name.lower()]
    assert (occupied.low, occupied.high) == (1.0, 1.0)
    assert all(
        -OBS_BOUND <= s.low <= s.median <= s.p99 <= s.high <= OBS_BOUND for s in scales.values()
    )
    assert scales["est_remaining"].high == -1.0  # LARA attaches no predictor: NO_PREDICTOR


def test_the_script_prints_one_row_per_feature(capsys):
    feature_scale.main(["--method", "lara", "--episodes", "1"])
    out = capsys.readouterr().out
    assert "| time_left | " in out and "| est_p_success | " in out


def test_the_script_plays_the_lab_s_mara_wls_unless_told():
    pytest.importorskip("torch")
    args = feature_scale.parse_args([])
    assert args.method == "coreenv_lab.methods:mara_wls"
    assert feature_scale.make_scheduler(args.method).name == "mara_wls"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--episodes", "0"], "argument --episodes: a count must be an int >= 1"),
        (["--method", "magic"], "unknown method 'magic'"),
        (["--method", "mara_wls"], "'mara_wls' is a study's variant of MARA"),
    ],
)
def test_bad_input_is_refused_before_any_work(argv, message, capsys):
    with pytest.raises(SystemExit):
        feature_scale.parse_args(argv)
    assert message in capsys.readouterr().err
