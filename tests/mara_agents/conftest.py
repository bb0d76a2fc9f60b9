"""Fixtures shared by the agents' tests: a tiny benchmark protocol, played once per session."""

import pytest

from helpers import tiny_protocol
from mara_agents.benchmark.play import play_protocol


@pytest.fixture(scope="session")
def tiny_rows(tmp_path_factory) -> list[dict]:
    """FIFO, the random matching, LARA and the Oracle on every episode of `tiny_protocol`."""
    out = tmp_path_factory.mktemp("tiny")
    return play_protocol(tiny_protocol(), ["fifo", "random", "lara", "oracle"], out, workers=1)
