"""Shim kept for old commands: `coreenv train-mara` (mara_agents.cli.train_mara)."""

from mara_agents.cli.train_mara import main

if __name__ == "__main__":
    main()
