"""The agent spec ``sb3:PATH``: a Stable-Baselines3 ``MaskablePPO`` model (sb3-contrib)
trained on ``scopa/Scopa-v0`` (``agents.bridges.gym_env``, or the batched
``agents.bridges.sb3_vec``), playing the arg-max of its masked policy. Either move interface:
a catalogue model (observation 216, actions 16,204) or a ``moves="legal"`` one (observation
216 + K x 204, actions K), told apart by its spaces. sb3-contrib is an optional extra
(``pip install -e .[sb3]``), imported only when such an agent is built."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

from scopa_env.move_features import ACTION_DIM
from scopa_env.observation import InfoSet, encode_info

from .batched_policy import BatchedPolicyAgent
from .move_interface import MoveInterface

INSTALL_HINT = "pip install -e .[sb3]"
_MODELS: dict[tuple[str, int], Any] = {}  # (resolved path, mtime_ns) -> loaded model


def model_path(path: str) -> Path:
    """The model file of ``sb3:PATH`` (``PATH`` or ``PATH.zip``, as SB3 saves it)."""
    p = Path(path).expanduser()
    if p.is_file():
        return p
    if p.suffix != ".zip" and p.with_name(p.name + ".zip").is_file():
        return p.with_name(p.name + ".zip")
    raise ValueError(f"agent spec 'sb3:{path}': no such model file ({p} or {p}.zip)")


def check_available() -> None:
    """``ValueError`` naming the install command unless sb3-contrib can be imported."""
    if importlib.util.find_spec("sb3_contrib") is None:
        raise ValueError(f"agent spec 'sb3:PATH' needs sb3-contrib (Stable-Baselines3), which "
                         f"is not installed: {INSTALL_HINT}")


def load_model(path: str) -> Any:
    """The ``MaskablePPO`` model of ``path``, on the CPU (loaded once per file version)."""
    check_available()
    from sb3_contrib import MaskablePPO

    p = model_path(path).resolve()
    key = (str(p), p.stat().st_mtime_ns)
    if key not in _MODELS:
        try:
            model = MaskablePPO.load(str(p), device="cpu")
        except Exception as e:  # a zip that is not an SB3 model fails in many ways
            raise ValueError(f"agent spec 'sb3:{path}': {p} is not a MaskablePPO model "
                             f"({type(e).__name__}: {e})") from None
        if model_moves(model) is None:
            raise ValueError(f"agent spec 'sb3:{path}': the model's spaces (observation "
                             f"{getattr(model.observation_space, 'shape', None)}, actions "
                             f"{getattr(model.action_space, 'n', None)}) are not "
                             f"scopa/Scopa-v0's ((216,) and 16204, or with moves='legal' "
                             f"(216 + K x {ACTION_DIM},) and K)")
        _MODELS.clear()  # keep one model: an evaluation plays one or two
        _MODELS[key] = model
    return _MODELS[key]


def model_moves(model: Any) -> MoveInterface | None:
    """The move interface a model's spaces belong to, or None."""
    return MoveInterface.of_spaces(getattr(model.observation_space, "shape", None),
                                   getattr(model.action_space, "n", None))


class SB3Agent(BatchedPolicyAgent):
    """A ``MaskablePPO`` model as an agent: the legal move its policy rates highest (what
    ``model.predict(obs, action_masks=mask, deterministic=True)`` plays). Only the legal
    ids' rows of the output layer are computed: the policy's distribution over all 16,204
    ids costs far more than the network."""

    def __init__(self, path: str, seed: int | None = None) -> None:
        self.model = load_model(path)
        self.spec = f"sb3:{path}"
        self.moves = model_moves(self.model)
        head = self.model.policy.action_net
        self._w = head.weight.detach().cpu().numpy()  # (16204, latent)
        self._b = head.bias.detach().cpu().numpy()

    def _latent(self, obs: np.ndarray) -> np.ndarray:
        import torch

        policy = self.model.policy
        with torch.no_grad():
            x = torch.as_tensor(obs)
            features = policy.extract_features(x, policy.pi_features_extractor)
            return policy.mlp_extractor.forward_actor(features).numpy()

    def choose(self, infos: list[InfoSet]) -> list[int]:
        if self.moves.legal:  # the slots: the first K legal ids, ascending
            x, mask, ids = self.moves.encode_infos(infos)
            logits = self._latent(x) @ self._w.T + self._b
            logits[mask == 0] = -np.inf
            return self.moves.chosen_ids(np.argmax(logits, 1), ids)
        obs = np.stack([encode_info(i) for i in infos])
        latent = self._latent(obs)
        out = []
        for row, info in enumerate(infos):
            legal = np.asarray(info.legal_actions, dtype=np.int64)
            logits = self._w[legal] @ latent[row] + self._b[legal]
            out.append(int(legal[int(np.argmax(logits))]))
        return out


__all__ = ["SB3Agent", "load_model", "check_available", "model_path", "INSTALL_HINT"]
