"""Fingerprints of episodes: the same environment and seeds give the same digests, and any
change of what a step gives back shows in its stream and block."""

import coreenv
from coreenv_lab.recording import fingerprint, fingerprint_vector
from coreenv_lab.recording import fingerprint_differences as differences
from coreenv_lab.recording import BLOCK, STREAMS


def test_the_same_episodes_give_the_same_fingerprint():
    first = fingerprint(coreenv.parallel_env(scenario="infeasible_stress"), [3, 4])
    again = fingerprint(coreenv.parallel_env(scenario="infeasible_stress"), [3, 4])
    assert first.as_dict() == again.as_dict()
    assert differences(first.as_dict(), again.as_dict()) == []
    assert first.steps > BLOCK  # two episodes, reset steps included, in more than one block


def test_a_change_of_the_rewards_alone_shows_in_the_rewards_stream():
    plain = fingerprint(coreenv.parallel_env(), [0], max_steps=250).as_dict()
    shaped = fingerprint(coreenv.parallel_env(shaping_beta=1.0), [0], max_steps=250).as_dict()
    found = differences(plain, shaped)
    assert [line.split(":")[0] for line in found] == ["rewards"]
    assert plain["blocks"]["observations"] == shaped["blocks"]["observations"]


def test_differences_name_the_first_differing_block_of_each_stream():
    record = fingerprint(coreenv.parallel_env(), [1], max_steps=350).as_dict()
    changed = {
        "steps": record["steps"],
        "blocks": {s: list(b) for s, b in record["blocks"].items()},
    }
    changed["blocks"]["masks"][2] = "0" * 16
    assert differences(record, changed) == [
        f"masks: first differs in steps {2 * BLOCK}-{3 * BLOCK}"
    ]


def test_the_vector_form_is_fingerprinted_lane_by_lane_every_step():
    env = coreenv.CoreVectorEnv(3, view="nodes")
    record = fingerprint_vector(env, seed=5, steps=120)
    assert record.steps == 121  # the reset, then each step
    assert set(record.blocks) == set(STREAMS) and all(len(b) == 2 for b in record.blocks.values())
    again = fingerprint_vector(coreenv.CoreVectorEnv(3, view="nodes"), seed=5, steps=120)
    assert record.as_dict() == again.as_dict()
