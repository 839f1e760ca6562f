"""Tron, the light-cycle game of the AIJ 2016 study (Bosansky et al., Section 6.2).

Two players start in opposite corners of an empty ``rows`` x ``cols`` grid (player 0 at
``(0, 0)``, player 1 at ``(rows - 1, cols - 1)``) and move at once, each to an adjacent
empty cell; the cell each leaves becomes a wall. A player with no empty neighbour left
loses, since any move would hit a wall or the other's trail; if both are enclosed at once,
or both move into the same cell, the game is a draw. Returns are +1 / -1 for a win, 0 for
a draw.

Actions are directions (0 north, 1 east, 2 south, 3 west); only moves into empty cells
are legal, so a game lasts at most ``(rows * cols - 2) / 2`` joint moves (the paper's
"longest branch of ``0.5 w l - 1`` joint actions"). This is the rule of GTLibrary's code
(``domain/tron``, board type ``A``), which the paper's text words as "if a player hits the
wall or the opponent, the game ends": there a player would crash one move later; the
outcome is the same (a crash into a wall is never better than a free move) and the tree is
one joint move shorter, as the paper's counts are. The paper does not say where the
players start; the corners are GTLibrary's.

Parameters (the paper solved widths 5 to 9 with height ``width - 1`` or ``width``, and
played 13 x 13):
  rows   the grid's height (2..20)                                                [4]
  cols   the grid's width (2..20)                                                 [5]

The default, 4 x 5, is the smallest grid of the paper's exact-solving figure; its text's
"5 x 6" grid (the convergence experiment) is ``rows=5,cols=6``. On it this game has
exactly the paper's table of states by depth (1, 4, 16, 100, 574, 2,605, ... 3,127 at
depths 0 to 13; tests/test_games_tron.py). ``state.transposition_key()`` (the walls and both heads)
lets the exact solver share transposed positions.
"""

from __future__ import annotations

from typing import Any

import pyspiel

from smmcts_spiel.games import grid_moves, serialization, simultaneous
from smmcts_spiel.games.actions import CheckedActions, IllegalActionError
from smmcts_spiel.games.observation_tensor import tensor_with_views

SHORT_NAME = "smmcts_tron"
_NUM_PLAYERS = 2
MIN_SIDE, MAX_SIDE = 2, 20
_DEFAULT_PARAMS: dict[str, Any] = {"rows": 4, "cols": 5}
DRAW = -1  # the winner of a drawn game

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="SM-MCTS Tron (AIJ 2016)",
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


def max_rounds(rows: int, cols: int) -> int:
    """Most joint moves of a game: each fills two of the cells left after the starts."""
    return (rows * cols - 2) // 2


class TronGame(pyspiel.Game):
    """Tron on an empty grid of the given size."""

    def __init__(self, params: dict | None = None):
        params = {**_DEFAULT_PARAMS, **(params or {})}
        for name in ("rows", "cols"):
            grid_moves.check_range(SHORT_NAME, name, params[name], MIN_SIDE, MAX_SIDE)
        self.rows, self.cols = params["rows"], params["cols"]
        super().__init__(
            _GAME_TYPE,
            pyspiel.GameInfo(
                num_distinct_actions=grid_moves.NUM_DIRECTIONS,
                max_chance_outcomes=0,
                num_players=_NUM_PLAYERS,
                min_utility=-1.0,
                max_utility=1.0,
                utility_sum=0.0,
                max_game_length=max_rounds(self.rows, self.cols),
            ),
            params,
        )

    def new_initial_state(self) -> TronState:
        return TronState(self)

    deserialize_state = serialization.deserialize_state

    def make_py_observer(self, iig_obs_type=None, params=None) -> TronObserver:
        return TronObserver(self, iig_obs_type or pyspiel.IIGObservationType(
            perfect_recall=False), params)


