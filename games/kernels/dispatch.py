"""The built-in kernels' functions behind one compiled call each, chosen by the kernel's code.

``status(code, state, params, data)`` and the like: one branch per built-in kernel module
(its index in :data:`MODULES` is its code), for compiled code that serves every built-in
game with one function (the kernel checks, tests). The kernel engine does not go through it:
it compiles per kernel module (:func:`smmcts_spiel.search.kernel_engine.compiled_for`), so a
search compiles only the kernel it plays. Adding a kernel: its module goes at the end of
:data:`MODULES` and gets one branch in each function below. A user's kernel does not go
here: see :func:`smmcts_spiel.games.kernels.register_kernel`.

numba does not notice an edit to a kernel module in these cached callers: after editing
one, delete the ``__pycache__/*.nbi`` / ``*.nbc`` files of ``games/kernels``.
"""

from __future__ import annotations

import numba

from smmcts_spiel.games.kernels import (
    blotto,
    capture_the_flag,
    explicit_tree,
    goofspiel,
    laser_tag,
    markov_soccer,
    normal_form,
    oshi_zumo,
    pursuit_evasion,
    tron,
)

MODULES = (goofspiel, oshi_zumo, explicit_tree, blotto, normal_form, markov_soccer,
           capture_the_flag, laser_tag, pursuit_evasion, tron)
(GOOFSPIEL, OSHI_ZUMO, EXPLICIT_TREE, BLOTTO, NORMAL_FORM, MARKOV_SOCCER, CAPTURE_THE_FLAG,
 LASER_TAG, PURSUIT_EVASION, TRON) = range(len(MODULES))


@numba.njit(cache=True)
def status(code, state, params, data):
    if code == GOOFSPIEL:
        return goofspiel.status(state, params, data)
    if code == OSHI_ZUMO:
        return oshi_zumo.status(state, params, data)
    if code == EXPLICIT_TREE:
        return explicit_tree.status(state, params, data)
    if code == BLOTTO:
        return blotto.status(state, params, data)
    if code == NORMAL_FORM:
        return normal_form.status(state, params, data)
    if code == MARKOV_SOCCER:
        return markov_soccer.status(state, params, data)
    if code == CAPTURE_THE_FLAG:
        return capture_the_flag.status(state, params, data)
    if code == LASER_TAG:
        return laser_tag.status(state, params, data)
    if code == PURSUIT_EVASION:
        return pursuit_evasion.status(state, params, data)
    return tron.status(state, params, data)


@numba.njit(cache=True)
def legal_actions(code, state, params, data, player, out):
    if code == GOOFSPIEL:
        return goofspiel.legal_actions(state, params, data, player, out)
    if code == OSHI_ZUMO:
        return oshi_zumo.legal_actions(state, params, data, player, out)
    if code == EXPLICIT_TREE:
        return explicit_tree.legal_actions(state, params, data, player, out)
    if code == BLOTTO:
        return blotto.legal_actions(state, params, data, player, out)
    if code == NORMAL_FORM:
        return normal_form.legal_actions(state, params, data, player, out)
    if code == MARKOV_SOCCER:
        return markov_soccer.legal_actions(state, params, data, player, out)
    if code == CAPTURE_THE_FLAG:
        return capture_the_flag.legal_actions(state, params, data, player, out)
    if code == LASER_TAG:
        return laser_tag.legal_actions(state, params, data, player, out)
    if code == PURSUIT_EVASION:
        return pursuit_evasion.legal_actions(state, params, data, player, out)
    return tron.legal_actions(state, params, data, player, out)


@numba.njit(cache=True)
def chance_outcomes(code, state, params, data, outcomes, probs):
    if code == GOOFSPIEL:
        return goofspiel.chance_outcomes(state, params, data, outcomes, probs)
    if code == OSHI_ZUMO:
        return oshi_zumo.chance_outcomes(state, params, data, outcomes, probs)
    if code == EXPLICIT_TREE:
        return explicit_tree.chance_outcomes(state, params, data, outcomes, probs)
    if code == BLOTTO:
        return blotto.chance_outcomes(state, params, data, outcomes, probs)
    if code == NORMAL_FORM:
        return normal_form.chance_outcomes(state, params, data, outcomes, probs)
    if code == MARKOV_SOCCER:
        return markov_soccer.chance_outcomes(state, params, data, outcomes, probs)
    if code == CAPTURE_THE_FLAG:
        return capture_the_flag.chance_outcomes(state, params, data, outcomes, probs)
    if code == LASER_TAG:
        return laser_tag.chance_outcomes(state, params, data, outcomes, probs)
    if code == PURSUIT_EVASION:
        return pursuit_evasion.chance_outcomes(state, params, data, outcomes, probs)
    return tron.chance_outcomes(state, params, data, outcomes, probs)


