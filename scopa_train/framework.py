"""What every stage kind shares: counters, checkpoints, stops, progress, TensorBoard and
evaluation, written once.

A stage (``Stage``) trains one thing in one folder (its run directory) and says only
what it trains: ``loop`` (its body, which calls ``halted()`` between steps of work),
``policy_parts`` / ``training_parts`` / ``restore`` (what its checkpoints hold) and
``eval_policy`` (the policy the evaluator plays). The framework gives it:

- ``counters`` (``Counters``): updates, env steps, epochs, training seconds over every
  session, the best evaluation margin; saved in every checkpoint;
- ``halted()``: why to stop now: SIGINT / SIGTERM (the first Ctrl-C saves and stops,
  a second stops at once), ``run.max_minutes`` counted from the start of this
  invocation only (``deadline``), or a test's ``stop_after_updates``;
- ``save(tag)`` (atomic, ``latest.pt`` beside it, the newest ``checkpoints.keep``
  periodic ones kept) and ``save_policy(path)``;
- ``scalar(tag, value)``: TensorBoard, on one axis for a whole recipe: the step of
  every scalar is the seconds of training since the recipe began (``clock_offset``
  holds the seconds of the stages before), so ``tensorboard --logdir runs/RUN`` reads
  the recipe as one curve;
- ``evaluate()``: margins against ``evaluation.opponents`` (fixed deals), the rating,
  ``evaluations.jsonl``, ``eval/...`` scalars, ``best.pt`` by ``evaluation.best_metric``;
  ``evaluate_and_save()``, its cadence in env steps with the periodic checkpoints;
- the progress bar, and the end: ``final.pt`` when the stage is done, else
  ``latest.pt``, and ``policy.pt`` either way.
"""

from __future__ import annotations

import json
import math
import random
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from scopa_env.files import append_lines, write_atomic
from scopa_policy.checkpoint import (
    CheckpointError,
    build_model,
    clean_stale_temps,
    load_checkpoint,
    save_atomic,
)
from scopa_policy.network import NetConfig

from .config import PREVIOUS, ConfigError, StageConfig
from .device import set_up_torch, torch_device
from .policy_eval import calibrate, evaluate_policy

Log = Callable[[str], None]


@dataclass
class Counters:
    """Where a stage stands; saved in its checkpoints."""

    update: int = 0  # optimizer steps (PPO updates, minibatches) completed
    env_steps: int = 0  # environment moves played (all seats)
    learner_samples: int = 0  # decisions collected for learning
    wall_seconds: float = 0.0  # training time over all sessions
    epoch: int = 0  # fitting stages: epochs done ...
    step: int = 0  # ... and minibatches of the epoch in progress
    decisions: int = 0  # fitting stages: decisions collected
    collect_seconds: float = 0.0
    next_eval: int = 0  # PPO: env steps of the next evaluation ...
    next_checkpoint: int = 0  # ... and of the next periodic checkpoint
    best_margin: float = -math.inf

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["best_margin"] = None if math.isinf(self.best_margin) else self.best_margin
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Counters:
        names = {f.name for f in fields(cls)}
        c = cls(**{k: v for k, v in d.items() if k in names})
        if c.best_margin is None:
            c.best_margin = -math.inf
        return c


