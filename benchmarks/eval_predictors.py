"""Shim kept for old commands: `coreenv eval-predictors` (mara_agents.cli.eval_predictors)."""

from mara_agents.cli.eval_predictors import main

if __name__ == "__main__":
    main()
