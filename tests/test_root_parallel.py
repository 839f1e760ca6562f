"""Root-parallel SM-MCTS (``threads``): independent trees, merged statistics, determinism."""

import os
import threading

import numpy as np
import pyspiel
import pytest

from smmcts_spiel.bot_specs import make_bot
from smmcts_spiel.bots import SMMCTSBot
from smmcts_spiel.games import kernels
from smmcts_spiel.search import kernel_engine, root_parallel
from smmcts_spiel.search.array_engine import ArraySMMCTS
from smmcts_spiel.search.root_parallel import check_threads, split_budget
from smmcts_spiel.search.smmcts import final_probabilities

GOOF5 = "goofspiel(num_cards=5,imp_info=False,points_order=descending)"
OSHI = "oshi_zumo(coins=6,size=2,horizon=8)"
CORES = len(os.sched_getaffinity(0))
needs_two_cores = pytest.mark.skipif(CORES < 2, reason="threads=2 needs two usable cores")


def root_counts(bot):
    return [list(bot.search.root.counts[p]) for p in (0, 1)]


@needs_two_cores
def test_same_seed_same_trees_and_the_budget_is_split():
    game = pyspiel.load_game(OSHI)
    state = game.new_initial_state()
    bots = [SMMCTSBot(game, 0, iterations=3_001, seed=7, threads=2) for _ in range(2)]
    for bot in bots:
        bot.step(state)
    assert root_counts(bots[0]) == root_counts(bots[1])
    trees = bots[0].search.searches
    assert [t.last_iterations for t in trees] == [1_501, 1_500] == split_budget(3_001, 2)
    assert bots[0].search.last_iterations == 3_001
    # The merged root is the sum of the trees' roots, and its strategy is read from it.
    for p in (0, 1):
        summed = [sum(c) for c in zip(*(t.root.counts[p] for t in trees))]
        assert list(bots[0].search.root.counts[p]) == summed
        assert bots[0].search.root.strategy(p) == pytest.approx(
            final_probabilities(summed, [0.0] * len(summed), "empirical", 0.0))
    # The trees are independent: different seeds, different trees.
    assert trees[0].root.counts != trees[1].root.counts


@needs_two_cores
def test_a_tree_whose_thread_has_not_started_is_searched_by_the_caller():
    """Under an iteration budget the caller does not wait for a tree's thread that has not
    started that tree (asleep, or busy): it searches the tree itself, with the same result."""
    game = pyspiel.load_game(OSHI)
    state = game.new_initial_state()
    free, held = (SMMCTSBot(game, 0, iterations=3_001, seed=7, threads=2) for _ in range(2))
    release = threading.Event()
    blocker = root_parallel._Task(release.wait)
    held.search._team._threads[0].start(blocker)  # the tree's thread is busy until released
    timer = threading.Timer(120, release.set)  # a failure, not a hang, if the move waits
    timer.start()
    try:
        for bot in (free, held):
            bot.step(state)
        searched_while_busy = not release.is_set()
    finally:
        release.set()
        timer.cancel()
    blocker.wait(0.0)
    assert searched_while_busy
    assert root_counts(held) == root_counts(free)
    assert [t.last_iterations for t in held.search.searches] == [1_501, 1_500]
    tree = held.search.searches[1]
    visits = tree.root.visits
    held.step(state)  # the thread, free again, searches the next move's tree
    assert tree.root.visits == visits + 1_500


@needs_two_cores
def test_each_tree_keeps_its_subtree_between_moves():
    game = pyspiel.load_game(GOOF5)
    bot = SMMCTSBot(game, 0, iterations=2_000, seed=1, threads=2)
    state = game.new_initial_state()
    bot.step(state)
    state.apply_actions([bot.step(state), 0])
    kept = [t.find(state).visits for t in bot.search.searches]
    assert all(v > 0 for v in kept)
    bot.restart_at(state)  # the next step's re-rooting, alone
    assert [t.root.visits for t in bot.search.searches] == kept
    bot.step(state)
    assert all(t.root.visits > v for t, v in zip(bot.search.searches, kept))


@needs_two_cores
def test_policy_and_time_limit_with_threads():
    game = pyspiel.load_game(GOOF5)
    bot = make_bot("smmcts(threads=2,time_limit=0.05)", game, 1, seed=3)
    state = game.new_initial_state()
    action = bot.step(state)
    assert action in state.legal_actions(1)
    assert all(t.last_iterations > 0 for t in bot.search.searches)
    root = bot.search.root
    for policy, threshold in ((bot.policy(), 0.0), (bot.played_policy(), 0.1)):
        assert policy.action_probabilities(state, 1) == pytest.approx(dict(zip(
            root.actions[1], root.strategy(1, "empirical", 0.0, threshold))))


@pytest.mark.parametrize("threads, message", [
    (0, "threads must be an integer >= 1"), (1.5, "threads must be an integer >= 1"),
    (2.0, "threads must be an integer >= 1"), (True, "threads must be an integer >= 1"),
    ("2", "threads must be an integer >= 1"), (np.int64(0), "threads must be an integer >= 1"),
    (CORES + 1, "more than the .* core"),
])
def test_bad_thread_counts_are_refused(threads, message):
    game = pyspiel.load_game(GOOF5)
    with pytest.raises(ValueError, match=message):
        SMMCTSBot(game, 0, threads=threads)
    with pytest.raises(ValueError, match=message):
        check_threads(threads)


