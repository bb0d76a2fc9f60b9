"""Version 1 of the CoRE-Learning environment: the PettingZoo-style entry points.

Bump to ``core_v2`` when anything that can change learning results changes (dynamics,
observations, rewards), so that benchmark numbers stay comparable. The classes live in
`coreenv.shells`; this module only names the version.
"""

from coreenv.shells.aec import env, raw_env
from coreenv.shells.parallel import parallel_env

__all__ = ["env", "parallel_env", "raw_env"]
