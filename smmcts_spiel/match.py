"""Matches between bots given as spec strings, with seats alternated and a results table.

A bot spec uses OpenSpiel's game-string syntax, e.g.::

    smmcts(selector=exp3,gamma=0.1,iterations=5000)   our SMMCTSBot
    mcts(iterations=1000,uct_c=2)                     OpenSpiel's Python MCTSBot
    random                                            uniform random (seeded)
    cpp(bot=uniform_random,...)                       any bot in pyspiel.registered_bots()

OpenSpiel's MCTSBot only plays sequential games; on a simultaneous game it searches the
``convert_to_turn_based`` game, and as the second mover it adds up its visit counts over
the first mover's possible actions, so neither seat sees the other's choice.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass

import numpy as np
import pyspiel
from open_spiel.python.algorithms import mcts
from open_spiel.python.algorithms.evaluate_bots import evaluate_bots
from tqdm.auto import tqdm

from smmcts_spiel import checks
from smmcts_spiel.bots.smmcts_bot import SMMCTSBot

BOT_KINDS = ("smmcts", "mcts", "random", "cpp")
_SMMCTS_PARAMS = ("selector", "gamma", "c", "iterations", "time_limit", "final_strategy")
_MCTS_PARAMS = ("iterations", "uct_c", "rollouts")


def parse_bot_spec(spec: str) -> dict:
    """``"smmcts(selector=rm,iterations=500)"`` -> ``{"name": "smmcts", ...}``."""
    try:
        params = dict(pyspiel.game_parameters_from_string(spec.strip()))
    except pyspiel.SpielError as e:
        raise ValueError(f"malformed bot spec {spec!r}: {e}. Expected name or "
                         "name(key=value,...), e.g. smmcts(selector=rm,iterations=1000)") from None
    if params.get("name") not in BOT_KINDS:
        raise ValueError(f"unknown bot {params.get('name')!r} in spec {spec!r}; "
                         f"known bots: {', '.join(BOT_KINDS)}")
    return params


def make_bot(spec: str, game: pyspiel.Game, player_id: int, seed: int) -> pyspiel.Bot:
    """A fresh, seeded bot for ``player_id`` from a spec string."""
    params = parse_bot_spec(spec)
    kind = params.pop("name")
    if kind == "smmcts":
        _check_keys(spec, params, _SMMCTS_PARAMS)
        return SMMCTSBot(game, player_id, seed=seed, **params)
    if kind == "random":
        _check_keys(spec, params, ())
        return pyspiel.make_uniform_random_bot(player_id, seed)
    if kind == "mcts":
        _check_keys(spec, params, _MCTS_PARAMS)
        return TurnBasedMCTSBot(game, player_id, seed=seed, **params)
    name = params.pop("bot", None)
    if name not in pyspiel.registered_bots():
        raise ValueError(f"cpp bot spec {spec!r} needs bot=<one of "
                         f"{', '.join(pyspiel.registered_bots())}>")
    return pyspiel.load_bot(name, game, player_id, params)


def _check_keys(spec: str, params: dict, allowed) -> None:
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ValueError(f"unknown parameter(s) {', '.join(unknown)} in bot spec {spec!r}; "
                         f"allowed: {', '.join(allowed) or 'none'}")


class TurnBasedMCTSBot(pyspiel.Bot):
    """OpenSpiel's Python MCTSBot, made able to play simultaneous-move games fairly.

    Sequential games are played directly. At a simultaneous node the bot searches the
    turn-based conversion from the start of the round; player 0 plays the most visited
    action, player 1 the action with most visits summed over player 0's moves.
    """

    def __init__(self, game: pyspiel.Game, player_id: int, iterations: int = 1000,
                 uct_c: float = 2.0, rollouts: int = 1, seed: int | None = None):
        super().__init__()
        if not isinstance(iterations, int) or iterations < 1:
            raise ValueError(f"iterations must be a positive integer, got {iterations!r}")
        self._game = game
        self._simultaneous = game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
        self._search_game = pyspiel.convert_to_turn_based(game) if self._simultaneous else game
        rng = np.random.RandomState(seed)
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=rollouts, random_state=rng)
        self._mcts = mcts.MCTSBot(self._search_game, uct_c, iterations, evaluator,
                                  solve=False, random_state=rng)
        self.player_id = player_id

    def restart_at(self, state) -> None:
        pass

    def step(self, state: pyspiel.State) -> int:
        if not self._simultaneous:
            return self._mcts.step(state)
        turn_based = self._search_game.new_initial_state()
        for action in state.history():
            turn_based.apply_action(action)
        root = self._mcts.mcts_search(turn_based)
        if self.player_id == 0:
            return root.best_child().action
        visits: dict[int, int] = {}
        for first in root.children:
            for second in first.children:
                visits[second.action] = visits.get(second.action, 0) + second.explore_count
        return max(visits, key=visits.get)


@dataclass
class MatchResult:
    """Outcomes from the first bot's point of view."""

    bot_a: str
    bot_b: str
    returns: list  # bot A's return in each game

    @property
    def games(self) -> int:
        return len(self.returns)

    def _count(self, sign: int) -> int:
        return sum(1 for r in self.returns if np.sign(r) == sign)

    @property
    def wins(self) -> int:
        return self._count(1)

    @property
    def draws(self) -> int:
        return self._count(0)

    @property
    def losses(self) -> int:
        return self._count(-1)

    @property
    def mean(self) -> float:
        return float(np.mean(self.returns))

    @property
    def ci95(self) -> float:
        """Half-width of the normal 95% interval of the mean return."""
        if self.games < 2:
            return math.inf
        return 1.96 * float(np.std(self.returns, ddof=1)) / math.sqrt(self.games)


