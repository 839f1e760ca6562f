"""Bounds on a simultaneous-move game's values from its two serializations.

Letting one player move first at every stage and the other answer knowing that move turns
the game into one of perfect information, solved by alpha-beta search. Answering with
knowledge helps, so the serialization where player 1 moves first is worth at most the
game to player 1 (a lower bound on its value) and the one where player 2 moves first at
least the game (an upper bound): Bošanský et al., AIJ 2016, Section 4.2, Lemmas 1 and 2.
Where both bounds meet, a pure equilibrium exists and the subgame needs no stage LP.

Beyond the paper, the searches share what the rest of the solve knows: ``bounds`` maps a
state key to ``[lo, hi]``, bounds on the state's true value (exact when they meet). A
search stops at a state whose value is known, starts its own best value at ``lo`` and
caps its window at ``hi``, and writes back every bound it proves. Replacing a subgame's
serialized value by a tighter bound on its true value keeps every result a valid bound
(a max-min of lower bounds is a lower bound), so the searches only get sharper as the
solve goes on. Each search also keeps a transposition table of its own: an upper bound
on the search's value (from a fail-low) and the best move found, tried first next time
and used by the double oracle as its first restricted action.

Values are player 1's (pyspiel player 0's) utility.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable

import pyspiel

from smmcts_spiel.exact.stages import legal_actions

#: Stands for the action of a player who does not move at a sequential decision node.
NO_ACTION = -1


def decision_actions(state: pyspiel.State) -> tuple[list[int], list[int]]:
    """Rows (player 1's actions) and columns (player 2's) of a decision state's stage;
    ``[NO_ACTION]`` for a player who does not move (a 1 x n or m x 1 stage)."""
    return (legal_actions(state, 0) or [NO_ACTION],
            legal_actions(state, 1) or [NO_ACTION])


def joint_child(state: pyspiel.State, row: int, col: int) -> pyspiel.State:
    """The state after the joint action ``(row, col)`` of :func:`decision_actions`."""
    child = state.clone()
    if child.is_simultaneous_node():
        child.apply_actions([row, col])
    else:
        child.apply_action(row if child.current_player() == 0 else col)
    return child


def terminal_value(state: pyspiel.State, utility_range: tuple[float, float]) -> float:
    """Player 1's return at a terminal ``state``, checked against the game's declared
    utility range: the searches start from that range, so a return outside it would make
    their bounds wrong (ValueError instead)."""
    r = float(state.returns()[0])
    if not utility_range[0] <= r <= utility_range[1]:
        raise ValueError(
            f"a terminal state returns {r:g} to player 1, outside the utility range "
            f"[{utility_range[0]:g}, {utility_range[1]:g}] the game declares (min_utility, "
            f"max_utility); the pruning solvers need a true range: use method='bi'")
    return r


class SerializedBounds:
    """Alpha-beta search of both serializations, sharing ``bounds`` with the solve.

    ``lower(state)`` is at most the value of ``state`` (player 1 moves first at every
    stage), ``upper(state)`` at least (player 2 first); both also tighten
    ``bounds[key(state)]``. ``nodes`` counts the states the searches expanded.
    """

    def __init__(self, key: Callable[[pyspiel.State], Hashable], bounds: dict[Hashable, list],
                 tolerance: float, utility_range: tuple[float, float]):
        self.key = key
        self.bounds = bounds
        self.tolerance = tolerance
        self.utility_range = utility_range
        # Per serialization (first mover 0 or 1), in the first mover's utility: key ->
        # [an upper bound on the search's value, the first mover's best move or None].
        self.tables: tuple[dict, dict] = ({}, {})
        self.nodes = 0

    def lower(self, state: pyspiel.State) -> float:
        """A lower bound on player 1's value of ``state``: player 1 moves first."""
        return self.search(state, 0, -math.inf, math.inf)

    def upper(self, state: pyspiel.State) -> float:
        """An upper bound on player 1's value of ``state``: player 2 moves first."""
        return -self.search(state, 1, -math.inf, math.inf)

    def best_move(self, state_key: Hashable, first: int) -> int | None:
        """``first``'s best move at the state found by ``first``'s serialized search."""
        entry = self.tables[first].get(state_key)
        return None if entry is None else entry[1]

    def search(self, state: pyspiel.State, first: int, alpha: float, beta: float) -> float:
        """Fail-soft alpha-beta on the serialization where ``first`` moves first, in
        ``first``'s utility (player 1's, or its negation for player 2).

        A result above ``alpha`` is a lower bound on ``first``'s value of ``state``; a
        result at most ``alpha`` only says that the search found nothing better.
        """
        sign = 1.0 if first == 0 else -1.0
        if state.is_terminal():
            return sign * terminal_value(state, self.utility_range)
        k = self.key(state)
        known = self.bounds.get(k)
        if known is None:
            lo, hi = self.utility_range
            known = self.bounds[k] = [lo, hi]
        lo, hi = (known[0], known[1]) if first == 0 else (-known[1], -known[0])
        if hi - lo <= self.tolerance or lo >= beta:
            return lo
        if hi <= alpha:
            return hi
        table = self.tables[first]
        entry = table.get(k)
        if entry is not None and entry[0] <= alpha:
            return entry[0]
        self.nodes += 1
        start_alpha = alpha
        beta = min(beta, hi)
        if state.is_chance_node():
            best, move = self._chance(state, first, max(alpha, lo), beta, sign), None
        else:
            best, move = self._decision(state, first, max(alpha, lo), beta, lo,
                                        None if entry is None else entry[1])
        if best < beta:
            table[k] = [best, move]
        elif entry is not None and move is not None:
            entry[1] = move
        elif move is not None:
            table[k] = [math.inf, move]
        if best > start_alpha:  # a proved lower bound on first's value
            if first == 0:
                known[0] = max(known[0], min(best, known[1]))
            else:
                known[1] = min(known[1], max(-best, known[0]))
        return best

    def _decision(self, state: pyspiel.State, first: int, alpha: float, beta: float,
                  floor: float, hint: int | None) -> tuple[float, int | None]:
        rows, cols = decision_actions(state)
        own, other = (rows, cols) if first == 0 else (cols, rows)
        if hint is not None and hint in own and own[0] != hint:
            own = [hint] + [a for a in own if a != hint]
        best, best_move = floor, None
        for a in own:
            bar = max(alpha, best)
            reply = math.inf
            for b in other:
                child = joint_child(state, a, b) if first == 0 else joint_child(state, b, a)
                w = self.search(child, first, bar, min(beta, reply))
                if w < reply:
                    reply = w
                    if reply <= bar:
                        break
            if reply > best or best_move is None and reply >= best:
                best, best_move = max(best, reply), a
            if best >= beta:
                break
        return best, best_move

    def _chance(self, state: pyspiel.State, first: int, alpha: float, beta: float,
                sign: float) -> float:
        lowest, highest = self.utility_range
        lowest, highest = (lowest, highest) if first == 0 else (-highest, -lowest)
        outcomes = state.chance_outcomes()
        rest = 1.0
        total = 0.0
        for action, p in outcomes:
            rest -= p
            rest = max(rest, 0.0)
            # The window this outcome needs, the others unknown within the utility range.
            a = (alpha - total - rest * highest) / p
            b = (beta - total - rest * lowest) / p
            w = self.search(state.child(action), first, a, b)
            total += p * w
            # A cut returns a bound at the window's edge or beyond it: rounding in the sum
            # may put it an ulp inside, where the caller would take it for a value.
            if w <= a:
                return min(total + rest * highest, alpha)
            if w >= b:
                return max(total + rest * lowest, beta)
        return total
