"""A stage kind from outside the kit, in one file: REINFORCE (the policy gradient of
Monte-Carlo returns) on the kit's pool stage. docs/stage_kinds.md walks through it.

Register it from your package's pyproject.toml, and ``pip install`` that package::

    [project.entry-points."scopa.stage_kinds"]
    reinforce = "my_stage_kind:KIND"

then train it as any kind, resume, TensorBoard and ``ckpt:`` specs included::

    python train.py --config my_reinforce.yaml     # kind: reinforce, reinforce: {...}
    python train.py --help-config                  # lists the reinforce section
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from scopa_train.rollout import Batch, RolloutCollector, RolloutStats, batched_baseline
from scopa_train.settings import setting
from scopa_train.stages import StageKind
from scopa_train.stages.pool import PoolStage, check_ready, rollout_scalars


@dataclass
class ReinforceSection:
    """The kind's config section, ``reinforce:`` (every key typed, with a range and help)."""

    total_env_steps: int = setting(200_000, "environment moves to train for (all seats)",
                                   lo=0)
    learning_rate: float = setting(1e-3, "Adam learning rate", lo=0, hi=1, lo_open=True)
    reward_scale: float = setting(0.25, "rewards are multiplied by this for learning",
                                  lo=0, lo_open=True)
    past_snapshot_every: int = setting(10, "updates between snapshots added to the past "
                                       "pool", lo=1)
    past_pool_size: int = setting(5, "past snapshots kept (oldest dropped)", lo=1, hi=100)


class ReinforceStage(PoolStage):
    """REINFORCE against the opponent pool: one gradient step a rollout."""

    KIND = SECTION = "reinforce"

    def make_collector(self) -> RolloutCollector:
        import agents

        return RolloutCollector(self.cfg.make_env(), self.settings.reward_scale,
                                agents.make_agent, batched_baseline)

    def schedule(self) -> dict[str, float]:
        return {}  # a constant learning rate

    def returns(self) -> tuple[float, float]:
        return 1.0, 1.0  # gamma = lambda = 1: each decision's Monte-Carlo return

    def learn(self, batch: Batch, knobs: dict[str, float]) -> float:
        batch = batch.to(self.device)
        self.net.train()
        every = torch.arange(len(batch), device=self.device)
        logits, _ = self.net.forward_moves(batch.obs, batch.candidates(every))
        logp = torch.log_softmax(logits, -1).gather(1, batch.actions[:, None]).squeeze(1)
        loss = -(logp * batch.returns).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.net.eval()
        return float(loss.detach())

    def update_scalars(self, rs: RolloutStats, loss: Any, decisions: int,
                       knobs: dict[str, float]) -> dict[str, float]:
        return {"losses/reinforce": loss, "charts/decisions_per_rollout": decisions,
                **rollout_scalars(rs)}

    def describe(self) -> str:
        return self.describe_as("REINFORCE")


KIND = StageKind(
    name="reinforce", help="REINFORCE: the policy gradient of Monte-Carlo returns",
    sections={"reinforce": ReinforceSection}, reads=("checkpoints",),
    build=ReinforceStage.new, resume=ReinforceStage.from_checkpoint, check_ready=check_ready,
    from_policy=False)
