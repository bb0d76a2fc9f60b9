"""The shared checkers (`coreenv.checks`) and the constructors that use them."""

import numpy as np
import pytest

from coreenv import BatchedCore, ConfigError, CoreGymEnv, CoreSequentialEnv, Decisions, EnvConfig
from coreenv.core.events import DecisionEvents
from coreenv.checks import checked_count, is_int


@pytest.mark.parametrize("value", [1, 7, np.int64(3), np.uint8(2)])
def test_a_count_is_an_int_at_least_the_minimum(value):
    assert checked_count(value, "n") == value and type(checked_count(value, "n")) is int


@pytest.mark.parametrize("value", [0, -1, True, False, 1.0, "2", None])
def test_anything_else_is_refused_naming_the_field_the_rule_and_the_value(value):
    with pytest.raises(ValueError, match=rf"^n must be an int >= 1 step, got {value!r}\.$"):
        checked_count(value, "n", unit=" step")


def test_bools_are_no_ints():
    assert is_int(3) and is_int(np.int32(3)) and not is_int(True) and not is_int(3.0)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: EnvConfig(num_slots=True), "EnvConfig.num_slots must be an int >= 1"),
        (lambda: EnvConfig(max_steps=0), "EnvConfig.max_steps must be an int >= 1"),
        (lambda: Decisions("events", hold=0), "Decisions.hold must be an int >= 1 step"),
        (lambda: DecisionEvents(2, 9, hold=False, feasibility=False), "hold must be an int >= 1"),
        (lambda: BatchedCore(EnvConfig(), 0), "num_envs must be an int >= 1"),
    ],
)
def test_every_count_in_coreenv_is_checked_by_the_shared_checker(make, words):
    with pytest.raises(ValueError, match=words):
        make()


@pytest.mark.parametrize("shell", [CoreGymEnv, CoreSequentialEnv])
def test_shells_take_the_options_of_coreenv_and_name_a_wrong_one(shell):
    env = shell(EnvConfig(num_slots=5), decisions="events", num_nodes=2, render_mode="ansi")
    inner = env.vector if shell is CoreSequentialEnv else env.env  # what it plays on
    assert inner.decisions.held and env.config.num_nodes == 2 and env.render_mode == "ansi"
    with pytest.raises(ConfigError, match="EnvConfig has no field 'num_slot'"):
        shell(num_slot=3)
