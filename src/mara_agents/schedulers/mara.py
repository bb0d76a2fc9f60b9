"""MARA: the MAT allocator acting on observations that carry a predictor's estimates.

``MARA.pretrained("mara")`` is the shipped network (`VARIANTS`): MAT reading the cluster as a set
(nodes with their speeds, slots with where their task last ran) and the flow-matching estimates,
deciding at events, for any cluster. It loads a shipped checkpoint; no network access and no
training.
`MARA.save` writes the format `MARA.pretrained` reads (``mara_agents.training.train_mara`` uses
it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from coreenv import Decisions, EnvConfig, Predictor, SchedulerView, SlotFeature
from coreenv.layout import CLUSTER_FEATURES
from mara_agents.policy.greedy import GreedyMAT
from mara_agents.policy.mat import MAT, MATConfig
from mara_agents.predictors import POLICY_PREDICTORS, make_predictor
from mara_agents.schedulers.base import Scheduler
from mara_agents.schedulers.variants import CHECKPOINTS, VARIANTS, MARAVariant

__all__ = ["CHECKPOINTS", "COMPILED_LANES", "MARA", "MARAVariant", "VARIANTS", "load_policies"]

COMPILED_LANES = 64
"""Most episodes a step of `MARA.act_view` asks the compiled copy about: beyond, `MAT.act`'s
batched torch costs about as much, and one close choice among many lanes sends the whole step to
`MAT.act` anyway (measured: 26 against 20 ms at 256 lanes of four nodes, 6 against 9 at 64)."""


class MARA(Scheduler):
    """Nodes choose slots with a trained `MAT`; the environment gets ``observation_predictor``.

    Args:
        policy: the trained allocator.
        predictor: the predictor whose estimates the policy was trained to read.
        deterministic: take each node's most likely action (evaluation) rather than sampling.
        name: the method's name in results.
        quantiles: the levels of `coreenv.EnvConfig.estimate_quantiles` the policy reads (one
            slot column each; runners build its environments with them).
        decisions: the decision form it plays in (None: every step); runners hold its joint
            action between events of that form.
        kind_fields: the description fields whose category-id columns the policy reads, where
            the episode shows descriptions (`coreenv.EnvConfig.kind_fields`; none by default).
        compiled: act, when deterministic, through the policy's compiled copy (`GreedyMAT`: the
            same actions, far cheaper at few lanes) on steps of at most `COMPILED_LANES`
            episodes; False: always through `MAT.act`.
    """

    def __init__(
        self,
        policy: MAT,
        predictor: Predictor,
        deterministic: bool = True,
        name: str = "mara",
        quantiles: tuple[float, ...] = (),
        decisions: Decisions | None = None,
        kind_fields: tuple[str, ...] = (),
        compiled: bool = True,
    ) -> None:
        cluster = len(CLUSTER_FEATURES) if policy.config.shows_cluster else 0
        expected = len(SlotFeature) + len(quantiles) + cluster + len(kind_fields)
        if policy.config.slot_features != expected:
            raise ValueError(
                f"MARA: the policy reads {policy.config.slot_features} columns per slot; "
                f"{len(quantiles)} quantile levels {tuple(quantiles)}, {cluster} of the cluster "
                f"and the category fields {tuple(kind_fields)} make {expected}."
            )
        self.observation_kind_fields = tuple(kind_fields)
        self.policy = policy.eval()
        self.observation_predictor = predictor
        self.observation_quantiles = tuple(float(q) for q in quantiles)
        self.observation_cluster = policy.config.shows_cluster
        self.deterministic = deterministic
        self.name = name
        self.decisions = decisions
        self.compiled = compiled
        self._greedy: tuple | None = None  # (policy, its parameters, their versions, GreedyMAT)

    @classmethod
    def reading(
        cls,
        policy: MAT,
        predictor: Predictor,
        env: EnvConfig,
        decisions: Decisions | None = None,
    ) -> MARA:
        """A MARA whose policy reads ``env``'s layout (how training builds its policies).

        Its quantile levels and, where the episodes show descriptions, its category fields;
        ``decisions``: the form it plays in (None: every step).
        """
        described = env.information != "prefix"
        return cls(
            policy,
            predictor,
            quantiles=env.estimate_quantiles,
            decisions=decisions,
            kind_fields=env.kind_fields if described else (),
        )

    @classmethod
    def pretrained(
        cls,
        variant: str = "mara",
        path: str | Path | None = None,
        predictors: dict[str, Predictor] | None = None,
    ) -> MARA:
        """A shipped variant (a name in `VARIANTS`), or a checkpoint written by `save`.

        ``predictors``: instances to reuse by predictor name; one the checkpoint names that is
        missing is built and added, so policies loaded with the same dict share it.
        """
        if path is None:
            if variant not in VARIANTS:
                raise ValueError(
                    f"unknown MARA variant {variant!r}; shipped variants: {sorted(VARIANTS)}."
                )
            path = VARIANTS[variant].path
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(
                f"no MARA checkpoint at {path}; train one with `coreenv train-mara`."
            )
        state = torch.load(path, map_location="cpu", weights_only=True)
        policy = MAT(MATConfig(**state["mat_config"]))
        policy.load_state_dict(state["model"])
        quantiles = tuple(state.get("estimate_quantiles", ()))  # absent before package 0.4
        decisions = state.get("decisions")  # absent in older checkpoints: every step
        kind_fields = tuple(state.get("kind_fields", ()))  # absent before the information model
        name = state["predictor"]
        predictors = {} if predictors is None else predictors
        if name not in predictors and name not in POLICY_PREDICTORS:
            raise ValueError(
                f"{path} reads the predictor {name!r}, which is not one of "
                f"{sorted(POLICY_PREDICTORS)}: pass it in predictors={{{name!r}: ...}}."
            )
        if name not in predictors:
            predictors[name] = make_predictor(name)
        return cls(
            policy,
            predictors[name],
            name=variant,
            quantiles=quantiles,
            decisions=None if decisions is None else Decisions(**decisions),
            kind_fields=kind_fields,
        )

    def save(
        self,
        path: str | Path,
        predictor: str,
        shaping_beta: float,
        history: Sequence[dict] = (),
    ) -> None:
        """Write the policy in the format `pretrained` reads (the one writer of that format).

        Args:
            path: the checkpoint file (its folder is created).
            predictor: the name of ``observation_predictor`` (`predictors.POLICY_PREDICTORS`, or
                one a loader passes to `pretrained`).
            shaping_beta: β of the reward the policy was trained on (a record, not read back).
            history: the training history, kept with the weights as a record.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        state = {
            "mat_config": asdict(self.policy.config),
            "model": self.policy.state_dict(),
            "predictor": predictor,
            "estimate_quantiles": list(self.observation_quantiles),
            "decisions": None if self.decisions is None else asdict(self.decisions),
            "kind_fields": list(self.observation_kind_fields),
            "shaping_beta": shaping_beta,
            "history": list(history),
        }
        torch.save(state, path)

    def act_view(self, view: SchedulerView) -> np.ndarray:
        """One decoder pass per node, in node order, masked to a feasible matching.

        Deterministic and ``compiled``, on at most `COMPILED_LANES` episodes, it asks the
        policy's compiled copy (`GreedyMAT`) first: the same actions at a fraction of the cost;
        `MAT.act` decides the steps it leaves open.
        """
        obs, action_mask = view.obs, view.action_mask
        if self.observation_cluster and not view.configs[0].cluster_shown:  # one layout a view
            raise ValueError(
                "MARA: the policy reads the cluster's columns (node speeds, each slot's last "
                "node); build its environment with EnvConfig.node_speeds set (equal nodes: "
                "'uniform', the same episodes), or play it through mara_agents.evaluate or "
                "coreenv sweep, which do."
            )
        try:
            self.policy.config.slots_of(obs.shape[1], obs.shape[-1])
        except ValueError as e:
            raise ValueError(
                f"MARA: {e} It reads the quantile levels {self.observation_quantiles}. "
                "The shipped 'mara' reads sets and plays every cluster."
            ) from None
        occupied = action_mask[:, :-1].astype(bool)  # (E, K)
        if self.deterministic and self.compiled and len(obs) <= COMPILED_LANES:
            actions = self.greedy().act(obs, occupied)
            if actions is not None:
                return actions
        with torch.inference_mode():  # no autograd bookkeeping at all: ~12% less per call
            out = self.policy.act(
                torch.from_numpy(obs),  # (E, M, D)
                torch.from_numpy(occupied),
                deterministic=self.deterministic,
            )
        return out.actions.numpy()

    def greedy(self) -> GreedyMAT:
        """The compiled copy of ``policy`` (`GreedyMAT`), made again once its weights change.

        A change is a new ``policy`` or an in-place update of its parameters (an optimiser step,
        ``load_state_dict``), which bumps their version counters.
        """
        held = self._greedy
        if held is not None and held[0] is self.policy:
            versions = [p._version for p in held[1]]
            if versions == held[2]:
                return held[3]
        parameters = list(self.policy.parameters())
        greedy = GreedyMAT(self.policy)
        self._greedy = (self.policy, parameters, [p._version for p in parameters], greedy)
        return greedy



def load_policies(paths: Sequence[str | Path]) -> list[MARA]:
    """`MARA.pretrained` of each checkpoint file, named by its stem, one predictor per name.

    Sharing the predictor lets every policy reuse the futures the others sampled (the same ones).
    """
    shared: dict[str, Predictor] = {}
    return [MARA.pretrained(Path(path).stem, path=path, predictors=shared) for path in paths]
