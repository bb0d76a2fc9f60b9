"""GAE and value statistics by hand: termination stops the bootstrap, truncation does not."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mara_agents.training import ValueNorm, gae  # noqa: E402

REWARDS = torch.tensor([[1.0], [0.0], [2.0]])  # (T, E)
VALUES = torch.tensor([[[0.5]], [[1.0]], [[0.0]], [[3.0]]])  # (T + 1, E, M)
NOT_ENDED = torch.tensor([[False], [False], [False]])


def test_gae_on_a_three_step_example_where_an_episode_terminates():
    terminated = torch.tensor([[False], [True], [False]])
    final_values = torch.full((3, 1, 1), 99.0)  # never read: nothing is truncated
    estimate = gae(REWARDS, VALUES, terminated, NOT_ENDED, final_values, gamma=0.9, lam=0.5)
    d2 = 2.0 + 0.9 * 3.0 - 0.0  # step 2 bootstraps from the last value
    d1 = 0.0 - 1.0  # step 1 ends an episode: no bootstrap, no carry
    d0 = 1.0 + 0.9 * 1.0 - 0.5
    expected = torch.tensor([d0 + 0.9 * 0.5 * d1, d1, d2])
    torch.testing.assert_close(estimate.advantages[:, 0, 0], expected)
    torch.testing.assert_close(estimate.returns, estimate.advantages + VALUES[:-1])


def test_gae_on_a_three_step_example_where_an_episode_is_truncated():
    truncated = torch.tensor([[False], [True], [False]])
    final_values = torch.zeros((3, 1, 1))
    final_values[1] = 4.0  # the value of the state the episode was cut in, after step 1
    estimate = gae(REWARDS, VALUES, NOT_ENDED, truncated, final_values, gamma=0.9, lam=0.5)
    d2 = 2.0 + 0.9 * 3.0 - 0.0
    d1 = 0.0 + 0.9 * 4.0 - 1.0  # bootstraps from the cut state, not from values[2] (next episode)
    d0 = 1.0 + 0.9 * 1.0 - 0.5
    expected = torch.tensor([d0 + 0.9 * 0.5 * d1, d1, d2])  # still no carry across the cut
    torch.testing.assert_close(estimate.advantages[:, 0, 0], expected)


def test_gae_without_truncation_is_bit_for_bit_the_terminations_only_formula():
    generator = torch.Generator().manual_seed(0)
    rewards = torch.randn((16, 3), generator=generator)
    values = torch.randn((17, 3, 2), generator=generator)
    terminated = torch.rand((16, 3), generator=generator) < 0.2
    estimate = gae(
        rewards,
        values,
        terminated,
        torch.zeros_like(terminated),
        torch.randn((16, 3, 2)),
        1.0,
        0.95,
    )
    advantages, running = torch.zeros_like(values[:-1]), torch.zeros_like(values[0])
    for t in reversed(range(16)):  # the formula before truncation was told apart
        alive = (1.0 - terminated[t].float())[:, None]
        delta = rewards[t][:, None] + 1.0 * alive * values[t + 1] - values[t]
        running = delta + 1.0 * 0.95 * alive * running
        advantages[t] = running
    assert torch.equal(estimate.advantages, advantages)


def test_value_norm_matches_numpy():
    norm, data = ValueNorm(), np.random.default_rng(0).normal(3.0, 2.0, 1000)
    for chunk in np.split(data, 10):
        norm.update(torch.from_numpy(chunk))
    assert norm.mean == pytest.approx(data.mean()) and norm.std == pytest.approx(data.std())
