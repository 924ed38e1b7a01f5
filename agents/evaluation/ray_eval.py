"""Evaluation on Ray (``scopa eval ... --backend ray``, ``scopa ladder ... --backend ray``).

The evaluator's units of work (``agents.evaluation.evaluate.UnitJob``: a few paired deals or
matches, both seatings, with agents seeded from the unit) become Ray tasks, one CPU
each, spread over the cluster; the results are summarised exactly as the local ones,
so every figure but the timings equals the local run with the same seed.

A task whose worker process dies (killed, out of memory, a node lost) is run again by
Ray, up to ``TASK_RETRIES`` times, from the same job: the unit is deterministic, so a
retried unit gives the same result, counted once. An exception raised by the game or
an agent is not retried (it would raise again): it reaches the caller as itself.

Ray is an optional extra (``pip install -e .[ray]``), imported only here and only when
the Ray backend is asked for. ``connect`` is shared with the trainer's Ray rollouts.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

TASK_RETRIES = 3
INSTALL_HINT = "pip install -e .[ray]"


class RayBackendError(ValueError):
    """Ray is missing, cannot be reached, or lost a worker more often than allowed."""


def require_ray() -> Any:
    """The ``ray`` module; a ``RayBackendError`` naming the install command without it."""
    try:
        import ray
    except ImportError:
        raise RayBackendError(f"the Ray backend needs Ray, which is not installed: "
                              f"{INSTALL_HINT}") from None
    return ray


def explicit_auth_mode(address: str | None) -> None:
    """Where this process is about to start a new local Ray cluster (no ``address``, no
    ``RAY_ADDRESS``, no cluster ``ray start`` began here, Ray not yet imported), choose
    Ray's own default, token authentication, explicitly (``RAY_AUTH_MODE=token``, unless
    set): Ray then prints no notice about having chosen it. Ray reads the mode when it
    is imported, so this comes first."""
    if (address or "RAY_ADDRESS" in os.environ or "ray" in sys.modules
            or Path("/tmp/ray/ray_current_cluster").exists()):
        return
    os.environ.setdefault("RAY_AUTH_MODE", "token")


def connect(address: str | None = None) -> Any:
    """The ``ray`` module, connected. An initialised Ray (a test's cluster, a caller's
    ``ray.init``) is used as it is; otherwise ``address`` is joined: ``"auto"`` or
    ``HOST:PORT`` for a running cluster, empty/None for Ray's default (``RAY_ADDRESS``,
    else the cluster ``ray start`` began on this machine, else a new local one that ends
    with this process)."""
    explicit_auth_mode(address)
    ray = require_ray()
    if not ray.is_initialized():
        try:
            ray.init(address=address or None, logging_level="WARNING")
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise RayBackendError(f"cannot connect to the Ray cluster at "
                                  f"{address or 'the default address'}: "
                                  f"{str(e).splitlines()[0] if str(e) else type(e).__name__}"
                                  ) from None
    return ray


def unwrap(ray: Any, err: Exception) -> Exception:
    """The exception a Ray task raised, as itself (Ray wraps it in a ``RayTaskError``
    whose text holds the remote traceback)."""
    cause = getattr(err, "cause", None)
    return cause if isinstance(err, ray.exceptions.RayTaskError) and \
        isinstance(cause, Exception) else err


def run_units(play: Callable[[Any], Any], jobs: Sequence[Any], address: str | None = None
              ) -> Iterator[Any]:
    """``play(job)`` for each unit of work as Ray tasks (``play``: a deterministic
    module-level function, ``agents.evaluation.evaluate.play_unit``); each unit's result as it
    finishes (in any order, like the process pool)."""
    ray = connect(address)
    task = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(play)
    pending = [task.remote(job) for job in jobs]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            try:
                yield ray.get(done[0])
            except ray.exceptions.RayTaskError as e:
                raise unwrap(ray, e) from None
            except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError,
                    ray.exceptions.OutOfMemoryError) as e:
                raise RayBackendError(f"an evaluation task failed {TASK_RETRIES + 1} times "
                                      f"({type(e).__name__}); the evaluation stopped"
                                      ) from None
    finally:
        for ref in pending:  # stopped early (an error, Ctrl-C): free the cluster
            ray.cancel(ref, force=True)
