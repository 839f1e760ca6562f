"""Information-set SM-MCTS (Python and compiled) and the worlds it draws determinisations
from."""

import collections
import itertools
import random
import subprocess
import sys

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import evaluate_bots

from smmcts_spiel.bots import ISSMMCTSBot
from smmcts_spiel.imperfect.information_sets import WorldSampler
from smmcts_spiel.imperfect.is_smmcts import InformationSetSMMCTS, without_exploration
from smmcts_spiel.imperfect.is_smmcts_kernel import KernelInformationSetSMMCTS

GOOFSPIEL4 = pyspiel.load_game("goofspiel(num_cards=4,imp_info=True)")


@pytest.mark.parametrize("selector", ["rm", "exp3"])
def test_rock_paper_scissors_frequencies_approach_the_uniform_equilibrium(selector):
    # One information set per player: the search is the paper's selector on a matrix game.
    game = pyspiel.load_game("matrix_rps")
    search = InformationSetSMMCTS(game, selector, gamma=0.1, seed=0)
    search.run(search.worlds(game.new_initial_state(), 0), 20_000)
    for player in (0, 1):
        _, probs = search.strategy(game.new_initial_state(), player)
        assert np.allclose(probs, 1 / 3, atol=0.05)


def test_matching_pennies_rm_frequencies_approach_one_half():
    game = pyspiel.load_game("matrix_mp")
    search = InformationSetSMMCTS(game, "rm", gamma=0.1, seed=1)
    search.run(search.worlds(game.new_initial_state(), 0), 5000)
    for player in (0, 1):
        assert search.strategy(game.new_initial_state(), player)[1][0] == pytest.approx(
            0.5, abs=0.05)


def test_worlds_share_the_information_state_and_follow_chance():
    game = pyspiel.load_game("kuhn_poker")
    state = game.new_initial_state()
    for action in (1, 2, 0):  # player 1 holds the queen, player 2 the king, check
        state.apply_action(action)
    sampler = WorldSampler(game, state, 1, random.Random(0))
    counts = collections.Counter()
    for _ in range(4000):
        world = sampler()
        assert world.information_state_string(1) == state.information_state_string(1)
        counts[world.history()[0]] += 1
    # Player 2 holds the king: player 1 holds the jack or the queen, 1/2 each.
    assert set(counts) == {0, 1}
    assert counts[0] / 4000 == pytest.approx(0.5, abs=0.03)


def test_simultaneous_worlds_hide_the_round_in_progress():
    state = GOOFSPIEL4.new_initial_state()
    rng = random.Random(1)
    while not (len(state.history()) >= 6 and state.is_simultaneous_node()):
        if state.is_chance_node():
            state.apply_action(rng.choice(state.legal_actions()))
        else:
            state.apply_actions([rng.choice(state.legal_actions(p)) for p in (0, 1)])
    assert state.is_simultaneous_node()
    for player in (0, 1):
        sampler = WorldSampler(GOOFSPIEL4, state, player, random.Random(2))
        for _ in range(20):
            world = sampler()
            assert world.is_simultaneous_node()
            assert (world.information_state_string(player) ==
                    state.information_state_string(player))


def all_states(game):
    """Every non-terminal state of ``game`` (simultaneous moves as joint actions)."""
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        yield state
        if state.is_chance_node():
            stack.extend(state.child(a) for a, _ in state.chance_outcomes())
        elif state.is_simultaneous_node():
            for joint in itertools.product(*(state.legal_actions(p) for p in (0, 1))):
                child = state.clone()
                child.apply_actions(list(joint))
                stack.append(child)
        else:
            stack.extend(state.child(a) for a in state.legal_actions())


@pytest.mark.parametrize("game_string", ["kuhn_poker", "goofspiel(num_cards=4,imp_info=True)",
                                         "leduc_poker"])
