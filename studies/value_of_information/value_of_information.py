"""What better estimates are worth: LARA fed the true demand with errors of chosen sizes.

    python studies/value_of_information/value_of_information.py      # 30 episodes per task set
    python studies/value_of_information/value_of_information.py --task-sets id --noise 0 0.5 \
        --episodes 100
    python studies/value_of_information/value_of_information.py --task-sets id --noise --no-mara \
        --kinds family family,optimizer
    python studies/value_of_information/value_of_information.py --noise --kinds family --analogs own

On each task set, paired on the same training-seed episodes (below 1,000,000): FIFO, EDF, LARA
(WLS), LARA-FM, LARA on the true remaining demand times one log-normal error factor per task
(`TruthLARA`, "truth σ", for each σ of ``--noise``), HOP on 32 samples spread by the same σ
around that estimate (`TruthHOP`, "hedged σ": a planner that knows how unsure it is), the oracle
and the shipped MARA. With ``--kinds``, LARA-FM told each task's kind ("lara_fm kind FIELDS":
`KindAnalog`, FM's estimate blended with the nearest run of that kind, named by the config
fields FIELDS, among the ID training runs or, with ``--analogs own``, the task set's other runs;
FM answers alone where there is none, the "FM alone" column) and the shipped MARA, not retrained,
reading its own predictor so blended ("mara kind FIELDS"); with ``--hop``, HOP-FM ("hop_fm", the
sweep's ``hop``: HOP on the broad FM), HOP on the network the shipped MARA reads ("hop_mara",
``fm_mara_student``, the teacher network distilled to one step: a stand-in for the planner it
imitated, which sampled that network in four) and each told the kind ("hop_fm kind FIELDS",
"hop_mara kind FIELDS"). The queries of LARA, LARA-FM and LARA-FM told the kind are scored
against the truth as they play
(`ErrorLog`; a query whose prefix starts several runs with different demands has no known truth:
RL runs share their first batches), and their errors given as the σ whose noise errs as much in
the median, their median (bias) and the share of estimates that were "never". Every method is
set against the best classic baseline, LARA-FM and (unless ``--no-mara``) the shipped MARA,
paired, with the standard error of each difference.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import torch

from coreenv.curves import named_task_set
from coreenv_lab.diagnostics import ClairvoyantPredictor, ErrorLog, TruthHOP, TruthLARA
from coreenv_lab.diagnostics.analog import AnalogConfig, KindAnalog, kind_of
from mara_agents.cli.parser import CommandParser, add_arrival_prob, count
from mara_agents.evaluation import completion_rates, paired_difference
from mara_agents.predictors import WLSPredictor, make_predictor
from mara_agents.schedulers import EDF, FIFO, HOP, LARA, Oracle
from mara_agents.schedulers.hop import HOP_TUNED
from mara_agents.schedulers.mara import MARA
from mara_agents.seeds import check_choice_episodes

TASK_SETS = ("id", "rl_ood", "vit_ood")
"""The test runs of the bundled curve banks, whose runs `ClairvoyantPredictor` can look up."""
CLASSIC = ("fifo", "edf", "lara")
ANALOGS = {"id_train": "the ID training runs", "own": "the task set's other runs"}
"""Where `KindAnalog` finds its analogs (``--analogs``)."""
NETWORKS = {"lara_fm": "fm", "hop_fm": "fm", "hop_mara": "fm_mara_student"}
"""The predictor each FM planner's rows read; MARA's rows read the one its checkpoint names."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = CommandParser(prog="value_of_information.py", description=__doc__.splitlines()[0])
    parser.add_argument("--task-sets", nargs="+", default=list(TASK_SETS), choices=TASK_SETS)
    add_arrival_prob(parser, 0.04, old="--load")
    parser.add_argument("--episodes", type=int, default=30, help=">= 2, paired")
    parser.add_argument("--seed", type=int, default=970_000, help="first episode (training seeds)")
    parser.add_argument("--noise", type=float, nargs="*", default=[0.0, 0.1, 0.25, 0.5, 1.0])
    parser.add_argument(
        "--kinds",
        nargs="*",
        default=[],
        metavar="FIELDS",
        help="LARA-FM, MARA (and with --hop both HOPs) told each task's kind, named by these "
        "comma-separated config fields",
    )
    parser.add_argument(
        "--analogs",
        choices=ANALOGS,
        default=None,
        help="where --kinds finds its analogs: the ID training runs, or the task set's other runs",
    )
    parser.add_argument(
        "--no-mara", action="store_true", help="leave out the shipped MARA, told the kinds or not"
    )
    parser.add_argument(
        "--hop",
        action="store_true",
        help="add HOP-FM and HOP on MARA's network, and each told the kinds of --kinds",
    )
    parser.add_argument("--workers", type=count, default=2, help="processes")
    args = parser.parse_args(argv)
    try:
        check_choice_episodes(args.seed, args.episodes)
    except ValueError as e:
        parser.error(str(e))
    if any(not s >= 0 for s in args.noise):
        parser.error(f"--noise values must be >= 0, got {args.noise}.")
    if args.analogs is not None and not args.kinds:
        parser.error("--analogs needs --kinds: it says where the kinds' analogs come from.")
    args.analogs = args.analogs or "id_train"
    if len(set(args.kinds)) < len(args.kinds):
        parser.error(f"--kinds names a kind twice: {args.kinds}.")
    for fields in args.kinds:
        try:
            for task_set in args.task_sets:
                check_kind(fields, analog_bank(args, task_set))
        except ValueError as e:
            parser.error(f"--kinds {fields!r}: {e}")
    return args


