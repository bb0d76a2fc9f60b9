"""PPO for MAT: a short run that improves, bit-for-bit resumption, and its config's checks."""

import pytest

torch = pytest.importorskip("torch")

from helpers import TINY_TRAINING_ENV  # noqa: E402
from mara_agents.policy import MAT, MATConfig  # noqa: E402
from mara_agents.training import (  # noqa: E402
    MARA_PPO,
    PPOConfig,
    PPOTrainer,
    occupied,
    rollout_lanes,
)

TINY_ENV = TINY_TRAINING_ENV


def trainer(seed=0):
    torch.manual_seed(seed)
    envs = rollout_lanes(8, seed=seed, **TINY_ENV)
    config = PPOConfig(envs=8, rollout=32, lr=3e-3, entropy=0.0, seed=seed)
    return PPOTrainer(MAT(MATConfig(num_nodes=2, num_slots=3)), envs, config)


def shaped_return(model, steps=100):
    """Total shaped reward of ``model`` on fixed episodes with fixed sampling noise (paired)."""
    envs = rollout_lanes(16, seed=10_000, **TINY_ENV)
    generator = torch.Generator().manual_seed(0)
    step = envs.view()
    total = 0.0
    with torch.no_grad():
        for _ in range(steps):
            allowed = torch.from_numpy(occupied(step.action_mask))
            out = model.act(torch.from_numpy(step.obs), allowed, generator=generator)
            step = envs.step(out.actions.numpy())
            total += step.rewards.sum()
    return total


def test_a_short_ppo_run_improves_return():
    torch.set_num_threads(1)
    ppo = trainer()
    before = shaped_return(ppo.model)
    for _ in range(60):
        ppo.update(ppo.collect())
    # same episodes, unseen in training. A threshold, not a recorded number: last-bit differences
    # between CPU kernels change the training run (seed 0 gave 1.32, 1.41 and 1.50 under the
    # AVX-512, AVX2 and generic ATen kernels; seeds 0-9 under two kernels gave 1.32 to 3.7)
    assert shaped_return(ppo.model) > 1.15 * before


def test_checkpoints_resume_bit_for_bit():
    straight = trainer()
    for _ in range(3):
        straight.update(straight.collect())

    first = trainer()
    first.update(first.collect())
    state = first.state_dict()
    resumed = trainer(seed=0)
    resumed.load_state_dict(state)
    for _ in range(2):
        resumed.update(resumed.collect())
    # both runs train here, in this process: bit for bit is the contract
    for a, b in zip(straight.model.state_dict().values(), resumed.model.state_dict().values()):
        assert torch.equal(a, b)
    assert straight.env_steps == resumed.env_steps


def test_bad_ppo_config_is_refused():
    with pytest.raises(ValueError, match="minibatches"):
        PPOConfig(envs=3, rollout=5, minibatches=4)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("envs", 0, "envs must be >= 1, got 0"),
        ("epochs", 0, "epochs must be >= 1, got 0"),
        ("lr", 0.0, "lr must be > 0, got 0.0"),
        ("clip", -0.1, "clip must be > 0, got -0.1"),
        ("entropy", -1.0, "entropy must be >= 0, got -1.0"),
        ("gamma", 1.5, r"gamma must be in \(0, 1\], got 1.5"),
        ("gae_lambda", -0.5, r"gae_lambda must be in \[0, 1\], got -0.5"),
    ],
)
def test_each_bad_ppo_field_is_named_with_its_value(field, value, message):
    with pytest.raises(ValueError, match=f"PPOConfig.{message}"):
        PPOConfig(**{field: value})


def test_the_shipped_recipe_keeps_its_values():
    # the values the shipped checkpoints trained with (docs/mara.md, Training 2)
    assert (MARA_PPO.lr, MARA_PPO.clip, MARA_PPO.entropy) == (3e-5, 0.1, 0.0)
    assert (MARA_PPO.envs, MARA_PPO.rollout, MARA_PPO.epochs, MARA_PPO.minibatches) == (
        32,
        128,
        4,
        4,
    )
    assert (MARA_PPO.gamma, MARA_PPO.gae_lambda, MARA_PPO.max_grad_norm) == (1.0, 0.95, 0.5)
    assert (MARA_PPO.value_clip, MARA_PPO.value_coef, MARA_PPO.seed) == (0.2, 1.0, 0)


def test_a_truncated_episode_bootstraps_from_the_state_it_was_cut_in():
    ppo = trainer()
    cut_at = 10  # every episode is cut at step 10 (max_steps), none terminates before
    ppo.envs = rollout_lanes(8, seed=0, max_steps=cut_at, **TINY_ENV)
    first = ppo.envs.view()
    ppo.obs, ppo.occupied = first.obs, occupied(first.action_mask)
    rollout = ppo.collect()
    ends = cut_at - 1  # the step index at which the episodes are cut
    assert not rollout.terminated.any()
    assert rollout.truncated[ends].all() and rollout.truncated.sum() == 8 * (32 // cut_at)
    # replay the same actions in a twin vector env to find the states the episodes were cut in
    twin = rollout_lanes(8, seed=0, max_steps=cut_at, **TINY_ENV)
    for t in range(ends + 1):
        step = twin.step(rollout.actions[t].numpy())
    with torch.no_grad():
        expected = ppo.value_norm.denormalize(ppo.model.values(torch.from_numpy(step.final_obs)))
    torch.testing.assert_close(rollout.final_values[ends], expected, rtol=0, atol=0)
    assert not torch.equal(rollout.final_values[ends], rollout.values[ends + 1])  # next episode's
    assert not rollout.final_values[:ends].any()
