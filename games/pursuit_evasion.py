"""The pursuit-evasion game of the AIJ 2016 study (Bosansky et al., Section 6.2).

An evader (player 0) and a pursuer who commands two units (player 1) move at once on an
empty ``grid_size`` x ``grid_size`` four-connected grid for at most ``depth`` rounds. The
evader is caught when she ends a round on a unit's cell or swaps cells with a unit (they
used the same edge in opposite directions); the game then ends and the pursuer wins
(returns -1 / +1). If she is still free after ``depth`` rounds she wins (+1 / -1).

Every unit moves every round (no standing still), so the evader has 2 to 4 moves and the
pursuer up to 16 (the paper's "up to 16 actions for the pursuer"); the two units may share
a cell. The evader's action is a direction (0 north, 1 east, 2 south, 3 west); the
pursuer's is ``4 * d1 + d2`` for unit 1 moving ``d1`` and unit 2 moving ``d2``. Cells are
numbered row by row (``row * grid_size + col``).

Parameters:
  grid_size        side of the square grid (2..16); the paper used 4, 5 and 10    [4]
  depth            most rounds (1..100); the paper solved 4 x 4 and 5 x 5 games
                   of depth 4 to 8 and played 10 x 10 of depth 15                [5]
  evader_start     the evader's first cell (-1: the default placement below)      [-1]
  pursuer1_start   unit 1's first cell (-1: the default placement)                [-1]
  pursuer2_start   unit 2's first cell (-1: the default placement)                [-1]

The paper drew the start cells at random with GTLibrary's Java generator (which this game
does not reproduce), every unit at most floor(2 d / 3) moves from the evader; give the
cells instead. The default placement is the one of the paper's table of pure and mixed
states by depth (4 x 4, depth 5): the evader in the corner ``(0, 0)``, the units at
``(n - 2, n - 1)`` and ``(n - 1, n - 1)``; with it this game has exactly the paper's
1, 12, 324, 8,664 and 248,712 states at depths 0 to 4 (tests/test_games_pursuit_evasion.py),
which pins down the rules above. That table is why the default depth is 5 rather than
the smallest depth the paper solved (4, whose start cells it does not give; on 4 x 4
with depth 4 this placement lets the evader win outright, while e.g.
``evader_start=1,pursuer1_start=0,pursuer2_start=3`` needs mixed strategies, as the
paper's convergence experiment asked of its start). Differences from GTLibrary's code
(``domain/pursuit``): it reads the grid from a graph file and has a later "goal" cell
and move costs that the paper does not have; here the grid is built from ``grid_size``.

``state.transposition_key()`` (the three cells and the round) lets the exact solver share
transposed positions.
"""

from __future__ import annotations

from typing import Any

import pyspiel

from smmcts_spiel.games import grid_moves, serialization, simultaneous
from smmcts_spiel.games.actions import CheckedActions, IllegalActionError
from smmcts_spiel.games.observation_tensor import tensor_with_views

SHORT_NAME = "smmcts_pursuit_evasion"
_NUM_PLAYERS = 2
EVADER, PURSUER = 0, 1
MIN_GRID_SIZE, MAX_GRID_SIZE = 2, 16
MIN_DEPTH, MAX_DEPTH = 1, 100
NUM_PURSUER_ACTIONS = grid_moves.NUM_DIRECTIONS ** 2
_DEFAULT_PARAMS: dict[str, Any] = {
    "grid_size": 4,
    "depth": 5,
    "evader_start": -1,
    "pursuer1_start": -1,
    "pursuer2_start": -1,
}
_START_NAMES = ("evader_start", "pursuer1_start", "pursuer2_start")

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="SM-MCTS Pursuit-Evasion (AIJ 2016)",
    dynamics=pyspiel.GameType.Dynamics.SIMULTANEOUS,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=_NUM_PLAYERS,
    min_num_players=_NUM_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_DEFAULT_PARAMS,
)


