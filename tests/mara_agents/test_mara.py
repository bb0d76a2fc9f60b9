"""MARA: the shipped variants load offline and act as feasible, deterministic schedulers."""

import pytest

pytest.importorskip("torch")

import coreenv  # noqa: E402
from helpers import play_checking_matchings  # noqa: E402
from mara_agents import evaluate  # noqa: E402
from mara_agents.predictors import WLSPredictor  # noqa: E402
from mara_agents.schedulers.mara import MARA, VARIANTS  # noqa: E402


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_pretrained_variants_load_offline_and_act_feasibly(variant):
    mara = MARA.pretrained(variant)
    assert mara.name == variant and mara.observation_predictor is not None
    env = coreenv.parallel_env(
        task_set="id", arrival_horizon=120, seed=0, predictor=mara.observation_predictor
    )
    play_checking_matchings(env, mara)


def test_mara_wls_is_deterministic():
    first = evaluate(MARA.pretrained("mara_wls"), episodes=1, seed=3, arrival_horizon=150)
    second = evaluate(MARA.pretrained("mara_wls"), episodes=1, seed=3, arrival_horizon=150)
    assert first == second
    assert isinstance(MARA.pretrained("mara_wls").observation_predictor, WLSPredictor)


def test_missing_checkpoint_is_reported(tmp_path):
    with pytest.raises(FileNotFoundError, match="train_mara.py"):
        MARA.pretrained("mara", path=tmp_path / "none.pt")
