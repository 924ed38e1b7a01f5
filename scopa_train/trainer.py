"""The training loop: PPO self-play on the batched environment, read top to bottom.

    for each update (``Trainer.train``):
        schedule    learning rate and entropy coefficient, linear in the fraction of
                    updates done (per update, not per env step)
        rollout     pick an opponent for every game from the pool (self / past snapshot /
                    baseline), play ``rollout_steps`` moves per game, GAE (rollout.py)
        update      PPO epochs over shuffled minibatches (ppo.py); a snapshot joins the
                    past pool every ``past_snapshot_every`` updates
        log         TensorBoard scalars, the progress bar
        evaluate    every ``eval_every_steps`` env steps, against the baselines (fixed
        and save    seeds; best checkpoint by ``best_metric``); a periodic checkpoint
                    every ``checkpoint_every_steps``
        stop        on SIGINT / SIGTERM, ``max_minutes`` or ``stop_after_updates``
    then a final evaluation, the final (or latest) checkpoint and a small policy file

SIGINT / SIGTERM set a flag: the update in progress finishes, a checkpoint is saved
and ``train`` returns normally.
"""

from __future__ import annotations

import json
import math
import random
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from scopa_policy.checkpoint import (
    FORMAT,
    VERSION,
    CheckpointError,
    build_model,
    clean_stale_temps,
    load_checkpoint,
    policy_checkpoint,
    save_atomic,
)
from scopa_policy.features import ACTION_DIM
from scopa_policy.network import NetConfig, PolicyNet, count_parameters

from .config import ConfigError, TrainConfig, config_from_dict
from .evaluation import calibrate, evaluate_policy
from .ppo import UpdateStats, ppo_update
from .rollout import PAST, Batch, RolloutCollector, RolloutStats, sample_opponents


@dataclass
class Counters:
    update: int = 0  # updates completed
    env_steps: int = 0
    learner_samples: int = 0  # decisions collected for learning
    wall_seconds: float = 0.0  # training time over all sessions
    next_eval: int = 0
    next_checkpoint: int = 0
    best_margin: float = -math.inf

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["best_margin"] = None if math.isinf(self.best_margin) else self.best_margin
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Counters:
        c = cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})
        if c.best_margin is None:
            c.best_margin = -math.inf
        return c