def start_cells(params: dict) -> tuple[int, int, int]:
    """The evader's and both units' first cells, checked (the defaults filled in)."""
    n = params["grid_size"]
    grid_moves.check_range(SHORT_NAME, "grid_size", n, MIN_GRID_SIZE, MAX_GRID_SIZE)
    grid_moves.check_range(SHORT_NAME, "depth", params["depth"], MIN_DEPTH, MAX_DEPTH)
    defaults = (0, (n - 2) * n + n - 1, n * n - 1)
    cells = []
    for name, default in zip(_START_NAMES, defaults):
        cell = params[name]
        if cell == -1:
            cell = default
        elif not 0 <= cell < n * n:
            raise ValueError(f"{SHORT_NAME}: {name} must be a cell from 0 to {n * n - 1} "
                             f"(row * grid_size + col) or -1 for the default, got {cell}")
        cells.append(cell)
    if cells[0] in cells[1:]:
        raise ValueError(f"{SHORT_NAME}: the evader cannot start on a pursuing unit's cell "
                         f"(evader_start={cells[0]}, pursuer1_start={cells[1]}, "
                         f"pursuer2_start={cells[2]})")
    return cells[0], cells[1], cells[2]


class PursuitEvasionGame(pyspiel.Game):
    """The pursuit-evasion game with the given parameters."""

    def __init__(self, params: dict | None = None):
        params = {**_DEFAULT_PARAMS, **(params or {})}
        self.starts = start_cells(params)
        self.grid_size = params["grid_size"]
        self.depth = params["depth"]
        super().__init__(
            _GAME_TYPE,
            pyspiel.GameInfo(
                num_distinct_actions=NUM_PURSUER_ACTIONS,
                max_chance_outcomes=0,
                num_players=_NUM_PLAYERS,
                min_utility=-1.0,
                max_utility=1.0,
                utility_sum=0.0,
                max_game_length=self.depth,
            ),
            params,
        )

    def new_initial_state(self) -> PursuitEvasionState:
        return PursuitEvasionState(self)

    deserialize_state = serialization.deserialize_state

    def make_py_observer(self, iig_obs_type=None, params=None) -> PursuitEvasionObserver:
        return PursuitEvasionObserver(self, iig_obs_type or pyspiel.IIGObservationType(
            perfect_recall=False), params)


class PursuitEvasionState(CheckedActions, pyspiel.State):
    """The three units' cells, after some rounds."""

    def __init__(self, game: PursuitEvasionGame):
        super().__init__(game)
        self._n = game.grid_size
        self._depth = game.depth
        # positions[t] = (evader, unit 1, unit 2) at the start of round t.
        self.positions: list[tuple[int, int, int]] = [game.starts]
        self.caught = False

    # -- pyspiel API ------------------------------------------------------------------

    @property
    def round(self) -> int:
        """Rounds played so far."""
        return len(self.positions) - 1

    def current_player(self) -> int:
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return pyspiel.PlayerId.SIMULTANEOUS

    def is_terminal(self) -> bool:
        return self.caught or self.round >= self._depth

    def _legal_actions(self, player: int) -> list[int]:
        if self.is_terminal():
            return []
        if player == pyspiel.PlayerId.SIMULTANEOUS:
            return simultaneous.flat_joint_actions(self)
        evader, unit1, unit2 = self.positions[-1]
        if player == EVADER:
            return self._moves(evader)
        return [4 * d1 + d2 for d1 in self._moves(unit1) for d2 in self._moves(unit2)]

    def _moves(self, cell: int) -> list[int]:
        return [d for d in range(grid_moves.NUM_DIRECTIONS)
                if grid_moves.neighbour(cell, d, self._n, self._n) >= 0]

    def _apply_action(self, action: int) -> None:
        if self.is_terminal():
            raise IllegalActionError("apply_action on a terminal pursuit-evasion state")
        self._apply_actions(simultaneous.flat_to_joint(self, int(action)))

    def _apply_actions(self, actions: list[int]) -> None:
        if self.is_terminal():
            raise IllegalActionError("apply_actions on a terminal pursuit-evasion state")
        if len(actions) != _NUM_PLAYERS:
            raise IllegalActionError(f"a joint action needs 2 actions, got {list(actions)}")
        move, units = int(actions[0]), int(actions[1])
        for player, action in ((EVADER, move), (PURSUER, units)):
            if action not in self._legal_actions(player):
                raise IllegalActionError(
                    f"player {player} cannot play action {action} at {self.positions[-1]}: "
                    f"legal actions are {self._legal_actions(player)}")
        n = self._n
        before = self.positions[-1]
        after = (grid_moves.neighbour(before[0], move, n, n),
                 grid_moves.neighbour(before[1], units // 4, n, n),
                 grid_moves.neighbour(before[2], units % 4, n, n))
        self.positions.append(after)
        self.caught = is_capture(before, after)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.SIMULTANEOUS:
            return simultaneous.flat_joint_action_to_string(self, action)
        names = grid_moves.DIRECTION_NAMES
        if player == EVADER:
            return f"[E]{names[action]}"
        return f"[P]{names[action // 4]}{names[action % 4]}"

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0, 0.0]
        return [-1.0, 1.0] if self.caught else [1.0, -1.0]

    def __str__(self) -> str:
        return board_string(self.positions[-1], self._n) + f"\nRound: {self.round}"

    def transposition_key(self) -> tuple:
        """Equal for states with identical futures: the three cells and the round."""
        if self.is_terminal():
            return ("terminal",) + tuple(self.returns())
        return self.positions[-1] + (self.round,)


