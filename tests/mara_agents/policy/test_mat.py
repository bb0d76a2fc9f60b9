"""The MAT allocator: feasible matchings always, teacher forcing reproduces sampling."""

import pytest

torch = pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mara_agents.policy import MAT, MATConfig  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.integers(1, 6), st.integers(0, 2**31 - 1), st.booleans())
def test_every_sampled_joint_action_is_a_feasible_matching(nodes, slots, seed, deterministic):
    config = MATConfig(num_nodes=nodes, num_slots=slots)
    torch.manual_seed(seed % 1000)
    model = MAT(config)
    generator = torch.Generator().manual_seed(seed)
    obs = torch.randn((16, nodes, config.obs_dim), generator=generator)
    occupied = torch.rand((16, slots), generator=generator) < 0.5
    out = model.act(obs, occupied, deterministic=deterministic, generator=generator)
    for row in range(16):
        chosen = [a for a in out.actions[row].tolist() if a != slots]
        assert len(chosen) == len(set(chosen)), "two nodes on one slot"
        assert all(occupied[row, a] for a in chosen), "an empty slot was chosen"
        for i, a in enumerate(out.actions[row].tolist()):
            assert out.masks[row, i, a]  # the action was allowed by the mask it was sampled under
            earlier = out.actions[row, :i]
            assert not out.masks[row, i, earlier[earlier < slots]].any()


def test_teacher_forced_log_probabilities_equal_those_of_sampling():
    torch.manual_seed(0)
    model = MAT(MATConfig())
    generator = torch.Generator().manual_seed(1)
    obs = torch.randn((64, 4, model.config.obs_dim), generator=generator)
    occupied = torch.rand((64, 8), generator=generator) < 0.6
    out = model.act(obs, occupied, generator=generator)
    scores = model.score_actions(obs, out.actions, out.masks)
    torch.testing.assert_close(scores.log_probs, out.log_probs, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(scores.values, out.values, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(model.values(obs), out.values, atol=1e-6, rtol=1e-6)
    assert torch.all(scores.entropy >= 0)


def test_nodes_left_without_a_free_slot_idle_with_probability_one():
    torch.manual_seed(0)
    model = MAT(MATConfig())
    obs = torch.randn((3, 4, model.config.obs_dim))
    occupied = torch.zeros((3, 8), dtype=torch.bool)
    occupied[1, 2] = True  # one task: at most one node serves it, the rest idle
    occupied[2, :] = True
    for row in range(3):
        out = model.act(obs[row : row + 1], occupied[row : row + 1])
        scores = model.score_actions(obs[row : row + 1], out.actions, out.masks)
        torch.testing.assert_close(scores.log_probs, out.log_probs, atol=1e-5, rtol=1e-5)
        assert set(out.actions[0].tolist()) <= set(occupied[row].nonzero().flatten().tolist()) | {8}
    empty = model.act(obs[:1], occupied[:1])
    assert empty.actions.tolist() == [[8, 8, 8, 8]] and empty.log_probs.abs().sum() == 0


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("num_nodes", 0, "num_nodes must be >= 1, got 0"),
        ("num_slots", -1, "num_slots must be >= 1, got -1"),
        ("dim", 0, "dim must be >= 1, got 0"),
        ("blocks", 0, "blocks must be >= 1, got 0"),
        ("global_features", -1, "global_features must be >= 0, got -1"),
        ("heads", 3, r"dim \(64\) must be divisible by MATConfig.heads \(3\)"),
        ("encoder", "set", r"encoder must be one of \('flat', 'slots'\), got 'set'"),
    ],
)
def test_bad_mat_config_is_refused_naming_the_field(field, value, message):
    with pytest.raises(ValueError, match=f"MATConfig.{message}"):
        MATConfig(**{field: value})


def test_a_symlog_policy_reads_symlog_of_its_observations():
    torch.manual_seed(0)
    plain, squashed = MAT(MATConfig()), MAT(MATConfig(symlog=True))
    squashed.load_state_dict(plain.state_dict())  # the same weights
    noise = torch.Generator().manual_seed(2)
    obs = 300 * torch.randn((8, 4, plain.config.obs_dim), generator=noise)
    occupied = torch.ones((8, 8), dtype=torch.bool)
    read = torch.sign(obs) * torch.log1p(obs.abs())
    out = squashed.act(obs, occupied, deterministic=True)
    assert torch.equal(out.actions, plain.act(read, occupied, deterministic=True).actions)
    torch.testing.assert_close(squashed.values(obs), plain.values(read))
    scores = squashed.score_actions(obs, out.actions, out.masks)
    torch.testing.assert_close(scores.log_probs, out.log_probs, atol=1e-5, rtol=1e-5)


def slot_observations(batch: int, config: MATConfig, seed: int) -> torch.Tensor:
    """Random node observations whose slots are occupied at random (the same table per node)."""
    noise = torch.Generator().manual_seed(seed)
    head = config.num_nodes + config.global_features
    table = torch.randn((batch, config.num_slots, config.slot_features), generator=noise)
    table[..., 0] = (torch.rand((batch, config.num_slots), generator=noise) < 0.6).float()
    obs = torch.randn((batch, config.num_nodes, config.obs_dim), generator=noise)
    obs[..., head:] = table.reshape(batch, 1, -1)
    return obs


