"""BatchedCore against CoreEnv: lane by lane, bit for bit, at every step and across auto-resets,
in what the nodes observe and in the SchedulerView schedulers read, in both decision forms."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coreenv import BatchedCore, ConfigError, CoreEnv, Decisions, EnvConfig, Estimate, InvalidActionError
from coreenv.wls import WLSEstimates
from coreenv.curves import Curve, CurveSource
from helpers import SMALL_CURVES, env_settings


class Prefix:
    """A deterministic per-task predictor: its answer depends on the task alone."""

    def estimate(self, prefix, target, budget):
        remaining = 0.5 * len(prefix) + 10.0 * target
        return Estimate(remaining if len(prefix) % 7 else math.inf, budget / (budget + len(prefix)))


class Quantiles(Prefix):
    """`Prefix` with quantiles: spread around its estimate, the top one inf for some prefixes."""

    def estimate_quantiles(self, prefixes, targets, levels):
        n = np.array([len(prefix) for prefix in prefixes], np.float64)
        quantiles = (0.5 * n + 10.0 * targets)[:, None] * (0.5 + levels) ** 2  # (B, Q)
        quantiles[n % 5 == 0, -1] = math.inf  # beyond the horizon
        return quantiles


def bits(array):
    """The bit pattern of a float32 array: equality here is bit-for-bit (-0.0 != 0.0)."""
    return np.ascontiguousarray(array).view(np.uint32)


class Lanes:
    """B `CoreEnv`s fed the same seeds as a BatchedCore: a lane takes the next seed when its
    episode ends, and has none left when the seeds run out."""

    def __init__(self, config, predictor, seeds, num_lanes, decisions=None):
        self.envs = [
            CoreEnv(config, predictor=predictor, decisions=decisions) for _ in range(num_lanes)
        ]
        self.seeds = iter(seeds)
        self.current = [None] * num_lanes
        self.first = [self.start(lane) for lane in range(num_lanes)]

    def start(self, lane):
        """The first (obs, mask) of the lane's next episode, or None when no seed is left."""
        seed = next(self.seeds, None)
        self.current[lane] = seed
        if seed is None:
            return None
        observations, _ = self.envs[lane].reset(seed=int(seed))
        return stacked(observations)


def stacked(observations):
    agents = list(observations)
    return (
        np.stack([observations[a]["observation"] for a in agents]),
        observations[agents[0]]["action_mask"],
    )


def check_view(view, lane, expected, seed):
    """A lane of a BatchedObservation shows ``expected`` (obs, mask) of episode ``seed``."""
    if expected is None:
        assert not view.active[lane] and view.seeds[lane] == -1
        assert not view.obs[lane].any()
        assert view.action_mask[lane].tolist() == [0] * (view.action_mask.shape[1] - 1) + [1]
        return
    assert view.active[lane] and view.seeds[lane] == seed
    np.testing.assert_array_equal(bits(view.obs[lane]), bits(expected[0]))
    np.testing.assert_array_equal(view.action_mask[lane], expected[1])


VIEW_FIELDS = (
    "obs",
    "action_mask",
    "t",
    "waiting",
    "occupied",
    "uid",
    "arrival",
    "deadline",
    "batches",
    "target",
    "estimates",
    "seed",
    "remaining",
)


def check_scheduler_view(batched, lane, env):
    """Lane ``lane`` of a BatchedCore's clairvoyant SchedulerView is ``env.view``'s, exactly."""
    alone = env.view(clairvoyant=True)
    mine = batched.take([lane])
    for name in VIEW_FIELDS:
        expected, got = getattr(alone, name), getattr(mine, name)
        assert (expected is None) == (got is None), name
        if expected is not None:
            np.testing.assert_array_equal(got, expected, err_msg=name)
    for slot in np.flatnonzero(alone.occupied[0]):
        np.testing.assert_array_equal(mine.prefix(0, slot), alone.prefix(0, slot))
    assert mine.configs == alone.configs


