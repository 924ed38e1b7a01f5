"""The batched env as a Stable-Baselines3 ``VecEnv``: ``MaskablePPO`` (sb3-contrib) trains on
N games stepped at once, action masks included.

```python
from sb3_contrib import MaskablePPO
from agents.bridges.sb3_vec import ScopaSB3VecEnv

env = ScopaSB3VecEnv(256, opponent="greedy", reward="points", episode="hand", moves="legal")
model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=4096)
model.learn(1_000_000)
model.save("runs/sb3/legal")      # then: scopa eval sb3:runs/sb3/legal.zip greedy
```

Options are ``ScopaVectorEnv``'s (``agents.bridges.gym_vector``: the opponent, rules,
reward, episode, ``moves``, ...). SB3 resets a finished game at once: the ending step's
info holds ``terminal_observation``, as SB3's own vector envs do. ``action_masks()``
(SB3's ``env_method("action_masks")``) gives every game's mask. Wrap it in
``VecMonitor`` for SB3's episode statistics. Needs ``pip install -e .[sb3]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

try:
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices
except ImportError:
    raise ImportError("agents.bridges.sb3_vec needs Stable-Baselines3, which is not "
                      "installed: pip install -e .[sb3]") from None

from .gym_vector import ScopaVectorEnv


class ScopaSB3VecEnv(VecEnv):
    """``num_envs`` Scopa games for Stable-Baselines3 (same-step autoreset)."""

    def __init__(self, num_envs: int, **options: Any) -> None:
        options.pop("autoreset_mode", None)
        self.env = ScopaVectorEnv(num_envs, autoreset_mode=AutoresetMode.SAME_STEP, **options)
        self.render_mode = None
        super().__init__(self.env.num_envs, self.env.single_observation_space,
                         self.env.single_action_space)
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        seed = self._seeds[0]  # one seed for the batch: the games' deals follow from it
        obs, info = self.env.reset(seed=seed)
        self._seeds = [None] * self.num_envs
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        obs, rewards, term, trunc, info = self.env.step(self._actions)
        self._actions = None
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for g in np.flatnonzero(term | trunc).tolist():
            infos[g] = {"terminal_observation": info["final_obs"][g],
                        "TimeLimit.truncated": bool(trunc[g] and not term[g])}
            if "illegal_action" in info and info["illegal_action"][g]:
                infos[g]["illegal_action"] = True
        return obs, rewards, term | trunc, infos

    def action_masks(self) -> np.ndarray:
        """(N, A) bool: every game's legal actions."""
        return self.env.action_masks()

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        rows = self._get_indices(indices)
        if method_name == "action_masks":  # sb3-contrib's get_action_masks stacks these
            masks = self.env.action_masks()
            return [masks[i] for i in rows]
        value = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [value for _ in rows]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        rows = self._get_indices(indices)
        if attr_name == "action_masks":
            return [self.env.action_masks for _ in rows]
        return [getattr(self.env, attr_name) if attr_name != "render_mode" else None
                for _ in rows]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.env, attr_name, value)

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None
                       ) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def has_attr(self, attr_name: str) -> bool:
        return hasattr(self, attr_name) or hasattr(self.env, attr_name)

    def close(self) -> None:
        self.env.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs


__all__ = ["ScopaSB3VecEnv"]
