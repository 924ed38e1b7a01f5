"""The batched environment (``scopa_env.vector``) is exact to the single-game engine.

Every game of a ``VectorScopaEnv`` is replayed move for move through
``scopa_env.game`` from the same deal orders: seat to move, legal sets,
observations, rewards, terminations, hand scores, match scores and game records
must be identical at every step, for every named rule set, 2 and 4 players and
the options of rules.md.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from scopa_env import raw_env
from scopa_env.cards import mask_of
from scopa_env.game import GameState, IllegalMoveError, apply, new_match
from scopa_env.moves import N_ACTIONS, legal_actions
from scopa_env.observation import encode, info_set
from scopa_env.records import MatchRecorder, load_and_verify, verify_record
from scopa_env.rules import make_rules
from scopa_env.rules.deal import hash_decks, needs_redeal
from scopa_env.rules.outcome import hand_end
from scopa_env.vector import VectorScopaEnv


def expected_rewards(res: Any, state: GameState, reward: str, episode: str
                     ) -> tuple[list[float], bool]:
    """Each seat's reward and the episode's end, as the AEC environment defines them."""
    p = state.rules.players
    if res.hand is None:
        return [0.0] * p, False
    done, team = hand_end(reward, episode, [e["points"]["total"] for e in res.hand.score],
                          res.match_over, state.winner)
    return [team[s % 2] for s in range(p)], done


class Mirror:
    """The engine twin of every game of ``env``, fed the same deal orders."""

    def __init__(self, env: VectorScopaEnv, engine_decks: bool):
        self.env = env
        self.engine_decks = engine_decks  # True: the engine shuffles from the match seed
        self.states: list[GameState] = []
        self.recorders: list[MatchRecorder] = []
        for i in range(env.num_envs):
            self._fresh(i, append=True)
        self.matches = 0
        self.hands = 0

    def _fresh(self, i: int, append: bool = False) -> None:
        env = self.env
        deck = None if self.engine_decks else env.decks[i].tolist()
        s = new_match(env.rules, seed=int(env.match_seeds[i]), deck=deck)
        rec = MatchRecorder(s, env.agent_names)
        if append:
            self.states.append(s)
            self.recorders.append(rec)
        else:
            self.states[i], self.recorders[i] = s, rec

    def check_position(self, t: int) -> None:
        env = self.env
        obs = env.observe()
        want = np.stack([encode(s, s.to_move) for s in self.states])
        assert np.array_equal(obs, want), f"observations differ at step {t}"
        assert env.to_move.tolist() == [s.to_move for s in self.states]
        counts = env.legal_valid.sum(1)
        for i, s in enumerate(self.states):
            legal = legal_actions(s.hands[s.to_move], s.table, s.rules)
            assert env.legal_ids[i, :counts[i]].tolist() == legal, (t, i)
            assert env.legal_valid[i, :counts[i]].all()
        sample = range(t % 11, env.num_envs, 11)
        for i in sample:
            s = self.states[i]
            got = env.game_state(i)
            if not self.engine_decks:  # the engine counts no redeal for a deck it is given
                got.redeals = s.redeals
            assert got == s, (t, i)
            info = env.info_set(i)
            assert info == info_set(s, s.to_move), (t, i)
            # the round's public moves (not compared by ==): the engine's, read back
            assert (info.round_moves, info.round_start) == (s.round_moves, s.round_start)
            assert (got.round_moves, got.round_start) == (s.round_moves, s.round_start)
        if t % 40 == 0:
            mask = env.action_mask()
            assert mask.shape == (env.num_envs, N_ACTIONS) and mask.dtype == np.int8
            for i, s in enumerate(self.states):
                assert np.flatnonzero(mask[i]).tolist() == s.legal_actions()

    def step(self, actions: np.ndarray) -> None:
        env = self.env
        out = env.step(actions)
        records = dict(out.records)
        assert len(records) == len(out.records)
        for i, s in enumerate(self.states):
            nxt = None
            if not self.engine_decks and out.hand_over[i] and not out.match_over[i] \
                    and not out.terminated[i]:
                nxt = env.decks[i].tolist()  # the next hand's deal, as the env dealt it
            res = apply(s, int(actions[i]), next_deck=nxt)
            self.recorders[i].observe(res, s)
            rewards, done = expected_rewards(res, s, env.reward_mode, env.episode_mode)
            assert out.rewards[i].tolist() == rewards, (i, out.rewards[i], rewards)
            assert bool(out.terminated[i]) == done
            assert bool(out.scopa[i]) == res.move.scopa
            assert bool(out.hand_over[i]) == (res.hand is not None)
            assert bool(out.match_over[i]) == res.match_over
            assert out.match_score[i].tolist() == s.match_score
            if res.hand is not None:
                self.hands += 1
                assert out.hand_points[i].tolist() == [
                    e["points"]["total"] for e in res.hand.score]
            if res.match_over:
                self.matches += 1
                assert int(out.winner[i]) == s.winner
                if env.record_matches:
                    assert records.pop(i) == self.recorders[i].record
            else:
                assert int(out.winner[i]) == -1
            if done:
                self._fresh(i)
        assert not records, f"records of games whose match did not end: {list(records)}"


def play(env: VectorScopaEnv, steps: int, seed: int, engine_decks: bool = False) -> Mirror:
    """Random legal moves (chosen vectorised) in ``env`` and its engine mirror."""
    rng = np.random.default_rng(seed)
    mirror = Mirror(env, engine_decks)
    for t in range(steps):
        mirror.check_position(t)
        pick = (rng.random(env.num_envs) * env.legal_valid.sum(1)).astype(np.int64)
        mirror.step(env.legal_ids[np.arange(env.num_envs), pick])
    mirror.check_position(steps)
    return mirror


CONFIGS = [
    # (rules, options, games, steps, minimum finished matches)
    ("scopa", {}, 64, 420, 100),
    ("scopa", {"players": 4, "reward": "points"}, 64, 300, 60),
    ("asso_piglia_tutto", {"episode": "hand", "reward": "points"}, 48, 120, 0),
    ("asso_piglia_tutto", {"players": 4, "target_score": 5}, 64, 300, 180),
    ("scopone", {"reward": "points", "episode": "hand"}, 32, 120, 0),
    ("scopone", {}, 32, 240, 20),
    ("scopone_scientifico", {"target_score": 6}, 32, 240, 60),
    ("scopone_scientifico", {"reward": "points", "capture_rule": "fewest"}, 32, 200, 10),
    ("scopa", {"capture_rule": "fewest", "napola": True, "re_bello": True,
               "target_score": 4}, 96, 300, 420),
    ("scopa", {"players": 4, "last_play_scopa": True, "primiera_table": "alt",
               "primiera_requires_all_suits": False, "redeal_three_kings": False,
               "target_score": 3}, 96, 300, 470),
    ("asso_piglia_tutto", {"capture_rule": "fewest", "last_play_scopa": True,
                           "target_score": 4, "episode": "hand"}, 48, 200, 100),
    ("scopa", {"target_score": 16, "reward": "points"}, 32, 250, 10),
    ("scopa", {"table_size": 10, "target_score": 5}, 32, 200, 60),
    ("scopa", {"players": 4, "hand_size": 1, "target_score": 4}, 32, 200, 60),
]


@pytest.mark.parametrize(("rules", "options", "games", "steps", "min_matches"), CONFIGS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CONFIGS)])
def test_exact_to_engine(rules: str, options: dict, games: int, steps: int,
                         min_matches: int) -> None:
    env = VectorScopaEnv(games, rules=rules, seed=len(json.dumps(options)), **options)
    mirror = play(env, steps, seed=games + steps)
    assert mirror.matches >= min_matches, mirror.matches
    assert mirror.hands >= games * (steps // (40 - env.rules.table_size) - 1)


def test_engine_shuffle_equals_new_match_by_seed() -> None:
    """``shuffle="engine"``: game i is ``new_match(rules, seed=match_seeds[i])``, redeals
    (three kings) included, with no deal order passed to the engine."""
    for rules, opts in (("scopa", {}), ("scopone", {"target_score": 4})):
        env = VectorScopaEnv(24, rules=rules, shuffle="engine", seed=3, **opts)
        mirror = play(env, 200, seed=4, engine_decks=True)
        assert mirror.matches > 0


def test_huge_opening_table() -> None:
    """A rule set with a 34-card opening table (``table_size`` is an option too)."""
    env = VectorScopaEnv(6, rules="scopa", table_size=34, redeal_three_kings=False, seed=9)
    play(env, 40, seed=10)


@pytest.mark.parametrize("capture_rule", ["any", "fewest"])
def test_every_sum_capture(capture_rule: str) -> None:
    """Three kings facing every card of ranks 1-9 but two nines: thousands of sum
    captures in one legal set, none dropped; then each of them played."""
    rules = make_rules("scopa", capture_rule=capture_rule)
    kings = [9, 19, 29]
    hand1 = [39, 8, 18]  # 10b 9d 9c
    table = mask_of(c for c in range(40) if c not in kings + hand1)
    state = GameState(rules=rules, seed=1, dealer=1, deck=tuple(range(40)), deck_pos=40,
                      hands=[mask_of(kings), mask_of(hand1)], table=table, to_move=0)
    legal = legal_actions(state.hands[0], table, rules)
    assert len(legal) > (3000 if capture_rule == "any" else 30)
    env = VectorScopaEnv(1, rules=rules, seed=0, records=False)
    env.load_states([0], [state])
    assert env.legal_ids[0].tolist() == legal and env.legal_valid.all()
    some = [legal[k] for k in np.linspace(0, len(legal) - 1, 40).astype(int)]
    env = VectorScopaEnv(len(some), rules=rules, seed=0, records=False)
    env.load_states(range(len(some)), [state.copy() for _ in some])
    env.step(np.array(some))
    for i, a in enumerate(some):
        s = state.copy()
        apply(s, a)
        got = env.game_state(i)
        got.deck = s.deck  # load_states rearranges the dealt part of the deck
        assert got == s


def _random_position(rng: np.random.Generator, rules: Any) -> GameState:
    """A position of real play with a random table of 0-18 cards."""
    p, h, ts = rules.players, rules.hand_size, rules.table_size
    moves = int(rng.integers(0, 40 - ts))
    dealer = int(rng.integers(p))
    j = moves % (p * h)
    deck_pos = p * h + ts + (moves // (p * h)) * p * h
    cards = [int(c) for c in rng.permutation(40)]
    undealt = [cards.pop() for _ in range(40 - deck_pos)]
    hands = [0] * p
    first = (dealer + 1) % p
    for q in range(p):  # the seat at position q of this deal has played ceil((j - q) / p)
        played = (j - q + p - 1) // p
        seat = (first + q) % p
        for _ in range(h - played):
            hands[seat] |= 1 << cards.pop()
    table = mask_of(cards.pop() for _ in range(int(rng.integers(0, min(19, len(cards) + 1)))))
    rest = mask_of(cards) & ~table
    split = int(rng.integers(0, 2**40))
    piles = [rest & split & ~(1 << 6), rest & ~split & ~(1 << 6)]
    deck = tuple([c for c in range(40) if c not in undealt] + undealt)
    return GameState(rules=rules, seed=1, dealer=dealer, deck=deck,
                     deck_pos=deck_pos, hands=hands, table=table, piles=piles,
                     scope=[int(rng.integers(3)), 0], last_capture_team=None,
                     to_move=(first + j) % p, match_score=[3, 4])


@pytest.mark.parametrize("options", [{}, {"capture_rule": "fewest"}, {"ace_takes_all": True},
                                     {"capture_rule": "fewest", "ace_takes_all": True,
                                      "players": 4}])
def test_legal_sets_on_crowded_tables(options: dict) -> None:
    """Legal sets of positions whose tables hold up to 18 cards (many repeated ranks)."""
    rules = make_rules("scopa", **options)
    rng = np.random.default_rng(len(options))
    states = [_random_position(rng, rules) for _ in range(1500)]
    env = VectorScopaEnv(len(states), rules=rules, seed=0)
    env.load_states(range(len(states)), states)
    counts = env.legal_valid.sum(1)
    for i, s in enumerate(states):
        assert env.legal_ids[i, :counts[i]].tolist() == legal_actions(
            s.hands[s.to_move], s.table, rules), i
    want = np.stack([encode(s, s.to_move) for s in states])
    assert np.array_equal(env.observe(), want)


def test_aec_environment_rewards() -> None:
    """Rewards and terminations equal the AEC environment's, step for step."""
    for reward in ("match", "points"):
        for episode in ("match", "hand"):
            env = VectorScopaEnv(3, reward=reward, episode=episode, shuffle="engine",
                                 seed=11, target_score=4)
            aec = []
            for i in range(3):
                a = raw_env(reward=reward, episode=episode, target_score=4)
                a.reset(seed=int(env.match_seeds[i]))
                aec.append(a)
            rng = np.random.default_rng(0)
            ended = 0
            for _ in range(400):
                pick = (rng.random(3) * env.legal_valid.sum(1)).astype(np.int64)
                acts = env.legal_ids[np.arange(3), pick]
                for i, a in enumerate(aec):
                    assert a.agent_selection == f"player_{env.to_move[i]}"
                    mask = a.observe(a.agent_selection)["action_mask"]
                    assert np.flatnonzero(mask).tolist() == env.legal_ids[
                        i, env.legal_valid[i]].tolist()
                out = env.step(acts)
                for i, a in enumerate(aec):
                    a.step(int(acts[i]))
                    assert [a.rewards[f"player_{s}"] for s in range(2)] == \
                        out.rewards[i].tolist()
                    assert all(a.terminations.values()) == bool(out.terminated[i])
                    if out.terminated[i]:
                        ended += 1
                        a.reset(seed=int(env.match_seeds[i]))
            assert ended > 3


