"""PettingZoo AEC environment for Scopa (2 players, or 4 in two teams).

```python
import scopa_env
env = scopa_env.env(rules="scopa", players=2, render_mode="ansi")
env.reset(seed=42)
for agent in env.agent_iter():
    obs, reward, termination, truncation, info = env.last()
    if termination or truncation:
        action = None
    else:
        mask = obs["action_mask"]
        action = int(env.np_random.choice(mask.nonzero()[0]))
    env.step(action)
```

| | |
|---|---|
| agents | `player_0` … `player_{n-1}`; teams are seat % 2 (0 and 2 vs 1 and 3) |
| action space | `Discrete(16204)`: the fixed (played card, captured set) catalogue of actions.md |
| observation space | `Dict{"observation": Box(0, OBS_HIGH, (216,), float32), "action_mask": Box(0, 1, (16204,), int8)}` (finite bounds: `scopa_env.observation.OBS_HIGH`) |
| action mask | non-zero only for the agent to move, on exactly its legal ids |
| rewards | `reward="match"` (default): +1 to the winning team's seats, -1 to the others at match end, 0 at every other step. `reward="points"`: at each hand end, own team's hand points minus the other team's (zero-sum). With `episode="hand"` and `reward="match"`, the sign of the hand's margin. |
| episodes | `episode="match"` (default, to `target_score`) or `"hand"` (one hand) |
| illegal actions | `illegal_action="raise"` (default): `IllegalMoveError` naming the move, the seat and the legal moves. `"lose"`: the offender gets -1, every other seat 0, and the episode ends (PettingZoo's TerminateIllegalWrapper) |
| rules | `rules="scopa"` (or `scopone_scientifico`, `scopone`, `asso_piglia_tutto`, a `Rules`) plus any option of rules.md as a keyword: `players=4`, `capture_rule="fewest"`, `target_score=21`, … |
| seeding | `reset(seed=s)` plays the match of seed `s` (the deals of `new_match(rules, seed=s)`) and seeds `np_random` from a value derived from `s`; later unseeded resets draw their match seeds from `s`'s sequence. `reset(options={"deck": [...]})` fixes the first hand's deal order |

The observation's layout (hand, table, both teams' captures, unseen cards, then hand
sizes, deck count, match score, scope, seat from the dealer, last capturing team) is
defined once, as named slices, in `scopa_env.observation` (`LAYOUT`).

`env.unwrapped.info_set(agent)` gives the same information as a structured
`InfoSet` (for rule-based agents); `env.unwrapped.record` is the match's game
record (game-record.md) once it is over.

Nothing public reveals what a seat may not know: the full game state is private
(`_state`), `record` holds only finished hands and no seed until the episode is over,
and `np_random` is seeded from a value derived from the match seed, not the seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from .cards import CODES, cards_of
from .episode import EPISODES, REWARDS, check_choice, check_seed
from .game import GameState, IllegalMoveError, apply, new_match, raise_illegal
from .moves import N_ACTIONS, action_text, legal_actions
from .observation import OBS_DIM, OBS_HIGH, InfoSet, bounded, encode, info_set
from .play import derive_seed
from .records import MatchRecorder
from .rules import Rules, make_rules
from .rules.outcome import hand_end

ILLEGAL = ("raise", "lose")


def env(**kwargs: Any) -> AECEnv:
    """The Scopa AEC environment.

    PettingZoo's classic envs wrap ``raw_env`` in AssertOutOfBounds and
    OrderEnforcing wrappers. ``raw_env`` does both jobs itself (every action is
    checked against the legal set, with a message naming the problem, and calls
    before ``reset`` raise), so ``env()`` returns it unwrapped: the wrappers'
    attribute forwarding cost about as much per step as the game itself."""
    return raw_env(**kwargs)


class raw_env(AECEnv):
    """Scopa as a PettingZoo AEC environment (see the module docstring)."""

    metadata = {"render_modes": ["human", "ansi"], "name": "scopa_v0",
                "is_parallelizable": False, "render_fps": 1}

    def __init__(self, rules: str | Rules = "scopa", render_mode: str | None = None,
                 reward: str = "match", episode: str = "match", illegal_action: str = "raise",
                 agent_names: list[str] | None = None, **options: Any):
        super().__init__()
        self.rules = make_rules(rules, **options)
        for name, value, allowed in (("reward", reward, REWARDS), ("episode", episode, EPISODES),
                                     ("illegal_action", illegal_action, ILLEGAL)):
            check_choice(name, value, allowed)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None, 'human' or 'ansi', got {render_mode!r}")
        self.render_mode = render_mode
        self.reward_mode, self.episode_mode, self.illegal_mode = reward, episode, illegal_action
        n = self.rules.players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self._agent_names = agent_names or ["env"] * n
        obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, OBS_HIGH, (OBS_DIM,), np.float32),
            "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8),
        })
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = {a: spaces.Discrete(N_ACTIONS) for a in self.possible_agents}
        self._state: GameState | None = None
        self._seed_rng = np.random.default_rng()

    def _require_reset(self, what: str) -> None:
        if self._state is None:
            raise RuntimeError(f"call reset() before {what}()")

    def _require_live(self, what: str) -> None:
        self._require_reset(what)
        if not self.agents:
            raise RuntimeError(f"{what}() after every agent is done: the episode is over, "
                               f"call reset() to start a new one")

    def _check_agent(self, agent: str) -> int:
        seat = self.agent_name_mapping.get(agent)
        if seat is None:
            raise ValueError(f"unknown agent {agent!r}; the agents are "
                             f"{', '.join(self.possible_agents)}")
        return seat

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """PettingZoo's ``last`` (what the agent to act sees), in one call."""
        if self._state is None or not self.agents:
            self._require_live("last")
        agent = self.agent_selection
        return (self.observe(agent) if observe else None, self._cumulative_rewards[agent],
                self.terminations[agent], self.truncations[agent], self.infos[agent])

    def agent_iter(self, max_iter: int = 2**63):
        self._require_reset("agent_iter")
        return super().agent_iter(max_iter)

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # -- episode -------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            seed = check_seed(seed)
            self._seed_rng = np.random.default_rng(seed)
            self.np_random, _ = _gym_rng(derive_seed(seed, 1))  # reveals nothing of the seed
        elif not hasattr(self, "np_random") or self.np_random is None:
            self.np_random, _ = _gym_rng(None)
        match_seed = int(self._seed_rng.integers(2**31)) if seed is None else int(seed)
        deck = (options or {}).get("deck")
        self._state = new_match(self.rules, seed=match_seed, deck=deck)
        self._recorder = MatchRecorder(self._state, self._agent_names)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._zero_rewards = True  # every value of self.rewards is 0
        self._refresh_legal()
        self.agent_selection = self.agents[self._state.to_move]

    def _refresh_legal(self) -> None:
        s = self._state
        self._legal = [] if s.done else legal_actions(s.hands[s.to_move], s.table, s.rules)

    def step(self, action: int | None) -> None:
        if self._state is None or not self.agents:
            self._require_live("step")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            self._zero_rewards = False  # PettingZoo's reset of them: 0, not 0.0
            return
        s = self._state
        seat = self.agent_name_mapping[agent]
        if action is None or int(action) not in self._legal:
            if self.illegal_mode == "raise":
                raise_illegal(s, action, self._legal)
            self._cumulative_rewards[agent] = 0.0
            self.terminations = dict.fromkeys(self.agents, True)
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self.rewards[agent] = -1.0
            self._zero_rewards = False
            self.infos[agent]["illegal_move"] = repr(action)
            self._accumulate_rewards()
            return
        self._cumulative_rewards[agent] = 0.0
        result = apply(s, int(action), check=False)
        self._recorder.observe(result, s)
        if not self._zero_rewards:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._zero_rewards = True
        done = False
        if result.hand is not None:
            done, team_rewards = hand_end(self.reward_mode, self.episode_mode,
                                          [e["points"]["total"] for e in result.hand.score],
                                          result.match_over, s.winner)
            self.rewards = {a: team_rewards[self.agent_name_mapping[a] % 2]
                            for a in self.agents}
            self._zero_rewards = False
        if done:
            self.terminations = dict.fromkeys(self.agents, True)
            self._legal = []
            self.agent_selection = self.agents[(seat + 1) % len(self.agents)]
        else:
            self._refresh_legal()
            self.agent_selection = self.agents[s.to_move]
        if not self._zero_rewards:  # adding zeros would change nothing
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # -- views ---------------------------------------------------------------------------
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if self._state is None:
            self._require_reset("observe")
        seat = self.agent_name_mapping.get(agent)
        if seat is None:
            seat = self._check_agent(agent)
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        if agent == self.agent_selection and not self.terminations.get(agent, True):
            mask[self._legal] = 1
        return {"observation": bounded(encode(self._state, seat)), "action_mask": mask}

    def info_set(self, agent: str) -> InfoSet:
        """The agent's information set (legal moves filled in when it is to move)."""
        self._require_reset("info_set")
        return info_set(self._state, self._check_agent(agent))

    @property
    def record(self) -> dict[str, Any]:
        """The match's game record so far: the finished hands (complete once the match
        is over). Its ``seed``, which would reveal every deal, stays ``None`` until the
        episode is over."""
        self._require_reset("record")
        rec = self._recorder.record
        if not (self._state.done or all(self.terminations.values())):
            rec["seed"] = None
        return rec

    def render(self) -> str | None:
        self._require_reset("render")
        if self.render_mode is None:
            import gymnasium
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        text = render_text(self._state, self.agent_name_mapping[self.agent_selection])
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def _gym_rng(seed: int | None) -> tuple[np.random.Generator, int]:
    from gymnasium.utils import seeding
    return seeding.np_random(seed)


