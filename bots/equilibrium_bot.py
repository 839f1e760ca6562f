"""EquilibriumBot: plays an exact Nash equilibrium, sampled from the solver's strategies.

The yardstick of play strength: no bot can beat it in expectation (in a zero-sum game it
guarantees the game's value from either seat), and a bot's shortfall against it measures
how exploitable the bot's play is along the lines the equilibrium takes. The game is
solved once per process by :func:`smmcts_spiel.exact.solver.solve` (backward induction
with transpositions: two-player zero-sum games with perfect information between stages
and explicit chance, e.g. Goofspiel-6 in a few seconds, oshi_zumo(coins=10,size=3,
horizon=20) in about 7 s); every bot of that game in the process shares the solution.
"""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.exact import solver

_SOLUTIONS: dict[str, solver.Solution] = {}  # game string -> solution, per process


def solution_of(game: pyspiel.Game, cache_dir: str | os.PathLike | None = None,
                max_states: int | None = solver.MAX_STATES,
                **limits) -> solver.Solution:
    """The exact solution of ``game``, computed on first use and kept for the process.

    With ``cache_dir``, also kept on disk there (one JSON file per game string, see
    :func:`smmcts_spiel.exact.solver.save_solution`): read and checked if present
    (:func:`~smmcts_spiel.exact.solver.load_solution` refuses a file that is not an
    equilibrium of ``game``), written after solving otherwise, so that e.g. Goofspiel-6 is
    solved once, not in every process. A game of more than about ``max_states`` states, or
    above the solver's other ``limits`` (``max_seconds``, ``max_stage_cells`` of
    :func:`smmcts_spiel.exact.solver.solve`), is refused before solving (None: no limit).
    """
    name = str(game)
    if name not in _SOLUTIONS:
        path = None
        if cache_dir is not None:
            digest = hashlib.sha256(name.encode()).hexdigest()[:16]
            path = os.path.join(cache_dir, f"{game.get_type().short_name}_{digest}.json")
        if path is not None and os.path.exists(path):
            _SOLUTIONS[name] = solver.load_solution(game, path, max_states)
        else:
            _SOLUTIONS[name] = solver.solve(game, max_states=max_states, **limits)
            if path is not None and cache_dir is not None:
                os.makedirs(cache_dir, exist_ok=True)
                solver.save_solution(_SOLUTIONS[name], path)
    return _SOLUTIONS[name]


class EquilibriumBot(pyspiel.Bot):
    """Samples its move from an exact equilibrium strategy at every state.

    ``solution``: the game's solution if already at hand (it must be of ``game``);
    otherwise :func:`solution_of` solves the game, refusing one of more than about
    ``max_states`` states or above the solver's other ``limits`` (``max_seconds``,
    ``max_stage_cells``; None: no limit) before it starts.
    A state of another game is refused.
    """

    def __init__(self, game: pyspiel.Game, player_id: int, seed: int | None = None,
                 solution: solver.Solution | None = None,
                 max_states: int | None = solver.MAX_STATES,
                 **limits):
        super().__init__()
        self.player_id = checks.check_player_id(player_id)
        if solution is None:
            solver.check_game(game)
            solution = solution_of(game, max_states=max_states, **limits)
        elif str(solution.game) != str(game):
            raise ValueError(f"EquilibriumBot for {game} was given the solution of "
                             f"{solution.game}; solve this game (solution=None)")
        self._game = str(game)
        self.solution = solution
        self._rng = np.random.default_rng(seed)

    def restart_at(self, state: pyspiel.State) -> None:
        checks.check_state_game(state, self._game, "EquilibriumBot")

    def provides_policy(self) -> bool:
        return True

    def step_with_policy(self, state: pyspiel.State):
        """(this player's equilibrium strategy as (action, p) pairs, the sampled action)."""
        checks.check_state_game(state, self._game, "EquilibriumBot")
        if state.is_chance_node():
            raise ValueError("EquilibriumBot.step called at a chance node: chance moves are "
                             "sampled by the game runner, not by a bot")
        probs = self.solution.action_probabilities(state, self.player_id)
        if not probs:
            raise ValueError(f"EquilibriumBot (player {self.player_id}) has no move here: "
                             f"it is player {state.current_player()}'s turn")
        actions = list(probs)
        p = np.array([probs[a] for a in actions])
        action = actions[self._rng.choice(len(actions), p=p / p.sum())]
        return list(probs.items()), int(action)

    def step(self, state: pyspiel.State) -> int:
        return self.step_with_policy(state)[1]
