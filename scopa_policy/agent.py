"""Learned agents: a trained policy network (a checkpoint of ``train.py``) as an agent.

``load_policy_agent(path)`` turns any checkpoint — a training checkpoint, a run
directory (its ``checkpoints/latest.pt``) or a policy-only file — into an agent;
``load_policy_agent(None)`` is the shipped ``pretrained`` agent
(``scopa_policy/pretrained/default.pt``). The agent encodes the seat's information set
(``encode_info``), scores the legal catalogue ids and plays the best one (or samples
from the policy with ``sample=True``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from scopa_env.observation import InfoSet, encode_info

from .checkpoint import CheckpointError, build_model, load_checkpoint
from .network import PolicyNet

PRETRAINED = Path(__file__).resolve().parent / "pretrained" / "default.pt"


class PolicyAgent:
    """A policy network as an agent: ``act(info)`` -> one of ``info.legal_actions``."""

    def __init__(self, net: PolicyNet, spec: str = "policy", seed: int | None = None,
                 sample: bool = False, meta: dict[str, Any] | None = None) -> None:
        self.net = net.eval()
        self.scorer = net.numpy_scorer()
        self.spec = spec
        self.sample = sample
        self.meta = meta or {}
        self.rng = np.random.default_rng(seed)

    def _pick(self, legal: tuple[int, ...], logits: np.ndarray) -> int:
        if not self.sample:
            return int(legal[int(np.argmax(logits))])
        p = np.exp(logits.astype(np.float64) - logits.max())
        return int(legal[int(self.rng.choice(len(legal), p=p / p.sum()))])

    def act(self, info: InfoSet) -> int:
        legal = info.legal_actions
        if not legal:
            raise ValueError(f"seat {info.seat} has no legal move to choose from")
        if len(legal) == 1:
            return int(legal[0])
        logits = self.scorer.logits(encode_info(info), np.asarray(legal, np.int64))
        return self._pick(legal, logits)

    def act_batch(self, infos: list[InfoSet]) -> list[int]:
        """``act`` for each information set. One decision at a time on purpose: the
        single-row products stay off OpenBLAS's thread pool, which on a busy machine
        costs far more than it saves at these sizes."""
        return [self.act(i) for i in infos]

    def value(self, info: InfoSet) -> float:
        """The network's estimate of the seat's (scaled) return from here."""
        device = next(self.net.parameters()).device
        obs = torch.from_numpy(encode_info(info))[None].to(device)
        with torch.inference_mode():
            return float(self.net.value(obs)[0])


def load_policy_agent(path: str | Path | None, seed: int | None = None,
                      sample: bool = False) -> PolicyAgent:
    """The agent of a checkpoint file or run directory; ``None``: the shipped weights."""
    if path is None:
        if not PRETRAINED.is_file():
            raise CheckpointError(f"the shipped pretrained weights {PRETRAINED} are missing "
                                  f"from this installation")
        ck, spec = load_checkpoint(PRETRAINED), "pretrained"
    else:
        ck, spec = load_checkpoint(path), f"ckpt:{path}"
    net = build_model(ck)
    meta = {k: ck[k] for k in ("rules", "counters", "config") if k in ck}
    return PolicyAgent(net, spec=spec, seed=seed, sample=sample, meta=meta)


__all__ = ["PolicyAgent", "load_policy_agent", "PRETRAINED"]
