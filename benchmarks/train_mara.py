"""Train MARA's allocator on the ID training runs at p = 0.04: imitation warm start, then PPO.

    python benchmarks/train_mara.py --variant mara --minutes 60        # MAT + FM, shaped reward
    python benchmarks/train_mara.py --variant mara_wls --minutes 60    # MAT + WLS
    python benchmarks/train_mara.py --variant mara_noshape --minutes 60  # MAT + FM, beta = 0

1. **Imitation** (warm start): the MAT learns to copy LARA with the same predictor on
   ``--demo-episodes`` episodes (cross-entropy on the teacher's node actions, teacher-forced);
   ``--teacher oracle`` copies the clairvoyant oracle instead, ``--dagger-rounds`` adds rounds in
   which the student plays and the teacher labels (DAgger).
2. **PPO** for ``--minutes`` of wall time (or ``--max-updates``) on ``--envs`` environments with
   the potential-shaped reward (β = 1; 0 for ``mara_noshape``) and γ = 1; the first
   ``--critic-warmup`` updates train only the value function.

Every ``--eval-every`` updates the deterministic policy is evaluated on ``id_train`` episodes with
training seeds (never the evaluation seeds of the sweep); the best so far is written to ``--out``.
The whole training state goes to ``--work/checkpoint.pt`` at each evaluation, and a rerun resumes
from it (the wall-time budget counts across runs). ``--device cuda`` runs the network on a GPU.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from coreenv import CoreEnv
from coreenv.curves import named_task_set
from mara_agents import evaluate
from mara_agents.policy import MAT, MATConfig
from mara_agents.predictors import make_predictor
from mara_agents.schedulers import LARA, Oracle
from mara_agents.schedulers.mara import CHECKPOINTS, MARA, VARIANTS
from mara_agents.training import PPOConfig, PPOTrainer, VecCoreEnv

ENV = dict(task_set="id_train", arrival_prob=0.04)
BETA = {"mara": 1.0, "mara_wls": 1.0, "mara_noshape": 0.0}
DEMO_SEED, PPO_SEED, EVAL_SEED = 100_000, 200_000, 900_000  # all training seeds (< 1e6)


def warm_predictor(kind: str):
    """The variant's predictor; FM gets every ID-training prefix a task can have, sampled once."""
    predictor = make_predictor(kind)
    if kind == "fm":
        bank = named_task_set("id_train")
        prefixes = [bank.curve(i).losses[: n + 1] for i in range(len(bank)) for n in range(10, 361)]
        start = time.perf_counter()
        predictor.warm(prefixes)
        print(
            f"sampled the futures of {len(prefixes)} prefixes in "
            f"{time.perf_counter() - start:.0f} s"
        )
    return predictor


def make_teacher(name: str, predictor, env: CoreEnv):
    """LARA with the variant's predictor (W_min exploration), or the clairvoyant oracle."""
    if name == "oracle":
        return Oracle()
    return LARA(predictor=predictor, explore=env.config.min_prefix)


def demonstrations(
    predictor,
    teacher: str,
    episodes: int,
    seed: int,
    config: MATConfig,
    student: MARA | None = None,
) -> tuple[torch.Tensor, ...]:
    """(obs, masks, actions): the teacher's node actions on ID training episodes.

    The teacher plays, unless ``student`` is given: then the student plays and the teacher only
    labels the states the student visits (a DAgger round, so the student learns to recover from
    its own mistakes).
    """
    env = CoreEnv(predictor=predictor, **ENV)
    expert = make_teacher(teacher, predictor, env)
    obs, masks, actions = [], [], []
    for episode in range(episodes):
        observations, infos = env.reset(seed=seed + episode)
        for scheduler in (expert, student):
            if scheduler is not None:
                scheduler.reset(env)
        while env.agents:
            chosen = expert.act(observations, infos)
            row = np.array([chosen[a] for a in env.agents])
            mask = observations[env.agents[0]]["action_mask"].astype(bool).copy()
            node_masks = []
            for a in row:  # the masks MAT would have used, given the earlier nodes' choices
                node_masks.append(mask.copy())
                if a < config.num_slots:
                    mask[a] = False
            obs.append(np.stack([observations[a]["observation"] for a in env.agents]))
            masks.append(np.stack(node_masks))
            actions.append(row)
            played = chosen if student is None else student.act(observations, infos)
            observations, _, _, _, infos = env.step(played)
    return (
        torch.from_numpy(np.stack(obs)),
        torch.from_numpy(np.stack(masks)),
        torch.from_numpy(np.stack(actions)).long(),
    )


