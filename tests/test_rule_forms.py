"""Each rule module's two forms agree: the per-game form (Python ints) and the array form
(numpy, many games at once) of ``scopa_env.rules.deal``, ``.capture``, ``.scoring`` and
``.outcome``, and the observation encoding (``observation.encode`` / ``observe``), on
random positions of every named rule set and of a set with every other option turned."""

from __future__ import annotations

import numpy as np
import pytest

from scopa_env import catalogue
from scopa_env.cards import COINS_MASK, N_CARDS, cards_of
from scopa_env.game import GameState, apply, new_match
from scopa_env.moves import ACE_ALL_BASE, action_move, legal_actions
from scopa_env.observation import encode
from scopa_env.rules import NAMED_RULES, Rules, capture, deal, make_rules, outcome, scoring
from scopa_env.vector import VectorScopaEnv

RULE_SETS = [make_rules(name) for name in NAMED_RULES] + [
    make_rules("scopa", players=4),
    make_rules("scopa", capture_rule="fewest", last_play_scopa=True, re_bello=True,
               napola=True, primiera_table="alt", primiera_requires_all_suits=False,
               ace_takes_all=True, target_score=5),
]
IDS = [f"{r.name}-{r.players}p" + ("-options" if r.napola else "") for r in RULE_SETS]


def _mask(cards: np.ndarray) -> int:
    return sum(1 << int(c) for c in cards)


@pytest.mark.parametrize("rules", RULE_SETS, ids=IDS)
def test_deal_forms_agree(rules: Rules) -> None:
    rng = np.random.default_rng(1)
    decks = np.stack([rng.permutation(N_CARDS) for _ in range(400)]).astype(np.int8)
    kings = np.flatnonzero(np.array([c % 10 == 9 for c in range(N_CARDS)]))
    start = rules.players * rules.hand_size
    for d in decks[:100] if rules.table_size >= 3 else ():  # kings put on the opening table
        for k, at in zip(kings, start + rng.permutation(rules.table_size)[:3], strict=False):
            j = int(np.flatnonzero(d == k)[0])
            d[j], d[at] = d[at], d[j]
    assert [deal.needs_redeal(tuple(map(int, d)), rules) for d in decks] == \
        deal.needs_redeal_np(decks, rules).tolist()
    assert [deal.opening_table(tuple(map(int, d)), rules) for d in decks] == \
        [_mask(row) for row in deal.opening_cards_np(decks, rules)]
    seeds, hands = rng.integers(0, 2**62, 300), rng.integers(0, 9, 300)
    orders, attempts = deal.hash_deal_orders(seeds, hands, rules)
    assert not deal.needs_redeal_np(orders, rules).any()
    for i in np.flatnonzero(attempts):  # each redeal was one the rule asks for
        before = deal.hash_decks(seeds[i:i + 1], hands[i:i + 1], attempts[i:i + 1] - 1)
        assert deal.needs_redeal(tuple(map(int, before[0])), rules)
    if rules.redeal_three_kings and rules.table_size >= deal.REDEAL_KINGS:
        assert deal.needs_redeal_np(decks, rules).any()
    n = rules.players * rules.hand_size
    rounds = decks[:, :n].astype(np.int64)
    assert deal.deal_round_np(rounds, rules.players).tolist() == \
        [deal.deal_round(row.tolist(), rules.players) for row in rounds]
    dealers = np.arange(rules.players)
    assert deal.first_seat(dealers, rules.players).tolist() == \
        [deal.first_seat(int(d), rules.players) for d in dealers]
    assert deal.next_dealer(dealers, rules.players).tolist() == \
        [deal.next_dealer(int(d), rules.players) for d in dealers]


def _positions(rules: Rules, rng: np.random.Generator, n: int):
    """(table, action, last_play) of random legal moves."""
    out = []
    while len(out) < n:
        cards = rng.permutation(N_CARDS)
        table = _mask(cards[:rng.integers(0, 6)])
        hand = _mask(cards[6:6 + rules.hand_size])
        for a in legal_actions(hand, table, rules):
            out.append((table, a, bool(rng.integers(0, 2))))
    return out


