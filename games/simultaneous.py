"""Flat joint actions for Python simultaneous-move games, as OpenSpiel's C++ games have.

At a simultaneous node ``state.legal_actions()`` (no player) asks a Python game for
``_legal_actions(PlayerId.SIMULTANEOUS)`` and ``state.apply_action(a)`` passes a flat joint
action to ``_apply_action``. OpenSpiel's C++ ``SimMoveState`` answers these itself; for a
Python game these helpers do it with the same encoding: the flat action is a mixed-radix
number over the players' legal-action lists, player 0 the least significant digit.

pyspiel records a flat joint action applied with ``apply_action`` as one history entry
(player ``SIMULTANEOUS``); ``apply_actions`` records one entry per player, as for C++ games
(:func:`per_player_history` rewrites a state's history that way).
"""

from __future__ import annotations

import math

import pyspiel

from smmcts_spiel.games.actions import IllegalActionError


def flat_joint_actions(state: pyspiel.State) -> list[int]:
    """All flat joint actions at a simultaneous node."""
    return list(range(math.prod(len(state.legal_actions(p))
                                for p in range(state.num_players()))))


def flat_to_joint(state: pyspiel.State, flat_action: int) -> list[int]:
    """The per-player actions of a flat joint action (OpenSpiel's encoding)."""
    if flat_action < 0:
        raise IllegalActionError(f"flat joint action {flat_action} is negative")
    actions = []
    for p in range(state.num_players()):
        legal = state.legal_actions(p)
        flat_action, index = divmod(flat_action, len(legal))
        actions.append(legal[index])
    if flat_action:
        raise IllegalActionError(f"flat joint action out of range at {state}")
    return actions



def flat_joint_action_to_string(state: pyspiel.State, flat_action: int) -> str:
    """E.g. ``"[[P0]Bid: 1, [P1]Bid: 2]"``, like OpenSpiel's ``FlatJointActionToString``."""
    joint = flat_to_joint(state, flat_action)
    return "[" + ", ".join(state.action_to_string(p, a) for p, a in enumerate(joint)) + "]"


def per_player_history(state: pyspiel.State) -> pyspiel.State:
    """A copy of ``state`` whose history has one entry per player's move: a Python game's
    state given flat joint actions (one history entry each) replayed with
    ``apply_actions``, so that searches which key states by history find it."""
    entries = state.full_history()
    if all(entry.player != pyspiel.PlayerId.SIMULTANEOUS for entry in entries):
        return state.clone()
    copy = state.get_game().new_initial_state()
    for entry in entries:
        if entry.player == pyspiel.PlayerId.SIMULTANEOUS:
            copy.apply_actions(flat_to_joint(copy, entry.action))
        else:
            copy.apply_action(entry.action)
    return copy
