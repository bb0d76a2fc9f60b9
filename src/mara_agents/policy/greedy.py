"""MAT's deterministic action at few lanes: the network compiled in float64, checked per choice.

`MAT.act` pays torch's per-operation cost some 250 times a step (the encoder, then one decoder
pass over every node position per node), which is most of a step when few episodes run.
`GreedyMAT` computes the same network from the same weights in one compiled call (the engine's
`coreenv.core.engine.compiled`), in float64, with each node's decoder pass computing only its own
position (the decoder is causal over nodes: the keys and values of the positions before it are
kept), and takes each node's most likely action. A network that reads sets is compiled too, for
any number of nodes and slots, with its slot-key action embedding and its `PairBias`.

Its arithmetic is not torch's float32, so its logits differ from `MAT.act`'s in the last bits:
the lead of a node's best action over its second moved by at most 3.0e-6 of the largest logit
(in magnitude, and at least 1) of that choice, over 150,624 choices of the shipped MARA (36
episodes: three task sets, three loads). A choice is certain where the best available action's
logit leads the next one's by at least ``tolerance`` times that scale (`TOLERANCE`, 33 times the
largest move seen); where some choice leads by less, `GreedyMAT.act` answers None and the caller
asks `MAT.act` (for about one episode-step in 140). The actions it returns are therefore those of
``MAT.act(deterministic=True)``.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from coreenv import SlotFeature
from coreenv.core import compiled
from mara_agents.policy.mat import MAT, node_features

__all__ = ["TOLERANCE", "GreedyMAT"]

TOLERANCE = 1e-4
"""Least lead of a chosen action's logit over the next available one's for `GreedyMAT` to answer,
as a share of the largest available logit's magnitude (at least 1)."""
EPS = 1e-5  # nn.LayerNorm's default, the one every MAT norm uses
INV_SQRT2 = 1.0 / math.sqrt(2.0)


def _tensor(tensor: torch.Tensor) -> torch.Tensor:
    """A float64 copy on the CPU, out of autograd (the policy may be training elsewhere)."""
    return tensor.detach().cpu().double()


def _array(tensor: torch.Tensor) -> np.ndarray:
    return np.ascontiguousarray(_tensor(tensor).numpy())


def _linear(layer: torch.nn.Linear) -> tuple[np.ndarray, np.ndarray]:
    """(in, out) weight and (out,) bias of a torch linear layer, float64."""
    return _array(layer.weight.T), _array(layer.bias)


def _norm(layer: torch.nn.LayerNorm) -> np.ndarray:
    """(2, dim): scale and shift of a torch layer norm, float64."""
    return np.stack([_array(layer.weight), _array(layer.bias)])


