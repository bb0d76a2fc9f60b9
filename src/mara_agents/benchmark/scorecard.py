"""The scorecard: a benchmark run against the shipped references, cell by cell and in one score.

Per cell, each benchmarked method's mean completion with its 95% interval beside the references'
means. Per method, one headline: the **normalised score**, each episode's completion placed
between its cell's random matching (0) and Oracle (1), as the mean over cells and as the IQM over
episodes, both with stratified bootstrap intervals, and the **probability of improvement** over
LARA and over MARA on the same episodes (docs/benchmark.md, *Statistics*). A method is scored on
the cells it played; the table says how many.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from mara_agents.benchmark.play import cell_of
from mara_agents.benchmark.protocol import Cell, Protocol
from mara_agents.benchmark.references import References
from mara_agents.intervals import Interval, improvement_interval, iqm_interval, mean_interval

__all__ = [
    "HIGH",
    "LOW",
    "Headline",
    "completion_table",
    "headline_lines",
    "headlines",
    "scorecard",
]

LOW, HIGH = "random", "oracle"
"""The references a normalised score runs between: 0 and 1."""
COMPARED = ("lara", "mara")
"""The methods every method's probability of improvement is reported against."""


def scorecard(
    rows: list[dict], protocol: Protocol, references: References, quick: bool = False
) -> str:
    """The scorecard of ``rows`` (`play_protocol`'s) against ``references``, as Markdown."""
    methods = list(dict.fromkeys(row["method"] for row in rows))
    cells = protocol.cells(quick)
    table = completion_table(rows, protocol, references, quick)
    lines = [f"# {protocol.name}{' (quick subset)' if quick else ''}: scorecard", ""]
    lines += _cells(table, methods, cells)
    lines += ["", *HEADLINE_TEXT, "", *headline_lines(headlines(table, cells), len(cells))]
    stress = protocol.stress_cell()
    played = _rates(rows, protocol)
    lines += ["", *_stress(played, references, stress, protocol.episodes_of(stress, quick))]
    return "\n".join(lines)


def completion_table(
    rows: list[dict], protocol: Protocol, references: References, quick: bool = False
) -> dict[str, dict[Cell, np.ndarray]]:
    """Per method and cell of the protocol (quick: of its subset), each episode's completion:
    the methods of ``rows`` first, then the references' others."""
    played = _rates(rows, protocol)
    cells = protocol.cells(quick)
    table = {m: {c: rates for c, rates in played[m].items() if c in cells} for m in played}
    for method in references.methods:
        if method not in table:
            found = {c: references.rates(method, c, protocol.episodes_of(c, quick)) for c in cells}
            table[method] = {c: r for c, r in found.items() if r is not None}
    return table


@dataclass(frozen=True)
class Headline:
    """One method's headline scores over the cells it played."""

    cells: int
    normalised: Interval
    """Mean over cells of the per-episode normalised score."""
    iqm: Interval
    """IQM of the per-episode normalised scores."""
    versus: dict[str, Interval | None]
    """P(completing more than each of `COMPARED` on an episode); None: not comparable."""


def headlines(table: dict, cells: list[Cell]) -> dict[str, Headline | None]:
    """Each method's `Headline` (None: it played no cell where both ends of the scale did)."""
    scored = [c for c in cells if c in table.get(LOW, {}) and c in table.get(HIGH, {})]
    found: dict[str, Headline | None] = {}
    for method, rates in table.items():
        mine = [c for c in scored if c in rates]
        if not mine:
            found[method] = None
            continue
        normalised = [_normalised(table, method, c) for c in mine]
        versus: dict[str, Interval | None] = {}
        for other in COMPARED:
            common = [c for c in mine if c in table.get(other, {})]
            versus[other] = None
            if other != method and common:
                first, second = ([table[m][c] for c in common] for m in (other, method))
                versus[other] = improvement_interval(first, second)
        found[method] = Headline(
            len(mine), mean_interval(normalised), iqm_interval(normalised), versus
        )
    return found


HEADLINE_TEXT = (
    f"Normalised score (0: {LOW}, 1: {HIGH}; per episode, within its cell) and the probability "
    "of completing more than LARA and MARA on the same episode [95% CI].",
)


def headline_lines(found: dict[str, Headline | None], total: int) -> list[str]:
    """The headline table's Markdown lines, one row per method in ``found``'s order."""
    lines = [
        "| method | cells | normalised, mean | normalised, IQM | "
        + " | ".join(f"P(> {other})" for other in COMPARED)
        + " |",
        "|---" * (4 + len(COMPARED)) + "|",
    ]
    for method, headline in found.items():
        if headline is None:
            lines.append(f"| {method} | 0 of {total} |" + " – |" * (2 + len(COMPARED)))
            continue
        versus = [p.text(2) if p is not None else "–" for p in headline.versus.values()]
        lines.append(
            f"| {method} | {headline.cells} of {total} | {headline.normalised.text(3)} | "
            f"{headline.iqm.text(3)} | " + " | ".join(versus) + " |"
        )
    return lines


def _rates(rows: list[dict], protocol: Protocol) -> dict[str, dict[Cell, np.ndarray]]:
    """Per method and cell, the completion rates of its rows in seed order."""
    found: dict[str, dict[Cell, list[tuple[int, float]]]] = {}
    for row in rows:
        cells = found.setdefault(row["method"], {})
        cells.setdefault(cell_of(row, protocol), []).append((row["seed"], row["completion_rate"]))
    return {
        method: {cell: np.array([r for _, r in sorted(pairs)]) for cell, pairs in cells.items()}
        for method, cells in found.items()
    }


def _cells(table: dict, methods: list[str], cells: list[Cell]) -> Iterator[str]:
    """Per cell: each benchmarked method's mean [95% CI] and the references' means (%)."""
    others = [m for m in table if m not in methods]
    yield "Completion (%) per cell: the benchmarked methods [95% CI], then the references' means."
    yield ""
    yield "| cell | " + " | ".join(methods + others) + " |"
    yield "|---" * (1 + len(methods) + len(others)) + "|"
    for cell in cells:
        shown = [
            mean_interval(table[m][cell]).scaled(100).text() if cell in table[m] else "–"
            for m in methods
        ]
        shown += [
            f"{100 * table[m][cell].mean():.1f}" if cell in table[m] else "–" for m in others
        ]
        yield f"| {cell.label} | " + " | ".join(shown) + " |"


def _normalised(table: dict, method: str, cell: Cell) -> np.ndarray:
    """``method``'s completion in ``cell``, per episode, between the cell's LOW and HIGH means."""
    low, high = table[LOW][cell].mean(), table[HIGH][cell].mean()
    return (table[method][cell] - low) / (high - low)


def _stress(played: dict, references: References, cell: Cell, episodes: int) -> Iterator[str]:
    """The stress test: each method's completion, mean and spread (the paper's bound: 65%)."""
    yield f"Infeasible-task stress test ({episodes} episodes; bound 65%; not in the scores)."
    yield ""
    yield "| method | completion (%) | std |"
    yield "|---|---|---|"
    stress = {m: cells[cell] for m, cells in played.items() if cell in cells}
    for method in references.methods:
        if method not in stress:
            rates = references.rates(method, cell, episodes)
            if rates is not None:
                stress[method] = rates
    for method, rates in stress.items():
        yield f"| {method} | {100 * rates.mean():.1f} | {100 * rates.std():.1f} |"

