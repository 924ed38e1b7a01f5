"""Scopa as a batched single-agent Gymnasium vector environment: N games stepped at once.

```python
import gymnasium
import scopa_env  # registers scopa/Scopa-v0

envs = gymnasium.make_vec("scopa/Scopa-v0", num_envs=1024, opponent="greedy",
                          reward="points", episode="hand")
obs, info = envs.reset(seed=0)                      # obs (1024, 216)
while True:
    actions = envs.action_space.sample(tuple(info["action_mask"]))  # or your policy
    obs, rewards, terminated, truncated, info = envs.step(actions)
```

The N games live in one ``scopa_env.vector.VectorScopaEnv`` (numpy arrays, no Python loop
over games); the other seats' moves are chosen for all games at once. Each sub-environment
is exactly ``gymnasium.make("scopa/Scopa-v0", ...)`` with the same options (a test plays
both on the same deals and compares observations, masks, rewards and episode ends):

| | |
|---|---|
| options | those of `gymnasium.make("scopa/Scopa-v0")`: `opponent`, `partner`, `seat`, `rules` and any rules option (`players=4`, ...), `reward`, `episode`, `illegal_action`, `moves`, `max_moves`, `mask_in_obs` (the observation a dict `{"observation", "action_mask"}`, PettingZoo's convention, for RLlib); and `autoreset_mode` |
| spaces | `single_observation_space` / `single_action_space` as the single env's; `observation_space` (N, ...) and `action_space` `MultiDiscrete` |
| action mask | `info["action_mask"]` (N, A) int8 and `envs.action_masks()` (N, A) bool; `envs.legal_ids()`: the catalogue ids |
| opponents | an agent spec with a batched form: `random`, `greedy`, `expert` (the batched baselines, the same moves as the per-game agents), `ckpt:PATH`, `pretrained`, `sb3:PATH`, `rllib:PATH` (one batched forward pass over the games' information sets); or a callable `f(obs, mask)` (or `f(obs, mask, games)`) that takes the seat's observations and masks, in this env's own format, and returns actions in this env's action space: a frozen copy of the learner is self-play. `set_opponent(x, games)` / `set_partner(x, games)` give some games another one (a pool) |
| autoreset | `autoreset_mode=AutoresetMode.NEXT_STEP` (default, Gymnasium's): after a step that ends game i's episode, the next step ignores game i's action and returns its new episode's first observation (reward 0); `SAME_STEP`: the ending step returns the new episode's observation, the ended one in `info["final_obs"]` (where `info["_final_obs"]`) with `info["final_info"]` |
| info | `action_mask`; `hand_points` (N, 2: own, other) and `_hand_points` where a hand ended this step; `match_score` / `_match_score` where a match ended; `illegal_action` (N,) bool |
| illegal actions | `illegal_action="lose"` (default): that game's episode ends at once with reward -1, the others go on; `"raise"`: `IllegalMoveError` naming the games and the moves, nothing applied |

Seats: the learner plays ``seat`` in every game; each step plays its moves, then the
other seats' moves until every game is back at the learner's turn, and returns the
learner's reward over that span, as the single env does.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from scopa_env.episode import EPISODES, REWARDS, check_choice, check_seed, entropy_seed
from scopa_env.game import IllegalMoveError
from scopa_env.rules import Rules
from scopa_env.vector import VectorScopaEnv

from .. import check_spec, make_agent, parse_spec
from ..base import BaseAgent
from ..baselines.vector_moves import BATCHED, batched_actions
from .gym_env import ILLEGAL
from .move_interface import MoveInterface

Player = Any  # an agent spec string, an agent object or a callable(obs, mask[, games])
BATCHABLE = ("random, greedy, expert, ckpt:PATH, pretrained, sb3:PATH, rllib:PATH, or a "
             "callable(obs, mask) -> actions")


class _Chooser:
    """Chooses the moves of one seat's player in a set of games: catalogue ids."""

    spec: str = ""

    def choose(self, env: ScopaVectorEnv, games: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def reseed(self, rng: np.random.Generator) -> None:
        """Rebuild from a seeded ``reset`` (spec'd agents get seeds drawn from ``rng``)."""


class _Baseline(_Chooser):
    """``random``, ``greedy``, ``expert``: the batched baselines on the games' arrays."""

    def __init__(self, name: str) -> None:
        self.spec = name
        self.rng = np.random.default_rng()

    def choose(self, env: ScopaVectorEnv, games: np.ndarray) -> np.ndarray:
        return batched_actions(self.spec, env.games, games, self.rng)

    def reseed(self, rng: np.random.Generator) -> None:
        self.rng = np.random.default_rng(int(rng.integers(2**63)))


class _AgentBatch(_Chooser):
    """An agent with a batched form (``act_batch``): one call over the games'
    information sets."""

    def __init__(self, spec: str | None, agent: Any) -> None:
        self.spec_string, self.agent = spec, agent
        self.spec = spec or getattr(agent, "spec", repr(agent))

    def choose(self, env: ScopaVectorEnv, games: np.ndarray) -> np.ndarray:
        infos = [env.games.info_set(int(g)) for g in games]
        return np.asarray(self.agent.act_batch(infos), np.int64)

    def reseed(self, rng: np.random.Generator) -> None:
        if self.spec_string is not None:
            self.agent = make_agent(self.spec_string, seed=int(rng.integers(2**31)))


class _Callable(_Chooser):
    """``f(obs, mask[, games]) -> actions`` in the environment's own spaces."""

    def __init__(self, fn: Callable[..., Any], role: str) -> None:
        self.fn, self.role = fn, role
        self.spec = getattr(fn, "__name__", repr(fn))
        try:
            inspect.signature(fn).bind(None, None, None)
            self.with_games = True
        except (TypeError, ValueError):
            self.with_games = False

    def choose(self, env: ScopaVectorEnv, games: np.ndarray) -> np.ndarray:
        obs, mask, ids, valid = env._encoded(games)
        acts = self.fn(obs, mask, games) if self.with_games else self.fn(obs, mask)
        acts = np.asarray(acts)
        if acts.shape != (len(games),):
            raise ValueError(f"{self.role} {self.spec!r} returned actions of shape "
                             f"{acts.shape} for {len(games)} games")
        out, ok = env.moves.to_ids(acts, ids, valid)
        if not ok.all():
            j = int(np.flatnonzero(~ok)[0])
            raise ValueError(f"{self.role} {self.spec!r}, game {int(games[j])}: "
                             + env.moves.describe(int(acts[j]), ids[j:j + 1], valid[j:j + 1]))
        return out


def make_chooser(role: str, player: Player) -> _Chooser:
    """The chooser of ``player``, or one clear ``ValueError`` when it cannot play a batch
    of games at once."""
    if isinstance(player, str):
        try:
            spec = check_spec(player)
        except ValueError as e:
            raise ValueError(f"{role}: {e}") from None
        if spec in BATCHED:
            return _Baseline(spec)
        name, _ = parse_spec(spec)
        if name in ("pimc", "openspiel"):  # search: no batched form, refused before building
            raise ValueError(f"{role} {spec!r} cannot play a batch of games at once (no "
                             f"batched form); batched players: {BATCHABLE}")
        return _checked(role, spec, make_agent(spec, seed=0))
    if hasattr(player, "act") and not isinstance(player, type):
        return _checked(role, None, player)
    if callable(player):
        return _Callable(player, role)
    raise TypeError(f"{role} must be an agent spec string, an agent object or a "
                    f"callable(obs, mask) -> actions, got {player!r}")


def _checked(role: str, spec: str | None, agent: Any) -> _Chooser:
    """An agent whose ``act_batch`` is a real batched form (not a loop of ``act``) and
    that keeps no state from move to move (no ``reset``)."""
    batch = getattr(type(agent), "act_batch", None)
    if batch is None or batch is BaseAgent.act_batch or hasattr(agent, "reset"):
        name = spec or getattr(agent, "spec", repr(agent))
        raise ValueError(f"{role} {name!r} cannot play a batch of games at once (no "
                         f"batched form); batched players: {BATCHABLE}")
    return _AgentBatch(spec, agent)


class ScopaVectorEnv(VectorEnv):
    """``num_envs`` single-agent Scopa games in one batch (the module docstring's table)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, opponent: Player | Sequence[Player] = "random",
                 partner: Player | None = None, seat: int = 0,
                 rules: str | Rules = "scopa", reward: str = "match", episode: str = "match",
                 illegal_action: str = "lose", moves: str = "catalogue",
                 max_moves: int | None = None, mask_in_obs: bool = False,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 shuffle: str = "fast", **options: Any) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) \
                or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        check_choice("reward", reward, REWARDS)
        check_choice("episode", episode, EPISODES)
        check_choice("illegal_action", illegal_action, ILLEGAL)
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            mode = None
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
            raise ValueError(f"autoreset_mode must be AutoresetMode.NEXT_STEP or SAME_STEP, "
                             f"got {autoreset_mode!r}")
        self.games = VectorScopaEnv(int(num_envs), rules, reward=reward, episode=episode,
                                    seed=None, records=False, shuffle=shuffle, **options)
        self.rules = self.games.rules
        p = self.rules.players
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) \
                or not 0 <= seat < p:
            raise ValueError(f"seat must be an integer from 0 to {p - 1}, got {seat!r}")
        self.num_envs, self.seat = int(num_envs), int(seat)
        self.reward_mode, self.episode_mode, self.illegal_mode = reward, episode, illegal_action
        self.moves = MoveInterface.make(moves, max_moves, self.rules)
        self.metadata = {**self.metadata, "autoreset_mode": mode}
        self.autoreset_mode = mode
        self.mask_in_obs = bool(mask_in_obs)
        self.single_observation_space = (self.moves.dict_space() if self.mask_in_obs
                                         else self.moves.observation_space())
        self.single_action_space = self.moves.action_space()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        # each other seat: its players and which one plays it in each game
        self._players: dict[int, list[_Chooser]] = {s: [] for s in self._other_seats()}
        self._who = {s: np.zeros(self.num_envs, np.int64) for s in self._other_seats()}
        self._assign(opponent, partner, np.arange(self.num_envs))
        self._pending = np.zeros(self.num_envs, bool)  # NEXT_STEP: reset on the next step
        self._mask: np.ndarray | None = None
        self.moves_left_out = 0  # decisions with more legal moves than moves="legal"'s K
        self.env_steps = 0  # moves of every seat played in all games (agent-steps)
        self._seeded = False

    # -- seats -------------------------------------------------------------------------
    def _other_seats(self) -> list[int]:
        return [s for s in range(self.rules.players) if s != self.seat]

    def _opponent_seats(self) -> list[int]:
        p = self.rules.players
        return [(self.seat + k) % p for k in range(1, p, 2)]

    def _opponent_choosers(self, opponent: Any) -> list[_Chooser]:
        """The chooser of each opponent seat: one player for all, or one per seat."""
        opp = self._opponent_seats()
        if not isinstance(opponent, (list, tuple)):
            return [make_chooser("opponent", opponent)] * len(opp)
        if len(opponent) != len(opp):
            raise ValueError(f"opponent: {len(opponent)} players given for {len(opp)} "
                             f"opponent seat(s) {opp}; give one for all, or one per seat")
        return [make_chooser(f"opponent (seat {s})", o)
                for s, o in zip(opp, opponent, strict=True)]

    def _assign(self, opponent: Any, partner: Any, games: np.ndarray) -> None:
        """Players for the other seats of ``games``: ``opponent`` (one for both opponent
        seats, or one per seat), ``partner`` (4 players; default: the opponent's)."""
        per_seat = self._opponent_choosers(opponent)
        if self.rules.players == 2 and partner is not None:
            raise ValueError("partner: a 2-player game has no partner seat (players=4 has)")
        if self.rules.players == 4 and partner is None and isinstance(opponent, (list, tuple)):
            raise ValueError("partner: with one opponent per seat, give the partner too "
                             "(partner=...)")
        mate = [] if self.rules.players == 2 else [
            per_seat[0] if partner is None
            else make_chooser(f"partner (seat {(self.seat + 2) % 4})", partner)]
        for s, c in zip(self._opponent_seats(), per_seat, strict=True):
            self._put(s, c, games)
        for c in mate:
            self._put((self.seat + 2) % 4, c, games)

    def _put(self, seat: int, chooser: _Chooser, games: np.ndarray) -> None:
        """``chooser`` plays ``seat`` in ``games`` from the next move on."""
        players = self._players[seat]
        if chooser not in players:
            players.append(chooser)
        who = self._who[seat]
        who[games] = players.index(chooser)
        used = np.bincount(who, minlength=len(players)) > 0
        if not used.all():  # forget players no game has any more (a pool's old copies)
            self._players[seat] = [c for c, u in zip(players, used, strict=True) if u]
            self._who[seat] = (np.cumsum(used) - 1)[who]

    def set_opponent(self, opponent: Player | Sequence[Player], games: Any = None) -> None:
        """Give ``games`` (default all) another opponent from their next move on (one for
        both opponent seats of 4 players, or one per seat): a pool is some games against
        one player, some against another. The partner stays."""
        g = np.arange(self.num_envs) if games is None else self.games._check_games(games)
        for s, c in zip(self._opponent_seats(), self._opponent_choosers(opponent),
                        strict=True):
            self._put(s, c, g)

    def set_partner(self, partner: Player, games: Any = None) -> None:
        """Give ``games`` (default all) another partner (4 players)."""
        if self.rules.players != 4:
            raise ValueError("set_partner: a 2-player game has no partner seat")
        g = np.arange(self.num_envs) if games is None else self.games._check_games(games)
        self._put((self.seat + 2) % 4, make_chooser("partner", partner), g)

    # -- views -------------------------------------------------------------------------
    def _encoded(self, games: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Observations, int8 masks, legal ids and their validity of the seat to move in
        ``games`` (default all), in this env's ``moves`` interface."""
        v = self.games
        if games is None:
            ids, valid = v.legal_ids, v.legal_valid
        else:
            ids, valid = v.legal_ids[games], v.legal_valid[games]
        obs, mask = self.moves.encode(v.observe(games=games), ids, valid)
        return obs, mask, ids, valid

    def action_masks(self) -> np.ndarray:
        """(N, A) bool: the learner's legal actions in every game (sb3-contrib's name)."""
        if self._mask is None:
            self._mask = self._encoded()[1]
        return self._mask.astype(bool)

    def legal_ids(self) -> list[list[int]]:
        """Every game's legal catalogue ids for the learner (what the actions map to)."""
        v = self.games
        return [v.legal_ids[g, v.legal_valid[g]].tolist() for g in range(self.num_envs)]

    @property
    def match_seeds(self) -> np.ndarray:
        """Each game's current match seed (``new_match(rules, seed=...)`` with
        ``shuffle="engine"``; the single env's ``reset(options={"match_seed": ...})``)."""
        return self.games.match_seeds.copy()

    # -- episodes ----------------------------------------------------------------------
    def reset(self, *, seed: int | list[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """New matches in every game; the other seats play until the learner's turn.
        ``seed`` fixes the deals and every player's random choices (one int);
        ``options={"decks": (N, 40)}`` fixes every game's first deal order."""
        super().reset(seed=None)
        if isinstance(seed, (list, tuple)):
            raise ValueError("seed: give one int for the batch (the games' deals follow from "
                             "it), not one per game")
        options = options or {}
        unknown = set(options) - {"decks"}
        if unknown:
            raise ValueError(f"reset options: unknown {sorted(unknown)}; known: decks")
        if seed is not None or not self._seeded:
            s = entropy_seed() if seed is None else check_seed(seed)
            self._np_random = np.random.default_rng(s)
            self._np_random_seed = s
            for players in self._players.values():
                for c in players:
                    c.reseed(self._np_random)
            self.games.reset(seed=s, decks=options.get("decks"))
            self._seeded = True
        else:
            self.games.reset(decks=options.get("decks"))
        self._pending[:] = False
        self._mask = None
        n = self.num_envs
        rewards, ended = np.zeros(n, np.float32), np.zeros(n, bool)
        info: dict[str, Any] = {}
        self._play_others(rewards, ended, info, None)
        obs, mask, _, _ = self._encoded()
        self._mask = mask
        self._count_left_out()
        info["action_mask"] = mask
        return self._out(obs, mask), info

    def _out(self, obs: np.ndarray, mask: np.ndarray) -> Any:
        """The observation as returned: with ``mask_in_obs``, a dict with the mask."""
        return {"observation": obs, "action_mask": mask} if self.mask_in_obs else obs

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        a = np.asarray(actions)
        n = self.num_envs
        if a.shape != (n,) or not (np.issubdtype(a.dtype, np.integer)
                                   or (np.issubdtype(a.dtype, np.floating)
                                       and np.array_equal(a, np.round(a)))):
            raise ValueError(f"actions must be {n} integer actions (shape ({n},)), got shape "
                             f"{a.shape} dtype {a.dtype}")
        a = a.astype(np.int64)
        rewards = np.zeros(n, np.float32)
        ended = np.zeros(n, bool)
        info: dict[str, Any] = {}
        final = np.zeros((n, self.moves.obs_dim), np.float32)  # ended episodes' last obs
        play = np.flatnonzero(~self._pending)  # NEXT_STEP: pending games only reset
        v = self.games
        ids, ok = self.moves.to_ids(a[play], v.legal_ids[play], v.legal_valid[play])
        bad = play[~ok]
        if len(bad):
            if self.illegal_mode == "raise":
                g = int(bad[0])
                raise IllegalMoveError(
                    f"{len(bad)} illegal action(s), nothing was applied; game {g}, seat "
                    f"{self.seat}: " + self.moves.describe(int(a[g]), v.legal_ids[g:g + 1],
                                                           v.legal_valid[g:g + 1]))
            # the episode ends at once with -1, the other games go on
            rewards[bad] = -1.0
            ended[bad] = True
            illegal = np.zeros(n, bool)
            illegal[bad] = True
            info["illegal_action"] = illegal
            final[bad] = self._encoded(bad)[0]  # the position the action was played in
            v.new_matches(bad)
        good = play[ok]
        self._pending[:] = False
        self._mask = None
        self._move(good, ids[ok], rewards, ended, info, final)
        self._play_others(rewards, ended, info, final)
        obs, mask, _, _ = self._encoded()
        self._count_left_out()
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self._pending = ended.copy()
            obs[ended] = final[ended]  # the ended episodes' last observations, no move
            mask[ended] = 0
        elif ended.any():
            info["final_obs"] = self._out(final, np.zeros_like(mask))
            info["_final_obs"] = ended.copy()
            info["final_info"] = {k: x for k, x in info.items()
                                  if k not in ("final_obs", "_final_obs")}
            info["_final_info"] = ended.copy()
        self._mask = mask
        info["action_mask"] = mask
        return self._out(obs, mask), rewards, ended, np.zeros(n, bool), info

    def _move(self, games: np.ndarray, ids: np.ndarray, rewards: np.ndarray,
              ended: np.ndarray, info: dict[str, Any], final: np.ndarray | None) -> None:
        """Play ``ids`` in ``games`` (their seats to move); the learner's team's rewards
        of episodes still running this step, their ends, and the ended ones' last
        observations."""
        if not len(games):
            return
        out = self.games.step(ids, games=games,
                              final_seat=None if final is None else self.seat)
        self.env_steps += len(games)
        live = ~ended[games]
        g = games[live]
        rewards[g] += out.rewards[g, self.seat]
        team = self.seat % 2
        if out.hand_over[g].any():
            h = g[out.hand_over[g]]
            pts = info.setdefault("hand_points", np.zeros((self.num_envs, 2), np.int64))
            info.setdefault("_hand_points", np.zeros(self.num_envs, bool))[h] = True
            pts[h] = out.hand_points[h][:, [team, 1 - team]]
        if out.match_over[g].any():
            m = g[out.match_over[g]]
            sc = info.setdefault("match_score", np.zeros((self.num_envs, 2), np.int64))
            info.setdefault("_match_score", np.zeros(self.num_envs, bool))[m] = True
            sc[m] = out.match_score[m][:, [team, 1 - team]]
        done = g[out.terminated[g]]
        if len(done):
            ended[done] = True
            if final is not None:  # the scored end: the engine's 216 columns, no legal move
                empty = np.zeros((len(done), 1), np.int64)
                final[done] = self.moves.encode(out.final_obs[done], empty,
                                                np.zeros(empty.shape, bool))[0]

    def _play_others(self, rewards: np.ndarray, ended: np.ndarray, info: dict[str, Any],
                     final: np.ndarray | None) -> None:
        """The other seats play until every game is at the learner's turn (``final``:
        where the ended episodes' last observations go; None at a reset)."""
        v = self.games
        while True:
            waiting = np.flatnonzero(v.to_move != self.seat)
            if not len(waiting):
                return
            ids = np.empty(len(waiting), np.int64)
            seats = v.to_move[waiting]
            for s in np.unique(seats).tolist():
                on_seat = seats == s
                who = self._who[s][waiting[on_seat]]
                for k in np.unique(who).tolist():
                    sel = np.flatnonzero(on_seat)[who == k]
                    ids[sel] = self._players[s][k].choose(self, waiting[sel])
            self._move(waiting, ids, rewards, ended, info, final)

    def _count_left_out(self) -> None:
        if self.moves.legal:
            self.moves_left_out += int((self.games.legal_count > self.moves.slots).sum())

    def __repr__(self) -> str:
        return (f"ScopaVectorEnv(num_envs={self.num_envs}, rules={self.rules.name!r}, "
                f"players={self.rules.players}, moves={self.moves.kind!r})")


__all__ = ["ScopaVectorEnv", "make_chooser"]
