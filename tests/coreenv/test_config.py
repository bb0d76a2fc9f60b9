"""EnvConfig: defaults are valid; every invalid value is refused, naming field and value."""

import dataclasses

import numpy as np
import pytest

import coreenv
from coreenv import ConfigError, EnvConfig
from coreenv.config import capacity_load, default_arrival_prob


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


# -- the default load: 0.01 per unit of node speed -----------------------------------------------


@pytest.mark.parametrize(
    ("num_nodes", "node_speeds", "capacity", "p"),
    [
        (4, None, 4, 0.04),  # the paper's cluster: four equal nodes
        (8, None, 8, 0.08),
        (8, "mixed", 16, 0.16),  # speeds 1, 1, 2, 4, 1, 1, 2, 4
        (8, (1, 1, 2, 4, 1, 1, 2, 4), 16, 0.16),
        (2, None, 2, 0.02),
    ],
)
def test_the_default_load_is_0_01_per_unit_of_node_speed(num_nodes, node_speeds, capacity, p):
    assert coreenv.config.ARRIVAL_PER_SPEED == 0.01
    assert default_arrival_prob(num_nodes, node_speeds) == p
    cfg = EnvConfig(num_nodes=num_nodes, num_slots=2 * num_nodes, node_speeds=node_speeds)
    assert cfg.capacity == capacity and cfg.arrival_prob == p


def test_four_equal_nodes_keep_the_papers_floats_bit_for_bit():
    assert default_arrival_prob() == EnvConfig().arrival_prob == 0.04
    assert [capacity_load(p, 4) for p in (0.04, 0.05, 0.06, 0.07)] == [0.04, 0.05, 0.06, 0.07]
    assert EnvConfig() == EnvConfig(arrival_prob=0.04)


def test_the_sweep_loads_scale_with_capacity():
    loads = (0.04, 0.05, 0.06, 0.07)  # quoted at four equal nodes
    assert [capacity_load(p, 8) for p in loads] == [0.08, 0.1, 0.12, 0.14]
    assert [capacity_load(p, 8, "mixed") for p in loads] == [0.16, 0.2, 0.24, 0.28]


def test_a_given_load_is_kept_and_the_default_follows_the_cluster_under_replace():
    assert EnvConfig(num_nodes=8, arrival_prob=0.05).arrival_prob == 0.05
    assert EnvConfig().replace(num_nodes=8).arrival_prob == 0.08
    assert coreenv.make_config(num_nodes=8, node_speeds="mixed", num_slots=16).arrival_prob == 0.16
    assert EnvConfig(arrival_prob=0.05).replace(num_nodes=8).arrival_prob == 0.05


def test_a_load_beyond_a_probability_is_refused():
    with pytest.raises(ConfigError, match=r"total speed 120 must be .* in \[0.0, 1.0\], got 1.2"):
        capacity_load(0.04, 120)
    with pytest.raises(ConfigError, match="node_speeds"):
        default_arrival_prob(4, "fast")


def test_fewer_slots_than_nodes_is_refused_naming_both():
    with pytest.raises(ConfigError) as info:
        EnvConfig(num_nodes=8, num_slots=4)
    message = str(info.value)
    assert "num_slots=4" in message and "num_nodes=8" in message and "idle for ever" in message
    assert EnvConfig(num_nodes=8, num_slots=8).num_slots == 8


def test_a_cluster_is_written_nodes_slots_and_a_name():
    assert coreenv.parse_cluster("8/16 mixed_costly") == {
        "num_nodes": 8,
        "num_slots": 16,
        "node_speeds": "mixed",
        "switch_cost": 5,
    }
    assert coreenv.parse_cluster("6") == {"num_nodes": 6, "num_slots": 12}
    assert EnvConfig(**coreenv.parse_cluster("4/5 costly_moves")).switch_cost == 5


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        ("eight", "a cluster is written 'M/K name'"),
        ("0/4", "a cluster is written 'M/K name'"),
        ("8/16 fast", r"cluster '8/16 fast': the name must be one of \('equal'"),
    ],
)
def test_a_bad_cluster_shape_is_refused_naming_the_form(shape, message):
    with pytest.raises(ConfigError, match=message):
        coreenv.parse_cluster(shape)
