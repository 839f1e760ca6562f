"""Strategies of a simultaneous-move game as policies of its turn-based conversion.

OpenSpiel's evaluators (``best_response``, ``exploitability``) work on sequential games,
so a strategy of a simultaneous game goes through ``pyspiel.convert_to_turn_based``: each
simultaneous stage becomes player 1's turn followed by player 2's, who cannot tell player
1's action apart. :func:`paired_states` lines up the states of both games and
:func:`to_turn_based_tabular_policy` writes a strategy as a ``TabularPolicy`` there.
"""

from __future__ import annotations

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

from smmcts_spiel import checks


def turn_based_game(game: pyspiel.Game) -> pyspiel.Game:
    """The turn-based conversion of a simultaneous game; a sequential game itself."""
    if game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        return pyspiel.convert_to_turn_based(game)
    return game


def paired_states(game: pyspiel.Game):
    """``(turn_based_state, state)`` for every decision state of the turn-based conversion.

    ``state`` is the state of ``game`` the turn-based state stands for: the same history,
    with the simultaneous moves that the turn-based game spreads over several turns
    applied together once all are chosen.
    """
    tb_game = turn_based_game(game)
    # (turn-based state, state, the actions chosen so far at a simultaneous node)
    stack: list[tuple[pyspiel.State, pyspiel.State, tuple[int, ...]]] = [
        (tb_game.new_initial_state(), game.new_initial_state(), ())]
    while stack:
        tb, state, pending = stack.pop()
        if tb.is_terminal():
            continue
        if tb.is_chance_node():
            for a, _ in tb.chance_outcomes():
                stack.append((tb.child(a), state.child(a), ()))
            continue
        yield tb, state
        for a in tb.legal_actions():
            if not state.is_simultaneous_node():
                stack.append((tb.child(a), state.child(a), ()))
                continue
            joint = pending + (a,)
            tb_child = tb.child(a)
            if len(joint) == 1 and not state.legal_actions(1):
                joint += (0,)  # player 2 has no move here; the turn-based game skips them
            if len(joint) == 2:
                child = state.clone()
                child.apply_actions(list(joint))
                stack.append((tb_child, child, ()))
            else:
                stack.append((tb_child, state, joint))


def to_turn_based_tabular_policy(game: pyspiel.Game, strategy) -> policy_lib.TabularPolicy:
    """``strategy`` (answering for states of ``game``) as a TabularPolicy on the turn-based game.

    Raises ValueError when the strategy plays differently in two states that the
    turn-based game puts in one information set (a TabularPolicy cannot say that).
    """
    game = checks.load_game(game)
    tb_game = turn_based_game(game)
    pairs = list(paired_states(game))
    tabular = policy_lib.TabularPolicy(tb_game, states={tb.history_str(): tb for tb, _ in pairs})
    filled = np.zeros(len(tabular.action_probability_array), dtype=bool)
    for tb, state in pairs:
        player = tb.current_player()
        index = tabular.state_index(tb)
        actions = tb.legal_actions()
        probs = checks.check_distribution(strategy.action_probabilities(state, player), actions,
                                       state)
        row = np.zeros(tabular.action_probability_array.shape[1])
        row[actions] = probs
        if filled[index]:
            if not np.allclose(tabular.action_probability_array[index], row, rtol=0, atol=1e-12):
                raise ValueError(
                    "the strategy plays differently in two states that the turn-based game puts "
                    f"in one information set of player {player + 1}:\n{tb}\nA TabularPolicy "
                    "cannot represent it; use method='fast'")
        else:
            tabular.action_probability_array[index] = row
            filled[index] = True
    return tabular
