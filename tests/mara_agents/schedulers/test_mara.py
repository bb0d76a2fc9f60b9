"""MARA: the shipped variants load offline and act as feasible, deterministic schedulers."""

import pytest

torch = pytest.importorskip("torch")

import coreenv  # noqa: E402
from helpers import play_checking_matchings  # noqa: E402
from mara_agents import evaluate  # noqa: E402
from mara_agents.policy import MAT, MATConfig  # noqa: E402
from mara_agents.predictors import PREDICTORS, WLSPredictor  # noqa: E402
from mara_agents.schedulers.mara import MARA, VARIANTS, MARAVariant  # noqa: E402


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
    with pytest.raises(ValueError, match="shipped variants"):
        MARA.pretrained("mara_typo")


def test_every_variant_is_one_entry_naming_its_predictor_beta_and_checkpoint():
    for name, variant in VARIANTS.items():
        assert variant.predictor in PREDICTORS and variant.path.is_file()
        state = torch.load(variant.path, map_location="cpu", weights_only=True)
        assert state["predictor"] == variant.predictor, name
        assert state["shaping_beta"] == variant.shaping_beta, name
    assert VARIANTS["mara_noshape"].shaping_beta == 0.0 and VARIANTS["mara"].shaping_beta == 1.0


def test_bad_variant_is_refused():
    with pytest.raises(ValueError, match="MARAVariant.predictor must be one of"):
        MARAVariant(predictor="oracle", shaping_beta=1.0, checkpoint="x.pt")
    with pytest.raises(ValueError, match="MARAVariant.shaping_beta must be >= 0, got -1"):
        MARAVariant(predictor="wls", shaping_beta=-1, checkpoint="x.pt")


def test_save_writes_what_pretrained_reads(tmp_path):
    torch.manual_seed(0)
    mara = MARA(MAT(MATConfig()), WLSPredictor(), name="mine")
    path = tmp_path / "deep" / "mine.pt"
    mara.save(path, predictor="wls", shaping_beta=0.5, history=[{"phase": "imitation"}])
    loaded = MARA.pretrained("mine", path=path)
    assert loaded.name == "mine" and isinstance(loaded.observation_predictor, WLSPredictor)
    for a, b in zip(mara.policy.state_dict().values(), loaded.policy.state_dict().values()):
        assert torch.equal(a, b)
    state = torch.load(path, map_location="cpu", weights_only=True)
    assert state["shaping_beta"] == 0.5 and state["history"] == [{"phase": "imitation"}]
    with pytest.raises(ValueError, match="predictor must be one of"):
        mara.save(path, predictor="truth", shaping_beta=0.0)
