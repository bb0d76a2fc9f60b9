"""Run plans are stable and draw valid hyperparameters."""

from curvegen import FAMILIES, plan_runs


def test_plans_are_stable_and_hyperparameters_valid():
    specs = plan_runs(batches=5)
    assert specs == plan_runs(batches=5)
    assert len({s.seed for s in specs}) == len(specs)
    for spec in specs:
        family = FAMILIES[spec.family]
        for name, values in family.choices.items():
            assert spec.hparams[name] in values
        assert spec.hparams["learning_rate"] > 0
