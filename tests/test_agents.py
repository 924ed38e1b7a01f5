"""Baseline agents: specs, legality in every rule set, hidden information, behaviour."""

from __future__ import annotations

import dataclasses
import random
import sys
import types

import pytest

from agents import AGENTS, make_agent, parse_spec
from agents.baselines.pimc import CARTE, DENARI, LeafModel
from agents.worlds import sample_worlds
from scopa_env.cards import FULL_DECK, N_CARDS, card_id, cards_of
from scopa_env.game import GameState, apply, new_match
from scopa_env.moves import action_text
from scopa_env.observation import InfoSet, info_set
from scopa_env.records import load_and_verify
from scopa_env.rules import Rules, make_rules
from tests.helpers import m, position

DETERMINISTIC = ["greedy", "expert", "pimc:worlds=4,depth=3"]

# ----------------------------------------------------------------- specs


def test_specs_build_and_are_canonical():
    assert make_agent("random").spec == "random"
    assert make_agent("greedy").spec == "greedy"
    assert make_agent("expert").spec == "expert"
    assert make_agent("pimc").spec == "pimc:worlds=12,depth=5"
    a = make_agent(" pimc:depth=3, worlds=7 ", seed=1)
    assert a.spec == "pimc:worlds=7,depth=3" and (a.worlds, a.depth) == (7, 3)
    assert parse_spec("pimc:worlds=8") == ("pimc", {"worlds": 8})
    assert parse_spec("ckpt:runs/x:y/ckpt.pt") == ("ckpt", {"path": "runs/x:y/ckpt.pt"})
    assert set(AGENTS) == {"random", "greedy", "expert", "pimc"}


@pytest.mark.parametrize("spec, message", [
    ("minimax", r"(?s)unknown agent .minimax.*random.*greedy.*expert.*pimc.*ckpt:PATH.*pretr"),
    ("pimc:width=3", r"no parameter 'width'.*worlds.*depth"),
    ("greedy:depth=2", r"no parameter 'depth'.*takes none"),
    ("pimc:worlds=many", r"'worlds'.*takes a int, got 'many'"),
    ("pimc:worlds", r"needs a value"),
    ("pimc:worlds=0", r"at least 1"),
    ("ckpt:", r"needs a path"),
    ("pretrained:x=1",
     r"takes the parameters endgame=net\|exact, suits=close\|last_deal\|all\|none"),
    ("pretrained:endgame=deep", r"takes the parameters endgame=net\|exact, suits="),
    ("pretrained:suits=two", r"suits=close\|last_deal\|all\|none; got .suits=two."),
    ("", r"empty"),
])
def test_bad_specs_name_what_exists(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec)


def test_learned_specs_go_through_the_inference_layer(monkeypatch):
    calls = []
    fake = types.ModuleType("scopa_policy.agent")
    fake.load_policy_agent = (lambda path, seed=None, endgame="net", suits="close":
                              calls.append((path, seed, endgame, suits)) or "agent")
    monkeypatch.setitem(sys.modules, "scopa_policy.agent", fake)
    import scopa_policy
    monkeypatch.setattr(scopa_policy, "agent", fake, raising=False)
    assert make_agent("ckpt:runs/a/latest.pt", seed=5) == "agent"
    assert make_agent("pretrained", seed=6) == "agent"
    assert make_agent("pretrained:endgame=exact", seed=7) == "agent"
    assert make_agent("pretrained:suits=all,endgame=exact", seed=8) == "agent"
    assert calls == [("runs/a/latest.pt", 5, "net", "close"),
                     (None, 6, "net", "close"), (None, 7, "exact", "close"),
                     (None, 8, "exact", "all")]


def test_learned_specs_are_registered_by_the_inference_layer(monkeypatch):
    from agents.bridges import plugins

    eps = plugins.entry_points()
    assert eps["ckpt"].value == "scopa_policy.specs:CHECKPOINT"
    assert eps["pretrained"].value == "scopa_policy.specs:PRETRAINED"
    monkeypatch.setattr(plugins, "entry_points", dict)  # the kit not installed
    with pytest.raises(ValueError, match=r"unknown agent 'pretrained'.*pip install -e \."):
        make_agent("pretrained")


