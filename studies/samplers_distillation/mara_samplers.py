"""MARA with cheaper flow-matching samplers: completion paired on training seeds, cost against LARA.

    python studies/samplers_distillation/mara_samplers.py         # 60 episodes from seed 960,000
    python studies/samplers_distillation/mara_samplers.py --settings 32:1:euler 8:1:euler \
        --episodes 100
    python studies/samplers_distillation/mara_samplers.py --settings 32:1:euler \
        32:1:euler@results/distill/fm_mara_student.pt
    python studies/samplers_distillation/mara_samplers.py --task-set vit_ood   # held-out runs

``--variant`` is a MARA on a flow-matching network: the shipped one (``mara``) or one of the
lab's (``mara_sets``, ``mara_noshape``, ``mara_history``: `coreenv_lab.variants`; ``pip install -e
lab``). Each setting ``SAMPLES:STEPS:SOLVER`` reads the policy's own network with that many sampled
futures per prefix and integration steps (`FMConfig`'s sampler fields);
``SAMPLES:STEPS:SOLVER@CHECKPOINT`` reads the FM checkpoint at that path instead, raw as the
policy's network is (such as a student of `benchmarks/distill_fm.py`). The first setting is the
reference of the paired differences. LARA plays the same episodes first, and every wall time is
given as a ratio to its own, measured in the same run. Training seeds only (below 1,000,000),
so a setting chosen here is not chosen on the sweep's evaluation episodes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from coreenv.curves import TASK_SETS
from coreenv_lab.predictors import MARA_TEACHER, make_predictor
from coreenv_lab.variants import LAB_VARIANTS
from mara_agents.evaluation import completion_rates, paired_difference
from mara_agents.predictors.flow import FMPredictor
from mara_agents.schedulers.lara import LARA
from mara_agents.schedulers.mara import MARA, VARIANTS
from mara_agents.seeds import check_choice_episodes
from mara_agents.training.recipe import TRAINING_ENV

DEFAULT_SETTINGS = [
    (32, 4, "heun", MARA_TEACHER),
    (32, 1, "euler", None),
    (16, 1, "euler", None),
    (8, 1, "euler", None),
    (32, 1, "euler", MARA_TEACHER),
]
"""The teacher as its policies were trained on it, the shipped one-step student with 32, 16 and
8 samples, and the teacher read in one step (what distillation is for)."""
SOLVERS = ("euler", "heun")
FM_VARIANTS = {
    **{name: (v.predictor, None) for name, v in VARIANTS.items()},
    **{name: (v.predictor, v.path) for name, v in LAB_VARIANTS.items()},
}
FM_VARIANTS = {name: reads for name, reads in FM_VARIANTS.items() if reads[0].startswith("fm")}
"""Each MARA on an FM network: its predictor and checkpoint (None: a shipped one's own)."""


def setting(text: str) -> tuple[int, int, str, Path | None]:
    """``"SAMPLES:STEPS:SOLVER[@CHECKPOINT]"`` -> (samples, steps, solver, checkpoint or None).

    Or argparse's error naming the text.
    """
    sampler, at, path = text.partition("@")
    checkpoint = Path(path) if at else None
    if checkpoint is not None and not checkpoint.is_file():
        raise argparse.ArgumentTypeError(f"no FM checkpoint at {path!r} (in setting {text!r})")
    if checkpoint is not None:
        try:  # read now, not after the settings before it have played
            FMPredictor.pretrained(checkpoint, calibrated=False)
        except Exception as error:
            raise argparse.ArgumentTypeError(
                f"{path!r} is not an FM checkpoint (in setting {text!r}): "
                f"{type(error).__name__}: {' '.join(str(error).split())[:120]}"
            ) from None
    parts = sampler.split(":")
    try:
        if len(parts) != 3:
            raise ValueError
        samples, steps, solver = int(parts[0]), int(parts[1]), parts[2]
        if samples < 1 or steps < 1 or solver not in SOLVERS:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a setting is SAMPLES:STEPS:SOLVER[@CHECKPOINT] with SAMPLES, STEPS >= 1 and SOLVER "
            f"one of {SOLVERS}, got {text!r}"
        ) from None
    return samples, steps, solver, checkpoint


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="mara", choices=sorted(FM_VARIANTS))
    parser.add_argument("--episodes", type=int, default=60, help=">= 2, paired")
    parser.add_argument("--seed", type=int, default=960_000, help="first episode (training seeds)")
    parser.add_argument("--settings", nargs="+", type=setting, default=DEFAULT_SETTINGS)
    parser.add_argument(
        "--task-set",
        default=TRAINING_ENV["task_set"],
        choices=sorted(TASK_SETS),
        help="default: the training runs; an OOD set is a diagnostic, never a choice",
    )
    args = parser.parse_args(argv)
    try:
        check_choice_episodes(args.seed, args.episodes)
    except ValueError as e:
        parser.error(str(e))
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()
    env = {**TRAINING_ENV, "task_set": args.task_set}
    lara = completion_rates(LARA(), args.episodes, args.seed, **env)
    lara_seconds = time.perf_counter() - start
    print(
        f"{args.variant} on {args.episodes} {env['task_set']} episodes at p = "
        f"{env['arrival_prob']} from seed {args.seed}; "
        f"LARA {100 * lara.mean():.2f}% in {lara_seconds:.1f} s\n"
    )
    print(
        "| samples | steps | solver | network | completion (%) | − first (paired ± SE) | − LARA "
        "| cost / LARA |\n|---|---|---|---|---|---|---|---|"
    )
    network, path = FM_VARIANTS[args.variant]
    first = None
    for samples, steps, solver, checkpoint in args.settings:
        sampler = {"samples": samples, "ode_steps": steps, "solver": solver}
        if checkpoint is None:
            predictor = make_predictor(network, **sampler)
        else:  # raw, as the fm variants' network (fm_mara_student) is read
            predictor = FMPredictor.pretrained(checkpoint, calibrated=False, **sampler)
        mara = MARA.pretrained(args.variant, path=path, predictors={network: predictor})
        start = time.perf_counter()
        rates = completion_rates(mara, args.episodes, args.seed, **env)
        seconds = time.perf_counter() - start
        first = rates if first is None else first
        gain, se = paired_difference(first, rates)
        over, over_se = paired_difference(lara, rates)
        print(
            f"| {samples} | {steps} | {solver} | {checkpoint or network} | "
            f"{100 * rates.mean():.2f} | {100 * gain:+.2f} ± "
            f"{100 * se:.2f} | {100 * over:+.2f} ± {100 * over_se:.2f} | "
            f"{seconds / lara_seconds:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
