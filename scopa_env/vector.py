"""Batched Scopa: ``N`` independent matches held as arrays and stepped together.

```python
from scopa_env.vector import VectorScopaEnv
env = VectorScopaEnv(4096, rules="scopa", players=2, seed=0)
while True:
    obs = env.observe()                      # (N, 216) float32, seat to move
    ids, valid = env.legal_ids, env.legal_valid   # (N, L) catalogue ids, padded with 0
    pick = ...                               # one legal id per game
    out = env.step(pick)                     # rewards (N, players), terminated (N,), records
```

Every game is exact to the single-game engine (``scopa_env.game``): the same legal
sets (ascending ids), observations (``scopa_env.observation.encode`` of the seat to
move), rewards and episodes as the AEC environment (``reward=``, ``episode=``), and
game records that ``scopa_env.records.verify_record`` accepts. The step, legal-move
generation and observation are numpy array operations over all games (no Python
loop over games); lookup tables come from ``scopa_env.vector_tables``.

Finished episodes reset at once (gymnasium's vector autoreset): after a step whose
``terminated[i]`` is true, game ``i`` is already the next episode's first position
(``step(..., final_seat=s)`` keeps each ended episode's last observation from seat ``s``).
``step(ids, games=g)`` moves only the games ``g``, the others wait: the single-agent
Gymnasium vector env (``agents.bridges.gym_vector``) plays the learner's seat, then the
other seats, in the games where each is to move.
With ``episode="hand"`` every episode is the first hand of a fresh match, as in the
AEC environment.

Decks. Match ``k`` of game ``i`` has the seed ``match_seeds[i]`` derived from
``(seed, i, k)``; with ``shuffle="fast"`` (default) each hand's deal order is a
counter-based hash permutation of ``(match seed, hand index, redeal attempt)``,
computed for all games at once; with ``shuffle="engine"`` it is
``scopa_env.rules.deal.shuffled_deck`` of the same triple (a Python call per dealt hand,
slower), so a game equals ``new_match(rules, seed=match_seeds[i])`` move for move.
Explicit deal orders: ``reset(decks=...)`` (first hand of every game) and
``set_next_decks(games, decks)`` (the next hand dealt in those games); ``decks``
holds the deal currently in play. ``load_states`` puts engine ``GameState``s into
games, ``game_state(i)`` / ``info_set(i)`` read one game back as the engine's types
(``scopa_env.vector_states``), with the current round's public moves and start
(``round_moves`` / ``round_start``, as the engine keeps them: what a search reads the
others' moves by).

Records. With ``records=True`` (default) each step's ``records`` holds the
game-record.md dict of every match that ended; building them is Python work per
finished match (about 0.25 ms each), so pass ``records=False`` where throughput
matters and records do not. The logs they are built from: ``scopa_env.vector_records``.

How legal moves are found without a loop over games: each hand card's *key* (how
many table cards of each rank it could combine with, read by table lookups on the
rank-major table mask) selects its capture *patterns* (place, take a same-rank card,
a rank partition of its value, take all); a pattern's catalogue ids follow from the
suits of the table cards of its ranks. See ``scopa_env.vector_tables``. That generator,
``VectorScopaEnv.card_moves`` (any (card, table) pairs, not only the hands of the seats
to move), also gives the batched baselines (``agents.baselines.vector_moves``) their
opponents' replies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .bitsets import popcount
from .cards import N_CARDS
from .episode import EPISODES, REWARDS, check_choice, check_seed, entropy_seed
from .game import IllegalMoveError
from .moves import ACE_ALL_BASE, N_ACTIONS, action_text
from .observation import (
    NOBODY,
    OBS_DIM,
    SCALARS,
    add_score_scalars_np,
    card_sets_np,
    position_scalars_np,
)
from .rules import Rules, make_rules
from .rules.capture import give_leftover_np, is_scopa_np
from .rules.deal import (
    deal_order,
    deal_round_np,
    first_dealer,
    first_seat,
    hash_deal_orders,
    hash_decks,
    mix64,
    next_dealer,
    opening_cards_np,
    played_deck,
)
from .rules.outcome import hand_end_np, match_winner_np
from .rules.scoring import score_hands_np
from .vector_records import MatchArchive
from .vector_states import GameViews
from .vector_tables import (
    ACT_BIT,
    ACT_CAPTURES,
    ACT_PILE,
    ACT_TOGGLE,
    ACT_TOGGLE_RM,
    CARD_BIT,
    CARD_INFO,
    CHOOSE,
    GROUP_POS,
    ID_BITS,
    PAT_GROUP,
    PAT_MULT,
    PAT_NSLOTS,
    PAT_RADIX,
    PAT_SHIFT,
    PLACE_PAT,
    POP4,
    RANK_KEY12,
    RM_BIT,
    SUBSET_INDEX,
    TABLE_SUBSETS,
    card_lut,
    entry_count,
    entry_start,
    info_key_base,
    info_key_row,
    info_place_id,
    pat_loc,
)

SHUFFLES = ("fast", "engine")
U64 = np.uint64
_MASK63 = (1 << 63) - 1

def _expand(g: np.ndarray, place: np.ndarray, tr: np.ndarray, pat: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Catalogue ids of every suit choice of each (game, card, pattern) row, given the
    card's place id and the rank-major table ``tr``: ``(game, id)`` per legal move."""
    slots = int(PAT_NSLOTS.take(pat).max(initial=0))
    nibs, mults, radixes = [], [], []
    ways = np.ones(len(pat), np.int64)
    for s in range(slots):
        nib = tr >> PAT_SHIFT[s].take(pat) & 15
        m = PAT_MULT[s].take(pat)
        rad = _CHOOSE_FLAT.take(POP4.take(nib) * 5 + m)
        ways *= rad
        nibs.append(nib)
        mults.append(m)
        radixes.append(rad)
    rep = np.repeat(np.arange(len(pat)), ways)
    e = np.arange(len(rep)) - (np.cumsum(ways) - ways).take(rep)
    g, place, pat = g.take(rep), place.take(rep), pat.take(rep)
    loc = np.zeros(len(rep), np.int64)
    for s in range(slots):
        rad = radixes[s].take(rep)
        sub = TABLE_SUBSETS.take(nibs[s].take(rep) * 30 + mults[s].take(rep) * 6 + e % rad)
        e //= rad
        loc += SUBSET_INDEX.take(sub) * PAT_RADIX[s].take(pat)
    return g, place + GROUP_POS.take(PAT_GROUP.take(pat) + loc)


