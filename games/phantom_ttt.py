"""Phantom Tic-Tac-Toe: tic-tac-toe where each player sees only their own marks.

The game of the MMCTS/Exp3 papers (D. Auger, "Multiple Tree for Partially Observable
Monte-Carlo Tree Search", EvoApplications 2011; H. Doghmen's poster "Monte-Carlo Tree
Search", TAO, Inria Saclay, which reports the Phantom Tic-Tac-Toe olympiad): players
alternate placing marks on a hidden board. A move onto a cell the opponent holds is
refused; the mover learns that the cell is the opponent's and moves again. Three in a row
wins (+1 / -1), a full board is a draw.

Actions 0..8 are the cells, row by row (OpenSpiel's numbering). A player's legal actions
are the cells they know nothing about (not their own marks, not refused cells). The
information state is the player's own history of moves and their results; it defines
the same information sets as OpenSpiel's ``phantom_ttt`` (default ``obstype``,
"reveal-nothing"), which the tests check trajectory by trajectory. The observation is the
player's current view of the board.
"""

from __future__ import annotations

import pyspiel

from smmcts_spiel.games import serialization
from smmcts_spiel.games.actions import CheckedActions, IllegalActionError
from smmcts_spiel.games.observation_tensor import tensor_with_views
from smmcts_spiel.games.phantom_ttt_rules import WINNING_LINES

SHORT_NAME = "smmcts_phantom_ttt"
_NUM_PLAYERS = 2
_NUM_CELLS = 9
_EMPTY = -1
_MARKS = "xo"  # Player 0 plays x, player 1 plays o.
# x places 5 marks and is refused on 4 o cells, o places 4 and is refused on 4 x cells.
_MAX_GAME_LENGTH = 17
# Every own move reveals one cell, so a player makes at most 9 moves.
_MAX_OWN_MOVES = _NUM_CELLS

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="SM-MCTS Phantom Tic-Tac-Toe",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=_NUM_PLAYERS,
    min_num_players=_NUM_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={},
)
_GAME_INFO = pyspiel.GameInfo(
    num_distinct_actions=_NUM_CELLS,
    max_chance_outcomes=0,
    num_players=_NUM_PLAYERS,
    min_utility=-1.0,
    max_utility=1.0,
    utility_sum=0.0,
    max_game_length=_MAX_GAME_LENGTH,
)


