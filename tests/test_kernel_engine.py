"""The kernel engine runs the generic engine's algorithm: same statistics, same interface."""

import time

import numpy as np
import pyspiel
import pytest

import smmcts_spiel  # noqa: F401  (registers smmcts_goofspiel)
from smmcts_spiel.bots import SMMCTSBot
from smmcts_spiel.exact import exploitability
from smmcts_spiel.search.array_engine import ArraySMMCTS
from smmcts_spiel.search.evaluators import RandomRolloutEvaluator
from smmcts_spiel.search.kernel_engine import KernelSMMCTS
from smmcts_spiel.search.smmcts import FINAL_STRATEGIES, SMMCTS, final_probabilities
from smmcts_spiel.search.tree_arrays import MEAN, VISITS, X

SELECTORS = ["rm", "rmm", "rmb", "rmbm", "exp3", "exp3m", "ucb", "ucbm"]
GOOF4 = "goofspiel(num_cards=4,imp_info=False,points_order=descending)"
GOOF3_RANDOM = ("goofspiel(num_cards=3,imp_info=False,points_order=random,"
                "returns_type=point_difference)")
GOOF4_RANDOM = ("goofspiel(num_cards=4,imp_info=False,points_order=random,"
                "returns_type=point_difference)")


def tree_size(node) -> int:
    children = node.children or []
    if isinstance(children, dict):
        children = children.values()
    return 1 + sum(tree_size(child) for child in children if child is not None)


def statistics(engine, game, selector, iterations, seeds, final_strategy="empirical"):
    """Per seed: NashConv of the search's policy, root mean value, tree size."""
    rows = []
    for seed in seeds:
        search = engine(game, selector=selector, seed=seed, final_strategy=final_strategy)
        root = search.run(game.new_initial_state(), iterations)
        size = search.counters[0] if engine is KernelSMMCTS else tree_size(root)
        rows.append((exploitability.evaluate(game, search.policy()).nash_conv, root.mean(),
                     size))
    return np.array(rows, dtype=float)


def assert_same_distribution(a, b):
    """Column means agree within 4 standard errors of their difference."""
    se = np.sqrt(a.var(axis=0, ddof=1) / len(a) + b.var(axis=0, ddof=1) / len(b))
    assert np.all(np.abs(a.mean(axis=0) - b.mean(axis=0)) <= 4 * se + 1e-9), (
        a.mean(axis=0), b.mean(axis=0), se)


@pytest.mark.parametrize("game_string, selector, final_strategy", [
    (GOOF4, "rm", "empirical"),
    (GOOF3_RANDOM, "exp3m", "average"),
    ("oshi_zumo(coins=3,size=1,horizon=4)", "ucb", "empirical"),
    ("smmcts_random_stacked_matrix(depth=2,branching=3,chance_branching=2,seed=1)", "rmm",
     "empirical"),
])
def test_same_statistics_as_the_generic_engine_quick(game_string, selector, final_strategy):
    game = pyspiel.load_game(game_string)
    seeds = range(8)
    assert_same_distribution(statistics(SMMCTS, game, selector, 1_000, seeds, final_strategy),
                             statistics(KernelSMMCTS, game, selector, 1_000, seeds,
                                        final_strategy))


@pytest.mark.slow
@pytest.mark.parametrize("selector", SELECTORS)
def test_same_statistics_as_the_generic_engine(selector):
    game = pyspiel.load_game(GOOF3_RANDOM)
    seeds = range(20)
    for final_strategy in ("empirical", "average"):
        assert_same_distribution(
            statistics(SMMCTS, game, selector, 2_000, seeds, final_strategy),
            statistics(KernelSMMCTS, game, selector, 2_000, seeds, final_strategy))


@pytest.mark.parametrize("engine", [KernelSMMCTS, ArraySMMCTS])
def test_exploitability_falls_as_with_the_reference_engine(engine):
    """Cross-check with the exact evaluator: RM's empirical strategy on Goofspiel-3 falls
    to the same NashConv (the gamma = 0.05 exploration floor) with each compiled engine
    (compiled or C++ rollouts) as with the reference engine (Python rollouts)."""
    game = pyspiel.load_game("goofspiel(num_cards=3,imp_info=False,points_order=descending)")
    state = game.new_initial_state()
    search = engine(game, selector="rm", seed=0)
    search.run(state, 100)
    early = exploitability.evaluate(game, search.policy()).nash_conv
    search.run(state, 20_000)
    late = exploitability.evaluate(game, search.policy()).nash_conv
    reference = SMMCTS(game, selector="rm", seed=0)
    reference.run(state, 20_100)
    assert late < 0.12 < early
    assert late == pytest.approx(exploitability.evaluate(game, reference.policy()).nash_conv,
                                 abs=0.02)


