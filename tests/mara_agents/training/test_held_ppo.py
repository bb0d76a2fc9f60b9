"""PPO over held decisions: semi-Markov advantages, learning from scratch, resumption, checks."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import TINY_TRAINING_ENV  # noqa: E402
from mara_agents.evaluation import completion_rates  # noqa: E402
from mara_agents.policy import MAT, MATConfig  # noqa: E402
from mara_agents.schedulers.mara import MARA  # noqa: E402
from mara_agents.training.episodes import (  # noqa: E402
    PlayedEpisodes,
    play_episodes,
    segment_rewards,
)
from mara_agents.training.held_ppo import (  # noqa: E402
    HeldPPOConfig,
    HeldPPOTrainer,
    decision_advantages,
)

TINY_ENV = TINY_TRAINING_ENV


def trainer(seed=0, **fields):
    torch.manual_seed(seed)
    fields = {"episodes": 16, "lr": 3e-3, "minibatches": 4, **fields}
    config = HeldPPOConfig(seed=seed, **fields)
    return HeldPPOTrainer(MAT(MATConfig(num_nodes=2, num_slots=3)), None, config, TINY_ENV, 0)


def played(steps, lanes, rewards):
    """Decisions at ``steps`` of ``lanes`` over a (T, B) reward table; the tensors are dummies."""
    n = len(steps)
    dummy = torch.zeros(n, 1)
    return PlayedEpisodes(
        dummy, dummy, dummy, dummy, dummy, np.array(steps), np.array(lanes),
        np.array(rewards, float), np.zeros(np.shape(rewards)[1]), 0,
    )  # fmt: skip


def test_a_held_decision_collects_the_rewards_until_its_lanes_next_decision():
    rewards = [[1, 0], [2, 5], [3, 0], [4, 1]]  # lane 0 decides at 0 and 2, lane 1 at 0, 1, 3
    episodes = played([0, 0, 1, 2, 3], [0, 1, 1, 0, 1], rewards)
    np.testing.assert_allclose(segment_rewards(episodes), [3, 0, 5, 7, 1])


def test_advantages_run_over_each_lanes_decisions_and_stop_at_its_episodes_end():
    rewards = [[1, 0], [2, 5], [3, 0], [4, 1]]
    episodes = played([0, 0, 1, 2, 3], [0, 1, 1, 0, 1], rewards)
    values = torch.tensor([[1.0], [0.5], [2.0], [4.0], [1.0]])
    advantages, returns = decision_advantages(episodes, values, lam=1.0)
    # λ = 1, γ = 1: the advantage is the return-to-go from the decision minus its value
    to_go = torch.tensor([[10.0], [6.0], [6.0], [7.0], [1.0]])
    torch.testing.assert_close(advantages, to_go - values)
    torch.testing.assert_close(returns, to_go)
    advantages, _ = decision_advantages(episodes, values, lam=0.0)
    # λ = 0: one decision's reward plus the value of its lane's next decision (0 at the end)
    one_step = torch.tensor([[3 + 4.0 - 1], [0 + 2.0 - 0.5], [5 + 1.0 - 2], [7 - 4.0], [1 - 1.0]])
    torch.testing.assert_close(advantages, one_step)


def test_each_update_plays_whole_episodes_of_new_seeds_with_fewer_decisions_than_steps():
    ppo = trainer(hold=8)
    assert ppo.seeds() == list(range(16))
    stats = ppo.iterate()
    assert ppo.seeds() == list(range(16, 32))
    assert 0 < stats["decisions"] < ppo.env_steps / 2
    assert 0.0 <= stats["completion"] <= 1.0


def completion(model):
    """Mean completion rate of the deterministic policy on 32 fixed unseen episodes (paired)."""
    rates = completion_rates(MARA(model, None), 32, 10_000, **TINY_ENV)
    model.train()
    return rates.mean()


def test_a_short_run_from_random_weights_improves_completion():
    torch.set_num_threads(1)
    ppo = trainer()
    before = completion(ppo.model)
    for _ in range(30):
        ppo.iterate()
    # a threshold, not a recorded number: float kernels differ between machines
    assert completion(ppo.model) > before + 0.05


def test_checkpoints_resume_bit_for_bit():
    straight = trainer()
    for _ in range(3):
        straight.iterate()
    first = trainer()
    first.iterate()
    resumed = trainer(seed=1)  # other weights, to be overwritten
    resumed.load_state_dict(first.state_dict())
    resumed.iterate()
    resumed.iterate()
    for key, value in straight.model.state_dict().items():
        assert torch.equal(value, resumed.model.state_dict()[key]), key


def test_annealing_lowers_the_learning_rate_and_entropy_weight_to_zero_over_its_steps():
    ppo = trainer(anneal=1)  # one update plays more than one step: the second has nothing left
    assert ppo.schedule() == 1.0
    assert ppo.iterate()["schedule"] == 1.0
    assert ppo.schedule() == 0.0
    before = {key: value.clone() for key, value in ppo.model.state_dict().items()}
    assert ppo.iterate()["schedule"] == 0.0
    assert ppo.optimizer.param_groups[0]["lr"] == 0.0
    for key, value in ppo.model.state_dict().items():
        assert torch.equal(value, before[key]), key
    constant = trainer()
    constant.iterate()
    assert constant.schedule() == 1.0


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"episodes": 0}, "HeldPPOConfig.episodes must be >= 1, got 0"),
        ({"hold": 0}, "HeldPPOConfig.hold must be >= 1, got 0"),
        ({"lr": 0.0}, "HeldPPOConfig.lr must be > 0, got 0.0"),
        ({"entropy": -0.1}, "HeldPPOConfig.entropy must be >= 0, got -0.1"),
        ({"anneal": -1}, "HeldPPOConfig.anneal must be >= 0, got -1"),
        ({"gae_lambda": 1.5}, r"HeldPPOConfig.gae_lambda must be in \[0, 1\], got 1.5"),
    ],
)
def test_bad_config_is_refused_naming_the_field(fields, message):
    with pytest.raises(ValueError, match=message):
        HeldPPOConfig(**fields)


def test_episodes_are_played_whole_one_per_lane():
    ppo = trainer()
    with pytest.raises(ValueError, match="3 seeds for 16 lanes; one episode per lane"):
        play_episodes(ppo.core, ppo.model, [0, 1, 2], 8, False, ppo.generator)
    cut = {**TINY_ENV, "max_steps": 50}
    with pytest.raises(ValueError, match="EnvConfig.max_steps 50 would cut some"):
        HeldPPOTrainer(MAT(MATConfig(num_nodes=2, num_slots=3)), None, HeldPPOConfig(), cut, 0)
