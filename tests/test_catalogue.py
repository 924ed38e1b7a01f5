"""The action catalogue of actions.md: size, order, the three views of a move."""

import numpy as np
import pytest

from scopa_env.cards import CODES, RANK, card_code, card_id, cards_of
from scopa_env.moves import (
    ACE_ALL_BASE,
    ACTION_CAPTURE,
    ACTION_CARD,
    ACTION_FEATURES,
    N_ACTIONS,
    action_id,
    action_move,
    action_text,
    parse_action,
)


def test_card_ids_and_codes():
    assert card_id("1d") == 0 and card_id("7d") == 6 and card_id("10b") == 39
    assert [card_code(c) for c in (0, 6, 39)] == ["1d", "7d", "10b"]
    for bad in ("11d", "0c", "7x", "", "d7", "7D"):
        with pytest.raises(ValueError, match="unknown card code"):
            card_id(bad)


def test_catalogue_size_and_per_card_counts():
    assert N_ACTIONS == 16204
    per_rank = [4, 10, 24, 51, 100, 190, 344, 601, 1024, 1702]
    for c in range(40):
        assert int((ACTION_CARD[:ACE_ALL_BASE] == c).sum()) == per_rank[RANK[c] - 1]
    assert sum(1 for a in range(ACE_ALL_BASE) if ACTION_CAPTURE[a] == 0) == 40
    singles = sum(1 for a in range(ACE_ALL_BASE) if ACTION_CAPTURE[a].bit_count() == 1)
    assert singles == 120


def test_catalogue_order():
    # card order, place first, then by set size, then by sorted tuple
    for a in range(1, ACE_ALL_BASE):
        c0, c1 = int(ACTION_CARD[a - 1]), int(ACTION_CARD[a])
        if c0 == c1:
            prev, cur = cards_of(ACTION_CAPTURE[a - 1]), cards_of(ACTION_CAPTURE[a])
            assert (len(prev), prev) < (len(cur), cur)
            assert sum(RANK[x] for x in cur) == RANK[c1]
        else:
            assert c1 == c0 + 1 and ACTION_CAPTURE[a] == 0
    assert [action_text(a) for a in range(5)] == ["1d", "1d x 1c", "1d x 1s", "1d x 1b", "2d"]
    assert [action_text(ACE_ALL_BASE + s) for s in range(4)] == [
        "1d x all", "1c x all", "1s x all", "1b x all"]


def test_three_views_round_trip():
    for a in range(N_ACTIONS):
        text = action_text(a)
        assert parse_action(text) == a
        mv = action_move(a)
        assert action_id(mv.card, mv.capture, mv.takes_all) == a


def test_action_features_table():
    assert ACTION_FEATURES.shape == (N_ACTIONS, 80) and ACTION_FEATURES.dtype == np.int8
    a = parse_action("7d x 3c+4b")
    assert np.flatnonzero(ACTION_FEATURES[a]).tolist() == [6, 40 + card_id("3c"),
                                                             40 + card_id("4b")]
    assert ACTION_FEATURES[:, :40].sum(axis=1).min() == 1


@pytest.mark.parametrize("text, problem", [
    ("7z", "unknown card code"),
    ("7d x 3c+5b", "not a move"),
    ("7d x 7d", "names a card twice"),
    ("5d x all", "only an ace"),
    ("", "empty"),
    ("7d x 3c x 4b", "more than one"),
])
def test_bad_move_text(text, problem):
    with pytest.raises(ValueError, match=problem):
        parse_action(text)


def test_bad_ids():
    for bad in (-1, N_ACTIONS, 3.5, "7"):
        with pytest.raises(ValueError, match="not a catalogue id"):
            action_move(bad)
    assert CODES[39] == "10b"
