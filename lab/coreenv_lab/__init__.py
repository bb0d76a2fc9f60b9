"""coreenv's lab: how the shipped models were made, ablated and diagnosed (outside the wheel).

The studies (``studies/``) and builders (``benchmarks/``) import it; the installed ``coreenv``
never does. Its variants reach the sweep as ``module:function`` methods (`coreenv_lab.methods`),
its predictors by name through `coreenv_lab.predictors.make_predictor`, its training variants
through ``python -m coreenv_lab.commands.train_mara`` (`coreenv_lab.variants`) and
`coreenv_lab.baselines.recipes`, and its checkpoints sit in `CHECKPOINTS`. Its commands run as
modules: ``python -m coreenv_lab.commands.train_mara``, ``eval_predictors``,
``learning_curves``. Install it from a clone with ``pip install -e lab``.
"""

from pathlib import Path

__all__ = ["CHECKPOINTS"]

CHECKPOINTS = Path(__file__).resolve().parent / "checkpoints"
"""The study-only checkpoints: ablated MARA variants, the RL baselines the shipped ``ppo``
superseded, the FM teacher of MARA's network and the analog weigher."""
