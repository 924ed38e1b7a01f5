"""``python_scopa``: Scopa as an OpenSpiel game, registered with pyspiel on import.

```python
import pyspiel
import agents.bridges.openspiel_game  # registers python_scopa

game = pyspiel.load_game("python_scopa")                              # 2 players, one hand
game = pyspiel.load_game("python_scopa(rules=scopone,players=4)")    # 4 players in teams
game = pyspiel.load_game("python_scopa(episode=match,napola=true)")  # a match, to 11
```

- **parameters**: `rules` (a named rule set, default `scopa`); `players` (2 or 4; 0, the
  default, is the rule set's); `episode` (`hand`, default, or `match`); every rules
  option under its own name (`hand_size`, `table_size`, `target_score`, `capture_rule`,
  `primiera_table`, `ace_takes_all`, `last_play_scopa`, `redeal_three_kings`,
  `primiera_requires_all_suits`, `re_bello`, `napola`). An option left out keeps the
  named rule set's value: the integer ones default to -1 for that; a true/false or text
  option given at plain scopa's value keeps the named set's too (so
  `rules=asso_piglia_tutto,ace_takes_all=false` is asso piglia tutto: say `rules=scopa`).
- **chance**: the deal, one card at a time (outcome = card id 0..39), with exact
  probabilities: uniform over the undealt cards, conditioned on an opening table that the
  three-kings rule keeps (`scopa_env.rules.deal.deal_odds`).
- **actions**: the env's catalogue ids (`num_distinct_actions` = 16204), legal actions
  the env's.
- **returns**: `episode=hand`, the team's points minus the other team's in the hand;
  `episode=match`, +1 to the winning team's seats and -1 to the others. Zero-sum; each
  seat gets its team's.
- **observation**: the seat's information set (`scopa_env.observation.info_set`): a tensor
  of `OBS_DIM` = 216 (the env's observation; its named pieces are `LAYOUT`'s) and a
  readable string.
- **information state**: the string is the observation's plus the public moves of the
  hand so far (perfect recall); the tensor is the observation's (everything the seat
  knows about the cards, without the order of play).

Every transition is the engine's (``scopa_env.game``: ``deal_card`` for chance, ``apply``
for moves): no rule is written here. ``resample_from_infostate`` (OpenSpiel's ISMCTS needs
it) deals the cards hidden from the seat uniformly again among the other hands, as
``pimc`` samples its worlds; the undealt cards stay undealt (chance nodes to come).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError("the OpenSpiel bridge needs open-spiel: pip install -e .[openspiel] "
                      f"({e})") from None

from scopa_env.cards import CODES, FULL_DECK, N_CARDS, cards_of
from scopa_env.game import GameState, apply, deal_card, new_match
from scopa_env.moves import N_ACTIONS, action_text
from scopa_env.observation import (
    LAYOUT,
    OBS_DIM,
    InfoSet,
    encode_info,
    info_set,
    make_info_set,
)
from scopa_env.rules import NAMED_RULES, OPTION_NAMES, Rules, make_rules
from scopa_env.rules.deal import TABLE, deal_odds, deal_place
from scopa_env.rules.outcome import hand_end

from ..worlds import random_hands

SHORT_NAME = "python_scopa"
EPISODES = ("hand", "match")
_SCOPA = Rules()
_UNSET_INT = -1
_OPTIONS = [k for k in OPTION_NAMES if k not in ("name", "players")]
PARAMETERS: dict[str, Any] = {
    "rules": "scopa", "players": 0, "episode": "hand",
    **{k: _UNSET_INT if type(getattr(_SCOPA, k)) is int else getattr(_SCOPA, k)
       for k in _OPTIONS}}
"""The game's parameters and their defaults (see the module's table)."""
MAX_POINTS = 55
"""A bound on one team's points in a hand: carte, denari, settebello, primiera and re bello
(5), napola (at most 10), at most one scopa per card played (40)."""
EXTRA_HANDS = 50
"""``episode=match``'s length bound counts ``2 * target_score + EXTRA_HANDS`` hands (OpenSpiel
needs a finite one). Every hand scores at least the settebello's point, so past
``2 * target_score`` hands a match goes on only while the teams are level at or past the
target, and each further hand must end level again: 11.6% of 3,000 hands between random
players did, so the bound is passed with odds of the order of 0.12**50."""

GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Scopa (the scopa kit's engine)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=PARAMETERS)


def rules_from_params(params: dict[str, Any]) -> tuple[Rules, str]:
    """The ``Rules`` and the episode (``hand`` or ``match``) of the game's parameters;
    ``ValueError`` in one line naming a bad one."""
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise ValueError(f"{SHORT_NAME}: unknown parameter(s) {', '.join(unknown)}; known: "
                         f"{', '.join(PARAMETERS)}")
    given = {**PARAMETERS, **params}
    episode = given["episode"]
    if episode not in EPISODES:
        raise ValueError(f"{SHORT_NAME}: episode must be 'hand' or 'match', got {episode!r}")
    name = given["rules"]
    if name not in NAMED_RULES:
        raise ValueError(f"{SHORT_NAME}: unknown rule set {name!r}; known: "
                         f"{', '.join(NAMED_RULES)}")
    options = {k: v for k, v in given.items() if k in _OPTIONS and v != PARAMETERS[k]}
    if given["players"]:
        options["players"] = given["players"]
    try:
        return make_rules(name, **options), episode
    except ValueError as e:
        raise ValueError(f"{SHORT_NAME}: {e}") from None


class ScopaGame(pyspiel.Game):
    """``python_scopa`` with the rules its parameters name."""

    def __init__(self, params: dict[str, Any] | None = None):
        self.rules, self.episode = rules_from_params(params or {})
        r = self.rules
        per_hand = N_CARDS + N_CARDS - r.table_size  # the deal, then every card played
        hands = 1 if self.episode == "hand" else 2 * r.target_score + EXTRA_HANDS
        bound = float(MAX_POINTS if self.episode == "hand" else 1)
        super().__init__(GAME_TYPE, pyspiel.GameInfo(
            num_distinct_actions=N_ACTIONS, max_chance_outcomes=N_CARDS,
            num_players=r.players, min_utility=-bound, max_utility=bound, utility_sum=0.0,
            max_game_length=per_hand * hands),
            {k: v for k, v in (params or {}).items() if v != PARAMETERS[k]})

    def new_initial_state(self) -> ScopaState:
        """A match of the game's rules before its first card is dealt."""
        return ScopaState(self)

    def state_from(self, s: GameState) -> ScopaState:
        """A state of this game at the engine position ``s`` (copied; dealt from outside
        from here on), with no moves in its history: how an agent's information set
        becomes an OpenSpiel state to search from."""
        if s.rules != self.rules:
            raise ValueError(f"{SHORT_NAME}: the position's rules {s.rules} are not the "
                             f"game's {self.rules}")
        state = ScopaState(self)
        state.s = s.copy()
        state.s.deal_outside = True
        state.s.deck = state.s.deck[:state.s.deck_pos]
        return state

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> ScopaObserver:
        """The seat's view: the observation, or the information state when
        ``iig_obs_type.perfect_recall`` (only the seat's own private information)."""
        if params:
            raise ValueError(f"{SHORT_NAME}: observers take no parameters, got {params}")
        if iig_obs_type is None:
            iig_obs_type = pyspiel.IIGObservationType(perfect_recall=False)
        if (iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
                or not iig_obs_type.public_info):
            raise ValueError(f"{SHORT_NAME} observes one seat's view (public information "
                             f"and the seat's own private information) only")
        return ScopaObserver(iig_obs_type.perfect_recall)