def random_actions(rng, mask, num_nodes):
    """Half the time any value in [-1, K + 1] (empty slots, out of range, conflicts), else
    random choices among the mask's (still conflicting)."""
    b, k1 = mask.shape
    if rng.random() < 0.5:
        return rng.integers(-1, k1 + 1, (b, num_nodes))
    allowed = [np.flatnonzero(row) for row in mask]
    return np.array([rng.choice(a, num_nodes) for a in allowed], np.int64)


def play_both(
    config, seeds, num_lanes, predictor=None, action_seed=0, max_steps=3000, decisions=None
):
    """Step a BatchedCore and B CoreEnvs with the same actions; compare everything each step."""
    core = BatchedCore(config, num_lanes, predictor, decisions)
    lanes = Lanes(config, predictor, seeds, num_lanes, decisions)
    view = core.reset(seeds)
    for lane in range(num_lanes):
        check_view(view, lane, lanes.first[lane], lanes.current[lane])
    rng = np.random.default_rng(action_seed)
    finished = 0
    for t in range(max_steps):
        if not view.active.any():
            return finished
        scheduler_view = core.view(clairvoyant=True)
        for lane, env in enumerate(lanes.envs):
            if lanes.current[lane] is not None:
                check_scheduler_view(scheduler_view, lane, env)
        actions = random_actions(rng, view.action_mask, config.num_nodes)
        step = core.step(actions)
        ended = {lane: (seed, metrics) for lane, seed, metrics in step.finished}
        for lane, env in enumerate(lanes.envs):
            if lanes.current[lane] is None:
                check_view(step, lane, None, -1)
                assert step.rewards[lane] == 0.0 and not step.terminated[lane]
                continue
            msg = f"step {t}, lane {lane}, seed {lanes.current[lane]}"
            named = {agent: int(a) for agent, a in zip(env.possible_agents, actions[lane])}
            observations, rewards, terms, truncs, infos = env.step(named)
            obs, mask = stacked(observations)
            info = infos["node_0"]
            np.testing.assert_array_equal(bits(step.final_obs[lane]), bits(obs), err_msg=msg)
            assert step.rewards[lane] == rewards["node_0"], msg
            assert step.successes[lane] == info["successes"], msg
            assert step.terminated[lane] == terms["node_0"], msg
            assert step.truncated[lane] == truncs["node_0"], msg
            invalid = sum("invalid_action" in infos[agent] for agent in infos)
            assert step.conflicts[lane] == invalid, msg
            if core.decisions.held:
                assert step.elapsed[lane] == info["elapsed"], msg
            else:
                assert step.elapsed is None
            if env.agents:
                assert lane not in ended, msg
                check_view(step, lane, (obs, mask), lanes.current[lane])
                continue
            seed, metrics = ended.pop(lane)
            assert seed == lanes.current[lane], msg
            np.testing.assert_equal(metrics, env.metrics(), err_msg=msg)  # NaN-aware, exact
            finished += 1
            expected = lanes.start(lane)
            check_view(step, lane, expected, lanes.current[lane])
        assert not ended
        view = step
    raise AssertionError(f"episodes still running after {max_steps} steps")


@st.composite
def configs(draw):
    return EnvConfig(
        **draw(env_settings(nodes=4, slots=5, horizon=50, window=25)),
        task_set=draw(st.sampled_from([SMALL_CURVES, "id_train", "id"])),
        max_steps=draw(st.sampled_from([None, None, draw(st.integers(1, 80))])),
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    configs(),
    st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=6),
    st.integers(1, 4),
    st.booleans(),
    st.sampled_from([(), (), (0.5,), (0.1, 0.5, 0.9)]),
    st.integers(0, 2**16),
    st.sampled_from([None, "events", Decisions("events", hold=3, feasibility=True)]),
)
def test_lanes_equal_core_envs_bit_for_bit(
    config, seeds, num_lanes, predict, levels, action_seed, decisions
):
    """In the event form each lane holds its action until its own event, as `CoreEnv` does."""
    seeds = np.array(seeds, np.int64)  # numpy ints: the same episodes as CoreEnv's int seeds
    config = config.replace(estimate_quantiles=levels)
    predictor = Quantiles() if predict else None
    finished = play_both(config, seeds, num_lanes, predictor, action_seed, decisions=decisions)
    assert finished == len(seeds)


