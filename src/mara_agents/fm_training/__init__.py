"""How the flow-matching predictor is trained (needs torch): import the module you need.

- `prior`: synthetic loss curves of a prior over forms and noise (pretraining data);
- `corpus`: the curve corpus, a bank of recorded runs labelled by kind of training;
- `training`: the named recipes (`FM_RECIPES`) and `train_fm`;
- `distill`: a one-step student of a trained network (`distill_fm`);
- `calibration_fit`: the fit of the `Calibration` the shipped predictor reads;
- `folds`: held-out folds (a family or kind left out), the calibration cross-fitted on them and
  the calibrated training the shipped predictor comes from (`train_calibrated`).

The predictor itself, and the calibration it reads, are in `mara_agents.predictors`.
"""

__all__: list[str] = []
