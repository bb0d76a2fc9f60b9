"""The leaderboard (`benchmarks/make_leaderboard.py`): docs/leaderboard.md is the page its entries
make, every card is complete, and every submitted entry's rows replay (a sample of each)."""

import gzip
import json
import shutil
from pathlib import Path

import pytest

from helpers import load_script, tiny_protocol
from mara_agents.benchmark.leaderboard import read_entries
from mara_agents.benchmark.protocol import CORE_BENCH_V1
from mara_agents.benchmark.validate import problems, sample

make_leaderboard = load_script("make_leaderboard")
ROOT = make_leaderboard.ROOT
ENTRIES = read_entries(ROOT / "leaderboard", CORE_BENCH_V1)


def test_the_page_is_what_the_entries_make():
    page = (ROOT / "docs" / "leaderboard.md").read_text()
    assert page == make_leaderboard.leaderboard_page(), "run python benchmarks/make_leaderboard.py"


def test_the_built_in_methods_are_entries():
    methods = {entry.card["method"] for entry in ENTRIES if entry.card["results"] == "references"}
    assert methods == {"fifo", "edf", "random", "lara", "mara", "ppo", "oracle"}


@pytest.mark.parametrize(
    "entry", [e for e in ENTRIES if e.card["results"] != "references"], ids=lambda e: e.folder.name
)
def test_a_sample_of_each_submitted_entrys_rows_replays(entry):
    rows = entry.rows()
    assert list(problems(rows, sample(rows, 20))) == []


def test_a_card_without_a_field_is_refused_by_name(tmp_path):
    folder = tmp_path / "mine"
    shutil.copytree(ROOT / "leaderboard" / "builtin_lara", folder)
    card = (folder / "card.toml").read_text().replace('hardware = "AMD EPYC, 2 cores"\n', "")
    (folder / "card.toml").write_text(card)
    with pytest.raises(ValueError, match="hardware must be a str, got None"):
        read_entries(tmp_path, CORE_BENCH_V1)


def test_a_submitted_entry_is_ranked_from_its_rows(tmp_path, tiny_rows):
    """An entry's rows are read from its gzipped results (here: the tiny protocol's FIFO rows)."""
    folder = tmp_path / "fifo_again"
    folder.mkdir()
    template = (ROOT / "leaderboard" / "TEMPLATE.toml").read_text()
    (folder / "card.toml").write_text(template.replace("CoRE-Bench-v1", "Tiny-v1"))
    fifo = [row for row in tiny_rows if row["method"] == "fifo"]
    with gzip.open(folder / "results.jsonl.gz", "wt") as file:
        file.writelines(json.dumps(row) + "\n" for row in fifo)
    (entry,) = read_entries(tmp_path, tiny_protocol())
    assert entry.rows() == fifo and entry.card["name"] == "My scheduler"
    assert Path(entry.folder) == folder
