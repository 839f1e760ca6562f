"""Properties every registered game must have, on games and play drawn by hypothesis."""

import numpy as np
import pyspiel
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from open_spiel.python.observation import INFO_STATE_OBS_TYPE, make_observation

import smmcts_spiel  # noqa: F401  (registers the games)
from smmcts_spiel import trees as mt
from smmcts_spiel.games import goofspiel
from smmcts_spiel.games import matrix_tree as matrix_tree_game


@st.composite
def random_stacked_matrix_games(draw):
    depth = draw(st.integers(1, 3))
    branching = draw(st.integers(1, 3))
    b1, b2 = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    assume((b1 or branching) * (b2 or branching) >= 2)
    chance = draw(st.sampled_from([0, 2, 3]))
    seed = draw(st.integers(0, 2**31 - 2))  # pyspiel parses ints as 32-bit; seed + 1 must fit
    utilities = draw(st.sampled_from(mt.UTILITY_DISTRIBUTIONS))
    return (f"smmcts_random_stacked_matrix(depth={depth},branching={branching},"
            f"branching_p1={b1},branching_p2={b2},chance_branching={chance},seed={seed},"
            f"utilities={utilities})")


@st.composite
def matrix_tree_games(draw):
    b1, b2 = draw(st.integers(1, 3)), draw(st.integers(2, 3))
    root = mt.random_stacked_matrix(draw(st.integers(1, 2)), b1, b2,
                                    chance_branching=draw(st.sampled_from([0, 2])),
                                    seed=draw(st.integers(0, 10**6)))
    return matrix_tree_game.game_string(root)


@st.composite
def goofspiel_games(draw):
    order = draw(st.sampled_from(goofspiel.POINTS_ORDERS + (goofspiel.SHUFFLED,)))
    seed = f"points_seed={draw(st.integers(0, 99))}," if order == goofspiel.SHUFFLED else ""
    return (f"smmcts_goofspiel(num_cards={draw(st.integers(1, 6))},{seed}"
            f"points_order={order},"
            f"returns_type={draw(st.sampled_from(goofspiel.RETURNS_TYPES))},"
            f"imp_info={draw(st.booleans())})")


@st.composite
def pursuit_evasion_games(draw):
    n = draw(st.integers(2, 5))
    starts = draw(st.lists(st.integers(0, n * n - 1), min_size=3, max_size=3))
    assume(starts[0] not in starts[1:])
    return (f"smmcts_pursuit_evasion(grid_size={n},depth={draw(st.integers(1, 6))},"
            f"evader_start={starts[0]},pursuer1_start={starts[1]},"
            f"pursuer2_start={starts[2]})")


@st.composite
def tron_games(draw):
    return f"smmcts_tron(rows={draw(st.integers(2, 5))},cols={draw(st.integers(2, 5))})"


@st.composite
def oshi_zumo_games(draw):
    return (f"smmcts_oshi_zumo(coins={draw(st.integers(1, 5))},size={draw(st.integers(1, 2))},"
            f"min_bid={draw(st.integers(0, 2))},horizon={draw(st.integers(1, 8))},"
            f"returns_type={draw(st.sampled_from(['win_loss', 'position']))})")


ANY_GAME = st.one_of(random_stacked_matrix_games(), matrix_tree_games(), goofspiel_games(),
                     st.just("smmcts_phantom_ttt"), pursuit_evasion_games(), tron_games(),
                     st.just("smmcts_biased_rps"), oshi_zumo_games())


def step(state, rng):
    """One uniformly random move (chance by its probabilities) in place."""
    if state.is_chance_node():
        actions, probs = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(int(rng.choice(actions, p=probs)))
    elif state.is_simultaneous_node():
        state.apply_actions([int(rng.choice(state.legal_actions(p))) for p in range(2)])
    else:
        state.apply_action(int(rng.choice(state.legal_actions())))