def test_missing_inference_layer_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "scopa_policy.agent", None)
    import scopa_policy
    monkeypatch.delattr(scopa_policy, "agent", raising=False)
    with pytest.raises(ValueError, match="needs scopa_policy"):
        make_agent("pretrained")


# ----------------------------------------------------------------- legality

CONFIGS = [
    ("scopa", 2, {}), ("scopa", 4, {}), ("asso_piglia_tutto", 2, {}),
    ("asso_piglia_tutto", 4, {}), ("scopone", 4, {}), ("scopone_scientifico", 4, {}),
    ("scopa", 2, {"capture_rule": "fewest", "last_play_scopa": True, "re_bello": True,
                  "napola": True, "primiera_table": "alt",
                  "primiera_requires_all_suits": False}),
]


def _play_hand(rules: Rules, seed: int, specs: list[str]) -> int:
    """One hand with ``specs[seat]`` per seat, every move checked by the engine."""
    agents = [make_agent(s, seed=seed * 10 + k) for k, s in enumerate(specs)]
    state = new_match(rules, seed=seed)
    moves = 0
    while True:
        info = info_set(state, state.to_move)
        a = agents[state.to_move].act(info)
        assert isinstance(a, int) and a in info.legal_actions, (specs[state.to_move], a)
        res = apply(state, a, check=True)
        moves += 1
        if res.hand is not None:
            return moves


@pytest.mark.parametrize("name, players, options", CONFIGS)
def test_agents_only_play_legal_moves(name, players, options):
    rules = make_rules(name, players=players, **options)
    big = rules.hand_size > 3
    pimc = "pimc:worlds=2,depth=2" if big else "pimc:worlds=4,depth=3"
    cheap = ["random", "greedy", "expert"]
    rotations = [cheap[k:] + cheap[:k] for k in range(3)]
    n = 6 if big else 30
    for g in range(n):
        seats = [rotations[g % 3][s % 3] for s in range(players)]
        _play_hand(rules, 100 + g, seats)
    for g in range(1 if big else 2):
        seats = [pimc if s % 2 == g % 2 else cheap[(g + s) % 3] for s in range(players)]
        _play_hand(rules, 200 + g, seats)


