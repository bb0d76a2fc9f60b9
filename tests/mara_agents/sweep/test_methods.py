"""Every name of a sweep is checked before any work, with the valid choices in the message."""

import pytest

from mara_agents.sweep import SweepInputError, validate


@pytest.mark.parametrize(
    ("methods", "task_sets", "arrival_prob", "message"),
    [
        (["fifo", "magic"], ["id"], [0.04], "unknown method 'magic'"),
        (["fifo"], ["ood_rl"], [0.04], "Valid names"),
        (["fifo"], ["id"], [1.5], r"arrival_prob must be a finite number in \[0.0, 1.0\], got 1.5"),
        (["ppo_sb3"], ["id"], [0.04], "'ppo_sb3' was retired .* use ppo_slots"),
        (["ippo"], ["id"], [0.04], "'ippo' was retired .* use ippo_live"),
    ],
)
def test_validate_names_the_bad_input(methods, task_sets, arrival_prob, message):
    with pytest.raises(SweepInputError, match=message):
        validate(methods, task_sets, arrival_prob)


def test_a_policy_file_loads_as_its_scheduler_by_format(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    from coreenv_lab.baselines.ippo import SHIPPED as IPPO_SHIPPED
    from coreenv_lab.baselines.ippo import IPPOScheduler
    from mara_agents.baselines.maskable_ppo import SHIPPED as PPO_SHIPPED
    from mara_agents.baselines.maskable_ppo import SequentialPPOScheduler
    from mara_agents.schedulers.mara import MARA, VARIANTS
    from mara_agents.sweep import load_checkpoint

    assert isinstance(load_checkpoint(PPO_SHIPPED["ppo_slots"]), SequentialPPOScheduler)
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


@pytest.mark.parametrize(
    ("method", "module", "kind"),
    [
        ("ppo_slots", "mara_agents.baselines.maskable_ppo", "SequentialPPOScheduler"),
        ("ppo_sets", "mara_agents.baselines.maskable_ppo", "SequentialPPOScheduler"),
        ("ppo_mlp", "mara_agents.baselines.maskable_ppo", "SequentialPPOScheduler"),
        ("ippo_live", "coreenv_lab.baselines.ippo", "IPPOScheduler"),
        ("ippo_sets", "coreenv_lab.baselines.ippo", "IPPOScheduler"),
    ],
)
def test_the_shipped_rl_baselines_are_sweep_methods_that_play_the_benchmark_episodes(
    method, module, kind
):
    torch = pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    import importlib

    import numpy as np

    from mara_agents.evaluation import completion_rates
    from mara_agents.sweep import make_scheduler

    torch.set_num_threads(1)
    scheduler = make_scheduler(method)
    assert isinstance(scheduler, getattr(importlib.import_module(module), kind))
    assert scheduler.decisions.at == "events"  # each plays in the form it was trained in
    env = {"task_set": "id", "arrival_prob": 0.04}
    rates = completion_rates(scheduler, 2, 1_000_000, **env)
    again = completion_rates(make_scheduler(method), 2, 1_000_000, **env)
    np.testing.assert_array_equal(rates, again)  # deterministic
    assert rates.mean() > 0.0


def test_the_sets_baselines_play_a_bigger_cluster_and_the_fixed_ones_are_refused_up_front():
    pytest.importorskip("sb3_contrib")
    from mara_agents.evaluation import completion_rates
    from mara_agents.sweep import make_scheduler

    big = {"task_set": "id", "arrival_prob": 0.08, "num_nodes": 8, "num_slots": 16}
    for method in ("ppo_sets", "ippo_sets"):
        assert completion_rates(make_scheduler(method), 1, 1_000_000, **big).mean() > 0.0
    for method, reason in (("ppo_slots", "trained at 4 nodes"), ("ippo_live", "another layout")):
        with pytest.raises(SweepInputError, match=f"method '{method}': .*{reason}"):
            validate([method], ["id"], [0.08], {"num_nodes": 8, "num_slots": 16})
