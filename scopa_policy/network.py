"""The policy/value network: encode the observation, score each legal catalogue id.

An MLP encodes the 216-float observation (the value head reads the embedding); a
small MLP scores ``(embedding, move features)`` for every legal move
(``scopa_policy.features``). The policy is a softmax over the legal ids only.
``NumpyScorer`` is the same network in numpy, for agents that play one move at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
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


class NumpyScorer:
    """The policy logits of one decision in numpy (same numbers as ``PolicyNet``, a
    fraction of torch's per-call overhead): what the agent uses to play."""

    def __init__(self, net: PolicyNet) -> None:
        def wb(layer: nn.Linear) -> tuple[np.ndarray, np.ndarray]:
            return (layer.weight.detach().cpu().numpy().T.copy(),
                    layer.bias.detach().cpu().numpy().copy())

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

    def logits(self, obs: np.ndarray, ids: np.ndarray, emb: np.ndarray | None = None
               ) -> np.ndarray:
        """Logits (L,) of the legal ids (L,) of one observation (216,)."""
        h = self.embed(obs) if emb is None else emb
        pre = (h @ self.state[0] + self.state[1])[None, :]
        pre = pre + action_inputs_np(obs, ids) @ self.action[0] + self.action[1]
        z = np.maximum(np.maximum(pre, 0) @ self.hidden[0] + self.hidden[1], 0)
        return (z @ self.out[0] + self.out[1])[:, 0]



def count_parameters(net: nn.Module) -> int:
    return sum(p.numel() for p in net.parameters())
