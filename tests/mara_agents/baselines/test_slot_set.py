"""The slot-set policy scores slots with shared weights: permuting slots permutes its logits; read
as sets, the nodes and slots of another cluster size are read by the same weights."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402

from coreenv import CoreSequentialEnv, SlotFeature  # noqa: E402
from coreenv.config import make_config  # noqa: E402
from coreenv.layout import sequential_layout, slot_width  # noqa: E402
from helpers import SMALL_CURVES  # noqa: E402
from mara_agents.baselines.slot_set import (  # noqa: E402
    CRITIC,
    SlotSetExtractor,
    SlotSetPolicy,
    resized,
    slot_set_kwargs,
)

ENV = {"task_set": SMALL_CURVES, "num_nodes": 3, "num_slots": 4, "arrival_prob": 0.5}


def model(sets=False, **fields):
    env = CoreSequentialEnv(**{**ENV, **fields})
    torch.manual_seed(0)
    kwargs = slot_set_kwargs(env.config, sets=sets)
    return MaskablePPO(SlotSetPolicy, env, policy_kwargs=kwargs, seed=0), env


def permuted(obs, order, config):
    """The observation with its slot blocks and taken flags in ``order``."""
    k, f = config.num_slots, slot_width(config)
    taken_at, node_at, _ = sequential_layout(config)
    out = obs.copy()
    blocks = obs[:, 3:taken_at].reshape(len(obs), k, f)
    out[:, 3:taken_at] = blocks[:, order].reshape(len(obs), -1)
    out[:, taken_at:node_at] = obs[:, taken_at:node_at][:, order]
    return out


@pytest.mark.parametrize("sets", [False, True])
def test_permuting_the_slots_permutes_the_slot_logits_and_keeps_idling(sets):
    ppo, env = model(sets)
    rng = np.random.default_rng(1)
    obs = rng.normal(size=(16, env.observation_space.shape[0])).astype(np.float32)
    k, f = env.config.num_slots, slot_width(env.config)
    obs[:, 3 + int(SlotFeature.OCCUPIED) : 3 + k * f : f] = rng.random((16, k)) < 0.6
    order = np.array([2, 0, 3, 1])
    with torch.no_grad():
        logits = ppo.policy.get_distribution(torch.as_tensor(obs)).distribution.logits
        moved = ppo.policy.get_distribution(torch.as_tensor(permuted(obs, order, env.config)))
    moved = moved.distribution.logits
    torch.testing.assert_close(moved[:, :k], logits[:, :k][:, order])
    torch.testing.assert_close(moved[:, k], logits[:, k])


def test_it_starts_near_uniform_and_learns_on_the_sequential_form():
    ppo, env = model()
    obs, _ = env.reset(seed=0)
    with torch.no_grad():
        probs = ppo.policy.get_distribution(torch.as_tensor(obs[None])).distribution.probs
    assert float(probs.max() - probs.min()) < 0.05
    ppo.learn(256)  # masks come from env.action_masks()


def test_a_wrong_layout_is_refused_with_the_shape_it_reads():
    env = CoreSequentialEnv(**ENV)
    with pytest.raises(ValueError, match=r"reads sequential observations of shape \(47,\)"):
        SlotSetExtractor(env.observation_space, 4, slot_width(env.config), 4)


def test_a_policy_mlp_between_extractor_and_head_is_refused():
    env = CoreSequentialEnv(**ENV)
    kwargs = {**slot_set_kwargs(env.config), "net_arch": {"pi": [32], "vf": [64]}}
    with pytest.raises(ValueError, match=r"net_arch\['pi'\] must be empty"):
        MaskablePPO(SlotSetPolicy, env, policy_kwargs=kwargs)


CLUSTERS = [{}, {"switch_cost": 2, "node_speeds": (1, 2, 4)}]
"""Equal nodes, and a cluster that shows its speeds and each task's last node."""