class GreedyMAT:
    """``MAT.act(obs, occupied, deterministic=True).actions``, compiled; None if a choice is close.

    Args:
        policy: the trained MAT; its weights are copied (later training does not reach here).
        tolerance: least lead of each chosen action's logit for the answer to stand (`TOLERANCE`).
    """

    def __init__(self, policy: MAT, tolerance: float = TOLERANCE) -> None:
        self.config = c = policy.config
        self.tolerance = tolerance
        encoder, decoder = policy.encoder, policy.decoder
        square: list[tuple[np.ndarray, np.ndarray]] = []  # (dim, dim) layers, in kernel order
        norms = [_norm(encoder.norm)]
        for block in encoder.blocks:
            a = block.attention
            square += [_linear(layer) for layer in (a.query, a.key, a.value, a.out)]
            square += [_linear(block.mlp[0]), _linear(block.mlp[2])]
            norms += [_norm(block.norm1), _norm(block.norm2)]
        square.append(_linear(decoder.slot_key[2]))
        for block in decoder.blocks:
            for a in (block.self_attention, block.cross_attention):
                square += [_linear(layer) for layer in (a.query, a.key, a.value, a.out)]
            square += [_linear(block.mlp[0]), _linear(block.mlp[2])]
            norms += [_norm(block.norm1), _norm(block.norm2), _norm(block.norm3)]
        square += [_linear(decoder.query[0]), _linear(decoder.query[3])]
        norms.append(_norm(decoder.query[2]))
        # first: the layer that reads the observation (the slot MLP's first, or the flat embed)
        if c.encoder == "slots":
            pool = encoder.embed
            square.append(_linear(pool.slot[2]))
            first, token = _linear(pool.slot[0]), _linear(pool.token)
            embed_norm = np.zeros((2, 0))
        else:
            embed_norm = _norm(encoder.embed[0])
            first = token = _linear(encoder.embed[1])
        self.square = np.stack([w for w, _ in square])  # (S, dim, dim)
        self.square_bias = np.stack([b for _, b in square])  # (S, dim)
        self.norms = np.stack(norms)  # (N, 2, dim)
        self.embed_norm = embed_norm
        self.first, self.token = first, token
        self.slot_key = _linear(decoder.slot_key[0])
        # the decoder's input: one-hot for one cluster size (the start token, then 1 + the previous
        # node's action), so its embedding and first norm are a table of K + 2 rows; with sets,
        # the start key, the chosen slot's key or the idle key, embedded in the kernel
        embed = _tensor(decoder.action_embed[0].weight).T  # (in, dim)
        norm = decoder.norm
        self.action_norm = _norm(norm)
        self.action_weight = np.ascontiguousarray(embed.numpy())
        if c.sets:
            rows = torch.stack([_tensor(policy.start_key), _tensor(policy.idle_key)]) @ embed
        else:
            rows = embed
        self.inputs = _array(
            torch.nn.functional.layer_norm(
                torch.nn.functional.gelu(rows),
                (c.dim,),
                _tensor(norm.weight),
                _tensor(norm.bias),
                EPS,
            )
        )  # (K + 2, dim); with sets (2, dim): the start and the idle inputs
        pair = policy.pair
        self.pair = np.zeros(2) if pair is None else _array(pair.weights.weight[0])
        self.pair_column = -1 if pair is None else pair.column
        self.idle = (_array(decoder.idle.weight[0]), float(decoder.idle.bias.detach()[0]))
        self.scale = decoder.scale

    def act(self, obs: np.ndarray, occupied: np.ndarray) -> np.ndarray | None:
        """(B, M) int64 actions (K: idle) of observations (B, M, obs_dim) and occupancy (B, K).

        None where some node's choice leads the next available action by less than
        ``tolerance`` times the largest available logit's magnitude (at least 1): `MAT.act`
        decides those.
        """
        c = self.config
        if obs.ndim != 3:
            raise ValueError(f"GreedyMAT: obs must be (B, M, width), got {obs.shape}.")
        m = obs.shape[1]
        k = c.slots_of(m, obs.shape[2])  # names the layout it reads where it does not fit
        if occupied.shape != (obs.shape[0], k):
            raise ValueError(
                f"GreedyMAT: occupied must be ({obs.shape[0]}, {k}), got {occupied.shape}."
            )
        obs = np.ascontiguousarray(obs, np.float64)
        features = node_features(torch.from_numpy(obs), c).numpy()  # what a token reads
        actions = np.full((obs.shape[0], m), k, np.int64)
        certain = _greedy_actions(
            obs,
            np.ascontiguousarray(features.reshape(-1, features.shape[-1])),
            np.ascontiguousarray(occupied, np.bool_),
            actions,
            c.observation_width(m, 0),
            c.slot_features,
            int(SlotFeature.OCCUPIED),
            c.heads,
            c.blocks,
            c.symlog,
            c.encoder == "slots",
            self.embed_norm,
            self.first[0],
            self.first[1],
            self.token[0],
            self.token[1],
            self.square,
            self.square_bias,
            self.norms,
            self.slot_key[0],
            self.slot_key[1],
            self.inputs,
            c.sets,
            self.action_weight,
            self.action_norm,
            self.pair,
            self.pair_column,
            self.idle[0],
            self.idle[1],
            self.scale,
            self.tolerance,
        )
        return actions if certain else None


