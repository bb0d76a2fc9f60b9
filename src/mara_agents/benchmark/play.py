"""Playing a protocol: every cell's episodes for the given methods, as checkable result rows.

The episodes run as the sweep's do (`mara_agents.sweep.run_jobs`: lockstep, worker processes,
resumable ``rows.jsonl``); each row also logs the scheduler's joint actions. The results file,
``results.jsonl``, holds one row per episode in a fixed order, each with its cell, the digest of
its episode, the protocol and package versions, the command line and the machine: what
`mara_agents.benchmark.validate` checks and a leaderboard entry holds.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from mara_agents.benchmark.protocol import STRESS, Cell, Protocol
from mara_agents.replay import episode_digest
from mara_agents.sweep import SweepConfig, env_config, playable, plan, read_rows, row_key
from mara_agents.sweep.jobs import Job
from mara_agents.sweep.runners import provenance, run_jobs

__all__ = ["RESULTS", "cell_of", "job_of", "play_protocol"]

RESULTS = "results.jsonl"
"""The file of a benchmark run's rows, in its output folder."""


def play_protocol(
    protocol: Protocol,
    methods: list[str],
    out: Path,
    quick: bool = False,
    workers: int = 2,
    stream: TextIO | None = None,
) -> list[dict]:
    """Play ``methods`` on every cell of ``protocol`` (its quick subset), writing ``out``.

    A method that cannot play a cluster (a network that reads no node speeds, say) skips that
    cluster, with its reason printed. Returns the rows of ``out / RESULTS``.
    """
    stream = stream or sys.stdout
    jobs: list[Job] = []
    config = None
    for cluster in (*protocol.clusters, STRESS):
        env = protocol.env(cluster)
        kept, left_out = playable(methods, env)
        for method, why in left_out.items():
            print(f"{method} does not play {cluster}: {why}", file=stream)
        if not kept:
            continue
        cells = [protocol.stress_cell()] if cluster == STRESS else [
            cell for cell in protocol.cells(quick) if cell.cluster == cluster
        ]
        config = SweepConfig(
            methods=tuple(kept),
            task_sets=tuple(dict.fromkeys(cell.task_set for cell in cells)),
            arrival_prob=tuple(dict.fromkeys(cell.arrival_prob for cell in cells)),
            episodes=protocol.episodes_of(cells[0], quick),
            env=env,
            workers=workers,
        )
        jobs += [replace(job, log=True) for job in plan(config)]
    if config is None:
        raise ValueError(f"none of {methods} plays any cluster of {protocol.name}.")
    out.mkdir(parents=True, exist_ok=True)
    print(f"{protocol.name}{' (quick)' if quick else ''}: results go to {out}/", file=stream)
    path = out / "rows.jsonl"
    run_jobs(jobs, config, path, stream)
    wanted = {job.key: index for index, job in enumerate(jobs)}
    rows = sorted(
        (row for row in read_rows(path) if row_key(row) in wanted),
        key=lambda row: wanted[row_key(row)],
    )
    results = _results(rows, protocol)
    (out / RESULTS).write_text("".join(json.dumps(row) + "\n" for row in results))
    return results


def cell_of(row: dict, protocol: Protocol) -> Cell:
    """The cell a result row belongs to."""
    return Cell(protocol.cluster_of(row.get("env", {})), row["task_set"], row["arrival_prob"])


def job_of(row: dict) -> Job:
    """The job a result row played (its fingerprint aside): what replays its episode."""
    env = tuple(sorted(row.get("env", {}).items()))
    return Job(
        row["method"], row["task_set"], row["arrival_prob"], row["seed"], row["strict"], env=env
    )


def _results(rows: list[dict], protocol: Protocol) -> list[dict]:
    """The rows with their cluster, episode digest and provenance (one digest per episode)."""
    run = {"protocol": protocol.name, **provenance()}
    digests: dict[tuple, str] = {}
    results = []
    for row in rows:
        job = job_of(row)
        episode = (job.task_set, job.arrival_prob, job.seed, job.env)
        if episode not in digests:
            digests[episode] = episode_digest(env_config(job), job.seed)
        cluster = protocol.cluster_of(row.get("env", {}))
        results.append({**row, "cluster": cluster, "digest": digests[episode], "run": run})
    return results
