"""IPPO: learns from scratch on a small regime, resumes, and plays alone as in lockstep; its
slot-set network reads a node's live view as the sequential form's observation."""

import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from coreenv import CoreEnv, Decisions, SlotFeature  # noqa: E402
from coreenv.config import make_config  # noqa: E402
from coreenv.layout import sequential_layout, slot_width  # noqa: E402
from coreenv_lab.baselines.ippo import (  # noqa: E402
    IPPOConfig,
    IPPOScheduler,
    SlotSetActorCritic,
    train_ippo,
)
from helpers import TINY_TRAINING_ENV, OneByOne  # noqa: E402
from mara_agents.evaluation import completion_rates, run_episodes  # noqa: E402

ENV = {**TINY_TRAINING_ENV, "shaping_beta": 0.0}


def config(work, **fields):
    fields = {"envs": 8, "n_steps": 32, "eval_every": 256, "eval_episodes": 16, **fields}
    return IPPOConfig(work=work, env=ENV, lr=3e-3, **fields)


def quiet(_):
    pass


@pytest.mark.parametrize("policy", [{}, {"policy": "slot_set", "live": True, "hidden": 16}])
def test_a_short_run_from_random_weights_beats_its_start(tmp_path, policy):
    torch.set_num_threads(1)
    history = train_ippo(config(tmp_path, max_steps=8192, eval_every=8192, **policy), log=quiet)
    start, last = np.array(history[0]["rates"]), np.array(history[-1]["rates"])
    # a threshold, not a recorded number: float kernels differ between machines
    assert last.mean() > start.mean() + 0.05


def test_a_run_resumes_where_it_stopped(tmp_path):
    torch.set_num_threads(1)
    began = time.perf_counter()
    history = train_ippo(config(tmp_path, max_steps=512), log=quiet)
    wall = (time.perf_counter() - began) / 60
    minutes = [h["minutes"] for h in history]
    assert minutes == sorted(minutes) and minutes[-1] <= wall  # each call's time counted once
    assert [h["steps"] for h in history] == [0, 256, 512]
    longer = train_ippo(config(tmp_path, max_steps=768), log=quiet)
    assert [h["steps"] for h in longer] == [0, 256, 512, 768] and longer[:3] == history
    assert (tmp_path / "best.pt").is_file()  # the start's, at least


def test_the_scheduler_plays_the_same_episodes_alone_and_in_lockstep(tmp_path):
    torch.set_num_threads(1)
    train_ippo(config(tmp_path, max_steps=256), log=quiet)
    scheduler = IPPOScheduler.load(tmp_path / "best.pt")
    lockstep = completion_rates(scheduler, 3, 900_000, **ENV)
    episodes = [(make_config(None, **ENV), 900_000 + i) for i in range(3)]
    rows = run_episodes(OneByOne(scheduler), episodes)
    np.testing.assert_array_equal(lockstep, [r["completion_rate"] for r in rows])


def test_bad_settings_and_missing_policies_are_refused(tmp_path):
    with pytest.raises(ValueError, match="IPPOConfig.minibatches must be >= 1, got 0"):
        config(tmp_path, minibatches=0)
    with pytest.raises(ValueError, match=r"IPPOConfig.gae_lambda must be in \[0, 1\], got 1.5"):
        config(tmp_path, gae_lambda=1.5)
    with pytest.raises(FileNotFoundError, match="no IPPO policy at"):
        IPPOScheduler.load(tmp_path / "missing.pt")


@pytest.mark.parametrize("policy", ["mlp", "slot_set", "slot_sets"])
def test_a_live_run_never_collides_and_plays_in_its_decision_form(tmp_path, policy):
    """Nodes choosing in turn under live masks make matchings; the policy plays as it trained."""
    torch.set_num_threads(1)
    run = config(tmp_path, max_steps=512, live=True, decisions="events", hold=4, policy=policy)
    history = train_ippo(run, log=quiet)
    assert [h["steps"] for h in history] == [0, 256, 512]
    scheduler = IPPOScheduler.load(tmp_path / "best.pt")
    assert scheduler.live and scheduler.decisions == Decisions(at="events", hold=4)
    episodes = [(make_config(None, **ENV), 900_000 + i) for i in range(3)]
    lockstep = run_episodes(scheduler, episodes)
    assert lockstep == run_episodes(OneByOne(scheduler), episodes)
    assert all(row["conflicts"] == 0 for row in lockstep)
    with pytest.raises(ValueError, match="IPPOConfig.decisions must be one of"):
        config(tmp_path, decisions="often")


