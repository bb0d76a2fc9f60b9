"""Smoke tests of studies/value_of_information/sample_noise.py."""

import pytest

pytest.importorskip("torch")

from helpers import STUDIES, load_script  # noqa: E402

FOLDER = STUDIES / "value_of_information"


def test_sample_noise_prints_the_noise_of_prefixes_and_of_samples(capsys):
    argv = ["--task-set", "vit_ood", "--steps", "2", "--runs", "3"]
    load_script("sample_noise", FOLDER).main(argv)
    out = capsys.readouterr().out
    assert "3 prefixes: median per-batch noise of the prefix" in out and "| 2 | raw |" in out


def test_sample_noise_refuses_a_missing_checkpoint(capsys):
    with pytest.raises(SystemExit) as exit_info:
        load_script("sample_noise", FOLDER).main(["--checkpoint", "nowhere.pt"])
    assert exit_info.value.code == 2 and "nowhere.pt" in capsys.readouterr().err
