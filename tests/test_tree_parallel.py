"""Tree parallelism: several threads growing one kernel-engine tree (``threads=N`` of
:class:`KernelSMMCTS`, ``parallel="tree"`` of the bot).

Not reproducible (the tree depends on the threads' timing), so these tests check
invariants: every node reached once from the root, no child claimed but never linked, the
visits and counts consistent, the budget met exactly, and equilibria found.
"""

import os

import numpy as np
import pyspiel
import pytest

from smmcts_spiel.bot_specs import make_bot
from smmcts_spiel.bots import SMMCTSBot
from smmcts_spiel.search import tree_arrays as ta
from smmcts_spiel.search.kernel_engine import KernelSMMCTS
from smmcts_spiel.search.lost_updates import lost_updates

CORES = len(os.sched_getaffinity(0))
needs_two_cores = pytest.mark.skipif(CORES < 2, reason="threads=2 needs two usable cores")


def check_tree(search, fresh_root=False):
    """The structural checks of a finished search's tree: each node reached from the root
    (node 0) is below the node count and reached exactly once, every children entry is a
    node or missing (-1, never a claim left behind), the node, pool and slot entries in
    use plus those the threads' blocks left unused (``search.unused``) are exactly the
    counters, and at each opened decision node both players' counts add up to its visits
    plus its expansions, less the visit of its own expansion (a chance node's children have
    none; at the root only if ``fresh_root``: it may have been created or expanded as a
    child): exactly, since tree parallelism adds visits and counts atomically and sums the
    threads' own root statistics."""
    nodes_i, nodes_f, pool, slots = search.nodes_i, search.nodes_f, search.pool, search.slots
    num_nodes = int(search.counters[ta.NUM_NODES])
    seen = np.zeros(num_nodes, bool)
    used = np.array([0, 0, 0])
    stack = [(0, False)]
    while stack:
        node, expanded_from_parent = stack.pop()
        assert 0 <= node < num_nodes and not seen[node], f"node {node} reached twice"
        seen[node] = True
        used[ta.NUM_NODES] += 1
        c0 = int(nodes_i[ta.CHILD, node])
        assert c0 >= -1, f"node {node} left half-opened"
        if c0 < 0:
            continue
        kind = nodes_i[ta.KIND, node]
        n1, n2, s = (int(nodes_i[f, node]) for f in (ta.N1, ta.N2, ta.SLOT))
        width = n1 if kind == ta.CHANCE else n1 * n2
        used[ta.POOL_USED] += width + ta.block_count(kind, width) + n1 + n2
        used[ta.SLOTS_USED] += n1 + n2
        children = pool[c0:c0 + width]
        assert (children >= -1).all(), f"a child of node {node} claimed but never linked"
        stack.extend((int(c), kind == ta.DECISION) for c in children if c >= 0)
        if kind == ta.DECISION:
            assert nodes_i[ta.EXPANDED, node] == (children >= 0).sum()
            if node == 0 and not fresh_root:
                continue
            expected = (nodes_f[ta.VISITS, node] + nodes_i[ta.EXPANDED, node]
                        - expanded_from_parent)
            for counts in (slots[ta.COUNT, s:s + n1], slots[ta.COUNT, s + n1:s + n1 + n2]):
                assert counts.sum() == expected, node
    np.testing.assert_array_equal(used + search.unused, search.counters,
                                  "entries in use and left unused are the claimed ones")