class StopFlag:
    """Set by SIGINT/SIGTERM; a second signal stops at once (``KeyboardInterrupt``)."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopFlag:
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                self._previous[sig] = signal.signal(sig, self._handle)
            except ValueError:  # not the main thread: no signal handling
                pass
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.signal is not None:
            raise KeyboardInterrupt
        self.signal = signum

    def __exit__(self, *exc: Any) -> None:
        for sig, prev in self._previous.items():
            signal.signal(sig, prev)


def _as_typed(path: Path) -> str:
    """``path`` as the user types it from the working folder: relative when inside it."""
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)


def interpreter() -> str:
    """The running Python as the user types it from the working folder: relative when
    inside it (``.venv/bin/python``), else its full path."""
    return _as_typed(Path(sys.executable))


def scopa_command() -> str:
    """The ``scopa`` command installed beside the running Python, as the user types it
    (``.venv/bin/scopa``); plain ``scopa`` where there is none beside it."""
    exe = Path(sys.executable).with_name("scopa")
    return _as_typed(exe) if exe.is_file() else "scopa"


def resume_command(run_dir: str | Path) -> str:
    """The command that continues ``run_dir``, in the form this process was started in:
    ``scopa train --resume RUN`` under the ``scopa`` command, else ``PYTHON train.py
    --resume RUN`` with the interpreter that runs now."""
    started = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path("train.py")
    typed = _as_typed(started)
    if started.name == "scopa":
        return f"{typed} train --resume {run_dir}"
    script = typed if started.name == "train.py" else "train.py"
    return f"{interpreter()} {script} --resume {run_dir}"


# -- run folders and weights -----------------------------------------------------------
def make_run_dir(cfg: StageConfig) -> Path:
    """``runs_dir/NAME-TIMESTAMP[-k]``, created; always inside ``runs_dir``."""
    runs = Path(cfg.run.runs_dir)
    if runs.exists() and not runs.is_dir():
        raise ConfigError(f"config key 'run.runs_dir' = {cfg.run.runs_dir!r} is a file, not "
                          f"a folder")
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = runs / f"{cfg.run.name}-{stamp}"
    path, k = base, 1
    while path.exists():
        k += 1
        path = Path(f"{base}-{k}")
    if path.resolve().parent != runs.resolve():
        raise ConfigError(f"config key 'run.name' = {cfg.run.name!r} would place the run "
                          f"outside runs_dir {cfg.run.runs_dir!r}")
    path.mkdir(parents=True)
    return path


def clean_run_temps(run_dir: Path, log: Log) -> None:
    """Remove temp checkpoint files that a killed save left in a run directory."""
    removed = clean_stale_temps(run_dir / "checkpoints") + clean_stale_temps(run_dir)
    if removed:
        log(f"removed {len(removed)} temporary file(s) left by an interrupted save in "
            f"{run_dir}")


def write_config(cfg: StageConfig, run_dir: Path) -> None:
    """The stage's resolved config as ``config.yaml`` in its folder."""
    write_atomic(yaml.safe_dump(cfg.to_dict(), sort_keys=False).encode(),
                 run_dir / "config.yaml", "write the stage's config to")


def init_path(cfg: StageConfig) -> str | Path:
    """The file ``init_from`` names (``pretrained``: the shipped weights for the rules)."""
    from scopa_policy.agent import pretrained_path

    if cfg.init_from == PREVIOUS:
        raise ConfigError(f"stage {cfg.name!r} starts from the previous stage's policy: run "
                          f"it as part of its recipe (train.py --config RECIPE), or give it "
                          f"init_from")
    return pretrained_path(cfg.make_rules()) if cfg.init_from == "pretrained" else cfg.init_from


def read_weights(path: str | Path) -> tuple[dict[str, torch.Tensor], dict[str, int]]:
    """The state dict and network shape of a checkpoint or policy file, read safely
    (``weights_only``); ``CheckpointError`` naming the file when it cannot be."""
    net = build_model(load_checkpoint(path))
    return net.state_dict(), net.cfg.to_dict()


def starting_weights(cfg: StageConfig) -> dict[str, torch.Tensor]:
    """The state dict ``init_from`` names; ``ConfigError`` when its network's shape is
    not the config's ``network`` section."""
    path = init_path(cfg)
    weights, shape = read_weights(path)
    n = cfg.network
    want = NetConfig(n.hidden_size, n.hidden_layers, n.action_hidden).to_dict()
    if shape != want:
        raise ConfigError(f"config key 'init_from': {path} holds a network of shape {shape}, "
                          f"the config's network section asks for {want}")
    return weights