def test_default_pimc_plays_legal_moves_2p_and_4p():
    for players in (2, 4):
        rules = make_rules("scopa", players=players)
        _play_hand(rules, 7, ["pimc", "expert"] * (players // 2))


# ----------------------------------------------------------------- hidden information


def _shuffle_hidden(state: GameState, rng: random.Random) -> GameState:
    """The same position with the other hands and the undealt deck re-dealt at random."""
    s = state.copy()
    me = s.to_move
    others = [p for p in range(s.players) if p != me]
    pool = []
    for p in others:
        pool += cards_of(s.hands[p])
    pool += list(s.deck[s.deck_pos:])
    rng.shuffle(pool)
    pos = 0
    for p in others:
        k = s.hands[p].bit_count()
        s.hands[p] = sum(1 << c for c in pool[pos:pos + k])
        pos += k
    rest = pool[pos:]
    s.deck = tuple(c for c in range(N_CARDS) if c not in rest) + tuple(rest)
    assert sorted(s.deck) == list(range(N_CARDS))
    return s


def test_info_set_holds_no_hidden_state():
    state = new_match("scopa", seed=3, players=4)
    info = info_set(state, 0)
    for f in dataclasses.fields(InfoSet):
        v = getattr(info, f.name)
        ok = v is None or isinstance(v, int | Rules) or (
            isinstance(v, tuple) and all(isinstance(x, int) for x in v))
        assert ok, (f.name, type(v))
    assert not any(isinstance(v, GameState) for v in vars(info).values())
    hidden = FULL_DECK & ~(state.hands[0] | state.table)
    assert info.unseen == hidden  # a set of cards, never where they are


@pytest.mark.parametrize("players", [2, 4])
def test_hidden_cards_never_change_a_decision(players):
    rng = random.Random(0)
    rules = make_rules("scopa", players=players)
    driver = make_agent("random", seed=1)
    checked = 0
    for seed in range(3):
        state = new_match(rules, seed=seed)
        while True:
            info = info_set(state, state.to_move)
            if len(info.legal_actions) > 1:
                twin = _shuffle_hidden(state, rng)
                twin_info = info_set(twin, twin.to_move)
                assert twin_info == info
                for spec in DETERMINISTIC:
                    assert make_agent(spec, seed=9).act(info) == \
                        make_agent(spec, seed=9).act(twin_info), spec
                checked += 1
            res = apply(state, driver.act(info))
            if res.hand is not None:
                break
    assert checked > 20


def test_pimc_worlds_agree_with_what_the_seat_knows():
    state = new_match("scopa", seed=11, players=4)
    for _ in range(6):
        apply(state, state.legal_actions()[0])
    info = info_set(state, state.to_move)
    worlds = sample_worlds(info, 12, random.Random(0))
    assert sum(w for _, w in worlds) == 12
    for w, _ in worlds:
        assert w.hands[info.seat] == info.hand and w.table == info.table
        assert [h.bit_count() for h in w.hands] == list(info.hand_sizes)
        assert w.deck_pos == state.deck_pos and sorted(w.deck) == list(range(N_CARDS))
        others = sum(w.hands[p] for p in range(4) if p != info.seat)
        assert others | sum(1 << c for c in w.deck[w.deck_pos:]) == info.unseen
        assert info_set(w, info.seat) == info


def test_pimc_merges_worlds_when_every_card_is_known():
    # last deal of a 2-player hand: the opponent's hand is the unseen cards
    state = position([["7d", "2c"], ["5s", "9b"]], ["3d", "4c"],
                     piles=(["1d", "1c", "1s", "1b", "2d", "2s", "2b", "3c", "3s", "3b", "4d",
                             "4s", "4b", "5d", "5c", "5b", "6d", "6c", "6s"],
                            ["6b", "7c", "7s", "7b", "8d", "8c", "8s", "8b", "9d", "9c", "9s",
                             "10d", "10c", "10s", "10b"]))
    info = info_set(state, 0)
    worlds = sample_worlds(info, 12, random.Random(0), depth=5)
    assert len(worlds) == 1 and worlds[0][1] == 12


# ----------------------------------------------------------------- behaviour


def _act(spec: str, state: GameState) -> str:
    return action_text(make_agent(spec, seed=0).act(info_set(state, state.to_move)))


def test_greedy_takes_the_best_capture():
    # a scopa beats the settebello, the settebello beats coins, coins beat cards
    s = position([["5c", "7c", "3b"], ["1b", "1s", "2b"]], ["2d", "3s"], deck_left=26)
    assert _act("greedy", s) == "5c x 2d+3s"
    s = position([["7c", "4b", "9s"], ["1b", "1s", "2b"]], ["7d", "4d", "8s"], deck_left=26)
    assert _act("greedy", s) == "7c x 7d"
    s = position([["6s", "9c", "10b"], ["1b", "1s", "2b"]], ["6d", "5c", "1c", "8s"],
                 deck_left=26)
    assert _act("greedy", s) == "6s x 6d"


def test_greedy_gives_the_opponent_least():
    # no capture: 4s would leave 5d+4s (a sweep for any unseen 9), 8c leaves 13
    s = position([["4s", "8c"], ["1b", "1s"]], ["5d"], deck_left=30)
    assert _act("greedy", s) == "8c"


def _late(hands: list[list[str]], table: list[str], deck: list[str]) -> GameState:
    """A position with exactly ``deck`` left to deal; the other cards split in the piles."""
    from scopa_env.cards import CODES
    used = {c for h in hands for c in h} | set(table) | set(deck)
    rest = [c for c in CODES if c not in used]
    s = position(hands, table, piles=(rest[0::2], rest[1::2]), deck_left=len(deck))
    assert set(s.deck[s.deck_pos:]) == {card_id(c) for c in deck}
    return s


def test_expert_declines_a_capture_that_leaves_a_sweep():
    # 2b x 2c leaves 8d alone; the three unseen 8s are 3 of the 9 unseen cards
    s = _late([["2b", "9c", "4s"], ["8s", "1b", "3d"]], ["2c", "8d"],
              ["8c", "8b", "6s", "10d", "5c", "7b"])
    assert _act("greedy", s) == "2b x 2c"
    assert _act("expert", s) in ("9c", "4s")


def test_expert_does_not_expose_the_settebello():
    s = _late([["7d", "4c"], ["7s", "1s"]], ["10b", "9s"], ["7c", "7b", "2d", "3d", "5c", "6c"])
    assert _act("expert", s) == "4c"


def _endgame(hands: list[list[str]], table: list[str], mine: list[str]) -> GameState:
    used = {c for h in hands for c in h} | set(table) | set(mine)
    from scopa_env.cards import CODES
    theirs = [c for c in CODES if c not in used]
    return position(hands, table, piles=(mine, theirs))


def _exact(state: GameState) -> float:
    """Minimax hand margin for the side to move (every card known)."""
    team = state.to_move % 2
    best = -99.0
    for a in state.legal_actions():
        c = state.copy()
        res = apply(c, a, deal_next=False)
        if res.hand is not None:
            sc = res.hand.score
            v = sc[team]["points"]["total"] - sc[1 - team]["points"]["total"]
        else:
            v = -_exact(c)
        best = max(best, v)
    return best


@pytest.mark.parametrize("seed", range(4))
def test_pimc_plays_a_known_endgame_perfectly(seed):
    rng = random.Random(seed)
    from scopa_env.cards import CODES
    cards = list(CODES)
    rng.shuffle(cards)
    s = _endgame([cards[0:2], cards[2:4]], cards[4:6], cards[6:6 + rng.randrange(10, 25)])
    info = info_set(s, 0)
    chosen = make_agent("pimc", seed=0).act(info)
    values = {}
    for a in info.legal_actions:
        c = s.copy()
        res = apply(c, a, deal_next=False)
        assert res.hand is None
        values[a] = -_exact(c)
    assert values[chosen] == max(values.values())


# ----------------------------------------------------------------- leaf model


def test_leaf_model_is_antisymmetric_and_exact_when_settled():
    rules = make_rules("scopa")
    leaf = LeafModel(rules)
    rng = random.Random(1)
    for _ in range(50):
        cards = list(range(N_CARDS))
        rng.shuffle(cards)
        k, j = rng.randrange(0, 25), rng.randrange(0, 15)
        a, b = sum(1 << c for c in cards[:k]), sum(1 << c for c in cards[k:k + j])
        assert leaf.value(a, b) == pytest.approx(-leaf.value(b, a))
    assert CARTE[21][0] == pytest.approx(1.0) and CARTE[20][20] == 0.0
    assert DENARI[6][0] == 1.0 and DENARI[5][5] == 0.0 and DENARI[0][0] == 0.0
    own = m("7d", "7c", "7s", "7b", "6d", "6c") | sum(1 << c for c in range(10, 30))
    # settled: carte +1, settebello +1, primiera +1 (four sevens), denari -1 (2 coins)
    assert leaf.value(own, FULL_DECK & ~own) == pytest.approx(2.0, abs=1e-3)


# ----------------------------------------------------------------- scopa record


@pytest.mark.parametrize("players", [2, 4])
def test_scopa_record_accepts_every_agent_spec(tmp_path, players):
    from scopa_cli import main as scopa

    out = tmp_path / "games.jsonl"
    specs = ["random", "greedy", "expert", "pimc:worlds=3,depth=3"]
    if players == 2:
        pairs = [[specs[0], specs[1]], [specs[2], specs[3]]]
    else:
        pairs = [specs]
    for k, agents in enumerate(pairs):
        assert scopa(["record", "--agents", *agents, "--games", "1", "--seed", str(k),
                      "--players", str(players), "--option", "target_score=3",
                      "--out", str(out)]) == 0
    assert load_and_verify(out) == len(pairs)
    bad = scopa(["record", "--agents", "nosuch", "random", "--out", str(out)])
    assert bad != 0
