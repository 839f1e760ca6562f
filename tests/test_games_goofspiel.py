"""smmcts_goofspiel: agrees with OpenSpiel's goofspiel and shares transpositions soundly."""

import collections
import itertools

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy
from open_spiel.python.algorithms import exploitability, sequence_form_lp

import smmcts_spiel  # noqa: F401  (registers the games)
from smmcts_spiel.exact import solver
from smmcts_spiel.games import goofspiel, kernels

PARAMETER_SETS = [
    "num_cards=4",
    "num_cards=1",
    "num_cards=2,points_order=ascending",
    "num_cards=5,points_order=descending,returns_type=point_difference",
    "num_cards=3,imp_info=true,returns_type=total_points",
    "num_cards=4,imp_info=true,points_order=descending",
]
COMBINATIONS = list(itertools.product(goofspiel.POINTS_ORDERS, goofspiel.RETURNS_TYPES,
                                      ["false", "true"]))


def both_games(num_cards, points_order, returns_type, imp_info):
    params = (f"num_cards={num_cards},points_order={points_order},"
              f"returns_type={returns_type},imp_info={imp_info}")
    return pyspiel.load_game(f"smmcts_goofspiel({params})"), pyspiel.load_game(
        f"goofspiel({params})")


def assert_same_trajectories(ours, theirs, num_trajectories, seed):
    """Plays the same uniformly random moves in both games and compares every step.

    Joint moves are drawn as flat joint actions; OpenSpiel applies the flat action, ours
    applies it both flat (on a copy) and as the per-player actions OpenSpiel recorded.
    """
    rng = np.random.default_rng(seed)
    for _ in range(num_trajectories):
        a, b = ours.new_initial_state(), theirs.new_initial_state()
        while True:
            assert a.current_player() == b.current_player()
            assert a.is_terminal() == b.is_terminal()
            if a.is_terminal():
                break
            if a.is_chance_node():
                actions, probs = zip(*a.chance_outcomes(), strict=True)
                their_actions, their_probs = zip(*b.chance_outcomes(), strict=True)
                assert actions == their_actions
                assert probs == pytest.approx(their_probs)
                action = int(rng.choice(actions, p=probs))
                a.apply_action(action)
                b.apply_action(action)
            else:
                for player in range(2):
                    assert a.legal_actions(player) == b.legal_actions(player)
                # Flat joint actions: same numbering and strings; OpenSpiel decodes them.
                flat = a.legal_actions()
                assert flat == b.legal_actions()
                action = int(rng.choice(flat))
                simultaneous = pyspiel.PlayerId.SIMULTANEOUS
                assert a.action_to_string(simultaneous, action) == \
                    b.action_to_string(simultaneous, action)
                via_flat = a.clone()
                via_flat.apply_action(action)
                b.apply_action(action)
                a.apply_actions(b.history()[-2:])
                assert str(via_flat) == str(a)
            assert a.history() == b.history()
        assert a.returns() == pytest.approx(b.returns())


@pytest.mark.parametrize("params", PARAMETER_SETS)
def test_random_sim_test_with_serialization(params):
    game = pyspiel.load_game(f"smmcts_goofspiel({params})")
    pyspiel.random_sim_test(game, num_sims=10, serialize=True, verbose=False)
    pyspiel.random_sim_test(pyspiel.convert_to_turn_based(game), num_sims=3, serialize=False,
                            verbose=False)


@pytest.mark.parametrize("points_order, returns_type, imp_info", COMBINATIONS)
def test_agrees_with_openspiel_goofspiel_on_random_trajectories(
        points_order, returns_type, imp_info):
    for num_cards in (1, 3, 5):
        ours, theirs = both_games(num_cards, points_order, returns_type, imp_info)
        assert_same_trajectories(ours, theirs, num_trajectories=40, seed=num_cards)


@pytest.mark.slow
@pytest.mark.parametrize("points_order, returns_type, imp_info", COMBINATIONS)
@pytest.mark.parametrize("num_cards", [1, 2, 3, 4, 5, 6, 8])
def test_agrees_with_openspiel_goofspiel_on_1000_trajectories(
        num_cards, points_order, returns_type, imp_info):
    ours, theirs = both_games(num_cards, points_order, returns_type, imp_info)
    assert_same_trajectories(ours, theirs, num_trajectories=1000, seed=num_cards)


