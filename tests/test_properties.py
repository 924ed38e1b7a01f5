"""Property tests over random games (hypothesis): conservation, exact masks, scores."""

import random
from itertools import combinations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scopa_env.cards import FULL_DECK, RANK, RANK_MASK, cards_of
from scopa_env.game import apply, new_match
from scopa_env.moves import ACE_ALL_BASE, SUIT, action_id
from scopa_env.rules import make_rules

RULESETS = [("scopa", {}), ("scopa", {"players": 4}), ("scopa", {"capture_rule": "fewest"}),
            ("asso_piglia_tutto", {}), ("asso_piglia_tutto", {"players": 4}), ("scopone", {}),
            ("scopone_scientifico", {}), ("scopa", {"last_play_scopa": True, "re_bello": True,
                                                    "napola": True})]


def brute_force_legal(hand: int, table: int, rules) -> list[int]:
    """Legal moves straight from rules.md, by enumerating every subset of the table."""
    tcards = cards_of(table)
    out = []
    for c in cards_of(hand):
        r = RANK[c]
        same = [t for t in tcards if RANK[t] == r]
        if r == 1 and rules.ace_takes_all and tcards and not same:
            out.append(ACE_ALL_BASE + SUIT[c])
            continue
        if same:
            out.extend(action_id(c, 1 << t) for t in same)
            continue
        sets = [s for k in range(2, len(tcards) + 1) for s in combinations(tcards, k)
                if sum(RANK[x] for x in s) == r]
        if rules.capture_rule == "fewest" and sets:
            k = min(len(s) for s in sets)
            sets = [s for s in sets if len(s) == k]
        if not sets:
            out.append(action_id(c, 0))
        out.extend(action_id(c, sum(1 << x for x in s)) for s in sets)
    return sorted(out)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ruleset=st.sampled_from(RULESETS), seed=st.integers(0, 2**31 - 1),
       move_seed=st.integers(0, 2**31 - 1))
def test_random_games_conserve_cards_and_masks_are_exact(ruleset, seed, move_seed):
    name, opts = ruleset
    rules = make_rules(name, **opts)
    s = new_match(rules, seed=seed)
    rng = random.Random(move_seed)
    hand_points = [0, 0]
    while not s.done:
        legal = s.legal_actions()
        assert legal == brute_force_legal(s.hands[s.to_move], s.table, rules)
        undealt = sum(1 << c for c in s.deck[s.deck_pos:])
        parts = s.hands + [s.table, s.piles[0], s.piles[1], undealt]
        assert sum(p.bit_count() for p in parts) == 40
        union = 0
        for p in parts:
            union |= p
        assert union == FULL_DECK
        res = apply(s, rng.choice(legal))
        if res.hand is not None:
            piles = [0, 0]
            for t, e in enumerate(res.hand.score):
                pts = e["points"]
                assert pts["total"] == sum(v for k, v in pts.items() if k != "total")
                assert pts["carte"] == int(e["cards"] > 20)
                assert pts["denari"] == int(e["coins"] > 5)
                assert pts["scope"] == e["scope"]
                hand_points[t] += pts["total"]
                piles[t] = e["cards"]
            leftover_lost = res.hand.last_capture_team is None
            assert sum(piles) == (40 - res.hand.leftover.bit_count() if leftover_lost else 40)
            assert res.hand.score[0]["settebello"] + res.hand.score[1]["settebello"] <= 1
    assert s.match_score == hand_points


def test_kings_rank_mask():
    assert len(cards_of(RANK_MASK[10])) == 4


@settings(max_examples=500, deadline=None)
@given(st.integers(0, FULL_DECK))
def test_rank_counts_are_the_cards_of_each_rank(table):
    from scopa_env.rules.capture import rank_counts

    counts = rank_counts(table)
    for k in range(1, 11):
        assert counts >> (4 * k - 4) & 15 == len(cards_of(table & RANK_MASK[k]))
    assert counts >> 40 == 0
