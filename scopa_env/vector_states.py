"""Single games in and out of ``VectorScopaEnv``: an engine ``GameState`` loaded into a
game (``load_states``, a position of real play), a game copied into others
(``copy_games``), a game read back as the engine's ``GameState`` or a seat's ``InfoSet``.
``GameViews`` is a base class of ``VectorScopaEnv``: its methods read and write the
environment's per-game arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

from .cards import N_CARDS, cards_of
from .game import GameState, RoundStart
from .observation import InfoSet, make_info_set
from .rules.deal import first_seat
from .vector_tables import to_rank_major

# A round row (``GameViews.round_rows``): the moves known this round (0: none), then the
# round's public start (table, the two teams' piles and scope counts, the team that
# captured last or -1), teams numbered from the dealer's (0) as in observations, then
# the round's actions in order, -1 past the known ones.
ROUND_ROW = ("moves", "table", "pile_0", "pile_1", "scope_0", "scope_1", "last_capture")
ROUND_HEAD = len(ROUND_ROW)


def round_history_of(row: np.ndarray, players: int, dealer: int = 0) -> dict[str, Any]:
    """``round_moves`` and ``round_start`` (absolute seats and teams, for a game dealt
    by ``dealer``; 0: numbered from the dealer, as ``decode_info``'s information sets are)
    of a round row."""
    k = int(row[0])
    if k <= 0:
        return {"round_moves": (), "round_start": None}
    flip = dealer % 2
    lc = int(row[6])
    start = RoundStart(int(row[1]), (int(row[2 + flip]), int(row[3 - flip])),
                       (int(row[4 + flip]), int(row[5 - flip])), None if lc < 0 else lc ^ flip)
    first = first_seat(dealer, players)
    moves = tuple(((first + j) % players, int(a))
                  for j, a in enumerate(row[ROUND_HEAD:ROUND_HEAD + k].tolist()))
    return {"round_moves": moves, "round_start": start}


class GameViews:
    """``VectorScopaEnv``'s single-game views (see the module docstring)."""

    def _games(self, games: Any, items: Any, what: str) -> list[int]:
        """``games`` as game indices, one for each of ``items`` (``what``: their name)."""
        games = [int(g) for g in games]
        if len(games) != len(items):
            raise ValueError(f"{len(games)} games but {len(items)} {what}")
        for g in games:
            if not 0 <= g < self.num_envs:
                raise ValueError(f"game index {g} is out of range 0..{self.num_envs - 1}")
        return games

    def round_history(self, i: int) -> dict[str, Any]:
        """Game ``i``'s ``round_moves`` and ``round_start`` as the engine keeps them (none
        for a game loaded without its round's moves)."""
        return round_history_of(self.round_rows([i])[0], self.players, int(self.dealer[i]))

    @property
    def round_width(self) -> int:
        """The columns of a round row (``round_rows``)."""
        return ROUND_HEAD + self._round_size

    def round_rows(self, games: Any) -> np.ndarray:
        """The round histories of ``games`` packed one int64 row each, numbered from the
        dealer as observations are (``ROUND_ROW``; ``round_history_of`` reads a row back):
        what a decision kept apart from its game keeps of the others' moves this round."""
        g = np.asarray(games, np.int64).reshape(-1)
        flip = self.dealer[g] % 2  # a team's number from the dealer's team
        k = np.where(self.round_known[g], self._n_moves[g] % self._round_size, 0)
        rows = np.full((len(g), self.round_width), -1, np.int64)
        rows[:, 0] = k
        rows[:, 1] = self.round_start_table[g].astype(np.int64)
        both = np.arange(2)
        team = both[None, :] ^ flip[:, None]  # the relative team t is absolute team t ^ flip
        rows[:, 2:4] = np.take_along_axis(self.round_start_piles[g], team, 1).astype(np.int64)
        rows[:, 4:6] = np.take_along_axis(self.round_start_scope[g], team, 1)
        lc = self.round_start_capture[g]
        rows[:, 6] = np.where(lc < 0, -1, lc ^ flip)
        played = np.arange(self._round_size)[None, :] < k[:, None]
        rows[:, ROUND_HEAD:] = np.where(played, self.round_actions[g], -1)
        rows[k == 0, 1:ROUND_HEAD] = -1
        return rows

    def info_set(self, i: int) -> InfoSet:
        """The information set of the seat to move in game ``i`` (legal moves and this
        round's public moves included)."""
        lc = int(self.last_capture[i])
        return make_info_set(
            self.rules, seat=int(self.to_move[i]), dealer=int(self.dealer[i]),
            hands=self.hands[i].tolist(), table=int(self.table[i]),
            piles=self.piles[i].tolist(), deck_count=N_CARDS - int(self.deck_pos[i]),
            match_score=self.match_score[i].tolist(), scope=self.scope[i].tolist(),
            last_capture_team=None if lc < 0 else lc,
            legal_actions=tuple(self.legal_ids[i, self.legal_valid[i]].tolist()),
            **self.round_history(i))

    def load_states(self, games: Any, states: list[GameState]) -> None:
        """Put single-game states (``GameState``, same rules, match not over) into
        ``games``, e.g. positions for a search or a test. Each must be a position of
        real play: hand sizes as dealt minus the moves played, the seat to move
        following the dealer, no card in hand still in the undealt deck. The dealt part
        of each deck is rearranged to hold the hands where they were dealt (what is
        still to be dealt stays). Those matches produce no record."""
        r, p = self.rules, self.players
        for g, st in zip(self._games(games, states, "states"), states, strict=True):
            if st.rules != r:
                raise ValueError(f"game {g}: the state's rules {st.rules} are not this "
                                 f"environment's {r}")
            if st.done:
                raise ValueError(f"game {g}: the state's match is over")
            moves = st.deck_pos - r.table_size - sum(h.bit_count() for h in st.hands)
            sizes = self._tail_lut[moves % len(self._tail_lut), :p] * r.hand_size \
                if 0 <= moves < len(self._tail_lut) else None
            rel = [st.hands[(st.to_move + k) % p].bit_count() for k in range(p)]
            canon = r.players * r.hand_size + r.table_size + (
                moves // (p * r.hand_size)) * p * r.hand_size
            if (sizes is None or rel != [round(x) for x in sizes] or st.deck_pos != canon
                    or st.to_move != (first_seat(st.dealer, p) + moves) % p):
                raise ValueError(f"game {g}: not a position of real play (deck position "
                                 f"{st.deck_pos}, hand sizes {rel} from the seat to move "
                                 f"{st.to_move}, dealer {st.dealer})")
            self.hands[g] = st.hands
            self.decks[g] = self._consistent_deck(g, st, moves)
            self.table[g] = st.table
            self.table_rm[g] = to_rank_major(st.table)
            self.piles[g] = st.piles
            self.scope[g] = st.scope
            self.last_capture[g] = -1 if st.last_capture_team is None else st.last_capture_team
            self.to_move[g], self.dealer[g] = st.to_move, st.dealer
            self.deck_pos[g], self._n_moves[g] = st.deck_pos, moves
            self.match_score[g] = st.match_score
            self.hand_index[g], self.match_seeds[g] = st.hand_index, st.seed
            self.redeals[g] = st.redeals
            k = moves % self._round_size
            self.round_known[g] = len(st.round_moves) == k and (k == 0 or
                                                                 st.round_start is not None)
            if k and self.round_known[g]:
                rs = st.round_start
                self.round_actions[g, :k] = [a for _, a in st.round_moves]
                self.round_start_table[g], self.round_start_piles[g] = rs.table, rs.piles
                self.round_start_scope[g] = rs.scope
                self.round_start_capture[g] = (-1 if rs.last_capture_team is None
                                               else rs.last_capture_team)
            self._recordable[g] = False
            if self._archive is not None:
                self._archive.grow(st.hand_index)
        self._refresh_legal()

    def copy_games(self, dst: Any, src: Any) -> None:
        """Make each game ``dst[i]`` a copy of game ``src[i]`` (position, deck, match
        score and seed), in array operations: many searches of one loaded position
        (``load_states``) at once. Only without records (``records=False``); the copies
        produce none."""
        if self.record_matches:
            raise ValueError("copy_games needs an environment built with records=False")
        dst = np.asarray(dst, np.int64).reshape(-1)
        src = np.asarray(src, np.int64).reshape(-1)
        if dst.shape != src.shape:
            raise ValueError(f"{len(dst)} destination games but {len(src)} sources")
        for idx in (dst, src):
            if len(idx) and (idx.min() < 0 or idx.max() >= self.num_envs):
                raise ValueError(f"game indices must be in 0..{self.num_envs - 1}")
        for arr in (self.hands, self.table, self.table_rm, self.piles, self.scope,
                    self.last_capture, self.to_move, self.dealer, self.decks, self.deck_pos,
                    self._n_moves, self.match_score, self.hand_index, self.match_seeds,
                    self.redeals, self._match_count, self.round_actions,
                    self.round_start_table, self.round_start_piles, self.round_start_scope,
                    self.round_start_capture, self.round_known):
            arr[dst] = arr[src]
        self._recordable[dst] = False
        self._refresh_legal()

    def _consistent_deck(self, g: int, st: GameState, moves: int) -> list[int]:
        """``st.deck`` with its dealt part rearranged so that the current deal's
        positions of each seat hold that seat's hand (the undealt part unchanged)."""
        p, h = self.players, self.rules.hand_size
        undealt = list(st.deck[st.deck_pos:])
        held = [c for hand in st.hands for c in cards_of(hand)]
        if set(undealt) & set(held):
            raise ValueError(f"game {g}: a card in hand is still in the undealt deck")
        others = [c for c in st.deck[:st.deck_pos] if c not in set(held)]
        deck: list[int | None] = [None] * st.deck_pos
        first = first_seat(st.dealer, p)
        for q in range(p):
            cards = cards_of(st.hands[(first + q) % p])
            for j in range(h):
                at = int(self._hand_pos[moves, j]) - moves % p + q
                deck[at] = cards[j] if j < len(cards) else None
        for i, c in enumerate(deck):
            if c is None:
                deck[i] = others.pop()
        return deck + undealt

    def game_state(self, i: int) -> GameState:
        """Game ``i`` as a single-game ``GameState`` (a copy, for search or checks)."""
        lc = int(self.last_capture[i])
        return GameState(
            rules=self.rules, seed=int(self.match_seeds[i]), hand_index=int(self.hand_index[i]),
            dealer=int(self.dealer[i]), deck=tuple(self.decks[i].tolist()),
            deck_pos=int(self.deck_pos[i]), hands=[int(x) for x in self.hands[i]],
            table=int(self.table[i]), piles=[int(x) for x in self.piles[i]],
            scope=self.scope[i].tolist(), last_capture_team=None if lc < 0 else lc,
            to_move=int(self.to_move[i]), match_score=self.match_score[i].tolist(),
            redeals=int(self.redeals[i]), **self.round_history(i))