@pytest.mark.parametrize("rules", RULE_SETS, ids=IDS)
def test_capture_forms_agree(rules: Rules) -> None:
    rng = np.random.default_rng(2)
    moves = _positions(rules, rng, 3000)
    tables = np.array([t for t, _, _ in moves], np.int64)
    ids = np.array([a for _, a, _ in moves], np.int64)
    last = np.array([x for _, _, x in moves])
    caps = catalogue.captured_np(ids, tables)
    assert caps.tolist() == [catalogue.captured(a, t) for t, a, _ in moves]
    assert caps.tolist() == [action_move(a, t).capture for t, a, _ in moves]
    takes_all = ids >= ACE_ALL_BASE
    after = tables & ~caps
    want = [capture.is_scopa(bool(c), int(t), bool(x), bool(lp), rules.last_play_scopa)
            for c, t, x, lp in zip(caps, after, takes_all, last, strict=True)]
    got = capture.is_scopa_np(caps != 0, after, takes_all, last, rules.last_play_scopa)
    assert got.tolist() == want
    assert any(want) and not all(want)
    piles = rng.integers(0, 1 << 40, (len(moves), 2)).astype(np.uint64) & ~tables[:, None].astype(
        np.uint64)
    last_team = rng.integers(-1, 2, len(moves))
    got_piles = piles.copy()
    capture.give_leftover_np(got_piles, np.arange(len(moves)), last_team, tables.astype(np.uint64))
    for i in range(len(moves)):
        want_piles = piles[i].tolist()
        capture.give_leftover(want_piles, None if last_team[i] < 0 else int(last_team[i]),
                              int(tables[i]))
        assert got_piles[i].tolist() == want_piles


def _real_positions(rules: Rules, rng: np.random.Generator, n: int) -> list[GameState]:
    """Positions of real play: a match's first hand after random legal moves, a quarter
    of them at the hand's last play."""
    moves = N_CARDS - rules.table_size
    out = []
    for _ in range(n):
        s = new_match(rules, seed=int(rng.integers(2**31)))
        for _ in range(moves - 1 if rng.random() < 0.25 else int(rng.integers(0, moves))):
            apply(s, int(rng.choice(s.legal_actions())))
        out.append(s)
    return out


@pytest.mark.parametrize("rules", RULE_SETS, ids=IDS)
def test_move_forms_agree(rules: Rules) -> None:
    """The vector engine's array step does what the one transition does
    (``capture.play_card``, which ``game.apply`` and the endgame solver call): the card
    leaves the hand, the capture or the lay, the scopa, the last capturer."""
    rng = np.random.default_rng(4)
    states = _real_positions(rules, rng, 300)
    env = VectorScopaEnv(len(states), rules, seed=0, records=False)
    env.load_states(range(len(states)), states)
    picks = [int(rng.choice(s.legal_actions())) for s in states]
    out = env.step(np.array(picks))
    scopas = last_plays = 0
    for i, (s, a) in enumerate(zip(states, picks, strict=True)):
        seat, team, card = s.to_move, s.to_move % 2, action_move(a).card
        take = catalogue.captured(a, s.table)
        last_play = s.deck_pos == N_CARDS and sum(s.hands) == 1 << card
        hand, table, pile, scopa = capture.play_card(
            s.hands[seat], s.table, s.piles[team], card, take, a >= ACE_ALL_BASE, last_play,
            rules.last_play_scopa)
        assert bool(out.scopa[i]) == scopa and bool(out.hand_over[i]) == last_play
        scopas, last_plays = scopas + scopa, last_plays + last_play
        if last_play:  # the hand was scored and the next one dealt
            continue
        last = s.last_capture_team if not take else team
        assert (int(env.table[i]), int(env.piles[i, team]), int(env.piles[i, 1 - team]),
                int(env.scope[i, team]), int(env.last_capture[i])) == \
            (table, pile, s.piles[1 - team], s.scope[team] + scopa, -1 if last is None else last)
        if sum(s.hands) != 1 << card:  # the deal goes on: the mover's hand is as played
            assert int(env.hands[i, seat]) == hand
    assert scopas and last_plays


