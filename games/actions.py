"""Refusing illegal actions in our Python games with a message that names the legal ones.

pyspiel's ``State.apply_action`` checks ``action != kInvalidAction`` (-1) in C++ before a
Python game's ``_apply_action`` runs, so ``apply_action(-1)`` on a Python game used to fail
with OpenSpiel's ``spiel.cc:446 action_id != kInvalidAction``. :class:`CheckedActions`
(a mixin before ``pyspiel.State``) refuses negative and non-integer actions first, for
callers in Python; the games' own ``_apply_action(s)`` refuse the other illegal actions
with :class:`IllegalActionError`. C++ callers (e.g. OpenSpiel's ``convert_to_turn_based``
wrapper) still reach pyspiel's check first.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from smmcts_spiel import checks


class IllegalActionError(pyspiel.SpielError, ValueError):
    """An illegal action or joint action; a ``pyspiel.SpielError`` (as OpenSpiel's C++
    games raise) and a ``ValueError`` (as the rest of this package raises)."""


def legal_text(state: pyspiel.State) -> str:
    """The legal actions at ``state``, for a message."""
    if state.is_terminal():
        return "none: the game is over (terminal state)"
    if state.is_chance_node():
        return f"the chance outcomes {[a for a, _ in state.chance_outcomes()]}"
    if state.is_simultaneous_node():
        per_player = "; ".join(f"player {p}: {state.legal_actions(p)}"
                               for p in range(state.num_players()))
        return (f"{per_player} (with apply_actions; apply_action takes a flat joint action "
                f"0..{len(state.legal_actions()) - 1})")
    return f"{state.legal_actions()} for player {state.current_player()}"


def _is_action(action) -> bool:
    integer = isinstance(action, (int, np.integer)) and not isinstance(action, bool)
    return integer and bool(0 <= action < 2**63)  # pyspiel's Action is an int64


class CheckedActions:
    """``apply_action`` / ``apply_actions`` that refuse a negative, non-integer or too large
    (not an int64) action with :class:`IllegalActionError` (naming it and the legal actions)
    before pyspiel sees it."""

    def apply_action(self, action) -> None:
        if not _is_action(action):
            raise IllegalActionError(f"action {checks.shown(action)!r} is not legal; legal: "
                                     f"{legal_text(self)}")
        super().apply_action(action)  # type: ignore[misc]

    def apply_actions(self, actions) -> None:
        if not all(_is_action(a) for a in actions):
            shown = [checks.shown(a) for a in actions]
            raise IllegalActionError(f"joint action {shown!r} is not legal; legal: "
                                     f"{legal_text(self)}")
        super().apply_actions(actions)  # type: ignore[misc]
