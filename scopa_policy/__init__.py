"""Learned policies, for inference: move features, the network, the checkpoint format
and the policy agent. A trained agent loads with this package alone (no trainer).

Layers: ``scopa_env`` <- ``agents`` <- ``scopa_policy`` <- ``scopa_train``.

Importing this package sets no environment variable: the thread wait policy torch's
threads use is set where a process of the kit starts (``agents.commands.quiet_idle_threads``).
"""