@pytest.mark.parametrize("predict", [False, True])
def test_the_stress_scenario_equals_core_envs(predict):
    config = EnvConfig(scenario="infeasible_stress", task_set="id", shaping_beta=0.3, min_prefix=3)
    assert play_both(config, range(3), 2, Prefix() if predict else None) == 3


@pytest.mark.parametrize("task_set", ["id_train", SMALL_CURVES])
def test_lanes_with_wls_in_the_engine_equal_core_envs(task_set):
    config = EnvConfig(task_set=task_set, arrival_prob=0.2, arrival_horizon=150, min_prefix=3)
    assert play_both(config, range(5), 3, WLSEstimates()) == 5


def test_busy_default_lanes_equal_core_envs():
    # many lanes, a short horizon and a high load: direct arrivals, queues and several
    # admissions in one step all happen in the same steps
    config = EnvConfig(arrival_horizon=120, arrival_prob=0.3, deadline_window=(20, 60))
    assert play_both(config, range(14), 8) == 14


@pytest.mark.parametrize("levels", [(), (0.25, 0.75)])
def test_attaching_a_predictor_mid_episode_equals_core_envs(levels):
    config = EnvConfig(
        task_set=SMALL_CURVES,
        arrival_prob=0.5,
        arrival_horizon=40,
        min_prefix=2,
        estimate_quantiles=levels,
    )
    core, envs = BatchedCore(config, 2), [CoreEnv(config) for _ in range(2)]
    view = core.reset([5, 6])
    for env, seed in zip(envs, [5, 6]):
        env.reset(seed=seed)
    rng = np.random.default_rng(1)
    for t in range(60):
        if t in (10, 30, 45):  # attach, detach, attach again
            predictor = None if t == 30 else Quantiles()
            core.predictor = predictor
            for env in envs:
                env.predictor = predictor
        actions = random_actions(rng, view.action_mask, config.num_nodes)
        view = core.step(actions)
        for lane, env in enumerate(envs):
            named = dict(zip(env.possible_agents, actions[lane].tolist()))
            obs, _ = stacked(env.step(named)[0])
            np.testing.assert_array_equal(bits(view.final_obs[lane]), bits(obs), err_msg=f"{t}")
    with pytest.raises(TypeError, match="estimate"):
        core.predictor = object()
    if levels:
        with pytest.raises(TypeError, match=r"EnvConfig.estimate_quantiles needs a predictor"):
            core.predictor = Prefix()
        with pytest.raises(TypeError, match=r"estimate_quantiles\(prefixes, targets, levels\)"):
            BatchedCore(config, 2, Prefix())


@pytest.mark.parametrize("task_set", ["id", SMALL_CURVES])
def test_a_pickled_core_continues_exactly(task_set):
    import copy
    import pickle

    config = EnvConfig(task_set=task_set, arrival_prob=0.3, arrival_horizon=60, min_prefix=2)
    core = BatchedCore(config, 3, Prefix())
    view = core.reset(iter(range(10)))
    rng = np.random.default_rng(0)
    for _ in range(40):
        view = core.step(random_actions(rng, view.action_mask, config.num_nodes))
    clones = [pickle.loads(pickle.dumps(core)), copy.deepcopy(core)]
    runs = []
    for candidate in [core, *clones]:
        rng, trace, step = np.random.default_rng(1), [], view
        for _ in range(150):
            step = candidate.step(random_actions(rng, step.action_mask, config.num_nodes))
            trace.append((bits(step.obs), step.rewards, step.finished))
        runs.append(trace)
    for other in runs[1:]:
        np.testing.assert_equal(other, runs[0])


