"""Shim kept for old commands: `coreenv learning-curves` (mara_agents.cli.learning_curves)."""

from mara_agents.cli.learning_curves import main

if __name__ == "__main__":
    main()