class TronState(CheckedActions, pyspiel.State):
    """The walls, both heads and the moves so far.

    Every field is an immutable value (the walls a bit per cell, the moves two bytes per
    round): pyspiel clones a Python state by deep-copying its attributes, and these copy in
    one step each, where lists would be copied item by item (most of a solver's time).
    """

    def __init__(self, game: TronGame):
        super().__init__(game)
        self.rows, self.cols = game.rows, game.cols
        self.heads: tuple[int, ...] = (0, self.rows * self.cols - 1)
        self.walls = (1 << self.heads[0]) | (1 << self.heads[1])  # trails and both heads
        self._moves = b""  # each round's two directions
        self.winner: int | None = None  # 0, 1 or DRAW once the game is over

    @property
    def moves(self) -> list[tuple[int, int]]:
        """The joint moves so far, one (player 0's, player 1's) pair per round."""
        return list(zip(self._moves[0::2], self._moves[1::2]))

    def occupied(self, cell: int) -> bool:
        """Whether ``cell`` is a wall or a head."""
        return bool(self.walls >> cell & 1)

    # -- pyspiel API ------------------------------------------------------------------

    def current_player(self) -> int:
        if self.winner is not None:
            return pyspiel.PlayerId.TERMINAL
        return pyspiel.PlayerId.SIMULTANEOUS

    def is_terminal(self) -> bool:
        return self.winner is not None

    def _legal_actions(self, player: int) -> list[int]:
        if self.winner is not None:
            return []
        if player == pyspiel.PlayerId.SIMULTANEOUS:
            return simultaneous.flat_joint_actions(self)
        return self._free_moves(self.heads[player])

    def _free_moves(self, cell: int) -> list[int]:
        walls = self.walls
        return [d for d, target in grid_moves.neighbour_table(self.rows, self.cols)[cell]
                if not walls >> target & 1]

    def _apply_action(self, action: int) -> None:
        if self.winner is not None:
            raise IllegalActionError("apply_action on a terminal Tron state")
        self._apply_actions(simultaneous.flat_to_joint(self, int(action)))

    def _apply_actions(self, actions: list[int]) -> None:
        if self.winner is not None:
            raise IllegalActionError("apply_actions on a terminal Tron state")
        if len(actions) != _NUM_PLAYERS:
            raise IllegalActionError(f"a joint action needs 2 moves, got {list(actions)}")
        moves = int(actions[0]), int(actions[1])
        for player, move in enumerate(moves):
            if move not in self._free_moves(self.heads[player]):
                raise IllegalActionError(
                    f"player {player} cannot move {move} from "
                    f"{grid_moves.cell_name(self.heads[player], self.cols)}: legal moves are "
                    f"{self._free_moves(self.heads[player])}")
        targets = tuple(grid_moves.neighbour(h, m, self.rows, self.cols)
                        for h, m in zip(self.heads, moves))
        self._moves += bytes(moves)
        self.heads = targets
        self.walls |= (1 << targets[0]) | (1 << targets[1])
        if targets[0] == targets[1]:
            self.winner = DRAW  # head-on
            return
        enclosed = [not self._free_moves(h) for h in self.heads]
        if enclosed[0] and enclosed[1]:
            self.winner = DRAW
        elif enclosed[0] or enclosed[1]:
            self.winner = 1 if enclosed[0] else 0

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.SIMULTANEOUS:
            return simultaneous.flat_joint_action_to_string(self, action)
        return f"[P{player}]{grid_moves.DIRECTION_NAMES[action]}"

    def returns(self) -> list[float]:
        if self.winner is None or self.winner == DRAW:
            return [0.0, 0.0]
        return [1.0, -1.0] if self.winner == 0 else [-1.0, 1.0]

    def __str__(self) -> str:
        board = ["#" if self.occupied(cell) else "." for cell in range(self.rows * self.cols)]
        if self.heads[0] == self.heads[1]:
            board[self.heads[0]] = "X"
        else:
            board[self.heads[0]], board[self.heads[1]] = "0", "1"
        return "\n".join("".join(board[r * self.cols:(r + 1) * self.cols])
                         for r in range(self.rows))

    def transposition_key(self) -> tuple:
        """Equal for states with identical futures: the walls and both heads."""
        if self.winner is not None:
            return ("terminal",) + tuple(self.returns())
        return self.walls, self.heads[0], self.heads[1]


class TronObserver:
    """Observer (PyObserver interface); everything is public.

    The observation is the board: one plane of walls (the trails, heads excluded) and one
    plane per player's head. With perfect recall (the information state) it is every joint
    move so far, one-hot per round and player.
    """

    def __init__(self, game: TronGame, iig_obs_type, params):
        if params:
            raise ValueError(f"Observation parameters not supported; passed {params}")
        rows, cols = game.rows, game.cols
        self._public = iig_obs_type.public_info
        self._recall = iig_obs_type.perfect_recall
        pieces: list[tuple[str, tuple[int, ...]]] = []
        if self._public:
            if self._recall:
                pieces.append(("moves", (max_rounds(rows, cols), _NUM_PLAYERS,
                                         grid_moves.NUM_DIRECTIONS)))
            else:
                pieces.append(("board", (3, rows, cols)))
        self.tensor, self.dict = tensor_with_views(pieces)

    def set_from(self, state: TronState, player: int) -> None:
        del player  # Everything observable is public.
        self.tensor.fill(0)
        if not self._public:
            return
        if self._recall:
            for t, joint in enumerate(state.moves):
                for p, move in enumerate(joint):
                    self.dict["moves"][t, p, move] = 1
            return
        board = self.dict["board"].reshape(3, -1)
        board[0] = [state.occupied(cell) for cell in range(board.shape[1])]
        for p, head in enumerate(state.heads):
            board[0, head] = 0
            board[1 + p, head] = 1

    def string_from(self, state: TronState, player: int) -> str:
        del player
        if not self._public:
            return ""
        if self._recall:
            names = grid_moves.DIRECTION_NAMES
            return " ".join(f"{names[a]}{names[b]}" for a, b in state.moves) or "start"
        return str(state)


pyspiel.register_game(_GAME_TYPE, TronGame)
