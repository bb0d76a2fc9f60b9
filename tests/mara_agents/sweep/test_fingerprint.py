"""Fingerprints follow what decides a scheduler's actions and the environment it plays."""

import numpy as np
import pytest

from helpers import run_python
from mara_agents.predictors import WLSConfig, WLSPredictor
from mara_agents.schedulers import FIFO, LARA
from mara_agents.sweep import Job, job_fingerprint, method_fingerprint


def test_fingerprint_is_stable_and_follows_parameters_down_to_the_predictor_config():
    assert method_fingerprint(LARA()) == method_fingerprint(LARA())
    assert method_fingerprint(LARA(explore=4)) != method_fingerprint(LARA())
    tuned = LARA(WLSPredictor(WLSConfig(discount=0.5)))
    assert method_fingerprint(tuned) != method_fingerprint(LARA())
    assert method_fingerprint(FIFO()) != method_fingerprint(LARA())


def test_fingerprint_follows_torch_weights():
    torch = pytest.importorskip("torch")

    class Learned(FIFO):
        def __init__(self, scale):
            self.policy = torch.nn.Linear(2, 1)
            with torch.no_grad():
                self.policy.weight.fill_(scale)
                self.policy.bias.zero_()

    assert method_fingerprint(Learned(1.0)) == method_fingerprint(Learned(1.0))
    assert method_fingerprint(Learned(1.0)) != method_fingerprint(Learned(2.0))


def test_job_fingerprint_covers_the_environment_config():
    job = Job("fifo", "synthetic", 0.04, 0)
    fingerprints = {
        job_fingerprint("m", job),
        job_fingerprint("m", Job("fifo", "synthetic", 0.05, 0)),
        job_fingerprint("m", Job("fifo", "synthetic", 0.04, 0, strict=True)),
        job_fingerprint("other", job),
    }
    assert len(fingerprints) == 4
    assert job_fingerprint("m", Job("fifo", "synthetic", 0.04, 7)) == job_fingerprint("m", job)


CROSS_PROCESS = """
from mara_agents.schedulers import EDF, FIFO
from mara_agents.sweep import METHODS, make_scheduler, method_fingerprint

class Combo(FIFO):
    def __init__(self):
        self.members = (FIFO(), EDF())
        self.options = {"b": [1, 2], "a": {3, 4}}

print(*(method_fingerprint(make_scheduler(m)) for m in sorted(METHODS) if "mara" not in m))
print(method_fingerprint(Combo()))
"""


def test_fingerprints_are_the_same_in_every_process():
    assert run_python(CROSS_PROCESS, PYTHONHASHSEED="1") == run_python(
        CROSS_PROCESS, PYTHONHASHSEED="2"
    )


def test_fingerprint_names_the_class_and_ignores_state_filled_while_playing():
    from mara_agents import evaluate
    from mara_agents.schedulers import EDF

    assert method_fingerprint(FIFO()) != method_fingerprint(EDF())
    lara = LARA()
    before = method_fingerprint(lara)
    evaluate(lara, episodes=1, task_set="synthetic", arrival_horizon=100)
    assert method_fingerprint(lara) == before


def test_fingerprint_follows_tensors_and_nested_containers():
    torch = pytest.importorskip("torch")

    class Holder(FIFO):
        def __init__(self, weights, sizes):
            self.weights = {"w": torch.full((2,), weights)}
            self.sizes = (sizes, [sizes])

    assert method_fingerprint(Holder(1.0, 3)) == method_fingerprint(Holder(1.0, 3))
    assert method_fingerprint(Holder(1.0, 3)) != method_fingerprint(Holder(2.0, 3))
    assert method_fingerprint(Holder(1.0, 3)) != method_fingerprint(Holder(1.0, 4))


def test_job_fingerprint_follows_a_bank_rewritten_at_the_same_path(tmp_path):
    from coreenv.curves import SyntheticCurves, bank_from_arrays, save_bank

    path = tmp_path / "mine.npz"
    curves = SyntheticCurves(length=40)
    rng = np.random.default_rng(0)
    save_bank(bank_from_arrays([curves.sample(rng).losses for _ in range(3)]), path)
    job = Job("fifo", str(path), 0.04, 0)
    first = job_fingerprint("m", job)
    save_bank(bank_from_arrays([curves.sample(rng).losses for _ in range(3)]), path)
    assert job_fingerprint("m", job) != first
