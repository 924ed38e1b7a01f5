"""The policy/value network: encode the observation, score each legal catalogue id.

An MLP encodes the 216-float observation (the value head reads the embedding); a
small MLP scores ``(embedding, move features)`` for every legal move
(``scopa_policy.features``). The policy is a softmax over the legal ids only.
``NumpyScorer`` is the same network in numpy, for agents that play without torch.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import torch
from torch import nn

from scopa_env.observation import OBS_DIM

from .features import ACTION_DIM, Candidates, action_inputs_np


@dataclass(frozen=True)
class NetConfig:
    hidden_size: int = 256
    hidden_layers: int = 2
    action_hidden: int = 128

    def to_dict(self) -> dict[str, int]:
        return {"hidden_size": self.hidden_size, "hidden_layers": self.hidden_layers,
                "action_hidden": self.action_hidden}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> NetConfig:
        return cls(int(d["hidden_size"]), int(d["hidden_layers"]), int(d["action_hidden"]))


def _linear(n_in: int, n_out: int, initialise: bool, std: float = float(np.sqrt(2)),
            bias: float = 0.0) -> nn.Linear:
    """A linear layer, orthogonally initialised, or left uninitialised (``initialise``
    False) when weights are about to be loaded over it."""
    if not initialise:
        return torch.nn.utils.skip_init(nn.Linear, n_in, n_out)
    layer = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class PolicyNet(nn.Module):
    """Observation encoder (MLP) + value head + legal-action scorer. ``initialise=False``
    skips the weight initialisation (for a network whose weights are loaded next)."""

    def __init__(self, cfg: NetConfig = NetConfig(), initialise: bool = True):
        super().__init__()
        self.cfg = cfg
        h, a, ini = cfg.hidden_size, cfg.action_hidden, initialise
        layers: list[nn.Module] = []
        width = OBS_DIM
        for _ in range(cfg.hidden_layers):
            layers += [_linear(width, h, ini), nn.ReLU()]
            width = h
        self.encoder = nn.Sequential(*layers)
        self.value_head = _linear(h, 1, ini, std=1.0)
        self.score_state = _linear(h, a, ini)
        self.score_action = _linear(ACTION_DIM, a, ini)
        self.score_out = nn.Sequential(nn.ReLU(), _linear(a, a, ini), nn.ReLU(),
                                       _linear(a, 1, ini, std=0.01))

    def forward(self, obs: torch.Tensor, ids: torch.Tensor, valid: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """``obs`` (B, 216), ``ids`` (B, L) legal ids padded, ``valid`` (B, L) bool ->
        (masked logits (B, L) with -inf-like padding, value (B,)). The padded form of
        ``forward_moves``, for small batches and tests."""
        cand = Candidates.from_padded(obs.detach().cpu().numpy(), ids.cpu().numpy(),
                                      valid.cpu().numpy())
        return self.forward_moves(obs, cand.to(obs.device))

    def forward_moves(self, obs: torch.Tensor, cand: Candidates
                      ) -> tuple[torch.Tensor, torch.Tensor]:
        """``obs`` (B, 216) and the decisions' legal moves -> (logits (B, width), -1e9
        where a decision has fewer moves; value (B,)). Only real moves are scored."""
        emb = self.encoder(obs)
        value = self.value_head(emb).squeeze(-1)
        pre = self.score_state(emb)[cand.row] + self.score_action(cand.feats)
        scores = self.score_out(pre).squeeze(-1)
        logits = torch.full((obs.shape[0], cand.width), -1e9, dtype=scores.dtype,
                            device=scores.device)
        logits[cand.row, cand.col] = scores
        return logits, value

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.value_head(self.encoder(obs)).squeeze(-1)

    def numpy_scorer(self) -> NumpyScorer:
        return NumpyScorer(self)


@cache
def _blas_libraries() -> tuple[Any, ...]:
    """The process's BLAS thread pools (``threadpoolctl``), found once; kept out of the
    scorer, which agents copy and send to worker processes."""
    from threadpoolctl import ThreadpoolController

    return tuple(ThreadpoolController().select(user_api="blas").lib_controllers)


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread inside the block, as ``threadpoolctl``'s ``limit`` would put it
    but without its survey of every library on each call (a few microseconds here
    instead of about twelve: it is entered on every batch an agent scores)."""
    libs = _blas_libraries()
    before = [lib.num_threads for lib in libs]
    for lib, n in zip(libs, before, strict=True):
        if n != 1:
            lib.set_num_threads(1)
    try:
        yield
    finally:
        for lib, n in zip(libs, before, strict=True):
            if n != 1:
                lib.set_num_threads(n)


class NumpyScorer:
    """The policy logits in numpy (the network's numbers, in float64), for agents that
    play without torch's per-call overhead: many decisions in one set of products
    (``logits_flat``), or one (``logits``), by the same code.

    float64 keeps the choice independent of the batch: the products of one row alone
    and of a batch round differently, by about 1e-13 here, against about 1e-5 in
    float32, which could tip a near tie one way in a batch and the other alone. The
    products of a batch run on one BLAS thread (``threadpoolctl``): at these sizes a
    pool of threads costs far more than it saves, above all on a busy machine (the
    products of one row stay on the calling thread anyway)."""

    def __init__(self, net: PolicyNet) -> None:
        def wb(layer: nn.Linear) -> tuple[np.ndarray, np.ndarray]:
            return (layer.weight.detach().cpu().double().numpy().T.copy(),
                    layer.bias.detach().cpu().double().numpy().copy())

        self.encoder = [wb(m) for m in net.encoder if isinstance(m, nn.Linear)]
        self.state = wb(net.score_state)
        self.action = wb(net.score_action)
        self.hidden = wb(net.score_out[1])
        self.out = wb(net.score_out[3])

    def embed(self, obs: np.ndarray) -> np.ndarray:
        """Encoder output for one observation (216,) or a batch (B, 216)."""
        h = obs
        for w, b in self.encoder:
            h = np.maximum(h @ w + b, 0)
        return h

    def logits_flat(self, obs: np.ndarray, ids: np.ndarray, row: np.ndarray) -> np.ndarray:
        """Logits (M,) of the legal ids (M,) of B decisions, ``row`` (M,) naming each
        id's decision in ``obs`` (B, 216)."""
        return self.scores(obs, action_inputs_np(obs, ids, row), row)

    def scores(self, obs: np.ndarray, feats: np.ndarray, row: np.ndarray) -> np.ndarray:
        """Logits (M,) of moves with features ``feats`` (M, ACTION_DIM) of decisions
        ``obs`` (B, 216), ``row`` (M,) naming each move's decision."""
        if len(obs) == 1:  # products of one row: BLAS keeps them on this thread
            return self._scores(obs, feats, row)
        with one_blas_thread():
            return self._scores(obs, feats, row)

    def _scores(self, obs: np.ndarray, feats: np.ndarray, row: np.ndarray) -> np.ndarray:
        h = self.embed(np.asarray(obs, np.float64))
        pre = (h @ self.state[0] + self.state[1])[row]
        pre += feats @ self.action[0] + self.action[1]
        z = np.maximum(np.maximum(pre, 0) @ self.hidden[0] + self.hidden[1], 0)
        return (z @ self.out[0] + self.out[1])[:, 0]

    def logits(self, obs: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """Logits (L,) of the legal ids (L,) of one observation (216,)."""
        return self.logits_flat(np.atleast_2d(obs), ids, np.zeros(len(ids), np.int64))


def count_parameters(net: nn.Module) -> int:
    return sum(p.numel() for p in net.parameters())
