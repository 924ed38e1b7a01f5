"""Every named game of docs/spec/rules.md has shipped weights, a config that trains them,
and the wheel that carries them stays small."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from scopa_env.rules import make_rules
from scopa_policy import agent as learned
from scopa_policy.checkpoint import load_checkpoint
from scopa_train.config import PREVIOUS, load_recipe

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = sorted((ROOT / "configs").glob("*.yaml"))
# (rule set, players, the config that trains its shipped weights, the weights file)
NAMED_GAMES = [
    ("scopa", 2, "recipe.yaml", "default.pt"),
    ("scopa", 4, "team4.yaml", "team4.pt"),
    ("scopone", 4, "scopone.yaml", "scopone.pt"),
    ("scopone_scientifico", 4, "scopone_scientifico.yaml", "scopone_scientifico.pt"),
    ("asso_piglia_tutto", 2, "asso_piglia_tutto.yaml", "asso_piglia_tutto.pt"),
    ("asso_piglia_tutto", 4, "asso_piglia_tutto_4p.yaml", "asso_piglia_tutto_4p.pt"),
]
WHEEL_LIMIT = 20 * 2**20


@pytest.mark.parametrize("path", CONFIGS, ids=[p.name for p in CONFIGS])
def test_every_shipped_config_loads_and_its_starting_weights_exist(path):
    stages = load_recipe(path).stages
    assert stages
    for cfg in stages:
        if cfg.init_from and cfg.init_from not in (PREVIOUS, "pretrained"):
            assert (ROOT / cfg.init_from).is_file(), f"{path.name}: {cfg.init_from}"


@pytest.mark.parametrize("name,players,config,weights", NAMED_GAMES,
                         ids=[f"{n}-{p}p" for n, p, _, _ in NAMED_GAMES])
def test_every_named_game_has_weights_trained_for_it(name, players, config, weights):
    """``pretrained`` plays each named game with weights trained for exactly its rules,
    saying nothing, and the config named here trains for the same rules."""
    rules = make_rules(name, players=players)
    choice = learned.choose_weights(rules)
    assert (choice.path.name, choice.differs) == (weights, ())
    trained = load_checkpoint(choice.path)["rules"]
    assert make_rules(**trained) == rules
    for cfg in load_recipe(ROOT / "configs" / config).stages:
        assert cfg.make_rules() == rules


def test_the_wheel_carries_every_shipped_weights_file_and_stays_small(tmp_path):
    """Built from a copy of the checkout (a build in place would leave its egg-info and
    build folders in the checkout)."""
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", ".venv*", "runs", "wip", "build", "dist", "*.egg-info", "__pycache__",
        ".pytest_cache", ".ruff_cache"))
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                          "--no-build-isolation", "-q", "-w", str(tmp_path), str(src)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    (wheel,) = tmp_path.glob("scopa_rl-*.whl")
    assert wheel.stat().st_size < WHEEL_LIMIT
    with zipfile.ZipFile(wheel) as z:
        shipped = {Path(n).name for n in z.namelist() if n.startswith("scopa_policy/pretrained/")}
    assert {w for *_, w in NAMED_GAMES} <= shipped