def test_a_slot_encoder_policy_does_not_care_in_which_slot_a_task_sits():
    torch.manual_seed(0)
    policy = MAT(MATConfig(encoder="slots", symlog=True))
    c = policy.config
    obs = slot_observations(16, c, seed=3)
    order = torch.randperm(c.num_slots, generator=torch.Generator().manual_seed(4))
    head = c.num_nodes + c.global_features
    moved = obs.clone()
    table = obs[..., head:].reshape(16, c.num_nodes, c.num_slots, c.slot_features)
    moved[..., head:] = table[:, :, order].reshape(16, c.num_nodes, -1)
    idle = torch.full((16, c.num_nodes), c.num_slots)
    masks = torch.ones((16, c.num_nodes, c.num_slots + 1), dtype=torch.bool)
    log_policy, values = policy.log_policy(obs, idle, masks)
    moved_policy, moved_values = policy.log_policy(moved, idle, masks)
    torch.testing.assert_close(moved_values, values)
    torch.testing.assert_close(moved_policy[..., :-1], log_policy[..., :-1][..., order])
    torch.testing.assert_close(moved_policy[..., -1], log_policy[..., -1])


def test_a_slot_encoder_reads_only_the_occupied_slots_into_the_node_tokens():
    torch.manual_seed(0)
    policy = MAT(MATConfig(encoder="slots"))
    c = policy.config
    obs = slot_observations(16, c, seed=5)
    head = c.num_nodes + c.global_features
    table = obs[..., head:].reshape(16, c.num_nodes, c.num_slots, c.slot_features)
    empty = table[..., 0] == 0
    assert empty.any() and not empty.all()
    changed = table.clone()
    changed[..., 1:] += 7.0 * empty[..., None]  # rewrite every feature of the empty slots
    other = obs.clone()
    other[..., head:] = changed.reshape(16, c.num_nodes, -1)
    torch.testing.assert_close(policy.values(other), policy.values(obs))
    flat = MAT(MATConfig())
    assert not torch.allclose(flat.values(other), flat.values(obs))


SETS = MATConfig(encoder="slots", sets=True)


def real_observations(seed, **options):
    """(1, M, D) node observations of a running episode of ``options`` (and its occupancy)."""
    import coreenv

    env = coreenv.parallel_env(seed=seed, arrival_prob=0.5, task_set="synthetic", **options)
    env.reset()
    for _ in range(5):
        env.step({agent: i for i, agent in enumerate(env.agents)})
    view = env.view()
    return torch.as_tensor(view.obs), torch.as_tensor(view.occupied)


@pytest.mark.parametrize("nodes, slots", [(4, 8), (8, 16), (16, 32), (3, 5)])
def test_a_sets_network_plays_any_cluster_size_with_one_set_of_weights(nodes, slots):
    torch.manual_seed(0)
    model = MAT(SETS)
    obs, occupied = real_observations(2, num_nodes=nodes, num_slots=slots)
    out = model.act(obs, occupied, deterministic=True)
    assert out.actions.shape == (1, nodes) and out.masks.shape == (1, nodes, slots + 1)
    scores = model.score_actions(obs, out.actions, out.masks)
    torch.testing.assert_close(scores.log_probs, out.log_probs)


def test_a_fixed_size_network_refuses_another_size_naming_what_it_reads():
    model = MAT(MATConfig(encoder="slots"))
    obs, occupied = real_observations(2, num_nodes=8, num_slots=16)
    with pytest.raises(ValueError, match="4 nodes and 8 slots only"):
        model.act(obs, occupied)


def test_a_sets_network_reads_its_own_speed_and_where_each_task_last_trained():
    from coreenv import EnvConfig
    from coreenv.layout import cluster_columns

    column = cluster_columns(EnvConfig(switch_cost=5)).start
    config = MATConfig(encoder="slots", sets=True, slot_features=11, cluster_column=column)
    torch.manual_seed(0)
    model = MAT(config)
    torch.nn.init.normal_(model.pair.weights.weight)
    obs, occupied = real_observations(3, num_nodes=8, num_slots=16, node_speeds="mixed", switch_cost=5)
    out = model.act(obs, occupied, deterministic=True)
    torch.testing.assert_close(model.score_actions(obs, out.actions, out.masks).log_probs, out.log_probs)
    table = model.slot_table(obs)
    pair = model.pair(table, 8)  # (1, 8, 16): nonzero only where a task last trained on the node
    last = torch.round(table[0, :, column] * 8) - 1
    for node in range(8):
        assert torch.equal(pair[0, node] != 0, (last == node) & occupied[0])
    with pytest.raises(ValueError, match="slot blocks"):
        model.act(*real_observations(3, num_nodes=8, num_slots=16))  # no cluster columns


def test_a_sets_network_needs_the_slot_encoder():
    with pytest.raises(ValueError, match="sets needs encoder='slots'"):
        MATConfig(sets=True)
