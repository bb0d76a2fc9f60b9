"""``coreenv/CoRE-Learn-v1``: the sequential event form with the recipe's defaults, through
``gymnasium.make`` and ``gymnasium.make_vec``, keyword arguments still overriding."""

import gymnasium
import numpy as np
from gymnasium.utils.env_checker import check_env

import coreenv  # noqa: F401  (registers the ids)
from coreenv import CoreSequentialEnv, Decisions, EnvConfig, SequentialVectorEnv
from coreenv.registration import LEARN_DEFAULTS, LEARN_ENV_ID
from coreenv.wls import WLSEstimates
from helpers import SMALL_CURVES

LEARNABLE = EnvConfig(task_set="id_train", arrival_prob=0.04)  # the recipe's episodes


def test_the_learn_id_makes_the_sequential_event_form_with_wls_estimates():
    env = gymnasium.make(LEARN_ENV_ID)
    inner = env.unwrapped
    assert isinstance(inner, CoreSequentialEnv) and inner.slot_order == "table"
    assert inner.config == LEARNABLE and inner.config.admission == "fifo"
    assert inner.vector.decisions == Decisions(at="events", hold=8)
    assert inner.vector.core.predictor == WLSEstimates()
    assert dict(LEARN_DEFAULTS) == env.spec.kwargs


def test_the_learn_id_passes_gymnasiums_checker():
    check_env(gymnasium.make(LEARN_ENV_ID, task_set=SMALL_CURVES).unwrapped, skip_render_check=True)


def test_keyword_arguments_override_the_learn_defaults():
    env = gymnasium.make(
        LEARN_ENV_ID, decisions="step", predictor=None, task_set="id", num_nodes=8, num_slots=16
    ).unwrapped
    assert env.vector.decisions == Decisions() and env.vector.core.predictor is None
    assert (env.config.task_set, env.config.arrival_prob) == ("id", 0.08)  # the cluster's load


def test_the_learn_id_makes_the_vector_form_lane_for_lane():
    envs = gymnasium.make_vec(LEARN_ENV_ID, num_envs=8, vectorization_mode="vector_entry_point")
    assert isinstance(envs, SequentialVectorEnv) and envs.num_envs == 8
    assert envs.config == LEARNABLE and envs.decisions == Decisions(at="events", hold=8)
    obs, _ = envs.reset(seed=0)
    single, _ = gymnasium.make(LEARN_ENV_ID).reset(seed=0)
    assert obs.shape == (8, *envs.single_observation_space.shape)
    np.testing.assert_array_equal(obs[0], single)  # lane 0 plays seed 0, as the single form
    rng = np.random.default_rng(0)
    for _ in range(20):
        masks = envs.action_masks()
        actions = [rng.choice(np.flatnonzero(mask)) for mask in masks]
        obs, rewards, *_ = envs.step(np.array(actions))
    assert obs.shape[0] == rewards.shape[0] == 8