def analog_bank(args: argparse.Namespace, task_set: str) -> str:
    """The task set whose runs `KindAnalog` reads analogs from for ``task_set``'s episodes."""
    return task_set if args.analogs == "own" else "id_train"


def check_kind(fields: str, task_set: str) -> None:
    """A ValueError unless ``fields`` names config fields every run of ``task_set`` has."""
    config = AnalogConfig(kind_fields=tuple(fields.split(",")))
    for text in named_task_set(task_set).config:
        kind_of(text, config.kind_fields, task_set)


def play(method: str, task_set: str, args: argparse.Namespace) -> tuple[np.ndarray, str]:
    """One method's completion rates on the task set's episodes, and its estimates' errors.

    For LARA, LARA-FM and LARA-FM told the kind: the σ equivalent to them, their median (bias),
    the share "never" and the share whose truth is unknown; for a row told the kind, the share FM
    answered alone (no analog); for the others, empty cells.
    """
    torch.set_num_threads(1)
    log = analog = None
    planner, _, fields = method.partition(" kind ")
    episodes = named_task_set(task_set)
    mara = MARA.pretrained() if planner == "mara" else None
    predictor = None  # what the row reads: the network it names, blended with the analog if told
    if mara is not None:
        predictor = mara.observation_predictor
    elif planner in NETWORKS:
        predictor = make_predictor(NETWORKS[planner])
    if fields:
        config = AnalogConfig(kind_fields=tuple(fields.split(",")))
        reference = named_task_set(analog_bank(args, task_set))
        predictor = analog = KindAnalog(reference, episodes, predictor, config)
    if planner in ("hop_fm", "hop_mara"):
        scheduler = HOP(predictor, HOP_TUNED)
    elif mara is not None:
        scheduler = mara
        if analog is not None:
            scheduler = MARA(
                mara.policy, analog, quantiles=mara.observation_quantiles, decisions=mara.decisions
            )
    elif planner in ("lara", "lara_fm"):
        log = ErrorLog(
            WLSPredictor() if predictor is None else predictor, ClairvoyantPredictor(episodes)
        )
        scheduler = LARA(predictor=log)
    elif method.startswith("truth "):
        scheduler = TruthLARA(noise=float(method.split()[1]))
    elif method.startswith("hedged "):
        scheduler = TruthHOP(noise=float(method.split()[1]))
    else:
        makers = {"fifo": FIFO, "edf": EDF, "oracle": Oracle}
        scheduler = makers[method]()
    env = {"task_set": task_set, "arrival_prob": args.arrival_prob}
    rates = completion_rates(scheduler, args.episodes, args.seed, **env)
    alone = "" if analog is None else f"{100 * analog.fallbacks / max(analog.queries, 1):.0f}%"
    if log is None:
        return rates, f"| | | | | {alone} |"
    known = log.never + len(log.log_errors)
    return rates, (
        f"| {log.equivalent_noise():.2f} | {log.bias():+.2f} | {100 * log.never / known:.1f}% "
        f"| {100 * log.unknown / (known + log.unknown):.0f}% | {alone} |"
    )


def play_all(units: list[tuple[str, str]], args: argparse.Namespace) -> dict:
    """`play` of every (method, task set), in ``--workers`` processes (1: in this one)."""
    if args.workers == 1:
        return {unit: play(*unit, args) for unit in units}
    with ProcessPoolExecutor(args.workers) as pool:
        runs = {unit: pool.submit(play, *unit, args) for unit in units}
        return {unit: run.result() for unit, run in runs.items()}


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    truth = [f"{name} {s:g}" for s in args.noise for name in ("truth", "hedged")]
    methods = [*CLASSIC, "lara_fm", *(f"lara_fm kind {fields}" for fields in args.kinds)]
    if args.hop:
        for planner in ("hop_fm", "hop_mara"):
            methods += [planner, *(f"{planner} kind {fields}" for fields in args.kinds)]
    methods += [*truth, "oracle"]
    if not args.no_mara:
        methods += ["mara", *(f"mara kind {fields}" for fields in args.kinds)]
    results = play_all([(m, t) for t in args.task_sets for m in methods], args)
    for task_set in args.task_sets:
        rates = {m: results[(m, task_set)][0] for m in methods}
        best = max(CLASSIC, key=lambda m: rates[m].mean())
        headroom = rates["oracle"].mean() - rates[best].mean()
        references = [best, "lara_fm", *(["mara"] if "mara" in rates else [])]
        print(
            f"\n{task_set}, p = {args.arrival_prob}, {args.episodes} episodes "
            f"from seed {args.seed} "
            f"(best classic: {best}{'; analogs: ' + ANALOGS[args.analogs] if args.kinds else ''})"
            "\n"
        )
        header = [
            "method",
            "completion (%)",
            *(f"− {name} (paired ± SE)" for name in references),
            "share of the oracle's headroom",
            "errors as σ",
            "median log error",
            "never",
            "truth unknown",
            "FM alone (no analog)",
        ]
        print("| " + " | ".join(header) + " |\n" + "|---" * len(header) + "|")
        for method in methods:
            differences = [paired_difference(rates[name], rates[method]) for name in references]
            print(
                f"| {method} | {100 * rates[method].mean():.2f} "
                + "".join(f"| {100 * gain:+.2f} ± {100 * se:.2f} " for gain, se in differences)
                + f"| {100 * differences[0][0] / headroom:.0f}% {results[(method, task_set)][1]}"
            )


if __name__ == "__main__":
    main()