def play_match(game: pyspiel.Game, bot_a: str, bot_b: str, num_games: int, seed: int = 0,
               progress: bool = True) -> MatchResult:
    """``num_games`` games of A against B, A taking seat 0 in even games and seat 1 in odd.

    Returns are relative to the game's zero point, so for a constant-sum game A's
    "return" is its utility minus half the utility sum.
    """
    checks.check_game(game, "a match")
    if num_games < 1:
        raise ValueError(f"num_games must be >= 1, got {num_games}")
    rng = random.Random(seed)
    seeds = [rng.getrandbits(31) for _ in range(4)]
    bots_a = [make_bot(bot_a, game, p, seeds[p]) for p in (0, 1)]
    bots_b = [make_bot(bot_b, game, p, seeds[2 + p]) for p in (0, 1)]
    half_sum = game.utility_sum() / 2
    chance_rng = np.random.RandomState(rng.getrandbits(31))
    returns = []
    for k in tqdm(range(num_games), desc=f"{bot_a} vs {bot_b}", disable=not progress,
                  leave=False):
        seat_a = k % 2
        bots = [bots_a[0], bots_b[1]] if seat_a == 0 else [bots_b[0], bots_a[1]]
        result = evaluate_bots(game.new_initial_state(), bots, chance_rng)
        returns.append(result[seat_a] - half_sum)
    return MatchResult(bot_a, bot_b, returns)


def round_robin(game: pyspiel.Game, specs: list[str], num_games: int, seed: int = 0,
                progress: bool = True) -> list[MatchResult]:
    """Every pair of distinct specs plays one match of ``num_games`` games."""
    pairs = list(itertools.combinations(specs, 2))
    results = []
    for k, (a, b) in enumerate(tqdm(pairs, desc="round robin", disable=not progress)):
        results.append(play_match(game, a, b, num_games, seed=seed + k, progress=progress))
    return results


def format_table(results: list[MatchResult]) -> str:
    """A fixed-width table: one row per match, from the first bot's point of view."""
    width_a = max(len("bot A"), *(len(r.bot_a) for r in results))
    width_b = max(len("bot B"), *(len(r.bot_b) for r in results))
    lines = [f"{'bot A':<{width_a}}  {'bot B':<{width_b}}  games  wins  draws  losses  "
             "mean return A (95% CI)"]
    for r in results:
        lines.append(f"{r.bot_a:<{width_a}}  {r.bot_b:<{width_b}}  {r.games:5d}  {r.wins:4d}  "
                     f"{r.draws:5d}  {r.losses:6d}  {r.mean:+.3f} +- {r.ci95:.3f}")
    return "\n".join(lines)
