"""RL training runs (stable-baselines3 on Gymnasium classic control) recorded as loss curves.

The loss of an RL run is ``1 - normalised smoothed return``: the mean return of the last
`SMOOTHING` completed training episodes, scaled to [0, 1] by the environment's return range, and
floored at `FLOOR` so that it stays positive. One "batch" is `STEPS_PER_BATCH` environment steps.
Index 0 is the untrained policy's mean return over `INITIAL_EPISODES` evaluation episodes; until
the first training episode ends, the loss stays at that value.
"""

from __future__ import annotations

import numpy as np

from curvegen.specs import FAMILIES, RunSpec

__all__ = ["RETURN_RANGE", "rl_curve"]

STEPS_PER_BATCH = 32
SMOOTHING = 10
INITIAL_EPISODES = 5
FLOOR = 1e-3
RETURN_RANGE = {"CartPole-v1": (0.0, 500.0), "Acrobot-v1": (-500.0, 0.0)}
"""(worst, best) episode return of each environment."""


def rl_curve(spec: RunSpec) -> np.ndarray:
    """Train ``spec`` for ``batches · STEPS_PER_BATCH`` steps; return its (batches + 1,) curve."""
    import gymnasium as gym
    from stable_baselines3 import A2C, DQN, PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor

    family = FAMILIES[spec.family]
    worst, best = RETURN_RANGE[family.task]

    def loss_of(mean_return: float) -> float:
        return max(1.0 - (mean_return - worst) / (best - worst), FLOOR)

    algorithm = {"ppo": PPO, "a2c": A2C, "dqn": DQN}[family.kind]
    kwargs = dict(spec.hparams)
    if family.kind == "ppo":
        kwargs["batch_size"] = 64
    if family.kind == "dqn":
        kwargs.update(learning_starts=1000, exploration_fraction=0.2, buffer_size=50_000)
    env = Monitor(gym.make(family.task))
    model = algorithm("MlpPolicy", env, seed=spec.seed, device="cpu", verbose=0, **kwargs)

    eval_env = gym.make(family.task)
    eval_env.reset(seed=spec.seed + 1)
    initial, _ = evaluate_policy(
        model, eval_env, n_eval_episodes=INITIAL_EPISODES, deterministic=False
    )
    losses = [loss_of(float(initial))]

    class Recorder(BaseCallback):
        """Every STEPS_PER_BATCH steps, append the loss of the smoothed training return."""

        def _on_step(self) -> bool:
            if self.num_timesteps % STEPS_PER_BATCH == 0:
                returns = env.get_episode_rewards()[-SMOOTHING:]
                losses.append(loss_of(float(np.mean(returns))) if returns else losses[0])
            return True

    model.learn(total_timesteps=spec.batches * STEPS_PER_BATCH, callback=Recorder())
    return np.asarray(losses[: spec.batches + 1], np.float64)
