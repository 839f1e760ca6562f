"""Transposition keys: one entry for every state of a game with the same future.

Transpositions (the same position reached by different histories, e.g. Goofspiel's
hands, prize cards and score; Oshi-Zumo's coins, wrestler and move number) are solved once
when the state has a ``transposition_key()`` method or the game is in
:data:`TRANSPOSITION_KEYS`. This is what makes Goofspiel with 6 cards solvable in seconds
where the sequence-form LP on the turn-based conversion cannot even build its matrices.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import pyspiel

#: ``key(state) -> hashable`` per game short name, for games whose states have no
#: ``transposition_key()`` method. Two states with the same key must have the same
#: subgame (same future and same player-1 returns for the same future play); the key
#: need not tell apart chance and decision nodes (the solver adds that).
TRANSPOSITION_KEYS: dict[str, Callable[[pyspiel.Game], Callable[[pyspiel.State], Hashable]]] = {}


def _goofspiel_key(game: pyspiel.Game) -> Callable[[pyspiel.State], Hashable]:
    """OpenSpiel's C++ goofspiel: hands, prize cards left, current prize, point difference.

    The public observation string (``imp_info=False``) shows both hands, the prize cards
    left, the current prize card and both players' points; the ``Win sequence`` line is
    history and is dropped. With zero-sum returns (``win_loss``, ``point_difference``)
    only the point difference matters for the future.
    """
    params = game.get_parameters()
    if params.get("imp_info", False):
        raise ValueError("goofspiel with imp_info=True hides the opponent's cards, so it is not a "
                         "game of perfect information between stages; load it with imp_info=False")

    def key(state: pyspiel.State) -> Hashable:
        current, remaining, hand0, hand1, _, points = state.observation_string(0).splitlines()
        p0, p1 = points[len("Points: "):].split()
        if state.is_chance_node():
            current = None
        return current, remaining, hand0, hand1, int(p0) - int(p1)

    return key


TRANSPOSITION_KEYS["goofspiel"] = _goofspiel_key


def _oshi_zumo_key(game: pyspiel.Game) -> Callable[[pyspiel.State], Hashable]:
    """OpenSpiel's C++ oshi_zumo: both players' coins, the wrestler's position, and the
    number of moves played (the game stops at ``horizon`` moves, and since both players may
    bid 0 a position can recur at any move number).

    The observation string is the whole position (``Coins: 8 9, Field: #....W..#``).
    """
    del game

    def key(state: pyspiel.State) -> Hashable:
        return state.observation_string(0), state.move_number()

    return key


TRANSPOSITION_KEYS["oshi_zumo"] = _oshi_zumo_key


def _markov_soccer_key(game: pyspiel.Game) -> Callable[[pyspiel.State], Hashable]:
    """OpenSpiel's C++ markov_soccer: the board (both players, the ball or who holds it:
    the state's string), the move number (the game stops at ``horizon``), and at a chance
    node the two actions it is about to resolve (the last two of the history).
    """
    del game

    def key(state: pyspiel.State) -> Hashable:
        if state.is_chance_node():
            return str(state), state.move_number(), tuple(state.history()[-2:])
        return str(state), state.move_number()

    return key


TRANSPOSITION_KEYS["markov_soccer"] = _markov_soccer_key


def transposition_key(game: pyspiel.Game) -> Callable[[pyspiel.State], Hashable] | None:
    """The transposition key the solver uses for ``game``'s states, or None.

    A ``transposition_key()`` method on the states wins; otherwise the
    :data:`TRANSPOSITION_KEYS` entry for the game's short name, if any.
    """
    state = game.new_initial_state()
    method = getattr(state, "transposition_key", None)
    if callable(method):
        return lambda s: s.transposition_key()
    factory = TRANSPOSITION_KEYS.get(game.get_type().short_name)
    return factory(game) if factory is not None else None


def solution_key(game: pyspiel.Game, use_transpositions: bool = True
                 ) -> Callable[[pyspiel.State], Hashable]:
    """The key :func:`~smmcts_spiel.exact.solver.solve` files a state of ``game`` under:
    whether it is a chance node (chance and decision nodes may share a transposition key),
    and its transposition key, or its history when the game has none (or
    ``use_transpositions`` is False)."""
    key = (transposition_key(game) if use_transpositions else None) or history_key
    return lambda s: (s.is_chance_node(), key(s))


def history_key(state: pyspiel.State) -> Hashable:
    """A state's history: the key of a game without transpositions."""
    return tuple(state.history())
