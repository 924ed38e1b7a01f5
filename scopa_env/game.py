"""The pure game: a match state and the step function that advances it.

``new_match(rules, seed)`` deals the first hand; ``step(state, action)`` returns
the next state and a ``StepResult`` describing what happened (the move, and the
hand's score when it ended). ``apply`` does the same in place, for search.
Everything is deterministic from the seed; a hand can also start from an
explicit deck order (``new_match(..., deck=...)`` or ``start_hand``), which is
how records are replayed, or be dealt card by card from outside
(``new_match(..., deal="outside")``: ``deal_card`` places each card, ``to_deal`` says
how many the engine waits for; ``scopa_env.rules.deal.deal_odds`` gives each card's
probability), which is what OpenSpiel's chance nodes need.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .cards import CODES, FULL_DECK, N_CARDS, cards_of
from .episode import check_seed, entropy_seed
from .moves import (
    ACE_ALL_BASE,
    ACTION_CAPTURE,
    ACTION_CARD_LIST,
    N_ACTIONS,
    action_move,
    action_text,
    legal_actions,
)
from .rules import Rules, make_rules
from .rules.capture import give_leftover, play_card
from .rules.deal import (
    KINGS,
    REDEAL_KINGS,
    TABLE,
    deal_order,
    deal_place,
    deal_round,
    first_dealer,
    first_seat,
    next_dealer,
    opening_table,
    played_deck,
)
from .rules.outcome import match_winner
from .rules.scoring import score_hand


class RoundStart(NamedTuple):
    """The public position before a round's first move: the table, the piles and scope
    counts by team, and the team that captured last (None: nobody yet this hand)."""

    table: int
    piles: tuple[int, int]
    scope: tuple[int, int]
    last_capture_team: int | None


@dataclass
class GameState:
    """Everything about a match in progress (including hidden cards).

    Card sets are bitmasks. ``deck`` is the current hand's cards in deal order (all 40
    when the hand is shuffled from the seed or given; those dealt so far when it is dealt
    from outside), ``deck_pos`` the next card to deal. ``piles``, ``scope`` and
    ``match_score`` are per team (team = seat % 2). ``to_deal`` > 0: the engine waits for
    that many cards from outside (``deal_card``) before the next move."""

    rules: Rules
    seed: int
    hand_index: int = 0
    dealer: int = 0
    deck: tuple[int, ...] = ()
    deck_pos: int = 0
    hands: list[int] = field(default_factory=list)
    table: int = 0
    piles: list[int] = field(default_factory=lambda: [0, 0])
    scope: list[int] = field(default_factory=lambda: [0, 0])
    last_capture_team: int | None = None
    to_move: int = 0
    match_score: list[int] = field(default_factory=lambda: [0, 0])
    done: bool = False
    winner: int | None = None
    redeals: int = 0  # redeals (three kings) before the current hand's deal
    deal_outside: bool = False  # every hand is dealt card by card by deal_card
    to_deal: int = 0  # cards the engine waits for (deal_card) before the next move
    # The current round's public history (every seat sees it): the moves played since the
    # round's deal, ``(seat, action id)`` in order, and the public position before the
    # first of them, ``RoundStart`` (what an agent reads the others' moves by).
    # ``keep_history=False``: not kept (a search's scratch states, which never show it).
    round_moves: tuple[tuple[int, int], ...] = field(default=(), compare=False)
    round_start: RoundStart | None = field(default=None, compare=False)
    keep_history: bool = field(default=True, compare=False)

    def copy(self) -> GameState:
        """An independent copy (the lists are copied; cards and rules are immutable)."""
        s = object.__new__(GameState)
        d = self.__dict__.copy()
        d["hands"] = self.hands.copy()
        d["piles"] = self.piles.copy()
        d["scope"] = self.scope.copy()
        d["match_score"] = self.match_score.copy()
        s.__dict__ = d
        return s

    def __deepcopy__(self, memo: dict) -> GameState:
        # ``copy`` is a deep copy: what it shares (cards, rules, the deck) is immutable
        return self.copy()

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def deck_count(self) -> int:
        return N_CARDS - self.deck_pos

    def legal_actions(self) -> list[int]:
        if self.done or self.to_deal:
            return []
        return legal_actions(self.hands[self.to_move], self.table, self.rules)


@dataclass(slots=True)
class MoveInfo:
    seat: int
    action: int
    card: int
    capture: int  # bitmask of the captured table cards
    scopa: bool


@dataclass
class HandResult:
    """A finished hand, in the record's terms."""

    dealer: int
    deck: tuple[int, ...]
    last_capture_team: int | None
    leftover: int
    score: list[dict[str, Any]]