@pytest.mark.parametrize("selector", ["rm", "exp3", "ucb"])
def test_compiled_engine_grows_the_python_engine_s_trees(game_string, selector):
    game = pyspiel.load_game(game_string)
    python = InformationSetSMMCTS(game, selector, gamma=0.1, seed=7)
    kernel = KernelInformationSetSMMCTS(game, selector, gamma=0.1, seed=7)
    rng = random.Random(3)
    state = game.new_initial_state()
    for move in range(2):  # two searches, from two decisions of a game
        while state.is_chance_node() or (move and not state.is_simultaneous_node()
                                         and state.current_player() != 1):
            if state.is_chance_node():
                state.apply_action(rng.choice(state.legal_actions()))
            else:
                state.apply_action(rng.choice(state.legal_actions()))
        player = 1 if move else 0
        python.run(python.worlds(state, player), 400)
        kernel.run(kernel.worlds(state, player), 400)
        if state.is_simultaneous_node():
            state.apply_actions([rng.choice(state.legal_actions(p)) for p in (0, 1)])
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    keys = {}
    for s in all_states(game):
        for p in (0, 1):
            if s.legal_actions(p):
                keys.setdefault((p, s.information_state_string(p)), kernel.key(s, p))
    ours = kernel.tables()
    assert len(ours) == len(python.nodes) > 5
    for key, node in python.nodes.items():
        stats, counts, sums = ours[keys[key]]
        theirs = (node.selector.regrets if selector == "rm" else node.selector.reward_sums)
        assert stats.tolist() == theirs
        assert counts.tolist() == node.counts
        assert sums.tolist() == node.strategy_sums
    for s in list(all_states(game))[:200]:
        for p in (0, 1):
            if s.legal_actions(p) and not s.is_chance_node():
                assert kernel.strategy(s, p) == python.strategy(s, p)


def test_rewards_are_mapped_onto_zero_one():
    # Kuhn's utilities are -2..2: a win of 2 is reward 1, a loss of 1 is 0.25.
    game = pyspiel.load_game("kuhn_poker")
    search = InformationSetSMMCTS(game, "exp3", gamma=0.1, seed=0)
    state = game.new_initial_state()
    for action in (2, 0):
        state.apply_action(action)
    search.run(search.worlds(state, 0), 300)
    for node in search.nodes.values():
        assert 0.0 <= node.total <= node.visits
        assert all(0.0 <= r <= c for r, c in zip(node.reward_sums, node.counts))


def test_exploration_is_taken_out_of_the_frequencies():
    # Frequencies of a sampler mixing 0.3 uniform over 3 actions with (1, 0, 0).
    assert without_exploration([0.8, 0.1, 0.1], 0.3) == pytest.approx([1.0, 0.0, 0.0])
    assert without_exploration([0.45, 0.45, 0.1], 0.3) == pytest.approx([0.5, 0.5, 0.0])
    assert without_exploration([1 / 3] * 3, 0.3) == pytest.approx([1 / 3] * 3)


@pytest.mark.parametrize("game_string", ["goofspiel(num_cards=4,imp_info=True)", "phantom_ttt"])
@pytest.mark.parametrize("selector", ["rm", "exp3", "ucb"])
def test_bot_plays_and_is_reproducible(game_string, selector):
    game = pyspiel.load_game(game_string)
    results = []
    for _ in range(2):
        bots = [ISSMMCTSBot(game, p, selector=selector, iterations=30, seed=10 + p)
                for p in (0, 1)]
        results.append(evaluate_bots.evaluate_bots(game.new_initial_state(), bots,
                                                   np.random.RandomState(0)))
    assert results[0] == results[1]
    assert sorted(results[0]) in ([-1.0, 1.0], [0.0, 0.0])


def test_policy_is_uniform_off_the_tree_and_a_distribution_on_it():
    bot = ISSMMCTSBot(GOOFSPIEL4, 0, iterations=50, seed=0)
    state = GOOFSPIEL4.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    bot.step(state)
    probs = bot.policy().action_probabilities(state, 0)
    assert sum(probs.values()) == pytest.approx(1.0)
    fresh = ISSMMCTSBot(GOOFSPIEL4, 0, iterations=50, seed=0)
    assert set(fresh.policy().action_probabilities(state, 0).values()) == {0.25}


