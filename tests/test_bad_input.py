"""Bad input, through the real entry points: every bad argument, file or config gets one
clear line on stderr and a non-zero status (never a traceback, a silent no-op, lost work
or a wrong "success"); evaluations cannot be gamed by a nosy agent; the environment
refuses calls out of turn clearly. Property-based fuzzing of the record reader and the
config loader."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scopa_env
from agents.evaluation.evaluate import deal_seed, evaluate, match_seed
from scopa_cli import main as scopa
from scopa_env.cards import FULL_DECK
from scopa_env.game import GameState
from scopa_env.records import RecordError, append_records, check_appendable, iter_records
from scopa_policy.checkpoint import clean_stale_temps, save_atomic
from scopa_train import recipe as trainer
from scopa_train.cli import main as train
from scopa_train.config import (
    OLD_KEYS,
    STAGE_KEYS,
    ConfigError,
    StageConfig,
    load_config,
    sections,
)

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "golden-records.jsonl"
SMOKE = ROOT / "configs" / "smoke.yaml"
RUN = [sys.executable, "-c", "import sys; from scopa_cli import main; sys.exit(main(sys.argv[1:]))"]


def golden(k: int = 0) -> dict[str, Any]:
    with open(GOLDEN, encoding="utf-8") as f:
        return json.loads(f.readlines()[k])


def one_line(capsys: pytest.CaptureFixture[str], status: int, *words: str) -> str:
    """The single error line of a failed command, checked for ``words``."""
    out, err = capsys.readouterr()
    lines = [x for x in err.splitlines() if x.strip()]
    assert "Traceback" not in err, err
    assert len(lines) == 1, err
    assert status != 0, (out, err)
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def call(fn: Any, argv: list[str]) -> tuple[int, str, str]:
    """(status, stdout, stderr) of an entry point called in-process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = fn(argv)
    return status, out.getvalue(), err.getvalue()


def clear_failure(status: int, err: str) -> None:
    assert status == 2 and "Traceback" not in err
    assert len([x for x in err.splitlines() if x.strip()]) == 1, err


# -- scopa record / replay / verify / play / serve ---------------------------------------
@pytest.mark.parametrize("args, words", [
    (["--agents", "random", "nobody"], ["scopa record: error:", "unknown agent 'nobody'",
                                        "known agents: random"]),
    (["--agents", "random"], ["names 1 agents", "2 seats"]),
    (["--agents", "random", "pimc:worlds=0"], ["worlds and depth must be at least 1"]),
    (["--agents", "random", "ckpt:no/such.pt"], ["no/such.pt", "does not exist"]),
    (["--agents", "random", "random", "--games", "0"], ["--games", "at least 1"]),
    (["--agents", "random", "random", "--games", "many"], ["--games", "integer"]),
    (["--agents", "random", "random", "--seed", "-1"], ["--seed", "'fresh'"]),
    (["--agents", "random", "random", "--option", "colour=red"], ["unknown rules option"]),
    (["--agents", "random", "random", "--option", "target_score=x"], ["takes an integer"]),
    (["--agents", "random", "random", "--players", "3"], ["--players", "invalid choice"]),
])
def test_record_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                          args: list[str], words: list[str]) -> None:
    out = tmp_path / "r.jsonl"
    one_line(capsys, scopa(["record", *args, "--out", str(out)]), *words)
    assert not out.exists()  # nothing was played or written


def test_record_output_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agents = ["record", "--agents", "random", "random", "--out"]
    one_line(capsys, scopa([*agents, str(tmp_path / "no" / "r.jsonl")]), "does not exist")
    one_line(capsys, scopa([*agents, str(tmp_path)]), "is a folder")
    # a damaged last line (a write cut short) is never glued onto
    good = json.dumps(golden(0)) + "\n"
    path = tmp_path / "r.jsonl"
    for damaged, line in ((good + good[:200], 2), (good + "\n" + '{"x": 1}\n', 3)):
        path.write_text(damaged)
        one_line(capsys, scopa([*agents, str(path)]), f"{path}:{line}:", "last line")
        assert path.read_text() == damaged
    path.write_text(good + "\n")  # a blank line at the end is fine
    assert scopa([*agents, str(path), "--games", "2"]) == 0
    assert [n for n, _ in iter_records(path)] == [1, 3, 4]