@needs_two_cores
@pytest.mark.parametrize("game_string", [
    "oshi_zumo(coins=10,size=3,horizon=20)",
    "markov_soccer(horizon=20)",  # chance nodes
    "goofspiel(num_cards=6,points_order=random)",
])
def test_a_shared_tree_is_well_formed_and_the_budget_is_met(game_string):
    game = pyspiel.load_game(game_string)
    one = KernelSMMCTS(game, seed=3)
    one.run(game.new_initial_state(), iterations=3000)
    check_tree(one, fresh_root=True)  # as for one thread
    assert not one.unused.any()
    search = KernelSMMCTS(game, seed=3, threads=2)
    for iterations in (1, 3000, 7001):
        search.run(game.new_initial_state(), iterations=iterations)
        assert search.last_iterations == iterations
        check_tree(search, fresh_root=True)
    # Every iteration went through the root (kept: the same state) or expanded it.
    root_expansions = search.nodes_i[ta.EXPANDED, 0] if not search.root.is_chance else 0
    through_root = search.nodes_f[ta.VISITS, 0] + root_expansions
    assert through_root == 1 + 3000 + 7001


@needs_two_cores
def test_a_shared_tree_grows_its_arrays_and_is_reused_between_moves():
    game = pyspiel.load_game("oshi_zumo(coins=10,size=3,horizon=20)")
    search = KernelSMMCTS(game, seed=5, threads=2, initial_nodes=64)  # grows many times
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    for _ in range(4):
        root = search.run(state, iterations=2000)
        check_tree(search)
        i, j = (int(rng.integers(len(root.actions[p]))) for p in (0, 1))
        state.apply_actions([root.actions[0][i], root.actions[1][j]])
        kept = search.find(state)
        assert kept is not None and kept.visits > 0  # the subtree is kept and re-rooted
    assert search.nodes_i.shape[1] > 64


@needs_two_cores
@pytest.mark.parametrize("game_string,equilibrium", [
    ("matrix_mp", [0.5, 0.5]),
    ("matrix_rps", [1 / 3, 1 / 3, 1 / 3]),
])
def test_a_shared_tree_finds_the_equilibrium(game_string, equilibrium):
    game = pyspiel.load_game(game_string)
    search = KernelSMMCTS(game, selector="rm", gamma=0.05, seed=1, threads=2)
    root = search.run(game.new_initial_state(), iterations=40000)
    for player in (0, 1):
        np.testing.assert_allclose(root.strategy(player), equilibrium, atol=0.05)


@needs_two_cores
def test_tree_parallel_bots_play_from_specs_and_time_limits():
    game = pyspiel.load_game("oshi_zumo(coins=10,size=3,horizon=20)")
    bot = make_bot("smmcts(threads=2,parallel=tree,time_limit=0.01)", game, 0, seed=2)
    assert isinstance(bot.search, KernelSMMCTS) and bot.search.threads == 2
    state = game.new_initial_state()
    while not state.is_terminal():
        action = bot.step(state)
        assert action in state.legal_actions(0)
        state.apply_actions([action, state.legal_actions(1)[0]])
    check_tree(bot.search)


@needs_two_cores
def test_the_default_oshi_zumo_runs_tree_parallel_within_the_default_memory():
    """A horizon of 1,000 makes a worst-case iteration's room large; the minimum max_memory
    counts one iteration per thread, not the threads' blocks (twice that: 7 GB, refused)."""
    game = pyspiel.load_game("oshi_zumo")
    search = KernelSMMCTS(game, seed=6, threads=2)
    assert search.max_memory == ta.DEFAULT_MAX_MEMORY
    search.run(game.new_initial_state(), iterations=2000)
    assert search.last_iterations == 2000
    check_tree(search, fresh_root=True)


def test_parallel_is_checked():
    game = pyspiel.load_game("oshi_zumo(coins=10,size=3,horizon=20)")
    with pytest.raises(ValueError, match="parallel must be one of root, tree"):
        SMMCTSBot(game, 0, parallel="leaf")