def is_capture(before: tuple[int, int, int], after: tuple[int, int, int]) -> bool:
    """Whether the evader is caught by the round from cells ``before`` to ``after``: on a
    unit's cell, or swapping cells with a unit."""
    evader_from, evader_to = before[0], after[0]
    for unit in (1, 2):
        if evader_to == after[unit]:
            return True
        if evader_to == before[unit] and evader_from == after[unit]:
            return True
    return False


def board_string(cells: tuple[int, int, int], n: int) -> str:
    """The grid, ``E`` the evader, ``1`` / ``2`` the units (``*`` both), ``X`` a capture."""
    board = [["."] * n for _ in range(n)]
    for unit, cell in ((1, cells[1]), (2, cells[2])):
        r, c = divmod(cell, n)
        board[r][c] = "*" if board[r][c] != "." else str(unit)
    r, c = divmod(cells[0], n)
    board[r][c] = "X" if board[r][c] != "." else "E"
    return "\n".join("".join(row) for row in board)


class PursuitEvasionObserver:
    """Observer (PyObserver interface); everything is public.

    The observation is the units' cells (one plane each: evader, unit 1, unit 2) and the
    round (one-hot); with perfect recall (the information state) it is the cells at the
    start of every round so far (``depth + 1`` rounds of three planes).
    """

    def __init__(self, game: PursuitEvasionGame, iig_obs_type, params):
        if params:
            raise ValueError(f"Observation parameters not supported; passed {params}")
        n, d = game.grid_size, game.depth
        self._n = n
        self._public = iig_obs_type.public_info
        self._recall = iig_obs_type.perfect_recall
        pieces: list[tuple[str, tuple[int, ...]]] = []
        if self._public:
            if self._recall:
                pieces.append(("positions", (d + 1, 3, n, n)))
            else:
                pieces.append(("cells", (3, n, n)))
                pieces.append(("round", (d + 1,)))
        self.tensor, self.dict = tensor_with_views(pieces)

    def set_from(self, state: PursuitEvasionState, player: int) -> None:
        del player  # Everything observable is public.
        self.tensor.fill(0)
        if not self._public:
            return
        n = self._n
        if self._recall:
            for t, cells in enumerate(state.positions):
                for unit, cell in enumerate(cells):
                    self.dict["positions"][t, unit, cell // n, cell % n] = 1
        else:
            for unit, cell in enumerate(state.positions[-1]):
                self.dict["cells"][unit, cell // n, cell % n] = 1
            self.dict["round"][state.round] = 1

    def string_from(self, state: PursuitEvasionState, player: int) -> str:
        del player
        if not self._public:
            return ""
        if self._recall:
            n = self._n
            return " ".join(
                f"E{grid_moves.cell_name(e, n)}P{grid_moves.cell_name(a, n)}"
                f"{grid_moves.cell_name(b, n)}" for e, a, b in state.positions)
        return str(state)


def evaluation(state: PursuitEvasionState) -> float:
    """The paper's evaluation function, the evader's value estimate in [0, 1): the
    distance to the nearer unit plus 0.01 times the farther one's, over ``1.01 (w + l)``
    (grid distance is the Manhattan distance on an empty grid); the return at a terminal."""
    if state.is_terminal():
        return state.returns()[EVADER]
    n = state.get_game().grid_size
    evader, *units = state.positions[-1]
    er, ec = divmod(evader, n)
    distances = [abs(er - u // n) + abs(ec - u % n) for u in units]
    return (min(distances) + 0.01 * max(distances)) / (1.01 * 2 * n)


pyspiel.register_game(_GAME_TYPE, PursuitEvasionGame)
