"""Oshi-Zumo with the AIJ 2016 study's point utilities: OpenSpiel's ``oshi_zumo`` plus
``returns_type``.

OpenSpiel's C++ ``oshi_zumo`` pays win/loss only; the study (Bosansky et al., Section 6.2)
also plays it with "utility values corresponding to the relative position of the
wrestler". This game has OpenSpiel's rules, parameters, action numbers, strings and
observation tensor (the tests check them trajectory by trajectory), and one more
parameter:

  returns_type  win_loss (OpenSpiel's: +1 / -1 / 0) or position: player 0 gets the
                wrestler's final offset towards player 1's edge, from -(size + 1)
                (pushed off player 0's edge) to size + 1 (off player 1's),
                0 in the middle (GTLibrary's ``wrestler - K``)                    [win_loss]

and OpenSpiel's: ``coins`` [50], ``size`` [3] (the paper's K: ``2 K + 1`` cells),
``horizon`` [1000], ``min_bid`` [0] (the paper's M is 1), ``alesia`` [False] (win_loss
only: a wrestler left on the field is a draw). Both players start with ``coins`` coins,
the wrestler in the middle; each turn both bid at once (at least ``min_bid``, or all they
have if less), the higher bid pushes the wrestler one cell towards the other player and
both bids are paid. The game ends when the wrestler is pushed off the field, both are out
of coins, or after ``horizon`` turns.

``state.transposition_key()`` (both players' coins, the wrestler and the turn) lets the
exact solver share transposed positions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from smmcts_spiel.games import serialization, simultaneous
from smmcts_spiel.games.actions import CheckedActions, IllegalActionError

SHORT_NAME = "smmcts_oshi_zumo"
RETURNS_TYPES = ("win_loss", "position")
_NUM_PLAYERS = 2
_DEFAULT_PARAMS: dict[str, Any] = {
    "coins": 50,
    "size": 3,
    "horizon": 1000,
    "min_bid": 0,
    "alesia": False,
    "returns_type": "win_loss",
}
#: Most coins: the observation tensor has ``coins + 1`` entries per player.
MAX_COINS = 10_000


_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="SM-MCTS Oshi-Zumo (with the AIJ 2016 point utilities)",
    dynamics=pyspiel.GameType.Dynamics.SIMULTANEOUS,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=_NUM_PLAYERS,
    min_num_players=_NUM_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_DEFAULT_PARAMS,
)


def _check_params(params: dict) -> None:
    for name, low, high in (("coins", 1, MAX_COINS), ("size", 1, 1000), ("horizon", 1, 10**6),
                            ("min_bid", 0, MAX_COINS)):
        if not low <= params[name] <= high:
            raise ValueError(f"{SHORT_NAME}: {name} must be an integer from {low} to {high}, "
                             f"got {params[name]}")
    if params["returns_type"] not in RETURNS_TYPES:
        raise ValueError(f"{SHORT_NAME}: returns_type must be one of "
                         f"{', '.join(RETURNS_TYPES)}; got {params['returns_type']!r}")
    if params["alesia"] and params["returns_type"] == "position":
        raise ValueError(f"{SHORT_NAME}: alesia changes win_loss returns only; with "
                         "returns_type=position leave it false")


class OshiZumoGame(pyspiel.Game):
    """Oshi-Zumo with OpenSpiel's rules and the chosen returns."""

    def __init__(self, params: dict | None = None):
        params = {**_DEFAULT_PARAMS, **(params or {})}
        _check_params(params)
        self.coins, self.size = params["coins"], params["size"]
        self.horizon, self.min_bid = params["horizon"], params["min_bid"]
        self.alesia = bool(params["alesia"])
        self.returns_type = params["returns_type"]
        reach = float(self.size + 1) if self.returns_type == "position" else 1.0
        super().__init__(
            _GAME_TYPE,
            pyspiel.GameInfo(
                num_distinct_actions=self.coins + 1,
                max_chance_outcomes=0,
                num_players=_NUM_PLAYERS,
                min_utility=-reach,
                max_utility=reach,
                utility_sum=0.0,
                max_game_length=self.horizon,
            ),
            params,
        )

    def new_initial_state(self) -> OshiZumoState:
        return OshiZumoState(self)

    deserialize_state = serialization.deserialize_state

    def make_py_observer(self, iig_obs_type=None, params=None) -> OshiZumoObserver:
        return OshiZumoObserver(self, iig_obs_type or pyspiel.IIGObservationType(
            perfect_recall=False), params)