def test_records_verify_and_roundtrip(tmp_path: Any) -> None:
    """Records written from the batched env verify with the same reader as the AEC env's."""
    from scopa_env.records import append_records

    env = VectorScopaEnv(16, rules="scopa", players=4, seed=2, target_score=5,
                         agent_names=["a", "b", "c", "d"])
    rng = np.random.default_rng(1)
    records: list[dict] = []
    while len(records) < 20:
        pick = (rng.random(16) * env.legal_valid.sum(1)).astype(np.int64)
        out = env.step(env.legal_ids[np.arange(16), pick])
        records += [r for _, r in out.records]
    path = tmp_path / "vector.jsonl"
    append_records(path, records)
    assert load_and_verify(path) == len(records)
    for r in records:
        verify_record(r)
        assert r["players"] == ["a", "b", "c", "d"]
        assert sum(h["score"][0]["points"]["total"] for h in r["hands"]) == r["match_score"][0]


def test_illegal_action_names_game_and_applies_nothing() -> None:
    env = VectorScopaEnv(8, seed=5)
    rng = np.random.default_rng(0)
    for _ in range(7):
        pick = (rng.random(8) * env.legal_valid.sum(1)).astype(np.int64)
        env.step(env.legal_ids[np.arange(8), pick])
    before = {k: v.copy() for k, v in vars(env).items() if isinstance(v, np.ndarray)}
    obs = env.observe()
    acts = env.legal_ids[:, 0].copy()
    legal3 = env.legal_ids[3, env.legal_valid[3]].tolist()
    bad = next(a for a in range(40) if a not in legal3)
    acts[3] = bad
    with pytest.raises(IllegalMoveError) as e:
        env.step(acts)
    msg = str(e.value)
    assert "game 3" in msg and f"seat {env.to_move[3]}" in msg and "legal moves" in msg
    from scopa_env.moves import action_text
    assert action_text(bad) in msg and all(action_text(a) in msg for a in legal3)
    for k, v in before.items():
        assert np.array_equal(getattr(env, k), v), k
    assert np.array_equal(env.observe(), obs)
    for wrong in (-1, N_ACTIONS, 10**9):
        acts[3] = wrong
        with pytest.raises(IllegalMoveError, match="game 3"):
            env.step(acts)
    with pytest.raises(ValueError, match="shape"):
        env.step(acts[:4])
    with pytest.raises(ValueError, match="integer"):
        env.step(acts.astype(float))
    env.step(env.legal_ids[:, 0])  # still playable


