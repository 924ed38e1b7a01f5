"""What the engine, the vector env and the baselines produce for fixed seeds, as bytes:
the reference written before the rules were gathered into ``scopa_env.rules``
(``tests/data/frozen-*.jsonl``, compared byte for byte by ``tests/test_frozen_outputs.py``).

Regenerate (only when a change of behaviour is meant): ``python -m tests.frozen_outputs``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"
# (rule set name, rules options): every named rule set, plus the options no named set turns on
RULE_SETS: list[tuple[str, dict]] = [
    ("scopa", {}), ("scopone_scientifico", {}), ("scopone", {}), ("asso_piglia_tutto", {}),
    ("scopa", {"players": 4}),
    ("scopa", {"capture_rule": "fewest", "last_play_scopa": True, "re_bello": True,
               "napola": True, "primiera_table": "alt", "target_score": 5,
               "primiera_requires_all_suits": False}),
]
MATCH_AGENTS = ("random", "greedy", "expert", "pimc:worlds=2,depth=2")


def _label(name: str, options: dict) -> str:
    return name + "".join(f",{k}={v}" for k, v in sorted(options.items()))


def match_lines(name: str, options: dict, seed: int = 7) -> list[str]:
    """Record lines of matches played by the per-game engine, one per agent pairing."""
    from agents import make_agent
    from scopa_env.play import derive_seed, play_match
    from scopa_env.rules import make_rules

    rules = make_rules(name, **options)
    lines = []
    for i, spec in enumerate(MATCH_AGENTS):
        other = MATCH_AGENTS[(i + 1) % len(MATCH_AGENTS)]
        if "pimc" in (spec + other) and rules.players == 4:
            other = "greedy" if "pimc" in other else other
        specs = [spec, other] * (rules.players // 2)
        seed_i = derive_seed(seed, i)
        agents = [make_agent(s, seed=derive_seed(seed_i, 1000 + k))
                  for k, s in enumerate(specs)]
        rec = play_match(rules, seed_i, agents, specs)
        lines.append(json.dumps(rec, separators=(",", ":")))
    return lines


def vector_lines(name: str, options: dict, seed: int = 11, games: int = 6,
                 steps: int = 400) -> list[str]:
    """Digests of the vector env played by the batched baselines: of its match records
    (each line as ``append_records`` writes it) and of every step's observation, mask,
    actions, rewards and flags."""
    from agents.baselines.vector_moves import batched_actions
    from scopa_env.vector import VectorScopaEnv

    lines = []
    for reward, episode, agents in (("match", "match", ("expert", "greedy")),
                                    ("points", "hand", ("greedy", "random"))):
        env = VectorScopaEnv(games, name, reward=reward, episode=episode, seed=seed,
                             **options)
        rng = np.random.default_rng(seed)
        digest, records = hashlib.sha256(), hashlib.sha256()
        count = 0
        for _ in range(steps):
            digest.update(env.observe().tobytes())
            digest.update(env.action_mask().tobytes())
            acts = np.zeros(games, np.int64)
            for seat in range(env.players):
                rows = np.flatnonzero(env.to_move == seat)
                if len(rows):
                    acts[rows] = batched_actions(agents[seat % 2], env, rows, rng)
            digest.update(acts.tobytes())
            out = env.step(acts)
            for arr in (out.rewards, out.terminated, out.hand_over, out.hand_points,
                        out.match_over, out.match_score, out.winner, out.scopa):
                digest.update(np.ascontiguousarray(arr).tobytes())
            for g, rec in out.records:
                count += 1
                records.update(f"{g} ".encode() + json.dumps(rec, separators=(",", ":"))
                               .encode() + b"\n")
        lines.append(json.dumps({"reward": reward, "episode": episode, "records": count,
                                 "records_sha256": records.hexdigest(),
                                 "steps_sha256": digest.hexdigest()}))
    return lines


def aec_lines(name: str, options: dict, seed: int = 5) -> list[str]:
    """Digests of the AEC env played by seeded uniform moves: every observation, mask,
    reward and flag, and the final record, in each reward and episode mode."""
    from scopa_env.env import raw_env

    lines = []
    for reward, episode in (("match", "match"), ("points", "match"), ("match", "hand")):
        env = raw_env(name, reward=reward, episode=episode, **options)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        digest = hashlib.sha256()
        for agent in env.agent_iter():
            obs, rew, term, trunc, _ = env.last()
            digest.update(obs["observation"].tobytes() + obs["action_mask"].tobytes())
            digest.update(f"{agent} {rew!r} {term} {trunc};".encode())
            legal = np.flatnonzero(obs["action_mask"])
            env.step(None if term or trunc else int(rng.choice(legal)))
        record = json.dumps(env.record, separators=(",", ":"))
        lines.append(json.dumps({"reward": reward, "episode": episode,
                                 "steps_sha256": digest.hexdigest(),
                                 "record_sha256": hashlib.sha256(record.encode()).hexdigest()}))
    return lines


MAKERS = {"matches": match_lines, "vector": vector_lines, "aec": aec_lines}


def all_lines(kind: str) -> dict[str, list[str]]:
    make = MAKERS[kind]
    return {_label(n, o): make(n, o) for n, o in RULE_SETS}


def path(kind: str) -> Path:
    return DATA / f"frozen-{kind}.jsonl"


def render(kind: str) -> bytes:
    out = []
    for label, lines in all_lines(kind).items():
        out.append(json.dumps({"rules": label}))
        out.extend(lines)
    return ("\n".join(out) + "\n").encode()


if __name__ == "__main__":
    for kind in MAKERS:
        path(kind).write_bytes(render(kind))
        print(path(kind), path(kind).stat().st_size)