class OshiZumoState(CheckedActions, pyspiel.State):
    """Both players' coins, the wrestler's cell (0 and ``2 size + 2`` are off the field)
    and the bids so far."""

    def __init__(self, game: OshiZumoGame):
        super().__init__(game)
        self._size, self._horizon, self._min_bid = game.size, game.horizon, game.min_bid
        self._alesia, self._returns_type = game.alesia, game.returns_type
        self.coins = [game.coins, game.coins]
        self.wrestler = game.size + 1
        self.bids: list[tuple[int, int]] = []

    def current_player(self) -> int:
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return pyspiel.PlayerId.SIMULTANEOUS

    def is_terminal(self) -> bool:
        edge = 2 * self._size + 2
        return (len(self.bids) >= self._horizon or self.wrestler in (0, edge)
                or self.coins == [0, 0])

    def _legal_actions(self, player: int) -> list[int]:
        if self.is_terminal():
            return []
        if player == pyspiel.PlayerId.SIMULTANEOUS:
            return simultaneous.flat_joint_actions(self)
        coins = self.coins[player]
        if coins < self._min_bid:
            return [coins]
        return list(range(self._min_bid, coins + 1))

    def _apply_action(self, action: int) -> None:
        if self.is_terminal():
            raise IllegalActionError("apply_action on a terminal Oshi-Zumo state")
        self._apply_actions(simultaneous.flat_to_joint(self, int(action)))

    def _apply_actions(self, actions: list[int]) -> None:
        if self.is_terminal():
            raise IllegalActionError("apply_actions on a terminal Oshi-Zumo state")
        if len(actions) != _NUM_PLAYERS:
            raise IllegalActionError(f"a joint action needs 2 bids, got {list(actions)}")
        bids = int(actions[0]), int(actions[1])
        for player, bid in enumerate(bids):
            if bid not in self._legal_actions(player):
                raise IllegalActionError(f"player {player} cannot bid {bid} with "
                                         f"{self.coins[player]} coins: legal bids are "
                                         f"{self._legal_actions(player)}")
        self.wrestler += (bids[0] > bids[1]) - (bids[0] < bids[1])
        self.coins = [self.coins[0] - bids[0], self.coins[1] - bids[1]]
        self.bids.append(bids)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.SIMULTANEOUS:
            return simultaneous.flat_joint_action_to_string(self, action)
        return f"[P{player}]Bid: {action}"

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0, 0.0]
        offset = self.wrestler - (self._size + 1)
        if self._returns_type == "position":
            return [float(offset), float(-offset)]
        edge = 2 * self._size + 2
        if self._alesia and self.wrestler not in (0, edge):
            return [0.0, 0.0]
        sign = (offset > 0) - (offset < 0)
        return [float(sign), float(-sign)]

    def __str__(self) -> str:
        edge = 2 * self._size + 2
        field = "".join("W" if c == self.wrestler else "#" if c in (0, edge) else "."
                        for c in range(edge + 1))
        return f"Coins: {self.coins[0]} {self.coins[1]}, Field: {field}\n"

    def transposition_key(self) -> tuple:
        """Equal for states with identical futures: coins, wrestler and the turn (the
        horizon counts turns)."""
        if self.is_terminal():
            return ("terminal",) + tuple(self.returns())
        return self.coins[0], self.coins[1], self.wrestler, len(self.bids)


class OshiZumoObserver:
    """Observer (PyObserver interface), as OpenSpiel's ``oshi_zumo``: the observation is
    both players' coins and the wrestler's cell (one-hot, ``2 (coins + 1) + 2 size + 3``
    entries) and the state's string; the information state string is the bids so far
    (``"2, 1, 3, 3"``)."""

    def __init__(self, game: OshiZumoGame, iig_obs_type, params):
        if params:
            raise ValueError(f"Observation parameters not supported; passed {params}")
        self._public = iig_obs_type.public_info
        self._recall = iig_obs_type.perfect_recall
        size = 2 * (game.coins + 1) + 2 * game.size + 3
        self.tensor = np.zeros(size if self._public and not self._recall else 0, np.float32)
        self.dict = {"observation": self.tensor} if len(self.tensor) else {}
        self._coins = game.coins

    def set_from(self, state: OshiZumoState, player: int) -> None:
        del player  # Everything observable is public.
        self.tensor.fill(0)
        if not len(self.tensor):
            return
        self.tensor[state.coins[0]] = 1
        self.tensor[self._coins + 1 + state.coins[1]] = 1
        self.tensor[2 * (self._coins + 1) + state.wrestler] = 1

    def string_from(self, state: OshiZumoState, player: int) -> str:
        del player
        if not self._public:
            return ""
        if self._recall:
            return ", ".join(str(b) for bids in state.bids for b in bids)
        return str(state)


pyspiel.register_game(_GAME_TYPE, OshiZumoGame)