@numba.njit(cache=True)
def apply_actions(code, state, params, data, action0, action1):
    if code == GOOFSPIEL:
        goofspiel.apply_actions(state, params, data, action0, action1)
    elif code == OSHI_ZUMO:
        oshi_zumo.apply_actions(state, params, data, action0, action1)
    elif code == EXPLICIT_TREE:
        explicit_tree.apply_actions(state, params, data, action0, action1)
    elif code == BLOTTO:
        blotto.apply_actions(state, params, data, action0, action1)
    elif code == NORMAL_FORM:
        normal_form.apply_actions(state, params, data, action0, action1)
    elif code == MARKOV_SOCCER:
        markov_soccer.apply_actions(state, params, data, action0, action1)
    elif code == CAPTURE_THE_FLAG:
        capture_the_flag.apply_actions(state, params, data, action0, action1)
    elif code == LASER_TAG:
        laser_tag.apply_actions(state, params, data, action0, action1)
    elif code == PURSUIT_EVASION:
        pursuit_evasion.apply_actions(state, params, data, action0, action1)
    else:
        tron.apply_actions(state, params, data, action0, action1)


@numba.njit(cache=True)
def apply_chance(code, state, params, data, outcome):
    if code == GOOFSPIEL:
        goofspiel.apply_chance(state, params, data, outcome)
    elif code == OSHI_ZUMO:
        oshi_zumo.apply_chance(state, params, data, outcome)
    elif code == EXPLICIT_TREE:
        explicit_tree.apply_chance(state, params, data, outcome)
    elif code == BLOTTO:
        blotto.apply_chance(state, params, data, outcome)
    elif code == NORMAL_FORM:
        normal_form.apply_chance(state, params, data, outcome)
    elif code == MARKOV_SOCCER:
        markov_soccer.apply_chance(state, params, data, outcome)
    elif code == CAPTURE_THE_FLAG:
        capture_the_flag.apply_chance(state, params, data, outcome)
    elif code == LASER_TAG:
        laser_tag.apply_chance(state, params, data, outcome)
    elif code == PURSUIT_EVASION:
        pursuit_evasion.apply_chance(state, params, data, outcome)
    else:
        tron.apply_chance(state, params, data, outcome)


@numba.njit(cache=True)
def rewards(code, state, params, data):
    if code == GOOFSPIEL:
        return goofspiel.rewards(state, params, data)
    if code == OSHI_ZUMO:
        return oshi_zumo.rewards(state, params, data)
    if code == EXPLICIT_TREE:
        return explicit_tree.rewards(state, params, data)
    if code == BLOTTO:
        return blotto.rewards(state, params, data)
    if code == NORMAL_FORM:
        return normal_form.rewards(state, params, data)
    if code == MARKOV_SOCCER:
        return markov_soccer.rewards(state, params, data)
    if code == CAPTURE_THE_FLAG:
        return capture_the_flag.rewards(state, params, data)
    if code == LASER_TAG:
        return laser_tag.rewards(state, params, data)
    if code == PURSUIT_EVASION:
        return pursuit_evasion.rewards(state, params, data)
    return tron.rewards(state, params, data)


@numba.njit(cache=True)
def returns(code, state, params, data):
    if code == GOOFSPIEL:
        return goofspiel.returns(state, params, data)
    if code == OSHI_ZUMO:
        return oshi_zumo.returns(state, params, data)
    if code == EXPLICIT_TREE:
        return explicit_tree.returns(state, params, data)
    if code == BLOTTO:
        return blotto.returns(state, params, data)
    if code == NORMAL_FORM:
        return normal_form.returns(state, params, data)
    if code == MARKOV_SOCCER:
        return markov_soccer.returns(state, params, data)
    if code == CAPTURE_THE_FLAG:
        return capture_the_flag.returns(state, params, data)
    if code == LASER_TAG:
        return laser_tag.returns(state, params, data)
    if code == PURSUIT_EVASION:
        return pursuit_evasion.returns(state, params, data)
    return tron.returns(state, params, data)


@numba.njit(cache=True)
def evaluate(code, evaluator, state, params, data, rng):
    """Player 0's value of a leaf by the evaluator ``evaluator`` (consumes ``state``): 0 is
    the random rollout, 1 the heuristic (the rollout where a kernel has none)."""
    if code == GOOFSPIEL:
        if evaluator == 0:
            return goofspiel.rollout(state, params, data, rng)
        return goofspiel.heuristic(state, params, data, rng)
    if code == OSHI_ZUMO:
        if evaluator == 0:
            return oshi_zumo.rollout(state, params, data, rng)
        return oshi_zumo.heuristic(state, params, data, rng)
    if code == EXPLICIT_TREE:
        return explicit_tree.rollout(state, params, data, rng)
    if code == BLOTTO:
        return blotto.rollout(state, params, data, rng)
    if code == NORMAL_FORM:
        return normal_form.rollout(state, params, data, rng)
    if code == MARKOV_SOCCER:
        return markov_soccer.rollout(state, params, data, rng)
    if code == CAPTURE_THE_FLAG:
        return capture_the_flag.rollout(state, params, data, rng)
    if code == LASER_TAG:
        return laser_tag.rollout(state, params, data, rng)
    if code == PURSUIT_EVASION:
        if evaluator == 0:
            return pursuit_evasion.rollout(state, params, data, rng)
        return pursuit_evasion.heuristic(state, params, data, rng)
    if evaluator == 0:
        return tron.rollout(state, params, data, rng)
    return tron.heuristic(state, params, data, rng)
