"""Hand-made positions for every rule of rules.md."""

import pytest

from scopa_env.cards import card_id
from scopa_env.game import GameState, IllegalMoveError, apply, new_match
from scopa_env.moves import parse_action
from scopa_env.rules import make_rules, parse_option
from scopa_env.rules.deal import shuffled_deck
from scopa_env.rules.scoring import primiera, score_hand
from tests.helpers import legal_texts, m, position


# -- moves ---------------------------------------------------------------------------------
def test_same_rank_priority_over_sums():
    s = position([["7d"], []], ["7c", "7s", "3b", "4b"], deck_left=4)
    assert legal_texts(s) == {"7d x 7c", "7d x 7s"}


def test_sum_capture_choice_and_compulsory():
    s = position([["7d", "10c"], []], ["3b", "4b", "2s", "5c", "1d"], deck_left=4)
    sevens = {t for t in legal_texts(s) if t.startswith("7d")}
    assert sevens == {"7d x 3b+4b", "7d x 5c+2s", "7d x 1d+2s+4b"}
    assert "7d" not in legal_texts(s)  # capture is compulsory
    tens = {t for t in legal_texts(s) if t.startswith("10c")}
    assert tens == {"10c x 1d+2s+3b+4b", "10c x 1d+5c+4b", "10c x 5c+2s+3b"}


def test_playing_a_card_that_cannot_capture_is_allowed():
    s = position([["7d", "9c"], []], ["3b", "4b"], deck_left=4)
    assert legal_texts(s) == {"7d x 3b+4b", "9c"}


def test_fewest_rule_filters_sum_captures_only():
    s = position([["7d", "2c"], []], ["3b", "4b", "1d", "2s", "2d"], deck_left=4,
                 capture_rule="fewest")
    assert {t for t in legal_texts(s) if t.startswith("7d")} == {"7d x 3b+4b"}
    # same-rank priority is never filtered
    assert {t for t in legal_texts(s) if t.startswith("2c")} == {"2c x 2d", "2c x 2s"}
    s_any = position([["7d"], []], ["3b", "4b", "1d", "2s", "2d"], deck_left=4)
    assert len(legal_texts(s_any)) > 1


def test_ace_takes_all():
    s = position([["1d"], []], ["5c", "7d", "10b"], deck_left=6, rules="asso_piglia_tutto")
    assert legal_texts(s) == {"1d x all"}
    res = apply(s, parse_action("1d x all"))
    assert res.move.capture == m("5c", "7d", "10b") and not res.move.scopa
    assert s.table == 0 and s.last_capture_team == 0 and s.scope == [0, 0]
    # with an ace on the table: same-rank priority, and a scopa if it empties the table
    s = position([["1d"], []], ["1c"], deck_left=6, rules="asso_piglia_tutto")
    assert legal_texts(s) == {"1d x 1c"}
    assert apply(s, parse_action("1d x 1c")).move.scopa
    # on an empty table the ace is placed
    s = position([["1d"], []], [], deck_left=6, rules="asso_piglia_tutto")
    assert legal_texts(s) == {"1d"}


def test_ace_takes_all_never_scopa_on_last_play_either():
    s = position([["1d"], []], ["5c"], rules="asso_piglia_tutto", last_play_scopa=True)
    res = apply(s, parse_action("1d x all"))
    assert not res.move.scopa and res.hand.score[0]["scope"] == 0


@pytest.mark.parametrize("last_play_scopa", [False, True])
def test_scopa_on_the_last_play(last_play_scopa):
    s = position([["5d"], []], ["2c", "3c"], last_play_scopa=last_play_scopa)
    res = apply(s, parse_action("5d x 2c+3c"))
    assert res.move.scopa is last_play_scopa
    assert res.hand.score[0]["scope"] == int(last_play_scopa)


def test_scopa_mid_hand_and_leftover_to_last_capturer():
    s = position([["5d", "9b"], ["8c", "2b"]], ["2c", "3c"], deck_left=0)
    res = apply(s, parse_action("5d x 2c+3c"))
    assert res.move.scopa and s.scope == [1, 0]
    apply(s, parse_action("8c"))
    apply(s, parse_action("9b"))
    res = apply(s, parse_action("2b"))  # last play: nobody captures, leftover to team 0
    assert res.hand.leftover == m("8c", "9b", "2b") and res.hand.last_capture_team == 0
    assert res.hand.score[0]["cards"] == 6 and res.hand.score[1]["cards"] == 0


def test_leftover_goes_to_nobody_without_a_capture():
    s = position([["9b"], ["8c"]], ["2c"])
    s.to_move = 0
    apply(s, parse_action("9b"))
    res = apply(s, parse_action("8c"))
    assert res.hand.last_capture_team is None and res.hand.leftover == m("2c", "9b", "8c")
    assert [e["cards"] for e in res.hand.score] == [0, 0]


