"""`coreenv_lab.variants`: the lab's MARA variants, each the checkpoint of its settings."""

import pytest

torch = pytest.importorskip("torch")

from coreenv import reads_context  # noqa: E402
from coreenv_lab.variants import LAB_VARIANTS  # noqa: E402
from mara_agents.schedulers.mara import MARA  # noqa: E402
from mara_agents.schedulers.variants import VARIANTS  # noqa: E402
from mara_agents.sweep import make_scheduler  # noqa: E402


def test_the_lab_variants_are_the_ablations_and_the_history_policy():
    assert LAB_VARIANTS["mara_wls"].predictor == "wls"
    assert LAB_VARIANTS["mara_noshape"].shaping_beta == 0.0
    assert LAB_VARIANTS["mara_history"].information == "history"
    assert not set(LAB_VARIANTS) & set(VARIANTS)


@pytest.mark.parametrize("name", sorted(LAB_VARIANTS))
def test_each_lab_variant_loads_its_checkpoint_reading_the_predictor_it_records(name):
    variant = LAB_VARIANTS[name]
    state = torch.load(variant.path, map_location="cpu", weights_only=True)
    assert state["predictor"] == variant.predictor
    assert state["shaping_beta"] == variant.shaping_beta
    policy = make_scheduler(f"coreenv_lab.methods:{name}")
    assert isinstance(policy, MARA) and policy.name == name
    expected = ("family", "optimizer") if variant.information == "history" else ()
    assert policy.observation_kind_fields == expected
    assert reads_context(policy.observation_predictor) == (variant.information == "history")
