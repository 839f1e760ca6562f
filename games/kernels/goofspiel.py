"""Goofspiel as a numba game kernel: OpenSpiel's ``goofspiel`` and our ``smmcts_goofspiel``.

The state is a small int64 array (layout in the ``_HAND0``... constants); the rules are
those of OpenSpiel's C++ game (and :mod:`smmcts_spiel.games.goofspiel`): every round a
prize is dealt (by chance with ``points_order=random``; in the seeded fixed order of
``smmcts_goofspiel``'s ``points_order=shuffled``), both players bid a card at once,
the higher bid wins the prize, a tie discards it. The game lasts ``num_turns`` rounds (all
the cards by default, when the last round, where nobody has a choice, is played
automatically). Bidding card ``c`` is action ``c - 1``; chance outcome ``k`` deals prize
``k + 1``. ``egocentric`` changes only observations, so every value is covered.

Not covered (the generic engine plays): ``imp_info=True`` (imperfect information; the
information-set searches have :mod:`.goofspiel_information`), ``returns_type=total_points``
(general-sum: a tied round's prize goes to nobody), more than two players, more than
:data:`MAX_CARDS` cards (a hand is a bit mask), and ``num_turns = num_cards - 1`` or 0,
where OpenSpiel's game never reaches a terminal state.
"""

from __future__ import annotations

import numba
import numpy as np

from smmcts_spiel.games import goofspiel as goofspiel_game
from smmcts_spiel.games.kernels.base import CHANCE, DECISION, TERMINAL, Uncovered

SHORT_NAMES = ("goofspiel", "smmcts_goofspiel")
#: The leaf evaluator SMMCTSBot uses by default (the heuristic is not measured better yet).
DEFAULT_EVALUATOR = "random_rollout"
POINTS_ORDERS = ("random", "descending", "ascending")  # OpenSpiel's; smmcts_goofspiel's
_ALL_ORDERS = POINTS_ORDERS + (goofspiel_game.SHUFFLED,)  # shuffled: params hold the order
RETURNS_TYPES = ("win_loss", "point_difference", "total_points")
MAX_CARDS = 62  # hands and dealt prizes are bit masks in one int64

# State layout.
_HAND0, _HAND1, _POINTS0, _POINTS1, _PRIZE, _DEALT, _TURN, _OVER, _CHANCE_PENDING = range(9)
STATE_SIZE = 9
# Parameter layout.
_NUM_CARDS, _ORDER, _RETURNS, _NUM_TURNS, _SEQUENCE = range(5)  # _SEQUENCE: shuffled only
_RANDOM, _DESCENDING, _ASCENDING, _SHUFFLED = range(4)
_WIN_LOSS, _POINT_DIFFERENCE, _TOTAL_POINTS = range(3)


def parameters(game) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's (int, float) parameter arrays for ``game`` (raises :class:`Uncovered`)."""
    p = game.get_parameters()
    if p.get("imp_info", False):
        raise Uncovered("imp_info=True: a game of imperfect information")
    if p.get("returns_type", "win_loss") == "total_points":
        raise Uncovered("returns_type=total_points: general-sum (a tied round's prize goes "
                        "to nobody); use win_loss or point_difference")
    return rule_parameters(game)


def rule_parameters(game) -> tuple[np.ndarray, np.ndarray]:
    """The parameter arrays of ``game``'s rules, whatever the players observe (``imp_info``)
    and whatever the returns' sum; raises :class:`Uncovered`."""
    p = game.get_parameters()
    if p.get("players", 2) != 2:
        raise Uncovered(f"players={p['players']}: the kernel plays two players")
    n = p.get("num_cards", 13)
    if not 1 <= n <= MAX_CARDS:
        raise Uncovered(f"num_cards={n}: a hand is a bit mask of at most {MAX_CARDS} cards")
    turns = p.get("num_turns", -1)
    if turns == -1:
        turns = n
    if turns == n - 1 or turns < 1:
        raise Uncovered(f"num_turns={turns}: OpenSpiel's game with {n} cards never ends")
    order = p.get("points_order", "random")
    returns = p.get("returns_type", "win_loss")
    sequence = goofspiel_game.shuffled_order(n, p["points_seed"]) \
        if order == goofspiel_game.SHUFFLED else []
    return (np.array([n, _ALL_ORDERS.index(order), RETURNS_TYPES.index(returns), turns]
                     + sequence, np.int64), np.zeros(0))


