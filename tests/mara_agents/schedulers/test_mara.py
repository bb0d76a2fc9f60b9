"""MARA: the shipped variants load offline and act as feasible, deterministic schedulers."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import coreenv  # noqa: E402
from helpers import play_checking_matchings  # noqa: E402
from mara_agents import evaluate  # noqa: E402
from mara_agents.evaluation import run_episodes  # noqa: E402
from mara_agents.policy import MAT, MATConfig  # noqa: E402
from mara_agents.predictors import POLICY_PREDICTORS, WLSPredictor  # noqa: E402
from mara_agents.schedulers.mara import MARA, VARIANTS, MARAVariant  # noqa: E402


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_pretrained_variants_load_offline_and_act_feasibly(variant):
    mara = MARA.pretrained(variant)
    assert mara.name == variant and mara.observation_predictor is not None
    shown = {"information": "history"} if mara.observation_kind_fields else {}
    shown |= {"node_speeds": "uniform"} if mara.observation_cluster else {}
    env = coreenv.parallel_env(
        task_set="id", arrival_horizon=120, seed=0, predictor=mara.observation_predictor, **shown
    )
    play_checking_matchings(env, mara)


def test_a_policy_reading_the_cluster_asks_for_an_environment_that_shows_it():
    env = coreenv.parallel_env(task_set="id", seed=0)
    env.reset()
    with pytest.raises(ValueError, match="build its environment with EnvConfig.node_speeds set"):
        MARA.pretrained("mara").act_view(env.view())


@pytest.mark.parametrize(
    "cluster",
    [
        {"num_nodes": 8, "num_slots": 16, "node_speeds": "uniform"},
        {"num_nodes": 16, "num_slots": 32, "node_speeds": "uniform"},
        {"num_nodes": 6, "num_slots": 9, "node_speeds": "uniform"},
        {"num_nodes": 8, "num_slots": 16, "node_speeds": "mixed", "switch_cost": 5},
        {"num_nodes": 3, "num_slots": 5, "node_speeds": (1, 2, 3), "switch_cost": 2},
    ],
)
def test_the_shipped_mara_plays_any_cluster(cluster):
    mara = MARA.pretrained("mara")
    env = coreenv.parallel_env(
        task_set="id",
        arrival_horizon=60,
        seed=0,
        arrival_prob=0.3,
        predictor=mara.observation_predictor,
        **cluster,
    )
    play_checking_matchings(env, mara)


def test_the_shipped_mara_reads_the_cluster_and_decides_at_events():
    mara = MARA.pretrained("mara")
    assert mara.policy.config.sets and mara.observation_cluster
    assert mara.decisions == coreenv.Decisions("events", hold=8)
    rows = run_episodes(mara, [(coreenv.make_config(None, task_set="id"), 1_000_000)])
    assert 0.0 < rows[0]["completion_rate"] <= 1.0


def test_a_network_of_one_size_names_its_size():
    torch.manual_seed(0)
    mara = MARA(MAT(MATConfig()), WLSPredictor())
    env = coreenv.parallel_env(task_set="id", num_nodes=8, num_slots=16, seed=0)
    env.reset()
    with pytest.raises(ValueError, match="4 nodes and 8 slots only.*shipped 'mara' reads sets"):
        mara.act_view(env.view())


def test_a_mara_on_wls_is_deterministic():
    torch.manual_seed(0)
    mara = MARA(MAT(MATConfig()), WLSPredictor())
    first = evaluate(mara, episodes=1, seed=3, arrival_horizon=150)
    assert first == evaluate(mara, episodes=1, seed=3, arrival_horizon=150)


def test_missing_checkpoint_is_reported(tmp_path):
    with pytest.raises(FileNotFoundError, match="train one with `coreenv train-mara`"):
        MARA.pretrained("mara", path=tmp_path / "none.pt")
    with pytest.raises(ValueError, match="shipped variants"):
        MARA.pretrained("mara_typo")


def test_every_variant_is_one_entry_naming_its_predictor_beta_and_checkpoint():
    assert sorted(VARIANTS) == ["mara"]
    for name, variant in VARIANTS.items():
        assert variant.predictor in POLICY_PREDICTORS and variant.path.is_file()
        state = torch.load(variant.path, map_location="cpu", weights_only=True)
        assert state["predictor"] == variant.predictor, name
        assert state["shaping_beta"] == variant.shaping_beta == 1.0, name
        assert state["mat_config"].get("sets", False) == variant.sets, name
        assert (state["mat_config"]["cluster_column"] >= 0) == variant.reads_cluster, name


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
    mara.save(path, predictor="truth", shaping_beta=0.0)
    with pytest.raises(ValueError, match="reads the predictor 'truth'.*pass it in predictors="):
        MARA.pretrained("mine", path=path)
    assert MARA.pretrained("mine", path=path, predictors={"truth": WLSPredictor()}).name == "mine"


class SpreadWLS(WLSPredictor):
    """WLS with quantiles: its point estimate scaled by 0.5 + level (increasing in the level)."""

    def estimate_quantiles(self, prefixes, targets, levels):
        remaining, _ = self.estimate_batch(prefixes, targets, np.full(len(prefixes), 10**6))
        return remaining[:, None] * (0.5 + np.asarray(levels))[None]


LEVELS = (0.1, 0.5, 0.9)


def quantile_mara():
    torch.manual_seed(0)
    return MARA(MAT(MATConfig(slot_features=9 + len(LEVELS))), SpreadWLS(), quantiles=LEVELS)


def test_a_policy_reading_quantiles_plays_environments_built_with_them():
    mara = quantile_mara()
    assert mara.observation_quantiles == LEVELS
    first = evaluate(mara, episodes=2, seed=5, arrival_horizon=100)
    assert first == evaluate(mara, episodes=2, seed=5, arrival_horizon=100)
    assert 0.0 <= first["completion_rate"] <= 1.0


def test_quantile_levels_travel_with_the_checkpoint(tmp_path):
    quantile_mara().save(tmp_path / "q.pt", predictor="wls", shaping_beta=1.0)
    assert MARA.pretrained("q", path=tmp_path / "q.pt").observation_quantiles == LEVELS
    assert MARA.pretrained("mara").observation_quantiles == ()  # shipped before quantiles


def test_the_symlog_setting_travels_with_the_checkpoint(tmp_path):
    torch.manual_seed(0)
    MARA(MAT(MATConfig(symlog=True)), WLSPredictor()).save(
        tmp_path / "s.pt", predictor="wls", shaping_beta=1.0
    )
    assert MARA.pretrained("s", path=tmp_path / "s.pt").policy.config.symlog
    assert not MARA.pretrained("mara").policy.config.symlog  # shipped before symlog


def test_the_decision_form_travels_with_the_checkpoint_and_runners_hold_it(tmp_path):
    torch.manual_seed(0)
    held = coreenv.Decisions(at="events", hold=4)
    MARA(MAT(MATConfig()), WLSPredictor(), decisions=held).save(
        tmp_path / "e.pt", predictor="wls", shaping_beta=1.0
    )
    loaded = MARA.pretrained("e", path=tmp_path / "e.pt")
    assert loaded.decisions == held
    every_step = MARA(loaded.policy, loaded.observation_predictor)
    short = {"arrival_horizon": 150}
    assert evaluate(loaded, episodes=2, seed=3, **short) != evaluate(every_step, 2, 3, **short)


def test_a_layout_the_policy_did_not_learn_is_refused():
    with pytest.raises(ValueError, match="reads 9 columns per slot; 3 quantile levels"):
        MARA(MAT(MATConfig()), SpreadWLS(), quantiles=LEVELS)
    with pytest.raises(ValueError, match=r"reads the quantile levels \(0.1, 0.5, 0.9\)"):
        evaluate(quantile_mara(), episodes=1, seed=0, estimate_quantiles=(0.25, 0.75))


def test_a_policy_trained_without_categories_plays_episodes_that_show_descriptions():
    torch.manual_seed(0)
    mara = MARA(MAT(MATConfig()), WLSPredictor())
    assert mara.observation_kind_fields == ()
    plain = evaluate(mara, episodes=2, seed=4, arrival_horizon=120)
    assert evaluate(mara, episodes=2, seed=4, arrival_horizon=120, information="history") == plain


def test_category_fields_travel_with_the_checkpoint_and_shape_the_episodes(tmp_path):
    torch.manual_seed(0)
    fields = ("family", "optimizer")
    mara = MARA(MAT(MATConfig(slot_features=11)), WLSPredictor(), kind_fields=fields)
    mara.save(tmp_path / "k.pt", predictor="wls", shaping_beta=1.0)
    loaded = MARA.pretrained("k", path=tmp_path / "k.pt")
    assert loaded.observation_kind_fields == fields
    assert MARA.pretrained("mara").observation_kind_fields == ()  # trained without categories
    result = evaluate(loaded, episodes=1, seed=2, arrival_horizon=120, information="description")
    assert 0.0 <= result["completion_rate"] <= 1.0
    with pytest.raises(ValueError, match="play it where tasks are described"):
        evaluate(loaded, episodes=1, seed=2, arrival_horizon=120)
    with pytest.raises(ValueError, match=r"category fields \('family',\) make 10"):
        MARA(MAT(MATConfig()), WLSPredictor(), kind_fields=("family",))


def played_actions(mara: MARA, episodes: list) -> list[np.ndarray]:
    """Every joint action ``mara`` takes playing ``episodes`` in lockstep."""
    taken = []
    act = mara.act_view
    mara.act_view = lambda view: taken.append(act(view)) or taken[-1]
    run_episodes(mara, episodes)
    return taken


def fixed_size_mara() -> MARA:
    """A MARA on a network of one cluster size (the kind `GreedyMAT` compiles), random weights."""
    torch.manual_seed(0)
    return MARA(MAT(MATConfig()), WLSPredictor())


@pytest.mark.parametrize(
    "make, cluster",
    [
        (fixed_size_mara, {}),
        (MARA.pretrained, {"num_nodes": 8, "num_slots": 16, **coreenv.CLUSTERS["mixed_costly"]}),
    ],
)
def test_the_compiled_copy_plays_the_actions_of_mat_act(make, cluster):
    config = coreenv.EnvConfig(task_set="id", arrival_horizon=300, **cluster)
    for episodes in ([(config, 5)], [(config, seed) for seed in range(8)]):
        fast = played_actions(make(), episodes)
        reference_mara = make()
        reference_mara.compiled = False
        reference = played_actions(reference_mara, episodes)
        assert len(fast) == len(reference)
        for step, (a, b) in enumerate(zip(fast, reference)):
            np.testing.assert_array_equal(a, b, err_msg=f"[step {step}]")


def test_the_compiled_copy_follows_the_policy_weights():
    torch.manual_seed(0)
    mara = MARA(MAT(MATConfig()), WLSPredictor())
    first = mara.greedy()
    assert mara.greedy() is first  # unchanged weights: the same copy
    with torch.no_grad():
        mara.policy.decoder.idle.bias.add_(1.0)  # as an optimiser step does, in place
    assert mara.greedy() is not first
    assert mara.greedy().idle[1] == pytest.approx(mara.policy.decoder.idle.bias.item())