def warm_start(model: MAT, predictor, args: argparse.Namespace) -> list[dict]:
    """Imitation of the teacher, then ``--dagger-rounds`` rounds of DAgger; returns the history."""
    demos = demonstrations(predictor, args.teacher, args.demo_episodes, DEMO_SEED, model.config)
    history = []
    for round_ in range(args.dagger_rounds + 1):
        start = time.perf_counter()
        if round_:
            student = MARA(model.cpu(), predictor)
            seed = DEMO_SEED + 10_000 * round_
            more = demonstrations(
                predictor, args.teacher, args.dagger_episodes, seed, model.config, student
            )
            demos = tuple(torch.cat(pair) for pair in zip(demos, more))
        model.to(args.device).train()
        loss = imitate(model, demos, args.demo_epochs, args.device)
        rate = score(model, predictor, args.eval_episodes)
        history.append(
            {
                "phase": "imitation",
                "teacher": args.teacher,
                "round": round_,
                "samples": len(demos[0]),
                "loss": loss,
                "eval": rate,
            }
        )
        print(
            f"imitation of {args.teacher}, round {round_}: {len(demos[0])} steps, loss {loss:.3f}, "
            f"completion {100 * rate:.1f}% ({(time.perf_counter() - start) / 60:.1f} min)",
            flush=True,
        )
    model.to(args.device).train()
    return history


def imitate(model: MAT, demos: tuple[torch.Tensor, ...], epochs: int, device: str) -> float:
    """Cross-entropy on the teacher's actions; returns the last epoch's mean loss."""
    obs, masks, actions = (t.to(device) for t in demos)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    generator = torch.Generator(device=device).manual_seed(0)
    loss_sum = 0.0
    for _ in range(epochs):
        order = torch.randperm(len(obs), generator=generator, device=device)
        loss_sum, batches = 0.0, 0
        for start in range(0, len(obs), 512):
            rows = order[start : start + 512]
            log_probs, _, _ = model.evaluate(obs[rows], actions[rows], masks[rows])
            loss = -log_probs.mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum, batches = loss_sum + loss.item(), batches + 1
        loss_sum /= batches
    return loss_sum


def score(model: MAT, predictor, episodes: int) -> float:
    """Completion rate of the deterministic policy on ID training runs (training seeds)."""
    model.eval()
    result = evaluate(MARA(model.cpu(), predictor), episodes, EVAL_SEED, **ENV)
    return result["completion_rate"]


