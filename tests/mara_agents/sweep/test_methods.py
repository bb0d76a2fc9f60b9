"""Every name of a sweep is checked before any work, with the valid choices in the message."""

import pytest

from mara_agents.sweep import SweepInputError, validate


@pytest.mark.parametrize(
    ("methods", "task_sets", "loads", "message"),
    [
        (["fifo", "magic"], ["id"], [0.04], "unknown method 'magic'"),
        (["fifo"], ["ood_rl"], [0.04], "Valid names"),
        (["fifo"], ["id"], [0.0], "load 0.0"),
    ],
)
def test_validate_names_the_bad_input(methods, task_sets, loads, message):
    with pytest.raises(SweepInputError, match=message):
        validate(methods, task_sets, loads)
