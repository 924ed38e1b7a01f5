"""Last-deal scorer designs, fitted by the recipe's own loop on saved positions.

    .venv/bin/python benchmarks/last_deal_designs.py collect --decisions 1000000 \\
        --seed 5 --out pos_s5.npz
    .venv/bin/python benchmarks/last_deal_designs.py fit --design shipped --epochs 1 \\
        --data pos_s5.npz [--data more.npz ...] [--ownership 0.5] [--buckets 16]
        [--threads 1] [--json]

``collect`` lets the shipped PPO network (``scopa_policy/pretrained/default.pt``) play
rollouts with the opponent pool of stage ``last_deal`` of ``configs/recipe.yaml`` and
keeps every last-deal decision with a choice, solved exactly with each move's outcome
(``scopa_train.stages.last_deal.collect_positions``), until ``--decisions`` are
saved to ``--out``.

``fit`` fits one scorer design to the positions of every ``--data`` file (in order) with
stage 3's loop (``LastDealStage``: the same minibatches, loss and cosine learning rate
as that stage, seeded ``--seed``), and scores the held-out decisions, the last 2% of the
last file, after every epoch: the share where the scorer's move is a best one, and the
points it loses a decision. ``--ownership C`` adds stage 3's ownership loss
(``last_deal.ownership_coef``; the shipped design only); ``--buckets N`` draws the
minibatches as stage 3 does with ``last_deal.buckets: N``. Designs:

- ``shipped``: ``scopa_policy.last_deal_net.LastDealNet``, the recipe's scorer;
- ``after_states``: every legal move gets its own copy of the card tokens, flagged with
  the card it plays and the cards it captures, its move features added to the global
  token; the encoder reads each after-state (cost about x the legal moves);
- ``move_queries``: the shipped encoder once, then each move is a query token (from the
  shipped scorer's inputs) that attends over the cards in two cross-attention layers.

BENCHMARKS.md ("Where the network loses") has the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.commands import quiet_idle_threads  # noqa: E402

quiet_idle_threads()  # first, before torch loads: the thread policy the commands start with

# isort: split
import torch  # noqa: E402
from torch import nn  # noqa: E402

from scopa_policy.checkpoint import build_model, load_checkpoint  # noqa: E402
from scopa_policy.features import ACTION_DIM  # noqa: E402
from scopa_policy.last_deal_net import (  # noqa: E402
    LastDealConfig,
    LastDealNet,
    Tokens,
    _linear,
)
from scopa_policy.network import count_parameters  # noqa: E402
from scopa_train.config import StageConfig, load_config  # noqa: E402
from scopa_train.stages.last_deal import (  # noqa: E402
    LastDealStage,
    OwnershipHead,
    Positions,
    collect_positions,
)

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "recipe.yaml"
STAGE = "last_deal"  # the recipe's stage 3, the shipped scorer's
SHIPPED = ROOT / "scopa_policy" / "pretrained" / "default.pt"
HELD_OUT = 0.02  # of the last --data file


class AfterStates(LastDealNet):
    """The shipped scorer reading every move's after-state: the cards once per move,
    flagged with what the move plays and captures, its features in the global token."""

    def __init__(self, cfg: LastDealConfig) -> None:
        super().__init__(cfg)
        self.flag_in = _linear(2, cfg.width)
        self.feat_in = _linear(ACTION_DIM, cfg.width)

    def scores(self, obs: torch.Tensor, feats: torch.Tensor, row: torch.Tensor,
               tok: Tokens) -> torch.Tensor:
        moves = torch.arange(len(row))
        played, cm = torch.from_numpy(tok.played), torch.from_numpy(tok.captured_move)
        slot = torch.from_numpy(tok.captured_slot)
        cards = torch.from_numpy(tok.cards)[row]  # (M, T, TOKEN_DIM)
        flags = torch.zeros(*cards.shape[:2], 2)
        flags[moves, played, 0] = 1
        flags[cm, slot, 1] = 1
        x = self.card_in(cards) + self.flag_in(flags)
        x[:, 0] = self.global_in(obs)[row] + self.feat_in(feats)
        mask = torch.from_numpy(tok.mask)[row]
        for block in self.blocks:
            x = block(x, mask)
        x = self.norm(x)
        captured = torch.zeros(len(row), x.shape[-1]).index_add_(0, cm, x[cm, slot])
        return self.move(torch.cat([x[moves, played], captured, x[:, 0], feats],
                                   -1)).squeeze(-1)


class _CrossAttention(nn.Module):
    """Pre-norm cross-attention of one query per move over its decision's tokens, then
    an MLP."""

    def __init__(self, cfg: LastDealConfig) -> None:
        super().__init__()
        d = cfg.width
        self.heads = cfg.heads
        self.norm_q, self.norm_ff = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.kv, self.proj = _linear(d, d), _linear(d, 2 * d), _linear(d, d)
        self.ff1, self.ff2 = _linear(d, cfg.ff_hidden), _linear(cfg.ff_hidden, d)

    def forward(self, q: torch.Tensor, tokens: torch.Tensor, mask: torch.Tensor
                ) -> torch.Tensor:
        m, d = q.shape
        h = self.heads
        query = self.q(self.norm_q(q)).view(m, h, 1, d // h)
        k, v = self.kv(tokens).view(m, -1, 2, h, d // h).permute(2, 0, 3, 1, 4)
        att = (query @ k.transpose(-1, -2)) / math.sqrt(d // h)
        att = att.masked_fill(~mask[:, None, None, :], float("-inf")).softmax(-1)
        q = q + self.proj((att @ v).reshape(m, d))
        return q + self.ff2(torch.relu(self.ff1(self.norm_ff(q))))


class MoveQueries(LastDealNet):
    """The shipped encoder, then each move a query over the encoded cards."""

    def __init__(self, cfg: LastDealConfig, layers: int = 2) -> None:
        super().__init__(cfg)
        d = cfg.width
        self.query_in = nn.Sequential(_linear(3 * d + ACTION_DIM, d))
        self.cross = nn.ModuleList(_CrossAttention(cfg) for _ in range(layers))
        self.out = nn.Sequential(nn.LayerNorm(d), _linear(d, cfg.move_hidden), nn.ReLU(),
                                 _linear(cfg.move_hidden, 1))

    def scores(self, obs: torch.Tensor, feats: torch.Tensor, row: torch.Tensor,
               tok: Tokens) -> torch.Tensor:
        x = self.card_in(torch.from_numpy(tok.cards))
        x[:, 0] = self.global_in(obs)
        mask = torch.from_numpy(tok.mask)
        for block in self.blocks:
            x = block(x, mask)
        x = self.norm(x)
        cm = torch.from_numpy(tok.captured_move)
        captured = torch.zeros(len(row), x.shape[-1]).index_add_(
            0, cm, x[row[cm], torch.from_numpy(tok.captured_slot)])
        q = self.query_in(torch.cat([x[row, torch.from_numpy(tok.played)], captured,
                                     x[row, 0], feats], -1))
        for layer in self.cross:
            q = layer(q, x[row], mask[row])
        return self.out(q).squeeze(-1)


DESIGNS: dict[str, type[LastDealNet]] = {
    "shipped": LastDealNet, "after_states": AfterStates, "move_queries": MoveQueries}


FIELDS = ("obs", "count", "ids", "values", "own")


def save_positions(data: Positions, path: Path) -> None:
    np.savez(path, **{k: getattr(data, k) for k in FIELDS})


def load_positions(paths: list[Path]) -> tuple[Positions, int]:
    """The decisions of every file, in order, and how many the last file holds; a file
    without every field is a ``ValueError`` naming it."""
    files = [np.load(p) for p in paths]
    for path, f in zip(paths, files, strict=True):
        missing = [k for k in FIELDS if k not in f.files]
        if missing:
            raise ValueError(f"{path} lacks {', '.join(missing)}: collect it again with "
                             f"this version")
    obs, count, ids, values, own = (np.concatenate([f[k] for f in files]) for k in FIELDS)
    data = Positions(obs, np.cumsum(count) - count, count, ids, values, own)
    return data, len(files[-1]["count"])


def stage_config(overrides: list[str]) -> StageConfig:
    """Stage 3 of the recipe with ``overrides`` (``SECTION.KEY=VALUE``) on it."""
    return load_config(CONFIG, [f"{STAGE}.{o}" for o in overrides], stage=STAGE)


class DesignStage(LastDealStage):
    """Stage 3 fitting ``design`` in place of the shipped scorer; the held-out decisions
    are the last ``held`` ones."""

    def __init__(self, cfg: StageConfig, run_dir: Path, design: type[LastDealNet],
                 held: int) -> None:
        super().__init__(cfg, run_dir, build_model(load_checkpoint(SHIPPED)),
                         log=lambda _: None)
        torch.manual_seed(cfg.seed)
        ld = cfg.last_deal
        self.net = design(LastDealConfig(ld.width, ld.layers, ld.heads))
        if self.ownership is not None:
            self.ownership = OwnershipHead(self.net.cfg)
        self.optimizer = torch.optim.Adam(self.trainable(), lr=self.lr)
        self.held = held

    def held_out(self, n: int) -> np.ndarray:
        return np.arange(n - self.held, n)


def fit(design: str, epochs: int, data_paths: list[Path], seed: int, threads: int,
        ownership: float = 0.0, buckets: int = 0) -> dict:
    data, last = load_positions(data_paths)
    cfg = stage_config([f"run.seed={seed}", f"fit.epochs={epochs}",
                        f"run.torch_threads={threads}",
                        f"last_deal.ownership_coef={ownership}",
                        f"last_deal.buckets={buckets}"])
    from torch.utils.tensorboard import SummaryWriter

    with tempfile.TemporaryDirectory() as tmp:
        # the stage's clock (counters.wall_seconds, the minutes reported) starts here
        stage = DesignStage(cfg, Path(tmp), DESIGNS[design], max(1, int(last * HELD_OUT)))
        stage.writer = SummaryWriter(tmp)
        stage._fit(data)
        stage.writer.close()
        epochs_out = [json.loads(line) for line in
                      (Path(tmp) / "evaluations.jsonl").read_text().splitlines()]
    return {"design": design, "ownership": ownership, "buckets": buckets,
            "parameters": count_parameters(stage.net),
            "decisions": len(data), "held_out": stage.held, "seed": seed,
            "threads": threads,
            "epochs": [{"epoch": e["epoch"], "minutes": e["wall_seconds"] / 60,
                        "best_move_rate": e["heldout_best_move_rate"],
                        "points_lost_per_decision": e["heldout_points_lost_per_decision"]}
                       for e in epochs_out]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="save solved last-deal decisions of the shipped network")
    c.add_argument("--decisions", type=int, default=1_000_000)
    c.add_argument("--seed", type=int, default=5)
    c.add_argument("--num-envs", type=int, default=2048, help="games played together")
    c.add_argument("--out", type=Path, required=True)
    f = sub.add_parser("fit", help="fit a design to saved decisions, score the held-out ones")
    f.add_argument("--design", choices=sorted(DESIGNS), default="shipped")
    f.add_argument("--epochs", type=int, default=1)
    f.add_argument("--data", type=Path, action="append", required=True,
                   help="a file of `collect` (repeat for more; the last holds the held-out)")
    f.add_argument("--ownership", type=float, default=0.0, metavar="COEF",
                   help="weight of stage 3's ownership loss (shipped design only)")
    f.add_argument("--buckets", type=int, default=0, metavar="N",
                   help="stage 3's last_deal.buckets: N minibatches sorted by cards in play "
                        "(0: plain random minibatches)")
    f.add_argument("--seed", type=int, default=5)
    f.add_argument("--threads", type=int, default=1, help="torch threads")
    f.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args(argv)
    if args.command == "collect":
        if args.decisions < 1:
            p.error(f"--decisions must be at least 1, got {args.decisions}")
        cfg = stage_config([f"run.seed={args.seed}", f"rollouts.num_envs={args.num_envs}",
                            f"fit.decisions={args.decisions}"])
        torch.manual_seed(args.seed)
        policy = build_model(load_checkpoint(SHIPPED)).eval()
        data, _ = collect_positions(policy, cfg, print, outcomes=True)
        save_positions(data, args.out)
        print(f"{len(data):,} decisions saved to {args.out}")
        return 0
    if args.epochs < 1 or args.threads < 1 or args.buckets < 0:
        p.error("--epochs and --threads must be at least 1, --buckets at least 0")
    if not 0 <= args.ownership <= 100 or (args.ownership and args.design != "shipped"):
        p.error("--ownership must be in [0, 100], and is for --design shipped only")
    missing = [str(d) for d in args.data if not d.is_file()]
    if missing:
        p.error(f"no such --data file: {', '.join(missing)}")
    try:
        res = fit(args.design, args.epochs, args.data, args.seed, args.threads, args.ownership,
                  args.buckets)
    except ValueError as e:
        p.error(str(e))
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    own = (f", ownership {res['ownership']:g}" if res["ownership"] else "") + (
        f", buckets {res['buckets']}" if res["buckets"] > 1 else "")
    print(f"{res['design']}{own}: {res['parameters']:,} parameters, {res['decisions']:,} "
          f"decisions ({res['held_out']:,} held out), seed {res['seed']}, "
          f"{res['threads']} torch thread(s)")
    print("| epoch | minutes | best-move rate | points lost a decision |")
    print("|---:|---:|---:|---:|")
    for e in res["epochs"]:
        print(f"| {e['epoch']} | {e['minutes']:.1f} | {e['best_move_rate']:.3f} | "
              f"{e['points_lost_per_decision']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
