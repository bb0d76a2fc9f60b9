"""Fingerprints follow what decides a scheduler's actions and the environment it plays."""

import pytest

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
