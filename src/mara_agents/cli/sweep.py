"""Sweep the arrival rate p and report every method's completion rate, paper-style (design §5).

    coreenv sweep --quick                                  # the README's main job
    coreenv sweep --episodes 100 --out results/sweep       # the full sweep
    coreenv sweep --methods fifo lara my_pkg.sched:MyScheduler
    coreenv sweep --information history --methods lara_fm lara_analog hop_analog
    coreenv sweep --clusters "8/16 mixed_costly"            # 8 nodes of speeds 1-4, loads x 4
    coreenv sweep --clusters "4/8 equal" "8/16 mixed_costly"  # one sweep per cluster, one table
    coreenv sweep --backend ray --ray-address auto         # on a Ray cluster

One JSON row per episode is appended to ``OUT/rows.jsonl`` as soon as it finishes, so Ctrl-C
loses nothing finished and a rerun with the same ``--out`` skips the rows already there. Each row
carries a fingerprint of what produced it (the scheduler's code and weights, the environment
config, the package version): a rerun after an edit redoes the episodes instead of reusing them.
At the end the tables are printed and saved (``table.md``, ``cells.csv``) with a plot
(``completion.png``) and the run's settings and fingerprints (``run.json``); invalid actions are
counted per method, with a warning when any were made.
Episode seeds come from ``mara_agents.sweep.episode_seed``: disjoint from any training seed.
``--information`` sets what schedulers may read of a task (`coreenv.EnvConfig.information`): its
losses alone (the default, the paper's setting), its description too, or also the history of the
tasks its episode finished, which the methods that read context (``lara_analog``,
``hop_analog``) learn from; on ``rl_ood`` and ``vit_ood`` none of them saw the kinds before.
``--clusters`` names the cluster, written ``"M/K name"`` (`coreenv.parse_cluster`): M nodes, K
slots, and its nodes' speeds and switch cost (`coreenv.CLUSTERS`). The default loads are the
paper's per unit of node speed (`coreenv.config.capacity_load`), so every cluster is as contended
as the paper's. Several clusters are swept one after another into ``OUT/<cluster>/``; then every
method's completion on every cluster and its switches per completed task are printed and saved
(``OUT/clusters.md``).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from coreenv import INFORMATION_MODELS, InvalidActionError
from coreenv.curves import TASK_SETS
from mara_agents.cli.parser import (
    DEFAULT_CLUSTER,
    METHODS_HELP,
    SHAPE_HELP,
    CommandParser,
    add_arrival_prob,
    cluster_shape,
    methods_listing,
)
from mara_agents.sweep import (
    BACKENDS,
    DEFAULT_METHODS,
    QUICK_EPISODES,
    REFERENCE_LOADS,
    SweepConfig,
    SweepInputError,
    playable,
    run_sweep,
    write_reports,
)
from mara_agents.sweep.report import cluster_label, clusters_table

DEFAULTS = {f.name: f.default for f in fields(SweepConfig)}


def parse_args(argv: list[str] | None = None) -> list[SweepConfig]:
    """The sweep of each cluster of ``--clusters``, every option validated first; a bad one exits
    with status 2 and one line saying why."""
    parser = CommandParser(
        prog="coreenv sweep", description=__doc__.splitlines()[0], epilog=methods_listing()
    )
    add = parser.add_argument
    add_arrival_prob(
        parser,
        None,
        old="--loads",
        several=True,
        help="arrival probabilities p to sweep, each in [0, 1]; default "
        f"{' '.join(map(str, REFERENCE_LOADS))} per four units of node speed (0.08-0.14 at eight "
        "equal nodes)",
    )
    add(
        "--task-sets",
        nargs="+",
        default=list(DEFAULTS["task_sets"]),
        help=f"task sets: names {sorted(TASK_SETS)} or paths to banks (.npz) or CSVs of training logs",
    )
    add(
        "--methods",
        nargs="+",
        default=None,
        help=f"{METHODS_HELP} (default: {' '.join(DEFAULT_METHODS)}, those that play the cluster)",
    )
    add(
        "--seeds",
        type=int,
        nargs="+",
        default=list(DEFAULTS["seeds"]),
        help="seed groups; episode i of group g has seed 1,000,000 + 10,000 g + i",
    )
    add("--episodes", type=int, default=DEFAULTS["episodes"], help="episodes per seed and cell")
    add("--workers", type=int, default=DEFAULTS["workers"], help="local worker processes")
    add("--backend", choices=BACKENDS, default=DEFAULTS["backend"], help="where episodes run")
    add("--ray-address", default=None, help="ray.init address; default: a local Ray")
    add(
        "--out",
        type=Path,
        default=None,
        help="results folder; default results/<run name>, named after the settings",
    )
    add(
        "--strict",
        action="store_true",
        help="stop at the first invalid or conflicting action (the 'raise' policy) instead of "
        "idling the node and counting it",
    )
    add(
        "--information",
        choices=INFORMATION_MODELS,
        default="prefix",
        help="what schedulers may read of a task: its losses (default), its description too, "
        "or also the tasks its episode finished",
    )
    add(
        "--warm-history",
        type=int,
        default=0,
        help="with --information history: tasks of earlier episodes each history starts with",
    )
    add(
        "--clusters",
        type=cluster_shape,
        nargs="+",
        default=[cluster_shape(DEFAULT_CLUSTER)],
        metavar="SHAPE",
        help=f"the clusters, each {SHAPE_HELP}; several are swept into OUT/<cluster>/, then one "
        "table compares every method on every cluster",
    )
    add("--quick", action="store_true", help=f"{QUICK_EPISODES} episodes per cell: a smoke run")
    args = parser.parse_args(argv)
    information = _information(parser, args.information, args.warm_history)
    configs = [sweep_config(parser, args, information | cluster) for cluster in args.clusters]
    if len(configs) > 1:
        base = args.out or Path("results") / ("clusters_" + configs[0].run_name)
        folders = [cluster_label(c.env).replace("/", "-").replace(" ", "_") for c in configs]
        configs = [replace(c, out=base / folder) for c, folder in zip(configs, folders)]
    return configs


def sweep_config(
    parser: CommandParser, args: argparse.Namespace, env: dict[str, Any]
) -> SweepConfig:
    """The checked sweep of the options on the episodes of ``env``; a bad value exits 2."""
    methods = args.methods
    if methods is None:
        try:
            methods, left_out = playable(DEFAULT_METHODS, env)
        except ValueError:  # the cluster itself is refused: SweepConfig says why, below
            methods, left_out = list(DEFAULT_METHODS), {}
        for method, reason in left_out.items():
            print(f"coreenv sweep: leaving out {method}: {reason}", file=sys.stderr)
    try:
        config = SweepConfig.checked(
            arrival_prob=args.arrival_prob,
            task_sets=args.task_sets,
            methods=methods,
            seeds=args.seeds,
            episodes=QUICK_EPISODES if args.quick else args.episodes,
            workers=args.workers,
            backend=args.backend,
            ray_address=args.ray_address,
            out=args.out,
            strict=args.strict,
            env=env,
        )
    except SweepInputError as e:
        parser.error(str(e))
    if config.out is None:  # a folder named after the settings, so runs never share one
        config = replace(config, out=Path("results") / config.run_name)
    return config


def _information(parser: CommandParser, information: str, warm: int) -> dict:
    """The `EnvConfig` fields of ``--information`` and ``--warm-history`` (none by default)."""
    if warm < 0 or (warm and information != "history"):
        parser.error(
            f"--warm-history must be an int >= 0, and needs --information history; got {warm} "
            f"with --information {information}."
        )
    fields = {} if information == "prefix" else {"information": information}
    return fields | ({"warm_history": warm} if warm else {})


def main(argv: list[str] | None = None) -> None:
    """Run the sweep of each cluster the options name; print the tables and where they went."""
    runs = []
    for config in parse_args(argv):
        try:
            rows = run_sweep(config)
        except InvalidActionError as e:
            raise SystemExit(f"\n--strict: {e}") from e
        print(write_reports(rows, config))
        files = "table.md, cells.csv, completion.png, rows.jsonl, run.json"
        print(f"\nresults in {config.out}/: {files}")
        runs.append((config, rows))
    if len(runs) > 1:
        table = clusters_table(runs)
        (runs[0][0].out.parent / "clusters.md").write_text(table + "\n")
        print(f"\n{table}\n\nin {runs[0][0].out.parent}/clusters.md")


if __name__ == "__main__":
    main()
