"""Othello (Reversi) on an N x N board, small enough to solve and to measure exploitability.

OpenSpiel's C++ ``othello`` is 8 x 8 only. This game plays the same rules on any even board
size from 4 to 8, with OpenSpiel's conventions, so that on 8 x 8 the two games agree move
by move (``tests/test_games_othello.py`` checks legal actions, observation strings and
tensors and returns on random trajectories):

* Black (``x``, player 0) moves first; the four centre squares start ``o x / x o``.
* Action ``row * N + col`` places a disc; action ``N * N`` is a pass, the only legal
  action of a player who has no placing move.
* The game ends as soon as neither player can place a disc; the player with more discs
  wins (+1 / -1, 0 for a draw; ``returns_type=disc_difference`` instead pays
  ``(own discs - opponent's discs) / N^2``, which grades how well a policy plays, not only
  whether it wins).
* The observation tensor has three planes ``[empty, observer's discs, opponent's discs]``.

Parameters:
  board_size    N, an even number in [4, 8]                                     [4]
  returns_type  win_loss (OpenSpiel's) or disc_difference                       [win_loss]
  opening       moves already played when the game starts, as action strings     [""]
                joined by "-" (e.g. "b1-a1-a2"): the subgame after them, small
                enough for tests that walk every history

4 x 4 Othello (56,621 non-terminal positions, 224,821 histories; White wins by 8 discs
under perfect play) is the default: small enough for exact exploitability, deep enough (12
placements plus passes) that search depth matters.
``state.transposition_key()`` (the board and the player to move) lets the solver and the
exploitability walks share transposed positions.
"""

from __future__ import annotations

import functools

import numpy as np
import pyspiel

from smmcts_spiel.games import serialization
from smmcts_spiel.games.actions import CheckedActions, IllegalActionError

SHORT_NAME = "smmcts_othello"
_NUM_PLAYERS = 2
_DEFAULT_PARAMS = {"board_size": 4, "returns_type": "win_loss", "opening": ""}
RETURNS_TYPES = ("win_loss", "disc_difference")
_EMPTY, _BLACK, _WHITE = 0, 1, 2  # Black is player 0.
_SYMBOLS = "-xo"
_DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="SM-MCTS Othello (N x N)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=_NUM_PLAYERS,
    min_num_players=_NUM_PLAYERS,
    provides_information_state_string=False,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_DEFAULT_PARAMS,
)