@dataclass(slots=True)
class StepResult:
    move: MoveInfo
    hand: HandResult | None = None  # set when this move ended a hand
    match_over: bool = False


class IllegalMoveError(ValueError):
    """An action that is not legal in the current state."""


def _deal_round(s: GameState) -> None:
    """Deal the next round of hands from the known deck, or wait for it from outside."""
    p, n = s.rules.players, s.rules.players * s.rules.hand_size
    first = first_seat(s.dealer, p)
    s.to_move = first
    s.round_moves, s.round_start = (), None
    if s.deal_outside:
        s.to_deal = n
        return
    for k, hand in enumerate(deal_round(s.deck[s.deck_pos:s.deck_pos + n], p)):
        s.hands[(first + k) % p] |= hand
    s.deck_pos += n


def start_hand(s: GameState, deck: Any = None) -> None:
    """Shuffle (or take ``deck``) and deal a new hand in place, dealer already set; with
    ``deal_outside``, clear the hand and wait for its first round and opening table."""
    rules = s.rules
    s.hands = [0] * rules.players
    s.piles = [0, 0]
    s.scope = [0, 0]
    s.last_capture_team = None
    s.table = 0
    s.deck_pos = 0
    if s.deal_outside and deck is None:
        s.deck, s.redeals = (), 0
        _deal_round(s)
        s.to_deal += rules.table_size
        return
    if deck is not None:
        d, s.redeals = played_deck(deck, rules), 0
    else:
        d, s.redeals = deal_order(s.seed, s.hand_index, rules)
    s.deck = d
    _deal_round(s)
    s.table = opening_table(d, rules)
    s.deck_pos += rules.table_size


def deal_card(s: GameState, card: int) -> None:
    """Deal ``card`` from outside as the next card of the hand's deal order, in place: to
    the seat or the table its position gives (``deal_place``). ``IllegalMoveError`` when
    no card is due, the card is already dealt, or it would make the three-kings rule
    redeal the opening table (such a deal is never played: ``deal_odds`` leaves it out)."""
    if not s.to_deal:
        raise IllegalMoveError("no card is due: the engine deals a card only when it waits "
                               "for one (to_deal > 0)")
    if type(card) is not int or not 0 <= card < N_CARDS:
        raise IllegalMoveError(f"card id {card!r} is out of range 0..39")
    bit = 1 << card
    if (s.table | s.piles[0] | s.piles[1] | sum(s.hands)) & bit:  # hands are disjoint
        raise IllegalMoveError(f"card {CODES[card]} is already dealt this hand")
    place = deal_place(s.deck_pos, s.dealer, s.rules)
    if place == TABLE:
        if (s.rules.redeal_three_kings and bit & KINGS
                and ((s.table & KINGS).bit_count() + 1) >= REDEAL_KINGS):
            raise IllegalMoveError(
                f"card {CODES[card]} would put {REDEAL_KINGS} kings on the opening table, "
                f"which redeal_three_kings redeals: such a deal is never played")
        s.table |= bit
    else:
        s.hands[place] |= bit
    s.deck += (card,)
    s.deck_pos += 1
    s.to_deal -= 1


def new_match(rules: Rules | str = "scopa", seed: int | None = None, deck: Any = None,
              deal: str = "seed", **options: Any) -> GameState:
    """A new match with its first hand dealt (dealer = last seat): shuffled from the seed
    (``deal="seed"``, default), or waiting for every hand's cards from outside
    (``deal="outside"``: ``deal_card``)."""
    if deal not in ("seed", "outside"):
        raise ValueError(f"deal must be 'seed' or 'outside', got {deal!r}")
    if not isinstance(rules, Rules) or options:
        rules = make_rules(rules, **options)
    seed = entropy_seed() if seed is None else check_seed(seed)
    s = GameState(rules=rules, seed=seed, dealer=first_dealer(rules.players),
                  deal_outside=deal == "outside")
    start_hand(s, deck)
    return s


