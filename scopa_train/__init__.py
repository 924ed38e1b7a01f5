"""PPO self-play training for Scopa: config, network, rollouts, PPO, checkpoints, CLI."""
