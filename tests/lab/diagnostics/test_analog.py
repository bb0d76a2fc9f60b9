"""A predictor told each task's kind blends another's estimate with the nearest recorded run of
that kind, and answers as the other predictor alone where it finds no such run."""

import json
import math

import numpy as np
import pytest

from coreenv import Estimate
from coreenv.curves import CurveBank, named_task_set
from coreenv_lab.diagnostics import ClairvoyantPredictor
from coreenv_lab.diagnostics.analog import AnalogConfig, KindAnalog
from mara_agents.predictors import WLSPredictor

BANK = named_task_set("id_train")


class Constant:
    """Always the same estimate."""

    def __init__(self, remaining: float) -> None:
        self.remaining = remaining

    def estimate(self, prefix, target, budget):
        return Estimate(self.remaining, 0.25)


def queries(bank, count: int, prefix: int = 60):
    """(prefix, target) of ``count`` runs, each target first reached within 200 later batches."""
    found = []
    for row in range(len(bank)):
        losses = bank.curve(row).losses
        target = float(losses[prefix + 1 : prefix + 201].min())
        if target < losses[: prefix + 1].min():
            found.append((losses[: prefix + 1], target))
    return found[:count]


def by_hand(reference, prefix, target):
    """Batches the nearest reference run needs, computed directly: mean log losses over the
    windows [0, 1), then up to 24 log-spaced ones to n + 1; the shift fitted on the last quarter."""
    n = len(prefix) - 1
    edges = np.unique(np.concatenate([[0], np.geomspace(1, n + 1, 25).astype(int)]))

    def windows(logs):
        return np.array([logs[a:b].mean() for a, b in zip(edges[:-1], edges[1:])])

    query = windows(np.log(prefix))
    best = None
    for row in range(len(reference)):
        logs = np.log(reference.curve(row).losses)
        gaps = query - windows(logs[: n + 1])
        shift = gaps[-max(1, len(gaps) // 4) :].mean()
        distance = np.sqrt(np.mean((gaps - shift) ** 2))
        if best is None or distance < best[0]:
            hits = np.flatnonzero(logs[n + 1 :] + shift <= math.log(target))
            best = (distance, hits[0] + 1.0 if hits.size else math.inf)
    return best[1]


@pytest.mark.parametrize("family", BANK.families)
@pytest.mark.parametrize("prefix", [5, 30, 120, 400])
def test_its_analog_is_the_nearest_run_of_its_kind_and_the_answer_the_geometric_mean(
    family, prefix
):
    rows = np.flatnonzero(BANK.family == family)
    asked = next(r for r in rows if queries(BANK.subset([r]), 1, prefix))  # a new low follows
    episodes, reference = BANK.subset([asked]), BANK.subset(rows[rows != asked])
    losses, target = queries(episodes, 1, prefix)[0]
    analog = by_hand(reference, losses, target)
    predictor = KindAnalog(BANK, episodes, Constant(100.0))  # other families are not its kind
    estimate = predictor.estimate(losses, target, 50)
    if math.isinf(analog):
        assert estimate.remaining == 100.0 and predictor.fallbacks == 1
    else:
        assert estimate.remaining == pytest.approx(math.sqrt(max(analog, 1.0) * 100.0))
        assert predictor.fallbacks == 0
    assert estimate.p_success == 0.25  # the base predictor's
    assert predictor.queries == 1


def test_a_run_that_matches_exactly_gives_the_true_remaining_batches():
    rows = np.flatnonzero(BANK.family == BANK.families[0])[:12]
    episodes = BANK.subset(rows)
    losses = np.asarray(episodes.losses)[:, :-1]  # the same runs, one batch shorter: not "own"
    copies = CurveBank(losses, episodes.family, episodes.config, name="copies")
    truth = ClairvoyantPredictor(episodes)
    analog = KindAnalog(copies, episodes, Constant(math.inf))
    asked = queries(episodes, 12) + queries(episodes, 12, prefix=8)
    for prefix, target in asked:
        true = truth.estimate(prefix, target, 0).remaining
        assert analog.estimate(prefix, target, 0).remaining == true


def test_a_tasks_own_run_is_never_its_analog():
    truth = ClairvoyantPredictor(BANK)
    for prefix, target in queries(BANK, 10):
        own = truth.rows_of(prefix)[0]
        without = BANK.subset(np.flatnonzero(np.arange(len(BANK)) != own))
        alone = KindAnalog(without, BANK, Constant(math.inf)).estimate(prefix, target, 0)
        assert KindAnalog(BANK, BANK, Constant(math.inf)).estimate(prefix, target, 0) == alone


def test_an_analog_that_never_reaches_the_target_leaves_the_base_answer():
    reference, episodes = BANK.subset(np.arange(1, len(BANK))), BANK.subset([0])
    prefix, _ = queries(episodes, 1)[0]
    analog = KindAnalog(reference, episodes, Constant(40.0))
    assert analog.estimate(prefix, 1e-9, 0).remaining == 40.0  # no run gets that low
    assert analog.fallbacks == analog.queries == 1


def test_the_blend_is_the_geometric_mean_of_at_least_one_batch_each():
    reference, episodes = BANK.subset(np.arange(1, len(BANK))), BANK.subset([0])
    prefix, target = queries(episodes, 1)[0]
    alone = KindAnalog(reference, episodes, Constant(math.inf)).estimate(prefix, target, 0)
    under_one = KindAnalog(reference, episodes, Constant(0.5)).estimate(prefix, target, 0)
    assert under_one.remaining == pytest.approx(math.sqrt(alone.remaining))


def test_an_analog_answers_where_the_base_predictor_says_never():
    reference, episodes = BANK.subset(np.arange(1, len(BANK))), BANK.subset([0])
    prefix, target = queries(episodes, 1)[0]
    blended = KindAnalog(reference, episodes, Constant(1.0)).estimate(prefix, target, 0)
    alone = KindAnalog(reference, episodes, Constant(math.inf)).estimate(prefix, target, 0)
    assert alone.remaining == pytest.approx(blended.remaining**2)  # blended: sqrt(analog * 1)


class Sampler(Constant):
    """Samples 10, 20 and 40 of every task."""

    def sampled_crossings(self, prefixes, targets):
        return np.tile([10.0, 20.0, 40.0], (len(prefixes), 1))


def test_sampled_futures_keep_their_spread_around_the_blended_median():
    reference, episodes = BANK.subset(np.arange(1, len(BANK))), BANK.subset([0])
    prefix, target = queries(episodes, 1)[0]
    analog = KindAnalog(reference, episodes, Constant(math.inf)).estimate(prefix, target, 0)
    samples = KindAnalog(reference, episodes, Sampler(20.0)).sampled_crossings([prefix], [target])
    assert samples[0, 1] == pytest.approx(math.sqrt(20.0 * analog.remaining))
    assert samples[0] / samples[0, 1] == pytest.approx([0.5, 1.0, 2.0])
    without = KindAnalog(reference, episodes, WLSPredictor())
    one = without.sampled_crossings([prefix], [target])
    assert one.shape == (1, 1) and one[0, 0] == without.estimate(prefix, target, 0).remaining


def test_without_a_reference_run_of_its_kind_the_base_predictor_answers_alone():
    family = BANK.families[0]
    reference = BANK.subset(np.flatnonzero(BANK.family == family))
    others = BANK.subset(np.flatnonzero(BANK.family != family))
    analog, wls = KindAnalog(reference, others, WLSPredictor()), WLSPredictor()
    asked = queries(others, 5) + [(np.array([3.0, 2.0, 1.5, 1.4]), 1.0)]  # a run of no bank
    for prefix, target in asked:
        assert analog.estimate(prefix, target, 50) == wls.estimate(prefix, target, 50)
    assert analog.fallbacks == analog.queries == 6


def test_the_kind_can_be_named_by_several_fields():
    by_optimizer = AnalogConfig(kind_fields=("family", "optimizer"))
    episodes = BANK.subset([0])
    family, optimizer = BANK.family[0], json.loads(BANK.config[0])["optimizer"]
    unlike = [
        row
        for row in range(1, len(BANK))
        if BANK.family[row] == family and json.loads(BANK.config[row])["optimizer"] != optimizer
    ]
    prefix, target = queries(episodes, 1)[0]
    analog = KindAnalog(BANK.subset(unlike), episodes, Constant(7.0), by_optimizer)
    assert analog.estimate(prefix, target, 0).remaining == 7.0  # its family, not its optimizer
    assert analog.fallbacks == 1
    by_family = KindAnalog(BANK.subset(unlike), episodes, Constant(7.0))
    assert by_family.estimate(prefix, target, 0).remaining != 7.0  # another optimizer's run
    assert by_family.fallbacks == 0


def test_a_reference_run_without_the_kind_fields_is_refused():
    with pytest.raises(ValueError, match="no config field 'colour'.*'family'"):
        KindAnalog(BANK, BANK, WLSPredictor(), AnalogConfig(kind_fields=("colour",)))


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"kind_fields": ()}, "kind_fields must be one or more field names"),
        ({"kind_fields": ("family", "")}, "kind_fields must be one or more field names"),
        ({"windows": 0}, "windows must be an int >= 1"),
        ({"neighbours": True}, "neighbours must be an int >= 1"),
    ],
)
def test_a_bad_config_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        AnalogConfig(**fields)
