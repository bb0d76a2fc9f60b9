"""Smoke test of studies/shaping/shaping_scale.py, and the split it reports."""

import numpy as np
import pytest

from coreenv import Decisions, make_config
from coreenv_lab.training.shaping import decision_rewards, lambda_sums
from helpers import STUDIES, load_script
from mara_agents.schedulers import LARA

shaping_scale = load_script("shaping_scale", STUDIES / "shaping")


def test_the_split_adds_up_to_the_shaped_reward_and_the_shaping_telescopes_away():
    config = make_config(None, task_set="id_train", arrival_prob=0.04)
    split = decision_rewards(LARA(), config, 900_000, Decisions(at="events"))
    assert split.successes.sum() > 0 and np.abs(split.shaping).max() > 0
    # the potential starts and ends at 0, so over an episode only the completions remain
    assert split.shaping.sum() == pytest.approx(0.0, abs=1e-9)


def test_lambda_sums_weigh_later_decisions_by_powers_of_lambda():
    np.testing.assert_allclose(lambda_sums(np.array([1.0, 0.0, 2.0]), 0.5), [1.5, 1.0, 2.0])


def test_the_script_prints_one_row_per_method(capsys):
    shaping_scale.main(["--methods", "lara", "random", "--episodes", "2"])
    out = capsys.readouterr().out
    assert "| lara | " in out and "| random | " in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [(["--lam", "1.5"], "--lam must be in"), (["--methods", "magic"], "unknown method 'magic'")],
)
def test_bad_input_is_refused_before_any_work(argv, message, capsys):
    with pytest.raises(SystemExit):
        shaping_scale.parse_args(argv)
    assert message in capsys.readouterr().err
