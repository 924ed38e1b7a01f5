"""The agent spec ``rllib:PATH``: a policy trained with RLlib on the PettingZoo
environment (``scopa_env.env``; examples/rllib_ppo.py) or on the batched Gymnasium env
(``gymnasium.make_vec``, either move interface; examples/rllib_ppo_batched.py), playing the
arg-max of its logits over the legal moves.

``PATH`` is an RLlib checkpoint: a folder written by ``algo.save_to_path`` (the
policy ``shared`` is taken, or the only one there), or the folder of one RLModule
(``.../learner_group/learner/rl_module/NAME``). RLlib checkpoints are pickles: load
only your own. RLlib is an optional extra (``pip install -e .[rllib]``), imported only
when such an agent is built or trained.

``MaskedPPOModule`` (built on first use, so that importing this module needs no Ray)
is PPO's default torch module with the logits of illegal ids pushed to ``FLOAT_MIN``
by the observation's ``action_mask``: in exploration, inference and training alike.
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from typing import Any

import numpy as np

from scopa_env.move_features import ACTION_DIM
from scopa_env.moves import N_ACTIONS
from scopa_env.observation import OBS_DIM, InfoSet, encode_info

from .batched_policy import BatchedPolicyAgent
from .move_interface import MoveInterface

INSTALL_HINT = "pip install -e .[rllib]"
POLICY = "shared"  # the policy id examples/rllib_ppo.py trains for every seat
STATE = "class_and_ctor_args.pkl"  # a file of every RLlib checkpoint component
_MODULES: dict[tuple[str, int], Any] = {}  # (module folder, mtime_ns) -> loaded module


def check_available() -> None:
    """``ValueError`` naming the install command unless RLlib can be imported."""
    if importlib.util.find_spec("ray") is None or importlib.util.find_spec("ray.rllib") is None:
        raise ValueError(f"agent spec 'rllib:PATH' needs RLlib (ray[rllib]), which is not "
                         f"installed: {INSTALL_HINT}")


def _policies(folder: Path) -> list[str]:
    return sorted(d.name for d in folder.iterdir() if (d / STATE).is_file()) \
        if folder.is_dir() else []


def module_dir(path: str) -> Path:
    """The RLModule folder of ``rllib:PATH``: ``PATH`` itself when it holds one RLModule,
    else the policy ``shared`` (or the only policy) of the algorithm or multi-module
    checkpoint at ``PATH``; ``ValueError`` naming what is wrong otherwise."""
    p = Path(path).expanduser()
    if not p.is_dir():
        raise ValueError(f"agent spec 'rllib:{path}': no such checkpoint folder ({p})")
    for multi in (p / "learner_group" / "learner" / "rl_module", p / "rl_module",
                  *([p] if p.name == "rl_module" else [])):  # where RLlib keeps its modules
        names = _policies(multi)
        if names:
            if POLICY in names or len(names) == 1:
                return multi / (POLICY if POLICY in names else names[0])
            raise ValueError(f"agent spec 'rllib:{path}': the checkpoint holds the policies "
                             f"{', '.join(names)}; name one: rllib:{multi}/NAME")
    if (p / STATE).is_file() and (p / "metadata.json").is_file():
        return p
    raise ValueError(f"agent spec 'rllib:{path}': {p} is not an RLlib checkpoint (no RLModule "
                     f"in it: give the folder of algo.save_to_path or of one RLModule)")


def load_module(path: str) -> Any:
    """The RLModule of ``rllib:PATH`` (loaded once per folder version), checked to play
    the PettingZoo environment's spaces."""
    check_available()
    folder = module_dir(path).resolve()
    key = (str(folder), folder.stat().st_mtime_ns)
    if key not in _MODULES:
        from ray.rllib.core.rl_module.rl_module import RLModule

        quiet_rllib_notices()
        try:
            module = RLModule.from_checkpoint(str(folder))
        except Exception as e:  # a damaged or foreign checkpoint fails in many ways
            raise ValueError(f"agent spec 'rllib:{path}': cannot load the RLModule in "
                             f"{folder} ({type(e).__name__}: {e})") from None
        if module_moves(module) is None:
            space = getattr(module, "observation_space", None)
            obs = space["observation"] if _is_dict(space) else space
            n = getattr(getattr(module, "action_space", None), "n", None)
            raise ValueError(f"agent spec 'rllib:{path}': the module's spaces (observation "
                             f"{getattr(obs, 'shape', None)}, actions {n}) are not the "
                             f"environment's (({OBS_DIM},), {N_ACTIONS}), nor those of "
                             f"moves='legal' (({OBS_DIM} + K x {ACTION_DIM},), K)")
        module.eval()
        _MODULES.clear()  # keep one: an evaluation plays one or two
        _MODULES[key] = module
    return _MODULES[key]


def module_moves(module: Any) -> MoveInterface | None:
    """The move interface of a module's spaces (catalogue or ``moves="legal"``), or None."""
    space = getattr(module, "observation_space", None)
    obs = space["observation"] if _is_dict(space) else space
    return MoveInterface.of_spaces(getattr(obs, "shape", None),
                                   getattr(getattr(module, "action_space", None), "n", None))


def _is_dict(space: Any) -> bool:
    try:
        return "observation" in space.spaces
    except (AttributeError, TypeError):
        return False


