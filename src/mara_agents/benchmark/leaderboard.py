"""The leaderboard: one entry per submission (a card and its results), ranked by normalised score.

An entry is a folder of ``leaderboard/`` holding ``card.toml`` (`CARD_FIELDS`, from
``leaderboard/TEMPLATE.toml``) and its results: ``results.jsonl.gz``, the rows of
``coreenv benchmark`` (checked by replay, `mara_agents.benchmark.validate`), or for a built-in
method ``"references"``, its shipped reference results (checked by the suite, which plays a sample
of them again). `render` writes ``docs/leaderboard.md`` from the entries.
"""

from __future__ import annotations

import gzip
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

from mara_agents.benchmark.protocol import Protocol
from mara_agents.benchmark.references import References
from mara_agents.benchmark.scorecard import completion_table, headline_lines, headlines

__all__ = ["CARD_FIELDS", "Entry", "read_entries", "render"]

CARD_FIELDS = {
    "name": str,
    "method": str,
    "authors": str,
    "paper": str,
    "protocol": str,
    "command": str,
    "environment_modified": bool,
    "tuned": str,
    "deterministic": bool,
    "hardware": str,
    "results": str,
}
"""Every field a card must have, with its type (what each means: ``leaderboard/TEMPLATE.toml``)."""
REFERENCES = "references"
"""A card's ``results`` for a built-in method: the shipped reference results."""


@dataclass(frozen=True)
class Entry:
    """One leaderboard entry: its card and where its results are."""

    folder: Path
    card: dict

    def rows(self) -> list[dict]:
        """Its result rows (none for a built-in method, which the references hold)."""
        if self.card["results"] == REFERENCES:
            return []
        with gzip.open(self.folder / self.card["results"], "rt") as file:
            return [json.loads(line) for line in file if line.strip()]


def read_entries(folder: Path, protocol: Protocol) -> list[Entry]:
    """The entries of ``folder`` for ``protocol``, each card checked; ValueError names a bad one."""
    entries = []
    for path in sorted(folder.glob("*/card.toml")):
        card = tomllib.loads(path.read_text())
        for field, kind in CARD_FIELDS.items():
            if not isinstance(card.get(field), kind):
                raise ValueError(f"{path}: {field} must be a {kind.__name__}, got {card.get(field)!r}.")
        unknown = sorted(set(card) - set(CARD_FIELDS))
        if unknown:
            raise ValueError(f"{path}: unknown fields {unknown}; the fields are {list(CARD_FIELDS)}.")
        if card["protocol"] != protocol.name:
            continue
        results = path.parent / card["results"]
        if card["results"] != REFERENCES and not results.is_file():
            raise ValueError(f"{path}: results {card['results']!r} is not a file of its folder.")
        entries.append(Entry(path.parent, card))
    return entries


def render(entries: list[Entry], protocol: Protocol, references: References, intro: str) -> str:
    """``docs/leaderboard.md``: ``intro`` (``leaderboard/README.md``, its links to ``../docs/``
    made the page's own), the entries ranked by normalised score, their cards."""
    rows = []
    for entry in entries:
        rows += [{**row, "method": entry.card["name"]} for row in entry.rows()]
    table = completion_table(rows, protocol, references)
    keys = {_key(entry): entry for entry in entries}  # a built-in entry is its method's
    cells = protocol.cells()
    found = headlines({key: table[key] for key in keys} | _ends(table), cells)
    ranked = sorted(keys, key=lambda key: -_score(found[key]))
    intro = intro.replace("](../docs/", "](")  # the repository's links, as the docs page has them
    lines = [intro.rstrip(), "", f"## {protocol.name}", ""]
    named = {keys[key].card["name"]: found[key] for key in ranked}
    lines += headline_lines(named, len(cells))
    lines += ["", "## The entries", ""]
    for key in ranked:
        card, name = keys[key].card, keys[key].card["name"]
        lines.append(
            f"- **{name}** ({card['authors']}; {card['paper']}): `{card['command']}`; "
            f"deterministic: {_yes(card['deterministic'])}; environment modified: "
            f"{_yes(card['environment_modified'])}; tuned: {card['tuned']}; "
            f"hardware: {card['hardware']}."
        )
    return "\n".join(lines) + "\n"


def _key(entry: Entry) -> str:
    """An entry's key in the completion table: a built-in method's name, else the entry's."""
    return entry.card["method"] if entry.card["results"] == REFERENCES else entry.card["name"]


def _ends(table: dict) -> dict:
    """The references every score needs (the scale's ends, the methods compared against)."""
    return {m: table[m] for m in ("random", "oracle", "lara", "mara") if m in table}


def _score(headline) -> float:
    """A headline's rank key: its normalised mean (an entry without one last)."""
    return float("-inf") if headline is None else headline.normalised.estimate


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"
