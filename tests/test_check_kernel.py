"""check_kernel refuses wrong kernels: each test copies a built-in kernel module, breaks one
thing, and checks that check_kernel names the fault (the built-in kernels themselves pass,
tests/test_game_kernels.py)."""

import types

import numba
import numpy as np
import pyspiel
import pytest

from smmcts_spiel.games import kernels
from smmcts_spiel.games.kernels import blotto, oshi_zumo

OSHI_ZUMO = "oshi_zumo(coins=4,size=1,horizon=3)"


def copy_of(module: types.ModuleType, **replaced) -> types.ModuleType:
    """A user kernel module with ``module``'s functions and constants, some ``replaced``."""
    copy = types.ModuleType(f"copy_of_{module.__name__.rsplit('.', 1)[-1]}")
    for name, value in vars(module).items():
        if not name.startswith("__"):
            setattr(copy, name, value)
    for name, value in replaced.items():
        setattr(copy, name, value)
    return copy


def replay(game: pyspiel.Game, history) -> pyspiel.State:
    """The pyspiel state a mismatch's history reaches."""
    state = game.new_initial_state()
    k = 0
    while k < len(history):
        if state.is_simultaneous_node():
            state.apply_actions(list(history[k:k + 2]))
            k += 2
        else:
            state.apply_action(history[k])
            k += 1
    return state


def test_an_unbroken_copy_passes():
    assert kernels.check_kernel(OSHI_ZUMO, copy_of(oshi_zumo), trajectories=50) is None


@numba.njit
def _bids_after_the_end(state, params, data, player, out):
    """oshi_zumo's legal actions without the terminal test: a bid at the end."""
    coins = state[player]
    k = 0
    for bid in range(params[3], coins + 1):
        out[k] = bid
        k += 1
    if k == 0:
        out[0] = coins
        k = 1
    return k


def test_legal_actions_at_a_terminal_are_compared():
    game = pyspiel.load_game(OSHI_ZUMO)
    mismatch = kernels.check_kernel(game, copy_of(oshi_zumo, legal_actions=_bids_after_the_end),
                                    trajectories=20, verbose=False)
    assert mismatch.field == "legal_actions(0)" and mismatch.pyspiel_value == []
    assert replay(game, mismatch.history).is_terminal()


# ----------------------------------------------------------------------------------------
# Arguments and the module's shape: a ValueError naming the fault and the fix.


@numba.njit
def _tie_as_a_win(state, params, data):
    """blotto's returns with a tied field scored as player 0's (the docs' wrong kernel)."""
    if state[0] < 0:
        return 0.0
    fields = params[1]
    won = 0
    for f in range(fields):
        won += 1 if params[3 + state[0] * fields + f] >= params[3 + state[1] * fields + f] else -1
    return 1.0 if won > 0 else -1.0 if won < 0 else 0.0


@pytest.mark.parametrize("trajectories", [0, -1, 2.5, True, "10"])
def test_a_bad_number_of_trajectories_is_refused(trajectories):
    wrong = copy_of(blotto, returns=_tie_as_a_win)
    game = "blotto(coins=5,fields=3)"
    assert kernels.check_kernel(game, wrong, verbose=False).field == "returns(0)"
    with pytest.raises(ValueError, match="trajectories must be an integer >= 1"):
        kernels.check_kernel(game, wrong, trajectories=trajectories)


@pytest.mark.parametrize("evaluator,message", [
    ("bogus", "DEFAULT_EVALUATOR must be one of 'random_rollout', 'heuristic', got 'bogus'"),
    (None, "DEFAULT_EVALUATOR must be one of"),
])
def test_an_unknown_default_evaluator_is_refused(evaluator, message):
    module = copy_of(oshi_zumo, DEFAULT_EVALUATOR=evaluator)
    with pytest.raises(ValueError, match=message):
        kernels.check_kernel(OSHI_ZUMO, module)
    with pytest.raises(ValueError, match=message):
        kernels.register_kernel(module)


def test_a_heuristic_default_needs_a_heuristic():
    module = copy_of(oshi_zumo)
    del module.heuristic
    with pytest.raises(ValueError, match="DEFAULT_EVALUATOR is 'heuristic' but the module has "
                                         "no heuristic function"):
        kernels.check_kernel(OSHI_ZUMO, module)


@pytest.mark.parametrize("name", ["status", "apply_actions", "rollout", "heuristic"])
def test_plain_python_functions_are_refused_where_numba_ones_are_needed(name):
    module = copy_of(oshi_zumo, **{name: getattr(oshi_zumo, name).py_func})
    with pytest.raises(ValueError, match=f"{name} must be numba functions .*@numba.njit"):
        kernels.check_kernel(OSHI_ZUMO, module)
    with pytest.raises(ValueError, match=f"{name} must be numba functions"):
        kernels.register_kernel(module)


def _halves_in_params(game):
    params, data = oshi_zumo.parameters(game)
    return params + 0.5, data  # a float array: 4.5 coins would be read as 4


def _float_limits(params):
    actions, outcomes, depth = oshi_zumo.limits(params)
    return actions, outcomes, depth + 0.5


@pytest.mark.parametrize("replaced,message", [
    (dict(parameters=_halves_in_params),
     r"parameters\(\) params must be integers \(int64\), got float64 values \[4.5.*data"),
    (dict(limits=_float_limits), r"limits\(\) must be integers \(int64\), got float64 values"),
])
def test_non_integer_params_are_refused_not_truncated(replaced, message):
    with pytest.raises(ValueError, match=message):
        kernels.check_kernel(OSHI_ZUMO, copy_of(oshi_zumo, **replaced))