def test_same_seed_same_tree():
    game = pyspiel.load_game(GOOF4_RANDOM)
    searches = [KernelSMMCTS(game, selector="exp3", seed=9) for _ in range(2)]
    for search in searches:
        search.run(game.new_initial_state(), 3_000)
    a, b = searches
    assert a.counters.tolist() == b.counters.tolist()
    n = a.counters[0]
    assert np.array_equal(a.nodes_f[:, :n], b.nodes_f[:, :n])
    assert np.array_equal(a.slots[:, :a.counters[2]], b.slots[:, :b.counters[2]])


def test_a_fresh_tree_at_the_root_state_s_history_replays_nothing(monkeypatch):
    """A new tree from the state the root's array state already holds (each fresh search
    of a fresh bot: its constructor set the root to the initial state) keeps that array
    state instead of replaying the history again, and searches as a search that replays it."""
    game = pyspiel.load_game(GOOF4_RANDOM)
    state = game.new_initial_state()
    state.apply_action(state.legal_actions()[0])  # the first point card
    kept, replayed = KernelSMMCTS(game, seed=3), KernelSMMCTS(game, seed=3)
    replays = []
    compiled = kept._compiled
    monkeypatch.setattr(kept, "_compiled", type(compiled)(
        run=compiled.run, new_root=compiled.new_root,
        replay=lambda *args: replays.append(1) or compiled.replay(*args)))
    for search in (kept, replayed):
        search.run(state, 500)
        search.reset()
    assert replays == [1]  # the first run: from the initial state to the card's
    replayed._root_state_history = None  # (replays the history, as before 27 Nov 2026)
    for search in (kept, replayed):
        search.run(state, 1_000)
    assert replays == [1]
    assert kept.counters.tolist() == replayed.counters.tolist()
    n = kept.counters[0]
    assert np.array_equal(kept.nodes_f[:, :n], replayed.nodes_f[:, :n])
    kept.run(game.new_initial_state(), 10)  # another state: replayed
    assert replays == [1, 1]


@pytest.mark.parametrize("game_string", [
    "blotto(coins=5,fields=3)", "oshi_zumo(coins=6,size=2,horizon=8)", GOOF4_RANDOM])
def test_regret_matching_selection_without_the_distribution_grows_the_same_tree(game_string):
    """Regret matching selects without writing its distribution unless the average strategy
    needs it (``tree_arrays.select``), and its Update reads the children's kept means
    (``MEAN``): the tree is the one the distributions would have grown, and every node's
    kept mean is its ``X / n`` (also after re-rooting)."""
    game = pyspiel.load_game(game_string)
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    searches = [KernelSMMCTS(game, selector="rm", seed=4, final_strategy=final)
                for final in ("empirical", "average")]  # sampling only / the distributions
    for search in searches:
        search.run(state, 4_000)
    a, b = searches
    assert a.counters.tolist() == b.counters.tolist()
    n, slots = a.counters[0], a.counters[2]
    assert np.array_equal(a.nodes_f[:, :n], b.nodes_f[:, :n])
    assert np.array_equal(a.slots[:2, :slots], b.slots[:2, :slots])  # regrets and counts

    def assert_means_kept(search):
        visits, totals, means = search.nodes_f[(VISITS, X, MEAN), :search.counters[0]]
        visited = visits > 0
        assert visited.sum() > 1
        assert np.array_equal(means[visited], totals[visited] / visits[visited])

    assert_means_kept(a)
    root = a.root
    state.apply_actions([root.actions[0][int(np.argmax(root.counts[0]))],
                         root.actions[1][int(np.argmax(root.counts[1]))]])
    if not state.is_terminal():  # (Blotto ends after one move)
        a.run(state, 200)  # re-rooted: the kept subtree copied, then searched
        assert_means_kept(a)


def test_tree_is_reused_along_the_actual_history():
    game = pyspiel.load_game(GOOF4)
    search = KernelSMMCTS(game, seed=0)
    state = game.new_initial_state()
    root = search.run(state, 2_000)
    i = int(np.argmax(root.counts[0]))
    j = int(np.argmax(root.counts[1]))
    child = root.child((root.actions[0][i], root.actions[1][j]))
    visits, strategy, total = child.visits, child.strategy(1), child.total
    state.apply_actions([root.actions[0][i], root.actions[1][j]])
    # The subtree is copied into fresh arrays (the rest of the tree is dropped) unchanged.
    new_root = search.set_root(state)
    assert (new_root.visits, new_root.strategy(1), new_root.total) == (visits, strategy, total)
    assert search.counters[0] < 2_000
    assert search.run(state, 10).visits > visits
    assert search.set_root(game.new_initial_state()).visits == 0  # a fresh tree


