"""Training the analog weigher: examples from corpus kinds no task set plays, families held out
to keep the best epoch, and a report against the base and the fixed rule."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from coreenv_lab.fm_training.weigher import (  # noqa: E402
    WeigherTrainConfig,
    excluded_families,
    train_weigher,
    weigher_examples,
)
from mara_agents.fm_training.corpus import corpus_rows, load_corpus  # noqa: E402
from mara_agents.predictors import make_predictor  # noqa: E402


def test_the_families_a_task_set_plays_and_the_rl_kind_are_left_out():
    left_out = excluded_families(load_corpus())
    assert "cnn-digits" in left_out  # an ID family
    assert {"a2c-cartpole", "pg-bandit"} <= set(left_out)  # the corpus's RL kind
    assert "mlp-moons" not in left_out


def test_each_query_is_asked_in_every_situation_with_the_base_s_answer():
    bank = corpus_rows(load_corpus(), curves=["validation"], kinds=["regression"])
    bank = bank.subset(np.arange(30))
    config = WeigherTrainConfig(sources=("protocol",), finished=(0, 2))
    examples = weigher_examples(bank, make_predictor("fm_mara_student"), config)
    queries = len(examples) // 4
    assert len(examples) == 4 * queries
    assert sorted({(bool(r), int(k)) for r, k in zip(examples.reference, examples.finished)}) == [
        (False, 0),
        (False, 2),
        (True, 0),
        (True, 2),
    ]
    alone = (~examples.reference) & (examples.finished == 0)
    assert not examples.inputs.mask[alone].any()  # no reference, nothing finished: no analog
    assert examples.inputs.mask[examples.reference].any()


def test_episodes_ask_what_the_environment_asks_with_the_history_it_holds():
    bank = corpus_rows(load_corpus(), curves=["validation"], kinds=["regression"])
    config = WeigherTrainConfig(sources=("episodes",), group=2, episodes=1, recorded=0.02)
    examples = weigher_examples(
        bank.subset(np.arange(45)), make_predictor("fm_mara_student"), config
    )
    assert set(examples.sources) == {"episodes"} and len(examples) > 0
    assert np.all(examples.truth >= 1)  # a task asked about has not reached its target yet
    assert set(examples.families) <= {str(f) for f in bank.family[:45]}
    assert examples.finished.max() > 0  # later queries see tasks of their family finished


def test_training_keeps_the_best_epoch_on_families_it_did_not_train_on():
    config = WeigherTrainConfig(sources=("protocol",), runs=40, epochs=3, finished=(0, 4))
    run = train_weigher(config, log=lambda _: None)
    assert 1 <= run.epoch <= 3 and run.validation_families
    assert set(run.report) == {
        ("protocol", reference, k) for reference in (False, True) for k in (0, 4)
    }
    for scores in run.report.values():
        assert set(scores) == {"base", "rule", "weigher", "queries"}
    no_analog = run.report[("protocol", False, 0)]
    assert no_analog["weigher"] == pytest.approx(no_analog["base"])


def test_a_bad_setting_names_the_field():
    with pytest.raises(ValueError, match="WeigherTrainConfig.validation_share must be in"):
        WeigherTrainConfig(validation_share=0.0)
    with pytest.raises(ValueError, match="WeigherTrainConfig.sources must be one or more of"):
        WeigherTrainConfig(sources=("survey",))
    with pytest.raises(ValueError, match="HistoryConfig.finished"):
        WeigherTrainConfig(finished=(2, 2))