@numba.njit
def _float_initial_state(params):
    state = np.zeros(5)  # float64: the engines type the state as int64
    state[0] = params[0]
    state[1] = params[0]
    state[2] = params[1] + 1
    state[4] = -1
    return state


def test_a_float_state_is_refused_naming_the_dtype():
    with pytest.raises(ValueError, match=r"initial_state must return a one-dimensional int64 "
                                         r"array \(np.zeros\(n, np.int64\)\), got a float64"):
        kernels.check_kernel(OSHI_ZUMO, copy_of(oshi_zumo, initial_state=_float_initial_state))


@numba.njit
def _status_of_a_missing_field(state, params, data):
    return state.missing_field


def test_a_function_numba_cannot_compile_is_a_value_error():
    with pytest.raises(ValueError, match="does not compile with the protocol's arguments"):
        kernels.check_kernel(OSHI_ZUMO, copy_of(oshi_zumo, status=_status_of_a_missing_field))


# ----------------------------------------------------------------------------------------
# Wrong values: a Mismatch naming the field.


@numba.njit
def _no_actions_count(state, params, data, player, out):
    return -1


def test_a_negative_count_of_legal_actions_is_reported_as_it_is():
    mismatch = kernels.check_kernel(OSHI_ZUMO, copy_of(oshi_zumo, legal_actions=_no_actions_count),
                                    verbose=False)
    assert mismatch.field == "legal_actions(0) (the number of actions returned)"
    assert (mismatch.pyspiel_value, mismatch.kernel_value) == (5, -1)


@numba.njit
def _huge_heuristic(state, params, data, rng):
    return 1e9


@numba.njit
def _heuristic_zero_at_the_end(state, params, data, rng):
    return 0.0  # within the range, but not the return at a terminal


@pytest.mark.parametrize("heuristic,field", [
    (_huge_heuristic, "heuristic value within [min_utility, max_utility]"),
    (_heuristic_zero_at_the_end, "heuristic at a terminal (player 0's return)"),
])
def test_a_wrong_heuristic_is_caught(heuristic, field):
    mismatch = kernels.check_kernel(OSHI_ZUMO, copy_of(oshi_zumo, heuristic=heuristic),
                                    trajectories=100, verbose=False)
    assert mismatch.field == field


@numba.njit
def _random_bid(coins, min_bid, rng):
    if coins < min_bid:
        return coins
    k = coins - min_bid + 1
    return min_bid + min(int(rng.random() * k), k - 1)


@numba.njit
def _rollout_bidding_low(state, params, data, rng):
    """Player 0 always bids the least it may: every return is a real one, the distribution
    is not uniformly random play's."""
    while oshi_zumo.status(state, params, data) != kernels.TERMINAL:
        low = min(state[0], params[3])
        oshi_zumo.apply_actions(state, params, data, low, _random_bid(state[1], params[3], rng))
    return oshi_zumo.returns(state, params, data)


@numba.njit
def _flipped_rollout(state, params, data, rng):
    """Player 1's return: the same distribution from the symmetric start, not elsewhere."""
    return -oshi_zumo.rollout(state, params, data, rng)


@numba.njit
def _rollout_without_playing(state, params, data, rng):
    return oshi_zumo.returns(state, params, data)  # 0 until the end


@pytest.mark.parametrize("rollout", [_rollout_bidding_low, _flipped_rollout,
                                     _rollout_without_playing])
def test_a_wrong_rollout_within_the_range_is_caught(rollout):
    mismatch = kernels.check_kernel(OSHI_ZUMO, copy_of(oshi_zumo, rollout=rollout),
                                    verbose=False)
    assert mismatch is not None and "rollout" in mismatch.field


@numba.njit
def _one_joint_action_overcharged(state, params, data, action0, action1):
    """oshi_zumo's move, except that the joint bid (13, 7) charges player 1 one coin more."""
    oshi_zumo.apply_actions(state, params, data, action0, action1)
    if action0 == 13 and action1 == 7:
        state[1] -= 1


def test_a_kernel_wrong_on_one_joint_action_of_441_is_caught():
    game = pyspiel.load_game("oshi_zumo(coins=20,size=2,horizon=6)")
    module = copy_of(oshi_zumo, apply_actions=_one_joint_action_overcharged)
    # The trajectories alone miss it (their joint actions are sampled) ...
    assert kernels.check_kernel(game, module, trajectories=50, children=0) is None
    # ... every joint action of the visited states does not.
    mismatch = kernels.check_kernel(game, module, trajectories=50, verbose=False)
    assert mismatch.field == "legal_actions(1)" and mismatch.history[-2:] == (13, 7)


@numba.njit
def _last_bid_low(state, params, data, rng):
    """Uniformly random bids except on the last move, where player 0 bids the least: from
    the start hardly another distribution, one move before the end a clearly different one
    (with the same returns)."""
    while oshi_zumo.status(state, params, data) != kernels.TERMINAL:
        a1 = _random_bid(state[1], params[3], rng)
        a0 = _random_bid(state[0], params[3], rng)
        if state[3] == params[2] - 1:
            a0 = min(state[0], params[3])
        oshi_zumo.apply_actions(state, params, data, a0, a1)
    return oshi_zumo.returns(state, params, data)


def test_a_rollout_wrong_only_near_the_end_is_caught():
    game = "oshi_zumo(coins=6,size=2,horizon=4)"
    mismatch = kernels.check_kernel(game, copy_of(oshi_zumo, rollout=_last_bid_low),
                                    verbose=False)
    assert mismatch.trajectory is None and mismatch.move is None
    assert mismatch.field.startswith("mean rollout return one move before the end")