def test_explicit_decks() -> None:
    """``reset(decks=...)`` and ``set_next_decks`` fix the deal orders."""
    rng = np.random.default_rng(3)
    rules = make_rules("scopa")
    decks = []
    while len(decks) < 4:
        d = rng.permutation(40).tolist()
        if sum(c % 10 == 9 for c in d[6:10]) < 3:
            decks.append(d)
    env = VectorScopaEnv(4, rules=rules, seed=0)
    env.reset(decks=decks)
    assert env.decks.tolist() == decks
    states = [new_match(rules, seed=int(env.match_seeds[i]), deck=decks[i]) for i in range(4)]
    assert [env.game_state(i) for i in range(4)] == states
    env.set_next_decks([2], [decks[0]])
    for _ in range(36):
        acts = env.legal_ids[:, 0]
        env.step(acts)
        for i, s in enumerate(states):
            apply(s, int(acts[i]), next_deck=decks[0] if i == 2 else env.decks[i].tolist())
    assert env.decks[2].tolist() == decks[0]
    assert [env.game_state(i) for i in range(4)] == states
    kings = [c for c in range(9, 40, 10)]
    others = [c for c in range(40) if c not in kings]
    with pytest.raises(ValueError, match="three or more kings"):
        env.set_next_decks([0], [others[:6] + kings[:3] + others[6:] + kings[3:]])


