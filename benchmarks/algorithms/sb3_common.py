"""What the baselines table's SB3 scripts share: SB3's loop stopped at the budget, with a
snapshot every tenth of it (``protocol.Clock``)."""

from __future__ import annotations

from typing import Any

from protocol import Clock


def learn_for_budget(model: Any, minutes: float, snapshot: Any) -> tuple[Clock, float | None]:
    """``model.learn`` until ``minutes`` of training are spent; ``snapshot(clock, name)``
    every tenth of the budget once an update is done. The clock and when the first
    update ended (None: none did)."""
    from stable_baselines3.common.callbacks import BaseCallback

    class Budget(BaseCallback):
        """Snapshots every tenth of the budget; stops at its end."""

        def __init__(self) -> None:
            super().__init__()
            self.clock: Clock | None = None
            self.first_update: float | None = None

        def _on_training_start(self) -> None:
            self.clock = Clock(minutes)

        def _on_rollout_start(self) -> None:  # after each update (and before the first)
            assert self.clock is not None
            if self.first_update is None and model._n_updates:
                self.first_update = self.clock.seconds()

        def _on_step(self) -> bool:
            assert self.clock is not None
            if self.clock.snapshot_due() and model._n_updates:
                snapshot(self.clock, "model_%02d")
            return not self.clock.over()

    budget = Budget()
    model.learn(total_timesteps=10**12, callback=budget)
    assert budget.clock is not None
    return budget.clock, budget.first_update