@pytest.mark.parametrize("rules", RULE_SETS, ids=IDS)
def test_scoring_forms_agree(rules: Rules) -> None:
    rng = np.random.default_rng(3)
    piles, scope = [], []
    for _ in range(500):
        cards = rng.permutation(N_CARDS)
        cut = int(rng.integers(0, N_CARDS + 1))
        if rng.random() < 0.2:  # close to the majorities
            cut = int(rng.choice([19, 20, 21]))
        piles.append([_mask(cards[:cut]), _mask(cards[cut:])])
        scope.append(rng.integers(0, 4, 2).tolist())
    got = scoring.score_hands_np(np.array(piles, np.uint64), np.array(scope, np.int64), rules)
    for row, p, s in zip(got, piles, scope, strict=True):
        entries = scoring.score_hand(p, s, rules)
        for team in range(2):
            want = [-1 if entries[team][k] is None else entries[team][k]
                    for k in scoring.COUNT_KEYS]
            want += [entries[team]["points"][k] for k in scoring.POINT_KEYS]
            assert row[team].tolist() == want
    partial = np.array([[_mask(rng.permutation(N_CARDS)[:rng.integers(0, 25)]) for _ in
                         range(2)] for _ in range(300)], np.int64)
    own, other = partial[:, 0], partial[:, 1] & ~partial[:, 0]
    assert scoring.carte_open_np(own, other).tolist() == \
        [scoring.carte_open(int(a), int(b)) for a, b in zip(own, other, strict=True)]
    assert scoring.denari_open_np(own, other).tolist() == \
        [scoring.denari_open(int(a), int(b)) for a, b in zip(own, other, strict=True)]
    # "more than half": a 20-20 (5-5) split scores nobody
    assert 2 * (scoring.CARTE_MAJORITY - 1) == N_CARDS
    assert 2 * (scoring.DENARI_MAJORITY - 1) == len(cards_of(COINS_MASK))


@pytest.mark.parametrize("rules", RULE_SETS, ids=IDS)
def test_outcome_forms_agree(rules: Rules) -> None:
    rng = np.random.default_rng(4)
    target = rules.target_score
    score = rng.integers(0, target + 4, (400, 2))
    score[::7, 1] = score[::7, 0]  # ties
    done, winner = outcome.match_winner_np(score, target)
    want = [outcome.match_winner(s.tolist(), target) for s in score]
    assert winner.tolist() == [-1 if w is None else w for w in want]
    assert done.tolist() == [w is not None for w in want]
    totals = rng.integers(0, 6, (400, 2))
    totals[::5, 1] = totals[::5, 0]
    for reward in ("match", "points"):
        for episode in ("match", "hand"):
            over, team0 = outcome.hand_end_np(reward, episode, totals, done, winner)
            for i in range(len(totals)):
                end, rewards = outcome.hand_end(reward, episode, totals[i].tolist(),
                                                bool(done[i]), want[i])
                assert (bool(over[i]), float(team0[i]), -float(team0[i])) == \
                    (end, rewards[0], rewards[1])


@pytest.mark.parametrize("rules", RULE_SETS, ids=IDS)
def test_observation_forms_agree(rules: Rules) -> None:
    env = VectorScopaEnv(16, rules, seed=5, records=False, shuffle="engine")
    rng = np.random.default_rng(5)
    for _ in range(60):
        obs = env.observe()
        for i in range(env.num_envs):
            state = env.game_state(i)
            assert np.array_equal(obs[i], encode(state, state.to_move))
        pick = (rng.random(env.num_envs) * env.legal_valid.sum(1)).astype(np.int64)
        env.step(env.legal_ids[np.arange(env.num_envs), pick])