def test_subtree_copy_keeps_every_statistic():
    """Re-rooting at a child gives the same tree as the child's subtree before."""
    game = pyspiel.load_game(GOOF4_RANDOM)
    search = KernelSMMCTS(game, seed=0, final_strategy="average")
    state = game.new_initial_state()
    search.run(state, 5_000)
    state.apply_action(2)
    state.apply_actions([1, 3])
    state.apply_action(0)

    def subtree(node, out):
        out.append((node.visits, node.total, node.is_chance, node.is_terminal))
        if node.is_open and not node.is_terminal:
            if node.is_chance:
                return
            out.append((node.actions, node.counts, node.strategy(0, "average")))
            for a in node.actions[0]:
                for b in node.actions[1]:
                    child = node.child((a, b))
                    if child is not None:
                        subtree(child, out)
        return out

    before = subtree(search.find(state), [])
    assert len(before) > 10
    assert subtree(search.set_root(state), []) == before


def test_tree_reuse_through_chance_keeps_growing_the_arrays():
    game = pyspiel.load_game("goofspiel(num_cards=6,imp_info=False,points_order=random)")
    search = KernelSMMCTS(game, seed=1, initial_nodes=64)  # forces growth many times
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            continue
        assert search.run(state, 500).visits > 0
        state.apply_actions([int(rng.choice(state.legal_actions(p))) for p in (0, 1)])
    assert search.nodes_i.shape[1] > 64


def test_policy_export_is_the_tree_strategy_and_evaluable():
    game = pyspiel.load_game(GOOF4_RANDOM)
    bot = SMMCTSBot(game, 0, iterations=2_000, seed=3, final_strategy="average")
    assert isinstance(bot.search, KernelSMMCTS)
    state = game.new_initial_state()
    state.apply_action(1)
    _, action = bot.step_with_policy(state)
    root = bot.search.root
    policy = bot.policy()
    for player in (0, 1):
        assert list(policy.action_probabilities(state, player).values()) == pytest.approx(
            root.strategy(player, "average"))
        assert list(bot.played_policy().action_probabilities(state, player).values()) == (
            pytest.approx(root.strategy(player, "average", threshold=bot.search.threshold)))
    report = exploitability.evaluate(game, policy)
    assert 0 <= report.e1 and 0 <= report.e2 and np.isfinite(report.nash_conv)


@pytest.mark.parametrize("selector", SELECTORS)
@pytest.mark.parametrize("final_strategy", FINAL_STRATEGIES)
def test_every_selector_and_final_strategy_plays(selector, final_strategy):
    game = pyspiel.load_game("smmcts_goofspiel(num_cards=4,points_order=random)")
    bot = SMMCTSBot(game, 1, selector=selector, iterations=300, seed=0,
                    final_strategy=final_strategy)
    assert isinstance(bot.search, KernelSMMCTS)
    state = game.new_initial_state()
    state.apply_action(2)
    pairs, action = bot.step_with_policy(state)
    assert action in state.legal_actions(1)
    assert sum(p for _, p in pairs) == pytest.approx(1.0)


def test_time_limit_is_kept():
    game = pyspiel.load_game("goofspiel(num_cards=8,imp_info=False,points_order=descending)")
    bot = SMMCTSBot(game, 0, iterations=None, time_limit=0.05, seed=0)
    bot.step(game.new_initial_state())  # loads the compiled engine
    start = time.perf_counter()
    bot.step(game.new_initial_state())
    # Generous bound (shared test machines); bench_bot.py reports the actual overshoot.
    assert time.perf_counter() - start < 0.15
    assert bot.search.last_iterations > 100


def test_engine_choice():
    goofspiel = pyspiel.load_game(GOOF4)
    assert isinstance(SMMCTSBot(goofspiel, 0).search, KernelSMMCTS)
    assert isinstance(SMMCTSBot(goofspiel, 0, engine="generic").search, ArraySMMCTS)
    assert isinstance(SMMCTSBot(goofspiel, 0, engine="reference").search, SMMCTS)
    assert isinstance(SMMCTSBot(goofspiel, 0, evaluator="heuristic").search, KernelSMMCTS)
    python_evaluator = RandomRolloutEvaluator(seed=0)
    assert isinstance(SMMCTSBot(goofspiel, 0, evaluator=python_evaluator).search, ArraySMMCTS)
    assert isinstance(SMMCTSBot(pyspiel.load_game("tic_tac_toe"), 0).search, ArraySMMCTS)
    with pytest.raises(ValueError, match="no game kernel"):
        SMMCTSBot(pyspiel.load_game("tic_tac_toe"), 0, engine="kernel")
    with pytest.raises(ValueError, match="engine="):
        SMMCTSBot(goofspiel, 0, engine="kernel", evaluator=python_evaluator)
    with pytest.raises(ValueError, match="kernel evaluator"):
        SMMCTSBot(goofspiel, 0, engine="generic", evaluator="heuristic")
    with pytest.raises(ValueError, match="evaluator must be one of"):
        SMMCTSBot(goofspiel, 0, evaluator="nonsense")
    with pytest.raises(ValueError, match="engine must be"):
        SMMCTSBot(goofspiel, 0, engine="fast")