def test_fast_shuffle_redeals_as_the_engine_rule() -> None:
    """The fast shuffle's array form of the three-kings rule redeals exactly the deal
    orders that ``rules.deal.needs_redeal`` redeals: the deck dealt never needs one, the
    attempt before it (when there was one) did."""
    rules = make_rules("scopa", table_size=10)  # many kings on the table: many redeals
    env = VectorScopaEnv(512, rules=rules, seed=4, records=False)
    redealt = np.flatnonzero(env.redeals)
    assert len(redealt) > 10
    for i in range(env.num_envs):
        assert not needs_redeal(tuple(env.decks[i].tolist()), rules)
    before = hash_decks(env.match_seeds[redealt], env.hand_index[redealt],
                        env.redeals[redealt] - 1)
    assert all(needs_redeal(tuple(d.tolist()), rules) for d in before)


def test_seeds_are_deterministic_per_game() -> None:
    a = VectorScopaEnv(8, seed=42)
    b = VectorScopaEnv(16, seed=42)
    assert np.array_equal(a.decks, b.decks[:8]) and np.array_equal(a.match_seeds,
                                                                    b.match_seeds[:8])
    c = VectorScopaEnv(8, seed=43)
    assert not np.array_equal(a.decks, c.decks)
    a.reset()  # fresh seeds
    assert not np.array_equal(a.decks, b.decks[:8])
    a.reset(seed=42)
    assert np.array_equal(a.decks, b.decks[:8])
    decks = hash_decks(np.arange(2000), np.zeros(2000), np.zeros(2000))
    assert (np.sort(decks, axis=1) == np.arange(40)).all()
    assert len({tuple(d) for d in decks.tolist()}) == 2000
    # a shuffle's cards are spread evenly over the positions
    hist = np.bincount(decks[:, 0], minlength=40)
    assert hist.min() > 20