def test_illegal_move_names_move_seat_and_legal_moves():
    s = position([["7d", "9c"], []], ["3b", "4b"], deck_left=4)
    with pytest.raises(IllegalMoveError, match=r"illegal move 7d .*seat 0.*legal moves: "
                                                 r"7d x 3b\+4b, 9c"):
        apply(s, parse_action("7d"))
    with pytest.raises(IllegalMoveError, match="not a catalogue id|illegal move"):
        apply(s, 99999)


# -- dealing ---------------------------------------------------------------------------------
def test_dealing_order_and_first_player():
    s = new_match("scopa", seed=5)
    d = s.deck
    assert s.dealer == 1 and s.to_move == 0
    assert s.hands[0] == m(*[_code(c) for c in d[0:6:2]])
    assert s.hands[1] == m(*[_code(c) for c in d[1:6:2]])
    assert s.table == m(*[_code(c) for c in d[6:10]])
    s4 = new_match("scopa", seed=5, players=4)
    assert s4.dealer == 3 and s4.to_move == 0
    assert s4.hands[1] == m(*[_code(c) for c in s4.deck[1:12:4]])


def _code(c: int) -> str:
    from scopa_env.cards import CODES
    return CODES[c]


def test_dealer_rotates_and_rounds_are_dealt():
    import random
    s = new_match("scopa", seed=3)
    rng = random.Random(0)
    dealers = [s.dealer]
    while not s.done:
        before = s.hand_index
        res = apply(s, rng.choice(s.legal_actions()))
        if res.hand is not None and not s.done:
            assert s.hand_index == before + 1
            dealers.append(s.dealer)
            assert s.to_move == (s.dealer + 1) % 2
    assert dealers[:4] == [1, 0, 1, 0][: len(dealers[:4])]


def test_three_kings_redeal():
    from scopa_env.rules.deal import needs_redeal
    r = make_rules("scopa")
    seed = next(sd for sd in range(5000) if needs_redeal(shuffled_deck(sd, 0, 0), r))
    s = new_match(r, seed=seed)
    assert s.redeals >= 1 and s.deck != shuffled_deck(seed, 0, 0)
    assert (s.table & m("10d", "10c", "10s", "10b")).bit_count() < 3
    off = new_match(make_rules("scopa", redeal_three_kings=False), seed=seed)
    assert off.redeals == 0 and off.deck == shuffled_deck(seed, 0, 0)
    with pytest.raises(ValueError, match="three or more kings"):
        new_match(r, seed=0, deck=shuffled_deck(seed, 0, 0))


# -- scoring -------------------------------------------------------------------------------
def test_primiera_example_and_missing_suit():
    r = make_rules("scopa")
    assert primiera(m("7c", "7d", "6b", "5s"), r) == 75
    assert primiera(m("7c", "7d", "6b"), r) is None
    alt = make_rules("scopa", primiera_table="alt", primiera_requires_all_suits=False)
    assert primiera(m("7c", "7d", "6b"), alt) == 21 + 21 + 18
    assert primiera(m("1d", "1c", "1s", "1b"), alt) == 48
    assert primiera(m("1d", "1c", "1s", "1b"), r) == 64


def test_primiera_point_with_a_missing_suit():
    r = make_rules("scopa")
    a = m("7c", "7d", "6b")  # no spade: no primiera
    b = m("1s", "2c", "2d", "2b")
    sc = score_hand([a, b], [0, 0], r)
    assert sc[0]["primiera"] is None and sc[1]["points"]["primiera"] == 1
    sc = score_hand([m("7d"), m("7c")], [0, 0], r)
    assert sc[0]["points"]["primiera"] == sc[1]["points"]["primiera"] == 0


def test_carte_and_denari_need_more_than_half():
    # the leftover went to nobody: 15 cards and 5 coins beat 10 and 1, but score nothing
    r = make_rules("scopa")
    a = m(*[f"{k}d" for k in range(1, 6)] + [f"{k}c" for k in range(1, 11)])
    b = m(*[f"{k}s" for k in range(1, 10)] + ["6d"])
    sc = score_hand([a, b], [0, 0], r)
    assert (sc[0]["cards"], sc[1]["cards"], sc[0]["coins"]) == (15, 10, 5)
    assert sc[0]["points"]["carte"] == sc[0]["points"]["denari"] == 0
    assert sc[1]["points"]["carte"] == sc[1]["points"]["denari"] == 0


def test_carte_and_denari_ties_score_nobody():
    r = make_rules("scopa")
    a = m(*[f"{k}d" for k in range(1, 6)] + [f"{k}c" for k in range(1, 11)]
          + [f"{k}s" for k in range(1, 6)])
    b = (2**40 - 1) & ~a
    sc = score_hand([a, b], [0, 0], r)
    assert sc[0]["cards"] == sc[1]["cards"] == 20 and sc[0]["coins"] == sc[1]["coins"] == 5
    for t in (0, 1):
        assert sc[t]["points"]["carte"] == 0 and sc[t]["points"]["denari"] == 0


