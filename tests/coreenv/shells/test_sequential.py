"""The sequential Gymnasium form: nodes choose in turn under live masks, so joint actions match;
slots listed in the table's order or by deadline."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coreenv
from coreenv import CoreEnv, CoreSequentialEnv, SlotFeature
from coreenv.errors import ConfigError
from coreenv.layout import live_mask, sequential_layout, slot_width
from helpers import SEQUENTIAL_SHORT, SMALL_CURVES

SHORT = SEQUENTIAL_SHORT


def play(env, seed, action_seed, sample_invalid=False):
    """Play an episode choosing at random from the live masks.

    Returns what each call played (the joint action it completed, or None, and the steps it
    played), the last info and every observation.
    """
    rng = np.random.default_rng(action_seed)
    obs, info = env.reset(seed=seed)
    k, m = env.config.num_slots, env.config.num_nodes
    _, node_at, _ = sequential_layout(env.config)
    played, chosen, observations = [(None, info["elapsed"])], [], [obs]
    while True:
        mask = env.action_masks()
        assert info["node"] == len(chosen) < m
        assert obs[node_at + info["node"]] == 1 and obs[node_at:].sum() == 1
        # a node is asked only when it has a real choice (others idle unasked), or at the end
        assert mask[k] and (mask[:k].any() or not env.vector.core.active[0])
        allowed = np.flatnonzero(mask)
        action = int(rng.integers(-1, k + 2)) if sample_invalid else int(rng.choice(allowed))
        chosen.append(action)
        obs, reward, terminated, truncated, info = env.step(action)
        observations.append(obs)
        if info["elapsed"]:  # the joint action was played (the unasked nodes idled)
            played.append((chosen + [k] * (m - len(chosen)), info["elapsed"]))
            chosen = []
        if terminated or truncated:
            return played, info, observations


def replay(played, seed, decisions):
    """Play the same joint actions on the parallel env; idle through the steps nobody chose."""
    env = CoreEnv(decisions=decisions, **SHORT)
    env.reset(seed=seed)
    for joint, elapsed in played:
        steps = 0
        while steps < elapsed:
            assert env.agents
            actions = dict(zip(env.possible_agents, joint)) if joint and not steps else {}
            _, _, _, _, infos = env.step(actions)
            steps += infos["node_0"].get("elapsed", 1)
        assert steps == elapsed
    assert not env.agents
    return env.metrics()


def test_registered_spaces_and_gymnasiums_checker():
    env = gymnasium.make(coreenv.SEQUENTIAL_ENV_ID, **SHORT)
    assert isinstance(env.unwrapped, CoreSequentialEnv)
    assert env.action_space == gymnasium.spaces.Discrete(5)
    state = CoreEnv(**SHORT).state_space.shape[0]
    assert env.observation_space.shape == (state + 4 + 3,)
    check_env(CoreSequentialEnv(**SHORT), skip_render_check=True)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    action_seed=st.integers(0, 1_000),
    decisions=st.sampled_from(["step", "events"]),
)
def test_live_masks_give_matchings_and_the_episode_is_the_parallel_one(
    seed, action_seed, decisions
):
    """Choices from the live masks never conflict; the joint actions replay the same episode."""
    env = CoreSequentialEnv(decisions=decisions, **SHORT)
    played, info, _ = play(env, seed, action_seed)
    assert info["metrics"]["conflicts"] == 0
    for joint, _ in played[1:]:
        served = [a for a in joint if a != SHORT["num_slots"]]
        assert len(served) == len(set(served))
    np.testing.assert_equal(replay(played, seed, decisions), info["metrics"])


def test_the_same_seed_gives_the_same_episode():
    first = play(CoreSequentialEnv(**SHORT), 3, 9)
    second = play(CoreSequentialEnv(**SHORT), 3, 9)
    assert first[0] == second[0]
    np.testing.assert_array_equal(np.stack(first[2]), np.stack(second[2]))


def test_taken_flags_and_masks_follow_the_earlier_nodes_choices():
    env = CoreSequentialEnv(num_nodes=3, num_slots=4, arrival_prob=1.0, task_set=SMALL_CURVES)
    obs, info = env.reset(seed=0)
    while env.action_masks()[:4].sum() < 2 or info["node"]:  # idle until two tasks are in
        obs, _, _, _, info = env.step(4)
    taken_at, node_at, _ = sequential_layout(env.config)
    assert not obs[taken_at:node_at].any()
    first = int(np.flatnonzero(env.action_masks()[:4])[0])
    obs, reward, *_, info = env.step(first)
    assert info["node"] == 1 and reward == 0.0 and info["elapsed"] == 0
    assert obs[taken_at + first] == 1 and not env.action_masks()[first]
    assert obs[node_at + 1] == 1


def test_invalid_actions_follow_the_configured_policy():
    env = CoreSequentialEnv(**SHORT)
    _, info, _ = play(env, 2, 4, sample_invalid=True)
    assert info["metrics"]["conflicts"] > 0  # out-of-range and empty choices idled
    raising = CoreSequentialEnv(invalid_action="raise", **SHORT)
    raising.reset(seed=2)
    with pytest.raises(coreenv.InvalidActionError, match="not an int"):
        for _ in range(SHORT["num_nodes"]):
            raising.step(-1)


def test_a_step_after_the_end_asks_for_a_reset():
    env = CoreSequentialEnv(**SHORT)
    play(env, 0, 0)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)


def test_an_episode_with_nothing_to_choose_ends_at_its_first_step():
    env = CoreSequentialEnv(**{**SHORT, "arrival_prob": 0.0})
    _, info = env.reset(seed=0)
    assert info["elapsed"] >= 1 and not env.vector.core.active[0]
    _, reward, terminated, truncated, info = env.step(SHORT["num_slots"])
    assert terminated and not truncated and reward == 0.0
    assert info["metrics"]["arrivals"] == 0
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)


def test_under_raise_a_bad_choice_is_refused_at_once_and_the_node_may_choose_again():
    env = CoreSequentialEnv(invalid_action="raise", **SHORT)
    env.reset(seed=2)
    with pytest.raises(coreenv.InvalidActionError, match="node_0: action -1 is not an int"):
        env.step(-1)
    _, _, _, _, info = env.step(SHORT["num_slots"])  # the same node, choosing to idle
    assert info["node"] in (0, 1)


def test_live_mask_names_bad_input():
    with pytest.raises(ValueError, match=r"one \(K \+ 1,\) step mask, got shape \(2, 4\)"):
        live_mask(np.ones((2, 4), np.int8), [])
    with pytest.raises(ValueError, match="as a sequence, got 0"):
        live_mask(np.ones(4, np.int8), 0)


def test_listing_by_deadline_shows_the_table_in_another_order_and_plays_the_same_episode():
    """Side by side with the table's order, choosing the same slots: each observation is the
    table's with its slots listed soonest deadline first (empty ones last), masks and actions
    follow the listing, and the episode is the same."""
    table, listed = CoreSequentialEnv(**SHORT), CoreSequentialEnv(slot_order="deadline", **SHORT)
    k, f = table.config.num_slots, slot_width(table.config)
    taken_at, node_at, _ = sequential_layout(table.config)
    rng = np.random.default_rng(5)
    (obs, _), (seen, _) = table.reset(seed=11), listed.reset(seed=11)
    reordered = 0
    while True:
        order = listed.listing
        blocks, shown = obs[3:taken_at].reshape(k, f), seen[3:taken_at].reshape(k, f)
        np.testing.assert_array_equal(shown, blocks[order])
        np.testing.assert_array_equal(seen[taken_at:node_at], obs[taken_at:node_at][order])
        occupied = shown[:, int(SlotFeature.OCCUPIED)] > 0
        assert not (~occupied[:-1] & occupied[1:]).any()  # the empty slots come last
        assert (np.diff(shown[occupied, int(SlotFeature.TIME_LEFT)]) >= 0).all()
        mask = listed.action_masks()
        np.testing.assert_array_equal(mask[:k], table.action_masks()[:k][order])
        reordered += (order != np.arange(k)).any()
        choice = int(rng.choice(np.flatnonzero(mask)))
        slot = int(order[choice]) if choice < k else k
        obs, reward, end, cut, info = table.step(slot)
        seen, listed_reward, listed_end, listed_cut, listed_info = listed.step(choice)
        assert (listed_reward, listed_end, listed_cut) == (reward, end, cut)
        if end or cut:
            assert listed_info["metrics"] == info["metrics"]
            break
    assert reordered  # the listing did differ from the table's order


def test_an_unknown_slot_order_is_refused_with_the_choices():
    with pytest.raises(ConfigError, match=r"slot_order must be one of \('table', 'deadline'\)"):
        CoreSequentialEnv(slot_order="arrival", **SHORT)
