"""Online Outcome Sampling: OpenSpiel's anchor, targeting, information sets, the bot."""

import collections
import random

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import evaluate_bots, exploitability

from smmcts_spiel.bots import OOSBot
from smmcts_spiel.imperfect import information_sets
from smmcts_spiel.imperfect.oos import OutcomeSampling

KUHN = pyspiel.load_game("kuhn_poker")
GOOFSPIEL4 = pyspiel.load_game("goofspiel(num_cards=4,imp_info=True)")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kuhn_10000_unbiased_iterations_below_005_like_openspiel_oos_test(seed):
    # OpenSpiel's C++ OOS test: 10,000 unbiased (untargeted) iterations on Kuhn poker,
    # exploitability of the average strategy < 0.05.
    search = OutcomeSampling(KUHN, delta=0.0, epsilon=0.6, seed=seed)
    search.run(10_000)
    assert exploitability.exploitability(KUHN, search.policy()) < 0.05


@pytest.mark.slow
def test_targeted_search_still_converges_and_plays_the_dominant_bet():
    # Player 2 holding the king after a check: betting is the only equilibrium action.
    state = KUHN.new_initial_state()
    for action in (0, 2, 0):
        state.apply_action(action)
    search = OutcomeSampling(KUHN, delta=0.9, epsilon=0.6, seed=0)
    search.set_target(information_sets.information_set(KUHN, state, 1))
    search.run(20_000)
    first = exploitability.exploitability(KUHN, search.policy())
    search.run(80_000)
    # Importance weights make targeted sampling unbiased: the whole-game average strategy
    # converges too, not only the target.
    assert exploitability.exploitability(KUHN, search.policy()) < min(first, 0.06)
    assert search.average_strategy(state, 1)[1][1] > 0.99


def kuhn_first_decisions(players=(0, 1)):
    """Each player's first decision after every deal (player 1's after each first action)."""
    targets = {}
    for state, _ in information_sets.decision_states(KUHN):
        player = state.current_player()
        if player in players and len(state.history()) == 2 + player:
            targets.setdefault(state.information_state_string(), state)
    return list(targets.values())


def kuhn_nash_conv_after_targeted_search(state, seed, iterations=30_000):
    bot = OOSBot(KUHN, state.current_player(), iterations=iterations, seed=seed)
    bot.step(state)
    return exploitability.nash_conv(KUHN, bot.policy())


def test_kuhn_nash_conv_after_30000_targeted_iterations_from_a_deal_is_below_01():
    # Issue 24's target with the bot's defaults: the opening decision (player 1 holds the
    # king), mean of 4 seeds. delta=0.9 leaves the rest of the game 10% of the samples:
    # 0.10-0.13 (experiments/imperfect/NOTES.md).
    (state,) = [s for s in kuhn_first_decisions((0,)) if s.history()[0] == 2]
    assert np.mean([kuhn_nash_conv_after_targeted_search(state, seed)
                    for seed in range(4)]) < 0.1


@pytest.mark.slow
def test_kuhn_nash_conv_after_30000_targeted_iterations_from_any_deal_is_below_01():
    states = kuhn_first_decisions()
    assert len(states) == 9  # player 1's three cards, player 2's three after each action
    for state in states:
        values = [kuhn_nash_conv_after_targeted_search(state, seed) for seed in range(6)]
        assert np.mean(values) < 0.1, (state.history(), values)


def test_targeted_iterations_only_sample_histories_through_the_target():
    state = KUHN.new_initial_state()
    for action in (2, 0, 1):
        state.apply_action(action)
    target = information_sets.information_set(KUHN, state, 1)
    search = OutcomeSampling(KUHN, delta=0.999999, epsilon=0.6, seed=3)
    search.set_target(target)
    search.run(300)
    # Only the information sets on the way to and below the target were ever reached
    # (plus, with probability 1e-6 per iteration, nothing else).
    reached = {key for key in search.nodes}
    allowed = set()
    for history in target.histories:
        s = KUHN.new_initial_state()
        for a in history:
            if not s.is_chance_node():
                allowed.add((s.current_player(), s.information_state_string()))
            s.apply_action(a)
        for z, _ in information_sets.decision_states(s):
            allowed.add((z.current_player(), z.information_state_string()))
    assert reached <= allowed


@pytest.mark.parametrize("game", [KUHN, pyspiel.load_game("leduc_poker"),
                                  pyspiel.convert_to_turn_based(GOOFSPIEL4)],
                         ids=["kuhn", "leduc", "goofspiel4_turn_based"])
