"""Scopa as a single-agent Gymnasium environment: one learner seat, agents in the others.

```python
import gymnasium
import scopa_env  # registers scopa/Scopa-v0 (the class is imported by make)

env = gymnasium.make("scopa/Scopa-v0", opponent="expert", reward="points", episode="hand")
obs, info = env.reset(seed=42)
terminated = False
while not terminated:
    action = env.action_space.sample(info["action_mask"])  # or a policy's choice
    obs, reward, terminated, truncated, info = env.step(action)
```

The learner plays seat ``seat`` (default 0); every other seat is played by an agent
(``agents.make_agent`` specs: ``random``, ``greedy``, ``expert``, ``pimc:...``,
``ckpt:PATH``, ``pretrained``, ``sb3:PATH``, or agent objects). ``step`` plays the
learner's move, then the other seats' moves until it is the learner's turn again or the
episode is over, and returns the learner's observation and its reward over that span.

| | |
|---|---|
| action space | `moves="catalogue"` (default): `Discrete(16204)`, the fixed (played card, captured set) catalogue of docs/spec/actions.md. `moves="legal"`: `Discrete(K)`, slot k the k-th legal move in ascending id order (`max_moves=K`, default 32; `agents.bridges.move_interface`) |
| observation space | `Box(0, OBS_HIGH, (216,), float32)`: the learner's observation, as in the AEC env (`scopa_env.observation`; finite bounds, the match score saturating at 10 x target); with `moves="legal"` followed by each slot's move features (K x 204, `scopa_env.move_features`). `mask_in_obs=True`: a dict `{"observation": ..., "action_mask": ...}` (PettingZoo's convention; RLlib's masked modules read it) |
| action mask | `env.action_masks()` (bool; the sb3-contrib `MaskablePPO` convention) and `info["action_mask"]` (int8, for `action_space.sample(mask)`): exactly the learner's legal ids (or filled slots); all zero once the episode is over. `env.legal_actions`: the catalogue ids |
| rewards | the learner's team's, summed over the moves of one `step`. `reward="match"` (default): +1 / -1 when the match is won / lost, else 0. `reward="points"`: at each hand end, own team's hand points minus the other team's. With `episode="hand"` and `reward="match"`: the sign of the hand's margin |
| episodes | `episode="match"` (default, to `target_score`) or `"hand"` (one hand); never truncated (a hand has a fixed number of moves) |
| illegal actions | `illegal_action="lose"` (default, so that any action of the space is accepted, as Gymnasium expects): the episode ends at once with reward -1 and `info["illegal_action"]` set. `"raise"`: `IllegalMoveError` naming the move and the legal ones |
| 2 players | `opponent=SPEC` (default `"random"`) plays seat 1 - `seat` |
| 4 players | `players=4`: `opponent=SPEC` plays both opponents, or `opponent=[SPEC, SPEC]` one each (seats `seat`+1 and `seat`+3); `partner=SPEC` plays seat `seat`+2 (default: the opponents' spec) |
| rules | `rules="scopa"` (or `scopone_scientifico`, `scopone`, `asso_piglia_tutto`, a `Rules`) plus any option of rules.md as a keyword: `players=4`, `capture_rule="fewest"`, `target_score=21`, … |
| seeding | `reset(seed=s)` fixes the deals and every agent's random choices (agents given as specs are rebuilt with seeds drawn from `s`); later unseeded resets continue that sequence. `reset(options={"match_seed": m})` plays the match of seed `m` (the deals of `new_match(rules, seed=m)`, e.g. a game of the batched env's `match_seeds`); `options={"deck": [...]}` fixes the first hand's deal order |
| info | `action_mask`; at a hand end `hand_points` (own, other); at a match end `match_score` (own, other); `illegal_action` after an illegal action |
| render | `render_mode="ansi"` (the table from the learner's seat, as text) or `"human"` (printed) |

Agents given as objects (anything with ``act(info) -> id``) are used as they are: they
keep their own state and random generator across episodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from scopa_env.env import render_text
from scopa_env.episode import EPISODES, REWARDS, check_choice, check_seed
from scopa_env.game import (
    GameState,
    IllegalMoveError,
    StepResult,
    apply,
    new_match,
    raise_illegal,
)
from scopa_env.moves import legal_actions
from scopa_env.observation import encode, info_set
from scopa_env.play import start_deal
from scopa_env.rules import Rules, make_rules
from scopa_env.rules.outcome import hand_end

from .. import check_spec, make_agent
from ..base import Agent
from .move_interface import MoveInterface

ILLEGAL = ("lose", "raise")
AgentSpec = str | Agent


def _check_agent(role: str, agent: Any) -> AgentSpec:
    """A spec string (validated, canonical) or an agent object; else a clear error."""
    if isinstance(agent, str):
        try:
            return check_spec(agent)
        except ValueError as e:
            raise ValueError(f"{role}: {e}") from None
    if hasattr(agent, "act") and not isinstance(agent, type):
        return agent
    raise TypeError(f"{role} must be an agent spec string (e.g. 'greedy') or an agent object "
                    f"with act(info) -> id, got {agent!r}")


class ScopaGymEnv(gymnasium.Env[np.ndarray, np.int64]):
    """Single-agent Scopa against agents (see the module docstring for the table)."""

    metadata = {"render_modes": ["human", "ansi"], "render_fps": 1}

    def __init__(self, opponent: AgentSpec | Sequence[AgentSpec] = "random",
                 partner: AgentSpec | None = None, seat: int = 0,
                 rules: str | Rules = "scopa", reward: str = "match", episode: str = "match",
                 illegal_action: str = "lose", render_mode: str | None = None,
                 moves: str = "catalogue", max_moves: int | None = None,
                 mask_in_obs: bool = False, **options: Any) -> None:
        self.rules = make_rules(rules, **options)
        self.moves = MoveInterface.make(moves, max_moves, self.rules)
        check_choice("reward", reward, REWARDS)
        check_choice("episode", episode, EPISODES)
        check_choice("illegal_action", illegal_action, ILLEGAL)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None, 'human' or 'ansi', got {render_mode!r}")
        n = self.rules.players
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) \
                or not 0 <= seat < n:
            raise ValueError(f"seat must be an integer from 0 to {n - 1}, got {seat!r}")
        self.seat = int(seat)
        self.reward_mode, self.episode_mode, self.illegal_mode = reward, episode, illegal_action
        self.render_mode = render_mode
        self.specs = self._seat_specs(opponent, partner)
        self.mask_in_obs = bool(mask_in_obs)
        self.observation_space = (self.moves.dict_space() if self.mask_in_obs
                                  else self.moves.observation_space())
        self.action_space = self.moves.action_space()
        # built now, so that a checkpoint that cannot be loaded fails at make(); a seeded
        # reset rebuilds them with seeds drawn from its seed
        self._build_agents(np.random.default_rng())
        self._state: GameState | None = None
        self._legal: list[int] = []
        self._view: tuple[list[int], np.ndarray, np.ndarray] | None = None
        self.env_steps = 0  # moves of every seat played, over all episodes
        self._over = True

    def _seat_specs(self, opponent: Any, partner: Any) -> dict[int, AgentSpec]:
        """The agent (spec or object) of every seat but the learner's."""
        n, me = self.rules.players, self.seat
        others = [(me + k) % n for k in range(1, n, 2)]  # the other team's seats
        if isinstance(opponent, (list, tuple)):
            if len(opponent) != len(others):
                raise ValueError(f"opponent: {len(opponent)} agents given for {len(others)} "
                                 f"opponent seat(s) {others}; give one spec for all, or one "
                                 f"per seat")
            opp = [_check_agent(f"opponent (seat {s})", a) for s, a in zip(others, opponent, strict=True)]
        else:
            opp = [_check_agent("opponent", opponent)] * len(others)
        specs = dict(zip(others, opp, strict=True))
        if n == 2:
            if partner is not None:
                raise ValueError("partner: a 2-player game has no partner seat (players=4 has)")
            return specs
        if partner is None:
            if isinstance(opponent, (list, tuple)):
                raise ValueError("partner: with one opponent spec per seat, give the partner's "
                                 "spec too (partner=SPEC)")
            partner = opponent
        specs[(me + 2) % n] = _check_agent(f"partner (seat {(me + 2) % n})", partner)
        return dict(sorted(specs.items()))

    def _build_agents(self, rng: np.random.Generator) -> None:
        """Build the spec'd agents with seeds drawn from ``rng``; objects are used as is."""
        self._agents = {}
        for s, spec in self.specs.items():
            seed = int(rng.integers(2**31))
            self._agents[s] = make_agent(spec, seed=seed) if isinstance(spec, str) else spec

    @property
    def opponents(self) -> dict[int, Agent]:
        """The agent of every other seat, by seat."""
        return dict(self._agents)

    # -- episode ---------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """A new match (its first hand dealt); the other seats play until the learner's
        turn. ``options={"deck": [...]}`` fixes the first hand's deal order,
        ``options={"match_seed": m}`` the match's seed (all its deals)."""
        super().reset(seed=seed)
        if seed is not None:
            self._build_agents(self.np_random)
        options = options or {}
        unknown = set(options) - {"deck", "match_seed"}
        if unknown:
            raise ValueError(f"reset options: unknown {sorted(unknown)}; known: deck, "
                             f"match_seed")
        match_seed = int(self.np_random.integers(2**31))
        if options.get("match_seed") is not None:
            match_seed = check_seed(options["match_seed"])
        self._state = new_match(self.rules, seed=match_seed, deck=options.get("deck"))
        self._over = False
        s = self._state
        start_deal(self._agents.values())
        self._legal = legal_actions(s.hands[s.to_move], s.table, s.rules)
        info: dict[str, Any] = {}
        self._play_others(info)  # the learner never waits past a whole hand
        return self._obs(), self._info(info)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        if self._over:
            raise RuntimeError("step() after the episode is over: call reset() to start a new one")
        info: dict[str, Any] = {}
        try:
            act = int(action)
        except (TypeError, ValueError):
            act = None
        slot = act
        if act is not None and self.moves.legal:  # the slot's catalogue id
            act = self._legal[act] if 0 <= act < min(len(self._legal), self.moves.slots) \
                else None
        if act is None or act not in self._legal:
            if self.illegal_mode == "raise":
                if self.moves.legal:
                    ids = np.asarray(self._legal, np.int64)[None]
                    raise IllegalMoveError(f"seat {self.seat}: " + self.moves.describe(
                        action if slot is None else slot, ids, np.ones(ids.shape, bool)))
                raise_illegal(self._state, action, self._legal)
            self._over, self._legal = True, []
            info["illegal_action"] = repr(action)
            return self._obs(), -1.0, True, False, self._info(info)
        reward = self._apply(act, info)
        if not self._over:
            reward += self._play_others(info)
        return self._obs(), reward, self._over, False, self._info(info)

    def _apply(self, action: int, info: dict[str, Any]) -> float:
        """Play one move (any seat's); the learner's reward from it."""
        s = self._state
        self.env_steps += 1
        # an episode of one hand ends on the hand's scored end, not the next deal
        result = apply(s, action, check=False, deal_next=self.episode_mode != "hand")
        if result.hand is not None and not s.done:
            start_deal(self._agents.values())
        reward = self._reward(result, info)
        if self._over:
            self._legal = []
        else:
            self._legal = legal_actions(s.hands[s.to_move], s.table, s.rules)
        return reward

    def _play_others(self, info: dict[str, Any]) -> float:
        """Let the agents play until it is the learner's turn or the episode is over."""
        s, reward = self._state, 0.0
        while not self._over and s.to_move != self.seat:
            seat = s.to_move
            agent = self._agents[seat]
            action = agent.act(info_set(s, seat))
            if action not in self._legal:
                raise RuntimeError(f"agent {getattr(agent, 'spec', agent)!r} in seat {seat} "
                                   f"played {action!r}, not a legal move")
            reward += self._apply(int(action), info)
        return reward

    def _reward(self, result: StepResult, info: dict[str, Any]) -> float:
        """The learner's team's reward from one move's result (the AEC env's rules)."""
        s, team = self._state, self.seat % 2
        if result.hand is None:
            return 0.0
        totals = [e["points"]["total"] for e in result.hand.score]
        info["hand_points"] = (totals[team], totals[1 - team])
        if result.match_over:
            info["match_score"] = (s.match_score[team], s.match_score[1 - team])
        self._over, rewards = hand_end(self.reward_mode, self.episode_mode, totals,
                                       result.match_over, s.winner)
        return rewards[team]

    # -- views -----------------------------------------------------------------------------
    def _encoded(self) -> tuple[np.ndarray, np.ndarray]:
        """The learner's observation and int8 mask in the chosen ``moves`` interface
        (kept until the next move)."""
        if self._view is None or self._view[0] is not self._legal:
            ids = np.asarray(self._legal, np.int64).reshape(1, -1)
            obs, mask = self.moves.encode(encode(self._state, self.seat)[None], ids,
                                          np.ones(ids.shape, bool))
            self._view = (self._legal, obs[0], mask[0])
        return self._view[1].copy(), self._view[2].copy()

    def _obs(self) -> Any:
        obs, mask = self._encoded()
        return {"observation": obs, "action_mask": mask} if self.mask_in_obs else obs

    def action_masks(self) -> np.ndarray:
        """The learner's legal moves as a bool mask over the action space (sb3-contrib's
        ``MaskablePPO`` calls this); all False once the episode is over."""
        return self._encoded()[1].astype(bool)

    def _info(self, info: dict[str, Any]) -> dict[str, Any]:
        info["action_mask"] = self._encoded()[1]
        return info

    @property
    def legal_actions(self) -> list[int]:
        """The learner's legal ids (empty once the episode is over)."""
        return list(self._legal)

    @property
    def state(self) -> GameState:
        """A copy of the full game state (hidden cards included: for tests and analysis,
        never for a policy's input)."""
        if self._state is None:
            raise RuntimeError("call reset() before reading the state")
        return self._state.copy()

    def render(self) -> str | None:
        if self._state is None:
            raise RuntimeError("call reset() before render()")
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        text = render_text(self._state, self.seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text


__all__ = ["ScopaGymEnv"]
