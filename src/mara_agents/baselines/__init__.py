"""The shipped RL baseline as a scheduler: `maskable_ppo` plays sb3-contrib models, `slot_set` is
their network (docs/rl.md). How they are trained: `mara_agents.training.maskable_ppo`."""

__all__: list[str] = []
