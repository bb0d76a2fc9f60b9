"""``python -m mara_agents COMMAND ...``: the ``coreenv`` command line without its executable."""

from mara_agents.cli import main

if __name__ == "__main__":
    main()
