"""Shim kept for old commands: `coreenv sweep` (mara_agents.cli.sweep)."""

from mara_agents.cli.sweep import main

if __name__ == "__main__":
    main()