@settings(max_examples=60, deadline=None)
@given(name=ANY_GAME, seed=st.integers(0, 2**32 - 1))
def test_legal_actions_nonempty_and_returns_bounded_and_zero_sum(name, seed):
    game = pyspiel.load_game(name)
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            assert state.chance_outcomes()
            assert sum(p for _, p in state.chance_outcomes()) == pytest.approx(1.0)
        elif state.is_simultaneous_node():
            assert all(state.legal_actions(p) for p in range(2))
            assert len(state.legal_actions()) == \
                len(state.legal_actions(0)) * len(state.legal_actions(1))
        else:
            assert state.legal_actions()
        step(state, rng)
    returns = state.returns()
    assert all(game.min_utility() - 1e-12 <= r <= game.max_utility() + 1e-12 for r in returns)
    if game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM:
        assert sum(returns) == 0.0


@settings(max_examples=30, deadline=None)
@given(name=random_stacked_matrix_games())
def test_same_seed_same_game_other_seed_other_game(name):
    game, again = pyspiel.load_game(name), pyspiel.load_game(name)
    assert game.tree == again.tree
    assert str(game) == str(again)
    if "utilities=uniform" in name:  # Continuous utilities: a new seed changes the leaves.
        seed = int(name.split("seed=")[1].split(",")[0])
        other = pyspiel.load_game(name.replace(f"seed={seed},", f"seed={seed + 1},"))
        assert other.tree != game.tree


@settings(max_examples=40, deadline=None)
@given(name=ANY_GAME, seed=st.integers(0, 2**32 - 1), prefix=st.integers(0, 6))
def test_clones_are_independent(name, seed, prefix):
    game = pyspiel.load_game(name)
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    for _ in range(prefix):
        if state.is_terminal():
            break
        step(state, rng)
    before = (str(state), state.history(), state.is_terminal(),
              None if state.is_terminal() else state.information_state_string(0))
    clone = state.clone()
    continuation = np.random.default_rng(seed + 1)
    while not clone.is_terminal():
        step(clone, continuation)
    after = (str(state), state.history(), state.is_terminal(),
             None if state.is_terminal() else state.information_state_string(0))
    assert after == before
    # The original, played on with the same moves, reaches the clone's outcome.
    continuation = np.random.default_rng(seed + 1)
    while not state.is_terminal():
        step(state, continuation)
    assert state.history() == clone.history()
    assert state.returns() == clone.returns()


def _view(state):
    """Everything a caller can observe of a state, for comparing two states."""
    players = range(state.num_players())
    return (str(state), state.history(), state.current_player(), state.returns(),
            [state.information_state_string(p) for p in players],
            [state.information_state_tensor(p) for p in players],
            [state.observation_string(p) for p in players],
            [state.observation_tensor(p) for p in players],
            [] if state.is_terminal() or state.is_chance_node()
            else [state.legal_actions(p) for p in players])


@settings(max_examples=40, deadline=None)
@given(name=ANY_GAME, seed=st.integers(0, 2**32 - 1), prefix=st.integers(0, 8))
def test_serialization_round_trips_game_and_state(name, seed, prefix):
    game = pyspiel.load_game(name)
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    for _ in range(prefix):
        if state.is_terminal():
            break
        step(state, rng)
    game2, state2 = pyspiel.deserialize_game_and_state(
        pyspiel.serialize_game_and_state(game, state))
    assert str(game2) == str(game)
    assert _view(state2) == _view(state)


@pytest.mark.parametrize("name", ["smmcts_random_stacked_matrix(chance_branching=2)",
                                  "smmcts_goofspiel(num_cards=4,imp_info=true)",
                                  "smmcts_goofspiel(num_cards=4)", "smmcts_phantom_ttt",
                                  "smmcts_pursuit_evasion", "smmcts_tron(rows=3,cols=4)",
                                  "smmcts_biased_rps", "smmcts_oshi_zumo(coins=4,size=1)"])
def test_python_observations_match_the_state_methods(name):
    game = pyspiel.load_game(name)
    info_state = make_observation(game, INFO_STATE_OBS_TYPE)
    observation = make_observation(game)
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    while not state.is_terminal():
        for player in range(2):
            info_state.set_from(state, player)
            observation.set_from(state, player)
            np.testing.assert_array_equal(info_state.tensor,
                                          state.information_state_tensor(player))
            np.testing.assert_array_equal(observation.tensor, state.observation_tensor(player))
            assert info_state.string_from(state, player) == \
                state.information_state_string(player)
            assert observation.string_from(state, player) == state.observation_string(player)
        step(state, rng)
