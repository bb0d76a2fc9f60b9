"""The slot-set policy scores slots with shared weights: permuting slots permutes its logits."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402

from coreenv import CoreSequentialEnv, SlotFeature  # noqa: E402
from coreenv.layout import sequential_layout, slot_width  # noqa: E402
from helpers import SMALL_CURVES  # noqa: E402
from mara_agents.baselines.slot_set import SlotSetExtractor, SlotSetPolicy, slot_set_kwargs  # noqa: E402

ENV = {"task_set": SMALL_CURVES, "num_nodes": 3, "num_slots": 4, "arrival_prob": 0.5}


def model():
    env = CoreSequentialEnv(**ENV)
    torch.manual_seed(0)
    return MaskablePPO(SlotSetPolicy, env, policy_kwargs=slot_set_kwargs(env.config), seed=0), env


def permuted(obs, order, config):
    """The observation with its slot blocks and taken flags in ``order``."""
    k, f = config.num_slots, slot_width(config)
    taken_at, node_at, _ = sequential_layout(config)
    out = obs.copy()
    blocks = obs[:, 3:taken_at].reshape(len(obs), k, f)
    out[:, 3:taken_at] = blocks[:, order].reshape(len(obs), -1)
    out[:, taken_at:node_at] = obs[:, taken_at:node_at][:, order]
    return out


def test_permuting_the_slots_permutes_the_slot_logits_and_keeps_idling():
    ppo, env = model()
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
