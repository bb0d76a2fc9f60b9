"""What an episode holds, drawn whole at reset: which tasks arrive when, their curves and demands.

The only randomness of an episode (`Scenario.draw_episode`, packed into arrays by
`EpisodeDrawer`); the simulator (`coreenv.core`) plays what is drawn here and draws nothing.
"""
