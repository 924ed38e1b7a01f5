"""The flat config layout of earlier versions (``learning_rate: ...`` at the top level):
each old key and its place now (``OLD_KEYS``), so that a config written for it gets one
line a key naming where the key went (``scopa_train.config``)."""

from __future__ import annotations

OLD_KEYS: dict[str, str] = {
    **{k: f"run.{k}" for k in ("name", "seed", "runs_dir", "device", "torch_threads",
                               "max_minutes")},
    "rules": "rules.name", "players": "rules.players", "rules_options": "rules.options",
    **{k: f"rollouts.{k}" for k in ("num_envs", "rollout_steps", "episode", "reward",
                                    "backend", "ray_address", "ray_workers")},
    **{k: f"network.{k}" for k in ("hidden_size", "hidden_layers", "action_hidden")},
    **{k: f"ppo.{k}" for k in ("total_env_steps", "reward_scale", "learning_rate",
                               "lr_final_fraction", "gamma", "gae_lambda", "update_epochs",
                               "num_minibatches", "clip_coef", "clip_vloss", "ent_coef",
                               "ent_coef_final", "vf_coef", "max_grad_norm", "norm_adv",
                               "target_kl", "endgame_coef", "past_snapshot_every",
                               "past_pool_size")},
    "algo": "kind",
    "last_deal_decisions": "fit.decisions", "last_deal_epochs": "fit.epochs",
    "last_deal_batch": "fit.batch", "last_deal_lr": "fit.lr",
    "last_deal_holdout": "fit.holdout",
    **{f"last_deal_{k}": f"last_deal.{k}" for k in ("width", "layers", "heads", "regret_coef",
                                                     "suit_augment", "buckets",
                                                     "ownership_coef")},
    "distill_decisions": "fit.decisions", "distill_epochs": "fit.epochs",
    "distill_batch": "fit.batch", "distill_lr": "fit.lr", "distill_holdout": "fit.holdout",
    **{f"distill_{k}": f"distill.{k}" for k in ("search", "search_decisions", "search_beta",
                                                 "search_workers", "search_values")},
    "eval_every_steps": "evaluation.every_steps", "eval_hands": "evaluation.hands",
    "eval_opponents": "evaluation.opponents", "eval_seed": "evaluation.seed",
    "best_metric": "evaluation.best_metric", "eval_workers": "(removed: evaluations run in "
    "the training process)",
    "checkpoint_every_steps": "checkpoints.every_steps", "keep_checkpoints": "checkpoints.keep",
}
"""Old key -> its ``section.key`` now (or, in parentheses, why it is gone)."""

__all__ = ["OLD_KEYS"]
