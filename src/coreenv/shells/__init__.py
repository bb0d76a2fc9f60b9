"""The environments over the simulator (`coreenv.core`), one module per form.

PettingZoo's parallel `CoreEnv` (`parallel`) and its turn-based form (`aec`); Gymnasium's
centralised `CoreGymEnv` (`gym`), the sequential `CoreSequentialEnv` (`sequential`) and the vector
`CoreVectorEnv` (`vector`) and the sequential vector `SequentialVectorEnv` (`sequential_vector`)
over `BatchedCore`, B episodes stepped as arrays (`batched`).
"""

from coreenv.shells.batched import BatchedCore, BatchedObservation, BatchedStep
from coreenv.shells.gym import CoreGymEnv
from coreenv.shells.parallel import CoreEnv
from coreenv.shells.sequential import CoreSequentialEnv
from coreenv.shells.sequential_vector import SequentialVectorEnv
from coreenv.shells.vector import CoreVectorEnv

__all__ = [
    "BatchedCore",
    "BatchedObservation",
    "BatchedStep",
    "CoreEnv",
    "CoreGymEnv",
    "CoreSequentialEnv",
    "CoreVectorEnv",
    "SequentialVectorEnv",
]
