"""Playing a protocol writes rows anyone can check (`play`, `validate`): each replays from its
actions."""

import copy

from mara_agents.benchmark.play import cell_of
from mara_agents.benchmark.validate import check_row, problems, sample

from helpers import tiny_protocol

TINY = tiny_protocol()


def test_every_cell_and_the_stress_test_get_their_episodes_in_a_fixed_order(tiny_rows):
    cells = [cell_of(row, TINY) for row in tiny_rows]
    assert len(tiny_rows) == 4 * (2 * 3 + 2)  # four methods, two loads of 3, the stress test's 2
    assert cells.count(TINY.stress_cell()) == 4 * 2
    assert [row["method"] for row in tiny_rows][:6] == ["fifo"] * 3 + ["random"] * 3


def test_a_row_carries_its_actions_digest_and_provenance(tiny_rows):
    row = tiny_rows[0]
    assert {"actions", "decisions", "digest"} <= row.keys()
    assert row["run"]["protocol"] == "Tiny-v1"
    assert {"coreenv", "command", "machine"} <= row["run"].keys()


def test_rows_as_played_pass(tiny_rows):
    assert list(problems(tiny_rows, sample(tiny_rows, None))) == []


def test_an_edited_metric_fails_naming_the_row_and_the_field(tiny_rows):
    rows = copy.deepcopy(tiny_rows)
    rows[4]["successes"] += 1
    (line,) = problems(rows, range(len(rows)))
    assert line.startswith("row 5 (random, 4/8 equal, synthetic") and "successes is" in line


def test_rows_of_another_episode_or_with_fields_missing_fail(tiny_rows):
    row = copy.deepcopy(tiny_rows[0])
    row["digest"] = "0" * 16
    assert "another environment" in check_row(row)
    del row["actions"]
    assert "missing fields ['actions']" in check_row(row)


def test_a_sample_is_drawn_by_its_seed():
    rows = [{}] * 50
    assert sample(rows, 5, seed=1) == sample(rows, 5, seed=1) != sample(rows, 5, seed=2)
    assert sample(rows, 80) == list(range(50))
