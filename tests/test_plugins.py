"""Your own agents: ``py:`` specs, the ``scopa.agents`` entry-point group, the example
agent through the CLI, clear errors, and the optional per-deal ``reset()``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import agents
from agents.evaluation.evaluate import evaluate
from agents.evaluation.evaluate import main as eval_main
from scopa_env.play import play_match
from scopa_env.rules import make_rules

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "examples/my_agent.py"


def scopa(*args: str, cwd: Path, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess:
    """The installed ``scopa`` command (as a user runs it: the current folder is not on
    ``sys.path`` the way ``python -c`` puts it there)."""
    exe = Path(sys.executable).parent / "scopa"
    cmd = [str(exe)] if exe.exists() else [
        sys.executable, "-c", "import sys, scopa_cli; sys.exit(scopa_cli.main())"]
    return subprocess.run([*cmd, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)


def test_example_agent_through_the_cli_with_workers_from_a_fresh_checkout(tmp_path):
    # a fresh clone's root: the example file at its relative path, nothing else
    (tmp_path / "examples").mkdir()
    shutil.copy(ROOT / EXAMPLE, tmp_path / EXAMPLE)
    out = scopa("eval", f"py:{EXAMPLE}:MyAgent", "greedy", "--hands", "200", "--workers", "2",
                "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["a"] == f"py:{EXAMPLE}:MyAgent" and res["hands"] == 200
    lo, hi = res["points_per_hand"]["ci95"]
    assert lo < res["points_per_hand"]["margin"] < hi
    # the same figures in one process: workers rebuild the agent from its spec
    one = evaluate(f"py:{ROOT / EXAMPLE}:MyAgent", "greedy", hands=200, seed=0, workers=1)
    assert one.points_per_hand.margin == res["points_per_hand"]["margin"]


def test_py_spec_by_module_name_with_parameters(tmp_path, monkeypatch):
    (tmp_path / "mybots.py").write_text(
        "from agents import BaseAgent\n"
        "class Lowest(BaseAgent):\n"
        "    name = 'lowest'\n"
        "    PARAMS = {'flip': (int, 0, 'play the highest id instead')}\n"
        "    def act(self, info):\n"
        "        legal = sorted(info.legal_actions)\n"
        "        return legal[-1] if self.params['flip'] else legal[0]\n"
        "def make(seed, depth=1):\n"
        "    agent = Lowest(seed=seed)\n"
        "    agent.depth = depth\n"
        "    return agent\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    a = agents.make_agent("py:mybots:Lowest,flip=1", seed=3)
    assert a.params == {"flip": 1}
    f = agents.make_agent("py:mybots:make,depth=3", seed=3)
    assert f.depth == 3 and f.spec == "py:mybots:make,depth=3"  # named by what rebuilds it
    assert agents.check_spec(" py:mybots:make ") == "py:mybots:make"
    res = evaluate("py:mybots:make", "py:mybots:Lowest,flip=1", hands=8, seed=1, matches=0)
    assert res.a == "py:mybots:make" and res.b == "py:mybots:Lowest,flip=1"


BAD_SPECS = [
    ("py:no_such_module_xyz:Bot", "cannot import module 'no_such_module_xyz'"),
    (f"py:{EXAMPLE}:Nope", "has no attribute 'Nope'"),
    (f"py:{EXAMPLE}:MyAgent,depth=3", "takes no parameter 'depth'; its parameters: cards_weight"),
    (f"py:{EXAMPLE}:MyAgent,depth", "must look like name=value"),
    (f"py:{EXAMPLE}:MyAgent,seed=4", "'seed' is not a parameter"),
    ("py:missing/file.py:Bot", "file 'missing/file.py' does not exist"),
    ("py:json:JSONDecoder", "which is not an agent"),
    ("py:json:decoder.JSONArray", "building JSONArray failed"),
    ("py:os.path:sep", "names a str, not an agent class or a factory"),
    ("py:justamodule", "must look like py:package.module:ATTR"),
    ("py:broken.py:Bot", "importing broken.py failed: SyntaxError"),
]


@pytest.mark.parametrize(("spec", "needle"), BAD_SPECS)
def test_bad_agent_specs_are_one_clear_line(spec, needle, capsys, monkeypatch, tmp_path):
    (tmp_path / "examples").mkdir()
    shutil.copy(ROOT / EXAMPLE, tmp_path / EXAMPLE)
    (tmp_path / "broken.py").write_text("def oops(:\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # a py: module name adds the folder
    assert eval_main([spec, "greedy", "--hands", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("scopa eval: error: ") and needle in err
    assert "Traceback" not in err


def _install_fake_distribution(site: Path) -> None:
    """A package ``tinybots`` that registers ``tinybot`` in the ``scopa.agents`` group, as
    ``pip install`` leaves it: the module and its ``dist-info`` with entry_points.txt."""
    (site / "tinybots.py").write_text(
        "class TinyBot:\n"
        "    '''Plays the lowest legal id, or the highest with reverse=true.'''\n"
        "    def __init__(self, seed=None, reverse=False):\n"
        "        self.reverse = reverse\n"
        "    def act(self, info):\n"
        "        legal = sorted(info.legal_actions)\n"
        "        return legal[-1] if self.reverse else legal[0]\n"
        "def not_an_agent(seed=None):\n"
        "    return 42\n")
    info = site / "tinybots-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tinybots\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[scopa.agents]\ntinybot = tinybots:TinyBot\nnumber = tinybots:not_an_agent\n"
        "gone = tinybots_missing:Bot\n")


def test_entry_point_agents_work_everywhere_a_spec_does(tmp_path, monkeypatch, capsys):
    site = tmp_path / "site"
    site.mkdir()
    _install_fake_distribution(site)
    monkeypatch.syspath_prepend(str(site))
    assert any(line.startswith("tinybot  (from tinybots") for line in agents.known_specs())
    bot = agents.make_agent("tinybot:reverse=true", seed=1)
    assert bot.reverse is True and bot.spec == "tinybot:reverse=true"
    assert agents.check_spec("tinybot") == "tinybot"
    for spec, needle in (("number", "made a int, which is not an agent"),
                         ("gone", "entry point gone = tinybots_missing:Bot (group "
                                  "scopa.agents) cannot be loaded"),
                         ("tinybot:depth=2", "takes no parameter 'depth'")):
        assert eval_main([spec, "greedy", "--hands", "2"]) == 2
        assert needle in capsys.readouterr().err
    # built-in names win over an entry point of the same name
    assert agents.make_agent("greedy").spec == "greedy"
    # through the command line, with worker processes that find it again
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = scopa("eval", "tinybot", "tinybot:reverse=true", "--hands", "16", "--workers", "2",
                "--json", cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["b"] == "tinybot:reverse=true"
    rec = tmp_path / "m.jsonl"
    out = scopa("record", "--agents", "tinybot", "random", "--out", str(rec), cwd=tmp_path,
                env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(rec.read_text())["players"] == ["tinybot", "random"]


class DealChecker:
    """A stateful agent that checks the kit's promise: between two ``reset()`` calls it
    sees one deal, in order (its own pile and the other side's only grow)."""

    instances: list[DealChecker] = []

    def __init__(self, seed: int | None = None) -> None:
        self.spec = "deal-checker"
        self.resets = 0
        self.piles = (-1, -1)
        self.errors: list[str] = []
        self.moves = 0
        DealChecker.instances.append(self)

    def reset(self) -> None:
        self.resets += 1
        self.piles = (0, 0)

    def act(self, info) -> int:
        own, other = self.piles
        if own < 0:
            self.errors.append("act before the first reset")
        elif info.own_pile & own != own or info.other_pile & other != other:
            self.errors.append("a move from another deal without a reset")
        self.piles = (info.own_pile, info.other_pile)
        self.moves += 1
        return min(info.legal_actions)


@pytest.mark.parametrize("players", [2, 4])
def test_stateful_agents_get_one_instance_per_game_and_a_reset_per_deal(players):
    DealChecker.instances.clear()
    evaluate(DealChecker, "greedy", hands=16, seed=5, players=players, matches=4)
    made = [x for x in DealChecker.instances if x.moves]
    assert all(not x.errors and x.resets >= 1 for x in made)
    assert len(made) == 2 * (16 + 4)  # one per game (deal or match, seating), not per unit
    assert max(x.resets for x in made) > 1  # the matches' agents saw several deals
    DealChecker.instances.clear()
    rules = make_rules("scopa", players=2)
    play_match(rules, 7, [DealChecker(), DealChecker()])
    assert all(not x.errors and x.resets > 1 for x in DealChecker.instances)


def test_training_opponents_accept_any_agent_spec():
    from scopa_train.config import ConfigError, load_config

    cfg = load_config(None, base={"opponents": {"self": 1, "pimc:worlds=2,depth=1": 1,
                                                 f"py:{ROOT / EXAMPLE}:MyAgent": 1}})
    assert len(cfg.opponents) == 3
    with pytest.raises(ConfigError, match="'opponents': 'wizard' is neither one of self"):
        load_config(None, base={"opponents": {"wizard": 1}})


def test_a_stateful_py_agent_as_the_training_opponent(tmp_path):
    from agents.bridges.plugins import load_py
    from scopa_train import recipe
    from scopa_train.config import load_config

    spec = f"py:{Path(__file__).resolve()}:DealChecker"
    cfg = load_config(None, base={
        "opponents": {spec: 1}, "rollouts": {"num_envs": 4, "rollout_steps": 72},
        "ppo": {"total_env_steps": 288},
        "network": {"hidden_size": 16, "hidden_layers": 1, "action_hidden": 8},
        "evaluation": {"every_steps": 0}, "checkpoints": {"every_steps": 0},
        "run": {"runs_dir": str(tmp_path)}})
    out = recipe.start(cfg, progress=False, log=lambda text: None)
    assert out["counters"]["env_steps"] == 288
    checker = load_py(spec)[0]  # the class the rollout built its opponents from
    played = [x for x in checker.instances if x.moves]
    assert played and all(not x.errors for x in played)
    assert max(x.resets for x in played) >= 2  # 72 moves per game: two deals