def test_re_bello_and_napola():
    r = make_rules("scopa", re_bello=True, napola=True)
    sc = score_hand([m("1d", "2d", "3d", "4d", "10d"), m("5d")], [0, 0], r)
    assert sc[0]["points"]["re_bello"] == 1 and sc[0]["points"]["napola"] == 4
    assert score_hand([m("1d", "2d"), 0], [0, 0], r)[0]["points"]["napola"] == 0
    off = score_hand([m("1d", "2d", "3d", "10d"), 0], [0, 0], make_rules("scopa"))
    assert off[0]["points"]["re_bello"] == 0 and off[0]["points"]["napola"] == 0


def test_four_player_teams_pool_captures():
    s = position([["5d"], ["2b"], ["6c"], ["9s"]], ["2c", "3c", "4b"], deck_left=4,
                 rules="scopa", players=4)
    apply(s, parse_action("5d x 2c+3c"))   # seat 0, team 0
    apply(s, parse_action("2b"))           # seat 1
    apply(s, parse_action("6c x 2b+4b"))   # seat 2, team 0: a scopa
    assert s.piles[0] == m("5d", "2c", "3c", "6c", "2b", "4b") and s.scope == [1, 0]


# -- match end -------------------------------------------------------------------------------
def _last_play(match_score, pile0, pile1, hand0="9b", capture=()):
    s = position([[hand0], []], list(capture), piles=(pile0, pile1), target_score=11)
    s.match_score = list(match_score)
    return s


def test_match_end_both_past_target_higher_total_wins():
    coins = [f"{k}d" for k in range(1, 11)]
    s = _last_play([10, 9], [], coins + ["7c", "1s", "1b"] + [f"{k}c" for k in range(1, 7)])
    res = apply(s, parse_action("9b"))
    assert res.match_over and s.done
    assert s.match_score[0] < s.match_score[1] and s.winner == 1
    assert s.match_score[0] >= 11 or s.match_score[1] >= 11


def test_match_tie_at_target_plays_another_hand():
    s = _last_play([10, 10], [], [])
    res = apply(s, parse_action("9b"))  # nobody scores: 10-10, nobody at target
    assert not res.match_over
    s = _last_play([11, 11], ["7d"], ["7c"])
    res = apply(s, parse_action("9b"))  # team 0 gets the settebello: 12-11
    assert res.match_over and s.winner == 0
    coins = [f"{k}d" for k in range(1, 7)]  # team 1: denari; team 0: settebello
    s = _last_play([10, 10], ["7d", "10s"], coins + ["7c"])
    res = apply(s, parse_action("9b"))  # one point each: 11-11, a tie past the target
    assert not res.match_over and s.match_score == [11, 11] and not s.done
    assert s.hand_index == 1 and s.dealer == 0 and s.to_move == 1  # dealer keeps rotating


# -- configuration errors ------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, problem", [
    ({"players": 3}, "players must be 2 or 4"),
    ({"name": "scopone_scientifico", "players": 2}, "4 players only"),
    ({"name": "briscola"}, "unknown rule set"),
    ({"capture_rule": "most"}, "capture_rule"),
    ({"hand_size": 4}, "whole rounds"),
    ({"colour": "red"}, "unknown rules option"),
    ({"primiera_table": "x"}, "primiera_table"),
    ({"target_score": 0}, "target_score"),
    ({"napola": "yes"}, "true or false"),
])
def test_invalid_rules(kwargs, problem):
    name = kwargs.pop("name", "scopa")
    with pytest.raises(ValueError, match=problem):
        make_rules(name, **kwargs)


def test_named_rule_sets_resolve():
    assert make_rules("scopone_scientifico").hand_size == 10
    assert make_rules("scopone_scientifico").table_size == 0
    assert not make_rules("scopone_scientifico").redeal_three_kings
    assert make_rules("scopone").hand_size == 9 and make_rules("scopone").players == 4
    assert make_rules("asso_piglia_tutto", players=4).ace_takes_all
    assert parse_option("capture_rule=fewest") == ("capture_rule", "fewest")
    assert parse_option("last_play_scopa=true") == ("last_play_scopa", True)
    with pytest.raises(ValueError, match="key=value"):
        parse_option("fewest")
    with pytest.raises(ValueError, match="integer"):
        parse_option("target_score=x")


def test_explicit_deck_errors():
    with pytest.raises(ValueError, match="unknown card code"):
        new_match("scopa", seed=0, deck=["7q"] + ["1d"] * 39)
    with pytest.raises(ValueError, match="each of the 40 cards exactly once"):
        new_match("scopa", seed=0, deck=list(range(39)))
    with pytest.raises(ValueError, match="seed"):
        new_match("scopa", seed=-1)
    assert isinstance(new_match("scopa", seed=0, deck=[card_id("1d")] + list(range(1, 40))),
                      GameState)
