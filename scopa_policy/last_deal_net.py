"""The last-deal scorer: attention over the cards in play, for 2-player last deals.

Once the deck is empty in a 2-player hand every card is known (the unseen cards are
the other hand), and the best move is a matter of tactics several plies deep: which
capture leaves the other side no sweep, who takes the last cards. An MLP over the flat
observation learns this poorly (BENCHMARKS.md, "Where the network loses"); this
network reads the cards as a set instead.

Tokens: one per card in play (own hand, other hand, table: at most 20 in a 2-player
last deal), each its card one-hot, rank, suit and place; and a global token, a linear
map of the whole observation (piles, scope, last capture). Pre-norm transformer layers
(``LastDealConfig``) mix them. A legal move is scored by an MLP over the played card's
token, the sum of the captured cards' tokens, the global token and the move features
(``scopa_policy.features``). The scores are the policy's logits for those decisions.

``LastDealNet`` is the torch network (trained by the stage kind ``last_deal``,
``scopa_train.stages.last_deal``);
``NumpyLastDeal`` is the same numbers in numpy float64, for agents.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from scopa_env.cards import N_CARDS, RANK, SUIT
from scopa_env.observation import HAND, OBS_DIM, TABLE, UNSEEN

from .features import ACTION_DIM, COLUMNS, action_inputs_np

ROLES = (HAND, UNSEEN, TABLE)  # a card token's place: own hand, other hand, table
_CARD_FEATS = np.concatenate([
    np.eye(N_CARDS), np.eye(10)[np.asarray(RANK) - 1], np.eye(4)[np.asarray(SUIT)]],
    1).astype(np.float32)
TOKEN_DIM = _CARD_FEATS.shape[1] + len(ROLES)


@dataclass(frozen=True)
class LastDealConfig:
    width: int = 64
    layers: int = 3
    heads: int = 4
    ff_hidden: int = 128
    move_hidden: int = 128

    def to_dict(self) -> dict[str, int]:
        return {"width": self.width, "layers": self.layers, "heads": self.heads,
                "ff_hidden": self.ff_hidden, "move_hidden": self.move_hidden}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LastDealConfig:
        return cls(int(d["width"]), int(d["layers"]), int(d["heads"]), int(d["ff_hidden"]),
                   int(d["move_hidden"]))


@dataclass
class Tokens:
    """The token inputs of B decisions and where each move's cards sit.

    Slot 0 of every decision is the global token; card tokens follow. ``card`` (B, T)
    is the card id at each slot (-1 for the global token and padding); ``played`` (M,)
    is the slot of each move's played card; ``captured_move`` / ``captured_slot`` (P,)
    list (move, slot) for every captured card."""

    cards: np.ndarray  # (B, T, TOKEN_DIM) float32, slot 0 zeros
    card: np.ndarray  # (B, T) int64
    played: np.ndarray  # (M,) int64
    captured_move: np.ndarray  # (P,) int64
    captured_slot: np.ndarray  # (P,) int64

    @property
    def mask(self) -> np.ndarray:
        """(B, T) bool: a real token (the global token or a card)."""
        mask = self.card >= 0
        mask[:, 0] = True
        return mask


def cards_in_play(obs: np.ndarray) -> np.ndarray:
    """(B,) the card tokens of each of B last-deal observations (B, 216): cards in the
    own hand, the other hand and on the table."""
    return _roles(obs).any(-1).sum(1)


def _roles(obs: np.ndarray) -> np.ndarray:
    """(B, 40, 3) bool: each card's place (``ROLES``) in B observations."""
    return np.stack([obs[:, r] > 0.5 for r in ROLES], -1)


def tokens(obs: np.ndarray, feats: np.ndarray, row: np.ndarray) -> Tokens:
    """Tokens of B last-deal observations (B, 216) and slots of their M moves, whose
    features are ``feats`` (M, ACTION_DIM) and decisions ``row`` (M,)."""
    obs = np.atleast_2d(obs)
    b = len(obs)
    role = _roles(obs)
    inplay = role.any(-1)
    n = inplay.sum(1)
    t = int(n.max(initial=0)) + 1
    rb, rc = np.nonzero(inplay)
    slot = np.arange(len(rb)) - (np.cumsum(n) - n)[rb] + 1
    cards = np.zeros((b, t, TOKEN_DIM), np.float32)
    cards[rb, slot] = np.concatenate([_CARD_FEATS[rc], role[rb, rc]], -1)
    card = np.full((b, t), -1, np.int64)
    card[rb, slot] = rc
    pos = np.zeros((b, N_CARDS), np.int64)
    pos[rb, rc] = slot
    played_card = feats[:, COLUMNS["card"]].argmax(1)
    cm, cc = np.nonzero(feats[:, COLUMNS["capture"]] > 0.5)
    return Tokens(cards, card, pos[row, played_card], cm, pos[row[cm], cc])


