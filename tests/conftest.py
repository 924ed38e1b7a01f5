"""Fixtures shared by test modules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agents.commands import quiet_idle_threads

quiet_idle_threads()  # this process starts here: the commands' thread wait policy (torch)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """A local Ray cluster of 2 CPUs shared by one test module, shut down after it (the
    modules that use it skip, with the reason, where the ``ray`` extra is absent)."""
    import ray

    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    try:
        yield ray
    finally:
        ray.shutdown()