def test_game_type_and_info_follow_the_parameters():
    game = pyspiel.load_game("smmcts_goofspiel(num_cards=4,returns_type=point_difference)")
    assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    assert game.get_type().information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (-5.0, 5.0, 0.0)
    assert (game.num_distinct_actions(), game.max_chance_outcomes()) == (4, 4)
    total = pyspiel.load_game(
        "smmcts_goofspiel(num_cards=4,returns_type=total_points,imp_info=true,"
        "points_order=descending)")
    assert total.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    assert total.get_type().information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert total.get_type().chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC
    assert (total.min_utility(), total.max_utility()) == (0.0, 10.0)


def test_bids_are_public_only_without_imp_info():
    for imp_info, sees_other_bids in (("false", True), ("true", False)):
        game = pyspiel.load_game(
            f"smmcts_goofspiel(num_cards=4,points_order=descending,imp_info={imp_info})")
        state = game.new_initial_state()
        state.apply_actions([1, 2])
        other = game.new_initial_state()
        other.apply_actions([1, 3])  # Player 1 loses the round either way.
        same_for_p0 = (state.information_state_string(0)
                       == other.information_state_string(0))
        assert same_for_p0 != sees_other_bids
        assert (state.information_state_tensor(0) == other.information_state_tensor(0)) \
            != sees_other_bids
        assert state.information_state_string(1) != other.information_state_string(1)


def test_information_state_has_perfect_recall_of_own_bids():
    game = pyspiel.load_game("smmcts_goofspiel(num_cards=5,points_order=descending,"
                             "imp_info=true)")
    # Same hands afterwards, different order of player 0's bids.
    a, b = game.new_initial_state(), game.new_initial_state()
    for bids in ([0, 4], [1, 3]):
        a.apply_actions(bids)
    for bids in ([1, 4], [0, 3]):
        b.apply_actions(bids)
    assert a.observation_string(0) == b.observation_string(0)
    assert a.information_state_string(0) != b.information_state_string(0)


def test_nash_conv_runs_on_the_turn_based_conversion():
    game = pyspiel.load_game("smmcts_goofspiel(num_cards=3,points_order=descending)")
    turn_based = pyspiel.convert_to_turn_based(game)
    nash_conv = exploitability.nash_conv(turn_based, policy.UniformRandomPolicy(turn_based))
    reference = pyspiel.convert_to_turn_based(
        pyspiel.load_game("goofspiel(num_cards=3,points_order=descending)"))
    assert nash_conv == pytest.approx(
        exploitability.nash_conv(reference, policy.UniformRandomPolicy(reference)))


def _all_states_with_future_fingerprints(game):
    """(transposition key, future fingerprint) of every state, by one depth-first pass.

    The fingerprint is a hash-consed id of the whole future (legal moves, chance outcomes
    with probabilities, returns), so equal ids mean identical futures.
    """
    table = {}
    found = []

    def visit(state):
        if state.is_terminal():
            shape = ("T", tuple(state.returns()))
        elif state.is_chance_node():
            shape = ("C", tuple((a, p, visit(state.child(a))) for a, p in state.chance_outcomes()))
        else:
            legal = [state.legal_actions(p) for p in range(2)]
            children = []
            for joint in itertools.product(*legal):
                child = state.clone()
                child.apply_actions(list(joint))
                children.append(visit(child))
            shape = ("S", tuple(map(tuple, legal)), tuple(children))
        fingerprint = table.setdefault(shape, len(table))
        found.append((state.transposition_key(), fingerprint))
        return fingerprint

    visit(game.new_initial_state())
    return found


@pytest.mark.parametrize("returns_type", goofspiel.RETURNS_TYPES)
@pytest.mark.parametrize("points_order, num_cards", [("random", 4), ("descending", 4)])
def test_states_with_equal_transposition_keys_have_identical_futures(
        returns_type, points_order, num_cards):
    game = pyspiel.load_game(f"smmcts_goofspiel(num_cards={num_cards},"
                             f"points_order={points_order},returns_type={returns_type})")
    states = _all_states_with_future_fingerprints(game)
    fingerprints_of_key = collections.defaultdict(set)
    for key, fingerprint in states:
        fingerprints_of_key[key].add(fingerprint)
    # Same key => identical future.
    assert all(len(f) == 1 for f in fingerprints_of_key.values())
    # Transpositions exist: far fewer keys than states.
    assert len(fingerprints_of_key) < len(states) / 2