def test_exhausted_seeds_make_lanes_inactive():
    config = EnvConfig(task_set=SMALL_CURVES, arrival_horizon=20, deadline_window=(5, 10))
    core = BatchedCore(config, 3)
    first = core.reset([7])
    assert first.active.tolist() == [True, False, False]
    assert first.seeds.tolist() == [7, -1, -1]
    assert not first.obs[1:].any()
    ended, actions = [], np.zeros((3, config.num_nodes), np.int64)  # inactive lanes: ignored
    while first.active.any():
        first = core.step(actions)
        ended += first.finished
        assert not first.rewards[1:].any() and not first.conflicts[1:].any()
    assert [(lane, seed) for lane, seed, _ in ended] == [(0, 7)]
    assert core.metrics() == [None, None, None]
    after = core.step(actions)  # nothing runs: nothing happens
    assert not after.active.any() and not after.finished and not after.obs.any()


def test_metrics_of_running_lanes_equal_core_envs():
    config = EnvConfig(task_set=SMALL_CURVES, arrival_prob=0.5, arrival_horizon=40)
    core, env = BatchedCore(config, 2), CoreEnv(config)
    core.reset([3, 4])
    env.reset(seed=4)
    for _ in range(25):
        core.step(np.zeros((2, config.num_nodes), np.int64))
        env.step(dict.fromkeys(env.agents, 0))
    np.testing.assert_equal(core.metrics()[1], env.metrics())


def test_final_obs_is_obs_when_no_episode_ended():
    core = BatchedCore(EnvConfig(task_set=SMALL_CURVES), 2)
    core.reset(range(2))
    step = core.step(np.full((2, 4), 8))
    assert not step.finished and step.final_obs is step.obs


def test_raise_policy_names_the_lane_seed_and_nodes():
    config = EnvConfig(task_set=SMALL_CURVES, arrival_prob=1.0, invalid_action="raise")
    core = BatchedCore(config, 2)
    core.reset([11, 12])
    k = config.num_slots
    core.step(np.full((2, config.num_nodes), k))  # a task arrives in each lane
    actions = np.full((2, config.num_nodes), k)
    actions[1, :2] = 0  # node_1 takes the slot node_0 took
    with pytest.raises(InvalidActionError, match=r"lane 1 \(seed 12\) .*node_1: slot 0 is already"):
        core.step(actions)
    actions[0, 3] = k + 5
    with pytest.raises(
        InvalidActionError, match=r"lane 0 \(seed 11\).*node_3.*\(lanes \[1\] too\)"
    ):
        core.step(actions)


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        (np.zeros((3, 4), np.int64), r"shape \(num_envs, num_nodes\) = \(2, 4\), got \(3, 4\)"),
        (np.zeros(8, np.int64), r"shape .* got \(8,\)"),
        (np.zeros((2, 4)), "integers in \\[0, 8\\], got dtype float64"),
        (np.zeros((2, 4), bool), "got dtype bool"),
    ],
)
def test_bad_actions_are_refused_naming_the_problem(actions, message):
    core = BatchedCore(EnvConfig(), 2)
    core.reset(range(2))
    with pytest.raises(ValueError, match=message):
        core.step(actions)


@pytest.mark.parametrize("num_envs", [0, -3, True, 2.0, "4"])
def test_a_bad_lane_count_is_refused(num_envs):
    with pytest.raises(ValueError, match=f"num_envs must be an int >= 1, got {num_envs!r}"):
        BatchedCore(EnvConfig(), num_envs)


def test_step_before_reset_and_bad_seeds_are_refused():
    core = BatchedCore(EnvConfig(), 1)
    with pytest.raises(RuntimeError, match="call reset"):
        core.step(np.zeros((1, 4), np.int64))
    with pytest.raises(ValueError, match="non-negative ints, got -1"):
        core.reset([-1])
    with pytest.raises(ValueError, match="non-negative ints, got 1.5"):
        core.reset([1.5])


class Lazy:
    """Losses indexed like an array but not one (as the live task set's, trained on demand)."""

    def __init__(self, values):
        self.values = np.asarray(values)

    def __len__(self):
        return len(self.values)

    def __getitem__(self, key):
        return self.values[key]


