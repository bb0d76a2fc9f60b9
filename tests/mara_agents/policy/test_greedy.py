"""GreedyMAT: MAT's deterministic actions, compiled; it leaves close choices to MAT.act."""

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from coreenv import EnvConfig, SlotFeature  # noqa: E402
from mara_agents.evaluation import run_episodes  # noqa: E402
from mara_agents.policy import MAT, GreedyMAT, MATConfig  # noqa: E402
from mara_agents.policy.greedy import TOLERANCE  # noqa: E402
from mara_agents.schedulers.mara import MARA  # noqa: E402


def random_observations(config: MATConfig, batch: int, seed: int):
    """(B, M, obs_dim) float32 observations whose OCCUPIED column agrees with (B, K) occupancy."""
    rng = np.random.default_rng(seed)
    obs = rng.normal(size=(batch, config.num_nodes, config.obs_dim)).astype(np.float32)
    occupied = rng.random((batch, config.num_slots)) < 0.6
    head = config.num_nodes + config.global_features
    table = obs[:, :, head:].reshape(batch, config.num_nodes, config.num_slots, -1)
    table[..., int(SlotFeature.OCCUPIED)] = occupied[:, None]
    obs[:, :, head:] = table.reshape(batch, config.num_nodes, -1)
    return obs, occupied


def reference_actions(policy: MAT, obs: np.ndarray, occupied: np.ndarray) -> np.ndarray:
    out = policy.act(torch.from_numpy(obs), torch.from_numpy(occupied), deterministic=True)
    return out.actions.numpy()


@pytest.mark.parametrize("encoder", ["flat", "slots"])
@pytest.mark.parametrize("blocks, heads, symlog", [(1, 1, False), (2, 2, True)])
def test_its_actions_are_those_of_mat_act(encoder, blocks, heads, symlog):
    torch.manual_seed(0)
    config = MATConfig(encoder=encoder, blocks=blocks, heads=heads, symlog=symlog)
    policy = MAT(config).eval()
    obs, occupied = random_observations(config, batch=64, seed=1)
    actions = GreedyMAT(policy, tolerance=0.0).act(obs, occupied)
    np.testing.assert_array_equal(actions, reference_actions(policy, obs, occupied))
    for row in range(0, 64, 9):  # one episode alone as well
        one = GreedyMAT(policy).act(obs[row : row + 1], occupied[row : row + 1])
        if one is not None:
            np.testing.assert_array_equal(one, actions[row : row + 1])


def test_a_tie_is_left_to_mat_act():
    torch.manual_seed(0)
    config = MATConfig()
    obs, occupied = random_observations(config, batch=1, seed=2)
    obs[..., :] = 0.0  # every slot alike: every node's logits over the slots tie
    head = config.num_nodes + config.global_features
    obs[..., head + int(SlotFeature.OCCUPIED) :: config.slot_features] = 1.0
    occupied[:] = True
    policy = MAT(config).eval()
    with torch.no_grad():
        policy.decoder.idle.bias.fill_(-100.0)  # so that the first node takes a slot
    assert GreedyMAT(policy).act(obs, occupied) is None
    assert GreedyMAT(policy, tolerance=-1.0).act(obs, occupied) is not None


