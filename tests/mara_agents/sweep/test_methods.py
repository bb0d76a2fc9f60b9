"""The sweep's methods: nine names, each described; `module:Class` with keyword arguments; every
name checked before any work, with the valid choices (or the new place) in the message."""

import sys
import textwrap

import numpy as np
import pytest

from mara_agents.schedulers import FIFO
from mara_agents.sweep import (
    DEFAULT_METHODS,
    METHODS,
    SweepInputError,
    make_scheduler,
    playable,
    validate,
)
from mara_agents.sweep.methods import method_factory


def test_one_name_per_scheduler_each_described():
    assert sorted(METHODS) == sorted(
        ["fifo", "edf", "random", "lara", "lara_fm", "hop", "mara", "ppo", "oracle"]
    )
    assert all(len(method.about) > 10 for method in METHODS.values())
    assert set(DEFAULT_METHODS) <= set(METHODS)


@pytest.mark.parametrize(
    ("methods", "task_sets", "arrival_prob", "message"),
    [
        (["fifo", "magic"], ["id"], [0.04], "unknown method 'magic'"),
        (["fifo"], ["ood_rl"], [0.04], "Valid names"),
        (["fifo"], ["id"], [1.5], r"arrival_prob must be a finite number in \[0.0, 1.0\], got 1.5"),
        (["mara_wls"], ["id"], [0.04], "'mara_wls' is a study's variant.*lab"),
        (["ppo_slots"], ["id"], [0.04], "'ppo_slots' is a study's RL baseline.*lab"),
        (["hop_fm"], ["id"], [0.04], "'hop_fm' is now called 'hop'"),
        (["mine:Mine(3)"], ["id"], [0.04], "arguments are given by name"),
    ],
)
def test_validate_names_the_bad_input(methods, task_sets, arrival_prob, message):
    with pytest.raises(SweepInputError, match=message):
        validate(methods, task_sets, arrival_prob)


@pytest.fixture
def own_module(tmp_path, monkeypatch):
    """A module of one's own in the current directory: a FIFO whose name and weights are given."""
    (tmp_path / "mine.py").write_text(
        textwrap.dedent(
            """
            from mara_agents.schedulers import FIFO

            class Mine(FIFO):
                name = "mine"

                def __init__(self, weights="none", scale=1.0):
                    self.weights, self.scale = weights, scale

            class Unnamed(FIFO):
                name = "scheduler"
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    yield
    sys.modules.pop("mine", None)


def test_module_class_takes_keyword_arguments_as_literals_or_text(own_module):
    mine = make_scheduler("mine:Mine(weights=runs/w.npy, scale=0.5)")
    assert isinstance(mine, FIFO) and (mine.weights, mine.scale) == ("runs/w.npy", 0.5)
    assert make_scheduler("mine:Mine").weights == "none"
    with pytest.raises(SweepInputError, match="cannot build scheduler.*unexpected keyword"):
        make_scheduler("mine:Mine(speed=2)")


def test_module_class_is_labelled_by_its_schedulers_name_else_by_the_text(own_module):
    assert method_factory("mine:Mine(scale=2)")[0] == "mine"
    assert method_factory("mine:Unnamed")[0] == "mine:Unnamed"
    assert method_factory("lara")[0] == "lara"


def test_a_default_method_that_cannot_play_the_cluster_is_left_out_with_its_reason():
    pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    mixed = {"num_nodes": 8, "num_slots": 16, "node_speeds": "mixed", "switch_cost": 5}
    kept, left_out = playable(["ppo", *DEFAULT_METHODS], mixed)
    assert kept == list(DEFAULT_METHODS)  # mara too: one network for every cluster
    assert list(left_out) == ["ppo"] and "reads slot blocks of 9 columns" in left_out["ppo"]
    assert playable(["mara", "ppo", "lara"], {"num_nodes": 8})[1] == {}


def test_a_policy_file_loads_as_its_scheduler_by_format(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    from mara_agents.baselines.maskable_ppo import SHIPPED, SequentialPPOScheduler
    from mara_agents.schedulers.mara import MARA, VARIANTS
    from mara_agents.sweep import load_checkpoint

    assert isinstance(load_checkpoint(SHIPPED), SequentialPPOScheduler)
    mara = load_checkpoint(VARIANTS["mara"].path)
    assert isinstance(mara, MARA) and mara.name == "mara"
    torch.save({"weights": 1}, tmp_path / "other.pt")
    (tmp_path / "policy.onnx").write_bytes(b"")
    for path, message in [
        (tmp_path / "missing.pt", "no checkpoint file at"),
        (tmp_path / "other.pt", r"not a MARA policy \(keys \['weights'\]\)"),
        (tmp_path / "policy.onnx", "a MaskablePPO .zip or a MARA .pt, not '.onnx'"),
    ]:
        with pytest.raises(SweepInputError, match=message):
            load_checkpoint(path)


def test_the_shipped_rl_baseline_plays_in_its_form_deterministically_at_any_size():
    torch = pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    from mara_agents.baselines.maskable_ppo import SequentialPPOScheduler
    from mara_agents.evaluation import completion_rates

    torch.set_num_threads(1)
    scheduler = make_scheduler("ppo")
    assert isinstance(scheduler, SequentialPPOScheduler)
    assert scheduler.decisions.at == "events"  # it plays in the form it was trained in
    env = {"task_set": "id", "arrival_prob": 0.04}
    rates = completion_rates(scheduler, 2, 1_000_000, **env)
    np.testing.assert_array_equal(rates, completion_rates(make_scheduler("ppo"), 2, 1_000_000, **env))
    assert rates.mean() > 0.0
    big = {"task_set": "id", "num_nodes": 8, "num_slots": 16}
    assert completion_rates(make_scheduler("ppo"), 1, 1_000_000, **big).mean() > 0.0


def test_playing_every_method_imports_no_training_code():
    pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    from helpers import run_python

    code = (
        "import sys\n"
        "from mara_agents.sweep import METHODS, validate\n"
        "validate(list(METHODS), ['id'], [0.04])\n"
        "ours = ('coreenv', 'mara_agents', 'curvegen', 'coreenv_lab')\n"
        "print(sorted(m for m in sys.modules if m.startswith(ours) and 'train' in m))\n"
    )
    assert run_python(code).splitlines()[-1] == "[]"