class RLlibAgent(BatchedPolicyAgent):
    """An RLlib policy as an agent: the legal move with the highest logit (what its
    masked distribution plays greedily). ``module``: an RLModule, or the ``PATH`` of
    ``rllib:PATH``."""

    def __init__(self, module: Any, spec: str | None = None, seed: int | None = None) -> None:
        if isinstance(module, (str, Path)):
            spec = spec or f"rllib:{module}"
            module = load_module(str(module))
        self.module, self.spec = module, spec or "rllib"
        self._dict_obs = _is_dict(getattr(module, "observation_space", None))
        self.moves = module_moves(module) or MoveInterface()

    def choose(self, infos: list[InfoSet]) -> list[int]:
        import torch
        from ray.rllib.core.columns import Columns

        if self.moves.legal:  # a module of the batched env's moves="legal" (slots)
            x, mask, ids = self.moves.encode_infos(infos)
            obs = {"observation": torch.from_numpy(x), "action_mask": torch.from_numpy(mask)}
            with torch.no_grad():
                logits = self.module.forward_inference({Columns.OBS: obs})[
                    Columns.ACTION_DIST_INPUTS].numpy()
            logits[mask == 0] = -np.inf
            return self.moves.chosen_ids(np.argmax(logits, 1), ids)

        x = torch.from_numpy(np.stack([encode_info(i) for i in infos]))
        if self._dict_obs:
            mask = np.zeros((len(infos), N_ACTIONS), np.int8)
            for row, info in enumerate(infos):
                mask[row, list(info.legal_actions)] = 1
            obs: Any = {"observation": x, "action_mask": torch.from_numpy(mask)}
        else:
            obs = x
        with torch.no_grad():
            logits = self.module.forward_inference({Columns.OBS: obs})[
                Columns.ACTION_DIST_INPUTS].numpy()
        out = []
        for row, info in enumerate(infos):
            legal = np.asarray(info.legal_actions, dtype=np.int64)
            out.append(int(legal[int(np.argmax(logits[row, legal]))]))
        return out


# RLlib 2.60's own notices on a normal run, which no setting of the caller avoids: every
# RLModule builds the deprecated RLModuleConfig itself, and PPO announces the API stack
# it runs on even when the config chooses it. Only these exact messages are dropped.
NOTICES = {"ray._common.deprecation": "RLModule(config=[RLModuleConfig object])",
           "ray.rllib.algorithms.algorithm_config": "on the new API stack! This is the new "
                                                    "default behavior"}


class _DropNotice(logging.Filter):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def filter(self, record: logging.LogRecord) -> bool:
        return self.text not in record.getMessage()


def quiet_rllib_notices() -> None:
    """Drop ``NOTICES`` from RLlib's loggers in this process (once)."""
    for name, text in NOTICES.items():
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DropNotice) and f.text == text for f in logger.filters):
            logger.addFilter(_DropNotice(text))


def _masked_module_class() -> type:
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import (
        DefaultPPOTorchRLModule,
    )
    from ray.rllib.core.columns import Columns
    from ray.rllib.utils.torch_utils import FLOAT_MIN

    class MaskedPPOModule(DefaultPPOTorchRLModule):
        """Encoder and heads see ``observation``; the logits of ids that are not legal
        are pushed to ``FLOAT_MIN`` before any distribution is built."""

        def __init__(self, *, observation_space: Any = None, **kwargs: Any) -> None:
            self.space_with_mask = observation_space
            super().__init__(observation_space=observation_space["observation"], **kwargs)

        def setup(self) -> None:
            super().setup()
            self.observation_space = self.space_with_mask  # what RLlib's connectors see

        def _split(self, batch: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
            obs = batch[Columns.OBS]
            return obs["action_mask"], {**batch, Columns.OBS: obs["observation"]}

        def _masked(self, out: dict[str, Any], mask: Any) -> dict[str, Any]:
            out[Columns.ACTION_DIST_INPUTS] = out[Columns.ACTION_DIST_INPUTS].masked_fill(
                mask == 0, FLOAT_MIN)
            return out

        def _forward_inference(self, batch: dict[str, Any], **kw: Any) -> dict[str, Any]:
            mask, batch = self._split(batch)
            return self._masked(super()._forward_inference(batch, **kw), mask)

        def _forward_exploration(self, batch: dict[str, Any], **kw: Any) -> dict[str, Any]:
            mask, batch = self._split(batch)
            return self._masked(super()._forward_exploration(batch, **kw), mask)

        def _forward_train(self, batch: dict[str, Any], **kw: Any) -> dict[str, Any]:
            mask, batch = self._split(batch)
            return self._masked(super()._forward_train(batch, **kw), mask)

        def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
            if isinstance(batch[Columns.OBS], dict):
                _, batch = self._split(batch)
            return super().compute_values(batch, embeddings)

    MaskedPPOModule.__module__ = __name__  # pickled by reference: checkpoints name it
    MaskedPPOModule.__qualname__ = "MaskedPPOModule"
    return MaskedPPOModule


def __getattr__(name: str) -> Any:
    """``MaskedPPOModule``, built (and kept) on first use: Ray is imported only then."""
    if name == "MaskedPPOModule":
        cls = globals()["MaskedPPOModule"] = _masked_module_class()
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["RLlibAgent", "load_module", "module_dir", "check_available", "INSTALL_HINT",
           "POLICY", "quiet_rllib_notices"]