def test_replay_and_verify_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                     ) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps(golden(0)) + "\n" + json.dumps(golden(1)) + "\n")
    one_line(capsys, scopa(["replay", str(path), "--match", "3"]), "--match 3 is past the end",
             "holds 2 match(es)")
    one_line(capsys, scopa(["replay", str(path), "--match", "0"]), "numbered from 1")
    one_line(capsys, scopa(["replay", str(path), "--seat", "1"]), "use it with --html")
    one_line(capsys, scopa(["replay", str(path), "--html", str(tmp_path / "no" / "p.html")]),
             "does not exist")
    one_line(capsys, scopa(["replay", str(path), "--html", str(tmp_path / "p.html"),
                            "--seat", "5"]), "--seat 5 is not a seat")
    for cmd in ("replay", "verify"):
        one_line(capsys, scopa([cmd, str(tmp_path / "missing.jsonl")]), "No such file",
                 "missing.jsonl")
        one_line(capsys, scopa([cmd, str(tmp_path)]), "directory")
    assert scopa(["replay", str(path), "--match", "2"]) == 0
    assert "=== match 2" in capsys.readouterr().out


@pytest.mark.parametrize("content, line, problem", [
    (b"\n\n\xff\xfe{}\n", 3, "not UTF-8 text (byte 0xff at column 1)"),
    (b"{}\n", 1, "format is None"),
    (b"[" * 100_000 + b"\n", 1, "JSON"),
    (b'{"a": 1' + b"9" * 5000 + b"}\n", 1, "JSON"),
])
def test_a_bad_record_file_names_the_file_and_the_line(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str],
                                                      content: bytes, line: int,
                                                      problem: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(json.dumps(golden(0)).encode() + b"\n" + content)
    for cmd in ("verify", "replay"):
        one_line(capsys, scopa([cmd, str(path)]), f"{path}:{line + 1}:", problem)


def _tampered(k: int, change: Any) -> dict[str, Any]:
    rec = golden(k)
    change(rec)
    return rec


@pytest.mark.parametrize("rec, problem", [
    # an ace that takes all must list every table card (game-record.md)
    (_tampered(24, lambda r: r["hands"][0]["moves"][0]["capture"].pop()),
     "hands[0].moves[0]: capture recorded"),
    (_tampered(24, lambda r: r["hands"][0]["moves"][0]["capture"].reverse()),
     "hands[0].moves[0]: capture recorded"),
    (_tampered(0, lambda r: r["players"].append("greedy")), "players must list one agent"),
    (_tampered(0, lambda r: r.update(seed=-4)), "seed must be a non-negative"),
    (_tampered(0, lambda r: r.update(winner=1 - r["winner"])), "winner: recorded"),
    (_tampered(0, lambda r: r.update(match_score=[1])), "match_score must be two"),
    (_tampered(0, lambda r: r["hands"][0].update(dealer=7)), "hands[0].dealer must be a seat"),
    (_tampered(0, lambda r: r["hands"][0]["leftover"].append("zz")), "unknown card code"),
])
def test_verify_checks_every_field(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   rec: dict[str, Any], problem: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(golden(1)) + "\n\n" + json.dumps(rec) + "\n")
    one_line(capsys, scopa(["verify", str(path)]), f"{path}:3:", problem)