@compiled
def _affine(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """(N, in) @ (in, out) + (out,)."""
    out = np.dot(x, weight)
    for r in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[r, j] += bias[j]
    return out


@compiled
def _gelu(x: np.ndarray) -> np.ndarray:
    """The exact (erf) GELU, torch's default, in place; returns ``x``."""
    for r in range(x.shape[0]):
        for j in range(x.shape[1]):
            v = x[r, j]
            x[r, j] = 0.5 * v * (1.0 + math.erf(v * INV_SQRT2))
    return x


@compiled
def _layer_norm(x: np.ndarray, norm: np.ndarray) -> np.ndarray:
    """Layer norm of each row of ``x`` (N, dim) with ``norm`` (2, dim): scale, shift; new array."""
    out = np.empty_like(x)
    width = x.shape[1]
    for r in range(x.shape[0]):
        mean = 0.0
        for j in range(width):
            mean += x[r, j]
        mean /= width
        var = 0.0
        for j in range(width):
            var += (x[r, j] - mean) ** 2
        inv = 1.0 / math.sqrt(var / width + EPS)
        for j in range(width):
            out[r, j] = (x[r, j] - mean) * inv * norm[0, j] + norm[1, j]
    return out


@compiled
def _attend(queries: np.ndarray, keys: np.ndarray, values: np.ndarray, heads: int) -> np.ndarray:
    """Each query (N, dim) reads every key and value (L, dim), per head; (N, dim), unprojected."""
    n, dim = queries.shape
    width = dim // heads
    scale = 1.0 / math.sqrt(width)
    out = np.zeros((n, dim))
    weights = np.empty(keys.shape[0])
    for h in range(heads):
        lo = h * width
        for q in range(n):
            top = -np.inf
            for k in range(keys.shape[0]):
                s = 0.0
                for j in range(lo, lo + width):
                    s += queries[q, j] * keys[k, j]
                weights[k] = s * scale
                top = max(top, weights[k])
            total = 0.0
            for k in range(keys.shape[0]):
                weights[k] = math.exp(weights[k] - top)
                total += weights[k]
            for k in range(keys.shape[0]):
                w = weights[k] / total
                for j in range(lo, lo + width):
                    out[q, j] += w * values[k, j]
    return out


@compiled
def _symlog(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.log1p(np.abs(x))


@compiled
def _greedy_actions(
    obs: np.ndarray,
    features: np.ndarray,
    occupied: np.ndarray,
    actions: np.ndarray,
    head: int,
    slot_features: int,
    occupied_column: int,
    heads: int,
    blocks: int,
    symlog: bool,
    pools: bool,
    embed_norm: np.ndarray,
    first_weight: np.ndarray,
    first_bias: np.ndarray,
    token_weight: np.ndarray,
    token_bias: np.ndarray,
    square: np.ndarray,
    square_bias: np.ndarray,
    norms: np.ndarray,
    key_weight: np.ndarray,
    key_bias: np.ndarray,
    inputs: np.ndarray,
    sets: bool,
    action_weight: np.ndarray,
    action_norm: np.ndarray,
    pair: np.ndarray,
    pair_column: int,
    idle_weight: np.ndarray,
    idle_bias: float,
    scale: float,
    tolerance: float,
) -> bool:
    """Fill ``actions`` (B, M) as `GreedyMAT.act` describes; False where a choice was close.

    ``head`` is where the slot table starts in a node's observation, ``features`` (B·M, F) what
    each node token reads beside the slots. The layer order of ``square`` and ``norms`` is
    `GreedyMAT.__init__`'s.
    """
    b, m = actions.shape
    k = occupied.shape[1]
    dim = square.shape[1]
    raw = obs[:, 0, head:].copy().reshape(b * k, slot_features)  # (B·K, F)
    table = raw
    filled = np.empty((b, k))
    for r in range(b):
        for s in range(k):
            filled[r, s] = 1.0 if table[r * k + s, occupied_column] > 0.5 else 0.0
    flat = obs.reshape(b * m, obs.shape[2])
    if symlog:
        flat, table, features = _symlog(flat), _symlog(table), _symlog(features)
    # -- the encoder: node tokens (B·M, dim), then its blocks ----------------------------------
    key_at = 6 * blocks  # the square layers: the encoder's blocks, the slot keys' second layer,
    decoder_at = key_at + 1  # the decoder's blocks, the query head, the slot pool's second layer
    query_at = decoder_at + 10 * blocks
    if pools:
        encoded = _gelu(_affine(table, first_weight, first_bias))
        encoded = _gelu(_affine(encoded, square[query_at + 2], square_bias[query_at + 2]))
        width = features.shape[1]
        tokens_in = np.empty((b * m, width + dim))
        for r in range(b):
            pooled = np.zeros(dim)
            total = 0.0
            for s in range(k):
                pooled += encoded[r * k + s] * filled[r, s]
                total += filled[r, s]
            pooled /= max(total, 1.0)
            for i in range(m):
                tokens_in[r * m + i, :width] = features[r * m + i]
                tokens_in[r * m + i, width:] = pooled
        tokens = _gelu(_affine(tokens_in, token_weight, token_bias))
    else:
        tokens = _gelu(_affine(_layer_norm(flat, embed_norm), first_weight, first_bias))
    x = _layer_norm(tokens, norms[0])
    for layer in range(blocks):
        s, n = 6 * layer, 1 + 2 * layer
        q = _affine(x, square[s], square_bias[s])
        kk = _affine(x, square[s + 1], square_bias[s + 1])
        v = _affine(x, square[s + 2], square_bias[s + 2])
        attended = np.empty((b * m, dim))
        for r in range(b):
            rows = slice(r * m, (r + 1) * m)
            attended[rows] = _attend(q[rows], kk[rows], v[rows], heads)
        x = _layer_norm(x + _affine(attended, square[s + 3], square_bias[s + 3]), norms[n])
        hidden = _gelu(_affine(x, square[s + 4], square_bias[s + 4]))
        x = _layer_norm(x + _affine(hidden, square[s + 5], square_bias[s + 5]), norms[n + 1])
    rep = x  # (B·M, dim)
    # -- the slot keys (B·K, dim) ---------------------------------------------------------------
    keys = _affine(_gelu(_affine(table, key_weight, key_bias)), square[key_at], square_bias[key_at])
    chosen = np.empty((0, dim))
    if sets:  # an earlier node's action enters as the chosen slot's key, embedded
        chosen = _layer_norm(_gelu(np.dot(keys, action_weight)), action_norm)  # (B·K, dim)
    # -- the decoder, one node position at a time -----------------------------------------------
    cross_queries = np.empty((blocks, b * m, dim))
    for layer in range(blocks):
        s = decoder_at + 10 * layer + 4
        cross_queries[layer] = _affine(rep, square[s], square_bias[s])
    kept = np.empty((blocks, 4, b, m, dim))  # self keys, self values, cross keys, cross values
    available = np.ones((b, k + 1), np.bool_)
    available[:, :k] = occupied
    previous = np.zeros(b, np.int64)  # the start token
    certain = True
    for i in range(m):
        x = np.empty((b, dim))
        for r in range(b):
            if not sets:
                x[r] = inputs[previous[r]]
            elif previous[r] == 0 or previous[r] == k + 1:  # the start, or an idle node before
                x[r] = inputs[0 if previous[r] == 0 else 1]
            else:
                x[r] = chosen[r * k + previous[r] - 1]
        for layer in range(blocks):
            s, n = decoder_at + 10 * layer, 1 + 2 * blocks + 3 * layer
            q = _affine(x, square[s], square_bias[s])
            kept[layer, 0, :, i] = _affine(x, square[s + 1], square_bias[s + 1])
            kept[layer, 1, :, i] = _affine(x, square[s + 2], square_bias[s + 2])
            attended = np.empty((b, dim))
            for r in range(b):
                attended[r] = _attend(
                    q[r : r + 1], kept[layer, 0, r, : i + 1], kept[layer, 1, r, : i + 1], heads
                )[0]
            x = _layer_norm(x + _affine(attended, square[s + 3], square_bias[s + 3]), norms[n])
            kept[layer, 2, :, i] = _affine(x, square[s + 5], square_bias[s + 5])
            kept[layer, 3, :, i] = _affine(x, square[s + 6], square_bias[s + 6])
            for r in range(b):
                attended[r] = _attend(
                    cross_queries[layer, r * m + i : r * m + i + 1],
                    kept[layer, 2, r, : i + 1],
                    kept[layer, 3, r, : i + 1],
                    heads,
                )[0]
            mixed = _affine(attended, square[s + 7], square_bias[s + 7])
            for r in range(b):
                mixed[r] += rep[r * m + i]
            x = _layer_norm(mixed, norms[n + 1])
            hidden = _gelu(_affine(x, square[s + 8], square_bias[s + 8]))
            x = _layer_norm(x + _affine(hidden, square[s + 9], square_bias[s + 9]), norms[n + 2])
        query = _gelu(_affine(x, square[query_at], square_bias[query_at]))
        query = _affine(
            _layer_norm(query, norms[-1]), square[query_at + 1], square_bias[query_at + 1]
        )
        for r in range(b):
            best, second, choice, largest = -np.inf, -np.inf, k, 1.0
            for a in range(k + 1):
                if not available[r, a]:
                    continue
                if a < k:
                    logit = 0.0
                    for j in range(dim):
                        logit += keys[r * k + a, j] * query[r, j]
                    logit *= scale
                    if pair_column >= 0:  # PairBias: the task last trained on this node
                        last = int(math.floor(raw[r * k + a, pair_column] * m + 0.5)) - 1
                        if last == i:
                            cost = raw[r * k + a, pair_column + 1]
                            logit += pair[0] + pair[1] * cost
                else:
                    logit = idle_bias
                    for j in range(dim):
                        logit += x[r, j] * idle_weight[j]
                largest = max(largest, abs(logit))
                if logit > best:
                    best, second, choice = logit, best, a
                elif logit > second:
                    second = logit
            if best - second < tolerance * largest:
                certain = False
            actions[r, i] = choice
            if choice < k:
                available[r, choice] = False  # the slot is taken for later nodes
            previous[r] = choice + 1
    return certain