@pytest.mark.parametrize("numpy_int", [np.int64, np.int32])
def test_numpy_thread_counts_are_accepted_as_iterations_are(numpy_int):
    game = pyspiel.load_game(GOOF5)
    threads = min(CORES, 2)
    assert check_threads(numpy_int(threads)) == threads
    assert type(check_threads(numpy_int(threads))) is int
    bot = SMMCTSBot(game, 0, iterations=numpy_int(200), seed=0, threads=numpy_int(threads))
    assert bot.step(game.new_initial_state()) in game.new_initial_state().legal_actions(0)


@needs_two_cores
def test_max_memory_is_the_trees_in_all():
    """Root parallelism used to give every tree the whole max_memory (threads x the cap)."""
    game = pyspiel.load_game("goofspiel(num_cards=8,imp_info=False,points_order=descending)")
    limit = 48 << 20
    bot = SMMCTSBot(game, 0, iterations=None, time_limit=3600, seed=0, threads=2,
                    max_memory=limit)
    trees = bot.search.searches
    assert sum(t.max_memory for t in trees) <= limit
    state = game.new_initial_state()
    assert bot.step(state) in state.legal_actions(0)  # an hour's move: until the trees fill
    assert all(t.full for t in trees)
    arrays = [a for t in trees for a in (t.nodes_i, t.nodes_f, t.pool, t.slots, t._scratch,
                                          *(t._spare or ()))]
    assert sum(a.nbytes for a in arrays) <= limit
    # What one tree needs is refused for two, with what two need.
    minimum = kernel_engine.minimum_memory(kernels.kernel_for(game))
    with pytest.raises(ValueError, match=rf"shared by the 2 trees of threads=2.*give "
                                         rf"max_memory >= {2 * minimum}"):
        SMMCTSBot(game, 0, threads=2, max_memory=minimum)
    SMMCTSBot(game, 0, threads=2, max_memory=2 * minimum)


@needs_two_cores
def test_threads_need_the_kernel_engine():
    with pytest.raises(ValueError, match="needs the kernel engine.*global interpreter lock"):
        SMMCTSBot(pyspiel.load_game("tic_tac_toe"), 0, threads=2)
    with pytest.raises(ValueError, match="needs the kernel engine"):
        SMMCTSBot(pyspiel.load_game(GOOF5), 0, threads=2, engine="generic")


@needs_two_cores
@pytest.mark.skipif(root_parallel._current_core() is None, reason="sched_getcpu unavailable")
def test_tree_threads_are_bound_to_other_cores_than_the_caller():
    """Waking a tree's thread on the caller's core would make the trees take turns; binding
    it in a move would move it there in the move: it is bound when the bot is built, and
    rebound in a move only if the caller now runs on its core."""
    cores = sorted(os.sched_getaffinity(0))
    bot = SMMCTSBot(pyspiel.load_game(OSHI), 0, iterations=200, seed=0, threads=2)
    thread_id = bot.search._team._threads[0].native_id
    bound = os.sched_getaffinity(thread_id)  # before any move
    assert len(bound) == 1 and bound <= set(cores)
    (core,) = bound
    other = next(c for c in cores if c != core)
    state = pyspiel.load_game(OSHI).new_initial_state()
    try:
        os.sched_setaffinity(0, {other})  # the caller on another core
        bot.step(state)
        assert os.sched_getaffinity(thread_id) == {core}  # not moved
        os.sched_setaffinity(0, {core})  # the caller moves to the thread's core
        bot.step(state)
        assert os.sched_getaffinity(thread_id) == {other}
        assert bot.search._team._threads[0].core == other
        # Cores for threads, from a known core: another one; with that core alone, that one.
        assert root_parallel.cores_for(1, cores) == [other]
        assert root_parallel.cores_for(1, [core]) == [core]
    finally:
        os.sched_setaffinity(0, set(cores))


@needs_two_cores
def test_threads_start_at_once_after_a_tree_without_an_entry_count(monkeypatch):
    """A first tree that is not the kernel engine's counts no entries into compiled
    iterations (``KernelSMMCTS.entered``): the other trees' threads take a posted task at
    once rather than poll for an entry that never comes (as long as they poll: here for
    minutes)."""
    monkeypatch.setattr(root_parallel, "IDLE_SPINS", 1 << 40)
    game = pyspiel.load_game(GOOF5)
    searches = [ArraySMMCTS(game, seed=k) for k in range(2)]
    assert searches[0].entered is None
    search = root_parallel.RootParallelSearch(searches)
    thread = search._team._threads[0]
    try:
        ran = threading.Event()
        task = root_parallel._Task(ran.set)
        thread.start(task)  # the caller enters no compiled search
        assert ran.wait(60)
        task.wait(0.0)
        search.run(game.new_initial_state(), iterations=201)
        assert [t.last_iterations for t in searches] == [101, 100]
    finally:
        thread._stop(thread._inbox, thread._posted)  # no thread left polling for minutes