def _linear(n_in: int, n_out: int) -> nn.Linear:
    layer = nn.Linear(n_in, n_out)
    nn.init.xavier_uniform_(layer.weight)
    nn.init.zeros_(layer.bias)
    return layer


def _softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, from elementwise operations: torch's CPU kernel
    takes about 6 times as long over many short rows (the 14 or so tokens here), and
    with its backward it was an eighth of a training step."""
    e = (x - x.detach().amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)


class _Block(nn.Module):
    """Pre-norm transformer layer: x + attention(norm(x)), then x + MLP(norm(x))."""

    def __init__(self, cfg: LastDealConfig) -> None:
        super().__init__()
        d = cfg.width
        self.heads = cfg.heads
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = _linear(d, 3 * d), _linear(d, d)
        self.ff1, self.ff2 = _linear(d, cfg.ff_hidden), _linear(cfg.ff_hidden, d)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, h, d // h).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-1, -2)) / float(np.sqrt(d // h))
        att = _softmax(att.masked_fill(~mask[:, None, None, :], float("-inf")))
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.ff2(torch.relu(self.ff1(self.norm2(x))))


class LastDealNet(nn.Module):
    """Scores the legal moves of 2-player last-deal decisions (module docstring)."""

    def __init__(self, cfg: LastDealConfig = LastDealConfig()) -> None:
        super().__init__()
        if cfg.width % cfg.heads:
            raise ValueError(f"width {cfg.width} is not a multiple of heads {cfg.heads}")
        self.cfg = cfg
        d = cfg.width
        self.card_in = _linear(TOKEN_DIM, d)
        self.global_in = _linear(OBS_DIM, d)
        self.blocks = nn.ModuleList(_Block(cfg) for _ in range(cfg.layers))
        self.norm = nn.LayerNorm(d)
        self.move = nn.Sequential(_linear(3 * d + ACTION_DIM, cfg.move_hidden), nn.ReLU(),
                                  _linear(cfg.move_hidden, cfg.move_hidden), nn.ReLU(),
                                  _linear(cfg.move_hidden, 1))

    def scores(self, obs: torch.Tensor, feats: torch.Tensor, row: torch.Tensor,
               tok: Tokens) -> torch.Tensor:
        """Score (M,) of each move: ``obs`` (B, 216), ``feats`` (M, ACTION_DIM), ``row``
        (M,) each move's decision, ``tok`` = ``tokens(obs, feats, row)``."""
        return self.head(self.trunk(obs, feats, row, tok)[1])

    def head(self, hidden: torch.Tensor) -> torch.Tensor:
        """Scores (M,) from the move MLP's last hidden layer (``trunk``)."""
        return self.move[-1](hidden).squeeze(-1)

    def trunk(self, obs: torch.Tensor, feats: torch.Tensor, row: torch.Tensor, tok: Tokens
              ) -> tuple[torch.Tensor, torch.Tensor]:
        """(the encoded tokens (B, T, width), each move's last hidden layer (M,
        move_hidden)): what ``scores`` reads, for a training head beside it."""
        x = self.card_in(torch.from_numpy(tok.cards).to(obs.device))
        x[:, 0] = self.global_in(obs)
        mask = torch.from_numpy(tok.mask).to(obs.device)
        for block in self.blocks:
            x = block(x, mask)
        x = self.norm(x)
        played = x[row, torch.from_numpy(tok.played).to(obs.device)]
        cm = torch.from_numpy(tok.captured_move).to(obs.device)
        captured = torch.zeros_like(played).index_add_(
            0, cm, x[row[cm], torch.from_numpy(tok.captured_slot).to(obs.device)])
        return x, self.move[:-1](torch.cat([played, captured, x[row, 0], feats], -1))

    def numpy_scorer(self) -> NumpyLastDeal:
        return NumpyLastDeal(self)


def _standardise(x: np.ndarray) -> np.ndarray:
    """Layer norm without its affine part (folded into the next linear map)."""
    x = x - x.mean(-1, keepdims=True)
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5)


