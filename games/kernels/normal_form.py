"""One-shot (normal-form) games and ``repeated_game`` over them, as one numba game kernel.

A one-shot two-player game (``matrix_rps``, ``matrix_mp``, ``matrix_rpsw``, ``matrix_brps``,
any ``nfg_game``, ``normal_form_extensive_game``, a ``pyspiel.create_matrix_game``, ...)
is its payoff table: both players pick a row and a column at once and the game ends.
``repeated_game(stage_game=..., num_repetitions=R)`` plays such a stage game ``R`` times,
paying each stage's payoff as a reward (its ``recall`` changes only observations). The
kernel holds player 0's payoffs in ``data`` (row-major) and covers every such game whose
payoffs sum to a constant in every cell (pyspiel's game type says zero- or constant-sum):
general-sum tables (``matrix_pd``, ...) are refused, as they are by SM-MCTS.

Parameters ``[rows, cols, repetitions]``. State: stages played, the last joint action and
player 0's return so far (a float64 stored in the int64 state's last entry).
"""

from __future__ import annotations

import numba
import numpy as np
import pyspiel

from smmcts_spiel.games.kernels import base, blotto
from smmcts_spiel.games.kernels.base import DECISION, TERMINAL, Uncovered

SHORT_NAMES = ("repeated_game",)  # and every one-shot game: see describes()
#: The leaf evaluator SMMCTSBot uses by default (no game knowledge to use).
DEFAULT_EVALUATOR = "random_rollout"
#: Most payoff cells read by playing the game in pyspiel (a few seconds' worth); payoff
#: arrays (matrix games, blotto stages) are read directly, up to the engine's limit.
MAX_PLAYED_CELLS = 1 << 20
_ROWS, _COLS, _REPETITIONS = range(3)
_STAGE, _ACTION0, _ACTION1, _RETURN = range(4)
STATE_SIZE = 4


def describes(game: pyspiel.Game) -> bool:
    """Repeated games, and one-shot simultaneous games without chance."""
    game_type = game.get_type()
    if game_type.short_name in SHORT_NAMES:
        return True
    return (game_type.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
            and game_type.chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC
            and game.max_game_length() == 1)


def parameters(game: pyspiel.Game) -> tuple[np.ndarray, np.ndarray]:
    if game.num_players() != 2:
        raise Uncovered(f"{game.num_players()} players: the kernel plays two players")
    repeated = game.get_type().short_name == "repeated_game"
    repetitions = game.get_parameters()["num_repetitions"] if repeated else 1
    state = game.new_initial_state()
    if state.is_terminal():  # no repetitions
        return np.array([0, 0, 0], np.int64), np.zeros(0)
    rows, cols = (len(state.legal_actions(p)) for p in (0, 1))
    for p, n in enumerate((rows, cols)):
        if state.legal_actions(p) != list(range(n)):
            raise Uncovered(f"player {p}'s actions are not 0..{n - 1}")
    u0, u1 = _payoffs(game, repeated, rows, cols)
    sums = u0 + u1
    if np.ptp(sums) > 1e-9 * max(1.0, np.abs(sums).max()):
        raise Uncovered("payoffs that do not sum to a constant (general-sum)")
    params = np.array([rows, cols, repetitions], np.int64)
    return params, np.ascontiguousarray(u0, np.float64).ravel()


def _payoffs(game, repeated: bool, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """Both players' (stage) payoff tables, from arrays where the game has them, else by
    playing every joint action once."""
    stage = game
    if repeated and "stage_game" in game.get_parameters():
        stage_params = dict(game.get_parameters()["stage_game"])
        stage = pyspiel.load_game(stage_params.pop("name"), stage_params)
    if isinstance(stage, pyspiel.MatrixGame):
        return np.asarray(stage.row_utilities()), np.asarray(stage.col_utilities())
    if isinstance(stage, pyspiel.TensorGame):
        return np.asarray(stage.player_utilities(0)), np.asarray(stage.player_utilities(1))
    if stage.get_type().short_name == "blotto":
        table = _blotto_table(blotto.parameters(stage)[0], rows, cols)
        return table, -table
    if rows * cols > MAX_PLAYED_CELLS:
        raise Uncovered(f"{rows} x {cols} joint actions: more payoff cells than the "
                        f"{MAX_PLAYED_CELLS:,} read by playing them")
    start = game.new_initial_state()
    u0 = np.zeros((rows, cols))
    u1 = np.zeros((rows, cols))
    for i in range(rows):
        for j in range(cols):
            state = start.clone()
            state.apply_actions([i, j])
            u0[i, j], u1[i, j] = state.rewards() if repeated else state.returns()
    return u0, u1


@numba.njit(cache=True)
def _blotto_table(params, rows, cols):
    table = np.zeros((rows, cols))
    for i in range(rows):
        for j in range(cols):
            table[i, j] = blotto.payoff(params, i, j)
    return table


def limits(params: np.ndarray) -> tuple[int, int, int]:
    return int(max(params[_ROWS], params[_COLS])), 0, int(params[_REPETITIONS]) + 1


def utility_range(params: np.ndarray, data: np.ndarray) -> tuple[float, float]:
    """``repetitions`` times the smallest and the largest payoff."""
    r = int(params[_REPETITIONS])
    return r * float(data.min(initial=0.0)), r * float(data.max(initial=0.0))


@numba.njit(cache=True)
def initial_state(params):
    state = np.zeros(STATE_SIZE, np.int64)
    state[_ACTION0] = -1
    state[_ACTION1] = -1
    return state


@numba.njit(cache=True)
def status(state, params, data):
    return TERMINAL if state[_STAGE] >= params[_REPETITIONS] else DECISION


@numba.njit(cache=True)
def legal_actions(state, params, data, player, out):
    if state[_STAGE] >= params[_REPETITIONS]:
        return 0
    return base.every_action(params[_ROWS + player], out)


chance_outcomes = base.no_chance_outcomes
apply_chance = base.no_chance


@numba.njit(cache=True)
def apply_actions(state, params, data, action0, action1):
    state[_STAGE] += 1
    state[_ACTION0] = action0
    state[_ACTION1] = action1
    state.view(np.float64)[_RETURN] += data[action0 * params[_COLS] + action1]


@numba.njit(cache=True)
def rewards(state, params, data):
    """Player 0's payoff in the last stage (0 before the first)."""
    if state[_STAGE] == 0:
        return 0.0
    return data[state[_ACTION0] * params[_COLS] + state[_ACTION1]]


@numba.njit(cache=True)
def returns(state, params, data):
    """Player 0's payoffs so far."""
    return state.view(np.float64)[_RETURN]


@numba.njit(cache=True)
def rollout(state, params, data, rng):
    """Player 0's return after uniformly random play of the stages left."""
    rows = params[_ROWS]
    cols = params[_COLS]
    total = state.view(np.float64)[_RETURN]
    for _ in range(state[_STAGE], params[_REPETITIONS]):
        i = min(int(rng.random() * rows), rows - 1)
        j = min(int(rng.random() * cols), cols - 1)
        total += data[i * cols + j]
    return total