def apply(s: GameState, action: int, check: bool = True, next_deck: Any = None,
          deal_next: bool = True) -> StepResult:
    """Play ``action`` for the seat to move, in place. ``next_deck`` fixes the deal
    order of the next hand if this move ends one (replays). ``deal_next=False``
    leaves a state whose hand just ended (and whose match did not) scored but not
    redealt: a dead end for search, which stops at the end of the hand."""
    if s.done:
        raise IllegalMoveError("the match is over: no move can be played")
    if s.to_deal:
        raise IllegalMoveError(f"the deal is not finished: {s.to_deal} more card(s) to deal "
                               f"(deal_card) before the next move")
    seat = s.to_move
    if check:
        legal = legal_actions(s.hands[seat], s.table, s.rules)
        if action not in legal:
            raise_illegal(s, action, legal)
    if type(action) is int and 0 <= action < ACE_ALL_BASE:
        card, capture, takes_all = ACTION_CARD_LIST[action], ACTION_CAPTURE[action], False
    else:
        mv = action_move(action, s.table)
        card, capture, takes_all = mv.card, mv.capture, mv.takes_all
    team = seat % 2
    hands, piles = s.hands, s.piles
    if s.keep_history:
        if not s.round_moves:
            s.round_start = RoundStart(s.table, (piles[0], piles[1]),
                                       (s.scope[0], s.scope[1]), s.last_capture_team)
        s.round_moves += ((seat, action),)
    last_play = s.deck_pos == N_CARDS and sum(hands) == 1 << card  # hands are disjoint
    hands[seat], s.table, piles[team], scopa = play_card(
        hands[seat], s.table, piles[team], card, capture, takes_all, last_play,
        s.rules.last_play_scopa)
    if capture:
        s.last_capture_team = team
        s.scope[team] += scopa
    empty_hands = not any(hands)
    result = StepResult(MoveInfo(seat, action, card, capture, scopa))
    s.to_move = (seat + 1) % s.rules.players
    if not last_play:
        if empty_hands:
            _deal_round(s)
        return result
    result.hand = _end_hand(s)
    if s.done:
        result.match_over = True
    elif deal_next:
        s.dealer = next_dealer(s.dealer, s.rules.players)
        s.hand_index += 1
        start_hand(s, next_deck)
    return result


def _end_hand(s: GameState) -> HandResult:
    leftover = s.table
    give_leftover(s.piles, s.last_capture_team, leftover)
    s.table = 0
    score = score_hand(s.piles, s.scope, s.rules)
    for t in range(2):
        s.match_score[t] += score[t]["points"]["total"]
    s.winner = match_winner(s.match_score, s.rules.target_score)
    s.done = s.winner is not None
    return HandResult(s.dealer, s.deck, s.last_capture_team, leftover, score)


def step(s: GameState, action: int) -> tuple[GameState, StepResult]:
    """Pure step: the state after ``action`` and what happened."""
    nxt = s.copy()
    return nxt, apply(nxt, action)


def raise_illegal(s: GameState, action: Any, legal: list[int]) -> None:
    """Raise ``IllegalMoveError`` naming the move, the seat, its hand, the table and
    the legal moves."""
    try:
        what = action_text(action)
    except ValueError:
        what = repr(action)
    options = ", ".join(action_text(a) for a in legal)
    hand = " ".join(CODES[c] for c in cards_of(s.hands[s.to_move]))
    table = " ".join(CODES[c] for c in cards_of(s.table)) or "(empty)"
    raise IllegalMoveError(
        f"illegal move {what} (id {action}) for seat {s.to_move}: hand {hand}, table {table}; "
        f"legal moves: {options}")


def hidden_cards(s: GameState, seat: int) -> int:
    """Cards this seat cannot see: other hands and the undealt deck."""
    seen = s.hands[seat] | s.table | s.piles[0] | s.piles[1]
    return FULL_DECK & ~seen


__all__ = ["GameState", "StepResult", "MoveInfo", "HandResult", "IllegalMoveError", "new_match",
           "start_hand", "deal_card", "apply", "step", "hidden_cards", "raise_illegal", "N_ACTIONS",
           "ACE_ALL_BASE"]
