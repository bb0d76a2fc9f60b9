"""Shared test helpers: hand-made curves and a scripted scenario to put exact tasks in an env."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import strategies as st

import coreenv
from coreenv import CoreEnv, CoreSequentialEnv, SequentialVectorEnv
from coreenv.episodes.scenarios import Scenario
from coreenv.episodes.tasks import TaskDraw
from coreenv.curves import Curve, SyntheticCurves
from coreenv.curves.targets import demand_of

SMALL_CURVES = SyntheticCurves(length=80)  # short curves keep property tests fast

TINY_TRAINING_ENV = dict(
    num_nodes=2,
    num_slots=3,
    arrival_prob=0.3,
    arrival_horizon=60,
    deadline_window=(15, 40),
    task_set=SMALL_CURVES,
    shaping_beta=1.0,
)
"""A small shaped regime where a short RL run can show that it learns (the trainers' tests)."""


class OneByOne:
    """A scheduler's ``act`` without its ``act_view``: runners play it one episode at a time."""

    def __init__(self, scheduler):
        self.scheduler = scheduler
        self.observation_predictor = scheduler.observation_predictor
        self.decisions = getattr(scheduler, "decisions", None)

    def reset(self, env):
        self.scheduler.reset(env)

    def act(self, observations, infos):
        return self.scheduler.act(observations, infos)


@st.composite
def env_settings(draw, nodes: int = 5, slots: int = 6, horizon: int = 60, window: int = 40):
    """Random `EnvConfig` fields for property tests, sizes up to the bounds (task set apart)."""
    low = draw(st.integers(1, window))
    f_low = draw(st.floats(0.01, 1.0))
    num_nodes = draw(st.integers(1, nodes))
    return dict(
        num_nodes=num_nodes,
        num_slots=draw(st.integers(num_nodes, max(num_nodes, slots))),  # no node idles for ever
        arrival_prob=draw(st.floats(0.0, 1.0)),
        arrival_horizon=draw(st.integers(1, horizon)),
        deadline_window=(low, low + draw(st.integers(0, window))),
        target_fraction=(f_low, draw(st.floats(f_low, 1.0))),
        batches_per_step=draw(st.integers(1, 3)),
        min_prefix=draw(st.integers(1, 5)),
        shaping_beta=draw(st.sampled_from([0.0, 0.5, draw(st.floats(0.0, 2.0))])),
        admission=draw(st.sampled_from(["fifo", "edf"])),
    )


def power_curve(length: int = 50, scale: float = 2.0, exponent: float = 0.5) -> Curve:
    """A noiseless, strictly decreasing power law L(n) = scale (1 + n)^-exponent."""
    n = np.arange(length + 1, dtype=np.float64)
    return Curve(scale * (1.0 + n) ** -exponent, "power")


def task(demand: int, window: int, curve: Curve | None = None) -> TaskDraw:
    """A task whose target is reached after exactly ``demand`` batches."""
    curve = curve or power_curve(max(demand + 5, 20))
    target = float(curve.losses[demand])
    assert demand_of(curve.losses, target) == demand
    return TaskDraw(curve, target, demand, window)


class Scripted(Scenario):
    """Arrivals given as {step: [TaskDraw, ...]}."""

    def __init__(self, env: CoreEnv, schedule: dict[int, list[TaskDraw]]) -> None:
        super().__init__(env.config, env.source)
        self.schedule = schedule

    def draw_episode(self, rng):
        return [(t, draw) for t, draws in sorted(self.schedule.items()) for draw in draws]

    def arrival_end(self):
        return max(self.schedule, default=-1) + 1

    def step_bound(self):
        return 10_000


def scripted_env(schedule: dict[int, list[TaskDraw]], **overrides) -> CoreEnv:
    """A reset env whose arrivals follow ``schedule``."""
    env = CoreEnv(**overrides)
    env.scenario = Scripted(env, schedule)
    env.reset(seed=0)
    return env


def idle(env: CoreEnv) -> dict[str, int]:
    return dict.fromkeys(env.agents, env.config.num_slots)


def first_crossing(curve: np.ndarray, target: float) -> int:
    """The first batch n >= 1 whose loss is at or below ``target``: a task's true demand R*."""
    return int(np.flatnonzero(curve[1:] <= target)[0]) + 1


class MetTask(NamedTuple):
    """The truth about a task an environment met (`tasks_met`)."""

    uid: int
    arrival: int
    deadline: int
    target: float
    demand: int
    curve: np.ndarray


def tasks_met(env: CoreEnv) -> list[MetTask]:
    """Every task of a reset env's episode, in arrival order, read from clairvoyant views while
    every node idles (so a task's remaining batches are its demand); each must reach a slot."""
    seen = {}
    while env.agents:
        view = env.view(clairvoyant=True)
        for slot in np.flatnonzero(view.occupied[0]).tolist():
            uid = int(view.uid[0, slot])
            seen.setdefault(
                uid,
                MetTask(
                    uid,
                    int(view.arrival[0, slot]),
                    int(view.deadline[0, slot]),
                    float(view.target[0, slot]),
                    int(view.remaining[0, slot]),
                    view.curves[0][uid],
                ),
            )
        env.step({})
    assert sorted(seen) == list(range(env.metrics()["arrivals"])), "a task never reached a slot"
    return [seen[uid] for uid in sorted(seen)]


def play_checking_matchings(env, scheduler) -> None:
    """Play a reset parallel env to the end, asserting every joint action is a valid matching.

    Valid: no slot chosen twice, every chosen slot occupied, no action flagged invalid.
    """
    observations, infos = env.reset()
    scheduler.reset(env)
    while env.agents:
        actions = scheduler.act(observations, infos)
        chosen = [a for a in actions.values() if a != env.config.num_slots]
        assert len(chosen) == len(set(chosen))
        assert all(env.view().occupied[0, a] for a in chosen)
        observations, _, _, _, infos = env.step(actions)
        assert not any("invalid_action" in info for info in infos.values())
    assert env.metrics()["conflicts"] == 0


# Curves recorded on another machine (the bundled bank) are compared with a stated tolerance, not
# bit for bit: float32 torch training differs in the last bits between CPU instruction sets
# (AVX-512, AVX2 and generic kernels sum in different orders). Re-training the first 41 batches of
# two runs of every supervised family under each ATen CPU capability reproduced the bank to within
# 2.3e-7 relative (about 2 float32 ulps), while two runs of one such family (different seeds)
# differ by at least 2e-4 relative at every batch (a 0.1% change of the learning rate moves the
# logreg-digits and mlp-wine curves by 3e-4 and 1e-3; lstm-digits, nearly flat over 40 batches, by
# 8e-6). The drift compounds with training length (one run drifted by 1e-4 after 200 batches), so
# the tolerance is stated for short re-runs like the 40-batch one of
# tests/curvegen/test_make_curve_bank.py.
CROSS_MACHINE_RTOL = 1e-5


def assert_curve_matches_recording(
    actual, recorded, rtol: float = CROSS_MACHINE_RTOL, err_msg: str = ""
) -> None:
    """Assert that a curve trained here matches one recorded on another machine, batch by batch.

    Lengths must agree exactly; each loss must agree to ``rtol`` relative (losses are positive, so
    there is no absolute tolerance).
    """
    actual, recorded = np.asarray(actual, np.float64), np.asarray(recorded, np.float64)
    assert actual.shape == recorded.shape, f"{err_msg}: shapes {actual.shape} != {recorded.shape}"
    np.testing.assert_allclose(actual, recorded, rtol=rtol, atol=0.0, err_msg=err_msg)


ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"
STUDIES = ROOT / "studies"


def load_script(name: str, folder: Path = BENCHMARKS) -> ModuleType:
    """Import the script ``<folder>/<name>.py`` as a module (scripts are not a package).

    ``folder`` is ``benchmarks/`` unless given (a study's folder: ``STUDIES / "shaping"``).
    Smoke tests call ``load_script("ablations").main([...])`` in-process, so the scripts' folders
    need not be on the test path.
    """
    module_name = f"{folder.name}_{name}"
    spec = importlib.util.spec_from_file_location(module_name, folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def coreenv_executable() -> str:
    """The installed ``coreenv`` command: beside this interpreter (a venv's bin), else on PATH."""
    beside = Path(sys.executable).with_name("coreenv")
    found = str(beside) if beside.is_file() else shutil.which("coreenv")
    assert found, "no coreenv executable: install the package (pip install -e .)"
    return found


def run_python(code: str, timeout: float | None = None, **environ: str) -> str:
    """Run ``code`` in a fresh interpreter (extra environment variables in ``environ``).

    Returns its stdout; a failure shows its stderr, running past ``timeout`` seconds fails.
    For what a test must see from a clean start:
    which modules an import loads, or whether a result is the same in another process.
    """
    env = {**os.environ, **environ}
    run = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def float_bits(array):
    """The bit pattern of a float32 array: equality here is bit-for-bit (-0.0 != 0.0)."""
    return np.ascontiguousarray(array).view(np.uint32)


SEQUENTIAL_SHORT = {
    "task_set": SMALL_CURVES,
    "deadline_window": (10, 40),
    "arrival_prob": 0.3,
    "arrival_horizon": 60,
    "num_nodes": 3,
    "num_slots": 4,
}
"""Short, busy episodes of a small cluster: the sequential forms' tests play these."""


def play_sequential_lanes(
    num_envs, seed, action_seed, calls, invalid=False, raise_at=None, **options
):
    """Step a `SequentialVectorEnv` and N `CoreSequentialEnv`s on its lanes' seeds with the same
    choices (from the live masks, or any int in [-1, K + 1] if ``invalid``), checking everything
    they give at every call. At call ``raise_at`` lane 1 chooses -1 first, which both refuse.

    Returns how many episodes ended, and how many of them had nothing to choose at all.
    """
    envs = SequentialVectorEnv(num_envs, **options)
    singles = [CoreSequentialEnv(**options) for _ in range(num_envs)]
    k = envs.config.num_slots
    obs, infos = envs.reset(seed=seed)
    episodes, ended, empty = [0] * num_envs, 0, 0
    for lane, single in enumerate(singles):
        first, info = single.reset(seed=seed + lane)
        np.testing.assert_array_equal(float_bits(obs[lane]), float_bits(first))
        assert infos["node"][lane] == info["node"] and infos["elapsed"][lane] == info["elapsed"]
        assert infos["episode_seed"][lane] == seed + lane
        empty += not single.vector.core.active[0]
    rng = np.random.default_rng(action_seed)
    for call in range(calls):
        masks = envs.action_masks()
        for lane, single in enumerate(singles):
            np.testing.assert_array_equal(masks[lane], single.action_masks(), f"[{call}] {lane}")
            np.testing.assert_array_equal(envs.listing[lane], single.listing)
        if invalid:
            actions = rng.integers(-1, k + 2, num_envs)
        else:
            actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])
        if call == raise_at and singles[1].vector.core.active[0]:
            refused = actions.copy()
            refused[1] = -1
            with pytest.raises(coreenv.InvalidActionError, match=r"lane 1 .*action -1 is not an"):
                envs.step(refused)
            with pytest.raises(coreenv.InvalidActionError, match="action -1 is not an int"):
                singles[1].step(-1)
        obs, rewards, terminated, truncated, infos = envs.step(actions)
        for lane, single in enumerate(singles):
            shown, reward, done, cut, info = single.step(int(actions[lane]))
            where = f"[{call}] lane {lane}"
            assert rewards[lane] == reward, where  # bit for bit: the same sums in the same order
            assert (terminated[lane], truncated[lane]) == (done, cut), where
            assert infos["elapsed"][lane] == info["elapsed"], where
            assert infos["successes"][lane] == info["successes"], where
            assert infos["invalid_actions"][lane] == len(info["invalid_actions"]), where
            if done or cut:
                ended += 1
                assert infos["_final_obs"][lane], where
                np.testing.assert_array_equal(
                    float_bits(infos["final_obs"][lane]), float_bits(shown)
                )
                for name, value in info["metrics"].items():
                    np.testing.assert_equal(infos["final_info"]["metrics"][name][lane], value)
                episodes[lane] += 1
                shown, info = single.reset(seed=seed + lane + episodes[lane] * num_envs)
                assert infos["reset_elapsed"][lane] == info["elapsed"], where
                empty += not single.vector.core.active[0]
            else:
                assert "_final_obs" not in infos or not infos["_final_obs"][lane], where
                assert infos["reset_elapsed"][lane] == 0, where
            assert infos["node"][lane] == info["node"], where
            assert infos["episode_seed"][lane] == seed + lane + episodes[lane] * num_envs, where
            np.testing.assert_array_equal(float_bits(obs[lane]), float_bits(shown), where)
    return ended, empty


def tiny_protocol():
    """A benchmark protocol small enough for the suite: one cluster, two loads, three episodes."""
    from types import MappingProxyType

    from mara_agents.benchmark.protocol import Protocol

    return Protocol(
        name="Tiny-v1",
        clusters=MappingProxyType({"4/8 equal": {"num_nodes": 4, "num_slots": 8}}),
        task_sets=("synthetic",),
        loads=(0.04, 0.06),
        episodes=3,
        quick_episodes=2,
        stress=MappingProxyType({"scenario": "infeasible_stress"}),
        stress_episodes=2,
    )
