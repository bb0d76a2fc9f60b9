"""EnvConfig: defaults are valid; every invalid value is refused, naming field and value."""

import dataclasses

import numpy as np
import pytest

import coreenv
from coreenv import ConfigError, EnvConfig


def test_defaults_are_valid_and_frozen():
    cfg = EnvConfig()
    assert (cfg.num_nodes, cfg.num_slots, cfg.arrival_prob) == (4, 8, 0.04)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.num_nodes = 3


def test_lists_become_tuples_and_replace_validates():
    cfg = EnvConfig(deadline_window=[10, 20])
    assert cfg.deadline_window == (10, 20)
    assert cfg.replace(num_nodes=2).num_nodes == 2
    with pytest.raises(ConfigError, match="num_nodes"):
        cfg.replace(num_nodes=0)


BAD_VALUES = [
    ("num_nodes", 0),
    ("num_nodes", 2.5),
    ("num_nodes", True),
    ("num_slots", -1),
    ("num_slots", "8"),
    ("arrival_prob", 1.5),
    ("arrival_prob", -0.1),
    ("arrival_prob", float("nan")),
    ("arrival_horizon", 0),
    ("deadline_window", (0, 10)),
    ("deadline_window", (20, 10)),
    ("deadline_window", (10,)),
    ("deadline_window", (1.5, 10)),
    ("target_fraction", (0.0, 0.5)),
    ("target_fraction", (0.5, 1.5)),
    ("target_fraction", (0.6, 0.2)),
    ("batches_per_step", 0),
    ("min_prefix", 0),
    ("shaping_beta", -1.0),
    ("shaping_beta", float("inf")),
    ("invalid_action", "ignore"),
    ("admission", "lifo"),
    ("scenario", "nope"),
    ("task_set", 42),
    ("seed", -3),
    ("max_steps", 0),
    ("estimate_quantiles", (0.0, 0.5)),
    ("estimate_quantiles", (0.5, 1.0)),
    ("estimate_quantiles", (0.9, 0.1)),
    ("estimate_quantiles", (0.5, 0.5)),
    ("estimate_quantiles", ("0.5",)),
    ("estimate_quantiles", (True,)),
    ("estimate_quantiles", (float("nan"),)),
    ("estimate_quantiles", 0.5),
    ("estimate_quantiles", tuple(i / 11 for i in range(1, 11))),  # 10 levels: more than 9
]


@pytest.mark.parametrize(("field", "value"), BAD_VALUES)
def test_invalid_value_names_field_and_value(field, value):
    with pytest.raises(ValueError) as info:
        EnvConfig(**{field: value})
    assert field in str(info.value)
    assert repr(value) in str(info.value) or str(value) in str(info.value)


def test_quantile_levels_are_normalised_to_a_tuple_of_floats():
    assert EnvConfig().estimate_quantiles == ()
    levels = EnvConfig(estimate_quantiles=[0.1, np.float32(0.5), 0.9]).estimate_quantiles
    assert levels == (0.1, float(np.float32(0.5)), 0.9)
    assert all(type(level) is float for level in levels)
    with pytest.raises(ConfigError, match=r"estimate_quantiles must be .*levels in \(0, 1\)"):
        EnvConfig(estimate_quantiles=(0.5, 0.2))


def test_config_error_is_also_a_type_error():
    with pytest.raises(TypeError):
        EnvConfig(num_nodes="four")


def test_unknown_override_is_named_with_a_suggestion():
    with pytest.raises(ConfigError, match="'num_node'.*Did you mean 'num_nodes'"):
        coreenv.parallel_env(num_node=3)


def test_unknown_task_set_name_is_refused():
    with pytest.raises(ValueError, match="not a known task set"):
        coreenv.parallel_env(task_set="imagenet")


def test_check_arrival_prob_is_the_one_rule_for_p():
    from coreenv.config import check_arrival_prob

    assert check_arrival_prob(0) == 0.0 and check_arrival_prob(1) == 1.0
    for bad in (-0.1, 1.5, float("nan"), True, "0.5"):
        with pytest.raises(ConfigError, match=r"grid p must be a finite number in \[0.0, 1.0\]"):
            check_arrival_prob(bad, "grid p")