def test_play_and_serve_arguments(monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    one_line(capsys, scopa(["play", "--seat", "2"]), "--seat 2 is not a seat", "0..1")
    one_line(capsys, scopa(["play", "--seat", "-1"]), "--seat", "0 or more")
    one_line(capsys, scopa(["play", "--opponent", "nobody"]), "unknown agent 'nobody'")
    one_line(capsys, scopa(["play", "--seed", "x"]), "--seed", "integer")
    one_line(capsys, scopa(["serve", "--seat", "3"]), "--seat 3 is not a seat")
    one_line(capsys, scopa(["serve", "--port", "70000"]), "--port 70000 is not a port")
    one_line(capsys, scopa(["serve", "--opponent", "nobody"]), "unknown agent 'nobody'")
    one_line(capsys, scopa(["bogus"]), "invalid choice: 'bogus'")
    one_line(capsys, scopa([]), "required: command")

    def eof(prompt: str = "") -> str:
        raise EOFError

    monkeypatch.setattr("builtins.input", eof)
    assert scopa(["play"]) == 1
    assert "input ended" in capsys.readouterr().err


def _read_until(proc: subprocess.Popen, text: bytes, seconds: float = 60) -> bytes:
    buf, deadline = b"", time.monotonic() + seconds
    assert proc.stdout is not None
    while text not in buf:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(proc.stdout.fileno(), 4096) if ready else b""
        if not chunk:
            proc.kill()
            raise AssertionError(f"no {text!r} in {buf!r}")
        buf += chunk
    return buf


def _ctrl_c_reaches_python() -> None:
    """In the child: Ctrl-C at its default, so Python turns it into KeyboardInterrupt
    (a test run started in the background inherits SIGINT ignored, which Python keeps)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_in_play_is_one_line_and_status_130() -> None:
    proc = subprocess.Popen([*RUN, "play", "--seed", "3"], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_ctrl_c_reaches_python)
    _read_until(proc, b"your move")
    proc.send_signal(signal.SIGINT)
    # wait with stdin still open: communicate() would close it at once, and a child not yet
    # scheduled would then see end of input before the signal
    proc.wait(timeout=30)
    err = proc.stderr.read()
    proc.stdin.close()
    assert proc.returncode == 130 and b"Traceback" not in err, err
    assert err.strip() == b"scopa play: interrupted"


# -- scopa eval / ladder -----------------------------------------------------------------
def _no_work(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the work started before the arguments were checked")


@pytest.mark.parametrize("args, words", [
    (["random", "nobody"], ["scopa eval: error:", "unknown agent 'nobody'"]),
    (["random", "ckpt:no/such.pt"], ["no/such.pt", "does not exist"]),
    (["random", "greedy", "--hands", "0"], ["--hands", "at least 1"]),
    (["random", "greedy", "--workers", "0"], ["--workers", "at least 1"]),
    (["random", "greedy", "--matches", "-1"], ["--matches", "0 or more"]),
    (["random", "greedy", "--seed", "-5"], ["--seed", "'fresh'"]),
    (["random", "greedy", "--option", "napola"], ["key=value"]),
    (["random", "greedy", "--save", "no/such/dir/r.json"], ["--save file", "does not exist"]),
    (["random"], ["required: SPEC_B"]),
])
def test_eval_arguments_are_checked_before_any_deal(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str],
                                                    args: list[str], words: list[str]) -> None:
    monkeypatch.setattr("agents.evaluation.evaluate.play_unit", _no_work)
    one_line(capsys, scopa(["eval", *args]), *words)


def test_eval_save_and_a_fresh_seed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one_line(capsys, scopa(["eval", "random", "greedy", "--save", str(tmp_path)]), "is a folder")
    save = tmp_path / "r.json"
    assert scopa(["eval", "random", "greedy", "--hands", "2", "--matches", "0", "--seed",
                  "fresh", "--save", str(save)]) == 0
    seed = json.loads(save.read_text())["seed"]
    assert f"seed {seed}" in capsys.readouterr().out  # reported, for reproduction
    again = evaluate("random", "greedy", hands=2, seed=seed, matches=0)
    assert again.to_json()["points_per_hand"] == json.loads(save.read_text())["points_per_hand"]


def test_ladder_arguments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("agents.evaluation.ladder.evaluate", _no_work)
    a_file = tmp_path / "f"
    a_file.write_text("")
    out = ["--out", str(tmp_path / "l")]
    for args, words in [(["random", "greedy", "--out", str(a_file)], ["is a file"]),
                        (["random", *out], ["at least two agents"]),
                        (["random", "random", *out], ["listed twice"]),
                        (["random", "nobody", *out], ["unknown agent 'nobody'"]),
                        (["random", "ckpt:no/such.pt", *out], ["does not exist"]),
                        (["random", "greedy", "--hands", "-3", *out], ["--hands"])]:
        one_line(capsys, scopa(["ladder", *args]), "scopa ladder: error:", *words)
    assert not (tmp_path / "l").exists()


# -- fair evaluation ---------------------------------------------------------------------
class Nosy:
    """Tries every path to what it may not know; keeps everything it was ever handed."""

    spec = "nosy"
    seen: list[tuple[int, Any]] = []  # (instance, info), over every instance

    def __init__(self, seed: int) -> None:
        self.memory: list[Any] = []

    def act(self, info: Any) -> int:
        self.memory.append(info)  # what a cheating agent would remember
        Nosy.seen.append((id(self), info))
        return info.legal_actions[-1]


@pytest.mark.parametrize("nosy", [Nosy, Nosy(0)], ids=["factory", "object"])
def test_a_nosy_agent_learns_nothing_hidden_in_an_evaluation(monkeypatch: pytest.MonkeyPatch,
                                                             nosy: Any) -> None:
    import agents.evaluation.evaluate as ev
    from scopa_env.observation import InfoSet, info_set

    origin: dict[int, tuple[int, int]] = {}  # id(info) -> (game seed, seat)

    def traced(state: GameState, seat: int) -> InfoSet:
        info = info_set(state, seat)
        origin[id(info)] = (state.seed, seat)
        return info

    monkeypatch.setattr(ev, "info_set", traced)
    Nosy.seen = []
    seed = 31
    evaluate(nosy, "random", hands=16, seed=seed, matches=2)
    seeds = {deal_seed(seed, i) for i in range(16)} | {match_seed(seed, j) for j in range(2)}
    seats: dict[tuple[int, int], set[int]] = {}
    names = {f.name for f in dataclasses.fields(InfoSet)}
    for agent, info in Nosy.seen:
        game_seed, seat = origin[id(info)]
        seats.setdefault((agent, game_seed), set()).add(seat % 2)
        # the information set: no seed, no deck, no card it may not see
        assert set(vars(info)) == names and not names & {"seed", "deck", "hands"}
        assert not any(v in seeds for v in vars(info).values() if isinstance(v, int))
        assert not hasattr(info.rules, "seed")
        seen = info.hand | info.table | info.own_pile | info.other_pile
        assert info.unseen == FULL_DECK & ~seen  # nothing more than "the rest"
        assert len(info.hand_sizes) == info.players
    # memory: no instance ever played a deal (or match) from both sides of the table
    assert len(seats) > 4 and all(len(s) == 1 for s in seats.values()), seats
    if nosy is Nosy:  # ... and fresh instances keep the results deterministic
        kw = dict(hands=16, seed=seed, matches=2)
        assert evaluate("random", "expert", **kw).points_per_hand == evaluate(
            "random", "expert", workers=2, **kw).points_per_hand


def _ints_and_states(obj: Any, depth: int = 0) -> tuple[set[int], list[Any]]:
    """Every int reachable through public attributes, containers and RNG seeds."""
    ints: set[int] = set()
    states: list[Any] = []
    if depth > 6:
        return ints, states
    if isinstance(obj, GameState):
        states.append(obj)
    if isinstance(obj, (bool, float, str, type(None))):
        return ints, states
    if isinstance(obj, (int, np.integer)):
        return {int(obj)}, states
    if isinstance(obj, np.random.Generator):
        children: list[Any] = [obj.bit_generator.seed_seq.entropy, obj.bit_generator.state]
    elif isinstance(obj, dict):
        children = [*obj.keys(), *obj.values()]
    elif isinstance(obj, (list, tuple, set, frozenset)):
        if len(obj) == 40 and all(isinstance(x, (int, str)) for x in obj):
            states.append(obj)  # a whole deck
        children = list(obj)
    elif hasattr(obj, "__dict__"):
        children = [v for k, v in vars(obj).items() if not k.startswith("_")]
    else:
        children = []
    for c in children:
        i, s = _ints_and_states(c, depth + 1)
        ints |= i
        states += s
    return ints, states


def test_a_nosy_agent_learns_nothing_hidden_from_the_environment() -> None:
    seed = 987_654_321_987
    env = scopa_env.env(rules="scopa")
    env.reset(seed=seed)
    raw = env.unwrapped
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        ints, states = _ints_and_states({k: v for k, v in vars(raw).items()
                                         if not k.startswith("_")})
        assert seed not in ints and not states  # no seed, no game state, no deck
        rec = raw.record  # the record so far: finished hands only, no seed
        assert rec["seed"] is None and len(rec["hands"]) == raw._state.hand_index
        info = raw.info_set(agent)
        assert info.unseen == FULL_DECK & ~(info.hand | info.table | info.own_pile
                                           | info.other_pile)
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert raw.record["seed"] == seed  # revealed once the match is over


# -- the environment ---------------------------------------------------------------------
def test_the_environment_refuses_calls_out_of_turn_clearly() -> None:
    env = scopa_env.env()
    for fn in (env.last, lambda: env.step(0), lambda: env.observe("player_0"),
               lambda: env.unwrapped.record):
        with pytest.raises(RuntimeError, match=r"call reset\(\) before"):
            fn()
    env.reset(seed=2)
    with pytest.raises(ValueError, match="unknown agent 'player_9'.*player_0, player_1"):
        env.observe("player_9")
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    assert not env.agents
    for fn in (env.last, lambda: env.step(None), lambda: env.step(0)):
        with pytest.raises(RuntimeError, match="every agent is done.*call reset"):
            fn()
    env.reset(seed=3)  # and a new episode starts normally
    assert env.last()[2] is False


# -- train.py / scopa train --------------------------------------------------------------
def _smoke(tmp_path: Path, *more: str) -> list[str]:
    return ["--config", str(SMOKE), "--no-progress",
            "--set", f"run.runs_dir={tmp_path / 'runs'}",
            *(x for m in more for x in ("--set", m))]


@pytest.mark.parametrize("sets, words", [
    (["evaluation.opponents=[random, nobody]"],
     ["'evaluation.opponents'", "unknown agent 'nobody'"]),
    (["evaluation.opponents=[random, 'pimc:worlds=0']"], ["'evaluation.opponents'", "at least 1"]),
    (["evaluation.opponents=[random, random]"], ["'evaluation.opponents'", "twice"]),
    (["evaluation.opponents=[random, 'ckpt:no/such.pt']"],
     ["'evaluation.opponents'", "does not exist"]),
    (["run.name=../../escaped"], ["'run.name'", "plain folder name"]),
    (["run.name=a/b"], ["'run.name'", "plain folder name"]),
    (["run.seed=100000000000000000000"], ["'run.seed'", "out of range"]),
    (["opponents.greedy=[1"], ["opponents.greedy=[1", "cannot parse"]),
    (["opponents=5", "opponents.greedy=1"], ["'opponents' must be a mapping"]),
    (["rules.options={1: 2}"], ["'rules.options'", "unknown rules option"]),
    (["rules.options={primiera_table: [1]}"], ["'rules.options'"]),
    (["warp=9"], ["unknown config key 'warp'"]),
    (["ppo.endgame_coef=1", "rules.players=4"], ["'ppo.endgame_coef'", "players: 2"]),
    (["ppo.endgame_coef=1", "rollouts.episode=match"], ["'ppo.endgame_coef'", "episode: hand"]),
    (["ppo.endgame_coef=-1"], ["'ppo.endgame_coef'", "out of range"]),
    (["init_from=no/such.pt"], ["no/such.pt", "does not exist"]),
    (["init_from=pretrained"], ["'init_from'", "shape", "'hidden_size': 256"]),
    (["init_from=pretrained", "rules.options={capture_rule: fewest}"],
     ["has no weights for scopa with 2 players", "capture_rule='fewest'"]),
])
def test_train_config_is_checked_before_the_run(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                sets: list[str], words: list[str]) -> None:
    one_line(capsys, train(_smoke(tmp_path, *sets)), "train: error:", *words)
    assert not (tmp_path / "runs").exists()  # no run was started


def test_train_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "c.yaml"
    bad.write_bytes(b"seed: 1\nname: caf\xe9\n")
    one_line(capsys, train(["--config", str(bad)]), str(bad), "not UTF-8", "line 2")
    bad.write_text("evaluation: {opponents: [random, nobody], best_metric: random}\n")
    one_line(capsys, train(["--config", str(bad)]), "unknown agent 'nobody'")
    # a config of the old flat layout: one line per key, naming its new place
    bad.write_text("eval_opponents: [random]\nlearning_rate: 0.1\nrun: {seed: 2}\n")
    assert train(["--config", str(bad)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"train: error: {bad}: config key 'eval_opponents' is from the old flat "
                   f"layout; it is now 'evaluation.opponents'",
                   f"train: error: {bad}: config key 'learning_rate' is from the old flat "
                   f"layout; it is now 'ppo.learning_rate'"]
    one_line(capsys, train(["--config", str(tmp_path)]), "is not a file")
    one_line(capsys, train([]), "give --config")
    one_line(capsys, train(["--config", str(SMOKE), "--resume", str(tmp_path)]), "--resume")
    one_line(capsys, train(["--bogus"]), "unrecognized arguments: --bogus")
    a_file = tmp_path / "runs"
    a_file.write_text("")
    one_line(capsys, train(["--config", str(SMOKE), "--set", f"run.runs_dir={a_file}"]),
             "'run.runs_dir'", "is a file")
    one_line(capsys, train(["--resume", str(tmp_path / "nothing")]), "does not exist")


class Evil:
    """Unpickling this would run a command."""

    def __reduce__(self) -> tuple:
        return (os.system, ("echo unpickled >&2",))


def _tiny(tmp_path: Path) -> StageConfig:
    return load_config(SMOKE, [f"run.runs_dir={tmp_path / 'runs'}", "evaluation.every_steps=0",
                               "checkpoints.every_steps=0", "ppo.total_env_steps=576",
                               "rollouts.num_envs=8"])


def test_resume_refusals_change_nothing_and_stale_temps_are_cleaned(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    quiet = lambda text: None  # noqa: E731
    run = Path(trainer.start(_tiny(tmp_path), progress=False, log=quiet)["run_dir"])
    config = (run / "config.yaml").read_text()
    # an override that does not fit the saved network: refused, the run is untouched
    one_line(capsys, train(["--resume", str(run), "--set", "network.hidden_size=64"]),
             "does not fit this config's network")
    assert (run / "config.yaml").read_text() == config
    # a checkpoint outside a run directory: refused, nothing written next to it
    loose = tmp_path / "loose.pt"
    loose.write_bytes((run / "checkpoints" / "final.pt").read_bytes())
    one_line(capsys, train(["--resume", str(loose)]), "not in a run directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["loose.pt", "runs"]
    # a checkpoint holding Python objects: refused in our words, never "load it unsafely"
    torch.save({"model": Evil()}, run / "checkpoints" / "x.pt")
    line = one_line(capsys, train(["--resume", str(run / "checkpoints" / "x.pt")]),
                    "holds Python objects", "system", "refused")
    assert "weights_only" not in line and "False" not in line
    # temp files of a killed save: removed on the next resume and on the next start
    dead, live = 999_999_999, os.getppid()
    for folder in (run / "checkpoints", run):
        (folder / f".latest.pt.{dead}.abc123.tmp").write_bytes(b"partial")
        (folder / f".latest.pt.{live}.abc123.tmp").write_bytes(b"someone else's")
    trainer.resume(run, progress=False, log=quiet)
    left = sorted(p.name for p in run.rglob(".*.tmp"))
    assert left == [f".latest.pt.{live}.abc123.tmp"] * 2
    (run / "checkpoints" / f".best.pt.{dead}.x.tmp").write_bytes(b"partial")
    trainer.start(_tiny(tmp_path), progress=False, log=quiet)
    assert sorted(p.name for p in run.rglob(".*.tmp")) == left
    old = run / ".policy.pt.zzz.tmp"  # an older version's name, without a process id
    old.write_bytes(b"x")
    assert clean_stale_temps(run) == []
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    assert clean_stale_temps(run) == [old]
    save_atomic({"a": torch.zeros(1)}, tmp_path / "ok.pt")  # its own temp file is gone
    assert not list(tmp_path.glob(".ok.pt*"))


def test_ctrl_c_during_a_save_is_an_interrupt_and_keeps_the_old_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """torch's archive writer, interrupted mid-record, fails again as it closes; the save
    reports the interrupt, not that failure, and leaves the old file and no temp file."""
    import scopa_policy.checkpoint as checkpoint

    target = save_atomic({"a": torch.zeros(1)}, tmp_path / "latest.pt")
    before = target.read_bytes()

    def interrupted_save(obj: object, fh: object) -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("unexpected pos")  # noqa: B904 (torch chains it so)

    monkeypatch.setattr(checkpoint.torch, "save", interrupted_save)
    with pytest.raises(KeyboardInterrupt):
        save_atomic({"a": torch.ones(1)}, target)
    assert target.read_bytes() == before
    assert not list(tmp_path.glob(".*.tmp"))


def test_ctrl_c_as_the_temp_file_appears_leaves_no_temp_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A signal handler may raise right after the temp file is created, before the write
    starts: the temp file is still removed and the old file kept."""
    target = save_atomic({"a": torch.zeros(1)}, tmp_path / "latest.pt")
    before = target.read_bytes()
    real_open = os.open

    def open_then_interrupted(*args: object, **kwargs: object) -> int:
        real_open(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "open", open_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_atomic({"a": torch.ones(1)}, target)
    monkeypatch.undo()
    assert target.read_bytes() == before
    assert not list(tmp_path.glob(".*.tmp"))


def test_second_ctrl_c_in_training_is_one_line(tmp_path: Path) -> None:
    cmd = [sys.executable, str(ROOT / "train.py"), *_smoke(tmp_path, "ppo.total_env_steps=10000000",
                                                         "evaluation.every_steps=0")]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"},
                            preexec_fn=_ctrl_c_reaches_python)
    _read_until(proc, b"run directory:", 90)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err, err
    assert proc.returncode == 130, err  # stopped (saved or at once): not finished
    assert (b"train: stopped at once, without a final save" in err
            or b"stopped by SIGINT" in out), out + err
    assert not list((tmp_path / "runs").rglob("*.tmp"))


# -- fuzzing: the record reader and the config loader --------------------------------------
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 50) | st.floats(allow_nan=True)
    | st.text(max_size=4)
    | st.sampled_from(["1d", "7d", "10b", "scopa", "any"]),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids,
                                                              max_size=4),
    max_leaves=12)


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:3]):
            out += _paths(v, (*prefix, i))
    return out


