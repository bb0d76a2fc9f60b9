"""The MaskablePPO baseline's training: from scratch, judged on selection episodes, resumed, and
played in the form it trained in."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from coreenv import CoreSequentialEnv, Decisions  # noqa: E402
from coreenv.config import make_config  # noqa: E402
from helpers import SMALL_CURVES, OneByOne  # noqa: E402
from mara_agents.baselines.maskable_ppo import (  # noqa: E402
    MaskablePPOScheduler,
    SequentialPPOScheduler,
    load_scheduler,
)
from mara_agents.evaluation import completion_rates, run_episodes  # noqa: E402
from mara_agents.predictors import make_predictor  # noqa: E402
from mara_agents.training.maskable_ppo import (  # noqa: E402
    MaskablePPOConfig,
    new_model,
    train_maskable_ppo,
    training_envs,
)
from sb3_contrib import MaskablePPO  # noqa: E402

ENV = {"task_set": SMALL_CURVES, "num_nodes": 2, "num_slots": 3, "arrival_horizon": 60}


def config(work, **fields):
    fields = {"envs": 4, "n_steps": 32, "minibatches": 2, "eval_every": 128, **fields}
    return MaskablePPOConfig(work=work, **{"eval_episodes": 3, "env": ENV, **fields})


def test_a_run_records_its_learning_curve_and_resumes_where_it_stopped(tmp_path):
    torch.set_num_threads(1)
    history = train_maskable_ppo(config(tmp_path, max_steps=256), log=lambda _: None)
    assert [h["steps"] for h in history] == [0, 128, 256]
    assert all(len(h["rates"]) == 3 for h in history)
    assert json.loads((tmp_path / "history.json").read_text()) == history
    assert (tmp_path / "model.zip").is_file()
    longer = train_maskable_ppo(config(tmp_path, max_steps=384), log=lambda _: None)
    assert [h["steps"] for h in longer] == [0, 128, 256, 384]
    assert longer[:3] == history


def test_the_scheduler_plays_the_same_episodes_alone_and_in_lockstep(tmp_path):
    torch.set_num_threads(1)
    train_maskable_ppo(config(tmp_path, max_steps=128), log=lambda _: None)
    scheduler = MaskablePPOScheduler.load(tmp_path / "best.zip")  # the start's, at least
    lockstep = completion_rates(scheduler, 3, 900_000, **ENV)
    episodes = [(make_config(None, **ENV), 900_000 + i) for i in range(3)]
    rows = run_episodes(OneByOne(scheduler), episodes)
    np.testing.assert_array_equal(lockstep, [r["completion_rate"] for r in rows])


def test_bad_settings_and_missing_models_are_refused(tmp_path):
    with pytest.raises(ValueError, match="MaskablePPOConfig.envs must be >= 1, got 0"):
        config(tmp_path, envs=0)
    with pytest.raises(ValueError, match=r"MaskablePPOConfig.gamma must be in \(0, 1\], got 1.5"):
        config(tmp_path, gamma=1.5)
    with pytest.raises(ValueError, match="MaskablePPOConfig.width must be >= 1, got 0"):
        config(tmp_path, width=0)
    with pytest.raises(ValueError, match="MaskablePPOConfig.target_kl must be None or > 0, got 0"):
        config(tmp_path, target_kl=0.0)
    with pytest.raises(ValueError, match="MaskablePPOConfig.anneal must be >= 0, got -1"):
        config(tmp_path, anneal=-1)
    with pytest.raises(FileNotFoundError, match="no MaskablePPO model at"):
        MaskablePPOScheduler.load(tmp_path / "missing.zip")


def test_an_annealed_rate_falls_linearly_with_the_runs_steps_across_evaluations(tmp_path):
    torch.set_num_threads(1)
    small = {"envs": 4, "n_steps": 16, "minibatches": 2, "epochs": 1}  # 64 steps an update
    run = config(tmp_path, max_steps=192, eval_every=64, lr=1e-3, anneal=256, **small)
    train_maskable_ppo(run, log=lambda _: None)
    model = MaskablePPO.load(tmp_path / "model.zip")
    rate = model.policy.optimizer.param_groups[0]["lr"]
    assert model.num_timesteps == 192 and rate == pytest.approx(1e-3 * (1 - 192 / 256))


def test_the_slot_set_network_has_the_configured_width_and_the_update_its_kl_stop(tmp_path):
    run = config(tmp_path, form="sequential", policy="slot_sets", width=16, target_kl=0.02)
    model = new_model(run, training_envs(run))
    assert model.policy.features_extractor.width == 16 and model.target_kl == 0.02


def test_distinct_decoding_never_collides_and_agrees_where_greedy_does_not_collide(tmp_path):
    torch.set_num_threads(1)
    benchmark = {"task_set": "id_train", "arrival_prob": 0.04}  # 4 nodes, 8 slots
    run = config(tmp_path, max_steps=128, eval_episodes=1, env=benchmark)
    train_maskable_ppo(run, log=lambda _: None)
    model = tmp_path / "model.zip"
    greedy, distinct = MaskablePPOScheduler.load(model), MaskablePPOScheduler.load(model, True)
    episode = [(make_config(None, task_set="id", arrival_prob=0.04), 1_000_000)]
    assert run_episodes(greedy, episode)[0]["conflicts"] > 0  # independent heads collide
    assert run_episodes(distinct, episode)[0]["conflicts"] == 0
    rng = np.random.default_rng(0)
    state = rng.normal(size=(64, 1, *greedy.model.observation_space.shape)).astype(np.float32)
    ids = np.broadcast_to(np.eye(4, dtype=np.float32), (64, 4, 4))
    obs = np.concatenate([ids, np.broadcast_to(state, (64, 4, state.shape[-1]))], -1)
    mask = rng.random((64, 9)) < 0.7
    mask[:, -1] = True  # idling is always allowed
    a, b = greedy.actions(obs, mask), distinct.actions(obs, mask)
    taken = b[:, :, None] == np.arange(8)  # (E, M, K): node on slot, idling excluded
    assert (taken.sum(1) <= 1).all() and mask[np.arange(64)[:, None], b].all()
    clean = np.array([len(set(row[row < 8])) == len(row[row < 8]) for row in a])
    assert clean.any() and not clean.all()  # both kinds of state are exercised
    np.testing.assert_array_equal(a[clean], b[clean])


SEQUENTIAL = {"form": "sequential", "decisions": "events", "hold": 6}


@pytest.mark.parametrize(
    "policy, order",
    [
        ("mlp", "table"),
        ("symlog_mlp", "table"),
        ("slot_set", "table"),
        ("slot_sets", "table"),
        ("mlp", "deadline"),
    ],
)
def test_a_sequential_run_declares_its_decision_form_and_plays_as_it_trained(
    tmp_path, policy, order
):
    """The saved model plays in its form (decisions, slot order): lockstep rows equal its own
    sequential episodes."""
    torch.set_num_threads(1)
    run = config(tmp_path, max_steps=128, policy=policy, hidden=16, slot_order=order, **SEQUENTIAL)
    train_maskable_ppo(run, lambda _: None)
    scheduler = load_scheduler(tmp_path / "model.zip")
    assert isinstance(scheduler, SequentialPPOScheduler)
    widths = {
        m.out_features
        for m in scheduler.model.policy.mlp_extractor.modules()
        if isinstance(m, torch.nn.Linear)
    }
    mlp = policy not in ("slot_set", "slot_sets")
    assert (widths == {16}) == mlp  # the MLP's two layers of ``hidden`` units
    if policy == "symlog_mlp":  # it reads sign(x)·log(1 + |x|) of the observations
        obs = torch.tensor([[-1000.0, -1.0, 0.0, 0.5, 1000.0]])
        features = scheduler.model.policy.features_extractor(obs)
        torch.testing.assert_close(features, torch.sign(obs) * torch.log1p(obs.abs()))
    assert scheduler.decisions == Decisions(at="events", hold=6)
    assert scheduler.slot_order == order
    lockstep = completion_rates(scheduler, 3, 900_000, **ENV)
    episodes = [(make_config(None, **ENV), 900_000 + i) for i in range(3)]
    alone = [r["completion_rate"] for r in run_episodes(OneByOne(scheduler), episodes)]
    np.testing.assert_array_equal(lockstep, alone)
    for seed, rate in zip(range(900_000, 900_003), lockstep):
        env = CoreSequentialEnv(
            predictor=make_predictor("wls"), decisions=scheduler.decisions, slot_order=order, **ENV
        )
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            masks = env.action_masks()[None]
            action, _ = scheduler.model.predict(obs[None], action_masks=masks, deterministic=True)
            obs, _, terminated, truncated, info = env.step(int(action[0]))
            done = terminated or truncated
        assert info["metrics"]["completion_rate"] == rate and info["metrics"]["conflicts"] == 0


def test_the_joint_form_keeps_its_scheduler_and_forms_are_checked(tmp_path):
    torch.set_num_threads(1)
    train_maskable_ppo(config(tmp_path, max_steps=128), log=lambda _: None)
    scheduler = load_scheduler(tmp_path / "model.zip")
    assert type(scheduler) is MaskablePPOScheduler
    assert getattr(scheduler, "decisions", None) is None
    with pytest.raises(ValueError, match="MaskablePPOConfig.form must be one of"):
        config(tmp_path, form="tree")
    for sequential_only in ({"policy": "slot_set"}, {"slot_order": "deadline"}):
        with pytest.raises(ValueError, match="form 'joint' trains the MLP deciding every step"):
            config(tmp_path, **sequential_only)
    with pytest.raises(ValueError, match=r"slot_order must be one of \('table', 'deadline'\)"):
        config(tmp_path, slot_order="arrival", **SEQUENTIAL)
    with pytest.raises(ValueError, match="MaskablePPOConfig.hold must be >= 1, got 0"):
        config(tmp_path, hold=0, **{k: v for k, v in SEQUENTIAL.items() if k != "hold"})


def test_a_run_continues_only_in_its_own_form_and_the_joint_loader_points_to_the_right_one(
    tmp_path,
):
    torch.set_num_threads(1)
    train_maskable_ppo(config(tmp_path, max_steps=128, **SEQUENTIAL), log=lambda _: None)
    with pytest.raises(ValueError, match="give the new run another work folder"):
        train_maskable_ppo(config(tmp_path, max_steps=256, **{**SEQUENTIAL, "hold": 3}))
    others = ({"policy": "slot_set"}, {"policy": "slot_sets"}, {"policy": "symlog_mlp"})
    for other in (*others, {"slot_order": "deadline"}):
        with pytest.raises(ValueError, match="give the new run another work folder"):
            train_maskable_ppo(config(tmp_path, max_steps=256, **other, **SEQUENTIAL))
    with pytest.raises(ValueError, match="load it with .*load_scheduler"):
        MaskablePPOScheduler.load(tmp_path / "model.zip")


def test_a_sets_policy_plays_a_bigger_cluster_and_others_name_the_one_that_does(tmp_path):
    """Trained at 2 nodes and 3 slots, ``slot_sets`` plays 4 and 6 (alone as in lockstep); the
    MLP and the slot-set policy reading node ids refuse it, naming ``ppo``."""
    torch.set_num_threads(1)
    big = {**ENV, "num_nodes": 4, "num_slots": 6}
    episodes = [(make_config(None, **big), 900_000 + i) for i in range(2)]
    for policy in ("slot_sets", "slot_set", "mlp"):
        run = config(tmp_path / policy, max_steps=128, policy=policy, hidden=16, **SEQUENTIAL)
        train_maskable_ppo(run, lambda _: None)
        scheduler = load_scheduler(tmp_path / policy / "model.zip")
        if policy != "slot_sets":
            refused = "trained at 2 nodes and 3 slots|another layout.*is 'ppo'"
            with pytest.raises(ValueError, match=refused):
                run_episodes(scheduler, episodes)
            continue
        rows = run_episodes(scheduler, episodes)
        assert rows == run_episodes(OneByOne(scheduler), episodes)
        assert all(row["conflicts"] == 0 and row["completion_rate"] > 0 for row in rows)