class OnDemand(CurveSource):
    name = "on-demand"
    validated = True

    def sample(self, rng):
        return Curve(Lazy(np.linspace(2.0, 1.0, 30 + int(rng.integers(5)))), "lazy")


class Float32(CurveSource):
    name = "float32"
    validated = True

    def sample(self, rng):
        return Curve(np.linspace(2.0, 1.0, 30, dtype=np.float32), "f32")


@pytest.mark.parametrize("source", [OnDemand(), Float32()])
def test_curves_read_on_demand_or_in_float32_equal_core_envs(source):
    play_both(EnvConfig(task_set=source, arrival_prob=0.3, arrival_horizon=60), range(4), 2)


class AboveStart(CurveSource):
    """Targets above the initial loss (never reached): log-progress reads 1 once trained."""

    name = "above"
    validated = True

    def sample(self, rng):
        return Curve(np.linspace(2.0, 1.0, 20 + int(rng.integers(10))), "line")

    def target(self, curve, fraction):
        return 3.0 * fraction + 2.5, None


def test_a_user_source_with_unusual_targets_equals_core_envs():
    config = EnvConfig(task_set=AboveStart(), arrival_horizon=15, deadline_window=(5, 30))
    assert play_both(config.replace(shaping_beta=1.0), range(4), 2) == 4


@pytest.mark.parametrize("decisions", [None, "events"])
@pytest.mark.parametrize("predict", [False, True])
def test_the_state_form_shows_the_node_forms_states_and_left_out_lanes_wait(decisions, predict):
    """``observation="state"`` gives the node form's states (its node arrays are made only for
    `view`); a lane left out of ``step(lanes=...)`` waits as it is, then plays on as a `CoreEnv`
    stepped only when its lane is."""
    config = EnvConfig(
        task_set=SMALL_CURVES,
        num_nodes=2,
        num_slots=3,
        arrival_prob=0.3,
        arrival_horizon=30,
        deadline_window=(5, 20),
    )
    predictor = Prefix() if predict else None
    nodes = BatchedCore(config, 3, predictor, decisions)
    state = BatchedCore(config, 3, predictor, decisions, observation="state")
    singles = [CoreEnv(config, predictor=predictor, decisions=decisions) for _ in range(3)]
    seeds = iter(range(100))
    for single in singles:
        single.reset(seed=next(seeds))
    shown = state.reset(range(100)).obs
    nodes.reset(range(100))
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(120):
        lanes = rng.random(3) < 0.6
        actions = rng.integers(0, 4, (3, 2))
        full, alone = nodes.step(actions, lanes), state.step(actions, lanes)
        np.testing.assert_array_equal(bits(alone.obs), bits(full.obs[:, 0, 2:]))
        np.testing.assert_array_equal(bits(alone.final_obs), bits(full.final_obs[:, 0, 2:]))
        np.testing.assert_array_equal(state.view().obs, nodes.view().obs)
        for name in ("rewards", "successes", "terminated", "truncated", "conflicts", "elapsed"):
            np.testing.assert_array_equal(getattr(alone, name), getattr(full, name), name)
        waiting = ~lanes
        np.testing.assert_array_equal(bits(alone.obs[waiting]), bits(shown[waiting]))
        assert not alone.rewards[waiting].any() and not alone.terminated[waiting].any()
        if decisions is not None:
            assert not alone.elapsed[waiting].any()
        for lane in np.flatnonzero(lanes):
            agents = singles[lane].possible_agents
            result = singles[lane].step(dict(zip(agents, actions[lane].tolist())))
            assert alone.rewards[lane] == result[1][agents[0]]
            if not singles[lane].agents:
                singles[lane].reset(seed=next(seeds))
                ended += 1
            np.testing.assert_array_equal(bits(alone.obs[lane]), bits(singles[lane].state()))
        shown = alone.obs
    assert ended > 0


def test_an_unknown_observation_form_is_refused_with_the_choices():
    with pytest.raises(ConfigError, match=r"observation must be one of \('nodes', 'state'\)"):
        BatchedCore(EnvConfig(task_set=SMALL_CURVES), 2, observation="states")
