"""Checkpoints: written atomically, read with ``torch.load(weights_only=True)``.

A checkpoint is a dict of tensors and plain JSON-able metadata:

- ``format`` = ``"scopa-ppo"``, ``version``, ``kind`` (``"training"``: everything to
  resume; ``"policy"``: only what an agent needs, e.g. the shipped weights);
- ``net`` (network shape), ``rules`` (the rules trained on), ``config`` (the resolved
  training config), ``counters`` (update, env_steps, learner_samples, wall_seconds, ...);
- ``model`` (state dict); optionally ``last_deal`` (``{"net": shape, "model": state
  dict}``: the 2-player last-deal scorer, ``scopa_policy.last_deal_net``, that plays the
  decisions of the last deal in place of ``model``); for training checkpoints also
  ``optimizer``, ``past_pool`` (state dicts of the past-policy opponents) and ``rng``
  (python, numpy, torch states).

A corrupt file or one from an incompatible version fails with ``CheckpointError``
naming the file and what is wrong; a file holding anything but tensors and plain data
(which could run code when unpickled) is refused, never loaded.

``save_atomic`` writes ``.NAME.PID.*.tmp`` next to the target first; a run killed
mid-save leaves that file behind, and ``clean_stale_temps`` removes the ones whose
writer process is gone (training does it on every start and resume).
"""

from __future__ import annotations

import io
import os
import re
import time
import warnings
from pathlib import Path
from typing import Any

import torch

from scopa_env.files import write_atomic  # noqa: F401  (imported from here by scopa_train)

from .features import ACTION_DIM
from .last_deal_net import LastDealConfig, LastDealNet
from .network import NetConfig, PolicyNet

FORMAT = "scopa-ppo"
VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint that cannot be used (missing, corrupt, incompatible)."""


def save_atomic(obj: dict[str, Any], path: str | Path) -> Path:
    """``torch.save`` into memory, then ``write_atomic`` (a file error is a
    ``FileProblem`` naming ``path``).

    (Serialising into memory first keeps a Ctrl-C out of torch's archive writer: a signal
    handler that raises inside the writer's file callbacks can be swallowed there, or
    abort the process. Interrupted elsewhere in ``torch.save`` the writer fails again as
    it closes: that error is not what happened.)
    """
    buffer = io.BytesIO()
    try:
        torch.save(obj, buffer)
    except BaseException as e:
        if not isinstance(e, KeyboardInterrupt) and isinstance(e.__context__,
                                                               KeyboardInterrupt):
            raise KeyboardInterrupt from None
        raise
    return write_atomic(buffer.getbuffer(), path)


_TEMP = re.compile(r"\..+\.pt\.(?:(\d+)\.)?[^.]+\.tmp")
STALE_SECONDS = 600  # a temp file without a writer id counts as stale after this long


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process: assume it is still writing
    return True


def clean_stale_temps(folder: str | Path) -> list[Path]:
    """Remove the temp files of ``save_atomic`` in ``folder`` whose writer is gone (a
    run killed mid-save); returns what was removed. A temp file of a live process is
    kept; one without a process id (older versions) once it is ``STALE_SECONDS`` old."""
    removed = []
    folder = Path(folder)
    if not folder.is_dir():
        return removed
    for p in folder.glob(".*.tmp"):
        m = _TEMP.fullmatch(p.name)
        if m is None or not p.is_file():
            continue
        try:
            stale = (not _alive(int(m.group(1))) if m.group(1)
                     else time.time() - p.stat().st_mtime > STALE_SECONDS)
            if stale:
                p.unlink()
                removed.append(p)
        except OSError:  # gone already, or not ours to remove
            continue
    return removed


def _refusal(p: Path, e: Exception) -> str:
    """Why ``torch.load(weights_only=True)`` refused ``p``, in our words."""
    text = str(e)
    found = re.search(r"GLOBAL ([\w.]+)|[Uu]nsupported global:? ([\w.]+)", text)
    if found:
        return (f"checkpoint {str(p)!r} holds Python objects, not only tensors and plain data "
                f"(it names {found.group(1) or found.group(2)}); loading it could run code, so "
                f"it is refused. Only checkpoints written by train.py can be used")
    if isinstance(e, EOFError) or not p.stat().st_size:
        reason = "it is empty or cut short"
    elif "zip" in text.lower() or "central directory" in text:
        reason = "a damaged or truncated archive"
    else:
        reason = "its data cannot be read as tensors and plain data"
    return f"checkpoint {str(p)!r} is corrupt or not a torch checkpoint ({reason})"


def checkpoint_file(path: str | Path) -> Path:
    """The file a checkpoint path names: itself, or a run directory's
    ``checkpoints/latest.pt`` (a recipe's run directory: its last stage's)."""
    p = Path(path)
    if not p.is_dir():
        return p
    if not (p / "checkpoints").is_dir():
        p = _last_stage(p) or p
    return p / "checkpoints" / "latest.pt"


def _last_stage(run: Path) -> Path | None:
    """The folder of a recipe run's last stage, as its ``recipe.yaml`` lists them."""
    import yaml

    try:
        doc = yaml.safe_load((run / "recipe.yaml").read_text())
        name = doc["config"]["stages"][-1]["name"]
    except (OSError, yaml.YAMLError, KeyError, IndexError, TypeError):
        return None
    return run / str(name)