@pytest.mark.parametrize("compiled", [False, True])
def test_information_set_equals_brute_force(game, compiled):
    rng = random.Random(0)
    states = [s for s, _ in information_sets.decision_states(game)] \
        if game.get_type().short_name == "kuhn_poker" \
        else None
    if states is None:
        states = []
        for _ in range(15):
            s = game.new_initial_state()
            while not s.is_terminal():
                if s.is_chance_node():
                    s.apply_action(rng.choice([a for a, _ in s.chance_outcomes()]))
                    continue
                states.append(s.clone())
                s.apply_action(rng.choice(s.legal_actions()))
        states = rng.sample(states, 12)
    by_key = collections.defaultdict(set)
    chance = {}
    for state, prob in information_sets.decision_states(game):
        p = state.current_player()
        by_key[(p, state.information_state_string(p), len_own(state, p))].add(
            tuple(state.history()))
        chance[tuple(state.history())] = prob
    for state in states:
        p = state.current_player()
        found = information_sets.information_set(game, state, p, compiled=compiled)
        expected = by_key[(p, state.information_state_string(p), len_own(state, p))]
        assert set(found.histories) == expected
        for h, prob in zip(found.histories, found.chance_probabilities):
            assert prob == pytest.approx(chance[h])


def len_own(state, player):
    return sum(1 for step in state.full_history() if step.player == player)


def test_same_seed_same_tables():
    tables = []
    for _ in range(2):
        search = OutcomeSampling(KUHN, seed=7)
        search.run(500)
        tables.append({k: (n.regrets, n.strategy_sums) for k, n in search.nodes.items()})
    assert tables[0] == tables[1]


def test_bot_plays_goofspiel_and_reuses_its_tables():
    bots = [OOSBot(GOOFSPIEL4, p, iterations=200, seed=p) for p in (0, 1)]
    returns = evaluate_bots.evaluate_bots(GOOFSPIEL4.new_initial_state(), bots,
                                          np.random.RandomState(0))
    assert sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])
    # Tables persist between moves (Goofspiel plays the last, forced card itself).
    assert bots[0].search.iterations == 3 * 200
    nash_conv = exploitability.nash_conv(bots[0].search.search_game, bots[0].policy())
    assert 0 <= nash_conv < 2.0


def test_second_mover_of_a_simultaneous_round_targets_every_hidden_first_move():
    bot = OOSBot(GOOFSPIEL4, 1, iterations=10, seed=0)
    state = GOOFSPIEL4.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    policy, action = bot.step_with_policy(state)
    assert action in state.legal_actions(1)
    decision = information_sets.decision_state(bot.search.search_game, state, 1)
    target = information_sets.information_set(bot.search.search_game, decision, 1)
    assert {h[-1] for h in target.histories} == set(state.legal_actions(0))


def test_a_thresholded_bot_plays_only_its_likely_actions_and_exports_what_converges():
    # Same seed, same search: the thresholded bot plays its final strategy without the
    # actions below 0.5, renormalised, and policy() still exports the average strategy.
    state = KUHN.new_initial_state()
    for action in (0, 2):  # player 0 holds the jack
        state.apply_action(action)
    plain = OOSBot(KUHN, 0, iterations=40, seed=5, threshold=0.0)
    cut = OOSBot(KUHN, 0, iterations=40, seed=5, threshold=0.5)
    (a_plain, p_plain), (a_cut, p_cut) = (zip(*bot.step_with_policy(state)[0])
                                          for bot in (plain, cut))
    assert a_plain == a_cut and min(p_plain) < 0.5 < max(p_plain)  # a mixed strategy
    kept = [p if p >= 0.5 else 0.0 for p in p_plain]
    assert p_cut == pytest.approx([p / sum(kept) for p in kept])
    assert cut.policy().action_probabilities(state) == pytest.approx(
        plain.policy().action_probabilities(state))
    # played_policy() is what the bot plays: the thresholded final strategy.
    assert cut.played_policy().action_probabilities(state) == pytest.approx(
        dict(zip(a_cut, p_cut)))
    assert plain.played_policy().action_probabilities(state) == pytest.approx(
        dict(zip(a_plain, p_plain)))


@pytest.mark.parametrize("kwargs, message", [
    (dict(delta=1.0), "delta"), (dict(delta=1.5), "delta"), (dict(delta=-0.1), "delta"),
    (dict(epsilon=0.0), "epsilon"), (dict(epsilon=1.5), "epsilon"),
    (dict(epsilon=-0.2), "epsilon"), (dict(gamma=-0.01), "gamma"), (dict(gamma=1.0), "gamma"),
    (dict(weighting="yes"), "weighting"), (dict(preset="aamas"), "preset"),
    (dict(final_strategy="best"), "final_strategy"),
    (dict(threshold=1.0), "threshold"), (dict(threshold=-0.1), "threshold"),
    (dict(iterations=0), "iterations"), (dict(time_limit=-1.0), "time_limit"),
    (dict(player_id=2), "player_id")])
