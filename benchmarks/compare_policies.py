"""Shim kept for old commands: `coreenv compare` (mara_agents.cli.compare)."""

from mara_agents.cli.compare import main

if __name__ == "__main__":
    main()
