"""`coreenv_lab.baselines.recipes`: the shipped baseline's recipe and the lab's, by name."""

import pytest

pytest.importorskip("sb3_contrib")

from coreenv_lab.baselines.ippo import IPPOConfig, train_ippo  # noqa: E402
from coreenv_lab.baselines.recipes import RECIPES, TRAINERS, make_recipe  # noqa: E402
from mara_agents.training import recipes as shipped  # noqa: E402
from mara_agents.training.maskable_ppo import MaskablePPOConfig, train_maskable_ppo  # noqa: E402


def test_recipes_are_named_and_an_unknown_one_is_refused(tmp_path):
    assert set(RECIPES) == {"ppo", "ppo_slots", "ppo_mlp", "ippo_live", "ippo_sets"}
    with pytest.raises(ValueError, match=r"recipe must be one of \['ippo_live', 'ippo_sets', "):
        make_recipe("dqn", tmp_path)


def test_the_shipped_recipe_is_the_package_s_and_the_lab_s_differ_from_it_by_the_network(tmp_path):
    assert RECIPES["ppo"] == shipped.RECIPES["ppo"]
    ppo = make_recipe("ppo", tmp_path)
    assert ppo == shipped.make_recipe("ppo", tmp_path)
    for name, policy in (("ppo_slots", "slot_set"), ("ppo_mlp", "mlp")):
        lab = make_recipe(name, tmp_path)
        assert type(lab) is MaskablePPOConfig and lab.policy == policy
        assert (lab.form, lab.decisions, lab.envs, lab.n_steps) == (
            ppo.form,
            ppo.decisions,
            ppo.envs,
            ppo.n_steps,
        )
    ippo = make_recipe("ippo_sets", tmp_path, seed=3)
    assert type(ippo) is IPPOConfig and ippo.live and ippo.policy == "slot_sets" and ippo.seed == 3
    assert TRAINERS[type(ippo)] is train_ippo and TRAINERS[MaskablePPOConfig] is train_maskable_ppo