def render_text(s: GameState, viewer: int) -> str:
    """A readable table of the game from ``viewer``'s seat (other hands hidden)."""
    def show(mask: int) -> str:
        return " ".join(CODES[c] for c in cards_of(mask)) or "-"

    team = viewer % 2
    lines = [
        f"Scopa ({s.rules.name}, {s.rules.players} players) — hand {s.hand_index + 1}, "
        f"dealer seat {s.dealer}, deck {s.deck_count} cards",
        f"Match score: team 0 {s.match_score[0]} — team 1 {s.match_score[1]} "
        f"(target {s.rules.target_score})",
        f"Table:          {show(s.table)}",
    ]
    for seat in range(s.rules.players):
        hand = show(s.hands[seat]) if seat == viewer else f"{s.hands[seat].bit_count()} cards"
        mark = " <- to move" if seat == s.to_move and not s.done else ""
        lines.append(f"Seat {seat} (team {seat % 2}){' [you]' if seat == viewer else ''}: "
                     f"{hand}{mark}")
    for t in (0, 1):
        lines.append(f"Team {t} captures ({s.piles[t].bit_count()}, scope {s.scope[t]})"
                     f"{' [yours]' if t == team else ''}: {show(s.piles[t])}")
    if not s.done and s.to_move == viewer:
        lines.append("Legal moves: " + ", ".join(action_text(a) for a in s.legal_actions()))
    if s.done:
        lines.append(f"Match over: team {s.winner} wins {s.match_score[0]}-{s.match_score[1]}")
    return "\n".join(lines)


__all__ = ["env", "raw_env", "render_text", "IllegalMoveError"]