def test_float32_rounding_moves_the_lead_of_the_best_action_far_less_than_the_tolerance():
    mara = MARA.pretrained("mara")
    mara.decisions = None  # a decision every step: more of them to look at
    views = []
    act = mara.act_view
    mara.act_view = lambda view: views.append(view) or act(view)
    run_episodes(mara, [(EnvConfig(task_set="id", arrival_horizon=150), 3)])
    obs = torch.from_numpy(np.concatenate([view.obs for view in views]))
    occupied = np.concatenate([view.action_mask[:, :-1] for view in views]).astype(bool)
    out = mara.policy.act(obs, torch.from_numpy(occupied), deterministic=True)
    wide = copy.deepcopy(mara.policy).double()
    logits = []
    for policy, dtype in ((mara.policy, torch.float32), (wide, torch.float64)):
        torch.set_default_dtype(dtype)  # the decoder's inputs are made in it
        try:
            with torch.no_grad():
                (rep, _), keys = policy.read(obs.to(dtype))
                bias = policy.pair_bias(obs.to(dtype))
                logits.append(policy.decode(out.actions, rep, keys, bias).double())
        finally:
            torch.set_default_dtype(torch.float32)
    single, double = (x.masked_fill(~out.masks, -np.inf) for x in logits)  # the choices' logits
    top = double.topk(2, dim=-1)
    shown = torch.isfinite(top.values[..., 1])  # choices between two actions at least
    lead = top.values[..., 0] - top.values[..., 1]
    lead32 = (
        single.gather(-1, top.indices[..., :1])[..., 0]
        - single.gather(-1, top.indices[..., 1:])[..., 0]
    )
    largest = double.masked_fill(~out.masks, 0.0).abs().amax(-1).clamp(min=1.0)
    moved = ((lead32 - lead).abs() / largest)[shown]
    assert moved.numel() > 100 and moved.max() < TOLERANCE / 10


def test_observations_of_another_layout_are_refused_naming_the_shape():
    config = MATConfig()
    greedy = GreedyMAT(MAT(config))
    obs, occupied = random_observations(config, batch=2, seed=3)
    with pytest.raises(ValueError, match=r"8 slots only \(79 features at 4 nodes\), got 78"):
        greedy.act(obs[..., :-1], occupied)
    with pytest.raises(ValueError, match=r"occupied must be \(2, 8\), got \(2, 7\)"):
        greedy.act(obs, occupied[:, :-1])


def cluster_observations(config: MATConfig, nodes: int, slots: int, batch: int, seed: int):
    """Observations of ``nodes`` and ``slots`` as a cluster shows them: each node's speed, and
    per slot the node its task last trained on ((i + 1) / M, 0: none) and a resume cost."""
    rng = np.random.default_rng(seed)
    head = config.observation_width(nodes, 0)
    obs = rng.normal(size=(batch, nodes, config.observation_width(nodes, slots)))
    obs = obs.astype(np.float32)
    obs[:, :, head - nodes : head] = rng.integers(1, 5, size=(batch, 1, nodes))  # the speeds
    occupied = rng.random((batch, slots)) < 0.6
    table = obs[:, :, head:].reshape(batch, nodes, slots, config.slot_features)
    table[..., int(SlotFeature.OCCUPIED)] = occupied[:, None]
    last = rng.integers(0, nodes + 1, size=(batch, 1, slots)) / nodes
    table[..., config.cluster_column] = last
    table[..., config.cluster_column + 1] = rng.random((batch, 1, slots)) * (last > 0)
    obs[:, :, head:] = table.reshape(batch, nodes, -1)
    return obs, occupied


@pytest.mark.parametrize("nodes, slots", [(4, 8), (6, 9), (2, 5)])
def test_a_network_that_reads_sets_and_the_cluster_acts_as_mat_act_at_any_size(nodes, slots):
    torch.manual_seed(0)
    config = MATConfig(slot_features=11, encoder="slots", sets=True, cluster_column=9)
    policy = MAT(config).eval()
    with torch.no_grad():
        policy.pair.weights.weight.copy_(torch.tensor([[2.0, -3.0]]))  # so that it matters
    obs, occupied = cluster_observations(config, nodes, slots, batch=64, seed=2)
    reference = reference_actions(policy, obs, occupied)
    greedy, answered = GreedyMAT(policy), 0
    for row in range(64):  # one row at a time: a close choice (another CPU's last bits) is left
        one = greedy.act(obs[row : row + 1], occupied[row : row + 1])
        if one is not None:
            np.testing.assert_array_equal(one, reference[row : row + 1])
            answered += 1
    assert answered >= 48