def _or_columns(bits: np.ndarray) -> np.ndarray:
    """Bitwise OR of the columns of a (G, k) uint64 array (0 where k = 0)."""
    out = np.zeros(bits.shape[0], bits.dtype)
    for j in range(bits.shape[1]):
        out |= bits[:, j]
    return out


@dataclass
class VectorStep:
    """What one ``VectorScopaEnv.step`` did, per game (before any autoreset)."""

    rewards: np.ndarray  # (N, players) float32
    terminated: np.ndarray  # (N,) bool: the episode ended (the game was reset)
    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    hand_over: np.ndarray | None = None  # (N,) bool: this move ended a hand
    hand_points: np.ndarray | None = None  # (N, 2) int64: that hand's total per team
    match_over: np.ndarray | None = None  # (N,) bool
    match_score: np.ndarray | None = None  # (N, 2) int64: after this move, before reset
    winner: np.ndarray | None = None  # (N,) int64: winning team where match_over, else -1
    scopa: np.ndarray | None = None  # (N,) bool: this move scored a scopa
    final_obs: np.ndarray | None = None  # (N, 216): step(final_seat=s), ended episodes' rows


class VectorScopaEnv(GameViews):
    """``num_envs`` independent Scopa games stepped with array operations.

    Options as the AEC environment: ``rules`` (a name or ``Rules``) plus any rules
    option, ``reward`` ("match" | "points"), ``episode`` ("match" | "hand");
    ``seed`` (None: fresh entropy), ``records`` (build game records of finished
    matches; off saves the per-move log), ``shuffle`` ("fast" | "engine", see the
    module docstring), ``agent_names`` (the records' ``players``).

    ``legal_ids`` is ``(N, L)`` with ``L`` the largest legal set in the batch at this
    step (it changes between steps); padding entries hold 0, ``legal_valid`` marks
    the real ones, each game's ids ascending.
    """

    def __init__(self, num_envs: int, rules: str | Rules = "scopa", reward: str = "match",
                 episode: str = "match", seed: int | None = 0, records: bool = True,
                 shuffle: str = "fast", agent_names: list[str] | None = None,
                 **options: Any):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) \
                or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.rules: Rules = make_rules(rules, **options)
        for name, value, allowed in (("reward", reward, REWARDS), ("episode", episode, EPISODES),
                                     ("shuffle", shuffle, SHUFFLES)):
            check_choice(name, value, allowed)
        self.num_envs = int(num_envs)
        self.players = self.rules.players
        self.reward_mode, self.episode_mode, self.shuffle = reward, episode, shuffle
        self.record_matches = bool(records)
        self.agent_names = list(agent_names) if agent_names else ["env"] * self.players
        if len(self.agent_names) != self.players:
            raise ValueError(f"agent_names names {len(self.agent_names)} agents for "
                             f"{self.players} seats")
        r = self.rules
        self._deal_size = r.players * r.hand_size
        self._entry, self._pats = card_lut(r.capture_rule, r.ace_takes_all)
        self._entry = self._entry.astype(np.int64)
        self._tail_lut = self._make_tail_lut()
        # deck positions of the mover's cards of the current deal, by moves played
        per_deal, ts, p = self._deal_size, r.table_size, r.players
        self._hand_pos = np.array([[(m // per_deal) * per_deal + (ts if m >= per_deal else 0)
                                    + j * p + m % p for j in range(r.hand_size)]
                                   for m in range(N_CARDS - ts)], np.int64)
        self._seat_order = (np.arange(p)[:, None] + np.arange(p)[None, :]) % p
        self._team_sign = np.where(np.arange(p) % 2 == 0, 1, -1).astype(np.float32)  # by seat
        self._phase = np.zeros(N_CARDS + 1, np.int64)  # by moves played: 1 deal, 2 hand over
        self._phase[per_deal:N_CARDS - ts:per_deal] = 1
        self._phase[N_CARDS - ts] = 2
        n, p = self.num_envs, r.players
        self._rows = np.arange(n)
        self._rows_p = self._rows * p
        self._rows_2 = self._rows * 2
        self.hands = np.zeros((n, p), U64)
        self._hands_flat = self.hands.reshape(-1)  # a view: index game * players + seat
        self._deck_rows = (self._rows * N_CARDS)[:, None]
        self.table = np.zeros(n, U64)
        self.table_rm = np.zeros(n, np.int64)  # rank-major copy of the table
        self.piles = np.zeros((n, 2), U64)
        self.scope = np.zeros((n, 2), np.int64)
        self._piles_flat, self._scope_flat = self.piles.reshape(-1), self.scope.reshape(-1)
        self.last_capture = np.full(n, -1, np.int64)  # team, -1 nobody yet
        self.to_move = np.zeros(n, np.int64)
        self.dealer = np.zeros(n, np.int64)
        self.decks = np.zeros((n, N_CARDS), np.int8)
        self.deck_pos = np.zeros(n, np.int64)
        self.match_score = np.zeros((n, 2), np.int64)
        self.hand_index = np.zeros(n, np.int64)
        self.match_seeds = np.zeros(n, np.int64)
        self.redeals = np.zeros(n, np.int64)
        self._match_count = np.zeros(n, np.int64)
        self._next_decks: dict[int, np.ndarray] = {}
        self._n_moves = np.zeros(n, np.int64)  # moves played in the current hand
        # the current round's moves and its public start (``info_set``'s ``round_moves`` and
        # ``round_start``, what a search reads the others' moves by): a round is
        # players x hand_size moves, the k-th by seat first_seat(dealer) + k
        self._round_size = p * r.hand_size
        self.round_actions = np.zeros((n, self._round_size), np.int64)
        self.round_start_table = np.zeros(n, U64)
        self.round_start_piles = np.zeros((n, 2), U64)
        self.round_start_scope = np.zeros((n, 2), np.int64)
        self.round_start_capture = np.full(n, -1, np.int64)
        self.round_known = np.ones(n, bool)  # False: loaded without its round's moves
        self._recordable = np.ones(n, bool)  # False: loaded mid-match, no record
        self.legal_ids = np.zeros((n, 1), np.int64)
        self.legal_valid = np.zeros((n, 1), bool)
        self.reset(seed)

    def _make_tail_lut(self) -> np.ndarray:
        """The observation's ``SCALARS`` columns of the seat to move that depend only on
        how many moves of the hand were played: hand sizes by relative seat, deck count,
        seat from the dealer (the rest left 0)."""
        r, p, h = self.rules, self.players, self.rules.hand_size
        per_deal = p * h
        moves = np.arange(N_CARDS - r.table_size)
        j = moves % per_deal  # moves played in this deal; the mover is the j-th
        k = np.arange(p)
        played = (j[:, None] - (j[:, None] + k[None, :]) % p + p - 1) // p
        deck_pos = per_deal + r.table_size + (moves // per_deal) * per_deal
        return position_scalars_np(r, h - played, N_CARDS - deck_pos, (1 + moves) % p)

    # -- episodes ------------------------------------------------------------------------
    def reset(self, seed: int | None = None, decks: Any = None) -> None:
        """Deal a new match in every game. ``seed`` restarts the seed sequence (None:
        continue it with fresh seeds, or fresh entropy on the first call); ``decks``
        gives every game's first deal order ((N, 40) card ids or codes), which must
        not be one that ``redeal_three_kings`` redeals."""
        if seed is not None or not hasattr(self, "_seed"):
            self._seed = entropy_seed() if seed is None else check_seed(seed)
            self._match_count[:] = 0
        self._next_decks = {}
        if decks is not None:
            if len(decks) != self.num_envs:
                raise ValueError(f"decks gives {len(decks)} deal orders for "
                                 f"{self.num_envs} games")
            for i, d in enumerate(decks):
                self.set_next_decks([i], [d])
        self._archive = (MatchArchive(self.num_envs, self.rules, self.agent_names)
                         if self.record_matches else None)
        self._new_matches(self._rows)
        self._refresh_legal()

    def set_next_decks(self, games: Any, decks: Any) -> None:
        """Fix the deal order of the next hand dealt in each of ``games`` (a redeal
        deck is refused, as by ``game.start_hand``)."""
        for g, d in zip(self._games(games, decks, "decks"), decks, strict=True):
            try:
                deck = played_deck(list(d), self.rules)
            except ValueError as e:
                raise ValueError(f"game {g}: {e}") from None
            self._next_decks[g] = np.array(deck, np.int8)

    def _new_matches(self, games: np.ndarray) -> None:
        """Start a fresh match (new seed, first hand dealt) in ``games``."""
        if not len(games):
            return
        k = self._match_count[games]
        seeds = mix64(mix64(np.full(len(games), self._seed, dtype=U64))
                      ^ mix64(games.astype(U64) * U64(0x100000001B3) + k.astype(U64)))
        self.match_seeds[games] = (seeds & U64(_MASK63)).astype(np.int64)
        self._match_count[games] = k + 1
        self.match_score[games] = 0
        self.hand_index[games] = 0
        self.dealer[games] = first_dealer(self.players)
        self._recordable[games] = True
        if self._archive is not None:
            self._archive.new_matches(games)
        self._start_hands(games)

    def _start_hands(self, games: np.ndarray) -> None:
        """Shuffle and deal a new hand in ``games`` (dealer and hand index set)."""
        r = self.rules
        decks, attempts = self._shuffle(games)
        self.decks[games] = decks
        self.redeals[games] = attempts
        self.hands[games] = 0
        self.piles[games] = 0
        self.scope[games] = 0
        self.last_capture[games] = -1
        self.deck_pos[games] = 0
        self._deal_round(games)
        opening = opening_cards_np(decks, r)
        self.table[games] = _or_columns(CARD_BIT[opening])
        self.table_rm[games] = _or_columns(RM_BIT[opening])
        self.deck_pos[games] += r.table_size
        self._n_moves[games] = 0
        if self._archive is not None:
            self._archive.hand_start(games, self.hand_index[games], self.dealer[games],
                                     self.decks[games])

    def _shuffle(self, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Deal orders ``(G, 40)`` for a new hand in ``games`` and the number of
        three-kings redeals before each (0 for a deck given by ``set_next_decks``)."""
        r = self.rules
        seeds, hand = self.match_seeds[games], self.hand_index[games]
        attempts = np.zeros(len(games), np.int64)
        given: dict[int, np.ndarray] = {}
        if self._next_decks:
            for j, g in enumerate(games.tolist()):
                if g in self._next_decks:
                    given[j] = self._next_decks.pop(g)
        if self.shuffle == "engine":
            decks = np.empty((len(games), N_CARDS), np.int8)
            for j in range(len(games)):
                if j in given:
                    continue
                decks[j], attempts[j] = deal_order(int(seeds[j]), int(hand[j]), r)
        else:
            decks, attempts = hash_deal_orders(seeds, hand, r)
        for j, d in given.items():
            decks[j], attempts[j] = d, 0
        return decks, attempts

    def _deal_round(self, games: np.ndarray) -> None:
        """Deal ``hand_size`` cards to every seat of ``games`` (their hands are empty),
        one at a time in turn order from the seat after the dealer."""
        p, h = self.players, self.rules.hand_size
        pos = (games * N_CARDS + self.deck_pos[games])[:, None] + np.arange(p * h)[None, :]
        cards = self.decks.reshape(-1).take(pos).astype(np.int64)
        dealt = deal_round_np(cards, p)
        first = first_seat(self.dealer[games], p)
        self._hands_flat[(games * p)[:, None] + self._seat_order.take(first, axis=0)] = dealt
        self.deck_pos[games] += p * h
        self.to_move[games] = first

    # -- legal moves ---------------------------------------------------------------------
    def card_moves(self, rows: np.ndarray, cards: np.ndarray, table_rm: np.ndarray,
                   captures_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Every legal move of playing ``cards[j]`` onto the rank-major table
        ``table_rm[rows[j]]`` (this environment's capture rules): ``(rows[j], id)`` per
        move, in no particular order. ``rows`` int64 indices into ``table_rm`` (int64
        ``to_rank_major`` masks); a card must not be on its table. ``captures_only``: leave
        out the places (a card that captures nothing). The one move generator of the
        batched code: legal sets here, opponents' replies in ``agents.baselines.vector_moves``."""
        info = CARD_INFO.take(cards)
        # the card's key -> its patterns (place, same-rank takes, sum partitions, take all)
        tr = table_rm.take(rows)
        base = info_key_row(info)
        key = (info_key_base(info) + RANK_KEY12.take(base + (tr & 4095))
               + RANK_KEY12.take(base + 4096 + (tr >> 12 & 4095))
               + RANK_KEY12.take(base + 8192 + (tr >> 24 & 4095))
               + RANK_KEY12.take(base + 12288 + (tr >> 36)))
        entry = self._entry.take(key)
        if captures_only:  # a place is a key's only pattern
            takes = np.flatnonzero(self._pats.take(entry_start(entry)) != PLACE_PAT)
            rows, info, tr, entry = (x.take(takes) for x in (rows, info, tr, entry))
        count = entry_count(entry)
        first = entry_start(entry)
        more = np.flatnonzero(count > 1)
        if len(more):  # keys with several patterns: a row for each further pattern
            extra = count.take(more) - 1
            at = np.repeat(more, extra)
            nth = np.arange(len(at)) - np.repeat(np.cumsum(extra) - extra, extra) + 1
            rows, info, tr = (np.concatenate([x, x.take(at)]) for x in (rows, info, tr))
            first = np.concatenate([first, first.take(at) + nth])
        # one suit choice each: every used slot takes the one table card of its rank;
        # ``suits``: the suit of each rank's table card, 2 bits a rank (ranks 1-5, 6-10)
        suits = (table_rm >> 1 | table_rm >> 3) & 0x1111111111
        suits |= ((table_rm >> 2 | table_rm >> 3) & 0x1111111111) << 1
        suits = (suits | suits >> 2) & 0x0F0F0F0F0F
        suits = (suits | suits >> 4) & 0x00FF00FF00FF
        suits = (suits | suits >> 8) & 0x0000FFFF0000FFFF
        suits = (suits | suits >> 16) & 0xFFFFF
        suits = suits.take(rows)
        pat = self._pats.take(first)
        ids = info_place_id(info) + GROUP_POS.take(pat_loc(pat, suits))
        # tables that hold two cards of a rank: every choice of suits instead
        x = table_rm - (table_rm >> 1 & 0x5555555555)
        x = (x & 0x3333333333) + (x >> 2 & 0x3333333333)
        multi_table = (x & 0xEEEEEEEEEE) != 0
        if multi_table.any():
            multi = multi_table.take(rows)
            many = np.flatnonzero(multi)
            rows2, ids2 = _expand(rows.take(many), info_place_id(info.take(many)), tr.take(many),
                               pat.take(many))
            keep = ~multi
            rows, ids = np.concatenate([rows[keep], rows2]), np.concatenate([ids[keep], ids2])
        return rows, ids

    def _refresh_legal(self) -> None:
        """Legal ids of the seat to move in every game -> ``legal_ids``/``legal_valid``."""
        n = self.num_envs
        # the (game, card) rows: the cards dealt to the mover in this deal still in hand
        cards = self.decks.reshape(-1).take(self._deck_rows
                                            + self._hand_pos.take(self._n_moves, axis=0))
        hand = self._hands_flat.take(self._rows_p + self.to_move)
        sel = np.flatnonzero(CARD_BIT.take(cards) & hand[:, None])
        g, ids = self.card_moves(sel // cards.shape[1], cards.reshape(-1).take(sel),
                                 self.table_rm)
        # each game's ids ascending, packed to the left of an (N, L) array
        key = g << ID_BITS | ids  # (game, id) sort keys
        key.sort(kind="stable")  # mostly sorted already (by game)
        gg = key >> ID_BITS
        counts = np.bincount(gg, minlength=n)
        width = int(counts.max())
        at = np.arange(len(key)) + (self._rows * width - (np.cumsum(counts) - counts)).take(gg)
        out = np.zeros(n * width, np.int64)
        out[at] = key & _ID_MASK
        self.legal_ids = out.reshape(n, width)
        self.legal_valid = _ARANGE[:width][None, :] < counts[:, None]
        self.legal_count = counts
        self._legal_keys = key

    def action_mask(self) -> np.ndarray:
        """Dense ``(N, 16204)`` int8 mask of every game's legal ids."""
        mask = np.zeros((self.num_envs, N_ACTIONS), np.int8)
        g, j = np.nonzero(self.legal_valid)
        mask[g, self.legal_ids[g, j]] = 1
        return mask

    # -- observations --------------------------------------------------------------------
    def observe(self, seats: np.ndarray | None = None, games: Any = None) -> np.ndarray:
        """``(N, 216)`` float32 observations (``observation.encode`` layout) of the
        seat to move, or of ``seats[i]`` in game ``i``; with ``games``, of those games
        only (``(G, 216)``, ``seats`` then one per game of ``games``)."""
        p, r = self.players, self.rules
        rows = self._rows if games is None else self._check_games(games)
        n = len(rows)
        mover = seats is None
        seat = self.to_move.take(rows) if mover else np.asarray(seats, np.int64).reshape(n)
        team = seat % 2
        own_at, other_at = rows * 2 + team, rows * 2 + 1 - team
        obs = np.empty((n, OBS_DIM), np.float32)
        card_sets_np(obs, self._hands_flat.take(rows * p + seat), self.table.take(rows),
                     self._piles_flat.take(own_at), self._piles_flat.take(other_at))
        if mover:  # hand sizes, deck count and seat from the dealer follow the move count
            tail = self._tail_lut.take(self._n_moves.take(rows), axis=0)
        else:
            rel = self._seat_order.take(seat, axis=0)
            tail = position_scalars_np(r, popcount(self.hands[rows[:, None], rel]),
                                       N_CARDS - self.deck_pos.take(rows),
                                       (seat - self.dealer.take(rows)) % p)
        ms, sc = self.match_score.reshape(-1), self._scope_flat
        lc = self.last_capture.take(rows)
        add_score_scalars_np(tail, r, (ms.take(own_at), ms.take(other_at)),
                             (sc.take(own_at), sc.take(other_at)),
                             np.where(lc < 0, NOBODY, lc != team))
        obs[:, SCALARS] = tail
        return obs

    # -- the step ------------------------------------------------------------------------
    def step(self, actions: Any, games: Any = None, final_seat: int | None = None
             ) -> VectorStep:
        """Play one catalogue id in every game (for its seat to move), or in the games
        ``games`` only (distinct game indices; ``actions[j]`` is game ``games[j]``'s move,
        the other games wait). The returned arrays are indexed by game; a game that did
        not move has zeros there. ``final_seat``: observe each game whose episode ends
        from that seat before it resets (``VectorStep.final_obs``). An illegal id raises
        ``IllegalMoveError`` naming the game, seat, move and legal moves, and changes no
        game."""
        n, p, r = self.num_envs, self.players, self.rules
        g = self._rows if games is None else self._check_games(games)
        a = np.asarray(actions)
        if a.shape != g.shape or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be {len(g)} integer catalogue ids (shape "
                             f"({len(g)},)), got shape {a.shape} dtype {a.dtype}")
        a = a.astype(np.int64)
        want = g << ID_BITS | (a & _ID_MASK)
        at = np.minimum(np.searchsorted(self._legal_keys, want), len(self._legal_keys) - 1)
        ok = (self._legal_keys.take(at) == want) & (a >= 0) & (a < N_ACTIONS)
        if not ok.all():
            self._raise_illegal(g, a, np.flatnonzero(~ok))
        seat = self.to_move.take(g)
        team = seat % 2
        bit = ACT_BIT.take(a)
        captured = ACT_CAPTURES.take(a)
        toggle, toggle_rm, pile = ACT_TOGGLE.take(a), ACT_TOGGLE_RM.take(a), ACT_PILE.take(a)
        table, table_rm = self.table.take(g), self.table_rm.take(g)
        takes_all = None
        if r.ace_takes_all:
            takes_all = a >= ACE_ALL_BASE
            if takes_all.any():
                captured = captured | takes_all
                toggle = np.where(takes_all, table, toggle)
                toggle_rm = np.where(takes_all, table_rm, toggle_rm)
                pile = np.where(takes_all, table | bit, pile)
        self._hands_flat[g * p + seat] ^= bit
        n_moves = self._n_moves.take(g)
        k = n_moves % self._round_size  # the move's place in its round
        first = g[k == 0]
        if len(first):  # a round's first move: its public start (before the move)
            self.round_start_table[first] = self.table.take(first)
            self.round_start_piles[first] = self.piles[first]
            self.round_start_scope[first] = self.scope[first]
            self.round_start_capture[first] = self.last_capture.take(first)
            self.round_known[first] = True
        self.round_actions[g, k] = a
        if self._archive is not None:
            at = self._archive.move_slots(g, self.hand_index.take(g), n_moves)
        n_moves += 1
        self._n_moves[g] = n_moves
        # every deal empties all hands after players * hand_size moves: deal or hand end
        phase = self._phase.take(n_moves)
        last_play = phase == 2
        table ^= toggle
        self.table[g] = table
        self.table_rm[g] = table_rm ^ toggle_rm
        pidx = g * 2 + team
        self._piles_flat[pidx] |= pile
        self.last_capture[g] = np.where(captured, team, self.last_capture.take(g))
        scopa = is_scopa_np(captured, table, takes_all, last_play, r.last_play_scopa)
        self._scope_flat[pidx] += scopa
        if self._archive is not None:  # what an ace takes depends on the table: logged
            self._archive.log_moves(at, a, scopa, None if takes_all is None
                                    else np.where(captured, toggle, U64(0)))
        self.to_move[g] = (seat + 1) % p
        deal = g[phase == 1]
        if len(deal):
            self._deal_round(deal)
        hand_over, scopa_n = np.zeros(n, bool), np.zeros(n, bool)
        hand_over[g], scopa_n[g] = last_play, scopa
        out = VectorStep(rewards=np.zeros((n, p), np.float32),
                         terminated=np.zeros(n, bool), hand_over=hand_over,
                         hand_points=np.zeros((n, 2), np.int64),
                         match_over=np.zeros(n, bool), match_score=self.match_score.copy(),
                         winner=np.full(n, -1, np.int64), scopa=scopa_n)
        ended = g[last_play]
        if len(ended):
            self._end_hands(ended, out, final_seat)
        self._refresh_legal()
        return out

    def _check_games(self, games: Any) -> np.ndarray:
        """``games`` as distinct int64 game indices (a clear ``ValueError`` otherwise)."""
        g = np.asarray(games)
        if g.ndim != 1 or not (np.issubdtype(g.dtype, np.integer) or g.size == 0):
            raise ValueError(f"games must be a 1-D array of game indices, got {games!r}")
        g = g.astype(np.int64)
        if len(g) and (g.min() < 0 or g.max() >= self.num_envs):
            raise ValueError(f"games: indices must be 0 to {self.num_envs - 1}, got "
                             f"{int(g.min())} .. {int(g.max())}")
        if len(g) and np.bincount(g, minlength=self.num_envs).max() > 1:
            raise ValueError("games: each game may move once a step (an index repeats)")
        return g

    def new_matches(self, games: Any) -> None:
        """Abandon the matches in ``games`` and start a fresh one in each (the next match
        seed; no record of the abandoned match), e.g. after an illegal move ended it."""
        g = self._check_games(games)
        if len(g):
            self._new_matches(g)
            self._refresh_legal()

    def _end_hands(self, games: np.ndarray, out: VectorStep, final_seat: int | None) -> None:
        """Score the hands that just ended, reward, record, and deal what comes next."""
        r, p = self.rules, self.players
        lc = self.last_capture[games]
        leftover = self.table[games]
        give_leftover_np(self.piles, games, lc, leftover)
        self.table[games] = 0
        self.table_rm[games] = 0
        score = score_hands_np(self.piles[games], self.scope[games], r)  # (G, 2, fields)
        totals = score[:, :, -1]
        self.match_score[games] += totals
        ms = self.match_score[games]
        done, winner = match_winner_np(ms, r.target_score)
        out.hand_points[games] = totals
        out.match_score[games] = ms
        out.match_over[games] = done
        out.winner[games] = winner
        term, team0 = hand_end_np(self.reward_mode, self.episode_mode, totals, done, winner)
        out.rewards[games] = team0[:, None] * self._team_sign[None, :]
        out.terminated[games] = term
        if self._archive is not None:
            self._archive.hand_end(games, self.hand_index[games], lc, leftover, score)
            for g in games[done & self._recordable[games]].tolist():
                out.records.append((g, self._archive.record(g, int(self.match_seeds[g]),
                                                            self.match_score[g].tolist())))
        if final_seat is not None and term.any():
            out.final_obs = np.zeros((self.num_envs, OBS_DIM), np.float32)
            out.final_obs[games[term]] = self.observe(np.full(int(term.sum()), final_seat),
                                                      games[term])
        self._new_matches(games[term])
        cont = games[~term]
        if len(cont):
            self.dealer[cont] = next_dealer(self.dealer[cont], p)
            self.hand_index[cont] += 1
            self._start_hands(cont)

    def _raise_illegal(self, games: np.ndarray, a: np.ndarray, bad: np.ndarray) -> None:
        lines = []
        for j in bad[:5].tolist():
            g = int(games[j])
            legal = self.legal_ids[g, self.legal_valid[g]].tolist()
            try:
                what = f"{action_text(int(a[j]))} (id {int(a[j])})"
            except ValueError:
                what = f"{int(a[j])} (not a catalogue id 0..{N_ACTIONS - 1})"
            lines.append(f"game {g}, seat {int(self.to_move[g])}: illegal move {what}; legal "
                         f"moves: {', '.join(f'{action_text(x)} (id {x})' for x in legal)}")
        more = f" (and {len(bad) - 5} more games)" if len(bad) > 5 else ""
        raise IllegalMoveError(f"{len(bad)} illegal action(s){more}, nothing was applied: "
                               + "; ".join(lines))

    def nbytes_per_game(self) -> float:
        """Bytes of per-game state (arrays of length N, including the legal sets and
        the record logs) divided by N."""
        arrays = [*vars(self).values(), *(self._archive.arrays() if self._archive else ())]
        total = sum(v.nbytes for v in arrays
                    if isinstance(v, np.ndarray) and v.ndim and v.shape[0] == self.num_envs)
        return total / self.num_envs




_ID_MASK = (1 << ID_BITS) - 1
_ARANGE = np.arange(1 << ID_BITS)
_CHOOSE_FLAT = CHOOSE.reshape(-1)

__all__ = ["VectorScopaEnv", "VectorStep", "hash_decks", "popcount"]
