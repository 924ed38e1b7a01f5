"""The stage kinds, one module each, on the shared framework (``scopa_train.framework``):
``ppo_selfplay`` (kind ``ppo``), ``last_deal_scorer`` (kind ``last_deal``) and
``suit_distill`` (kind ``suit_distill``), the last two on ``fitting``'s collect-then-fit
loop, and ``dmc`` (kind ``dmc``, Deep Monte-Carlo). Each module has ``check_ready(cfg)``,
``build(cfg, folder, ...)`` and ``resume(checkpoint, cfg, folder, ...)``;
``scopa_train.recipe`` runs them in order."""
