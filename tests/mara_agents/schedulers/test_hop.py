"""HOP: plans on each sampled future, serves by share of feasible plans; valid matchings always."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coreenv
from coreenv.curves import named_task_set
from helpers import idle, play_checking_matchings, power_curve, scripted_env, task
from coreenv_lab.diagnostics import ClairvoyantPredictor
from mara_agents.predictors import WLSPredictor
from mara_agents.schedulers import HOP, LARA, HOPConfig
from mara_agents.schedulers.hop import HOP_TUNED
from mara_agents.schedulers.planning import select_feasible, select_feasible_many
from mara_agents.sweep import METHODS, validate


class RepeatedTruth:
    """Samples that are all the true remaining demand (the clairvoyant answer, S times)."""

    def __init__(self, truth: ClairvoyantPredictor, samples: int = 4) -> None:
        self.truth = truth
        self.samples = samples

    def sampled_crossings(self, prefixes, targets):
        remaining = [
            self.truth.estimate(p, float(e), 0).remaining for p, e in zip(prefixes, targets)
        ]
        return np.repeat(np.array(remaining, np.float64)[:, None], self.samples, axis=1)


class FixedSamples:
    """Samples chosen by a task's initial loss (its curve's scale)."""

    def __init__(self, by_initial_loss):
        self.by_initial_loss = by_initial_loss

    def sampled_crossings(self, prefixes, targets):
        return np.array([self.by_initial_loss[float(p[0])] for p in prefixes], np.float64)


def served(env, actions):
    return sorted(a for a in actions.values() if a != env.config.num_slots)


def test_hop_gives_valid_matchings_to_the_end():
    env = coreenv.parallel_env(seed=0, arrival_prob=0.2, arrival_horizon=150, num_nodes=3)
    play_checking_matchings(env, HOP(WLSPredictor()))


def test_hop_with_fm_samples_gives_valid_matchings():
    pytest.importorskip("torch")
    env = coreenv.parallel_env(
        seed=0, arrival_prob=0.3, arrival_horizon=10, deadline_window=(10, 20), num_nodes=2
    )
    play_checking_matchings(env, HOP())


def test_hop_episode_is_deterministic_for_a_seed():
    def play(seed):
        env = coreenv.parallel_env(seed=seed, arrival_prob=0.2, arrival_horizon=150)
        observations, infos = env.reset()
        hop = HOP(WLSPredictor())
        hop.reset(env)
        history = []
        while env.agents:
            actions = hop.act(observations, infos)
            history.append(actions)
            observations, _, _, _, infos = env.step(actions)
        return history, env.metrics()

    first, again = play(3), play(3)
    for step, (a, b) in enumerate(zip(first[0], again[0])):
        assert a == b, f"[step {step}]"
    assert len(first[0]) == len(again[0])
    assert first[1] == again[1]


def test_hop_on_true_samples_serves_what_lara_on_true_demand_serves():
    truth = ClairvoyantPredictor(named_task_set("id_train"))
    env = coreenv.parallel_env(seed=1, arrival_prob=0.1, arrival_horizon=200, num_nodes=2)
    observations, infos = env.reset()
    lara, hop = LARA(predictor=truth), HOP(RepeatedTruth(truth))
    lara.reset(env)
    hop.reset(env)
    compared = 0
    for step in range(200):
        if not env.agents:
            break
        actions = lara.act(observations, infos)
        assert served(env, hop.act(observations, infos)) == served(env, actions), f"[step {step}]"
        compared += bool(served(env, actions))
        observations, _, _, _, infos = env.step(actions)
    assert compared > 50  # the comparison saw work


def test_hop_on_wls_point_estimates_acts_as_lara_on_wls():
    env = coreenv.parallel_env(seed=2, arrival_prob=0.1, arrival_horizon=200, num_nodes=3)
    observations, infos = env.reset()
    lara, hop = LARA(), HOP(WLSPredictor())
    lara.reset(env)
    hop.reset(env)
    step = 0
    while env.agents:
        actions = lara.act(observations, infos)
        assert hop.act(observations, infos) == actions, f"[step {step}]"
        observations, _, _, _, infos = env.step(actions)
        step += 1


def test_hop_serves_by_share_of_feasible_samples_not_by_deadline():
    early = power_curve(60, scale=5.0)  # initial loss 5.0 identifies it; earlier deadline
    env = scripted_env({0: [task(40, 50, early)], 1: [task(40, 60)]}, num_nodes=1, num_slots=2)
    samples = {5.0: [500.0, 500.0, 5.0, 5.0], 2.0: [5.0, 5.0, 5.0, 5.0]}  # shares 1/2 and 1
    hop = HOP(FixedSamples(samples), HOPConfig(explore=1))
    hop.reset(env)
    env.step(idle(env))
    env.step(idle(env))
    order = []
    for _ in range(4):
        actions = hop.act({}, {})
        order.append(int(env.view().uid[0, actions["node_0"]]))
        env.step(actions)
    assert order == [0, 1, 1, 1]  # explore (earliest deadline first), then the surer task


def test_slack_drops_a_task_that_fits_its_deadline_only_exactly():
    def first_served_when_ready(slack):
        tight = power_curve(60, scale=5.0)  # initial loss 5.0 identifies it; earlier deadline
        env = scripted_env({0: [task(40, 50, tight), task(40, 60)]}, num_nodes=1, num_slots=2)
        per_step = env.config.batches_per_step
        exact = 48 * per_step  # 48 steps: exactly the time left to its deadline at t = 3
        samples = {5.0: [exact] * 4, 2.0: [per_step] * 4}
        hop = HOP(FixedSamples(samples), HOPConfig(explore=1, slack=slack))
        hop.reset(env)
        env.step(idle(env))  # the tasks arrive
        for _ in range(2):  # each explores its one batch, earliest deadline first
            env.step(hop.act({}, {}))
        return int(env.view().uid[0, hop.act({}, {})["node_0"]])

    assert first_served_when_ready(slack=0) == 0  # both plans feasible: earliest deadline
    assert first_served_when_ready(slack=1) == 1  # one step of margin: only the other fits


def test_scores_are_the_share_of_samples_whose_plan_takes_the_task():
    steps = np.array([[2.0, 2.0, np.inf, 9.0], [3.0, 3.0, 3.0, 3.0]])  # (R=2, S=4)
    time_left = np.array([4.0, 4.0])
    # one node: both fit only if 2 + 3 <= 4 (never); alone, task 0 fits in samples 0 and 1
    np.testing.assert_allclose(HOP.scores(steps, time_left, 1), [0.5, 0.5])
    np.testing.assert_allclose(HOP.scores(steps, time_left, 2), [0.5, 1.0])


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 8).flatmap(
        lambda r: st.tuples(
            st.lists(st.integers(1, 30), min_size=r, max_size=r),
            st.lists(
                st.lists(st.one_of(st.integers(1, 35), st.just(10**9)), min_size=r, max_size=r),
                min_size=1,
                max_size=5,
            ),
        )
    ),
    st.integers(1, 4),
)
def test_select_feasible_many_equals_select_feasible_per_sample(case, nodes):
    time_left = np.array(case[0], np.float64)
    steps = np.array(case[1], np.float64).T  # (R, S)
    steps[steps >= 10**9] = np.inf
    masks = select_feasible_many(steps, time_left, nodes)
    for s in range(steps.shape[1]):
        np.testing.assert_array_equal(masks[:, s], select_feasible(steps[:, s], time_left, nodes))


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"explore": 0}, "explore"),
        ({"explore": 2.5}, "explore"),
        ({"explore": True}, "explore"),
        ({"min_share": 1.0}, "min_share"),
        ({"min_share": -0.1}, "min_share"),
        ({"min_share": "half"}, "min_share"),
        ({"slack": -1}, "slack"),
        ({"slack": 1.5}, "slack"),
        ({"quantile": 0.0}, "quantile"),
        ({"quantile": 1.0}, "quantile"),
        ({"quantile": "median"}, "quantile"),
    ],
)
def test_bad_config_values_are_refused_naming_the_field(kwargs, field):
    with pytest.raises(ValueError, match=f"HOPConfig.{field}"):
        HOPConfig(**kwargs)


def test_hop_refuses_a_config_that_is_not_a_hop_config():
    with pytest.raises(ValueError, match="HOPConfig"):
        HOP(WLSPredictor(), config={"explore": 3})


def test_hop_refuses_samples_of_the_wrong_shape():
    class Flat:
        def sampled_crossings(self, prefixes, targets):
            return np.ones(len(prefixes))

    env = coreenv.parallel_env(seed=0, arrival_prob=0.5, arrival_horizon=50)
    observations, infos = env.reset()
    hop = HOP(Flat(), HOPConfig(explore=1))
    hop.reset(env)
    with pytest.raises(ValueError, match="sampled_crossings returned shape"):
        for _ in range(20):
            observations, _, _, _, infos = env.step(hop.act(observations, infos))


def test_hop_is_a_sweep_method_on_the_flow_matching_predictor():
    pytest.importorskip("torch")
    validate(["hop"], ["id"], [0.04])
    hop = METHODS["hop"].make()
    assert isinstance(hop, HOP) and hop.config == HOP_TUNED
