"""The load sweep, the benchmark's main job: every method's completion rate against p.

    python benchmarks/sweep_load.py --quick                # the quick sweep of the README
    python benchmarks/sweep_load.py --episodes 100 --out results/sweep
    python benchmarks/sweep_load.py --help                 # every option and its valid choices

The same program as the installed ``coreenv sweep`` (`mara_agents.cli.sweep`), for a source
checkout: the same options, rows (``OUT/rows.jsonl``, resumed on a rerun) and tables.
"""

from mara_agents.cli.sweep import main

if __name__ == "__main__":
    main()
