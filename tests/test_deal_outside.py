"""The deal as explicit chance: a hand dealt card by card from outside (``deal="outside"``,
``deal_card``) is the seeded deal when given the same cards, and ``deal_odds`` is the
distribution of the seeded shuffle (uniform over the deals the three-kings rule keeps)."""

from __future__ import annotations

import random
from math import comb, perm

import pytest

from scopa_env.cards import RANK_MASK, card_id
from scopa_env.game import IllegalMoveError, apply, deal_card, new_match
from scopa_env.rules import NAMED_RULES, make_rules
from scopa_env.rules.deal import TABLE, _kept_tables, deal_odds, deal_place, needs_redeal

KINGS = [c for c in range(40) if RANK_MASK[10] >> c & 1]


def every_game():
    for name in NAMED_RULES:
        for players in (2, 4):
            try:
                yield make_rules(name, players=players)
            except ValueError:  # the scopone games are for 4 players only
                continue


@pytest.mark.parametrize("rules", list(every_game()), ids=lambda r: f"{r.name}-{r.players}p")
def test_dealt_from_outside_is_the_seeded_deal(rules):
    """Given the seeded deck's cards one by one, the outside deal reaches the same state
    after every card round, plays the same moves and scores every hand the same."""
    for seed in range(6):
        seeded, outside = new_match(rules, seed), new_match(rules, seed, deal="outside")
        rng = random.Random(seed)
        hands = 0
        while not seeded.done:
            while outside.to_deal:
                assert outside.legal_actions() == []
                deal_card(outside, seeded.deck[outside.deck_pos])
            assert (outside.hands, outside.table, outside.to_move, outside.deck_pos) == (
                seeded.hands, seeded.table, seeded.to_move, seeded.deck_pos)
            assert outside.deck == seeded.deck[:seeded.deck_pos]
            action = rng.choice(seeded.legal_actions())
            a, b = apply(seeded, action), apply(outside, action)
            assert a.move == b.move
            if a.hand is not None:
                hands += 1
                assert (b.hand.deck, b.hand.score, b.hand.leftover) == (
                    a.hand.deck, a.hand.score, a.hand.leftover)
                assert outside.match_score == seeded.match_score
        assert outside.done and outside.winner == seeded.winner and hands >= 1


def test_deal_place_follows_the_deal_order():
    r = make_rules("scopa")  # dealer 1: seat 0 gets cards 0, 2, 4; the table 6..9
    assert [deal_place(i, 1, r) for i in range(12)] == [0, 1, 0, 1, 0, 1] + [TABLE] * 4 + [0, 1]
    r4 = make_rules("scopone")  # dealer 3: 36 cards to the seats 0, 1, 2, 3, 0, ...
    assert [deal_place(i, 3, r4) for i in (0, 1, 5, 35, 36, 39)] == [0, 1, 1, 3, TABLE, TABLE]


@pytest.mark.parametrize("rules", [make_rules("scopa"), make_rules("scopone"),
                                   make_rules("scopa", players=4)], ids=lambda r: r.name)
def test_deal_odds_are_the_kept_shuffles(rules):
    """The product of the odds along a deal is 1 / (the number of ordered deals the
    three-kings rule keeps), for every deal: uniform over the kept deals."""
    start, t = rules.players * rules.hand_size, rules.table_size
    length = min(start + t + 2, 40)
    kept = _kept_tables(40, 4, t, 0) / comb(40, t)
    checked = 0
    for trial in range(120):
        rng = random.Random(trial)
        cards = list(range(40))
        rng.shuffle(cards)
        if trial % 2:  # two kings on the opening table: the third is left out
            rest = [c for c in cards if c not in KINGS]
            cards = rest[:start] + KINGS[:2] + rest[start:start + t - 2] + KINGS[2:] + \
                rest[start + t - 2:]
        if needs_redeal(tuple(cards), rules):
            continue
        p = 1.0
        for k in range(length):
            odds = dict(deal_odds(tuple(cards[:k]), rules))
            assert abs(sum(odds.values()) - 1) < 1e-12
            p *= odds[cards[k]]
        assert p * perm(40, length) * kept == pytest.approx(1, rel=1e-9)
        checked += 1
    assert checked >= 60


def test_deal_odds_leave_out_the_third_king_on_the_table():
    r = make_rules("scopa")
    non_kings = [c for c in range(40) if c not in KINGS]
    dealt = tuple(non_kings[:6]) + tuple(KINGS[:2])  # the hands, then two kings face up
    odds = dict(deal_odds(dealt, r))
    assert not set(KINGS) & set(odds) and len(odds) == 40 - 8 - 2
    assert dict(deal_odds(dealt, make_rules("scopa", redeal_three_kings=False)))[KINGS[2]] > 0
    after_table = dealt + tuple(non_kings[6:8])  # the table is done: uniform from here
    assert set(p for _, p in deal_odds(after_table, r)) == {1 / 30}
    with pytest.raises(ValueError, match="3 kings on the opening table"):
        deal_odds(tuple(non_kings[:6]) + tuple(KINGS[:3]), r)


def test_deal_card_refusals():
    s = new_match("scopa", 1, deal="outside")
    assert s.to_deal == 10 and s.legal_actions() == []
    with pytest.raises(IllegalMoveError, match="deal is not finished: 10 more"):
        apply(s, 0)
    with pytest.raises(IllegalMoveError, match="out of range"):
        deal_card(s, 40)
    deal_card(s, card_id("7d"))
    with pytest.raises(IllegalMoveError, match="7d is already dealt"):
        deal_card(s, card_id("7d"))
    for c in range(30, 35):
        deal_card(s, c)
    deal_card(s, KINGS[0])
    deal_card(s, KINGS[1])
    with pytest.raises(IllegalMoveError, match="would put 3 kings on the opening table"):
        deal_card(s, KINGS[2])
    deal_card(s, 0)
    deal_card(s, 1)
    assert s.to_deal == 0 and s.legal_actions()
    with pytest.raises(IllegalMoveError, match="no card is due"):
        deal_card(s, 2)
    with pytest.raises(ValueError, match="deal must be 'seed' or 'outside'"):
        new_match("scopa", 1, deal="shuffle")
