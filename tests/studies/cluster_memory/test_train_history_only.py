"""studies/cluster_memory/train_history_only.py: the lab's mara_history recipe on its own
predictor, registered for the run, and never over the lab's checkpoint."""

import pytest

pytest.importorskip("torch")

from helpers import STUDIES, load_script  # noqa: E402
from mara_agents.predictors import POLICY_PREDICTORS  # noqa: E402

script = load_script("train_history_only", STUDIES / "cluster_memory")


@pytest.fixture
def policy_predictors():
    before = dict(POLICY_PREDICTORS)
    yield POLICY_PREDICTORS
    POLICY_PREDICTORS.clear()
    POLICY_PREDICTORS.update(before)


def test_the_script_refuses_to_run_without_its_own_out(policy_predictors):
    with pytest.raises(SystemExit, match="give --out"):
        script.main(["--minutes", "1"])


def test_the_script_trains_the_history_recipe_reading_its_predictor(policy_predictors, capsys):
    with pytest.raises(SystemExit):  # the lab command's parser checks the rest first
        script.main(["--out", "unused.pt", "--nodes", "0"])
    assert "--nodes must be an int >= 1, got 0" in capsys.readouterr().err
    assert policy_predictors[script.HISTORY_ONLY] is script.history_only
    config = script.train_mara.config_from(
        script.train_mara.parse_args(
            ["--variant", "mara_history", "--predictor", script.HISTORY_ONLY, "--out", "x.pt"]
        )
    )
    assert (config.observed, config.shown) == (script.HISTORY_ONLY, "history")