def test_heuristic_evaluator_plays_well():
    """The Goofspiel heuristic needs no rollouts and still beats random play."""
    game = pyspiel.load_game("goofspiel(num_cards=6,imp_info=False,points_order=descending)")
    wins = losses = 0
    for k in range(20):
        bot = SMMCTSBot(game, 0, evaluator="heuristic", iterations=300, seed=k)
        rng = np.random.default_rng(k)
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_actions([bot.step(state), int(rng.choice(state.legal_actions(1)))])
        wins += state.returns()[0] > 0
        losses += state.returns()[0] < 0
    assert wins >= 2 * losses


def test_final_move_rules():
    counts, sums = [2, 7, 1], [1.0, 8.0, 1.0]
    assert final_probabilities(counts, sums, "empirical", 0.3) == pytest.approx([0.2, 0.7, 0.1])
    assert final_probabilities(counts, sums, "average", 0.3) == pytest.approx([0.1, 0.8, 0.1])
    # (0.1 - 0.1) / 0.7 = 0 and (0.8 - 0.1) / 0.7 = 1: the exploration is all that was mixed in.
    assert final_probabilities(counts, sums, "average_no_exploration", 0.3) == pytest.approx(
        [0.0, 1.0, 0.0])
    assert final_probabilities(counts, sums, "most_visited", 0.3) == [0.0, 1.0, 0.0]
    assert final_probabilities([0, 0], [0.0, 0.0], "most_visited", 0.1) == [0.5, 0.5]
    # Thresholding: what falls below the threshold is dropped, the rest renormalised ...
    assert final_probabilities(counts, sums, "empirical", 0.3, threshold=0.15) == pytest.approx(
        [2 / 9, 7 / 9, 0.0])
    # ... and the most likely actions always stay.
    assert final_probabilities([4, 4, 2], sums, "empirical", 0.3, threshold=0.5) == (
        pytest.approx([0.5, 0.5, 0.0]))


@pytest.mark.parametrize("engine", [KernelSMMCTS, SMMCTS])
def test_final_move_rules_read_the_root_statistics(engine):
    game = pyspiel.load_game(GOOF4)
    search = engine(game, selector="rm", gamma=0.2, seed=0,
                    final_strategy="average_no_exploration")
    root = search.run(game.new_initial_state(), 2_000)
    average = np.array(root.strategy(0, "average"))
    kept = np.clip((average - 0.2 / 4) / 0.8, 0, None)
    assert root.strategy(0, "average_no_exploration", 0.2) == pytest.approx(kept / kept.sum())
    counts = root.counts[0]
    assert root.strategy(0, "most_visited")[int(np.argmax(counts))] == 1.0
    policy = search.policy().action_probabilities(game.new_initial_state(), 0)
    assert list(policy.values()) == pytest.approx(kept / kept.sum())


@pytest.mark.parametrize("game_string, evaluator", [
    ("oshi_zumo(coins=10,size=3,horizon=20)", "heuristic"),
    ("goofspiel(num_cards=5,imp_info=False)", "random_rollout"),
    ("smmcts_random_stacked_matrix(depth=2,branching=2)", "random_rollout"),
])
def test_the_bot_takes_each_kernel_s_measured_default_evaluator(game_string, evaluator):
    game = pyspiel.load_game(game_string)
    assert SMMCTSBot(game, 0, iterations=10, seed=0).search.evaluator == evaluator
    chosen = SMMCTSBot(game, 0, iterations=10, seed=0, evaluator="random_rollout")
    assert chosen.search.evaluator == "random_rollout"


def test_ucb_with_every_bound_tied_selects_uniformly():
    """A tie tolerance above every bound's spread makes UCB a uniform sampler: the root's
    visit counts are then those of uniform draws."""
    game = pyspiel.load_game(GOOF4)
    search = KernelSMMCTS(game, selector="ucb", tie_tolerance=100.0, seed=3)
    root = search.run(game.new_initial_state(), 40_000)
    counts = np.array(root.counts[0], dtype=float)
    assert np.all(np.abs(counts / counts.sum() - 1 / len(counts)) < 0.02), counts
    greedy = KernelSMMCTS(game, selector="ucb", seed=3).run(game.new_initial_state(), 40_000)
    assert np.ptp(np.array(greedy.counts[0]) / 40_000) > 0.1  # plain UCB is not uniform