def _rng_state(np_rng: np.random.Generator, device: torch.device) -> dict[str, Any]:
    st = np_rng.bit_generator.state
    out = {"python": list(random.getstate()[1]), "python_version": random.getstate()[0],
           "numpy": json.dumps(st), "torch": torch.get_rng_state()}
    if device.type == "cuda":  # the policy samples its moves there
        out["torch_cuda"] = torch.cuda.get_rng_state(device)
    return out


def _set_rng_state(state: dict[str, Any], np_rng: np.random.Generator,
                   device: torch.device) -> None:
    random.setstate((state["python_version"], tuple(state["python"]), None))
    np_rng.bit_generator.state = json.loads(state["numpy"])
    torch.set_rng_state(state["torch"])
    if device.type == "cuda" and "torch_cuda" in state:
        torch.cuda.set_rng_state(state["torch_cuda"], device)


def to_cpu(obj: Any) -> Any:
    """A deep copy of (nested dicts/lists of) tensors, with every tensor on the CPU."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu().clone()
    if isinstance(obj, dict):
        return {k: to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_cpu(v) for v in obj)
    return obj


def tag_name(spec: str) -> str:
    """An agent spec as a TensorBoard tag part (``pimc:worlds=4`` -> ``pimc_worlds4``)."""
    return spec.replace(":", "_").replace("=", "").replace(",", "_")


# -- the stage -------------------------------------------------------------------------
class Stage:
    """One stage of training in its folder; a subclass says what it trains (module
    docstring). ``clock_offset`` / ``steps_offset``: the training seconds and env steps
    of the recipe's stages before this one (the TensorBoard axis); ``deadline``: the
    ``time.perf_counter()`` at which this invocation's ``run.max_minutes`` ends."""

    KIND = "stage"
    CPU_ONLY = False  # the stage fits on the CPU whatever run.device says
    optimizer: torch.optim.Optimizer

    def __init__(self, cfg: StageConfig, run_dir: Path, *, progress: bool = True,
                 log: Log = print, clock_offset: float = 0.0, steps_offset: int = 0,
                 deadline: float | None = None) -> None:
        self.cfg, self.run_dir, self.progress, self.log = cfg, run_dir, progress, log
        self.clock_offset, self.steps_offset, self.deadline = clock_offset, steps_offset, deadline
        self.device = torch.device("cpu") if self.CPU_ONLY else torch_device(cfg)
        set_up_torch(cfg, self.device)
        random.seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        self.np_rng = np.random.default_rng(cfg.seed)
        self.rules = cfg.make_rules()
        self.counters = Counters(next_eval=cfg.evaluation.every_steps,
                                 next_checkpoint=cfg.checkpoints.every_steps)
        self.anchors: dict[str, float] | None = None
        self.writer: Any = None
        self.bar: Any = None
        self.last_eval: dict[str, Any] | None = None
        self._stop: StopFlag | None = None
        self._stop_after: int | None = None
        self._started = time.perf_counter()
        self._wall0 = 0.0

    # -- what a stage kind defines ---------------------------------------------------
    def loop(self) -> str | None:
        """The stage's work from where its counters stand; why it stopped early (the
        ``halted()`` reason), or None when it is done."""
        raise NotImplementedError

    def done(self) -> bool:
        """Whether the stage's work is complete."""
        raise NotImplementedError

    def policy_parts(self, training: bool) -> dict[str, Any]:
        """The policy file's contents (``policy_checkpoint``); with ``training``, as a
        training checkpoint sees them."""
        raise NotImplementedError

    def training_parts(self) -> dict[str, Any]:
        """What a resume needs besides the common parts."""
        return {"past_pool": []}

    def restore(self, ck: dict[str, Any]) -> None:
        """Load the stage's networks (and anything else) from its training checkpoint."""
        raise NotImplementedError

    def eval_policy(self) -> tuple[Any, Any]:
        """(policy network, last-deal scorer or None) that the evaluator plays."""
        raise NotImplementedError

    def progress_total(self) -> tuple[int, int, str]:
        """The progress bar's (total, value now, unit); a total of 0: not known."""
        raise NotImplementedError

    def describe(self) -> str:
        """A few words for the first log line (what is trained, its size)."""
        return self.KIND

    # -- resume ----------------------------------------------------------------------
    def load(self, ck: dict[str, Any]) -> None:
        """Continue from a training checkpoint of this stage."""
        try:
            self.restore(ck)
            self.optimizer.load_state_dict(ck["optimizer"])
        except ConfigError:  # the config, not the checkpoint, is at fault
            raise
        except (ValueError, RuntimeError, KeyError, TypeError) as e:
            raise CheckpointError(f"checkpoint {ck.get('path')!r} does not fit this config's "
                                  f"networks/optimizer: {str(e).splitlines()[0]}") from None
        try:
            self.counters = Counters.from_dict(ck["counters"])
            self.anchors = ck.get("anchors")
            if ck.get("rng"):
                _set_rng_state(ck["rng"], self.np_rng, self.device)
        except (ValueError, RuntimeError, KeyError, TypeError) as e:
            raise CheckpointError(f"checkpoint {ck.get('path')!r} is damaged: its resume "
                                  f"state cannot be restored ({type(e).__name__}: "
                                  f"{str(e).splitlines()[0] if str(e) else ''})") from None

    # -- checkpoints -------------------------------------------------------------------
    def checkpoint_dict(self) -> dict[str, Any]:
        ck = self.policy_parts(training=True)
        ck.update(kind="training", config=self.cfg.to_dict(),
                  counters=self.counters.to_dict(), anchors=self.anchors,
                  optimizer=to_cpu(self.optimizer.state_dict()),
                  rng=_rng_state(self.np_rng, self.device),
                  saved_at=datetime.now().isoformat(timespec="seconds"))
        ck.update(self.training_parts())
        return ck

    def save(self, tag: str) -> Path:
        """``checkpoints/{tag}.pt`` and ``latest.pt`` (both atomic); of the periodic
        ``step_*`` ones, the newest ``checkpoints.keep`` stay."""
        folder = self.run_dir / "checkpoints"
        folder.mkdir(parents=True, exist_ok=True)
        ck = self.checkpoint_dict()
        path = save_atomic(ck, folder / f"{tag}.pt")
        if tag != "latest":
            save_atomic(ck, folder / "latest.pt")
        if tag.startswith("step_"):
            for old in sorted(folder.glob("step_*.pt"))[:-self.cfg.checkpoints.keep]:
                old.unlink()
        return path

    def save_policy(self, path: Path) -> Path:
        ck = self.policy_parts(training=False)
        ck.update(counters=self.counters.to_dict(), config=self.cfg.to_dict())
        return save_atomic(ck, path)

    # -- the clock, stops, scalars -----------------------------------------------------
    def tick(self) -> float:
        """Bring ``counters.wall_seconds`` (training time over every session) up to
        now; the ``time.perf_counter()`` it read."""
        now = time.perf_counter()
        self.counters.wall_seconds = self._wall0 + now - self._started
        return now

    def halted(self) -> str | None:
        """Why to stop now (a signal, this invocation's ``max_minutes``, a test's update
        limit), or None; keeps the clock (``tick``)."""
        now = self.tick()
        if self._stop is not None and self._stop.signal is not None:
            return f"stopped by {signal.Signals(self._stop.signal).name}"
        if self.deadline is not None and now >= self.deadline:
            return f"run.max_minutes={self.cfg.run.max_minutes:g} of this invocation reached"
        if self._stop_after is not None and self.counters.update >= self._stop_after:
            return f"stopped after {self.counters.update} updates"
        return None

    def global_step(self) -> int:
        """The TensorBoard step: seconds of training since the recipe began."""
        return int(self.clock_offset + self.counters.wall_seconds)

    def scalar(self, tag: str, value: float) -> None:
        if value == value:  # NaN: nothing to draw
            self.writer.add_scalar(tag, value, self.global_step())

    def scalars(self, values: dict[str, float]) -> None:
        """Scalars at this moment, with ``charts/env_steps`` (the recipe's) and
        ``charts/wall_minutes`` beside them."""
        self.tick()
        for tag, value in values.items():
            self.scalar(tag, value)
        self.scalar("charts/env_steps", self.steps_offset + self.counters.env_steps)
        self.scalar("charts/wall_minutes", (self.clock_offset + self.counters.wall_seconds) / 60)

    def advance(self) -> None:
        """Move the progress bar to where the stage stands."""
        if self.bar is not None:
            total, value, _ = self.progress_total()
            self.bar.update((min(value, total) if total else value) - self.bar.n)
            post = {"update": str(self.counters.update)}
            for spec, m in (self.last_eval or {}).get("margins", {}).items():
                post[spec] = f"{m['mean']:+.2f}"
            self.bar.set_postfix(post, refresh=False)

    def record(self, entry: dict[str, Any]) -> None:
        """One line of ``evaluations.jsonl`` (appended whole, under the file's lock)."""
        append_lines(self.run_dir / "evaluations.jsonl", json.dumps(entry) + "\n",
                     doing="append an evaluation to")

    def restart_progress(self, total: int) -> None:
        """Give the bar its ``total`` and count its rate (and so its time left) from now:
        a fitting stage's epochs after the minutes of its collection."""
        if self.bar is not None:
            done = self.bar.n
            self.bar.reset(total=total)
            self.bar.initial = done
            self.bar.update(done)

    def say(self, line: str) -> None:
        """A log line that leaves the progress bar in place."""
        if self.bar is not None and not self.bar.disable and self.log is print:
            self.bar.write(line)
        else:
            self.log(line)

    # -- evaluation --------------------------------------------------------------------
    def evaluate(self) -> dict[str, Any]:
        """Margins against ``evaluation.opponents`` (appended to evaluations.jsonl,
        ``eval/...`` scalars, the log); a new best margin against ``best_metric`` saves
        ``best.pt`` and ``best_policy.pt``."""
        ev, r = self.cfg.evaluation, self.cfg.rules
        live = self.bar is not None and not self.bar.disable

        def status(text: str) -> None:
            if live:
                self.bar.set_description_str(text, refresh=True)

        if self.anchors is None:
            self.anchors = calibrate(ev.opponents, hands=ev.hands, seed=ev.seed, rules=r.name,
                                     players=r.players, options=r.options, status=status)
        t0 = time.perf_counter()
        net, last_deal = self.eval_policy()
        res = evaluate_policy(net, ev.opponents, hands=ev.hands, seed=ev.seed, rules=r.name,
                              players=r.players, options=r.options, anchors=self.anchors,
                              status=status, last_deal=last_deal)
        status(self.cfg.name)
        self.tick()
        c = self.counters
        res.update(env_steps=c.env_steps, update=c.update, epoch=c.epoch,
                   wall_seconds=c.wall_seconds,
                   recipe_seconds=self.clock_offset + c.wall_seconds,
                   eval_seconds=time.perf_counter() - t0)
        self.record(res)
        values = {"eval/rating_elo": res["rating"], "eval/seconds": res["eval_seconds"]}
        for spec, m in res["margins"].items():
            name = tag_name(spec)
            values.update({f"eval/margin_vs_{name}": m["mean"],
                           f"eval/margin_vs_{name}_ci_low": m["low"],
                           f"eval/margin_vs_{name}_ci_high": m["high"],
                           f"eval/match_win_share_vs_{name}": m["match_win_share"]})
        self.scalars(values)
        best = res["margins"].get(ev.best_metric)
        if best is not None and best["mean"] > c.best_margin:
            c.best_margin = best["mean"]
            self.save("best")
            self.save_policy(self.run_dir / "best_policy.pt")
        self.say(f"eval at {c.env_steps:,} env steps: " + ", ".join(
            f"{s} {m['mean']:+.3f} [{m['low']:+.3f}, {m['high']:+.3f}]"
            for s, m in res["margins"].items()) + f"; rating {res['rating']:.0f}")
        self.last_eval = res
        return res

    def evaluate_and_save(self) -> None:
        """For the kinds that count env steps (``ppo``, ``dmc``): evaluate every
        ``evaluation.every_steps`` env steps and save a periodic checkpoint every
        ``checkpoints.every_steps`` (each when the env steps cross the next mark)."""
        cfg, c = self.cfg, self.counters
        every = cfg.evaluation.every_steps
        if every and c.env_steps >= c.next_eval:
            c.next_eval = (c.env_steps // every + 1) * every
            self.evaluate()
        every = cfg.checkpoints.every_steps
        if every and c.env_steps >= c.next_checkpoint:
            c.next_checkpoint = (c.env_steps // every + 1) * every
            self.save(f"step_{c.env_steps:011d}")

    # -- the run -----------------------------------------------------------------------
    def train(self, stop_after_updates: int | None = None) -> dict[str, Any]:
        """Run the stage from where it stands until done or stopped; save; the outcome:
        ``reason``, ``finished``, ``checkpoint``, ``policy``, ``counters``,
        ``last_eval``, ``run_dir``."""
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm

        self._stop_after = stop_after_updates
        self._started, self._wall0 = time.perf_counter(), self.counters.wall_seconds
        if self.deadline is None and self.cfg.run.max_minutes:
            self.deadline = self._started + self.cfg.run.max_minutes * 60
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.writer = SummaryWriter(str(self.run_dir / "tensorboard"))
        if self.counters.update == 0:
            self.writer.add_text("config", "```\n" + yaml.safe_dump(self.cfg.to_dict())
                                 + "```", self.global_step())
        self.log(f"run directory: {self.run_dir}  ({self.describe()})")
        total, value, unit = self.progress_total()
        self.bar = tqdm(total=total or None, initial=min(value, total) if total else value,
                        unit=unit, unit_scale=True,
                        disable=not self.progress, dynamic_ncols=True, smoothing=0.0,
                        desc=self.cfg.name)
        try:
            with StopFlag() as stop:
                self._stop = stop
                reason = None if self.done() else self.loop()
                if reason is None and self.cfg.evaluation.every_steps and self._needs_final_eval():
                    self.evaluate()
        finally:
            self._stop = None
            self.bar.close()
        return self._finish(reason or "finished", stop.signal)

    def _needs_final_eval(self) -> bool:
        """A finished stage is evaluated once more unless it just was."""
        last, c = self.last_eval, self.counters
        return last is None or (last["env_steps"], last["update"]) != (c.env_steps, c.update)

    def _finish(self, reason: str, signum: int | None = None) -> dict[str, Any]:
        """``final.pt`` when done, else ``latest.pt``; ``policy.pt``; the outcome
        (``signal``: the signal that stopped it, or None)."""
        self.tick()
        c = self.counters
        final = self.done()
        path = self.save("final" if final else "latest")
        policy = self.save_policy(self.run_dir / "policy.pt")
        self.writer.flush()
        self.writer.close()
        self.log(f"{reason}: {c.update:,} updates, {c.env_steps:,} env steps, "
                 f"{c.wall_seconds / 60:.1f} min; checkpoint {path}; policy {policy}")
        return {"reason": reason, "finished": final, "signal": signum, "checkpoint": str(path),
                "policy": str(policy), "counters": c.to_dict(), "last_eval": self.last_eval,
                "run_dir": str(self.run_dir)}


__all__ = ["Counters", "Stage", "StopFlag", "clean_run_temps", "init_path", "interpreter",
           "make_run_dir", "read_weights", "resume_command", "scopa_command",
           "starting_weights", "tag_name", "to_cpu", "write_config"]
