"""Goofspiel as a simultaneous-move game, the benchmark of the SM-MCTS papers.

Each player holds the cards 1..N. Every round a prize card is shown, both players bid one
of their cards at once, the higher bid wins the prize's points and a tie discards it. With
``imp_info=false`` both bids are revealed after every round (the perfect-information
simultaneous game of Lanctot et al. and Lisy et al.); with ``imp_info=true`` a player only
learns who won the round.

Parameters (the names, action numbering, chance outcomes and returns of OpenSpiel's C++
``goofspiel``, which the tests check trajectory by trajectory):
  num_cards     N, cards per player and prize cards (1..100)                     [13]
  points_order  random (chance deals the prizes), descending or ascending, or
                shuffled: a fixed order known to both, drawn once from points_seed
                (the AIJ 2016 study's "fixed sequence"; not in OpenSpiel)        [random]
  points_seed   seed of the shuffled order (numpy's RandomState(points_seed)
                .permutation(num_cards)); only with points_order=shuffled        [0]
  returns_type  win_loss (+1 / -1 / 0), point_difference ((own - other) / 2,
                OpenSpiel's "points minus the mean") or total_points (own points,
                general-sum)                                                     [win_loss]
  imp_info      hide the bids (only the round's winner is revealed)              [False]

Actions: bidding card ``c`` is action ``c - 1``; chance outcome ``k`` deals prize ``k + 1``.
As in OpenSpiel the last round, where nobody has a choice, is played automatically.

``state.transposition_key()`` is equal for states whose futures (legal moves, chance
outcomes and returns under every continuation) are identical, so a solver can share them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from smmcts_spiel.games import serialization, simultaneous
from smmcts_spiel.games.actions import CheckedActions, IllegalActionError
from smmcts_spiel.games.observation_tensor import tensor_with_views

SHORT_NAME = "smmcts_goofspiel"
POINTS_ORDERS = ("random", "descending", "ascending")  # OpenSpiel's
SHUFFLED = "shuffled"  # ours: a fixed order drawn from points_seed
RETURNS_TYPES = ("win_loss", "point_difference", "total_points")
_NUM_PLAYERS = 2
_NO_WINNER = -1  # A tied round: the prize is discarded.
# The observation tensors grow as N^2 (N^3 bid sequences with perfect recall) and no
# search reaches the end of a bigger game; refuse larger N before allocating anything.
MAX_NUM_CARDS = 100
_DEFAULT_PARAMS: dict[str, Any] = {
    "num_cards": 13,
    "points_order": "random",
    "returns_type": "win_loss",
    "imp_info": False,
    "points_seed": 0,
}
def _game_type(points_order: str, imp_info: bool, returns_type: str) -> pyspiel.GameType:
    """The GameType of one parameter set: chance, information and utility depend on it."""
    return pyspiel.GameType(
        short_name=SHORT_NAME,
        long_name="SM-MCTS Goofspiel",
        dynamics=pyspiel.GameType.Dynamics.SIMULTANEOUS,
        chance_mode=(pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
                     if points_order == "random"
                     else pyspiel.GameType.ChanceMode.DETERMINISTIC),
        information=(pyspiel.GameType.Information.IMPERFECT_INFORMATION if imp_info
                     else pyspiel.GameType.Information.PERFECT_INFORMATION),
        utility=(pyspiel.GameType.Utility.GENERAL_SUM if returns_type == "total_points"
                 else pyspiel.GameType.Utility.ZERO_SUM),
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=_NUM_PLAYERS,
        min_num_players=_NUM_PLAYERS,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=_DEFAULT_PARAMS,
    )


# Registered with the default parameters' type; each game instance reports its own.
_GAME_TYPE = _game_type(_DEFAULT_PARAMS["points_order"], _DEFAULT_PARAMS["imp_info"],
                        _DEFAULT_PARAMS["returns_type"])


def _check_params(params: dict) -> None:
    n = params["num_cards"]
    if not 1 <= n <= MAX_NUM_CARDS:
        raise ValueError(f"{SHORT_NAME}: num_cards must be an integer from 1 to "
                         f"{MAX_NUM_CARDS}, got {n}")
    if params["points_order"] not in POINTS_ORDERS + (SHUFFLED,):
        raise ValueError(f"{SHORT_NAME}: points_order must be one of "
                         f"{', '.join(POINTS_ORDERS + (SHUFFLED,))}; got "
                         f"{params['points_order']!r}")
    if params["points_seed"] < 0:
        raise ValueError(f"{SHORT_NAME}: points_seed must be an integer >= 0, got "
                         f"{params['points_seed']}")
    if params["points_seed"] and params["points_order"] != SHUFFLED:
        raise ValueError(f"{SHORT_NAME}: points_seed goes with points_order=shuffled, not "
                         f"{params['points_order']}")
    if params["returns_type"] not in RETURNS_TYPES:
        raise ValueError(f"{SHORT_NAME}: returns_type must be one of "
                         f"{', '.join(RETURNS_TYPES)}; got {params['returns_type']!r}")


def shuffled_order(num_cards: int, points_seed: int) -> list[int]:
    """The prize indices of ``points_order=shuffled``, in the order they are dealt: numpy's
    ``RandomState(points_seed).permutation(num_cards)``, whose stream numpy keeps frozen, so
    a seed names the same order in every numpy version."""
    return [int(c) for c in np.random.RandomState(points_seed).permutation(num_cards)]


class GoofspielGame(pyspiel.Game):
    """Two-player Goofspiel with the given parameters."""

    def __init__(self, params: dict | None = None):
        params = {**_DEFAULT_PARAMS, **(params or {})}
        _check_params(params)
        self.num_cards = n = params["num_cards"]
        self.points_order = params["points_order"]
        self.returns_type = params["returns_type"]
        self.imp_info = bool(params["imp_info"])
        #: The prizes in the order dealt, when the order is fixed (None: chance deals).
        self.point_order = None if self.points_order == "random" else (
            shuffled_order(n, params["points_seed"]) if self.points_order == SHUFFLED
            else list(range(n)) if self.points_order == "ascending"
            else list(range(n - 1, -1, -1)))
        total = n * (n + 1) // 2
        game_type = _game_type(self.points_order, self.imp_info, self.returns_type)
        min_utility, max_utility, utility_sum = {
            "win_loss": (-1.0, 1.0, 0.0),
            "point_difference": (-total / 2, total / 2, 0.0),
            "total_points": (0.0, float(total), None),
        }[self.returns_type]
        super().__init__(
            game_type,
            pyspiel.GameInfo(
                num_distinct_actions=n,
                max_chance_outcomes=n if self.points_order == "random" else 0,
                num_players=_NUM_PLAYERS,
                min_utility=min_utility,
                max_utility=max_utility,
                utility_sum=utility_sum,
                # One decision per round; the last round is played automatically.
                max_game_length=max(1, n - 1),
            ),
            params,
        )

    def new_initial_state(self) -> GoofspielState:
        return GoofspielState(self)

    deserialize_state = serialization.deserialize_state

    def make_py_observer(self, iig_obs_type=None, params=None) -> GoofspielObserver:
        return GoofspielObserver(self, iig_obs_type or pyspiel.IIGObservationType(
            perfect_recall=False), params)


class GoofspielState(CheckedActions, pyspiel.State):
    """Hands, prize cards, bids and points after some rounds."""

    def __init__(self, game: GoofspielGame):
        super().__init__(game)
        n = game.num_cards
        self._num_cards = n
        self._points_order = game.points_order
        self._point_order: list[int] = game.point_order or []  # empty: chance deals
        self._returns_type = game.returns_type
        self.hands = [[True] * n, [True] * n]  # hands[p][c]: player p still holds c + 1
        self.points = [0, 0]
        self.point_card_sequence: list[int] = []  # prize indices, in the order dealt
        self.bids: list[tuple[int, int]] = []  # (bid of player 0, bid of player 1) per round
        self.win_sequence: list[int] = []  # winner per round, -1 for a tie
        self._game_over = False
        self._chance_pending = False
        if self._points_order == "random":
            self._chance_pending = True
        else:
            self._deal(self._point_order[0])

    # -- pyspiel API ------------------------------------------------------------------

    def current_player(self) -> int:
        if self._game_over:
            return pyspiel.PlayerId.TERMINAL
        if self._chance_pending:
            return pyspiel.PlayerId.CHANCE
        return pyspiel.PlayerId.SIMULTANEOUS

    def _legal_actions(self, player: int) -> list[int]:
        if player == pyspiel.PlayerId.SIMULTANEOUS:
            return simultaneous.flat_joint_actions(self)
        return [c for c, held in enumerate(self.hands[player]) if held]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        remaining = self.remaining_point_cards()
        return [(c, 1.0 / len(remaining)) for c in remaining]

    def _apply_action(self, action: int) -> None:
        if self._game_over:
            raise IllegalActionError("apply_action on a terminal Goofspiel state")
        if self._chance_pending:
            card = int(action)
            if not 0 <= card < self._num_cards or card in self.point_card_sequence:
                raise IllegalActionError(f"chance outcome {card} is not a prize still to "
                                         f"deal: {self.remaining_point_cards()}")
            self._deal(card)
        else:  # A flat joint action.
            self._apply_actions(simultaneous.flat_to_joint(self, int(action)))

    def _apply_actions(self, actions: list[int]) -> None:
        if self._game_over or self._chance_pending:
            raise IllegalActionError("apply_actions on a Goofspiel state where nobody bids "
                                     f"(current player {self.current_player()})")
        if len(actions) != _NUM_PLAYERS:
            raise IllegalActionError(f"a joint action needs 2 bids, got {list(actions)}")
        bids = int(actions[0]), int(actions[1])
        for p, bid in enumerate(bids):
            if not 0 <= bid < self._num_cards or not self.hands[p][bid]:
                raise IllegalActionError(f"player {p} cannot bid action {bid} (card "
                                         f"{bid + 1}): cards held are {_cards(self.hands[p])}")
        self._play_round(*bids)
        turn = len(self.bids)
        if turn < self._num_cards:
            self._deal_next()
        if turn == self._num_cards - 1:
            # Nobody has a choice in the last round: play it now (as OpenSpiel does).
            if self._chance_pending:
                self._deal(self.remaining_point_cards()[0])
            self._play_round(self._legal_actions(0)[0], self._legal_actions(1)[0])
        if len(self.bids) == self._num_cards:
            self._game_over = True

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"Deal {action + 1}"
        if player == pyspiel.PlayerId.SIMULTANEOUS:
            return simultaneous.flat_joint_action_to_string(self, action)
        return f"[P{player}]Bid: {action + 1}"

    def is_terminal(self) -> bool:
        return self._game_over

    def returns(self) -> list[float]:
        if not self._game_over:
            return [0.0, 0.0]
        p0, p1 = self.points
        if self._returns_type == "win_loss":
            sign = (p0 > p1) - (p0 < p1)
            return [float(sign), float(-sign)]
        if self._returns_type == "point_difference":
            return [(p0 - p1) / 2, (p1 - p0) / 2]
        return [float(p0), float(p1)]

    def __str__(self) -> str:
        lines = [f"P{p} hand: {_cards(self.hands[p])}" for p in range(_NUM_PLAYERS)]
        lines.append("Bids: " + " ".join(f"{a + 1}-{b + 1}" for a, b in self.bids))
        lines.append("Point card sequence: "
                     + " ".join(str(c + 1) for c in self.point_card_sequence))
        lines.append(f"Points: {self.points[0]} {self.points[1]}")
        return "\n".join(lines)

    # -- Goofspiel ----------------------------------------------------------------------

    @property
    def point_card(self) -> int:
        """Index of the prize on the table (value - 1), -1 while chance is to deal it."""
        return -1 if self._chance_pending or not self.point_card_sequence \
            else self.point_card_sequence[-1]

    def remaining_point_cards(self) -> list[int]:
        """Prize indices not dealt yet (the prize on the table is dealt)."""
        dealt = set(self.point_card_sequence)
        return [c for c in range(self._num_cards) if c not in dealt]

    def transposition_key(self) -> tuple:
        """A hashable key; states with equal keys have identical futures.

        A terminal state's future is its returns. Otherwise the future depends on the prize
        on the table (or that chance deals next), the prizes still to come, both hands and
        the score as far as the returns can still see it: the difference for
        point_difference, both totals for total_points, and for win_loss the difference
        clipped to one more than the points still in play, beyond which the winner is
        decided. The key describes the future of play, not what the players know: with
        ``imp_info=true`` equal keys still mean equal futures, not equal information.
        The key keeps exactly the state a future can depend on; positions that agree only
        by symmetry (e.g. the same prizes shifted by one when both hands are equal) keep
        different keys.
        """
        if self._game_over:
            return ("terminal",) + tuple(self.returns())
        remaining = self.remaining_point_cards()
        in_play = sum(c + 1 for c in remaining) + (self.point_card + 1)
        p0, p1 = self.points
        if self._returns_type == "total_points":
            score: tuple = (p0, p1)
        elif self._returns_type == "point_difference":
            score = (p0 - p1,)
        else:
            score = (min(max(p0 - p1, -in_play - 1), in_play + 1),)
        return (self.point_card, _mask(remaining), _mask_of(self.hands[0]),
                _mask_of(self.hands[1])) + score

    def _deal(self, card: int) -> None:
        self.point_card_sequence.append(card)
        self._chance_pending = False

    def _deal_next(self) -> None:
        if self._points_order == "random":
            self._chance_pending = True
        else:
            self._deal(self._point_order[len(self.point_card_sequence)])

    def _play_round(self, bid0: int, bid1: int) -> None:
        prize = self.point_card_sequence[-1] + 1
        winner = 0 if bid0 > bid1 else 1 if bid1 > bid0 else _NO_WINNER
        if winner != _NO_WINNER:
            self.points[winner] += prize
        self.win_sequence.append(winner)
        self.bids.append((bid0, bid1))
        self.hands[0][bid0] = False
        self.hands[1][bid1] = False


def _cards(held: list[bool]) -> str:
    return " ".join(str(c + 1) for c, h in enumerate(held) if h)


def _mask(cards: list[int]) -> int:
    return sum(1 << c for c in cards)


def _mask_of(held: list[bool]) -> int:
    return sum(1 << c for c, h in enumerate(held) if h)


class GoofspielObserver:
    """Observer (PyObserver interface) revealing exactly what the observing player knows.

    Public to both: prizes (the current one and those left, or the whole sequence with
    perfect recall), points and who won each round. With ``imp_info=false`` the bids are
    public too (both hands, and with perfect recall both bid sequences); with
    ``imp_info=true`` only the observing player's hand and own bids are shown.
    """

    def __init__(self, game: GoofspielGame, iig_obs_type, params):
        if params:
            raise ValueError(f"Observation parameters not supported; passed {params}")
        n = game.num_cards
        public = iig_obs_type.public_info
        recall = iig_obs_type.perfect_recall
        private = iig_obs_type.private_info
        if not game.imp_info:  # Bids are public: both hands and bid sequences, or none.
            self._bidders = "all" if public else "none"
        else:
            self._bidders = {pyspiel.PrivateInfoType.SINGLE_PLAYER: "self",
                             pyspiel.PrivateInfoType.ALL_PLAYERS: "all"}.get(private, "none")
        max_points = n * (n + 1) // 2 + 1
        pieces: list[tuple[str, tuple[int, ...]]] = []
        if public:
            if recall:
                pieces.append(("point_card_sequence", (n, n)))
                pieces.append(("win_sequence", (n, _NUM_PLAYERS)))
            else:
                pieces.append(("current_point_card", (n,)))
                pieces.append(("remaining_point_cards", (n,)))
            pieces.append(("point_totals", (_NUM_PLAYERS, max_points)))
        num_bidders = {"all": _NUM_PLAYERS, "self": 1, "none": 0}[self._bidders]
        if num_bidders:
            pieces.append(("hands", (num_bidders, n)))
            if recall:
                pieces.append(("bid_sequences", (num_bidders, n, n)))
        self._public = public
        self._recall = recall
        self.tensor, self.dict = tensor_with_views(pieces)

    def _observed_players(self, player: int) -> list[int]:
        return {"all": [0, 1], "self": [player], "none": []}[self._bidders]

    def set_from(self, state: GoofspielState, player: int) -> None:
        self.tensor.fill(0)
        d = self.dict
        if "point_card_sequence" in d:
            for t, c in enumerate(state.point_card_sequence):
                d["point_card_sequence"][t, c] = 1
            for t, w in enumerate(state.win_sequence):
                if w != _NO_WINNER:
                    d["win_sequence"][t, w] = 1
        if "current_point_card" in d:
            if state.point_card >= 0:
                d["current_point_card"][state.point_card] = 1
            for c in state.remaining_point_cards():
                d["remaining_point_cards"][c] = 1
        if "point_totals" in d:
            for p in range(_NUM_PLAYERS):
                d["point_totals"][p, state.points[p]] = 1
        for row, p in enumerate(self._observed_players(player)):
            d["hands"][row] = state.hands[p]
            if "bid_sequences" in d:
                for t, bids in enumerate(state.bids):
                    d["bid_sequences"][row, t, bids[p]] = 1

    def string_from(self, state: GoofspielState, player: int) -> str:
        lines = []
        if self._public:
            if self._recall:
                lines.append("Point card sequence: "
                             + " ".join(str(c + 1) for c in state.point_card_sequence))
                lines.append("Win sequence: " + " ".join(str(w) for w in state.win_sequence))
            else:
                current = state.point_card + 1 if state.point_card >= 0 else "none"
                lines.append(f"Current point card: {current}")
                lines.append("Remaining point cards: "
                             + " ".join(str(c + 1) for c in state.remaining_point_cards()))
            lines.append(f"Points: {state.points[0]} {state.points[1]}")
        for p in self._observed_players(player):
            lines.append(f"P{p} hand: {_cards(state.hands[p])}")
            if self._recall:
                lines.append(f"P{p} bids: " + " ".join(str(b[p] + 1) for b in state.bids))
        if self._recall:
            lines.append(f"Terminal: {state.is_terminal()}")
        return "\n".join(lines)


pyspiel.register_game(_GAME_TYPE, GoofspielGame)
