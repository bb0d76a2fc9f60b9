"""PPO for MAT: GAE by hand, a short run that improves, and bit-for-bit resumption."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import SMALL_CURVES  # noqa: E402
from mara_agents.policy import MAT, MATConfig  # noqa: E402
from mara_agents.training import PPOConfig, PPOTrainer, ValueNorm, VecCoreEnv, gae  # noqa: E402

TINY_ENV = dict(
    num_nodes=2,
    num_slots=3,
    arrival_prob=0.3,
    arrival_horizon=60,
    deadline_window=(15, 40),
    task_set=SMALL_CURVES,
    shaping_beta=1.0,
)


def test_gae_on_a_three_step_example():
    rewards = torch.tensor([[1.0], [0.0], [2.0]])
    values = torch.tensor([[[0.5]], [[1.0]], [[0.0]], [[3.0]]])  # (T + 1, E, M)
    dones = torch.tensor([[False], [True], [False]])
    advantages, returns = gae(rewards, values, dones, gamma=0.9, lam=0.5)
    d2 = 2.0 + 0.9 * 3.0 - 0.0  # step 2 bootstraps from the last value
    d1 = 0.0 - 1.0  # step 1 ends an episode: no bootstrap, no carry
    d0 = 1.0 + 0.9 * 1.0 - 0.5
    expected = torch.tensor([d0 + 0.9 * 0.5 * d1, d1, d2])
    torch.testing.assert_close(advantages[:, 0, 0], expected)
    torch.testing.assert_close(returns, advantages + values[:-1])


def test_value_norm_matches_numpy():
    norm, data = ValueNorm(), np.random.default_rng(0).normal(3.0, 2.0, 1000)
    for chunk in np.split(data, 10):
        norm.update(torch.from_numpy(chunk))
    assert norm.mean == pytest.approx(data.mean()) and norm.std == pytest.approx(data.std())


def trainer(seed=0):
    torch.manual_seed(seed)
    envs = VecCoreEnv(8, seed=seed, **TINY_ENV)
    config = PPOConfig(envs=8, rollout=32, lr=3e-3, entropy=0.0, seed=seed)
    return PPOTrainer(MAT(MATConfig(num_nodes=2, num_slots=3)), envs, config)


def shaped_return(model, steps=100):
    """Total shaped reward of ``model`` on fixed episodes with fixed sampling noise (paired)."""
    envs = VecCoreEnv(16, seed=10_000, **TINY_ENV)
    generator = torch.Generator().manual_seed(0)
    obs, occupied = envs.reset()
    total = 0.0
    with torch.no_grad():
        for _ in range(steps):
            out = model.act(torch.from_numpy(obs), torch.from_numpy(occupied), generator=generator)
            obs, occupied, reward, _ = envs.step(out.actions.numpy())
            total += reward.sum()
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


def test_critic_warm_up_leaves_the_policy_untouched():
    ppo = trainer()
    before = {k: v.clone() for k, v in ppo.model.state_dict().items()}
    ppo.update(ppo.collect(), train_policy=False)
    after = ppo.model.state_dict()
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert changed and all(k.startswith("encoder.value.") for k in changed)
