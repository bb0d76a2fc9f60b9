"""The Multi-Agent Transformer allocator (Wen et al., 2022), written from scratch for CoRE-Learning.

Nodes are the agents, in fixed index order. Top-down:

- `SelfAttention` → `EncodeBlock` → `Encoder`: node tokens (a node's observation: its one-hot id,
  the global features and the slot table) attend to each other; a head gives one value per node.
- `DecodeBlock` → `Decoder`: causal over nodes; node i's input is the action node i − 1 took (a
  start token for node 0); as in MAT, each node's encoding then attends (causally) to the
  embedded actions of the nodes before it. A *pointer head* scores every slot by the scaled dot
  product of the node's decoding and an embedding of the slot's own feature block (idling by a
  linear score of the decoding), so the same weights score every slot — a departure from MAT's
  fixed action head, made because slots are interchangeable.
- `MAT.act` samples node actions autoregressively, masking empty slots and slots an earlier node
  took, so every joint action is a feasible matching; `MAT.score_actions` is the teacher-forced
  pass that gives the same log-probabilities for stored actions in one decoder call.

With ``MATConfig.sets`` no weight depends on M or K, so one network plays any cluster size: a
node token reads the global features and its own speed instead of a one-hot id; an earlier
node's action is embedded by the chosen slot's key instead of a one-hot index; and on a cluster
that shows them, a node scores a slot also by whether its task last trained on that node
(`PairBias`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from coreenv import SlotFeature
from mara_agents.checks import require

__all__ = ["ENCODERS", "MAT", "ActionScores", "MATConfig", "PolicyOutput", "symlog"]

NEG = -1e9  # logit of a masked action
ENCODERS = ("flat", "slots")  # MATConfig.encoder


def symlog(x: torch.Tensor) -> torch.Tensor:
    """``sign(x)·log(1 + |x|)``: about x near 0, logarithmic far out (DreamerV3's input squash)."""
    return torch.sign(x) * torch.log1p(x.abs())


class SelfAttention(nn.Module):
    """Multi-head scaled dot-product attention, optionally causal over the node order."""

    def __init__(self, dim: int, heads: int, causal: bool) -> None:
        super().__init__()
        self.heads, self.causal = heads, causal
        self.query, self.key, self.value = (nn.Linear(dim, dim) for _ in range(3))
        self.out = nn.Linear(dim, dim)

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        """(B, N, dim) each -> (B, N, dim)."""
        b, n, d = query.shape
        h = self.heads

        def split(x: torch.Tensor) -> torch.Tensor:
            return x.view(b, n, h, d // h).transpose(1, 2)  # (B, h, N, d/h)

        q, k, v = split(self.query(query)), split(self.key(key)), split(self.value(value))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)  # (B, h, N, d/h)
        return self.out(out.transpose(1, 2).reshape(b, n, d))


class EncodeBlock(nn.Module):
    """Post-LN transformer block: x = LN(x + Attn(x)); x = LN(x + MLP(x))."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.attention = SelfAttention(dim, heads, causal=False)
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, N, dim) -> (B, N, dim)."""
        x = self.norm1(x + self.attention(x, x, x))
        return self.norm2(x + self.mlp(x))


class SlotPool(nn.Module):
    """Node observations -> node tokens whose slot part is the occupied slots' mean encoding.

    Every slot block is encoded by one shared MLP and the occupied ones are averaged, so the
    token does not depend on which slot a task sits in (`MATConfig.encoder` ``"slots"``), as the
    slot-set baseline's context (`mara_agents.baselines.slot_set`).
    """

    def __init__(self, config: MATConfig) -> None:
        super().__init__()
        self.config = config
        dim = config.dim
        self.slot = nn.Sequential(
            nn.Linear(config.slot_features, dim), nn.GELU(), nn.Linear(dim, dim), nn.GELU()
        )
        self.token = nn.Linear(config.node_features + dim, dim)

    def forward(
        self, obs: torch.Tensor, table: torch.Tensor, occupied: torch.Tensor
    ) -> torch.Tensor:
        """Obs (B, M, obs_dim), its slot table (B, K, F), occupied (B, K) -> tokens (B, M, dim)."""
        encoded = self.slot(table)  # (B, K, dim)
        weights = occupied.to(encoded.dtype)[..., None]
        pooled = (encoded * weights).sum(1) / weights.sum(1).clamp(min=1.0)  # (B, dim)
        pooled = pooled[:, None].expand(-1, obs.shape[1], -1)
        return F.gelu(self.token(torch.cat([node_features(obs, self.config), pooled], dim=-1)))


def node_features(obs: torch.Tensor, config: MATConfig) -> torch.Tensor:
    """(B, M, `MATConfig.node_features`): what a node token reads beside the slots.

    Its one-hot id and the global features (which hold every node's speed on a cluster that
    shows them); with ``sets``, the global features and its own speed, no id.
    """
    m, g = obs.shape[1], config.global_features
    if not config.sets:
        return obs[..., : m + g]
    features = obs[..., m : m + g]
    if not config.shows_cluster:
        return features
    speeds = obs[:, 0, m + g : 2 * m + g]  # (B, M): node i's speed at column i
    return torch.cat([features, speeds[..., None]], dim=-1)


class PairBias(nn.Module):
    """A score each node adds to each slot from the pair: is the task's last node this one, and
    what would resuming it there cost (`coreenv.layout.CLUSTER_FEATURES`)."""

    def __init__(self, column: int) -> None:
        super().__init__()
        self.column = column
        self.weights = nn.Linear(2, 1, bias=False)
        nn.init.zeros_(self.weights.weight)

    def forward(self, raw_table: torch.Tensor, num_nodes: int) -> torch.Tensor:
        """(B, K, F) slot table as observed (not symlog'ed) -> (B, M, K) scores."""
        last = torch.round(raw_table[..., self.column] * num_nodes) - 1  # (B, K), -1: none
        nodes = torch.arange(num_nodes, device=raw_table.device, dtype=last.dtype)
        same = (last[:, None, :] == nodes[None, :, None]).to(raw_table.dtype)  # (B, M, K)
        cost = same * raw_table[:, None, :, self.column + 1]
        return self.weights(torch.stack([same, cost], dim=-1)).squeeze(-1)


class Encoder(nn.Module):
    """Node observations -> representations (B, M, dim) and per-node values (B, M)."""

    def __init__(self, config: MATConfig) -> None:
        super().__init__()
        obs_dim, dim, heads, blocks = config.obs_dim, config.dim, config.heads, config.blocks
        self.pools = config.encoder == "slots"
        self.embed = (
            SlotPool(config)
            if self.pools
            else nn.Sequential(nn.LayerNorm(obs_dim), nn.Linear(obs_dim, dim), nn.GELU())
        )
        self.norm = nn.LayerNorm(dim)
        self.blocks = nn.Sequential(*(EncodeBlock(dim, heads) for _ in range(blocks)))
        self.value = nn.Sequential(
            nn.Linear(dim, dim), nn.GELU(), nn.LayerNorm(dim), nn.Linear(dim, 1)
        )

    def forward(
        self, obs: torch.Tensor, table: torch.Tensor, occupied: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Obs (B, M, obs_dim), its slot table (B, K, F), occupied (B, K) -> (rep, values)."""
        tokens = self.embed(obs, table, occupied) if self.pools else self.embed(obs)
        rep = self.blocks(self.norm(tokens))
        return rep, self.value(rep).squeeze(-1)


class DecodeBlock(nn.Module):
    """Causal self-attention over earlier actions, then each node's encoding attends to them."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.self_attention = SelfAttention(dim, heads, causal=True)
        self.cross_attention = SelfAttention(dim, heads, causal=True)
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(dim), nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, x: torch.Tensor, rep: torch.Tensor) -> torch.Tensor:
        """X (B, M, dim) action embeddings, rep (B, M, dim) encoder output -> (B, M, dim)."""
        x = self.norm1(x + self.self_attention(x, x, x))
        x = self.norm2(rep + self.cross_attention(rep, x, x))  # MAT: the query is the encoding
        return self.norm3(x + self.mlp(x))


class Decoder(nn.Module):
    """Shifted actions + encoder output -> per-node logits over K slots and idle (B, M, K + 1).

    ``slots`` is K, the width of a one-hot action; None (``MATConfig.sets``): an action comes
    already embedded, by the chosen slot's key (`MAT.shifted`).
    """

    def __init__(
        self, slots: int | None, slot_features: int, dim: int, heads: int, blocks: int
    ) -> None:
        super().__init__()
        width = dim if slots is None else slots + 2
        self.action_embed = nn.Sequential(nn.Linear(width, dim, bias=False), nn.GELU())
        self.norm = nn.LayerNorm(dim)
        self.blocks = nn.ModuleList(DecodeBlock(dim, heads) for _ in range(blocks))
        self.query = nn.Sequential(
            nn.Linear(dim, dim), nn.GELU(), nn.LayerNorm(dim), nn.Linear(dim, dim)
        )
        self.slot_key = nn.Sequential(nn.Linear(slot_features, dim), nn.GELU(), nn.Linear(dim, dim))
        self.idle = nn.Linear(dim, 1)
        self.scale = 1.0 / math.sqrt(dim)

    def forward(self, shifted: torch.Tensor, rep: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """Logits (B, M, K + 1) from shifted actions (B, M, K + 2, or B, M, dim embedded) and the
        encoding (B, M, dim).

        ``keys = slot_key(slot_table)`` (B, K, dim) is computed once for all node passes.
        """
        x = self.norm(self.action_embed(shifted))
        for block in self.blocks:
            x = block(x, rep)
        query = self.query(x)  # (B, M, dim)
        slot_logits = torch.einsum("bmd,bkd->bmk", query, keys) * self.scale
        return torch.cat([slot_logits, self.idle(x)], dim=-1)


@dataclass(frozen=True)
class MATConfig:
    """Sizes of the environment it acts in and of the network (MAT's defaults: 1 block, 64 wide).

    The first four must match the environment (`coreenv.EnvConfig` and its observation layout).
    """

    num_nodes: int = 4
    """M: nodes, the agents (one token each, decoded in index order)."""
    num_slots: int = 8
    """K: task slots; a node's action is a slot index, or K to idle."""
    slot_features: int = 9
    """Features of one slot block of the observation."""
    global_features: int = 3
    """Global features of the observation (time, waiting tasks / K, spare nodes / M)."""
    dim: int = 64
    """Width of the tokens and of every layer."""
    heads: int = 1
    """Attention heads; must divide ``dim``."""
    blocks: int = 1
    """Transformer blocks in the encoder and in the decoder each."""
    symlog: bool = False
    """Read every observed feature as ``sign(x)·log(1 + |x|)`` (`symlog`). The remaining-batch
    estimates reach OBS_BOUND (1000: WLS's "never") while the other features lie within about
    ±4, so read raw they dominate the input LayerNorm and the slot keys (docs/mara.md)."""
    encoder: str = "flat"
    """How a node token reads the slot table: ``"flat"``, MAT's, one linear layer over the whole
    observation (a slot's meaning learnt per position); ``"slots"``, the mean of the occupied
    slots' encodings by one shared MLP beside the node id and global features (`SlotPool`)."""
    sets: bool = False
    """Read nodes and slots as sets, so that the network plays any M and K (the module
    docstring; needs ``encoder="slots"``). ``num_nodes`` and ``num_slots`` then record the
    cluster it was trained on, and ``global_features`` is the 3 `coreenv.GLOBAL_FEATURES`."""
    cluster_column: int = -1
    """The slot column of `coreenv.layout.CLUSTER_FEATURES` (`cluster_columns`), where the
    observation shows the cluster (its state then holds M node speeds after the global
    features); -1 where it does not. Only read with ``sets``: a fixed-size network reads the
    speeds among its ``global_features``."""

    def __post_init__(self) -> None:
        require(self, ">= 1", ("num_nodes", "num_slots", "slot_features", "dim", "heads", "blocks"))
        if self.global_features < 0:
            raise ValueError(
                f"MATConfig.global_features must be >= 0, got {self.global_features!r}."
            )
        if self.encoder not in ENCODERS:
            raise ValueError(f"MATConfig.encoder must be one of {ENCODERS}, got {self.encoder!r}.")
        if self.sets and self.encoder != "slots":
            raise ValueError("MATConfig.sets needs encoder='slots' (a flat encoder reads M and K).")
        if not -1 <= self.cluster_column <= self.slot_features - 2:
            raise ValueError(
                f"MATConfig.cluster_column must be -1 or a slot column with one after it (< "
                f"{self.slot_features - 1}), got {self.cluster_column!r}."
            )
        if self.dim % self.heads:
            raise ValueError(
                f"MATConfig.dim ({self.dim}) must be divisible by MATConfig.heads ({self.heads})."
            )

    @property
    def obs_dim(self) -> int:
        """Width of one node's observation vector at ``num_nodes`` and ``num_slots``."""
        return self.observation_width(self.num_nodes, self.num_slots)

    @property
    def shows_cluster(self) -> bool:
        """Whether a ``sets`` network reads the cluster's columns (``cluster_column``)."""
        return self.sets and self.cluster_column >= 0

    @property
    def node_features(self) -> int:
        """Width of what a node token reads beside the slots (`node_features`)."""
        if not self.sets:
            return self.num_nodes + self.global_features
        return self.global_features + int(self.shows_cluster)

    def observation_width(self, num_nodes: int, num_slots: int) -> int:
        """Width of a node's observation at M = ``num_nodes`` and K = ``num_slots``."""
        speeds = num_nodes if self.shows_cluster else 0
        return num_nodes + self.global_features + speeds + num_slots * self.slot_features

    def slots_of(self, num_nodes: int, width: int) -> int:
        """K of node observations ``width`` wide at M = ``num_nodes``; ValueError if none fits.

        A fixed-size network reads its own M and K only; a ``sets`` network any whose slot
        blocks are ``slot_features`` wide.
        """
        head = self.observation_width(num_nodes, 0)
        k, extra = divmod(width - head, self.slot_features)
        fits = k >= 1 and not extra
        if not self.sets:
            fits = (num_nodes, width) == (self.num_nodes, self.obs_dim)
        if not fits:
            kind = "any number of nodes and slots" if self.sets else (
                f"{self.num_nodes} nodes and {self.num_slots} slots only"
            )
            raise ValueError(
                f"the network reads observations of {self.slot_features}-column slot blocks, "
                f"{kind} ({self.obs_dim} features at {self.num_nodes} nodes), got {width} at "
                f"{num_nodes} nodes: it was trained on another layout (num_nodes, num_slots, "
                "EnvConfig.estimate_quantiles, information or the cluster's options)."
            )
        return k


@dataclass
class PolicyOutput:
    """What acting returns, per environment row."""

    actions: torch.Tensor  # (B, M) slot index, K = idle
    log_probs: torch.Tensor  # (B, M)
    values: torch.Tensor  # (B, M)
    masks: torch.Tensor  # (B, M, K + 1) bool: the masks used when sampling (kept for training)


@dataclass
class ActionScores:
    """What the teacher-forced pass returns for given actions, per environment row."""

    log_probs: torch.Tensor  # (B, M) of the given actions under the given masks
    entropy: torch.Tensor  # (B, M) of each node's masked action distribution
    values: torch.Tensor  # (B, M)


class MAT(nn.Module):
    """Encoder over node tokens, autoregressive decoder over nodes; see the module docstring."""

    def __init__(self, config: MATConfig) -> None:
        super().__init__()
        self.config = config
        c = config
        self.encoder = Encoder(c)
        slots = None if c.sets else c.num_slots
        self.decoder = Decoder(slots, c.slot_features, c.dim, c.heads, c.blocks)
        if c.sets:  # an idle node's and the first node's "earlier action"
            self.idle_key = nn.Parameter(torch.zeros(c.dim))
            self.start_key = nn.Parameter(torch.zeros(c.dim))
        self.pair = PairBias(c.cluster_column) if c.shows_cluster else None

    def read(self, obs: torch.Tensor) -> tuple[tuple[torch.Tensor, torch.Tensor], torch.Tensor]:
        """The encoder's output (rep, values) and the slot keys (B, K, dim) of observations."""
        obs, table, occupied = self.inputs(obs)
        return self.encoder(obs, table, occupied), self.decoder.slot_key(table)

    def pair_bias(self, obs: torch.Tensor) -> torch.Tensor | None:
        """(B, M, K + 1) each node's `PairBias` score of each slot (0 for idling), or None
        where the network reads no pair: one per observation, shared by every node's pass."""
        if self.pair is None:
            return None
        return F.pad(self.pair(self.slot_table(obs), obs.shape[1]), (0, 1))

    def decode(
        self,
        actions: torch.Tensor,
        rep: torch.Tensor,
        keys: torch.Tensor,
        bias: torch.Tensor | None,
    ) -> torch.Tensor:
        """(B, M, K + 1) logits of every node given the earlier nodes' ``actions`` (B, M), plus
        the observation's ``bias`` (`pair_bias`)."""
        logits = self.decoder(self.shifted(actions, keys), rep, keys)
        return logits if bias is None else logits + bias

    def inputs(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """What the network reads: the observations, their slot table, which slots are occupied.

        With ``config.symlog`` the first two are ``symlog`` of them; occupancy reads the raw table.
        """
        table = self.slot_table(obs)
        occupied = table[..., int(SlotFeature.OCCUPIED)] > 0.5
        if self.config.symlog:
            obs, table = symlog(obs), symlog(table)
        return obs, table, occupied

    def slot_table(self, obs: torch.Tensor) -> torch.Tensor:
        """The slot blocks of the observation (B, M, obs_dim) -> (B, K, F), shared by all nodes."""
        c, m = self.config, obs.shape[1]
        k = c.slots_of(m, obs.shape[-1])
        start = c.observation_width(m, 0)
        return obs[:, 0, start:].reshape(obs.shape[0], k, c.slot_features)

    def shifted(self, actions: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """(B, M) actions -> the decoder's inputs: a start token, then node i − 1's action.

        (B, M, K + 2) one-hot; with ``sets`` (B, M, dim): the start key, then the key of the
        slot node i − 1 chose (`idle_key` for idling), from ``keys`` (B, K, dim).
        """
        b, m = actions.shape
        if self.config.sets:
            choices = torch.cat([keys, self.idle_key.expand(b, 1, -1)], dim=1)  # (B, K + 1, dim)
            earlier = choices.gather(1, actions[:, :-1, None].expand(-1, -1, keys.shape[-1]))
            return torch.cat([self.start_key.expand(b, 1, -1), earlier], dim=1)
        shifted = torch.zeros(b, m, self.config.num_slots + 2, device=actions.device)
        shifted[:, 0, 0] = 1.0
        if m > 1:
            shifted[:, 1:, 1:] = F.one_hot(actions[:, :-1], self.config.num_slots + 1).float()
        return shifted

    @torch.no_grad()
    def act(
        self,
        obs: torch.Tensor,
        occupied: torch.Tensor,
        deterministic: bool = False,
        generator: torch.Generator | None = None,
    ) -> PolicyOutput:
        """Sample a feasible joint action, node by node.

        Args:
            obs: (B, M, obs_dim) node observations.
            occupied: (B, K) bool, which slots hold a task.
            deterministic: take each node's most likely action instead of sampling.
            generator: the sampling noise.
        """
        b, m, k = obs.shape[0], obs.shape[1], occupied.shape[1]
        (rep, values), keys = self.read(obs)  # keys (B, K, dim)
        bias = self.pair_bias(obs)
        actions = torch.full((b, m), k, dtype=torch.long, device=obs.device)
        log_probs = torch.zeros(b, m, device=obs.device)
        masks = torch.zeros(b, m, k + 1, dtype=torch.bool, device=obs.device)
        available = torch.cat([occupied, torch.ones(b, 1, dtype=torch.bool, device=obs.device)], 1)
        for i in range(m):
            masks[:, i] = available
            if not available[:, :k].any():  # nodes i.. can only idle (probability 1): no pass
                masks[:, i:] = available[:, None]
                break
            logits = self.decode(actions, rep, keys, bias)[:, i]  # (B, K + 1)
            logits = logits.masked_fill(~available, NEG)
            # what torch.distributions.Categorical computes, without its per-call overhead
            normalised = logits - logits.logsumexp(dim=-1, keepdim=True)
            if deterministic:
                choice = logits.argmax(dim=-1)
            else:
                probs = F.softmax(normalised, dim=-1)
                choice = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
            actions[:, i] = choice
            log_probs[:, i] = normalised.gather(-1, choice[:, None]).squeeze(-1)
            taken = choice < k
            available = available.clone()
            available[taken, choice[taken]] = False  # the slot is taken for later nodes
        return PolicyOutput(actions, log_probs, values, masks)

    def score_actions(
        self, obs: torch.Tensor, actions: torch.Tensor, masks: torch.Tensor
    ) -> ActionScores:
        """Teacher-forced pass: log-probabilities, entropies and values of stored actions.

        Args:
            obs: (B, M, obs_dim) node observations.
            actions: (B, M) the actions taken.
            masks: (B, M, K + 1) bool, the masks they were sampled under (`PolicyOutput.masks`).
        """
        log_policy, values = self.log_policy(obs, actions, masks)
        log_probs = log_policy.gather(-1, actions[..., None]).squeeze(-1)
        entropy = -(log_policy.exp() * log_policy).sum(-1)
        return ActionScores(log_probs, entropy, values)

    def log_policy(
        self, obs: torch.Tensor, actions: torch.Tensor, masks: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher-forced: each node's masked log-probabilities (B, M, K + 1) and values (B, M).

        Node i's distribution is conditioned on the given actions of nodes 0 … i − 1; the KL
        anchor of `mara_agents.training.grouped` compares two policies on these.
        """
        (rep, values), keys = self.read(obs)
        bias = self.pair_bias(obs)
        logits = self.decode(actions, rep, keys, bias).masked_fill(~masks, NEG)
        return logits - logits.logsumexp(dim=-1, keepdim=True), values

    def values(self, obs: torch.Tensor) -> torch.Tensor:
        """Per-node values (B, M) of observations (B, M, obs_dim): the encoder's value head."""
        return self.encoder(*self.inputs(obs))[1]
