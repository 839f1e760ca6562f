"""Compiled OOS: the same tables as the Python engine from the same seed, OpenSpiel's anchor,
and the compiled enumeration of information sets equals the Python one."""

import subprocess
import sys

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability

import smmcts_spiel  # noqa: F401
from smmcts_spiel.imperfect import information_sets
from smmcts_spiel.imperfect.oos import OutcomeSampling
from smmcts_spiel.imperfect.oos_kernel import KernelOutcomeSampling

GAMES = ["kuhn_poker", "leduc_poker", "goofspiel(num_cards=4,imp_info=True)"]


def python_tables_by_key(python, kernel):
    """The Python engine's tables keyed by the compiled engine's information keys."""
    keys = {}
    for state, _ in information_sets.decision_states(python.search_game):
        p = state.current_player()
        keys.setdefault((p, state.information_state_string(p)), kernel.key(state, p))
    return {keys[k]: (node.regrets, node.strategy_sums) for k, node in python.nodes.items()}


@pytest.mark.parametrize("game_string", GAMES)
@pytest.mark.parametrize("targeted, gamma, weighting", [
    (False, 0.0, False), (True, 0.0, False), (True, 0.01, True)])
def test_same_seed_same_tables_as_the_python_engine(game_string, targeted, gamma, weighting):
    game = pyspiel.load_game(game_string)
    python = OutcomeSampling(game, delta=0.8, epsilon=0.6, seed=11, gamma=gamma,
                             weighting=weighting)
    kernel = KernelOutcomeSampling(game, delta=0.8, epsilon=0.6, seed=11, gamma=gamma,
                                   weighting=weighting)
    # Two targets one after the other, as two moves of a game (w_T differs between them).
    for depth in ((1, 3) if targeted else (None,)):
        if depth is not None:
            state = information_sets.random_decision_state(python.search_game,
                                                           np.random.default_rng(3), depth)
            python.target(state)
            kernel.target(state)
            assert kernel.weight == python.weight
            assert (kernel.weight > 1.0) == weighting
        python.run(1500)
        kernel.run(1500)
    ours = kernel.tables()
    theirs = python_tables_by_key(python, kernel)
    assert len(ours) == len(theirs) >= 12
    assert set(ours) == set(theirs)
    for key, (regrets, sums) in theirs.items():
        assert ours[key][0].tolist() == regrets
        assert ours[key][1].tolist() == sums
    state = information_sets.random_decision_state(python.search_game, np.random.default_rng(4), 2)
    for final_strategy in ("average", "current"):
        assert (kernel.strategy(state, None, final_strategy)
                == python.strategy(state, None, final_strategy))


@pytest.mark.parametrize("game_string", GAMES + ["goofspiel(num_cards=5,imp_info=True)",
                                                 "phantom_ttt"])
def test_compiled_information_sets_equal_the_python_enumeration(game_string):
    game = pyspiel.load_game(game_string)
    kernel = KernelOutcomeSampling(game, seed=0)
    rng = np.random.default_rng(5)
    for depth in (0, 2, 4, 6):
        state = information_sets.random_decision_state(kernel.search_game, rng, depth)
        kernel.target(state)
        expected = information_sets.information_set(kernel.search_game, state, compiled=False)
        assert kernel.target_set.histories == expected.histories
        assert kernel.target_set.chance_probabilities == pytest.approx(
            expected.chance_probabilities)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kuhn_10000_unbiased_iterations_below_005_like_openspiel_oos_test(seed):
    game = pyspiel.load_game("kuhn_poker")
    search = KernelOutcomeSampling(game, delta=0.0, epsilon=0.6, seed=seed)
    search.run(10_000)
    assert exploitability.exploitability(game, search.policy()) < 0.05


def test_time_limited_run_counts_whole_iterations_and_tables_grow():
    # Untimed: how many iterations fit depends on the machine's load; that every one is
    # counted, and that the tables grow beyond their first size, does not.
    game = pyspiel.load_game("goofspiel(num_cards=6,imp_info=True)")
    search = KernelOutcomeSampling(game, seed=0)
    search.run(10)  # compile
    done = search.run(time_limit=0.05)
    assert done >= 1
    assert search.iterations == done + 10
    search.run(5000)
    assert search.num_nodes > 1024  # the first table has 1024 rows
    assert search.iterations == done + 5010


def test_copy_continues_identically():
    game = pyspiel.load_game("leduc_poker")
    search = KernelOutcomeSampling(game, seed=4)
    search.run(500)
    other = search.copy()
    search.run(500)
    other.run(500)
    assert search.tables().keys() == other.tables().keys()
    theirs = other.tables()
    for key, (regrets, sums) in search.tables().items():
        assert theirs[key][0].tolist() == regrets.tolist()
        assert theirs[key][1].tolist() == sums.tolist()


def test_a_new_search_is_empty_and_has_loaded_its_compiled_code():
    # In a fresh interpreter: building the search loads (or compiles) the iterations and
    # the targeting walk, so the first timed search does not wait for numba.
    code = ("import pyspiel, smmcts_spiel\n"
            "from smmcts_spiel.imperfect import compiled_information_sets as c, oos_kernel as k\n"
            "s = k.KernelOutcomeSampling(pyspiel.load_game('kuhn_poker'), seed=0)\n"
            "print(len(k._run.signatures), len(c.enumerate_histories.signatures),"
            " len(c.key_at.signatures), len(k._mean_reach.signatures), s.num_nodes,"
            " s.iterations, s.target_set)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["1", "1", "1", "1", "0", "0", "None"]
