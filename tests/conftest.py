"""Fixtures shared across the test packages."""

import pytest

from coreenv.curves import TASK_SETS


@pytest.fixture
def registry(monkeypatch):
    """The task-set registry; registrations made by a test are undone after it."""
    monkeypatch.setattr(TASK_SETS, "_factories", dict(TASK_SETS._factories))
    return TASK_SETS