@pytest.mark.parametrize("returns_type", goofspiel.RETURNS_TYPES)
def test_same_key_same_returns_under_identical_random_continuations(returns_type):
    game = pyspiel.load_game("smmcts_goofspiel(num_cards=5,points_order=descending,"
                             f"returns_type={returns_type})")
    by_key = collections.defaultdict(list)
    for first, second in itertools.product(itertools.product(range(5), repeat=2), repeat=2):
        if first[0] == second[0] or first[1] == second[1]:
            continue  # A card can be bid only once.
        state = game.new_initial_state()
        state.apply_actions(list(first))
        state.apply_actions(list(second))
        by_key[state.transposition_key()].append(state)
    groups = [g for g in by_key.values() if len(g) > 1]
    assert len(groups) >= 20
    for group in groups:
        for continuation_seed in range(3):
            returns = {tuple(_play_out(s.clone(), continuation_seed).returns()) for s in group}
            assert len(returns) == 1


def _play_out(state, seed):
    rng = np.random.default_rng(seed)
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(int(rng.choice([a for a, _ in state.chance_outcomes()])))
        else:
            state.apply_actions([int(rng.choice(state.legal_actions(p))) for p in range(2)])
    return state


@pytest.mark.parametrize("name, message", [
    ("smmcts_goofspiel(num_cards=0)", "num_cards must be an integer from 1 to 100"),
    ("smmcts_goofspiel(points_order=sorted)",
     "points_order must be one of random, descending, ascending, shuffled; got 'sorted'"),
    ("smmcts_goofspiel(returns_type=score)",
     "returns_type must be one of win_loss, point_difference, total_points; got 'score'"),
])
def test_bad_parameters_raise_a_clear_value_error(name, message):
    with pytest.raises(ValueError, match=message):
        pyspiel.load_game(name)


def test_defaults_are_openspiels_and_play_the_same():
    ours, theirs = pyspiel.load_game("smmcts_goofspiel"), pyspiel.load_game("goofspiel")
    shared = {k: v for k, v in ours.get_parameters().items() if k != "points_seed"}
    assert shared == {k: v for k, v in theirs.get_parameters().items() if k in shared}
    assert set(ours.get_parameters()) - set(theirs.get_parameters()) == {"points_seed"}
    assert_same_trajectories(ours, theirs, num_trajectories=20, seed=13)


def _seed_for(order, num_cards=4):
    """A points_seed whose shuffled order is ``order``."""
    return next(s for s in range(10_000) if goofspiel.shuffled_order(num_cards, s) == order)


def test_shuffled_order_is_fixed_by_its_seed_and_dealt_in_that_order():
    game = pyspiel.load_game("smmcts_goofspiel(num_cards=6,points_order=shuffled,points_seed=7)")
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC
    order = goofspiel.shuffled_order(6, 7)
    assert sorted(order) == list(range(6)) and order == goofspiel.shuffled_order(6, 7)
    assert any(goofspiel.shuffled_order(6, s) != order for s in range(8, 12))
    state = game.new_initial_state()
    while not state.is_terminal():
        state.apply_actions([state.legal_actions(0)[0], state.legal_actions(1)[-1]])
    assert state.point_card_sequence == order


def test_a_shuffled_order_that_happens_to_ascend_plays_as_openspiels_ascending():
    seed = _seed_for([0, 1, 2, 3])
    ours = pyspiel.load_game(f"smmcts_goofspiel(num_cards=4,points_order=shuffled,"
                             f"points_seed={seed},returns_type=point_difference)")
    theirs = pyspiel.load_game("goofspiel(num_cards=4,points_order=ascending,"
                               "returns_type=point_difference)")
    assert_same_trajectories(ours, theirs, num_trajectories=50, seed=0)


@pytest.mark.parametrize("returns_type", ["win_loss", "point_difference"])
def test_shuffled_orders_values_and_kernel(returns_type):
    descending = _seed_for([3, 2, 1, 0])
    name = f"smmcts_goofspiel(num_cards=4,points_order=shuffled,returns_type={returns_type}"
    assert solver.game_value(f"{name},points_seed={descending})") == pytest.approx(
        solver.game_value(f"goofspiel(num_cards=4,points_order=descending,"
                          f"returns_type={returns_type})"))
    for seed in (0, 5):
        game = pyspiel.load_game(f"{name},points_seed={seed})")
        assert kernels.check_kernel(game, trajectories=300) is None
        lp = sequence_form_lp.solve_zero_sum_game(pyspiel.convert_to_turn_based(game))[0]
        assert solver.game_value(game) == pytest.approx(lp, abs=1e-6)


def test_points_seed_without_a_shuffled_order_is_refused():
    with pytest.raises(ValueError, match="points_seed goes with points_order=shuffled"):
        pyspiel.load_game("smmcts_goofspiel(num_cards=4,points_seed=3)")
    with pytest.raises(ValueError, match="points_seed must be an integer >= 0"):
        pyspiel.load_game("smmcts_goofspiel(num_cards=4,points_order=shuffled,points_seed=-1)")
