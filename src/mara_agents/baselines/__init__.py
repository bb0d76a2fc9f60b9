"""Reinforcement-learning baselines trained from scratch on the vector forms of the environment.

`maskable_ppo`: sb3-contrib's MaskablePPO over the global state (one controller); `ippo`: one
small actor-critic shared by the nodes, each on its own observation; `sb3_env`: the SB3 vector
form both SB3 learners train on (docs/rl.md).
"""

from mara_agents.baselines.sb3_env import SB3VecEnv

__all__ = ["SB3VecEnv"]
