"""Fixtures shared across the test packages, and the lab on the path of every process they start.

pytest puts ``lab/`` (`coreenv_lab`, outside the wheel) on its own path (pyproject's
``pythonpath``); the interpreters a test starts get it through ``PYTHONPATH``, so the suite runs
from a clone whether or not ``pip install -e lab`` was done.
"""

import os
from pathlib import Path

import pytest

from coreenv.curves import TASK_SETS
from helpers import tiny_protocol
from mara_agents.benchmark.play import play_protocol

LAB = str(Path(__file__).resolve().parents[1] / "lab")
os.environ["PYTHONPATH"] = os.pathsep.join(
    [LAB, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
)


@pytest.fixture
def registry(monkeypatch):
    """The task-set registry; registrations made by a test are undone after it."""
    monkeypatch.setattr(TASK_SETS, "_factories", dict(TASK_SETS._factories))
    return TASK_SETS


@pytest.fixture(scope="session")
def tiny_rows(tmp_path_factory) -> list[dict]:
    """FIFO, the random matching, LARA and the Oracle on every episode of `helpers.tiny_protocol`:
    benchmark rows, played once per session."""
    out = tmp_path_factory.mktemp("tiny")
    return play_protocol(tiny_protocol(), ["fifo", "random", "lara", "oracle"], out, workers=1)
