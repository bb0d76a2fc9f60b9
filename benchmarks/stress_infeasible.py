"""The infeasible-task stress test: every method's completion rate, mean and std.

    python benchmarks/stress_infeasible.py --methods fifo edf lara mara oracle --episodes 10

The same program as the installed ``coreenv stress`` (`mara_agents.cli.stress`), for a source
checkout: the same options and table.
"""

from mara_agents.cli.stress import main

if __name__ == "__main__":
    main()
