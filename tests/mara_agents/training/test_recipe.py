"""MARA's training recipe: one config object whose defaults are the shipped runs' settings."""

from pathlib import Path

import pytest

pytest.importorskip("torch")

from coreenv import EnvConfig  # noqa: E402
from coreenv.layout import slot_width  # noqa: E402
from mara_agents.policy import MAT, MATConfig  # noqa: E402
from mara_agents.schedulers.mara import VARIANTS  # noqa: E402
from mara_agents.training import (  # noqa: E402
    MARA_PPO,
    TRAINING_ENV,
    GroupedTrainer,
    ImitationConfig,
    MARATrainConfig,
    PPOTrainer,
)
from mara_agents.training.held_ppo import HeldPPOTrainer  # noqa: E402
from mara_agents.training.recipe import MARA_GROUPED, make_trainer  # noqa: E402


FOUR_EQUAL = {"num_nodes": 4, "num_slots": 8}


def config(**fields):
    return MARATrainConfig(work=Path("w"), out=Path("p.pt"), **fields)


def test_the_defaults_are_the_recipe_of_the_shipped_checkpoints():
    run = config()
    assert run.algorithm == "grouped" and run.grouped is MARA_GROUPED
    assert run.ppo is MARA_PPO and run.imitation == ImitationConfig()
    assert (run.eval_every, run.eval_episodes) == (5, 100)  # selection on 100 paired episodes
    assert (run.env_seed, run.selection_seed, run.imitation.seed) == (200_000, 900_000, 100_000)
    imitation = run.imitation
    assert (imitation.teacher, imitation.episodes, imitation.epochs) == ("hop", 60, 8)
    assert (imitation.lr, imitation.batch, imitation.dagger_rounds) == (1e-3, 512, 3)
    assert dict(TRAINING_ENV) == {"task_set": "id_train", "arrival_prob": 0.04}
    EnvConfig(**TRAINING_ENV)  # valid fields


def variant_network(variant: str) -> MATConfig:
    """A MAT of the variant's layout (its category columns where it reads them)."""
    return MATConfig(slot_features=slot_width(EnvConfig(information=VARIANTS[variant].information)))


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_beta_is_the_variants_unless_overridden(variant):
    network = variant_network(variant)
    assert config(variant=variant, mat=network).beta == VARIANTS[variant].shaping_beta
    assert config(variant=variant, mat=network, shaping_beta=0.25).beta == 0.25
    assert config(variant=variant, mat=network).shown == VARIANTS[variant].information


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"variant": "mara_xl"}, "MARATrainConfig.variant must be one of"),
        ({"shaping_beta": -1.0}, "MARATrainConfig.shaping_beta must be None or >= 0, got -1.0"),
        ({"eval_every": 0}, "MARATrainConfig.eval_every must be >= 1, got 0"),
        ({"critic_warmup": -1}, "MARATrainConfig.critic_warmup must be >= 0, got -1"),
        ({"algorithm": "a2c"}, "MARATrainConfig.algorithm must be one of"),
        ({"mat": MATConfig(num_slots=5)}, "must record the first cluster's 4 nodes and 8 slots"),
        ({"clusters": ("4/8 equal", "8/16 equal")}, "2 clusters need a network that reads sets"),
        ({"clusters": ("4/8 mixed_costly",)}, "network must read sets with cluster_column 9"),
        ({"clusters": ("8/16 fast",)}, r"MARATrainConfig.clusters: cluster '8/16 fast': the name"),
        ({"clusters": ()}, "must name at least one cluster"),
        ({"quantiles": (0.5,)}, r"reads 9 columns per slot; .* quantiles \(0.5,\) .* has 10"),
        ({"information": "history"}, r"reads 9 columns per slot; .* information .history. has 11"),
        ({"scratch": True, "init": Path("p.pt")}, "scratch starts from random weights, init from"),
        ({"max_steps": -5}, "MARATrainConfig.max_steps must be None or >= 0, got -5"),
        ({"task_set": "corpus"}, r"MARATrainConfig.task_set must be one of \[.*'corpus_train'"),
        (
            {"predictor": "gp"},
            r"MARATrainConfig.predictor must be None or one of \[.*'fm_mara_student'",
        ),
    ],
)
def test_bad_training_config_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        config(**fields)


def test_several_clusters_each_at_their_capacity_load_and_shown_to_a_network_reading_them():
    network = MATConfig(slot_features=11, encoder="slots", sets=True, cluster_column=9)
    run = config(clusters=("4/8 equal", "8/16 mixed_costly"), mat=network)
    assert [(env["num_nodes"], env["arrival_prob"], env["node_speeds"]) for env in run.envs] == [
        (4, 0.04, "uniform"),
        (8, 0.16, "mixed"),
    ]
    trainer = make_trainer(run, MAT(network), None)
    assert [core.config.num_nodes for core in trainer.cores] == [4, 8]
    with pytest.raises(ValueError, match="'held_ppo' trains on one cluster only"):
        config(clusters=run.clusters, mat=network, algorithm="held_ppo")


@pytest.mark.parametrize(
    ("algorithm", "kind"),
    [("grouped", GroupedTrainer), ("ppo", PPOTrainer), ("held_ppo", HeldPPOTrainer)],
)
def test_the_algorithm_chooses_the_rl_stage_on_the_shaped_training_regime(algorithm, kind):
    run = config(algorithm=algorithm, shaping_beta=0.0)
    trainer = make_trainer(run, MAT(MATConfig()), None)
    assert isinstance(trainer, kind)
    configs = {"ppo": lambda: trainer.envs.config, "grouped": lambda: trainer.cores[0].config}
    env = configs.get(algorithm, lambda: trainer.env_config)()
    assert (env.task_set, env.arrival_prob, env.shaping_beta) == ("id_train", 0.04, 0.0)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_predictor_is_the_variants_unless_overridden(variant):
    network = variant_network(variant)
    assert config(variant=variant, mat=network).observed == VARIANTS[variant].predictor
    overridden = config(variant=variant, mat=network, predictor="wls")
    assert overridden.observed == "wls"


def test_the_task_set_chooses_the_training_episodes_and_what_fm_warms_on():
    run = config(task_set="corpus_train", algorithm="held_ppo")
    assert run.envs == ({**TRAINING_ENV, "task_set": "corpus_train", **FOUR_EQUAL},)
    assert make_trainer(run, MAT(MATConfig()), None).env_config.task_set == "corpus_train"


def test_a_policy_reading_quantiles_trains_on_episodes_that_show_them():
    run = config(quantiles=(0.25, 0.75), mat=MATConfig(slot_features=11), algorithm="held_ppo")
    assert run.envs == ({**TRAINING_ENV, "estimate_quantiles": (0.25, 0.75), **FOUR_EQUAL},)
    assert config().envs == ({**TRAINING_ENV, **FOUR_EQUAL},)
    assert make_trainer(run, MAT(run.mat), None).env_config.estimate_quantiles == (0.25, 0.75)
