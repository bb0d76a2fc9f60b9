"""Rendering: a readable slot table and a Gantt picture of what the nodes did."""

import numpy as np
import pytest

import coreenv
from mara_agents.schedulers import FIFO


def run(render_mode, steps=120):
    env = coreenv.parallel_env(render_mode=render_mode, seed=0, arrival_prob=0.2)
    observations, infos = env.reset()
    scheduler = FIFO()
    scheduler.reset(env)
    for _ in range(steps):
        observations, *_, infos = env.step(scheduler.act(observations, infos))
    return env


def test_ansi_table_lists_slots_and_serving_nodes():
    text = run("ansi").render()
    lines = text.splitlines()
    assert lines[0].startswith("t=120")
    assert "served by" in lines[1]
    assert len(lines) == 2 + 8
    assert "node_0" in text


def test_rgb_array_is_a_gantt_of_node_rows():
    image = run("rgb_array").render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert image.shape[1] == 120 * 2  # two pixels per step
    idle_grey = np.array([235, 235, 235])
    assert (image != idle_grey).any(axis=2).any()  # tasks were trained


def test_human_mode_prints(capsys):
    env = run("human", steps=2)
    assert env.render() is None
    assert "served by" in capsys.readouterr().out


def test_unknown_render_mode_is_refused():
    with pytest.raises(ValueError, match="render_mode"):
        coreenv.parallel_env(render_mode="video")
