"""Shim kept for old commands: `coreenv stress` (mara_agents.cli.stress)."""

from mara_agents.cli.stress import main

if __name__ == "__main__":
    main()
