"""What the baselines table's SB3 scripts share: SB3's loop stopped at the budget, a
snapshot every tenth of it (``protocol.Clock``), and the final model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from protocol import Clock, too_small


def learn_for_budget(model: Any, args: Any, name: str, env_steps: Callable[[], int],
                     epochs: int) -> tuple[float, int, list[dict[str, Any]], str]:
    """``model.learn`` until ``args.minutes`` of training are spent, saving a snapshot
    (``args.out/snapshots/model_NN.zip``) every tenth of the budget once an update is
    done, then the final model (``args.out/model.zip``). The training seconds, updates,
    the snapshots (``minutes``, ``env_steps`` from ``env_steps()``, ``spec``) and the final
    agent spec; exits with ``too_small``'s line when no update finished."""
    from stable_baselines3.common.callbacks import BaseCallback

    snapshots: list[dict[str, Any]] = []

    def snapshot(clock: Clock, final: bool = False) -> str:
        path = args.out / "model.zip" if final else \
            args.out / "snapshots" / f"model_{len(snapshots):02d}.zip"
        model.save(str(path))
        snapshots.append({"minutes": clock.seconds() / 60, "env_steps": env_steps(),
                          "spec": f"sb3:{path}"})
        return f"sb3:{path}"

    class Budget(BaseCallback):
        """Snapshots every tenth of the budget; stops at its end."""

        def __init__(self) -> None:
            super().__init__()
            self.clock: Clock | None = None
            self.first_update: float | None = None

        def _on_training_start(self) -> None:
            self.clock = Clock(args.minutes)

        def _on_rollout_start(self) -> None:  # after each update (and before the first)
            assert self.clock is not None
            if self.first_update is None and model._n_updates:
                self.first_update = self.clock.seconds()

        def _on_step(self) -> bool:
            assert self.clock is not None
            if self.clock.snapshot_due() and model._n_updates:
                snapshot(self.clock)
            return not self.clock.over()

    budget = Budget()
    model.learn(total_timesteps=10**12, callback=budget)
    clock = budget.clock
    assert clock is not None
    seconds = min(clock.seconds(), clock.budget)  # learn() ends within a step
    updates = model._n_updates // epochs
    if not updates:
        too_small(name, args.minutes, budget.first_update)
    spec = snapshot(clock, final=True)
    snapshots[-1]["minutes"] = seconds / 60
    return seconds, updates, snapshots, spec