def load_checkpoint(path: str | Path, kind: str | None = None) -> dict[str, Any]:
    """Read and check a checkpoint; ``kind="training"`` also requires resume state."""
    p = checkpoint_file(path)
    if Path(path).is_dir() and not p.is_file():
        raise CheckpointError(f"{path} is a folder without checkpoints/latest.pt: give a run "
                              f"directory written by train.py or a .pt file")
    if not p.is_file():
        raise CheckpointError(f"checkpoint {str(p)!r} does not exist")
    try:
        with warnings.catch_warnings():  # torch's advice on unusual pickles is not ours
            warnings.simplefilter("ignore")
            ck = torch.load(p, map_location="cpu", weights_only=True)
    except OSError as e:
        raise CheckpointError(f"checkpoint {str(p)!r} cannot be read: {e.strerror or e}"
                              ) from None
    except Exception as e:  # truncated zip, random bytes, pickled objects, ...
        raise CheckpointError(_refusal(p, e)) from None
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
    types = {"net": dict, "rules": dict, "model": dict, "config": dict, "optimizer": dict,
             "rng": dict, "counters": dict, "past_pool": list}
    if "last_deal" in ck:
        need.append("last_deal")
        types["last_deal"] = dict
    wrong = [k for k in need if not isinstance(ck[k], types[k])]
    if wrong:
        raise CheckpointError(f"checkpoint {str(p)!r} is damaged: field(s) "
                              f"{', '.join(wrong)} have the wrong type")
    ck["path"] = str(p)
    return ck


def _check_action_dim(shape: Any, where: str) -> None:
    dim = shape.get("action_dim") if isinstance(shape, dict) else None
    if dim is not None and dim != ACTION_DIM:
        raise CheckpointError(f"{where} was trained with {dim} move features; this version "
                              f"of scopa_train computes {ACTION_DIM}: retrain or use the "
                              f"version that wrote it")


def _fit(make: Any, state: Any, where: str) -> Any:
    """``make()`` with ``state`` loaded; a mismatch is a ``CheckpointError``."""
    try:
        net = make()
        net.load_state_dict(state)
    except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as e:
        lines = [x.strip() for x in str(e).strip().splitlines() if x.strip()]
        detail = next((x for x in lines if "size mismatch" in x or "Missing" in x
                       or "Unexpected" in x), lines[0] if lines else type(e).__name__)
        raise CheckpointError(f"{where} does not fit this network: {detail}") from None
    return net.eval()


def build_model(ck: dict[str, Any]) -> PolicyNet:
    """The network of a loaded checkpoint, weights in place; a shape mismatch is a
    ``CheckpointError``."""
    where = f"checkpoint {ck.get('path', '?')!r}"
    _check_action_dim(ck.get("net"), where)
    return _fit(lambda: PolicyNet(NetConfig.from_dict(ck["net"]), initialise=False),
                ck["model"], where)


def build_last_deal(ck: dict[str, Any]) -> LastDealNet | None:
    """The checkpoint's last-deal scorer, weights in place (None when it has none)."""
    part = ck.get("last_deal")
    if part is None:
        return None
    where = f"checkpoint {ck.get('path', '?')!r} (its last-deal scorer)"
    _check_action_dim(part.get("net"), where)
    return _fit(lambda: LastDealNet(LastDealConfig.from_dict(part["net"])), part.get("model"),
                where)


def policy_checkpoint(net: PolicyNet, rules: dict[str, Any], meta: dict[str, Any],
                      last_deal: LastDealNet | None = None) -> dict[str, Any]:
    """A small policy-only checkpoint (weights + what an agent needs)."""
    def weights(m: Any) -> dict[str, torch.Tensor]:
        return {k: v.detach().cpu().clone() for k, v in m.state_dict().items()}

    ck = {"format": FORMAT, "version": VERSION, "kind": "policy",
          "net": {**net.cfg.to_dict(), "action_dim": ACTION_DIM}, "rules": rules,
          "model": weights(net), **meta}
    if last_deal is not None:
        ck["last_deal"] = {"net": {**last_deal.cfg.to_dict(), "action_dim": ACTION_DIM},
                           "model": weights(last_deal)}
    return ck