def test_options_and_errors() -> None:
    env = VectorScopaEnv(2, rules="scopone_scientifico", records=False)
    assert env.players == 4 and env.rules.hand_size == 10 and env.num_envs == 2
    assert env.legal_ids.dtype == np.int64 and env.to_move.dtype == np.int64
    assert env.observe().shape == (2, 216) and env.observe().dtype == np.float32
    out = env.step(env.legal_ids[:, 0])
    assert out.rewards.shape == (2, 4) and out.rewards.dtype == np.float32
    assert out.terminated.shape == (2,) and out.records == []
    for bad in ({"reward": "x"}, {"episode": "x"}, {"shuffle": "x"}, {"players": 3},
                {"rules": "scopone", "players": 2}, {"nonsense": 1}):
        with pytest.raises(ValueError):
            VectorScopaEnv(2, **bad)
    with pytest.raises(ValueError):
        VectorScopaEnv(0)


@pytest.mark.parametrize("rules", ["scopa", "scopone_scientifico"])
def test_a_loaded_position_keeps_its_rounds_public_moves(rules: str) -> None:
    """``load_states`` takes a position's round history (what a search reads the others'
    moves by), ``copy_games`` copies it, and play goes on from it as the engine's does; a
    position loaded without its round's moves shows none (nothing to read)."""
    r = make_rules(rules)
    s = new_match(r, seed=5)
    for _ in range(r.players + 1):  # into the round: every seat has moved once
        apply(s, s.legal_actions()[0])
    assert s.round_moves
    blind = s.copy()
    blind.round_moves, blind.round_start = (), None
    env = VectorScopaEnv(3, rules=r, seed=0, records=False)
    env.load_states([0, 1], [s.copy(), blind])
    env.copy_games([2], [0])
    for g in (0, 2):
        info = env.info_set(g)
        assert (info.round_moves, info.round_start) == (s.round_moves, s.round_start)
    assert env.info_set(1).round_moves == () and env.info_set(1).round_start is None
    a = env.legal_ids[0, 0]
    env.step(np.array([a, a, a]))
    apply(s, int(a))
    for g in (0, 2):
        assert env.game_state(g).round_moves == s.round_moves
    assert env.info_set(1).round_moves == ()  # still unknown until the next round