def test_thread_scratch_arrays_have_cache_lines_of_their_own():
    arrays = [ta.padded_zeros(shape, dtype) for shape, dtype in
              [((3, 5), np.int64), (7, np.float64), ((4, 6), np.float64), (1, np.int64),
               (5, np.int32)] * 10]
    lines = set()
    for array in arrays:
        assert array.flags.c_contiguous and not array.any()
        start = array.ctypes.data
        assert start % 64 == 0, "starts a cache line"
        own = set(range(start // 64, (start + array.nbytes - 1) // 64 + 1))
        assert not own & lines, "shares a cache line with another thread's array"
        lines |= own


# -- the virtual loss (search/in_flight.py) ------------------------------------------------

def tree_arrays_in_use(search):
    n, p, s = (int(x) for x in search.counters)
    return (search.nodes_i[:, :n], search.nodes_f[:, :n], search.pool[:p], search.slots[:, :s])


@pytest.mark.parametrize("game_string", [
    "oshi_zumo(coins=10,size=3,horizon=20)", "markov_soccer(horizon=20)",
    "goofspiel(num_cards=5,points_order=random)"])
@pytest.mark.parametrize("selector, final_strategy", [
    ("rm", "empirical"), ("rmm", "empirical"), ("exp3", "average"), ("ucb", "empirical"),
    ("rmb", "average")])
def test_one_thread_grows_the_same_tree_with_and_without_the_virtual_loss(
        game_string, selector, final_strategy):
    """With no other thread nothing is in flight, so the virtual loss's selection (which
    runs: the thread publishes its path) is the paper's, bit for bit, and so the tree."""
    game = pyspiel.load_game(game_string)
    state = game.new_initial_state()
    trees = []
    for virtual_loss in (False, True):
        search = KernelSMMCTS(game, selector=selector, final_strategy=final_strategy, seed=4,
                              virtual_loss=virtual_loss)
        search.run(state, iterations=3000)
        trees.append(tree_arrays_in_use(search))
    assert search.flights.shape[1] > 0 and not search.flights[:, 0].any()
    for paper, with_loss in zip(*trees):
        np.testing.assert_array_equal(paper, with_loss)


@needs_two_cores
@pytest.mark.parametrize("game_string", [
    "oshi_zumo(coins=10,size=3,horizon=20)", "markov_soccer(horizon=20)", "blotto"])
@pytest.mark.parametrize("selector", ["rm", "exp3", "ucb"])
def test_a_shared_tree_with_the_virtual_loss_is_well_formed_and_leaves_nothing_in_flight(
        game_string, selector):
    """After every run no iteration is in flight (each thread's published depth back to 0),
    the tree's identities hold exactly (no update lost, none added by the virtual loss),
    and the budget is met."""
    game = pyspiel.load_game(game_string)
    search = KernelSMMCTS(game, selector=selector, seed=7, threads=2, virtual_loss=True)
    state = game.new_initial_state()
    for iterations in (1, 5000, 20001):
        search.run(state, iterations=iterations)
        assert search.last_iterations == iterations
        assert not search.flights[:, 0].any(), "an iteration left in flight"
        check_tree(search, fresh_root=True)
        assert lost_updates(search) == 0
        search.reset()
    search.run(state, iterations=None, time_limit=0.05)
    assert not search.flights[:, 0].any()
    check_tree(search, fresh_root=True)


@needs_two_cores
@pytest.mark.parametrize("selector", ["rm", "exp3"])
@pytest.mark.parametrize("game_string,equilibrium", [
    ("matrix_mp", [0.5, 0.5]),
    ("matrix_rps", [1 / 3, 1 / 3, 1 / 3]),
])
def test_a_shared_tree_with_the_virtual_loss_finds_the_equilibrium(game_string, equilibrium,
                                                                    selector):
    game = pyspiel.load_game(game_string)
    search = KernelSMMCTS(game, selector=selector, seed=1, threads=2, virtual_loss=True)
    root = search.run(game.new_initial_state(), iterations=40000)
    for player in (0, 1):
        np.testing.assert_allclose(root.strategy(player), equilibrium, atol=0.05)


@pytest.mark.parametrize("virtual_loss", [1, "yes", None])
def test_virtual_loss_is_a_bool(virtual_loss):
    game = pyspiel.load_game("matrix_mp")
    with pytest.raises(ValueError, match="virtual_loss must be True or False"):
        KernelSMMCTS(game, virtual_loss=virtual_loss)