class _StopFlag:
    """Set by SIGINT/SIGTERM; the loop checks it between updates."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _StopFlag:
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                self._previous[sig] = signal.signal(sig, self._handle)
            except ValueError:  # not the main thread: no signal handling
                pass
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.signal is not None:  # second Ctrl-C: stop now
            raise KeyboardInterrupt
        self.signal = signum

    def __exit__(self, *exc: Any) -> None:
        for sig, prev in self._previous.items():
            signal.signal(sig, prev)


def rollout_length(cfg: TrainConfig) -> int:
    """Moves per game per rollout; whole hands with one-hand episodes (every hand of a
    rule set has exactly 40 - table_size moves)."""
    if cfg.episode != "hand":
        return cfg.rollout_steps
    per_hand = 40 - cfg.make_rules().table_size
    return per_hand * max(1, math.ceil(cfg.rollout_steps / per_hand))


def save_run_checkpoint(ck: dict[str, Any], folder: Path, tag: str) -> Path:
    """``folder/{tag}.pt``, and ``latest.pt`` too unless that is the tag (both atomic)."""
    path = save_atomic(ck, folder / f"{tag}.pt")
    if tag != "latest":
        save_atomic(ck, folder / "latest.pt")
    return path


def make_run_dir(cfg: TrainConfig) -> Path:
    """``runs_dir/NAME-TIMESTAMP[-k]/checkpoints``, created; always inside ``runs_dir``."""
    runs = Path(cfg.runs_dir)
    if runs.exists() and not runs.is_dir():
        raise ConfigError(f"config key 'runs_dir' = {cfg.runs_dir!r} is a file, not a folder")
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = runs / f"{cfg.name}-{stamp}"
    path, k = base, 1
    while path.exists():
        k += 1
        path = Path(f"{base}-{k}")
    if path.resolve().parent != runs.resolve():
        raise ConfigError(f"config key 'name' = {cfg.name!r} would place the run outside "
                          f"runs_dir {cfg.runs_dir!r}")
    (path / "checkpoints").mkdir(parents=True)
    return path


def clean_run_temps(run_dir: Path, log: Callable[[str], None]) -> None:
    """Remove temp checkpoint files that a killed save left in a run directory."""
    removed = clean_stale_temps(run_dir / "checkpoints") + clean_stale_temps(run_dir)
    if removed:
        log(f"removed {len(removed)} temporary file(s) left by an interrupted save in "
            f"{run_dir}")


def check_eval_opponents(cfg: TrainConfig) -> None:
    """Build every evaluation opponent once (a ``ckpt:`` file is read), so a missing or
    bad one fails before the run starts, not at the first evaluation."""
    import agents

    if not cfg.eval_every_steps:
        return
    for spec in cfg.eval_opponents:
        try:
            agents.make_agent(spec, seed=0)
        except ValueError as e:
            raise ConfigError(f"config key 'eval_opponents': {spec!r}: {e}") from None


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


def batched_baseline(kind: str, env: Any, games: np.ndarray, rng: np.random.Generator
                     ) -> np.ndarray | None:
    """Baseline moves as array code over the vector env (``agents.batched``), or None
    for a kind without a batched form (then per-game agents play)."""
    from agents.baselines.batched import BATCHED, batched_actions

    return batched_actions(kind, env, games, rng) if kind in BATCHED else None


def make_collector(cfg: TrainConfig) -> Any:
    """The rollout collector of a run: ``cfg.num_envs`` games in one vector env, the
    baselines played by ``agents`` (batched where they have a batched form); with
    ``backend: ray``, the same interface over Ray actors (``ray_backend``)."""
    import agents
    from scopa_env.vector import VectorScopaEnv

    if cfg.backend == "ray":
        from .ray_backend import RayRolloutCollector

        return RayRolloutCollector(cfg, agents.make_agent, batched_baseline)
    env = VectorScopaEnv(cfg.num_envs, rules=cfg.rules, reward=cfg.reward,
                         episode=cfg.episode, seed=cfg.seed, records=False,
                         **cfg.rules_kwargs)
    return RolloutCollector(env, cfg.reward_scale, agents.make_agent, batched_baseline,
                            teacher=make_teacher(cfg))


def make_teacher(cfg: TrainConfig) -> Any:
    """The exact last-deal teacher when ``endgame_coef`` > 0 (else None)."""
    if cfg.endgame_coef <= 0:
        return None
    from agents.baselines.endgame import EndgameSolver

    return EndgameSolver(cfg.make_rules())


def _to_cpu(obj: Any) -> Any:
    """A deep copy of (nested dicts/lists of) tensors, with every tensor on the CPU."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu().clone()
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_cpu(v) for v in obj)
    return obj


@dataclass
class _Session:
    """What one call of ``Trainer.train`` keeps between updates."""

    writer: Any  # the TensorBoard SummaryWriter
    bar: Any  # the tqdm progress bar
    total_steps: int
    started: float = field(default_factory=time.perf_counter)
    steps_at_start: int = 0
    wall_at_start: float = 0.0
    last_eval: dict[str, Any] | None = None

    def seconds(self) -> float:
        return time.perf_counter() - self.started


