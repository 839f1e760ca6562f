"""OpenSpiel's own search bots, wrapped so they play our games fairly and on a time budget.

* :class:`TurnBasedMCTSBot`: OpenSpiel's MCTSBot, Python (``engine="python"``) or C++
  (``engine="cpp"``). It only searches sequential games; on a simultaneous game it searches
  the ``convert_to_turn_based`` game from the start of the round, and as the second mover
  it adds up its visit counts over the first mover's possible actions, so neither seat sees
  the other's choice. A budget is ``iterations`` (simulations), ``time_limit`` (seconds per
  move: the C++ bot stops on its clock, the Python bot is calibrated, see below) or both.
* :func:`ismcts_bot`: OpenSpiel's Python ISMCTSBot on Phantom Tic-Tac-Toe, with worlds
  drawn by :class:`~smmcts_spiel.bots.belief_sampler.WorldResampler`.
"""

from __future__ import annotations

import time

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from smmcts_spiel import checks
from smmcts_spiel.bots.belief_sampler import WorldResampler

ENGINES = ("python", "cpp")
#: Simulations of the Python bot's first search on a time budget, before any calibration.
FIRST_CALIBRATION_SIMULATIONS = 20


class TurnBasedMCTSBot(pyspiel.Bot):
    """OpenSpiel's MCTSBot (random rollouts), made able to play simultaneous-move games fairly.

    Sequential games are searched directly. At a simultaneous node the bot searches the
    turn-based conversion from the start of the round; player 0 plays its most visited
    action, player 1 the action with most visits summed over player 0's moves. A player
    with a single legal action plays it without searching.

    With ``time_limit`` the C++ bot stops on its own clock (``max_wall_clock_time``); the
    Python bot, which has no clock, sets its number of simulations before each move from
    the seconds per simulation it measured so far (its first search runs
    :data:`FIRST_CALIBRATION_SIMULATIONS`), so it spends about ``time_limit`` per move.
    """

    def __init__(self, game: pyspiel.Game, player_id: int, iterations: int | None = 1000,
                 time_limit: float | None = None, uct_c: float = 2.0, rollouts: int = 1,
                 engine: str = "python", seed: int | None = None):
        super().__init__()
        checks.check_player_id(player_id)
        iterations, time_limit = checks.check_budget(iterations, time_limit)
        rollouts = checks.check_count(rollouts, "rollouts", minimum=1)
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
        self._simultaneous = game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
        self._search_game = pyspiel.convert_to_turn_based(game) if self._simultaneous else game
        self._game = str(game)
        self.player_id = player_id
        self.iterations = iterations
        self.time_limit = time_limit
        self._seconds_per_simulation = None
        seed = 0 if seed is None else int(seed) % 2**31
        if engine == "cpp":
            evaluator = pyspiel.RandomRolloutEvaluator(rollouts, seed)
            self._mcts = pyspiel.MCTSBot(
                self._search_game, evaluator, uct_c, iterations or 10**9, 1000, False, seed,
                False, pyspiel.ChildSelectionPolicy.UCT,
                -1.0 if time_limit is None else time_limit)
        else:
            rng = np.random.RandomState(seed)
            evaluator = mcts.RandomRolloutEvaluator(n_rollouts=rollouts, random_state=rng)
            self._mcts = mcts.MCTSBot(self._search_game, uct_c, iterations or 1, evaluator,
                                      solve=False, random_state=rng)
        self._engine = engine

    def restart_at(self, state) -> None:
        checks.check_state_game(state, self._game, "TurnBasedMCTSBot")

    def step(self, state: pyspiel.State) -> int:
        checks.check_state_game(state, self._game, "TurnBasedMCTSBot")
        legal = state.legal_actions(self.player_id)
        if not legal:
            raise ValueError(f"TurnBasedMCTSBot (player {self.player_id}) has no move here")
        if len(legal) == 1:
            return legal[0]
        if self._simultaneous:
            search_state = self._search_game.new_initial_state()
            for action in state.history():
                search_state.apply_action(action)
        else:
            search_state = state
        root = self._search(search_state)
        if not self._simultaneous or self.player_id == 0:
            return root.best_child().action
        visits: dict[int, int] = {}
        for first in root.children:
            for second in first.children:
                visits[second.action] = visits.get(second.action, 0) + second.explore_count
        if not visits:  # too few simulations to reach player 1's moves
            return legal[0]
        return max(visits, key=visits.get)

    def _search(self, state):
        if self._engine == "cpp" or self.time_limit is None:
            return self._mcts.mcts_search(state)
        if self._seconds_per_simulation is None:
            simulations = FIRST_CALIBRATION_SIMULATIONS
        else:
            simulations = max(1, int(self.time_limit / self._seconds_per_simulation))
        if self.iterations is not None:
            simulations = min(simulations, self.iterations)
        self._mcts.max_simulations = simulations
        start = time.perf_counter()
        root = self._mcts.mcts_search(state)
        seconds = (time.perf_counter() - start) / simulations
        previous = self._seconds_per_simulation
        self._seconds_per_simulation = seconds if previous is None else 0.5 * (previous + seconds)
        return root


class PhantomTTTISMCTSBot(ismcts.ISMCTSBot):
    """OpenSpiel's ISMCTSBot, made playable in ``evaluate_bots`` (it searches afresh at
    every move, so there is nothing to restart); it refuses states of another game."""

    def __init__(self, game: pyspiel.Game, *args, **kwargs):
        super().__init__(game, *args, **kwargs)
        self._game_string = str(game)

    def restart_at(self, state: pyspiel.State) -> None:
        checks.check_state_game(state, self._game_string, "PhantomTTTISMCTSBot")

    def run_search(self, state: pyspiel.State):
        checks.check_state_game(state, self._game_string, "PhantomTTTISMCTSBot")
        return super().run_search(state)


def ismcts_bot(game: pyspiel.Game, max_simulations: int, seed: int = 0,
               uct_c: float = 2.0) -> PhantomTTTISMCTSBot:
    """OpenSpiel's ISMCTSBot with random rollouts and :class:`WorldResampler` worlds."""
    bot = PhantomTTTISMCTSBot(
        game, mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed)), uct_c,
        max_simulations, random_state=np.random.RandomState(seed + 1))
    bot.set_resampler(WorldResampler(game, seed + 2))
    return bot
