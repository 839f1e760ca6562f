"""smmcts_oshi_zumo: OpenSpiel's oshi_zumo move by move, plus the AIJ 2016 position
returns, with its kernel."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import sequence_form_lp

import smmcts_spiel  # noqa: F401  (registers the games)
from smmcts_spiel.bots import SMMCTSBot
from smmcts_spiel.exact import solver
from smmcts_spiel.games import kernels
from smmcts_spiel.games.kernels import oshi_zumo as kernel_module

SHARED = ["coins=5,size=2,min_bid=1", "coins=7,size=1,horizon=50,min_bid=2",
          "coins=4,size=2,horizon=3", "coins=5,size=2,alesia=true,min_bid=1"]


@pytest.mark.parametrize("params", SHARED)
def test_win_loss_plays_as_openspiels_oshi_zumo(params):
    ours = pyspiel.load_game(f"smmcts_oshi_zumo({params})")
    theirs = pyspiel.load_game(f"oshi_zumo({params})")
    assert (ours.min_utility(), ours.max_utility(), ours.num_distinct_actions()) == \
        (theirs.min_utility(), theirs.max_utility(), theirs.num_distinct_actions())
    rng = np.random.default_rng(0)
    for _ in range(200):
        a, b = ours.new_initial_state(), theirs.new_initial_state()
        while True:
            assert str(a) == str(b)
            assert a.is_terminal() == b.is_terminal()
            assert a.returns() == b.returns()
            assert a.observation_string(1) == b.observation_string(1)
            assert a.observation_tensor(0) == pytest.approx(b.observation_tensor(0))
            assert a.information_state_string(0) == b.information_state_string(0)
            if a.is_terminal():
                break
            for p in (0, 1):
                assert a.legal_actions(p) == b.legal_actions(p)
            flat = int(rng.choice(b.legal_actions()))
            assert a.action_to_string(pyspiel.PlayerId.SIMULTANEOUS, flat) == \
                b.action_to_string(pyspiel.PlayerId.SIMULTANEOUS, flat)
            a.apply_action(flat)
            b.apply_action(flat)


def test_position_returns_are_the_wrestlers_offset():
    game = pyspiel.load_game("smmcts_oshi_zumo(coins=3,size=2,min_bid=1,returns_type=position)")
    assert (game.min_utility(), game.max_utility()) == (-3.0, 3.0)
    state = game.new_initial_state()
    state.apply_actions([2, 1])  # one step towards player 1's edge
    state.apply_actions([1, 2])  # both broke, back in the middle: a draw
    assert state.is_terminal() and state.returns() == [0.0, 0.0]
    state = game.new_initial_state()
    for _ in range(3):
        state.apply_actions([1, 0] if state.coins[1] == 0 else [1, 1])
    assert state.is_terminal() and state.returns() == [0.0, 0.0]
    state = game.new_initial_state()
    state.apply_actions([3, 1])  # player 0 pushes once and is broke
    state.apply_actions([0, 1])  # player 1 pushes back
    state.apply_actions([0, 1])  # and once more: one cell into player 0's half
    assert state.is_terminal() and state.returns() == [-1.0, 1.0]


@pytest.mark.parametrize("params", SHARED[:2] + [
    "coins=6,size=2,min_bid=1,returns_type=position",
    "coins=10,size=3,min_bid=1,returns_type=position",
])
def test_kernel_plays_as_the_pyspiel_game(params):
    game = pyspiel.load_game(f"smmcts_oshi_zumo({params})")
    kernel = kernels.kernel_for(game)
    assert kernel is not None and kernel.module is kernel_module
    assert (kernel.min_utility, kernel.max_utility) == (game.min_utility(), game.max_utility())
    assert kernels.check_kernel(game, trajectories=500) is None


def test_kernel_heuristic_is_scaled_to_position_returns():
    """With position returns the heuristic is the win/loss one times size + 1."""
    games = [pyspiel.load_game(f"smmcts_oshi_zumo(coins=6,size=2,min_bid=1,returns_type={r})")
             for r in ("win_loss", "position")]
    win_loss, position = (kernels.kernel_for(g) for g in games)
    rng = np.random.default_rng(0)
    for bids in [(), ((3, 1),), ((3, 1), (1, 2)), ((6, 1),)]:
        arrays = [k.initial_state() for k in (win_loss, position)]
        for k, array in zip((win_loss, position), arrays):
            for a, b in bids:
                k.module.apply_actions(array, k.params, k.data, a, b)
        ours = [k.module.heuristic(array, k.params, k.data, rng)
                for k, array in zip((win_loss, position), arrays)]
        assert ours[1] == pytest.approx(3 * ours[0])


def test_values_win_loss_as_openspiel_and_position_as_the_lp():
    shared = "coins=6,size=2,min_bid=1"
    assert solver.game_value(f"smmcts_oshi_zumo({shared})") == pytest.approx(
        solver.game_value(f"oshi_zumo({shared})"))
    game = pyspiel.load_game("smmcts_oshi_zumo(coins=4,size=1,min_bid=1,returns_type=position)")
    lp = sequence_form_lp.solve_zero_sum_game(pyspiel.convert_to_turn_based(game))[0]
    assert solver.game_value(game) == pytest.approx(lp, abs=1e-6)


def test_random_sim_test_with_serialization():
    game = pyspiel.load_game("smmcts_oshi_zumo(coins=5,size=2,min_bid=1,returns_type=position)")
    pyspiel.random_sim_test(game, num_sims=10, serialize=True, verbose=False)


@pytest.mark.parametrize("params,message", [
    ("coins=0", "coins must be an integer from 1"),
    ("size=0", "size must be an integer from 1"),
    ("returns_type=points", "returns_type must be one of win_loss, position"),
    ("alesia=true,returns_type=position", "alesia changes win_loss returns only"),
])
def test_bad_parameters_are_refused(params, message):
    with pytest.raises(ValueError, match=message):
        pyspiel.load_game(f"smmcts_oshi_zumo({params})")


def test_smmcts_bot_plays_position_returns_on_the_kernel_engine():
    game = pyspiel.load_game("smmcts_oshi_zumo(coins=6,size=2,min_bid=1,returns_type=position)")
    bots = [SMMCTSBot(game, p, iterations=300, seed=p, engine="kernel") for p in (0, 1)]
    state = game.new_initial_state()
    while not state.is_terminal():
        state.apply_actions([bot.step(state) for bot in bots])
    assert state.returns()[0] in (-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0)
