"""Every name of a sweep is checked before any work, with the valid choices in the message."""

import pytest

from mara_agents.sweep import SweepInputError, validate


@pytest.mark.parametrize(
    ("methods", "task_sets", "loads", "message"),
    [
        (["fifo", "magic"], ["id"], [0.04], "unknown method 'magic'"),
        (["fifo"], ["ood_rl"], [0.04], "Valid names"),
        (["fifo"], ["id"], [0.0], "load 0.0"),
    ],
)
def test_validate_names_the_bad_input(methods, task_sets, loads, message):
    with pytest.raises(SweepInputError, match=message):
        validate(methods, task_sets, loads)


def test_a_policy_file_loads_as_its_scheduler_by_format(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    from mara_agents.baselines.ippo import SHIPPED as IPPO_SHIPPED
    from mara_agents.baselines.ippo import IPPOScheduler
    from mara_agents.baselines.maskable_ppo import SHIPPED as PPO_SHIPPED
    from mara_agents.baselines.maskable_ppo import MaskablePPOScheduler
    from mara_agents.schedulers.mara import MARA, VARIANTS
    from mara_agents.sweep import load_checkpoint

    assert isinstance(load_checkpoint(PPO_SHIPPED), MaskablePPOScheduler)
    assert isinstance(load_checkpoint(IPPO_SHIPPED), IPPOScheduler)
    mara = load_checkpoint(VARIANTS["mara_wls"].path)
    assert isinstance(mara, MARA) and mara.name == "mara_wls"
    torch.save({"weights": 1}, tmp_path / "other.pt")
    (tmp_path / "policy.onnx").write_bytes(b"")
    for path, message in [
        (tmp_path / "missing.pt", "no checkpoint file at"),
        (tmp_path / "other.pt", r"neither a MARA policy nor an IPPO policy \(keys \['weights'\]\)"),
        (tmp_path / "policy.onnx", "a MaskablePPO .zip or a MARA or IPPO .pt, not '.onnx'"),
    ]:
        with pytest.raises(SweepInputError, match=message):
            load_checkpoint(path)
