"""The shared checks: each rule's words are its error message; bools are never numbers."""

import math
import re

import numpy as np
import pytest

from mara_agents.checks import RULES, check


@pytest.mark.parametrize(
    ("rule", "good", "bad"),
    [
        ("an int >= 0", [0, 5, np.int64(2)], [-1, 1.0, True, "1"]),
        ("an int >= 1", [1, np.int32(3)], [0, 2.0, True, None]),
        ("a number >= 0", [0, 0.5, np.float32(2)], [-0.1, math.nan, False, "0"]),
        ("in (0, 1]", [1, 0.5], [0, 1.5, math.nan, True]),
        ("in [0, 1]", [0, 1.0], [-0.1, 1.01, math.nan, False]),
        ("in [0, 1)", [0, 0.99], [1, -0.5, True]),
        ("in (0, 1)", [0.5], [0, 1, True]),
    ],
)
def test_each_rule_keeps_its_values_and_names_the_bad_one(rule, good, bad):
    assert rule in RULES
    for value in good:
        check(value, rule, "X.field")
    for value in bad:
        with pytest.raises(ValueError, match=rf"^X\.field must be {re.escape(rule)}, got "):
            check(value, rule, "X.field")


def test_the_truth_and_lara_and_hop_name_their_bad_counts():
    from coreenv_lab.diagnostics import TruthHOP, TruthLARA
    from mara_agents.schedulers import LARA, HOPConfig

    with pytest.raises(ValueError, match="the truth's seed must be an int >= 0, got True"):
        TruthLARA(seed=True)
    with pytest.raises(ValueError, match="TruthHOP samples must be an int >= 1, got 0"):
        TruthHOP(samples=0)
    with pytest.raises(ValueError, match="LARA explore must be an int >= 1, got 0"):
        LARA(explore=0)
    with pytest.raises(ValueError, match=r"HOPConfig.min_share must be in \[0, 1\), got 1.0"):
        HOPConfig(min_share=1.0)
    with pytest.raises(ValueError, match="HOPConfig.slack must be an int >= 0, got True"):
        HOPConfig(slack=True)
