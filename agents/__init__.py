"""Agents: baselines (random, greedy, expert, pimc), learned policies and evaluation."""

from .base import Agent, RandomAgent

AGENTS = {"random": RandomAgent}


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """An agent from its spec string (``"random"``)."""
    name = spec.split(":", 1)[0]
    if name not in AGENTS:
        raise ValueError(f"unknown agent {spec!r}; known: {', '.join(AGENTS)}")
    return AGENTS[name](seed=seed)


__all__ = ["Agent", "RandomAgent", "make_agent", "AGENTS"]