def limits(params: np.ndarray) -> tuple[int, int, int]:
    """(most actions of a player, most chance outcomes, most nodes on a root-leaf path)."""
    n = int(params[_NUM_CARDS])
    return n, n, 2 * int(params[_NUM_TURNS]) + 1


def utility_range(params: np.ndarray, data: np.ndarray) -> tuple[float, float]:
    """Player 0's extreme returns (OpenSpiel rounds the point difference's minimum of an
    odd prize total towards 0: -7 for 5 cards, where the true minimum is -7.5)."""
    n = int(params[_NUM_CARDS])
    if params[_RETURNS] == _WIN_LOSS:
        return -1.0, 1.0
    if params[_RETURNS] == _POINT_DIFFERENCE:
        return -n * (n + 1) / 4, n * (n + 1) / 4
    return 0.0, n * (n + 1) / 2


@numba.njit(cache=True)
def _deal(state, card):
    state[_PRIZE] = card
    state[_DEALT] |= np.int64(1) << card
    state[_CHANCE_PENDING] = 0


@numba.njit(cache=True)
def _play_round(state, bid0, bid1):
    prize = state[_PRIZE] + 1
    if bid0 > bid1:
        state[_POINTS0] += prize
    elif bid1 > bid0:
        state[_POINTS1] += prize
    state[_HAND0] &= ~(np.int64(1) << bid0)
    state[_HAND1] &= ~(np.int64(1) << bid1)
    state[_TURN] += 1


@numba.njit(cache=True)
def _lowest_card(mask):
    c = 0
    while not (mask >> c) & 1:
        c += 1
    return c


@numba.njit(cache=True)
def initial_state(params):
    n = params[_NUM_CARDS]
    state = np.zeros(STATE_SIZE, np.int64)
    state[_HAND0] = (np.int64(1) << n) - 1
    state[_HAND1] = state[_HAND0]
    if params[_ORDER] == _RANDOM:
        state[_PRIZE] = -1
        state[_CHANCE_PENDING] = 1
    elif params[_ORDER] == _SHUFFLED:
        _deal(state, params[_SEQUENCE])
    else:
        _deal(state, 0 if params[_ORDER] == _ASCENDING else n - 1)
    return state


@numba.njit(cache=True)
def status(state, params, data):
    if state[_OVER]:
        return TERMINAL
    return CHANCE if state[_CHANCE_PENDING] else DECISION


@numba.njit(cache=True)
def legal_actions(state, params, data, player, out):
    if status(state, params, data) != DECISION:  # (cards may be left at the end)
        return 0
    hand = state[_HAND0 + player]
    k = 0
    for c in range(params[_NUM_CARDS]):
        if (hand >> c) & 1:
            out[k] = c
            k += 1
    return k


@numba.njit(cache=True)
def chance_outcomes(state, params, data, outcomes, probs):
    n = params[_NUM_CARDS]
    k = 0
    for c in range(n):
        if not (state[_DEALT] >> c) & 1:
            outcomes[k] = c
            k += 1
    for i in range(k):
        probs[i] = 1.0 / k
    return k


@numba.njit(cache=True)
def apply_chance(state, params, data, outcome):
    _deal(state, outcome)


@numba.njit(cache=True)
def apply_actions(state, params, data, action0, action1):
    n = params[_NUM_CARDS]
    _play_round(state, action0, action1)
    turns = params[_NUM_TURNS]
    turn = state[_TURN]
    if turn < turns:
        if params[_ORDER] == _RANDOM:
            state[_CHANCE_PENDING] = 1
        elif params[_ORDER] == _ASCENDING:
            _deal(state, state[_PRIZE] + 1)
        elif params[_ORDER] == _SHUFFLED:
            _deal(state, params[_SEQUENCE + turn])
        else:
            _deal(state, state[_PRIZE] - 1)
    if turn == n - 1:
        # Nobody has a choice in the last round: play it now (as OpenSpiel does).
        if state[_CHANCE_PENDING]:
            _deal(state, _lowest_card(~state[_DEALT]))
        _play_round(state, _lowest_card(state[_HAND0]), _lowest_card(state[_HAND1]))
    if state[_TURN] == turns:
        state[_OVER] = 1