def save_policy(model: MAT, kind: str, beta: float, path: Path, history: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(
        {
            "mat_config": asdict(model.config),
            "model": model.state_dict(),
            "predictor": kind,
            "shaping_beta": beta,
            "history": history,
        },
        path,
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=sorted(VARIANTS), default="mara")
    parser.add_argument("--minutes", type=float, default=60.0, help="PPO wall-time budget")
    parser.add_argument("--max-updates", type=int, default=None)
    parser.add_argument("--envs", type=int, default=32)
    parser.add_argument("--rollout", type=int, default=128)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--clip", type=float, default=0.1)
    parser.add_argument("--entropy", type=float, default=0.0)
    parser.add_argument("--gae-lambda", type=float, default=0.95)
    parser.add_argument("--beta", type=float, default=None, help="override the variant's shaping β")
    parser.add_argument("--critic-warmup", type=int, default=20, help="value-only updates first")
    parser.add_argument("--teacher", choices=["lara", "oracle"], default="lara")
    parser.add_argument("--demo-episodes", type=int, default=60)
    parser.add_argument("--dagger-rounds", type=int, default=0)
    parser.add_argument("--dagger-episodes", type=int, default=20)
    parser.add_argument("--demo-epochs", type=int, default=8)
    parser.add_argument("--eval-every", type=int, default=10, help="updates between evaluations")
    parser.add_argument("--eval-episodes", type=int, default=20)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--work", type=Path, default=None, help="default results/mara/VARIANT")
    parser.add_argument("--out", type=Path, default=None, help="default: the shipped checkpoint")
    args = parser.parse_args(argv)
    args.work = args.work or Path("results/mara") / args.variant
    args.out = args.out or CHECKPOINTS / f"{args.variant}.pt"
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    kind = VARIANTS[args.variant]
    beta = BETA[args.variant] if args.beta is None else args.beta
    predictor = warm_predictor(kind)
    model = MAT(MATConfig())
    envs = VecCoreEnv(args.envs, PPO_SEED, predictor, shaping_beta=beta, **ENV)
    config = PPOConfig(
        envs=args.envs,
        rollout=args.rollout,
        lr=args.lr,
        clip=args.clip,
        entropy=args.entropy,
        gae_lambda=args.gae_lambda,
    )
    trainer = PPOTrainer(model, envs, config, args.device)
    checkpoint = args.work / "checkpoint.pt"
    if checkpoint.exists():
        state = torch.load(checkpoint, map_location=args.device, weights_only=False)
        trainer.load_state_dict(state["trainer"])
        history, best, spent = state["history"], state["best"], state["minutes"]
        print(f"resumed from {checkpoint}: update {trainer.updates}, {spent:.1f} min spent")
    else:
        history = warm_start(model, predictor, args)
        best = history[-1]["eval"]
        save_policy(model, kind, beta, args.out, history)
        spent = 0.0
    args.work.mkdir(parents=True, exist_ok=True)

    began = time.perf_counter() - 60 * spent
    recent: list[float] = []
    while (time.perf_counter() - began) / 60 < args.minutes and (
        args.max_updates is None or trainer.updates < args.max_updates
    ):
        stats = trainer.update(
            trainer.collect(), train_policy=trainer.updates >= args.critic_warmup
        )
        recent += [m["completion_rate"] for m in trainer.envs.take_finished()]
        if trainer.updates % 5 == 0:
            print(
                f"update {trainer.updates}  steps {trainer.env_steps}  "
                f"train completion {100 * np.mean(recent[-64:] or [np.nan]):.1f}%  "
                f"entropy {stats['entropy']:.3f}  value {stats['value']:.3f}  "
                f"({(time.perf_counter() - began) / 60:.1f} min)",
                flush=True,
            )
        if trainer.updates % args.eval_every == 0:
            rate = score(model, predictor, args.eval_episodes)
            model.to(args.device).train()
            history.append(
                {
                    "phase": "ppo",
                    "update": trainer.updates,
                    "steps": trainer.env_steps,
                    "eval": rate,
                    **stats,
                }
            )
            if rate > best:
                best = rate
                save_policy(model, kind, beta, args.out, history)
            print(f"  eval {100 * rate:.1f}% (best {100 * best:.1f}%)", flush=True)
            torch.save(
                {
                    "trainer": trainer.state_dict(),
                    "history": history,
                    "best": best,
                    "minutes": (time.perf_counter() - began) / 60,
                },
                checkpoint,
            )
    (args.work / "history.json").write_text(json.dumps(history, indent=1))
    print(f"done: best completion on ID training episodes {100 * best:.1f}%, policy in {args.out}")


if __name__ == "__main__":
    main()
