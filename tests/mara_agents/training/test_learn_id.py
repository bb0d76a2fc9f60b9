"""``coreenv/CoRE-Learn-v1`` is the environment the shipped RL baseline's recipe trains on."""

import gymnasium
import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from coreenv import make_config  # noqa: E402
from coreenv.registration import LEARN_ENV_ID  # noqa: E402
from coreenv.core.estimates import in_engine  # noqa: E402
from mara_agents.training.maskable_ppo import training_envs  # noqa: E402
from mara_agents.training.recipes import make_recipe  # noqa: E402
from mara_agents.predictors import make_predictor  # noqa: E402


def test_the_learn_id_is_the_recipes_environment_field_by_field(tmp_path):
    config = make_recipe("ppo", tmp_path, envs=4)
    trained = training_envs(config).envs  # the recipe's SequentialVectorEnv
    made = gymnasium.make_vec(LEARN_ENV_ID, num_envs=4, vectorization_mode="vector_entry_point")
    assert type(made) is type(trained)
    assert made.config == trained.config == make_config(None, **config.env)
    assert made.decisions == trained.decisions == config.decision_form
    assert made.slot_order == trained.slot_order == config.slot_order
    assert in_engine(made.core.predictor) == in_engine(make_predictor(config.observe))
    seeds = [7, 8, 9, 10]
    obs, _ = made.reset(seed=seeds)
    expected, _ = trained.reset(seed=seeds)
    rng = np.random.default_rng(0)
    for step in range(30):
        np.testing.assert_array_equal(obs, expected, err_msg=f"[step {step}]")
        np.testing.assert_array_equal(made.action_masks(), trained.action_masks())
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in made.action_masks()])
        obs, rewards, *_ = made.step(actions)
        expected, expected_rewards, *_ = trained.step(actions)
        np.testing.assert_array_equal(rewards, expected_rewards, err_msg=f"[step {step}]")