@numba.njit(cache=True)
def returns(state, params, data):
    """Player 0's return (0 until the game ends)."""
    if not state[_OVER]:
        return 0.0
    p0 = state[_POINTS0]
    p1 = state[_POINTS1]
    kind = params[_RETURNS]
    if kind == _WIN_LOSS:
        return 1.0 if p0 > p1 else -1.0 if p1 > p0 else 0.0
    if kind == _POINT_DIFFERENCE:
        return (p0 - p1) / 2.0
    return float(p0)


@numba.njit(cache=True)
def rewards(state, params, data):
    """Player 0's reward: the return, paid at the end."""
    return returns(state, params, data)


@numba.njit(cache=True)
def _random_card(mask, n, u):
    """The floor(u * k)-th card (ascending) of the k cards in ``mask``."""
    k = 0
    for c in range(n):
        k += (mask >> c) & 1
    target = min(int(u * k), k - 1)
    for c in range(n):
        if (mask >> c) & 1:
            if target == 0:
                return c
            target -= 1
    return -1


@numba.njit(cache=True)
def rollout(state, params, data, rng):
    """Player 0's return after uniformly random play (and chance) from ``state``."""
    n = params[_NUM_CARDS]
    while not state[_OVER]:
        if state[_CHANCE_PENDING]:
            _deal(state, _random_card(~state[_DEALT] & ((np.int64(1) << n) - 1), n,
                                      rng.random()))
        else:
            a0 = _random_card(state[_HAND0], n, rng.random())
            a1 = _random_card(state[_HAND1], n, rng.random())
            apply_actions(state, params, data, a0, a1)
    return returns(state, params, data)


@numba.njit(cache=True)
def heuristic(state, params, data, rng):
    """Leaf value without a rollout: the score so far plus the prizes still to be played
    (their expected sum under a random order) shared by the hands' strength (each player's
    share of the remaining card sum), in player 0's units.

    A cheap game-aware evaluator for the kernel's evaluator slot; it is exact at terminals.
    """
    if state[_OVER]:
        return returns(state, params, data)
    n = params[_NUM_CARDS]
    dealt_now = state[_PRIZE] >= 0 and not state[_CHANCE_PENDING]
    to_deal = params[_NUM_TURNS] - state[_TURN] - (1 if dealt_now else 0)
    left = state[_PRIZE] + 1.0 if dealt_now else 0.0
    if params[_ORDER] == _RANDOM:
        undealt = 0
        total = 0
        for c in range(n):
            if not (state[_DEALT] >> c) & 1:
                undealt += 1
                total += c + 1
        if undealt > 0:
            left += total * to_deal / undealt
    elif params[_ORDER] == _SHUFFLED:
        for k in range(1, to_deal + 1):
            left += params[_SEQUENCE + state[_TURN] + k] + 1
    else:
        step = 1 if params[_ORDER] == _ASCENDING else -1
        for k in range(1, to_deal + 1):
            left += state[_PRIZE] + step * k + 1
    sum0 = 0
    sum1 = 0
    for c in range(n):
        if (state[_HAND0] >> c) & 1:
            sum0 += c + 1
        if (state[_HAND1] >> c) & 1:
            sum1 += c + 1
    share0 = sum0 / (sum0 + sum1) if sum0 + sum1 > 0 else 0.5
    e0 = state[_POINTS0] + share0 * left
    e1 = state[_POINTS1] + (1.0 - share0) * left
    kind = params[_RETURNS]
    if kind == _WIN_LOSS:
        total = n * (n + 1) / 2.0
        return max(-1.0, min(1.0, 2.0 * (e0 - e1) / total))
    if kind == _POINT_DIFFERENCE:
        return (e0 - e1) / 2.0
    return e0
