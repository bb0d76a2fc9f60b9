"""``coreenv benchmark`` and ``coreenv validate``: the scorecard of the methods named, and rows that
anyone can replay (on the suite's tiny protocol)."""

import gzip
import json

import pytest

from mara_agents.benchmark.references import References, make_references
from mara_agents.cli import benchmark, validate

from helpers import tiny_protocol

TINY = tiny_protocol()


@pytest.fixture()
def tiny(monkeypatch, tiny_rows):
    """``coreenv benchmark`` on `TINY`, placed against references made from its rows."""
    rows = [row for row in tiny_rows if row["method"] in ("random", "lara", "oracle")]
    data = {"protocol": TINY.name, "methods": {}}
    monkeypatch.setattr(benchmark, "CORE_BENCH_V1", TINY)
    monkeypatch.setattr(benchmark, "load_references", lambda name: References(data))
    return rows, data


def test_the_scorecard_places_the_methods_named_against_the_references(tiny, tmp_path, capsys):
    rows, data = tiny
    make_references(rows, TINY, tmp_path / "references.json.gz")
    data.update(json.load(gzip.open(tmp_path / "references.json.gz", "rt")))
    benchmark.main(["fifo", "--out", str(tmp_path / "run"), "--workers", "1"])
    out = capsys.readouterr().out
    assert "| fifo | 2 of 2 |" in out and "| lara | 2 of 2 |" in out
    assert (tmp_path / "run" / "scorecard.md").read_text().startswith("# Tiny-v1: scorecard")
    assert f"coreenv validate {tmp_path / 'run' / 'results.jsonl'}" in out


def test_validate_passes_played_rows_and_fails_an_edited_one(tiny_rows, tmp_path, capsys):
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in tiny_rows[:4]))
    validate.main([str(path)])
    assert "4 of 4 rows checked pass" in capsys.readouterr().out
    edited = [dict(row) for row in tiny_rows[:4]]
    edited[2]["completion_rate"] = 0.99
    path.write_text("".join(json.dumps(row) + "\n" for row in edited))
    with pytest.raises(SystemExit) as ended:
        validate.main([str(path), "--sample", "4"])
    out = capsys.readouterr().out
    assert ended.value.code == 1 and "row 3 (fifo" in out
    assert "completion_rate is 0.99 in the row" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["nosuch"], "nosuch plays no cluster of"),
        (["fifo", "fifo"], "methods are named twice"),
    ],
)
def test_benchmark_refuses_bad_methods_before_any_work(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as ended:
        benchmark.main([*argv, "--out", str(tmp_path)])
    assert ended.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "rows.jsonl").exists()


def test_validate_refuses_a_missing_or_unreadable_file(tmp_path, capsys):
    with pytest.raises(SystemExit) as ended:
        validate.main([str(tmp_path / "none.jsonl")])
    assert ended.value.code == 2 and "no such results file" in capsys.readouterr().err
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    with pytest.raises(SystemExit):
        validate.main([str(tmp_path / "bad.jsonl")])
    assert "is not one JSON row per line" in capsys.readouterr().err