RECORDS = [golden(k) for k in (0, 24, 40)]


@st.composite
def mutated_lines(draw: st.DrawFn) -> bytes:
    """A record line: a golden record with one field replaced or removed, or raw bytes."""
    kind = draw(st.sampled_from(["mutate", "remove", "bytes", "cut"]))
    rec = json.loads(json.dumps(draw(st.sampled_from(RECORDS))))
    if kind == "bytes":
        return draw(st.binary(max_size=60)).replace(b"\n", b" ")
    text = json.dumps(rec)
    if kind == "cut":
        return text[:draw(st.integers(0, len(text)))].encode()
    path = draw(st.sampled_from(_paths(rec)[1:]))
    parent = rec
    for key in path[:-1]:
        parent = parent[key]
    if kind == "remove" and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(json_values)
    return json.dumps(rec).encode()


FUZZ = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow,
                                       HealthCheck.function_scoped_fixture])


@FUZZ
@given(lines=st.lists(mutated_lines(), min_size=1, max_size=3))
def test_fuzz_record_reader(tmp_path: Path, lines: list[bytes]) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    for cmd in (["verify", str(path)], ["replay", str(path)]):
        status, _, err = call(scopa, cmd)
        if status:
            clear_failure(status, err)
            assert f"{path}:" in err
    # appending: refused with file and line, or the new record is whole and readable
    path.write_bytes(b"\n".join(lines))
    try:
        check_appendable(path)
    except RecordError as e:
        assert str(e).startswith(f"{path}:")
        return
    append_records(path, [RECORDS[0]])
    assert json.loads(path.read_bytes().splitlines()[-1]) == RECORDS[0]


config_keys = st.sampled_from([*sections(), *STAGE_KEYS, *list(OLD_KEYS)[:8], "stages", "warp",
                               "1", "", "ppo.gamma", "run.seed", "finetune.ppo.gamma"])


@FUZZ
@given(data=st.dictionaries(config_keys, json_values, max_size=5)
       | st.text(max_size=80) | json_values,
       raw=st.booleans())
def test_fuzz_config_loader(tmp_path: Path, data: Any, raw: bool) -> None:
    path = tmp_path / "fuzz.yaml"
    if isinstance(data, str) and raw:
        path.write_text(data)
    else:
        path.write_text(yaml.safe_dump(data))
    try:
        cfg = load_config(path)
    except ConfigError as e:
        assert str(e) and "Traceback" not in str(e)
    else:
        assert isinstance(cfg, StageConfig)


@FUZZ
@given(items=st.lists(st.tuples(config_keys, st.text(max_size=12)), max_size=3))
def test_fuzz_config_overrides(items: list[tuple[str, str]]) -> None:
    try:
        load_config(SMOKE, [f"{k}={v}" for k, v in items])
    except ConfigError as e:
        assert str(e)