def test_the_slot_set_network_needs_live_views_and_a_known_name(tmp_path):
    with pytest.raises(ValueError, match="'slot_set' reads the slots taken before each node"):
        config(tmp_path, policy="slot_set")
    choices = r"\('mlp', 'slot_set', 'slot_sets'\)"
    with pytest.raises(ValueError, match=f"IPPOConfig.policy must be one of {choices}"):
        config(tmp_path, policy="gnn")


def test_a_sets_policy_plays_a_cluster_twice_as_big_and_one_by_id_is_refused(tmp_path):
    """The same weights read 2 M nodes and 2 K slots, under live masks: matchings, no conflict;
    a policy reading nodes by id (or an MLP) says it was trained on another layout."""
    torch.set_num_threads(1)
    big = {**ENV, "num_nodes": 2 * ENV["num_nodes"], "num_slots": 2 * ENV["num_slots"]}
    for policy in ("slot_sets", "slot_set", "mlp"):
        run = config(tmp_path / policy, max_steps=256, live=True, policy=policy, hidden=16)
        train_ippo(run, log=quiet)
        scheduler = IPPOScheduler.load(tmp_path / policy / "best.pt")
        episodes = [(make_config(None, **big), 900_000 + i) for i in range(2)]
        if policy != "slot_sets":
            with pytest.raises(ValueError, match="it was trained on another layout"):
                run_episodes(scheduler, episodes)
            continue
        rows = run_episodes(scheduler, episodes)
        assert all(row["conflicts"] == 0 and row["completion_rate"] > 0 for row in rows)
        assert rows == run_episodes(OneByOne(scheduler), episodes)


def test_a_slot_set_run_resumes_only_as_a_slot_set_run(tmp_path):
    torch.set_num_threads(1)
    train_ippo(config(tmp_path, max_steps=256, live=True, policy="slot_set"), log=quiet)
    with pytest.raises(ValueError, match="give the new run another work folder"):
        train_ippo(config(tmp_path, max_steps=512, live=True), log=quiet)


def slot_set_network(env_config):
    torch.manual_seed(0)
    k, m = env_config.num_slots, env_config.num_nodes
    return SlotSetActorCritic(k, slot_width(env_config), m, hidden=16)


def test_the_slot_set_network_reads_a_node_view_in_the_sequential_order():
    """A node's live view (its id, the state, the taken flags) is read as the sequential form's
    observation of that node: the state, the taken flags, then its id."""
    env_config = make_config(None, **ENV)
    env = CoreEnv(env_config)
    obs, _ = env.reset(seed=7)
    taken = np.array([1, 0, 1], np.float32)
    for node, agent in enumerate(env.agents):
        live = np.concatenate((obs[agent]["observation"], taken))
        expected = np.concatenate((env.state(), taken, np.eye(env_config.num_nodes)[node]))
        assert expected.shape == (sequential_layout(env_config)[2],)
        read = slot_set_network(env_config).sequential(torch.from_numpy(live)).numpy()
        np.testing.assert_array_equal(read, expected)


def test_permuting_the_slots_permutes_the_slot_logits_and_keeps_idling():
    env_config = make_config(None, **ENV)
    k, f, m = env_config.num_slots, slot_width(env_config), env_config.num_nodes
    network = slot_set_network(env_config)
    rng = np.random.default_rng(2)
    state_at = m + 3  # node id, then the three global features, then the slot blocks
    views = rng.normal(size=(12, state_at + k * f + k)).astype(np.float32)
    views[:, state_at + int(SlotFeature.OCCUPIED) : state_at + k * f : f] = (
        rng.random((12, k)) < 0.6
    )
    order = np.array([2, 0, 1])
    moved = views.copy()
    blocks = views[:, state_at : state_at + k * f].reshape(12, k, f)
    moved[:, state_at : state_at + k * f] = blocks[:, order].reshape(12, -1)
    moved[:, state_at + k * f :] = views[:, state_at + k * f :][:, order]
    masks = torch.ones(12, k + 1, dtype=torch.bool)
    with torch.no_grad():
        logits, _ = network(torch.from_numpy(views), masks)
        logits_moved, _ = network(torch.from_numpy(moved), masks)
    torch.testing.assert_close(logits_moved[:, :k], logits[:, :k][:, order])
    torch.testing.assert_close(logits_moved[:, k], logits[:, k])
