"""Where a stage runs: the learner's device (``run.device``), torch's threads
(``run.torch_threads``) and its deterministic algorithms, set when a stage starts."""

from __future__ import annotations

import os
from typing import Any

import torch

from .config import StageConfig
from .settings import ConfigError


def torch_device(cfg: StageConfig) -> torch.device:
    """The resolved ``run.device``; ``cuda`` without a GPU that torch can use is a
    ``ConfigError``."""
    d = cfg.run.device
    if d == "cpu" or (d == "auto" and not torch.cuda.is_available()):
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise ConfigError("config key 'run.device' is 'cuda' but torch sees no CUDA GPU "
                          f"(torch {torch.__version__}); use device: auto or cpu")
    return torch.device("cuda")


def set_up_torch(cfg: StageConfig, learner_device: Any) -> None:
    """Apply ``run.torch_threads`` and torch's deterministic algorithms: without them
    some multi-threaded CPU kernels add in an order that varies from run to run, and
    on a GPU the backward of the network's gathers adds with atomics. For a CUDA
    learner ``CUBLAS_WORKSPACE_CONFIG`` is set first (unless the user set it), as
    deterministic cuBLAS requires. Process-wide, as torch's thread count is."""
    torch.set_num_threads(threads(cfg))
    if learner_device.type == "cuda":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)


def threads(cfg: StageConfig) -> int:
    """``run.torch_threads`` resolved (0 = the CPU cores this process may use)."""
    if cfg.run.torch_threads:
        return cfg.run.torch_threads
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else (os.cpu_count() or 1)


__all__ = ["set_up_torch", "threads", "torch_device"]