class ScopaState(pyspiel.State):
    """A match (or hand) in progress: the engine's ``GameState`` (``s``, with every
    card: what a seat may see is ``info_set(player)``) and the hand's public moves."""

    def __init__(self, game: ScopaGame):
        super().__init__(game)
        self.episode = game.episode
        self.s = new_match(game.rules, seed=0, deal="outside")
        self.moves: list[str] = []  # this hand's public moves, for the information state
        self._returns: list[float] | None = None

    # -- OpenSpiel's API -----------------------------------------------------------------
    def current_player(self) -> int:
        """The seat to move, ``CHANCE`` while cards are dealt, or ``TERMINAL``."""
        if self._returns is not None:
            return pyspiel.PlayerId.TERMINAL
        if self.s.to_deal:
            return pyspiel.PlayerId.CHANCE
        return self.s.to_move

    def _legal_actions(self, player: int) -> list[int]:
        """The seat's legal catalogue ids (ascending), the engine's."""
        if player != self.current_player():
            return []
        return self.s.legal_actions()  # the engine's are ascending

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The next card dealt, with its probability."""
        return deal_odds(self.s.deck, self.s.rules)

    def _apply_action(self, action: int) -> None:
        """Deal the card ``action`` (chance) or play the move ``action``."""
        s = self.s
        if s.to_deal:
            deal_card(s, int(action))
            return
        result = apply(s, int(action), deal_next=self.episode == "match")
        self.moves.append(f"s{result.move.seat} {action_text(int(action))}")
        if result.hand is None:
            return
        done, team = hand_end("points" if self.episode == "hand" else "match", self.episode,
                              [e["points"]["total"] for e in result.hand.score],
                              result.match_over, s.winner)
        self.moves = []
        if done:
            self._returns = [team[seat % 2] for seat in range(s.rules.players)]

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            place = deal_place(self.s.deck_pos, self.s.dealer, self.s.rules)
            return f"deal {CODES[action]} to " + ("the table" if place == TABLE
                                                  else f"seat {place}")
        return action_text(action)

    def is_terminal(self) -> bool:
        return self._returns is not None

    def returns(self) -> list[float]:
        """Each seat's return: its team's (see the module's table); 0 until the end."""
        return list(self._returns) if self._returns is not None else [0.0] * self.s.players

    def resample_from_infostate(self, player_id: int, probability_sampler: Any = None
                                ) -> ScopaState:
        """A state ``player_id`` cannot tell from this one: the other hands drawn again
        uniformly from the cards hidden from it, the rest left to the chance nodes.
        ``probability_sampler`` (a callable giving a number in [0, 1), OpenSpiel's
        convention) seeds the draw; None draws from fresh entropy."""
        seed = None if probability_sampler is None else int(probability_sampler() * 2**62)
        return self.with_hidden_cards(player_id, random.Random(seed))

    def with_hidden_cards(self, seat: int, rng: random.Random) -> ScopaState:
        """A copy whose other hands are a uniform draw from the cards ``seat`` cannot see
        (the other hands and the undealt deck; each hand keeps its size): the new cards
        take the old ones' places in the deal order, the cards left over are undealt."""
        out = self.clone()
        s = out.s
        if s.to_deal or self._returns is not None:
            return out
        hidden = cards_of(FULL_DECK & ~(s.hands[seat] | s.table | s.piles[0] | s.piles[1]))
        sizes = [(o, s.hands[o].bit_count()) for o in range(s.players) if o != seat]
        new = random_hands(hidden, sizes, rng)
        rename: dict[int, int] = {}
        for o, _ in sizes:
            rename.update(zip(cards_of(s.hands[o]), cards_of(new[o]), strict=True))
            s.hands[o] = new[o]
        s.deck = tuple(rename.get(c, c) for c in s.deck)
        return out

    def __str__(self) -> str:
        """The whole position (every card: for debugging and OpenSpiel's checks)."""
        s = self.s
        hands = " / ".join(_cards(h) for h in s.hands)
        return (f"hand {s.hand_index} dealer {s.dealer} deck {_list(s.deck)} | hands {hands} "
                f"| table {_cards(s.table)} | piles {_cards(s.piles[0])} / {_cards(s.piles[1])}"
                f" | scope {s.scope[0]}-{s.scope[1]} | score {s.match_score[0]}-"
                f"{s.match_score[1]} | last capture {s.last_capture_team} | to move "
                f"{self.current_player()}")

    # -- the kit's views -----------------------------------------------------------------
    def info_set(self, player: int) -> InfoSet:
        """What ``player`` may know, as the kit's agents see it (legal moves when it is
        to move)."""
        return info_set(self.s, player)


def _cards(mask: int) -> str:
    return " ".join(CODES[c] for c in cards_of(mask)) or "-"


def _list(cards: tuple[int, ...]) -> str:
    return " ".join(CODES[c] for c in cards) or "-"


def info_text(info: InfoSet) -> str:
    """A readable line of everything in an information set."""
    last = {None: "nobody", 0: "own team", 1: "other team"}[info.last_capture]
    return (f"seat {info.seat} dealer {info.dealer} | hand {_cards(info.hand)} | table "
            f"{_cards(info.table)} | own captures {_cards(info.own_pile)} | other captures "
            f"{_cards(info.other_pile)} | hand sizes {' '.join(map(str, info.hand_sizes))} | "
            f"deck {info.deck_count} | score {info.match_score[0]}-{info.match_score[1]} | "
            f"scope {info.scope[0]}-{info.scope[1]} | last capture {last}")


class ScopaObserver:
    """A seat's view as OpenSpiel's observers give it: ``tensor`` (the env's 216-entry
    observation; ``dict`` its named pieces, ``LAYOUT``) and ``string_from``. With
    ``perfect_recall`` the string adds the hand's public moves (the information state)."""

    def __init__(self, perfect_recall: bool):
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(OBS_DIM, np.float32)
        self.dict: dict[str, np.ndarray] = {}
        at = 0
        for name, size in LAYOUT:
            self.dict[name] = self.tensor[at:at + size]
            at += size

    def set_from(self, state: ScopaState, player: int) -> None:
        self.tensor[:] = encode_info(_view(state, player))

    def string_from(self, state: ScopaState, player: int) -> str:
        text = info_text(_view(state, player))
        if self.perfect_recall:
            text += f" | hand {state.s.hand_index} moves: " + ("; ".join(state.moves) or "-")
        return text


def _view(state: ScopaState, player: int) -> InfoSet:
    """``player``'s information set without its legal moves (they follow from it)."""
    s = state.s
    return make_info_set(s.rules, seat=player, dealer=s.dealer, hands=s.hands, table=s.table,
                         piles=s.piles, deck_count=s.deck_count, match_score=s.match_score,
                         scope=s.scope, last_capture_team=s.last_capture_team,
                         legal_actions=())


pyspiel.register_game(GAME_TYPE, ScopaGame)


def main(argv: list[str] | None = None) -> int:
    """``python -m agents.bridges.openspiel_game [GAME] [--sims N]``: load a game string,
    print what it is and run OpenSpiel's ``random_sim_test`` on it."""
    import os
    import sys

    from ..commands import Parser, run

    p = Parser(prog="python -m agents.bridges.openspiel_game",
               description="Load a python_scopa game string and run OpenSpiel's checks on it.")
    p.add_argument("game", nargs="?", default=SHORT_NAME,
                   help="e.g. 'python_scopa(rules=scopone,players=4)' (default python_scopa)")
    p.add_argument("--sims", type=int, default=5, help="random games to check (default 5)")

    def command() -> int:
        args = p.parse_args(argv)
        if not args.game.startswith(SHORT_NAME):
            raise ValueError(f"{args.game!r} is not a {SHORT_NAME} game string")
        saved = os.dup(2)  # OpenSpiel prints its errors to stderr before raising them
        try:
            with open(os.devnull, "w") as null:
                os.dup2(null.fileno(), 2)
                game = pyspiel.load_game(args.game)
        except pyspiel.SpielError as e:
            raise ValueError(str(e)) from None
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        print(f"{game}: {game.rules.name}, {game.num_players()} players, episode "
              f"{game.episode}; {game.num_distinct_actions()} actions, returns in "
              f"[{game.min_utility():g}, {game.max_utility():g}], at most "
              f"{game.max_game_length()} actions")
        try:
            pyspiel.random_sim_test(game, num_sims=args.sims, serialize=True, verbose=False)
        except pyspiel.SpielError as e:
            print(f"random_sim_test failed: {e}", file=sys.stderr)
            return 1
        print(f"random_sim_test: {args.sims} random games passed OpenSpiel's checks")
        return 0

    return run(p.prog, command, top_level=argv is None)


if __name__ == "__main__":
    raise SystemExit(main())
