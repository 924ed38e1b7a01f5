"""Shared test helpers: build hand-made positions from card codes; the information sets of
random play; run code in a fresh interpreter."""

from __future__ import annotations

import importlib
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from scopa_env.cards import card_id, mask_of
from scopa_env.game import GameState
from scopa_env.moves import legal_actions
from scopa_env.observation import InfoSet
from scopa_env.rules import make_rules


def m(*codes: str) -> int:
    """Bitmask of card codes."""
    return mask_of(card_id(c) for c in codes)


def position(hands: list[list[str]], table: list[str], *, rules: str = "scopa",
             deck_left: int = 0, to_move: int = 0, dealer: int | None = None,
             piles: tuple[list[str], list[str]] = ([], []), **options) -> GameState:
    """A mid-hand state with the given hands and table; ``deck_left`` cards stay undealt."""
    r = make_rules(rules, **options)
    used = [card_id(c) for h in hands for c in h] + [card_id(c) for c in table]
    used += [card_id(c) for p in piles for c in p]
    rest = [c for c in range(40) if c not in used]
    deck = tuple(used + rest)  # the deck order only matters for what is left to deal
    return GameState(rules=r, seed=0, dealer=r.players - 1 if dealer is None else dealer,
                     deck=deck, deck_pos=40 - deck_left, hands=[m(*h) for h in hands],
                     table=m(*table), piles=[m(*piles[0]), m(*piles[1])], to_move=to_move)


def legal_texts(state: GameState) -> set[str]:
    from scopa_env.moves import action_text
    return {action_text(a) for a in legal_actions(state.hands[state.to_move], state.table,
                                                  state.rules)}


def fresh_python(code: str, cwd: Path | None = None, timeout: float = 120) -> str:
    """Run ``code`` in a new interpreter (from the repository, or ``cwd``) and return
    its standard output, stripped; a failing run fails the test with its stderr."""
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd or root, capture_output=True,
                         text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def _import_script(folder: str, name: str) -> ModuleType:
    """The script ``FOLDER/NAME.py`` of the repository imported as the module ``NAME``."""
    path = str(Path(__file__).resolve().parent.parent / folder)
    sys.path.insert(0, path)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(path)


def import_example(name: str) -> ModuleType:
    """The script ``examples/NAME.py`` imported as the module ``NAME``."""
    return _import_script("examples", name)


def import_benchmark(name: str) -> ModuleType:
    """The script ``benchmarks/NAME.py`` imported as the module ``NAME``."""
    return _import_script("benchmarks", name)


@contextmanager
def serving(srv: Any) -> Iterator[Any]:
    """``srv`` (a ``scopa serve`` server) answering in a thread until the block ends."""
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=10)


def random_play_infos(matches: int, rules: str = "scopa", seed: int = 0) -> list[InfoSet]:
    """The information set of every decision of ``matches`` matches of random moves
    (match seeds 0 .. matches - 1)."""
    from scopa_env.game import apply, new_match
    from scopa_env.observation import info_set

    rng = np.random.default_rng(seed)
    infos = []
    for match in range(matches):
        s = new_match(rules, seed=match)
        while not s.done:
            infos.append(info_set(s, s.to_move))
            apply(s, int(rng.choice(s.legal_actions())))
    return infos
