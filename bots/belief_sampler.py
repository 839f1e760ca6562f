"""The Belief Sampler of the MMCTS poster, and world sampling for OpenSpiel's ISMCTS.

The Belief Sampler plays Phantom Tic-Tac-Toe the "standard" way for partially observable
games (Cazenave 2006): it draws a full board uniformly among those consistent with what it
has seen (its marks, the cells where its moves were refused, the number of opponent marks
the turn order implies, nobody has a line yet), then plays a perfect Tic-Tac-Toe move on
that board, uniformly among the optimal ones. The drawn board only has opponent marks on
cells it has not seen taken, so it never plays a cell it knows is taken.

OpenSpiel's C++ ``phantom_ttt`` does not implement ``ResampleFromInfostate``, which
:class:`open_spiel.python.algorithms.ismcts.ISMCTSBot` needs; :class:`WorldResampler` draws
the same consistent boards and builds a history that leads to them
(:class:`smmcts_spiel.bots.openspiel_bots.ISMCTSBot` uses it on Phantom Tic-Tac-Toe).
"""

from __future__ import annotations

import numpy as np
import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.exact import tic_tac_toe
from smmcts_spiel.games import phantom_ttt_rules


def _check_phantom_ttt(game: pyspiel.Game) -> None:
    if not phantom_ttt_rules.is_array_phantom_ttt(game):
        raise ValueError(f"the Belief Sampler knows classical Phantom Tic-Tac-Toe "
                         f"({', '.join(phantom_ttt_rules.SUPPORTED_GAMES)} with "
                         f"gameversion=classical, obstype=reveal-nothing), not {game}")


def sample_board(state: pyspiel.State, player: int, rng: np.random.Generator) -> np.ndarray:
    """A board drawn uniformly among those ``player`` (to move) cannot rule out."""
    return phantom_ttt_rules.sample_board(state.history(), player, rng)[0]


class BeliefSamplerBot(pyspiel.Bot):
    """Perfect Tic-Tac-Toe play on a board sampled from the player's belief."""

    def __init__(self, game: pyspiel.Game, player_id: int, seed: int = 0):
        pyspiel.Bot.__init__(self)
        _check_phantom_ttt(game)
        checks.check_player_id(player_id)
        self._game = str(game)
        self._player = player_id
        self._rng = np.random.default_rng(seed)

    def restart_at(self, state: pyspiel.State) -> None:
        checks.check_state_game(state, self._game, "BeliefSamplerBot")

    def step(self, state: pyspiel.State) -> int:
        checks.check_state_game(state, self._game, "BeliefSamplerBot")
        if state.current_player() != self._player:
            raise ValueError(f"it is player {state.current_player()}'s turn, this bot plays "
                             f"{self._player}")
        board = sample_board(state, self._player, self._rng)
        moves = tic_tac_toe.optimal_moves(board, self._player)
        return int(moves[self._rng.integers(len(moves))])


class WorldResampler:
    """``resampler(state, player)``: a state ``player`` cannot tell from ``state``."""

    def __init__(self, game: pyspiel.Game, seed: int = 0):
        _check_phantom_ttt(game)
        self._game = game
        self._rng = np.random.default_rng(seed)

    def __call__(self, state: pyspiel.State, player: int) -> pyspiel.State:
        world = self._game.new_initial_state()
        for cell in phantom_ttt_rules.sample_world(state.history(), player, self._rng):
            world.apply_action(cell)
        return world
