"""The scorecard (`mara_agents.benchmark.scorecard`): a run placed between the random matching (0)
and the Oracle (1), against references it did not play."""

import gzip
import json

import pytest

from mara_agents.benchmark.references import References, make_references
from mara_agents.benchmark.scorecard import scorecard

from helpers import tiny_protocol

TINY = tiny_protocol()


@pytest.fixture(scope="module")
def references(tiny_rows, tmp_path_factory) -> References:
    """References of `TINY` made from the random matching, LARA and the Oracle's rows."""
    path = tmp_path_factory.mktemp("references") / "Tiny-v1.json.gz"
    make_references([r for r in tiny_rows if r["method"] != "fifo"], TINY, path)
    with gzip.open(path, "rt") as file:
        return References(json.load(file))


def _headline(card: str, method: str) -> list[str]:
    """The cells of ``method``'s headline row."""
    lines = card.splitlines()
    rows = [line for line in lines if line.startswith(f"| {method} | ") and " of " in line]
    return [cell.strip() for cell in rows[0].strip("|").split("|")]


def test_references_hold_each_methods_completion_per_cell_in_seed_order(references, tiny_rows):
    assert references.methods == ["random", "lara", "oracle"]
    cell = TINY.cells()[0]
    lara = [r["completion_rate"] for r in tiny_rows if r["method"] == "lara"][:3]
    assert references.rates("lara", cell, 3).tolist() == lara
    assert references.rates("lara", cell, 2).tolist() == lara[:2]


def test_a_method_is_scored_between_the_random_matching_and_the_oracle(tiny_rows, references):
    fifo = [row for row in tiny_rows if row["method"] == "fifo"]
    card = scorecard(fifo, TINY, references)
    assert "| fifo | 2 of 2 |" in card
    for method, end in (("random", 0.0), ("oracle", 1.0)):  # the ends of the scale
        assert float(_headline(card, method)[2].split()[0]) == pytest.approx(end, abs=1e-9)
    assert _headline(card, "lara")[4] == "–"  # LARA against itself: no probability


def test_each_benchmarked_cell_has_its_interval_and_the_stress_test_its_line(tiny_rows, references):
    fifo = [row for row in tiny_rows if row["method"] == "fifo"]
    card = scorecard(fifo, TINY, references)
    first = "| 4/8 equal / synthetic / p 0.04"
    cell_line = next(line for line in card.splitlines() if line.startswith(first))
    assert "[" in cell_line.split("|")[2]  # fifo: mean [low, high]
    assert "Infeasible-task stress test (2 episodes" in card
    assert "| fifo |" in card.split("stress test")[1]