@functools.cache
def rays(n: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """For each cell of an n x n board, the cells along each direction (at least two long)."""
    out = []
    for cell in range(n * n):
        r, c = divmod(cell, n)
        cell_rays = []
        for dr, dc in _DIRECTIONS:
            ray = []
            rr, cc = r + dr, c + dc
            while 0 <= rr < n and 0 <= cc < n:
                ray.append(rr * n + cc)
                rr, cc = rr + dr, cc + dc
            if len(ray) >= 2:
                cell_rays.append(tuple(ray))
        out.append(tuple(cell_rays))
    return tuple(out)


def initial_board(n: int) -> tuple[int, ...]:
    """The start position: ``o x`` over ``x o`` in the centre."""
    board = [_EMPTY] * (n * n)
    m = n // 2
    board[(m - 1) * n + m - 1] = board[m * n + m] = _WHITE
    board[(m - 1) * n + m] = board[m * n + m - 1] = _BLACK
    return tuple(board)


def flips(board, cell_rays, me: int) -> list[int]:
    """The discs a disc of colour ``me`` placed with these rays would turn over."""
    opponent = 3 - me
    out = []
    for ray in cell_rays:
        run = []
        for c in ray:
            v = board[c]
            if v == opponent:
                run.append(c)
                continue
            if v == me and run:
                out.extend(run)
            break
    return out


def placing_moves(board, n: int, me: int) -> list[int]:
    """The cells where colour ``me`` may place a disc, ascending."""
    all_rays = rays(n)
    return [cell for cell, v in enumerate(board)
            if v == _EMPTY and _has_flip(board, all_rays[cell], me)]


def _has_flip(board, cell_rays, me: int) -> bool:
    opponent = 3 - me
    for ray in cell_rays:
        if board[ray[0]] != opponent:
            continue
        for c in ray[1:]:
            v = board[c]
            if v == opponent:
                continue
            if v == me:
                return True
            break
    return False


def _check_params(params: dict) -> None:
    n = params["board_size"]
    if not isinstance(n, int) or n < 4 or n > 8 or n % 2:
        raise ValueError(f"{SHORT_NAME}: board_size must be an even integer in [4, 8], got {n!r}")
    if params["returns_type"] not in RETURNS_TYPES:
        raise ValueError(f"{SHORT_NAME}: returns_type must be one of {', '.join(RETURNS_TYPES)}, "
                         f"got {params['returns_type']!r}")


def opening_actions(opening: str, n: int) -> list[int]:
    """The actions of an ``opening`` string ("b1-a1-pass"); ValueError naming a bad move."""
    if not isinstance(opening, str):
        raise ValueError(f"{SHORT_NAME}: opening must be a string of moves joined by '-', "
                         f"got {opening!r}")
    if not opening:
        return []
    names = {f"{'abcdefgh'[c]}{r + 1}": r * n + c for r in range(n) for c in range(n)}
    names["pass"] = n * n
    actions = []
    for move in opening.split("-"):
        if move not in names:
            raise ValueError(f"{SHORT_NAME}: opening move {move!r} is not a square of the "
                             f"{n} x {n} board (a1 to {'abcdefgh'[n - 1]}{n}) or 'pass'")
        actions.append(names[move])
    return actions


class OthelloGame(pyspiel.Game):
    """Othello on a ``board_size`` x ``board_size`` board."""

    def __init__(self, params: dict | None = None):
        params = {**_DEFAULT_PARAMS, **(params or {})}
        _check_params(params)
        self.board_size = n = params["board_size"]
        self.disc_difference = params["returns_type"] == "disc_difference"
        self.opening = opening_actions(params["opening"], n)
        super().__init__(
            _GAME_TYPE,
            pyspiel.GameInfo(
                num_distinct_actions=n * n + 1,
                max_chance_outcomes=0,
                num_players=_NUM_PLAYERS,
                min_utility=-1.0,
                max_utility=1.0,
                utility_sum=0.0,
                # Every pass is followed by a placement (two passes end the game earlier).
                max_game_length=2 * (n * n - 4),
            ),
            params,
        )
        state = OthelloState(self, opening=False)
        for i, action in enumerate(self.opening):
            if state.is_terminal() or action not in state.legal_actions():
                raise ValueError(f"{SHORT_NAME}: opening move {i + 1} "
                                 f"({params['opening'].split('-')[i]!r}) is not legal after "
                                 f"the moves before it; legal: "
                                 f"{[state.action_to_string(a) for a in state.legal_actions()]}")
            state.apply_action(action)
        if state.is_terminal():
            raise ValueError(f"{SHORT_NAME}: the opening {params['opening']!r} ends the game")
        self._opening_state = state

    @property
    def pass_action(self) -> int:
        return self.board_size ** 2

    def new_initial_state(self) -> OthelloState:
        return OthelloState(self)

    deserialize_state = serialization.deserialize_state

    def make_py_observer(self, iig_obs_type=None, params=None) -> BoardObserver:
        if params:
            raise ValueError(f"{SHORT_NAME} takes no observation parameters, got {params}")
        return BoardObserver(self.board_size)


class OthelloState(CheckedActions, pyspiel.State):
    """The board, the player to move, and (cached) that player's placing moves."""

    board: tuple[int, ...]
    player: int
    _moves: list[int]

    def __init__(self, game: OthelloGame, opening: bool = True):
        super().__init__(game)
        self.n = game.board_size
        self.disc_difference = game.disc_difference
        if opening:  # The position after the opening (not part of the state's history).
            start = game._opening_state
            self.board, self.player, self._moves = start.board, start.player, start._moves
        else:
            self.board = initial_board(self.n)
            self.player = 0
            self._moves = placing_moves(self.board, self.n, _BLACK)
        self.terminal = False

    def current_player(self) -> int:
        return pyspiel.PlayerId.TERMINAL if self.terminal else self.player

    def is_terminal(self) -> bool:
        return self.terminal

    def _legal_actions(self, player: int) -> list[int]:
        return list(self._moves) if self._moves else [self.n * self.n]

    def _apply_action(self, action: int) -> None:
        if self.terminal or action not in self._legal_actions(self.player):
            legal = [] if self.terminal else self._legal_actions(self.player)
            raise IllegalActionError(f"action {action} is not legal for player {self.player}; "
                                     f"legal: {legal}")
        me = self.player + 1
        if action != self.n * self.n:
            board = list(self.board)
            board[action] = me
            for c in flips(board, rays(self.n)[action], me):
                board[c] = me
            self.board = tuple(board)
        self.player = 1 - self.player
        self._moves = placing_moves(self.board, self.n, self.player + 1)
        if not self._moves and not placing_moves(self.board, self.n, 2 - self.player):
            self.terminal = True

    def _action_to_string(self, player: int, action: int) -> str:
        if action == self.n * self.n:
            return "pass"
        r, c = divmod(action, self.n)
        return f"{'abcdefgh'[c]}{r + 1}"

    def discs(self) -> tuple[int, int]:
        """(black discs, white discs)."""
        return self.board.count(_BLACK), self.board.count(_WHITE)

    def returns(self) -> list[float]:
        if not self.terminal:
            return [0.0, 0.0]
        black, white = self.discs()
        r = ((black - white) / self.n ** 2 if self.disc_difference
             else float(np.sign(black - white)))
        return [r, -r]

    def transposition_key(self) -> tuple:
        """Board and player to move: all the future depends on."""
        return self.board, self.current_player()

    def __str__(self) -> str:
        return board_string(self)


def board_string(state: OthelloState) -> str:
    """OpenSpiel's othello layout: who plays, then the board framed by coordinates."""
    n = state.n
    letters = "  " + " ".join("abcdefgh"[:n]) + "  "
    head = ("Terminal State:" if state.terminal
            else f"{'Black (x)' if state.player == 0 else 'White (o)'} to play:")
    rows = [f"{r + 1} " + " ".join(_SYMBOLS[v] for v in state.board[r * n:(r + 1) * n])
            + f" {r + 1}" for r in range(n)]
    return "\n".join([head, letters, *rows, letters])


class BoardObserver:
    """Planes ``[empty, observer's discs, opponent's discs]``, as OpenSpiel's othello."""

    def __init__(self, n: int):
        self.tensor = np.zeros(3 * n * n, np.float32)
        self.dict = {"observation": self.tensor.reshape(3, n, n)}

    def set_from(self, state: OthelloState, player: int) -> None:
        board = np.asarray(state.board)
        self.tensor.reshape(3, -1)[:] = (board == _EMPTY, board == player + 1,
                                         board == 2 - player)

    def string_from(self, state: OthelloState, player: int) -> str:
        return board_string(state)


pyspiel.register_game(_GAME_TYPE, OthelloGame)
