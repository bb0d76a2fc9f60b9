r"""Train MARA's allocator with any of the lab's settings: expert iteration, then RL.

The lab's full command line over `mara_agents.training.train_mara` (``coreenv train-mara`` runs
the shipped recipe with the few options a user of it needs); every option of ``coreenv
train-mara`` before 0.3.0 is here. ``--variant`` is a shipped network (``mara``, ``mara_sets``:
`mara_agents.schedulers.variants.VARIANTS`) or a lab variant (``mara_wls``, ``mara_noshape``,
``mara_history``: `coreenv_lab.variants.LAB_VARIANTS`), whose predictor, β, information model
and checkpoint (in `coreenv_lab.CHECKPOINTS`) are the defaults of ``--predictor``, ``--beta``,
``--information`` and ``--out``:

    python -m coreenv_lab.commands.train_mara --variant mara --minutes 60      # MAT + FM, shaped
    python -m coreenv_lab.commands.train_mara --variant mara_wls --minutes 60  # MAT + WLS
    python -m coreenv_lab.commands.train_mara --variant mara_noshape --minutes 60  # beta = 0

``--predictor`` takes the lab's predictors too (`coreenv_lab.predictors.LAB_PREDICTORS`, such as
``fm_mara_analog``); a run on one of them records its name in the checkpoint, which
`MARA.pretrained` then reads given ``predictors={name: make_predictor(name)}`` (as
`coreenv_lab.methods` does). Every default is the recipe of the shipped checkpoints
(`MARATrainConfig`, `MARA_GROUPED`, `ImitationConfig`).

1. **Expert iteration** (warm start): the MAT learns to copy HOP with the same predictor on
   ``--demo-episodes`` episodes (cross-entropy on the teacher's node actions, teacher-forced),
   then ``--dagger-rounds`` rounds in which the student plays and the teacher labels (DAgger);
   ``--teacher lara`` or ``oracle`` copies another teacher.
2. **RL** for ``--minutes`` of wall time (or ``--max-updates``) with the potential-shaped reward
   (the variant's β: 1, or 0 for ``mara_noshape``; ``--beta`` sets another) and γ = 1.
   ``--algorithm grouped`` (default): ``--workloads`` seeds × ``--group`` whole episodes per
   update, decisions held up to ``--hold`` steps between events, leave-one-out baselines per
   seed, a KL anchor of weight ``--anchor`` to the imitation policy. ``--algorithm ppo``: PPO
   with small steps (`MARA_PPO`) on ``--envs`` environments, whose first ``--critic-warmup``
   updates train only the value function. ``--algorithm held_ppo``: MAT + PPO with a critic over
   ``--episodes`` whole episodes per update and decisions held up to ``--hold`` steps
   (`MARA_SCRATCH`).

``--scratch`` skips the warm start: RL from the random weights of ``--seed``. The paper's recipe
from scratch, 10 M steps (studies/learnability/REPORT.md, *Learning from scratch*):

    python -m coreenv_lab.commands.train_mara --variant mara --scratch --algorithm held_ppo \
        --seed 1 --env-seed 300000 --max-steps 10000000 --minutes 600 --eval-every 6 \
        --work results/scratch/shaped_1 --out results/scratch/shaped_1/mara.pt

Every ``--eval-every`` updates the deterministic policy is evaluated on ``--eval-episodes``
``id_train`` episodes with training seeds (never the evaluation seeds of the sweep), paired with
the imitation policy on the same episodes; the best so far is written to ``--out``.
The whole training state goes to ``--work/checkpoint.pt`` at each evaluation, and a rerun resumes
from it (the wall-time budget counts across runs). ``--device cuda`` runs the network on a GPU.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import torch

from coreenv import CLUSTERS, INFORMATION_MODELS, EnvConfig
from coreenv.curves import TASK_SETS
from coreenv.layout import cluster_columns, slot_width
from coreenv_lab.predictors import LAB_PREDICTORS, make_readable
from coreenv_lab.variants import LAB_VARIANTS
from mara_agents.cli.parser import CommandParser
from mara_agents.policy.mat import ENCODERS
from mara_agents.predictors import POLICY_PREDICTORS
from mara_agents.schedulers.variants import VARIANTS
from mara_agents.training import MARA_PPO, ImitationConfig, MARATrainConfig, train_mara
from mara_agents.training.imitation import TEACHERS
from mara_agents.training.recipe import ALGORITHMS, MARA_GROUPED, MARA_SCRATCH, check_init

RUN = {f.name: f.default for f in dataclasses.fields(MARATrainConfig)}
IMITATION = ImitationConfig()
TAKES = {
    "grouped": ("lr", "clip", "hold", "workloads", "group", "anchor"),
    "ppo": (
        "lr",
        "clip",
        "entropy",
        "gae_lambda",
        "epochs",
        "minibatches",
        "envs",
        "rollout",
        "critic_warmup",
    ),
    "held_ppo": (
        "lr",
        "clip",
        "hold",
        "entropy",
        "gae_lambda",
        "epochs",
        "minibatches",
        "episodes",
        "anneal",
    ),
}
"""The RL-stage options each algorithm reads when given (unset: the algorithm's own default);
all but ``critic_warmup`` (a `MARATrainConfig` field) are fields of the algorithm's config."""
PROG = "python -m coreenv_lab.commands.train_mara"


def stage_options(args: argparse.Namespace) -> dict:
    """The RL-stage options given on the command line, by config field."""
    names = {name for names in TAKES.values() for name in names}
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The options, refusing any the chosen algorithm ignores and a mismatched ``--init``."""
    parser = CommandParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument(
        "--variant",
        choices=sorted({*VARIANTS, *LAB_VARIANTS}),
        default=RUN["variant"],
        help="which MARA to train: a shipped network or a lab variant (its settings the defaults)",
    )
    parser.add_argument("--minutes", type=float, default=RUN["minutes"], help="PPO wall time")
    parser.add_argument(
        "--max-updates", type=int, default=RUN["max_updates"], help="stop after these RL updates"
    )
    parser.add_argument(
        "--max-steps", type=int, default=RUN["max_steps"], help="stop after these env steps"
    )
    parser.add_argument(
        "--algorithm", choices=ALGORITHMS, default=RUN["algorithm"], help="the RL stage"
    )
    parser.add_argument("--lr", type=float, default=None, help="default: the algorithm's")
    parser.add_argument("--clip", type=float, default=None, help="default: the algorithm's")
    parser.add_argument(
        "--workloads", type=int, default=None, help=f"grouped ({MARA_GROUPED.workloads})"
    )
    parser.add_argument("--group", type=int, default=None, help=f"grouped ({MARA_GROUPED.group})")
    parser.add_argument(
        "--hold", type=int, default=None, help="grouped, held_ppo (default: the algorithm's)"
    )
    parser.add_argument(
        "--anchor", type=float, default=None, help=f"grouped ({MARA_GROUPED.anchor})"
    )
    parser.add_argument("--envs", type=int, default=None, help=f"ppo ({MARA_PPO.envs})")
    parser.add_argument("--rollout", type=int, default=None, help=f"ppo ({MARA_PPO.rollout})")
    parser.add_argument(
        "--episodes", type=int, default=None, help=f"held_ppo ({MARA_SCRATCH.episodes})"
    )
    parser.add_argument("--entropy", type=float, default=None, help="ppo, held_ppo")
    parser.add_argument(
        "--anneal",
        type=int,
        default=None,
        help="held_ppo: env steps over which lr and entropy fall to 0 (default 0: constant)",
    )
    parser.add_argument("--gae-lambda", type=float, default=None, help="ppo, held_ppo")
    parser.add_argument(
        "--epochs",
        type=int,
        default=None,
        help=f"passes per update: ppo, held_ppo ({MARA_SCRATCH.epochs})",
    )
    parser.add_argument(
        "--minibatches",
        type=int,
        default=None,
        help=f"minibatches per pass: ppo, held_ppo ({MARA_SCRATCH.minibatches})",
    )
    parser.add_argument("--beta", type=float, default=None, help="override the variant's shaping β")
    parser.add_argument(
        "--critic-warmup",
        type=int,
        default=None,
        help=f"ppo: value-only updates ({RUN['critic_warmup']})",
    )
    parser.add_argument(
        "--teacher", choices=TEACHERS, default=IMITATION.teacher, help="whom imitation copies"
    )
    parser.add_argument(
        "--demo-episodes", type=int, default=IMITATION.episodes, help="teacher's episodes"
    )
    parser.add_argument(
        "--dagger-rounds", type=int, default=IMITATION.dagger_rounds, help="DAgger rounds"
    )
    parser.add_argument(
        "--dagger-episodes",
        type=int,
        default=IMITATION.dagger_episodes,
        help="student's episodes per DAgger round",
    )
    parser.add_argument(
        "--demo-epochs", type=int, default=IMITATION.epochs, help="imitation epochs per round"
    )
    parser.add_argument(
        "--eval-every", type=int, default=RUN["eval_every"], help="updates between evaluations"
    )
    parser.add_argument(
        "--eval-episodes", type=int, default=RUN["eval_episodes"], help="episodes per evaluation"
    )
    parser.add_argument("--device", default=RUN["device"], help="torch device: cpu, cuda, ...")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument(
        "--init", type=Path, default=None, help="start RL from this MARA checkpoint, no imitation"
    )
    parser.add_argument(
        "--scratch", action="store_true", help="start RL from random weights, no imitation"
    )
    parser.add_argument(
        "--quantiles",
        type=float,
        nargs="+",
        default=list(RUN["quantiles"]),
        help="levels of the predictor's quantiles the policy reads (default: none)",
    )
    parser.add_argument(
        "--information",
        choices=INFORMATION_MODELS,
        default=None,
        help="what the training episodes show of a task (EnvConfig.information; default: the "
        "variant's); past 'prefix' the policy reads the category columns too",
    )
    parser.add_argument(
        "--warm-history",
        type=int,
        default=RUN["warm_history"],
        help="with --information history: finished tasks each episode's history starts with",
    )
    parser.add_argument(
        "--symlog",
        action="store_true",
        help="the policy reads sign(x)·log(1 + |x|) of its observations (MATConfig.symlog)",
    )
    parser.add_argument(
        "--encoder",
        choices=ENCODERS,
        default=RUN["mat"].encoder,
        help="how a node token reads the slot table (MATConfig.encoder)",
    )
    parser.add_argument(
        "--nodes",
        type=int,
        default=4,
        help="M of the training episodes, with 2 M slots and the load times M / 4",
    )
    parser.add_argument(
        "--cluster",
        choices=tuple(CLUSTERS),
        default="equal",
        help="the nodes of the training episodes (coreenv.CLUSTERS; past 'equal' the network "
        "reads sets and the cluster's columns)",
    )
    parser.add_argument(
        "--sets",
        action="store_true",
        help="a network that plays any cluster size (MATConfig.sets; the slot encoder); "
        "default: the variant's",
    )
    parser.add_argument(
        "--seed", type=int, default=RUN["seed"], help="initial weights and the RL stage's sampling"
    )
    parser.add_argument(
        "--env-seed", type=int, default=RUN["env_seed"], help="seed of the first RL episode"
    )
    parser.add_argument(
        "--predictor",
        choices=sorted({**POLICY_PREDICTORS, **LAB_PREDICTORS}),
        default=None,
        help="the predictor the policy reads and HOP plans on (default: the variant's)",
    )
    parser.add_argument(
        "--task-set",
        choices=sorted(TASK_SETS),
        default=RUN["task_set"],
        help="task set of the training and selection episodes (corpus_train: every kind)",
    )
    parser.add_argument("--work", type=Path, default=None, help="default results/mara/VARIANT")
    parser.add_argument(
        "--out", type=Path, default=None, help="default: the variant's checkpoint (overwritten)"
    )
    args = parser.parse_args(argv)
    predictor = args.predictor or lab_defaults(args.variant).get("predictor")
    if predictor in LAB_PREDICTORS:
        make_readable(predictor)  # before any config names it
    if args.init is not None and not args.init.is_file():
        parser.error(f"--init {args.init}: no such checkpoint file")
    if args.init is not None and args.scratch:
        parser.error("--init and --scratch are two different starts; give one")
    if args.nodes < 1:
        parser.error(f"--nodes must be an int >= 1, got {args.nodes}")
    ignored = sorted(set(stage_options(args)) - set(TAKES[args.algorithm]))
    if ignored:
        flags = ", ".join("--" + name.replace("_", "-") for name in ignored)
        parser.error(f"--algorithm {args.algorithm} does not read {flags}")
    try:
        config = config_from(args)
        if config.init is not None:
            check_init(config)  # before any work: a checkpoint of another predictor or layout
    except ValueError as e:  # a value no config takes, named by the config's own message
        parser.error(str(e))
    return args


def lab_defaults(variant: str) -> dict:
    """What a lab variant sets (`LAB_VARIANTS`) as `MARATrainConfig` fields; {} for a shipped one.

    A lab variant trains the shipped ``mara`` network's recipe with its predictor, β and
    information model, and writes its own checkpoint.
    """
    if variant not in LAB_VARIANTS:
        return {}
    lab = LAB_VARIANTS[variant]
    fields = {
        "variant": "mara",
        "predictor": lab.predictor,
        "shaping_beta": lab.shaping_beta,
        "out": lab.path,
    }
    if lab.information != VARIANTS["mara"].information:
        fields["information"] = lab.information
    return fields


def config_from(args: argparse.Namespace) -> MARATrainConfig:
    """The run the flags describe; unset paths derive from the variant."""
    given = stage_options(args)
    critic_warmup = given.pop("critic_warmup", RUN["critic_warmup"])
    steps = {name: given if name == args.algorithm else {} for name in ALGORITHMS}
    lab = lab_defaults(args.variant)
    base = VARIANTS[lab.get("variant", args.variant)]
    sets = args.sets or base.sets or args.cluster != "equal"
    information = args.information or lab.get("information")
    shown = EnvConfig(
        information=information or base.information,
        estimate_quantiles=tuple(args.quantiles),
        **CLUSTERS[args.cluster],
    )
    return MARATrainConfig(
        work=args.work or Path("results/mara") / args.variant,
        out=args.out or lab.get("out") or base.path,
        variant=lab.get("variant", args.variant),
        shaping_beta=args.beta if args.beta is not None else lab.get("shaping_beta"),
        predictor=args.predictor or lab.get("predictor"),
        minutes=args.minutes,
        max_updates=args.max_updates,
        algorithm=args.algorithm,
        grouped=dataclasses.replace(MARA_GROUPED, seed=args.seed, **steps["grouped"]),
        ppo=dataclasses.replace(MARA_PPO, seed=args.seed, **steps["ppo"]),
        held=dataclasses.replace(MARA_SCRATCH, seed=args.seed, **steps["held_ppo"]),
        imitation=dataclasses.replace(
            IMITATION,
            teacher=args.teacher,
            episodes=args.demo_episodes,
            dagger_rounds=args.dagger_rounds,
            dagger_episodes=args.dagger_episodes,
            epochs=args.demo_epochs,
        ),
        init=args.init,
        scratch=args.scratch,
        max_steps=args.max_steps,
        seed=args.seed,
        env_seed=args.env_seed,
        task_set=args.task_set,
        quantiles=tuple(args.quantiles),
        information=information,
        warm_history=args.warm_history,
        clusters=(f"{args.nodes}/{2 * args.nodes} {args.cluster}",),
        mat=dataclasses.replace(
            RUN["mat"],
            num_nodes=args.nodes,
            num_slots=2 * args.nodes,
            slot_features=slot_width(shown),
            symlog=args.symlog,
            encoder="slots" if sets else args.encoder,
            sets=sets,
            cluster_column=cluster_columns(shown).start if shown.cluster_shown else -1,
        ),
        critic_warmup=critic_warmup,
        eval_every=args.eval_every,
        eval_episodes=args.eval_episodes,
        device=args.device,
    )


def main(argv: list[str] | None = None) -> None:
    """Train (or resume) the run the options describe and print where its policy went."""
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    run = train_mara(config_from(args))
    print(
        f"done: best completion on ID training episodes {100 * run.best:.1f}%, policy in {run.out}"
    )


if __name__ == "__main__":
    main()