class Trainer:
    def __init__(self, cfg: TrainConfig, run_dir: Path, resume: dict[str, Any] | None = None,
                 progress: bool = True, log: Callable[[str], None] = print) -> None:
        self.cfg, self.run_dir, self.progress, self.log = cfg, run_dir, progress, log
        self.device = cfg.torch_device()
        cfg.set_up_torch(self.device)
        random.seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        self.np_rng = np.random.default_rng(cfg.seed)
        self.rules = cfg.make_rules()
        self.net = PolicyNet(NetConfig(cfg.hidden_size, cfg.hidden_layers, cfg.action_hidden))
        self.net.to(self.device).eval()
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=cfg.learning_rate,
                                          eps=1e-5)
        self.past_pool: list[dict[str, torch.Tensor]] = []
        self.counters = Counters(next_eval=cfg.eval_every_steps,
                                 next_checkpoint=cfg.checkpoint_every_steps)
        self.anchors: dict[str, float] | None = None
        self.collector = make_collector(cfg)
        self.steps_per_rollout = rollout_length(cfg)
        per_update = cfg.num_envs * self.steps_per_rollout
        self.num_updates = max(1, math.ceil(cfg.total_env_steps / per_update))
        if resume is not None:
            self._restore(resume)
        elif PAST in cfg.opponents:
            self.past_pool.append(self._snapshot())
        self.writer: Any = None

    # -- state ------------------------------------------------------------------------
    def _snapshot(self) -> dict[str, torch.Tensor]:
        """The network's weights, copied to the CPU (checkpoints load on any device)."""
        return {k: v.detach().cpu().clone() for k, v in self.net.state_dict().items()}

    def load_weights(self, state: dict[str, torch.Tensor]) -> None:
        """Start from these weights (the past pool, if any, starts from them too)."""
        try:
            self.net.load_state_dict(state)
        except (RuntimeError, KeyError) as e:
            raise ConfigError(f"the starting weights do not fit the config's network: "
                              f"{str(e).strip().splitlines()[0]}") from None
        self.past_pool = [self._snapshot()] if self.past_pool else []

    def _restore(self, ck: dict[str, Any]) -> None:
        try:
            self.net.load_state_dict(ck["model"])
            self.optimizer.load_state_dict(ck["optimizer"])
        except (ValueError, RuntimeError, KeyError, TypeError) as e:
            raise CheckpointError(f"checkpoint {ck.get('path')!r} does not fit this config's "
                                  f"network/optimizer: {str(e).splitlines()[0]}") from None
        try:
            self.past_pool = [dict(sd) for sd in ck["past_pool"]]
            self.counters = Counters.from_dict(ck["counters"])
            self.anchors = ck.get("anchors")
            _set_rng_state(ck["rng"], self.np_rng, self.device)
        except (ValueError, RuntimeError, KeyError, TypeError) as e:
            raise CheckpointError(f"checkpoint {ck.get('path')!r} is damaged: its resume "
                                  f"state cannot be restored ({type(e).__name__}: "
                                  f"{str(e).splitlines()[0] if str(e) else ''})") from None

    def checkpoint_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "kind": "training",
                "net": {**self.net.cfg.to_dict(), "action_dim": ACTION_DIM},
                "rules": self.rules.to_dict(),
                "config": self.cfg.to_dict(), "model": self._snapshot(),
                "optimizer": _to_cpu(self.optimizer.state_dict()),
                "past_pool": self.past_pool, "rng": _rng_state(self.np_rng, self.device),
                "counters": self.counters.to_dict(), "anchors": self.anchors,
                "saved_at": datetime.now().isoformat(timespec="seconds")}

    def save(self, tag: str) -> Path:
        """``checkpoints/{tag}.pt`` plus ``latest.pt`` (both atomic)."""
        folder = self.run_dir / "checkpoints"
        path = save_run_checkpoint(self.checkpoint_dict(), folder, tag)
        if tag.startswith("step_"):
            periodic = sorted(folder.glob("step_*.pt"))
            for old in periodic[:-self.cfg.keep_checkpoints]:
                old.unlink()
        return path

    def save_policy(self, path: Path) -> Path:
        meta = {"counters": self.counters.to_dict(), "config": self.cfg.to_dict()}
        return save_atomic(policy_checkpoint(self.net, self.rules.to_dict(), meta), path)

    # -- evaluation -------------------------------------------------------------------
    def evaluate(self, status: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Margins against ``eval_opponents`` (appended to evaluations.jsonl);
        ``status(text)`` hears which opponent is being played and how far it is."""
        cfg = self.cfg
        if self.anchors is None:
            self.anchors = calibrate(cfg.eval_opponents, hands=cfg.eval_hands,
                                     seed=cfg.eval_seed, rules=cfg.rules, players=cfg.players,
                                     options=cfg.rules_options, workers=cfg.eval_workers,
                                     status=status)
        t0 = time.perf_counter()
        res = evaluate_policy(self.net, cfg.eval_opponents, hands=cfg.eval_hands,
                              seed=cfg.eval_seed, rules=cfg.rules, players=cfg.players,
                              options=cfg.rules_options, anchors=self.anchors, status=status)
        res.update(env_steps=self.counters.env_steps, update=self.counters.update,
                   wall_seconds=self.counters.wall_seconds,
                   eval_seconds=time.perf_counter() - t0)
        with open(self.run_dir / "evaluations.jsonl", "a") as fh:
            fh.write(json.dumps(res) + "\n")
        return res

    # -- the loop ---------------------------------------------------------------------
    def train(self, stop_after_updates: int | None = None) -> dict[str, Any]:
        """Train until ``num_updates`` updates are done (or a stop); the outcome."""
        session = self._open_session()
        reason = "finished"
        with _StopFlag() as stop:
            while self.counters.update < self.num_updates:
                lr, ent_coef = self._schedule()
                batch, rollout_stats = self._rollout()
                update_stats = self._update(batch, ent_coef)
                self._log(session, rollout_stats, update_stats, len(batch), lr=lr,
                          ent_coef=ent_coef)
                self._evaluate_and_save(session)
                why = self._stop_reason(stop.signal, stop_after_updates)
                if why is not None:
                    reason = why
                    break
            return self._finish(session, reason)

    def _open_session(self) -> _Session:
        """TensorBoard writer (the config as text on a fresh run), the progress bar."""
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm

        cfg, c = self.cfg, self.counters
        self.writer = writer = SummaryWriter(str(self.run_dir / "tensorboard"))
        if c.update == 0:
            writer.add_text("config", "```\n" + yaml.safe_dump(cfg.to_dict()) + "```", 0)
        self.log(f"run directory: {self.run_dir}  ({count_parameters(self.net):,} parameters, "
                 f"{self.num_updates} updates of {cfg.num_envs} games x "
                 f"{self.steps_per_rollout} moves)")
        total = self.num_updates * cfg.num_envs * self.steps_per_rollout
        # the rate shown is env steps per wall-clock second over this session
        # (smoothing=0): rollouts, updates and evaluations together
        bar = tqdm(total=total, initial=min(c.env_steps, total), unit=" env steps",
                   unit_scale=True, disable=not self.progress, dynamic_ncols=True,
                   smoothing=0.0, desc="training")
        return _Session(writer, bar, total, steps_at_start=c.env_steps,
                        wall_at_start=c.wall_seconds)

    def _schedule(self) -> tuple[float, float]:
        """This update's learning rate (set on the optimizer) and entropy coefficient:
        linear in the fraction of updates done, from the config's start values to
        ``lr_final_fraction`` of the rate and to ``ent_coef_final``."""
        cfg = self.cfg
        frac = self.counters.update / self.num_updates
        lr = cfg.learning_rate * (1.0 - frac * (1.0 - cfg.lr_final_fraction))
        ent_coef = cfg.ent_coef + frac * (cfg.ent_coef_final - cfg.ent_coef)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        return lr, ent_coef

    def _rollout(self) -> tuple[Batch, RolloutStats]:
        """Opponents for every game (and the learner's team), a past snapshot if one
        plays, then one rollout with GAE on fresh deals seeded by the update number."""
        cfg = self.cfg
        kinds = sample_opponents(self.np_rng, cfg.opponents, cfg.num_envs,
                                 have_past=bool(self.past_pool))
        learner_team = self.np_rng.integers(0, 2, cfg.num_envs)
        past_net = None
        if PAST in kinds:
            past_net = PolicyNet(self.net.cfg)
            pick = int(self.np_rng.integers(len(self.past_pool)))
            past_net.load_state_dict(self.past_pool[pick])
            past_net.to(self.device).eval()
        seed = (cfg.seed * 1_000_003 + self.counters.update) % (2**63)
        return self.collector.collect(self.net, past_net, kinds, learner_team,
                                      self.steps_per_rollout, reset_seed=seed, agent_seed=seed,
                                      gamma=cfg.gamma, lam=cfg.gae_lambda)

    def _update(self, batch: Batch, ent_coef: float) -> UpdateStats:
        """PPO on the rollout; the counters move on; every ``past_snapshot_every``
        updates the network joins the past pool (the oldest leave it)."""
        cfg, c = self.cfg, self.counters
        stats = ppo_update(self.net, self.optimizer, batch, self.np_rng,
                           epochs=cfg.update_epochs, num_minibatches=cfg.num_minibatches,
                           clip_coef=cfg.clip_coef, clip_vloss=cfg.clip_vloss,
                           ent_coef=ent_coef, vf_coef=cfg.vf_coef,
                           max_grad_norm=cfg.max_grad_norm, norm_adv=cfg.norm_adv,
                           target_kl=cfg.target_kl, endgame_coef=cfg.endgame_coef)
        c.update += 1
        c.learner_samples += len(batch)
        if c.update % cfg.past_snapshot_every == 0 and PAST in cfg.opponents:
            self.past_pool.append(self._snapshot())
            del self.past_pool[:-cfg.past_pool_size]
        return stats

    def _log(self, session: _Session, rs: RolloutStats, us: UpdateStats, decisions: int, *,
             lr: float, ent_coef: float) -> None:
        """Counters of env steps and time, TensorBoard scalars, the progress bar."""
        c = self.counters
        c.env_steps += rs.env_steps
        c.wall_seconds = session.wall_at_start + session.seconds()
        step = c.env_steps
        scalars = update_scalars(rs, us, decisions, lr=lr, ent_coef=ent_coef, counters=c,
                                 past_pool=len(self.past_pool),
                                 overall=(step - session.steps_at_start)
                                 / max(session.seconds(), 1e-9))
        for tag, value in scalars.items():
            if value == value:  # skip NaN
                session.writer.add_scalar(tag, value, step)
        bar = session.bar
        bar.update(min(step, session.total_steps) - bar.n)
        bar.set_postfix(_postfix(c.update, self.num_updates, session.last_eval), refresh=False)

    def _evaluate_and_save(self, session: _Session) -> None:
        """Evaluate every ``eval_every_steps`` env steps and save a periodic checkpoint
        every ``checkpoint_every_steps`` (each when the env steps cross the next mark)."""
        cfg, c = self.cfg, self.counters
        step = c.env_steps
        if cfg.eval_every_steps and step >= c.next_eval:
            c.next_eval = (step // cfg.eval_every_steps + 1) * cfg.eval_every_steps
            session.last_eval = self._log_eval(step, session.bar)
            session.bar.set_postfix(_postfix(c.update, self.num_updates, session.last_eval))
        if cfg.checkpoint_every_steps and step >= c.next_checkpoint:
            c.next_checkpoint = ((step // cfg.checkpoint_every_steps + 1)
                                 * cfg.checkpoint_every_steps)
            self.save(f"step_{step:011d}")

    def _stop_reason(self, signum: int | None, stop_after_updates: int | None) -> str | None:
        """Why the loop stops before its last update (None: it goes on)."""
        c, cfg = self.counters, self.cfg
        if signum is not None:
            return f"stopped by {signal.Signals(signum).name}"
        if cfg.max_minutes and c.wall_seconds >= cfg.max_minutes * 60:
            return f"max_minutes={cfg.max_minutes} reached"
        if stop_after_updates is not None and c.update >= stop_after_updates:
            return f"stopped after {c.update} updates"
        return None

    def _finish(self, session: _Session, reason: str) -> dict[str, Any]:
        """Close the bar; a finished run is evaluated once more (unless it just was) and
        saved as ``final``, a stopped one as ``latest``; the policy file; the outcome."""
        cfg, c = self.cfg, self.counters
        session.bar.close()
        final = c.update >= self.num_updates
        last_eval = session.last_eval
        if final and cfg.eval_every_steps and (last_eval is None
                                                or last_eval["env_steps"] != c.env_steps):
            last_eval = self._log_eval(c.env_steps)  # the bar is closed
        path = self.save("final" if final else "latest")
        policy = self.save_policy(self.run_dir / "policy.pt")
        session.writer.flush()
        session.writer.close()
        self.log(f"{reason}: {c.update} updates, {c.env_steps:,} env steps, "
                 f"{c.wall_seconds / 60:.1f} min; checkpoint {path}; policy {policy}")
        return {"reason": reason, "finished": final, "checkpoint": str(path),
                "policy": str(policy), "counters": c.to_dict(), "last_eval": last_eval}

    def _log_eval(self, step: int, bar: Any = None) -> dict[str, Any]:
        live = bar is not None and not bar.disable

        def status(text: str) -> None:
            if live:
                bar.set_description_str(text, refresh=True)

        res = self.evaluate(status)
        status("training")
        w = self.writer
        for spec, m in res["margins"].items():
            name = spec.replace(":", "_").replace("=", "").replace(",", "_")
            w.add_scalar(f"eval/margin_vs_{name}", m["mean"], step)
            w.add_scalar(f"eval/margin_vs_{name}_ci_low", m["low"], step)
            w.add_scalar(f"eval/margin_vs_{name}_ci_high", m["high"], step)
            w.add_scalar(f"eval/match_win_share_vs_{name}", m["match_win_share"], step)
        w.add_scalar("eval/rating_elo", res["rating"], step)
        w.add_scalar("eval/seconds", res["eval_seconds"], step)
        best = res["margins"].get(self.cfg.best_metric)
        if best is not None and best["mean"] > self.counters.best_margin:
            self.counters.best_margin = best["mean"]
            self.save("best")
            self.save_policy(self.run_dir / "best_policy.pt")
        line = f"eval at {step:,} env steps: " + ", ".join(
            f"{s} {m['mean']:+.3f} [{m['low']:+.3f}, {m['high']:+.3f}]"
            for s, m in res["margins"].items()) + f"; rating {res['rating']:.0f}"
        if live and self.log is print:
            bar.write(line)  # above the bar, which stays in place
        else:
            self.log(line)
        return res


def _postfix(update: int, updates: int, last_eval: dict[str, Any] | None) -> dict[str, str]:
    """The progress bar's tail: updates done, the last evaluation's margins."""
    post = {"update": f"{update}/{updates}"}
    for spec, m in (last_eval or {}).get("margins", {}).items():
        post[spec] = f"{m['mean']:+.2f}"
    return post


def update_scalars(rs: RolloutStats, us: UpdateStats, decisions: int, *, lr: float,
                   ent_coef: float, counters: Counters, past_pool: int, overall: float
                   ) -> dict[str, float]:
    """The TensorBoard scalars of one update, by tag (docs/training.md lists them)."""
    scalars = {
        "losses/policy": us.policy_loss, "losses/value": us.value_loss,
        "losses/entropy": us.entropy, "losses/approx_kl": us.approx_kl,
        "losses/old_approx_kl": us.old_approx_kl, "losses/clip_fraction": us.clip_fraction,
        "losses/explained_variance": us.explained_variance,
        "charts/learning_rate": lr, "charts/entropy_coef": ent_coef,
        "charts/env_steps_per_second": rs.env_steps / max(rs.seconds, 1e-9),
        "charts/learner_samples_per_second": us.samples / max(us.seconds, 1e-9),
        "charts/overall_env_steps_per_second": overall,
        "charts/rollout_seconds": rs.seconds, "charts/update_seconds": us.seconds,
        "charts/policy_forward_seconds": rs.policy_seconds,
        "charts/opponent_seconds": rs.opponent_seconds,
        "charts/decisions_per_rollout": decisions,
        "charts/updates": counters.update, "charts/wall_minutes": counters.wall_seconds / 60,
        "charts/past_pool_size": past_pool,
        "charts/teacher_seconds": rs.teacher_seconds,
    }
    if us.taught_fraction > 0:
        scalars.update({
            "endgame/taught_fraction": us.taught_fraction,
            "endgame/expected_regret_points": us.endgame_loss,
            "endgame/argmax_best_move_rate": us.endgame_best_move_rate,
            "endgame/argmax_regret_points": us.endgame_regret_points})
    for kind, hands in rs.hand_points.items():
        own = np.array([h[0] for h in hands], np.float64)
        other = np.array([h[1] for h in hands], np.float64)
        scalars[f"rollout/points_per_hand_learner_vs_{kind}"] = float(own.mean())
        if kind != "self":
            scalars[f"rollout/margin_per_hand_vs_{kind}"] = float((own - other).mean())
        else:
            scalars["rollout/points_per_hand_selfplay"] = float((own + other).mean() / 2)
    for kind, rets in rs.episode_returns.items():
        if kind != "self":
            scalars[f"rollout/episode_return_vs_{kind}"] = float(np.mean(rets))
    return scalars


def read_weights(path: str | Path) -> tuple[dict[str, torch.Tensor], dict[str, int]]:
    """The state dict and network shape of a checkpoint or policy file, read safely
    (``weights_only``); ``CheckpointError`` naming the file when it cannot be."""
    net = build_model(load_checkpoint(path))
    return net.state_dict(), net.cfg.to_dict()


def init_path(cfg: TrainConfig) -> str | Path:
    """The file ``init_from`` names (``pretrained``: the shipped weights for the
    config's rules)."""
    from scopa_policy.agent import pretrained_path

    return pretrained_path(cfg.make_rules()) if cfg.init_from == "pretrained" else cfg.init_from


def starting_weights(cfg: TrainConfig) -> dict[str, torch.Tensor]:
    """The state dict named by ``init_from`` (a checkpoint or policy file, or
    ``pretrained``: the shipped weights for the config's rules); ``ConfigError`` when
    its network's shape is not the config's."""
    path = init_path(cfg)
    weights, shape = read_weights(path)
    want = NetConfig(cfg.hidden_size, cfg.hidden_layers, cfg.action_hidden).to_dict()
    if shape != want:
        raise ConfigError(f"config key 'init_from': {path} holds a network of shape {shape}, "
                          f"the config asks for {want}")
    return weights


def supervised_stage(algo: str) -> Any:
    """The module of a supervised stage (``prepare``, ``start``, ``resume``:
    ``scopa_train.supervised``), or None for PPO."""
    if algo == "last_deal":
        from . import last_deal

        return last_deal
    if algo == "suit_distill":
        from . import suit_distill

        return suit_distill
    return None


def start(cfg: TrainConfig, progress: bool = True, stop_after_updates: int | None = None,
          log: Callable[[str], None] = print,
          init_weights: dict[str, torch.Tensor] | None = None) -> dict[str, Any]:
    """A new run: ``runs/NAME-TIMESTAMP/`` with the resolved config, then train.
    ``init_weights``: the network's starting weights (a state dict of the config's shape;
    default: those of ``init_from``, else a fresh initialisation)."""
    cfg.torch_device()  # a device that is not there fails before the run directory exists
    stage = supervised_stage(cfg.algo)
    if stage is not None:
        parts = stage.prepare(cfg)  # a bad init_from fails before the run exists
        run_dir = make_run_dir(cfg)
        return stage.start(cfg, run_dir, parts, log=log)
    check_eval_opponents(cfg)
    if init_weights is None and cfg.init_from:
        init_weights = starting_weights(cfg)
    runs = Path(cfg.runs_dir)
    if runs.is_dir():  # earlier runs killed mid-save
        for old in sorted(runs.iterdir()):
            if old.is_dir():
                clean_run_temps(old, log)
    run_dir = make_run_dir(cfg)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    trainer = Trainer(cfg, run_dir, progress=progress, log=log)
    if init_weights is not None:
        trainer.load_weights(init_weights)
    out = trainer.train(stop_after_updates)
    out["run_dir"] = str(run_dir)
    return out


def resume(path: str | Path, overrides: dict[str, Any] | None = None, progress: bool = True,
           stop_after_updates: int | None = None, log: Callable[[str], None] = print
           ) -> dict[str, Any]:
    """Continue the run of a training checkpoint (or run directory) where it stopped.
    ``overrides`` may change keys that do not alter the network (e.g. total_env_steps)."""
    ck = load_checkpoint(path, kind="training")
    ck_path = Path(ck["path"]).resolve()
    if ck_path.parent.name != "checkpoints":
        raise CheckpointError(f"checkpoint {ck['path']!r} is not in a run directory "
                              f"(RUN/checkpoints/NAME.pt): resume a run directory written by "
                              f"train.py, or one of its checkpoints")
    data = dict(ck["config"])
    saved_algo = data.get("algo", "ppo")
    if (overrides or {}).get("algo", saved_algo) != saved_algo:
        raise ConfigError(f"--resume continues the run's algo ({saved_algo!r}); 'algo' cannot "
                          f"be changed with --set: start a new run instead")
    data.update(overrides or {})
    cfg = config_from_dict(data, f"checkpoint {ck['path']}")
    cfg.torch_device()
    run_dir = ck_path.parent.parent
    clean_run_temps(run_dir, log)
    stage = supervised_stage(cfg.algo)
    if stage is not None:
        return stage.resume(ck, cfg, run_dir, log=log)
    check_eval_opponents(cfg)
    trainer = Trainer(cfg, run_dir, resume=ck, progress=progress, log=log)
    # only once the checkpoint fits the config: a refused resume changes nothing
    (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    log(f"resuming {run_dir} at update {trainer.counters.update}, "
        f"{trainer.counters.env_steps:,} env steps")
    out = trainer.train(stop_after_updates)
    out["run_dir"] = str(run_dir)
    return out
