"""Imitation: the masks MAT would have used, demonstrations of a teacher, and a loss that falls."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import SMALL_CURVES  # noqa: E402
from mara_agents.policy import MAT, MATConfig  # noqa: E402
from mara_agents.predictors import WLSPredictor  # noqa: E402
from mara_agents.training import ImitationConfig, demonstrations, imitate  # noqa: E402
from mara_agents.training.imitation import sequential_masks  # noqa: E402

TINY_ENV = dict(
    num_nodes=2, num_slots=3, arrival_prob=0.3, arrival_horizon=40, task_set=SMALL_CURVES
)


def test_sequential_masks_remove_the_slots_earlier_nodes_took():
    action_mask = np.array([1, 0, 1, 1, 1], np.int8)  # slots 0, 2, 3 occupied; idle (4) always
    masks = sequential_masks(action_mask, np.array([2, 4, 0]), num_slots=4)
    expected = [[1, 0, 1, 1, 1], [1, 0, 0, 1, 1], [1, 0, 0, 1, 1]]
    np.testing.assert_array_equal(masks, np.array(expected, bool))


def test_sequential_masks_are_those_mat_samples_under():
    torch.manual_seed(0)
    model = MAT(MATConfig(num_nodes=3, num_slots=4))
    generator = torch.Generator().manual_seed(0)
    obs = torch.randn((32, 3, model.config.obs_dim), generator=generator)
    occupied = torch.rand((32, 4), generator=generator) < 0.5
    out = model.act(obs, occupied, generator=generator)
    for row in range(32):
        action_mask = np.append(occupied[row].numpy(), True)
        masks = sequential_masks(action_mask, out.actions[row].numpy(), num_slots=4)
        np.testing.assert_array_equal(masks, out.masks[row].numpy())


def test_demonstrations_label_every_step_and_imitation_lowers_the_loss():
    demos = demonstrations(WLSPredictor(), "lara", episodes=2, seed=0, env_overrides=TINY_ENV)
    assert len(demos) == demos.masks.shape[0] == demos.actions.shape[0] > 40
    assert demos.actions.dtype == torch.long and demos.masks.dtype == torch.bool
    chosen = torch.gather(demos.masks, 2, demos.actions[..., None])  # every label was allowed
    assert chosen.all()
    assert len(demos.concat(demos)) == 2 * len(demos)

    torch.manual_seed(0)
    model = MAT(MATConfig(num_nodes=2, num_slots=3))
    first = imitate(model, [demos], ImitationConfig(epochs=1, batch=64), "cpu")
    later = imitate(model, [demos], ImitationConfig(epochs=20, batch=64), "cpu")
    assert later < 0.7 * first


def test_round_seeds_and_bad_imitation_config():
    assert [ImitationConfig(seed=7).round_seed(r) for r in range(3)] == [7, 10_007, 20_007]
    with pytest.raises(ValueError, match="ImitationConfig.teacher must be one of"):
        ImitationConfig(teacher="fifo")
    with pytest.raises(ValueError, match="ImitationConfig.epochs must be >= 1, got 0"):
        ImitationConfig(epochs=0)
    with pytest.raises(ValueError, match="ImitationConfig.dagger_rounds must be >= 0, got -1"):
        ImitationConfig(dagger_rounds=-1)
