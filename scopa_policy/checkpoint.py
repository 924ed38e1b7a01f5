"""Checkpoints: written atomically, read with ``torch.load(weights_only=True)``.

A checkpoint is a dict of tensors and plain JSON-able metadata:

- ``format`` = ``"scopa-ppo"``, ``version``, ``kind`` (``"training"``: everything to
  resume; ``"policy"``: only what an agent needs, e.g. the shipped weights);
- ``net`` (network shape), ``rules`` (the rules trained on), ``config`` (the resolved
  training config), ``counters`` (update, env_steps, learner_samples, wall_seconds, ...);
- ``model`` (state dict); for training checkpoints also ``optimizer``, ``past_pool``
  (state dicts of the past-policy opponents) and ``rng`` (python, numpy, torch states).

A corrupt file or one from an incompatible version fails with ``CheckpointError``
naming the file and what is wrong.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import torch

from .features import ACTION_DIM
from .network import NetConfig, PolicyNet

FORMAT = "scopa-ppo"
VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint that cannot be used (missing, corrupt, incompatible)."""


def save_atomic(obj: dict[str, Any], path: str | Path) -> Path:
    """``torch.save`` to a temp file in the same folder, fsync, then ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the usual file mode
        with os.fdopen(fd, "wb") as fh:
            torch.save(obj, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def load_checkpoint(path: str | Path, kind: str | None = None) -> dict[str, Any]:
    """Read and check a checkpoint; ``kind="training"`` also requires resume state."""
    p = Path(path)
    if p.is_dir():
        latest = p / "checkpoints" / "latest.pt"
        if not latest.is_file():
            raise CheckpointError(f"{p} is a folder without checkpoints/latest.pt: give a run "
                                  f"directory written by train.py or a .pt file")
        p = latest
    if not p.is_file():
        raise CheckpointError(f"checkpoint {str(p)!r} does not exist")
    try:
        ck = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as e:  # truncated zip, random bytes, pickled objects, ...
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CheckpointError(f"checkpoint {str(p)!r} is corrupt or not a torch checkpoint "
                              f"(torch.load(weights_only=True) failed: {first})") from None
    if not isinstance(ck, dict) or ck.get("format") != FORMAT:
        raise CheckpointError(f"checkpoint {str(p)!r} is not a scopa PPO checkpoint "
                              f"(no format={FORMAT!r} field)")
    if ck.get("version") != VERSION:
        raise CheckpointError(f"checkpoint {str(p)!r} has format version "
                              f"{ck.get('version')!r}; this scopa reads version {VERSION}")
    need = ["net", "rules", "model"]
    if kind == "training":
        need += ["config", "optimizer", "rng", "counters", "past_pool"]
        if ck.get("kind") != "training":
            raise CheckpointError(f"checkpoint {str(p)!r} holds only a policy "
                                  f"(kind={ck.get('kind')!r}): it cannot resume training")
    missing = [k for k in need if k not in ck]
    if missing:
        raise CheckpointError(f"checkpoint {str(p)!r} lacks {', '.join(missing)}")
    ck["path"] = str(p)
    return ck


def build_model(ck: dict[str, Any]) -> PolicyNet:
    """The network of a loaded checkpoint, weights in place; a shape mismatch is a
    ``CheckpointError``."""
    where = f"checkpoint {ck.get('path', '?')!r}"
    dim = ck.get("net", {}).get("action_dim") if isinstance(ck.get("net"), dict) else None
    if dim is not None and dim != ACTION_DIM:
        raise CheckpointError(f"{where} was trained with {dim} move features; this version "
                              f"of scopa_train computes {ACTION_DIM}: retrain or use the "
                              f"version that wrote it")
    try:
        net = PolicyNet(NetConfig.from_dict(ck["net"]), initialise=False)
        net.load_state_dict(ck["model"])
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        lines = [x.strip() for x in str(e).strip().splitlines() if x.strip()]
        detail = next((x for x in lines if "size mismatch" in x or "Missing" in x
                       or "Unexpected" in x), lines[0] if lines else type(e).__name__)
        raise CheckpointError(f"{where} does not fit this network: {detail}") from None
    net.eval()
    return net


def policy_checkpoint(net: PolicyNet, rules: dict[str, Any], meta: dict[str, Any]
                      ) -> dict[str, Any]:
    """A small policy-only checkpoint (weights + what an agent needs)."""
    return {"format": FORMAT, "version": VERSION, "kind": "policy",
            "net": {**net.cfg.to_dict(), "action_dim": ACTION_DIM}, "rules": rules,
            "model": {k: v.detach().cpu().clone() for k, v in net.state_dict().items()},
            **meta}
