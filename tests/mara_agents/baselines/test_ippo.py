"""IPPO: learns from scratch on a small regime, resumes, and plays alone as in lockstep."""

import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from coreenv import Decisions  # noqa: E402
from coreenv.config import make_config  # noqa: E402
from helpers import TINY_TRAINING_ENV, OneByOne  # noqa: E402
from mara_agents.baselines.ippo import IPPOConfig, IPPOScheduler, train_ippo  # noqa: E402
from mara_agents.evaluation import completion_rates, run_episodes  # noqa: E402

ENV = {**TINY_TRAINING_ENV, "shaping_beta": 0.0}


def config(work, **fields):
    fields = {"envs": 8, "n_steps": 32, "eval_every": 256, "eval_episodes": 16, **fields}
    return IPPOConfig(work=work, env=ENV, lr=3e-3, **fields)


def quiet(_):
    pass


def test_a_short_run_from_random_weights_beats_its_start(tmp_path):
    torch.set_num_threads(1)
    history = train_ippo(config(tmp_path, max_steps=8192, eval_every=8192), log=quiet)
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


def test_a_live_run_never_collides_and_plays_in_its_decision_form(tmp_path):
    """Nodes choosing in turn under live masks make matchings; the policy plays as it trained."""
    torch.set_num_threads(1)
    history = train_ippo(
        config(tmp_path, max_steps=512, live=True, decisions="events", hold=4), log=quiet
    )
    assert [h["steps"] for h in history] == [0, 256, 512]
    scheduler = IPPOScheduler.load(tmp_path / "best.pt")
    assert scheduler.live and scheduler.decisions == Decisions(at="events", hold=4)
    episodes = [(make_config(None, **ENV), 900_000 + i) for i in range(3)]
    lockstep = run_episodes(scheduler, episodes)
    assert lockstep == run_episodes(OneByOne(scheduler), episodes)
    assert all(row["conflicts"] == 0 for row in lockstep)
    with pytest.raises(ValueError, match="IPPOConfig.decisions must be one of"):
        config(tmp_path, decisions="often")