class PhantomTTTGame(pyspiel.Game):
    """Phantom Tic-Tac-Toe (no parameters)."""

    def __init__(self, params: dict | None = None):
        super().__init__(_GAME_TYPE, _GAME_INFO, params or {})

    def new_initial_state(self) -> PhantomTTTState:
        return PhantomTTTState(self)

    deserialize_state = serialization.deserialize_state

    def make_py_observer(self, iig_obs_type=None, params=None) -> PhantomTTTObserver:
        return PhantomTTTObserver(
            iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class PhantomTTTState(CheckedActions, pyspiel.State):
    """The true board, each player's view of it and each player's own move history."""

    def __init__(self, game: PhantomTTTGame):
        super().__init__(game)
        self.board = [_EMPTY] * _NUM_CELLS  # 0 = x, 1 = o
        self.views = [[_EMPTY] * _NUM_CELLS for _ in range(_NUM_PLAYERS)]
        # own_moves[p]: (cell, placed) for each of p's moves; placed=False if refused.
        self.own_moves: list[list[tuple[int, bool]]] = [[], []]
        self._player = 0
        self._winner: int | None = None
        self._game_over = False

    def current_player(self) -> int:
        return pyspiel.PlayerId.TERMINAL if self._game_over else self._player

    def _legal_actions(self, player: int) -> list[int]:
        view = self.views[player]
        return [c for c in range(_NUM_CELLS) if view[c] == _EMPTY]

    def _apply_action(self, action: int) -> None:
        cell, player = int(action), self._player
        if self._game_over:
            raise IllegalActionError(f"action {cell}: the game is over (terminal state); no "
                                     f"action can be applied")
        if not 0 <= cell < _NUM_CELLS or self.views[player][cell] != _EMPTY:
            raise IllegalActionError(f"action {cell} is not legal for player {player}; legal: "
                                     f"{self._legal_actions(player)}")
        placed = self.board[cell] == _EMPTY
        if placed:
            self.board[cell] = player
        self.views[player][cell] = self.board[cell]
        self.own_moves[player].append((cell, placed))
        if not placed:
            return  # Refused: the same player moves again.
        if any(all(self.board[c] == player for c in line) for line in WINNING_LINES):
            self._winner = player
            self._game_over = True
        elif _EMPTY not in self.board:
            self._game_over = True
        else:
            self._player = 1 - player

    def _action_to_string(self, player: int, action: int) -> str:
        return f"{_MARKS[player]}({action // 3},{action % 3})"

    def is_terminal(self) -> bool:
        return self._game_over

    def returns(self) -> list[float]:
        if self._winner is None:
            return [0.0, 0.0]
        return [1.0, -1.0] if self._winner == 0 else [-1.0, 1.0]

    def __str__(self) -> str:
        return _board_string(self.board)


def _board_string(cells: list[int]) -> str:
    marks = ["." if c == _EMPTY else _MARKS[c] for c in cells]
    return "\n".join("".join(marks[r * 3:r * 3 + 3]) for r in range(3))


def _move_string(cell: int, placed: bool) -> str:
    return f"{cell}{'' if placed else '!'}"


class PhantomTTTObserver:
    """Observer (PyObserver interface): nothing is public; each player sees their own view.

    Per observed player: the view of the board (one-hot empty / x / o per cell) and, with
    perfect recall, the sequence of own moves (one-hot cell, plus whether it was refused).
    Strings: the view, and with perfect recall the own moves, e.g. ``"4 0! 2"`` where
    ``!`` marks a refused move.
    """

    def __init__(self, iig_obs_type, params):
        if params:
            raise ValueError(f"Observation parameters not supported; passed {params}")
        self._players = {pyspiel.PrivateInfoType.SINGLE_PLAYER: "self",
                         pyspiel.PrivateInfoType.ALL_PLAYERS: "all"}.get(
                             iig_obs_type.private_info, "none")
        self._recall = iig_obs_type.perfect_recall
        num = {"self": 1, "all": _NUM_PLAYERS, "none": 0}[self._players]
        pieces: list[tuple[str, tuple[int, ...]]] = [("view", (num, 3, _NUM_CELLS))]
        if self._recall:
            pieces.append(("own_moves", (num, _MAX_OWN_MOVES, _NUM_CELLS + 1)))
        if not num:
            pieces = []
        self.tensor, self.dict = tensor_with_views(pieces)

    def _observed(self, player: int) -> list[int]:
        return {"self": [player], "all": [0, 1], "none": []}[self._players]

    def set_from(self, state: PhantomTTTState, player: int) -> None:
        self.tensor.fill(0)
        for row, p in enumerate(self._observed(player)):
            view = self.dict["view"][row]
            for cell, mark in enumerate(state.views[p]):
                view[mark + 1, cell] = 1  # Rows: empty, x, o.
            if self._recall:
                for t, (cell, placed) in enumerate(state.own_moves[p]):
                    self.dict["own_moves"][row, t, cell] = 1
                    self.dict["own_moves"][row, t, _NUM_CELLS] = 0 if placed else 1

    def string_from(self, state: PhantomTTTState, player: int) -> str:
        parts = []
        for p in self._observed(player):
            text = _board_string(state.views[p])
            if self._recall:
                text += "\n" + " ".join(_move_string(*m) for m in state.own_moves[p])
            parts.append(text)
        return "\n\n".join(parts)


pyspiel.register_game(_GAME_TYPE, PhantomTTTGame)