def embedded(obs, small, big):
    """A sequential observation of a small cluster as the same scene on one twice as big.

    Its slots come first and empty ones after; its node i becomes node 2i + 1, which has as
    large a share of nodes after it and, given i's speed, the same speed: a slot's last node
    l, shown as (l + 1) / M, becomes 2l + 1, shown as the same value.
    """
    k, f, m = small.num_slots, slot_width(small), small.num_nodes
    speeds = m if small.cluster_shown else 0
    taken_at, node_at, _ = sequential_layout(small)
    big_taken, big_node_at, big_end = sequential_layout(big)
    node = int(np.argmax(obs[node_at:]))
    out = np.zeros(big_end, np.float32)
    out[:3] = obs[:3]
    if speeds:
        out[3 : 3 + 2 * m] = 1.0
        out[3 + 2 * node + 1] = obs[3 + node]
    table = 3 + 2 * speeds
    out[table : table + k * f] = obs[3 + speeds : taken_at]
    out[big_taken : big_taken + k] = obs[taken_at:node_at]
    out[big_node_at + 2 * node + 1] = 1.0
    return out


@pytest.mark.parametrize("cluster", CLUSTERS)
def test_a_sets_policy_reads_a_cluster_twice_as_big_with_the_same_weights(cluster):
    """The same scene on 3 nodes and 4 slots, and on 6 nodes and 8 slots (`embedded`): the same
    slot scores and idling's, from the same weights."""
    ppo, env = model(sets=True, **cluster)
    with torch.no_grad():  # weights far from PPO's near-uniform start
        for weights in ppo.policy.parameters():
            weights.normal_(0.0, 0.3)
    speeds = {"node_speeds": (1, 2, 4) * 2} if cluster else {}
    big = make_config(None, **{**ENV, **cluster, **speeds, "num_nodes": 6, "num_slots": 8})
    played = resized(ppo.policy, big)
    assert played is not ppo.policy and resized(ppo.policy, env.config) is ppo.policy
    for name, weights in played.state_dict().items():
        if not name.startswith(CRITIC):  # the value, for training only, reads K encodings
            torch.testing.assert_close(weights, ppo.policy.state_dict()[name])
    obs, _ = env.reset(seed=3)
    scenes = []
    for _ in range(60):  # tasks arrive, train, move between nodes
        obs, *_ = env.step(int(np.flatnonzero(env.action_masks())[-2:][0]))
        scenes.append(obs.copy())
    extra = np.ones((len(scenes), 9), bool)
    extra[:, 4:8] = False  # the big cluster's extra slots, empty, are not choices
    with torch.no_grad():
        small = ppo.policy.get_distribution(torch.as_tensor(np.stack(scenes))).distribution
        moved = torch.as_tensor(np.stack([embedded(obs, env.config, big) for obs in scenes]))
        large = played.get_distribution(moved, action_masks=extra).distribution
    torch.testing.assert_close(large.probs[:, [0, 1, 2, 3, 8]], small.probs)
    assert float(small.probs.std(0).max()) > 0.05  # the scenes differ in what the policy reads
    if cluster:  # some tasks trained before, and the scenes choose on nodes of each speed
        f = slot_width(env.config)
        last = np.stack(scenes)[:, 6 + f - 2 : 6 + 4 * f : f]
        assert (last > 0).any() and len({int(np.argmax(o[-3:])) for o in scenes}) == 3


def test_a_policy_of_one_size_at_another_is_refused_naming_the_one_that_plays_any():
    ppo, env = model()
    big = make_config(None, **{**ENV, "num_nodes": 6, "num_slots": 8})
    with pytest.raises(ValueError, match="trained at 3 nodes and 4 slots .* 'ppo'"):
        resized(ppo.policy, big)
    sets, _ = model(sets=True)
    shown = make_config(None, **{**ENV, "switch_cost": 2})
    with pytest.raises(ValueError, match="slot blocks of 9 columns .*, this cluster.s have 11"):
        resized(sets.policy, shown)