def test_played_policy_is_the_thresholded_final_strategy_and_policy_the_unthresholded():
    state = GOOFSPIEL4.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    plain = ISSMMCTSBot(GOOFSPIEL4, 0, iterations=200, seed=0)
    cut = ISSMMCTSBot(GOOFSPIEL4, 0, iterations=200, seed=0, threshold=0.3)
    played = dict(cut.step_with_policy(state)[0])
    plain.step(state)
    assert cut.played_policy().action_probabilities(state, 0) == pytest.approx(played)
    assert cut.policy().action_probabilities(state, 0) == pytest.approx(
        plain.policy().action_probabilities(state, 0))
    assert cut.policy().action_probabilities(state, 0) != pytest.approx(played)


@pytest.mark.parametrize("kwargs, message", [
    (dict(selector="rmm"), "'m' variants"), (dict(selector="cfr"), "unknown selector"),
    (dict(selector="rmb"), "not available"),
    (dict(gamma=0.0), "gamma"), (dict(gamma=-0.1), "gamma"), (dict(gamma=1.5), "gamma"),
    (dict(selector="ucb", c=-1.0), "c must"), (dict(final_strategy="max"), "final_strategy"),
    (dict(threshold=1.0), "threshold"), (dict(engine="gpu"), "engine"),
    (dict(iterations=None, time_limit=None), "budget")])
def test_bad_arguments_are_refused(kwargs, message):
    args = dict(game=GOOFSPIEL4, player_id=0, iterations=10)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        ISSMMCTSBot(**args)


def test_game_without_information_states_is_refused():
    with pytest.raises(ValueError, match="information state"):
        ISSMMCTSBot(pyspiel.load_game("breakthrough"), 0)
    with pytest.raises(ValueError, match="information state"):
        ISSMMCTSBot(pyspiel.load_game("dark_chess"), 0)


def test_general_sum_game_is_refused():
    with pytest.raises(ValueError, match="zero-sum"):
        ISSMMCTSBot(pyspiel.load_game("matrix_pd"), 0)


@pytest.mark.parametrize("engine", ["kernel", "generic"])
def test_terminal_and_chance_states_are_refused(engine):
    game = pyspiel.load_game("kuhn_poker")
    bot = ISSMMCTSBot(game, 0, iterations=5, engine=engine)
    with pytest.raises(ValueError, match="no move"):
        bot.step(game.new_initial_state())
    terminal = game.new_initial_state()
    for action in (0, 1, 0, 0):
        terminal.apply_action(action)
    with pytest.raises(ValueError, match="no move"):
        bot.step(terminal)


def test_every_game_starts_fresh_trees_and_moves_within_a_game_share_them():
    bots = [ISSMMCTSBot(GOOFSPIEL4, p, iterations=40, seed=p) for p in (0, 1)]
    rng = np.random.RandomState(0)
    for game_number in (1, 2):
        evaluate_bots.evaluate_bots(GOOFSPIEL4.new_initial_state(), bots, rng)
        assert bots[0].search.iterations == 3 * 40  # every move of this game (the last card
        # plays itself), one search
        assert bots[0].total_iterations == game_number * 3 * 40


def test_state_of_another_game_is_refused():
    from smmcts_spiel.bots import OOSBot

    kuhn = pyspiel.load_game("kuhn_poker")
    state = kuhn.new_initial_state()
    for action in (0, 1):
        state.apply_action(action)
    for bot in (ISSMMCTSBot(GOOFSPIEL4, 0, iterations=5), OOSBot(GOOFSPIEL4, 0, iterations=5)):
        with pytest.raises(ValueError, match="build a new bot"):
            bot.step(state)


@pytest.mark.parametrize("build", [
    "ISSMMCTSBot(game, 0, iterations=10, seed=0)",
    "ISMCTSBot(game, 0, time_limit=0.01, worlds='information_set')"])
def test_building_a_bot_loads_the_compiled_information_set_walk(build):
    # In a fresh interpreter, so that nothing else loaded it: the first timed move of
    # the bot must not pay for loading (or compiling) the walk.
    code = ("import pyspiel, smmcts_spiel\n"
            "from smmcts_spiel.bots import ISSMMCTSBot\n"
            "from smmcts_spiel.bots.openspiel_bots import ISMCTSBot\n"
            "from smmcts_spiel.imperfect import compiled_information_sets as c\n"
            "game = pyspiel.load_game('leduc_poker')\n"
            f"bot = {build}\n"
            "print(len(c.enumerate_histories.signatures))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["1"]
