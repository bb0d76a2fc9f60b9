"""The sequential vector form: N lanes equal N `CoreSequentialEnv`s on the scheduled seeds, bit
for bit, across auto-resets, in both decision forms and slot orders, with or without a predictor,
under both invalid-action policies."""

import math

import gymnasium
import numpy as np
import pytest

import coreenv
from coreenv import ConfigError, CoreSequentialEnv, Estimate, SequentialVectorEnv
from coreenv.layout import live_mask, live_masks
from helpers import SEQUENTIAL_SHORT, play_sequential_lanes

SHORT = SEQUENTIAL_SHORT
SPARSE = {**SHORT, "arrival_prob": 0.03, "arrival_horizon": 30}
"""Many episodes have nothing to choose at all: they end before their first choice."""


class Prefix:
    """A deterministic per-task predictor: its answer depends on the task alone."""

    def estimate(self, prefix, target, budget):
        remaining = 0.5 * len(prefix) + 10.0 * target
        return Estimate(remaining if len(prefix) % 7 else math.inf, budget / (budget + len(prefix)))


@pytest.mark.parametrize("decisions", ["step", "events"])
@pytest.mark.parametrize("slot_order", ["table", "deadline"])
@pytest.mark.parametrize("predict", [False, True])
@pytest.mark.parametrize("seed", [0, 17])
def test_every_lane_equals_a_sequential_env_on_its_scheduled_seeds(
    decisions, slot_order, predict, seed
):
    options = {
        **SHORT,
        "shaping_beta": 0.7,  # rewards with fractions: their sums must be made in the same order
        "decisions": decisions,
        "slot_order": slot_order,
        "predictor": Prefix() if predict else None,
    }
    ended, _ = play_sequential_lanes(3, seed, seed + 1, 250, **options)
    assert ended > 0  # auto-resets were exercised


@pytest.mark.parametrize("decisions", ["step", "events"])
def test_episodes_with_nothing_to_choose_end_at_their_first_step_lane_by_lane(decisions):
    """An episode that ends before its first choice is reported by the lane's next call."""
    ended, empty = play_sequential_lanes(4, 3, 5, 200, decisions=decisions, **SPARSE)
    assert empty > 1 and ended > empty


@pytest.mark.parametrize("slot_order", ["table", "deadline"])
def test_invalid_choices_idle_as_in_the_sequential_env(slot_order):
    ended, _ = play_sequential_lanes(3, 8, 2, 250, invalid=True, slot_order=slot_order, **SHORT)
    assert ended > 0


@pytest.mark.parametrize("decisions", ["step", "events"])
def test_under_raise_a_bad_choice_changes_nothing_and_the_lanes_go_on(decisions):
    options = {**SHORT, "invalid_action": "raise", "decisions": decisions}
    play_sequential_lanes(3, 4, 6, 60, raise_at=5, **options)


def test_make_vec_gives_the_sequential_vector_form_with_batched_spaces():
    envs = gymnasium.make_vec(
        coreenv.SEQUENTIAL_ENV_ID, num_envs=2, vectorization_mode="vector_entry_point", **SHORT
    )
    assert isinstance(envs, SequentialVectorEnv)
    assert envs.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    single = CoreSequentialEnv(**SHORT)
    assert envs.single_observation_space == single.observation_space
    assert envs.single_action_space == single.action_space
    assert envs.action_space == gymnasium.spaces.MultiDiscrete([5, 5])
    obs, infos = envs.reset(seed=7)
    assert obs in envs.observation_space
    assert infos["episode_seed"].tolist() == [7, 8]
    assert envs.action_masks().shape == (2, 5) and envs.action_masks().dtype == bool


def test_bad_options_and_calls_before_reset_are_refused():
    with pytest.raises(ConfigError, match=r"slot_order must be one of \('table', 'deadline'\)"):
        SequentialVectorEnv(2, slot_order="arrival", **SHORT)
    envs = SequentialVectorEnv(2, **SHORT)
    with pytest.raises(RuntimeError, match="before reset"):
        envs.step(np.zeros(2, np.int64))
    with pytest.raises(RuntimeError, match="before reset"):
        envs.action_masks()
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(num_envs,\) = \(2,\), got \(2, 3\)"):
        envs.step(np.zeros((2, 3), np.int64))
    with pytest.raises(ValueError, match="must be integers"):
        envs.step(np.zeros(2))


def test_batched_live_masks_follow_the_single_rule():
    rng = np.random.default_rng(0)
    k, m = 5, 4
    masks = rng.integers(0, 2, (50, k + 1)).astype(np.int8)
    masks[:, k] = 1
    chosen = rng.integers(0, k + 2, (50, m))
    counts = rng.integers(0, m + 1, 50)
    live, taken = live_masks(masks, chosen, counts)
    for lane in range(50):
        one_live, one_taken = live_mask(masks[lane], chosen[lane, : counts[lane]].tolist())
        np.testing.assert_array_equal(live[lane], one_live)
        np.testing.assert_array_equal(taken[lane], one_taken)


@pytest.mark.parametrize("slot_order", ["table", "deadline"])
def test_episodes_cut_before_their_first_choice_show_the_slots_they_end_with(slot_order):
    """Truncated at a step where the first tasks arrived: the end shows them, unchosen."""
    ended, empty = play_sequential_lanes(4, 1, 2, 150, slot_order=slot_order, max_steps=4, **SHORT)
    assert empty > 1