class NumpyLastDeal:
    """``LastDealNet.scores`` in numpy float64 (the agent's path: no torch per call).

    The same function rearranged for fewer array operations: each layer norm's scale
    and shift are folded into the linear map after it (and the attention's 1/sqrt(head
    width) into the queries), and the move MLP's first layer is applied to every token
    once, before the played and captured cards are picked out."""

    def __init__(self, net: LastDealNet) -> None:
        def p(t: torch.Tensor) -> np.ndarray:
            return t.detach().cpu().double().numpy().copy()

        def folded(norm: nn.LayerNorm, w: np.ndarray, b: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
            """(norm(x) * g + beta) @ w + b = norm(x) @ (g[:, None] w) + (beta @ w + b)."""
            return p(norm.weight)[:, None] * w, p(norm.bias) @ w + b

        cfg = net.cfg
        d, self.heads = cfg.width, cfg.heads
        scale = np.concatenate([np.full(d, 1 / np.sqrt(d // cfg.heads)), np.ones(2 * d)])
        self.card_in = (p(net.card_in.weight).T, p(net.card_in.bias))
        self.global_in = (p(net.global_in.weight).T, p(net.global_in.bias))
        self.blocks = []
        for k in net.blocks:
            qkv_w, qkv_b = folded(k.norm1, p(k.qkv.weight).T, p(k.qkv.bias))
            self.blocks.append(((qkv_w * scale, qkv_b * scale),
                                (p(k.proj.weight).T, p(k.proj.bias)),
                                folded(k.norm2, p(k.ff1.weight).T, p(k.ff1.bias)),
                                (p(k.ff2.weight).T, p(k.ff2.bias))))
        linears = [m for m in net.move if isinstance(m, nn.Linear)]
        first = p(linears[0].weight).T  # rows: played, captured, global token, features
        g, beta = p(net.norm.weight), p(net.norm.bias)
        parts = [first[i * d:(i + 1) * d] for i in range(3)]
        self.token_w = np.concatenate([g[:, None] * w for w in parts], 1)  # (d, 3 h)
        self.played_b, self.captured_b, self.global_b = (beta @ w for w in parts)
        self.feats_w, self.first_b = first[3 * d:], p(linears[0].bias)
        self.rest = [(p(m.weight).T, p(m.bias)) for m in linears[1:]]

    def logits_flat(self, obs: np.ndarray, ids: np.ndarray, row: np.ndarray) -> np.ndarray:
        """Scores (M,) of the legal ids (M,) of B decisions ``obs`` (B, 216), ``row`` (M,)
        naming each id's decision (``NumpyScorer.logits_flat``'s interface)."""
        return self.scores(obs, action_inputs_np(np.atleast_2d(obs), ids, row), row)

    def scores(self, obs: np.ndarray, feats: np.ndarray, row: np.ndarray) -> np.ndarray:
        """Score (M,) of each move (``LastDealNet.scores``, from the raw inputs)."""
        obs = np.atleast_2d(np.asarray(obs, np.float64))
        tok = tokens(obs, feats, row)
        x = tok.cards @ self.card_in[0] + self.card_in[1]
        x[:, 0] = obs @ self.global_in[0] + self.global_in[1]
        bt, t, d = x.shape
        h = self.heads
        neg = np.where(tok.mask, 0.0, -np.inf)[:, None, None, :]
        for (qkv, proj, ff1, ff2) in self.blocks:
            y = _standardise(x) @ qkv[0] + qkv[1]
            q, k, v = y.reshape(bt, t, 3, h, d // h).transpose(2, 0, 3, 1, 4)
            att = q @ k.transpose(0, 1, 3, 2) + neg
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            x = x + (att @ v).transpose(0, 2, 1, 3).reshape(bt, t, d) @ proj[0] + proj[1]
            x = x + np.maximum(_standardise(x) @ ff1[0] + ff1[1], 0) @ ff2[0] + ff2[1]
        u = _standardise(x) @ self.token_w  # (B, T, 3 h): each token through each part
        n = self.first_b.shape[0]
        z = u[row, tok.played, :n] + self.played_b + u[row, 0, 2 * n:] + self.global_b
        z += feats @ self.feats_w + self.first_b
        cm = tok.captured_move
        if len(cm):  # captured pairs come sorted by move: sum each move's run
            runs = np.flatnonzero(np.r_[True, cm[1:] != cm[:-1]])
            z[cm[runs]] += (np.add.reduceat(u[row[cm], tok.captured_slot, n:2 * n], runs)
                            + np.diff(np.r_[runs, len(cm)])[:, None] * self.captured_b)
        for w, b in self.rest:
            z = np.maximum(z, 0) @ w + b
        return z[:, 0]


__all__ = ["LastDealConfig", "LastDealNet", "NumpyLastDeal", "Tokens", "cards_in_play",
           "tokens", "TOKEN_DIM"]