def test_bad_arguments_are_refused(kwargs, message):
    args = dict(game=KUHN, player_id=0, iterations=10)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        OOSBot(**args)


def test_general_sum_game_is_refused():
    with pytest.raises(ValueError, match="zero-sum"):
        OOSBot(pyspiel.load_game("matrix_pd"), 0)


def test_a_game_without_information_state_strings_is_refused():
    with pytest.raises(ValueError, match="information state"):
        OOSBot(pyspiel.load_game("dark_chess"), 0)


def test_terminal_chance_and_foreign_states_are_refused():
    bot = OOSBot(KUHN, 0, iterations=5)
    chance = KUHN.new_initial_state()
    with pytest.raises(ValueError, match="no move"):
        bot.step(chance)
    terminal = KUHN.new_initial_state()
    for action in (0, 1, 0, 0):
        terminal.apply_action(action)
    assert terminal.is_terminal()
    with pytest.raises(ValueError, match="no move"):
        bot.step(terminal)
    with pytest.raises(ValueError, match="leduc_poker"):
        bot.step(pyspiel.load_game("leduc_poker").new_initial_state().child(0).child(1))


def test_paper_preset_takes_the_paper_s_settings_and_arguments_override_them():
    bot = OOSBot(GOOFSPIEL4, 0, iterations=5, preset="paper")
    search = bot.search
    assert (search.delta, search.epsilon, search.gamma, search.weighting,
            bot.final_strategy, bot.threshold) == (0.9, 0.4, 0.01, True, "current", 0.0)
    bot = OOSBot(GOOFSPIEL4, 0, iterations=5, preset="paper", epsilon=0.6, weighting=False)
    assert (bot.search.epsilon, bot.search.weighting, bot.search.gamma) == (0.6, False, 0.01)


def test_default_preset_plays_its_average_strategy_thresholded_and_arguments_override_it():
    # The defaults chosen by the pre-registered matches P9 and P10: the paper's search with
    # delta 0.5, playing the average strategy without the actions below 0.3.
    bot = OOSBot(GOOFSPIEL4, 0, iterations=5)
    assert (bot.search.delta, bot.search.epsilon, bot.search.gamma, bot.search.weighting,
            bot.final_strategy, bot.threshold) == (0.5, 0.4, 0.01, True, "average", 0.3)
    bot = OOSBot(GOOFSPIEL4, 0, iterations=5, final_strategy="current", threshold=0.0)
    assert (bot.final_strategy, bot.threshold) == ("current", 0.0)


def test_w_t_is_one_over_the_average_strategies_reach_and_scales_every_update():
    # Fresh tables: the average strategies are uniform, so player 1's first information
    # set (its card) is reached with the chance probability 1/3 and w_T = 0.1 + 0.9 * 3.
    state = KUHN.new_initial_state()
    state.apply_action(2)
    state.apply_action(0)
    plain = OutcomeSampling(KUHN, delta=0.9, seed=5)
    weighted = OutcomeSampling(KUHN, delta=0.9, seed=5, weighting=True)
    assert weighted.mean_reach(state) == pytest.approx(1 / 3)
    for search in (plain, weighted):
        search.target(state, 0)
        search.run(400)
    assert (plain.weight, weighted.weight) == (1.0, pytest.approx(2.8))
    # A factor shared by every update of a search: same samples, tables times w_T.
    assert plain.nodes.keys() == weighted.nodes.keys()
    for key, node in plain.nodes.items():
        assert weighted.nodes[key].regrets == pytest.approx(
            [2.8 * r for r in node.regrets], rel=1e-9, abs=1e-12)
        assert weighted.nodes[key].strategy_sums == pytest.approx(
            [2.8 * x for x in node.strategy_sums], rel=1e-9, abs=1e-12)


def test_every_game_starts_a_fresh_search_and_moves_within_a_game_share_it():
    bots = [OOSBot(GOOFSPIEL4, p, iterations=100, seed=p) for p in (0, 1)]
    rng = np.random.RandomState(0)
    evaluate_bots.evaluate_bots(GOOFSPIEL4.new_initial_state(), bots, rng)
    assert bots[0].search.iterations == 3 * 100  # three searched moves, one search
    evaluate_bots.evaluate_bots(GOOFSPIEL4.new_initial_state(), bots, rng)
    assert bots[0].search.iterations == 3 * 100  # restart_at cleared the first game's
    assert bots[0].total_iterations == 6 * 100


def test_step_out_of_turn_is_refused():
    state = KUHN.new_initial_state()
    state.apply_action(0)
    state.apply_action(1)
    with pytest.raises(ValueError, match="no move"):
        OOSBot(KUHN, 1, iterations=5).step(state)
