"""Fingerprint recorded episodes of every form, or check them against a reference.

    python benchmarks/record_episodes.py --out results/episodes.json
    python benchmarks/record_episodes.py --check benchmarks/data/episodes.json

Each case is an environment (task set, scenario, options, form) and a few seeds, played by
`coreenv_lab.recording`'s mask-reading random policy; the JSON holds each case's per-block digests
of observations, masks, rewards and infos. ``--check`` records the reference's cases again and
exits 1, naming the first differing block of each stream, if any differ: a change of the engine
must leave every case unchanged on one machine (issue 32).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

import coreenv
from coreenv_lab.recording import (
    Fingerprint,
    fingerprint,
    fingerprint_differences,
    fingerprint_vector,
)
from mara_agents.predictors import WLSPredictor

LEVELS = (0.1, 0.5, 0.9)


class SlopePredictor:
    """A short formula of the prefix, with quantiles.

    It exercises the estimate and quantile features without depending on a fitted model.
    """

    def estimate(self, prefix: np.ndarray, target: float, budget: int) -> tuple[float, float]:
        """One task's (remaining, P(success))."""
        remaining, p_success = self.estimate_batch([prefix], np.array([target]), [budget])
        return float(remaining[0]), float(p_success[0])

    def estimate_batch(self, prefixes, targets, budgets) -> tuple[np.ndarray, np.ndarray]:
        """Remaining batches at the prefix's mean log-loss drop per batch (inf if none)."""
        drop = np.array([np.log(p[0] / p[-1]) / (len(p) - 1) for p in prefixes])
        gap = np.log([p[-1] for p in prefixes]) - np.log(targets)
        remaining = np.where(drop > 0, np.maximum(gap, 0) / np.maximum(drop, 1e-12), np.inf)
        return remaining, np.clip(np.asarray(budgets) / (remaining + 1.0), 0.0, 1.0)

    def estimate_quantiles(self, prefixes, targets, levels) -> np.ndarray:
        """The remaining batches scaled by 0.5 + level."""
        remaining, _ = self.estimate_batch(prefixes, targets, np.ones(len(prefixes)))
        return remaining[:, None] * (0.5 + np.asarray(levels))[None]


PREDICTORS = {"none": lambda: None, "wls": WLSPredictor, "slope": SlopePredictor}


def _parallel(seeds: list[int], predictor: str = "none", **options) -> Callable[[], Fingerprint]:
    def play() -> Fingerprint:
        env = coreenv.parallel_env(predictor=PREDICTORS[predictor](), **options)
        return fingerprint(env, seeds)

    return play


def _vector(seed: int, steps: int, predictor: str = "none", **options) -> Callable[[], Fingerprint]:
    def play() -> Fingerprint:
        made = PREDICTORS[predictor]()
        env = coreenv.CoreVectorEnv(4, predictor=made, view="nodes", **options)
        return fingerprint_vector(env, seed, steps)

    return play


CASES: dict[str, Callable[[], Fingerprint]] = {
    "id_train": _parallel([0, 1]),
    "id_p07": _parallel([2], task_set="id", arrival_prob=0.07),
    "rl_ood": _parallel([3], task_set="rl_ood"),
    "vit_ood": _parallel([4], task_set="vit_ood"),
    "synthetic": _parallel([5], task_set="synthetic"),
    "corpus_test": _parallel([6], task_set="corpus_test"),
    "mixed_train": _parallel([7], task_set="mixed_train"),
    "live": _parallel([8], task_set="live", max_steps=300),
    "stress": _parallel([9], scenario="infeasible_stress"),
    "edf_shaped": _parallel([10], admission="edf", shaping_beta=1.0),
    "small_fast": _parallel(
        [11], num_nodes=2, num_slots=5, batches_per_step=3, min_prefix=4, arrival_prob=0.04
    ),  # p given: the default load of 2 nodes is 0.02 since 0.3.0, the reference's was 0.04
    "slope_quantiles": _parallel([12], "slope", estimate_quantiles=LEVELS),
    "events_wls": _parallel([13], "wls", decisions="events", shaping_beta=1.0),
    "vector": _vector(14, 1500, shaping_beta=1.0),
    "vector_wls": _vector(15, 600, "wls", task_set="rl_ood"),
    "vector_quantiles": _vector(17, 600, "slope", estimate_quantiles=LEVELS, admission="edf"),
    "vector_events": _vector(16, 400, decisions="events"),
}
"""Case name -> how to play it: every task set, both scenarios, admission rules, shaping, a
predictor with quantiles, the event form and the vector form (batched and event lanes)."""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--out", type=Path, help="write the fingerprints of the cases here")
    action.add_argument("--check", type=Path, help="compare against this reference file")
    parser.add_argument(
        "--cases", nargs="+", choices=sorted(CASES), help="only these cases (default: all)"
    )
    args = parser.parse_args(argv)
    reference = None
    if args.check is not None:
        if not args.check.is_file():
            parser.error(f"no reference file at {args.check}.")
        reference = json.loads(args.check.read_text())
        unknown = sorted(set(reference) - set(CASES))
        if unknown:
            parser.error(f"the reference has cases this script does not know: {unknown}.")
    names = args.cases or (sorted(reference) if reference is not None else list(CASES))
    if reference is not None and not set(names) <= set(reference):
        parser.error(f"the reference lacks cases {sorted(set(names) - set(reference))}.")
    recorded, failed = {}, 0
    for name in names:
        record = CASES[name]().as_dict()
        recorded[name] = record
        found = [] if reference is None else fingerprint_differences(reference[name], record)
        failed += bool(found)
        status = "; ".join(found) if found else ("same" if reference is not None else "recorded")
        print(f"{name:14s} {record['steps']:6d} steps  {status}", flush=True)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(recorded, indent=1) + "\n")
        print(f"{len(recorded)} cases in {args.out}")
    elif failed:
        print(f"{failed} of {len(names)} cases differ.")
        sys.exit(1)
    else:
        print(f"all {len(names)} cases the same.")


if __name__ == "__main__":
    main()
