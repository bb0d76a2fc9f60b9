"""Train MARA's allocator on the ID training runs at p = 0.04: expert iteration, then RL.

    python benchmarks/train_mara.py --variant mara --minutes 60        # MAT + FM, shaped reward
    python benchmarks/train_mara.py --variant mara_wls --minutes 60    # MAT + WLS
    python benchmarks/train_mara.py --variant mara_noshape --minutes 60  # MAT + FM, beta = 0

A command line over `mara_agents.training.train_mara`; every default is the recipe of the shipped
checkpoints (`MARATrainConfig`, `MARA_GROUPED`, `ImitationConfig`).

1. **Expert iteration** (warm start): the MAT learns to copy HOP with the same predictor on
   ``--demo-episodes`` episodes (cross-entropy on the teacher's node actions, teacher-forced),
   then ``--dagger-rounds`` rounds in which the student plays and the teacher labels (DAgger);
   ``--teacher lara`` or ``oracle`` copies another teacher.
2. **RL** for ``--minutes`` of wall time (or ``--max-updates``) with the potential-shaped reward
   (the variant's β: 1, or 0 for ``mara_noshape``) and γ = 1. ``--algorithm grouped`` (default):
   ``--workloads`` seeds × ``--group`` whole episodes per update, decisions held up to
   ``--hold`` steps between events, leave-one-out baselines per seed, a KL anchor of weight
   ``--anchor`` to the imitation policy. ``--algorithm ppo``: package 0.2.0's PPO on ``--envs``
   environments, whose first ``--critic-warmup`` updates train only the value function.

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

from mara_agents.schedulers.mara import VARIANTS
from mara_agents.training import MARA_PPO, ImitationConfig, MARATrainConfig, train_mara
from mara_agents.training.imitation import TEACHERS
from mara_agents.training.recipe import ALGORITHMS, MARA_GROUPED

RUN = {f.name: f.default for f in dataclasses.fields(MARATrainConfig)}
IMITATION = ImitationConfig()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=sorted(VARIANTS), default=RUN["variant"])
    parser.add_argument("--minutes", type=float, default=RUN["minutes"], help="PPO wall time")
    parser.add_argument("--max-updates", type=int, default=RUN["max_updates"])
    parser.add_argument("--algorithm", choices=ALGORITHMS, default=RUN["algorithm"])
    parser.add_argument("--lr", type=float, default=None, help="default: the algorithm's")
    parser.add_argument("--clip", type=float, default=None, help="default: the algorithm's")
    parser.add_argument("--workloads", type=int, default=MARA_GROUPED.workloads, help="grouped")
    parser.add_argument("--group", type=int, default=MARA_GROUPED.group, help="grouped")
    parser.add_argument("--hold", type=int, default=MARA_GROUPED.hold, help="grouped")
    parser.add_argument("--anchor", type=float, default=MARA_GROUPED.anchor, help="grouped")
    parser.add_argument("--envs", type=int, default=MARA_PPO.envs, help="ppo")
    parser.add_argument("--rollout", type=int, default=MARA_PPO.rollout, help="ppo")
    parser.add_argument("--entropy", type=float, default=MARA_PPO.entropy, help="ppo")
    parser.add_argument("--gae-lambda", type=float, default=MARA_PPO.gae_lambda, help="ppo")
    parser.add_argument("--beta", type=float, default=None, help="override the variant's shaping β")
    parser.add_argument(
        "--critic-warmup", type=int, default=RUN["critic_warmup"], help="ppo: value-only updates"
    )
    parser.add_argument("--teacher", choices=TEACHERS, default=IMITATION.teacher)
    parser.add_argument("--demo-episodes", type=int, default=IMITATION.episodes)
    parser.add_argument("--dagger-rounds", type=int, default=IMITATION.dagger_rounds)
    parser.add_argument("--dagger-episodes", type=int, default=IMITATION.dagger_episodes)
    parser.add_argument("--demo-epochs", type=int, default=IMITATION.epochs)
    parser.add_argument(
        "--eval-every", type=int, default=RUN["eval_every"], help="updates between evaluations"
    )
    parser.add_argument("--eval-episodes", type=int, default=RUN["eval_episodes"])
    parser.add_argument("--device", default=RUN["device"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--init", type=Path, default=None, help="start RL from this MARA checkpoint, no imitation"
    )
    parser.add_argument("--work", type=Path, default=None, help="default results/mara/VARIANT")
    parser.add_argument("--out", type=Path, default=None, help="default: the shipped checkpoint")
    args = parser.parse_args(argv)
    if args.init is not None and not args.init.is_file():
        parser.error(f"--init {args.init}: no such checkpoint file")
    return args


def config_from(args: argparse.Namespace) -> MARATrainConfig:
    """The run the flags describe; unset paths derive from the variant."""
    given = {k: v for k, v in (("lr", args.lr), ("clip", args.clip)) if v is not None}
    steps = {name: given if name == args.algorithm else {} for name in ALGORITHMS}
    return MARATrainConfig(
        work=args.work or Path("results/mara") / args.variant,
        out=args.out or VARIANTS[args.variant].path,
        variant=args.variant,
        shaping_beta=args.beta,
        minutes=args.minutes,
        max_updates=args.max_updates,
        algorithm=args.algorithm,
        grouped=dataclasses.replace(
            MARA_GROUPED,
            workloads=args.workloads,
            group=args.group,
            hold=args.hold,
            anchor=args.anchor,
            **steps["grouped"],
        ),
        ppo=dataclasses.replace(
            MARA_PPO,
            envs=args.envs,
            rollout=args.rollout,
            entropy=args.entropy,
            gae_lambda=args.gae_lambda,
            **steps["ppo"],
        ),
        imitation=dataclasses.replace(
            IMITATION,
            teacher=args.teacher,
            episodes=args.demo_episodes,
            dagger_rounds=args.dagger_rounds,
            dagger_episodes=args.dagger_episodes,
            epochs=args.demo_epochs,
        ),
        init=args.init,
        critic_warmup=args.critic_warmup,
        eval_every=args.eval_every,
        eval_episodes=args.eval_episodes,
        device=args.device,
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    run = train_mara(config_from(args))
    print(
        f"done: best completion on ID training episodes {100 * run.best:.1f}%, policy in {run.out}"
    )


if __name__ == "__main__":
    main()
