"""The virtual loss's compiled pieces (:mod:`smmcts_spiel.search.in_flight`): the published
paths, what a thread reads of them, and selection from the in-flight view, which must never
write a stored statistic and, with nothing in flight, select as the paper's rule does."""

import numba
import numpy as np
import pytest

from smmcts_spiel.search import in_flight
from smmcts_spiel.search import tree_arrays as ta

SELECTORS = {"rm": 0, "exp3": 1, "ucb": 2, "rmb": 3}


@numba.njit
def _publish_path(row, nodes, actions):
    for d in range(len(nodes)):
        in_flight.publish(row, d, nodes[d], actions[d, 0], actions[d, 1])


@numba.njit
def _retract(row, depth):
    in_flight.retract(row, depth)


@numba.njit
def _gather(flights, me, alive, depth, node, n1, o1, o2):
    return in_flight.gather(flights, me, alive, depth, node, n1, o1, o2)


@numba.njit
def _select(selector, stat, counts, gamma, c, probs, u, track_average, o, others, scale,
            scratch, scratch_counts):
    return in_flight.select_in_flight(selector, stat, counts, gamma, c, 0.0, probs, u,
                                      track_average, o, others, scale, scratch,
                                      scratch_counts)


@numba.njit
def _plain_select(selector, stat, counts, gamma, c, probs, u, track_average):
    return ta.select(selector, stat, counts, gamma, c, 0.0, probs, u, track_average)


@numba.njit
def _select_joint(stats, flights, alive, config, scratch, own_stats):
    """Thread 0 at node 0 (depth 0), UCB, three actions each."""
    return in_flight.select_joint(2, stats, 0, 3, 3, 0.1, 0.5, 0.0, np.zeros(3), np.zeros(3), 0.5,
                                  0.5, False, flights, 0, alive, 0, 0, 0.0, config, scratch,
                                  own_stats)


@numba.njit
def _loss_scales(selector, mean, config):
    return in_flight.loss_scales(selector, mean, config)


def test_rows_are_whole_cache_lines_apart():
    flights = in_flight.new_flights(3, max_depth=10)
    assert flights.shape[1] % 8 == 0 and flights.shape[1] >= 1 + 3 * 11
    assert flights.ctypes.data % 64 == 0
    assert not flights.any()


def test_gather_counts_the_other_threads_at_this_node_and_stops_where_paths_part():
    flights = in_flight.new_flights(3, max_depth=4)
    # thread 1: root 0 with actions (1, 2), then node 5 with (0, 0); thread 2: root with (1, 0),
    # then node 7
    _publish_path(flights[1], np.array([0, 5]), np.array([[1, 2], [0, 0]]))
    _publish_path(flights[2], np.array([0, 7]), np.array([[1, 0], [2, 1]]))
    alive = np.ones(3, np.int64)
    o1, o2 = np.zeros(3), np.zeros(3)
    assert _gather(flights, 0, alive, 0, 0, 3, o1, o2) == 2  # both at the root
    np.testing.assert_array_equal(o1, [0, 2, 0])
    np.testing.assert_array_equal(o2, [1, 0, 1])
    o1[:], o2[:] = 0, 0
    assert _gather(flights, 0, alive, 1, 5, 3, o1, o2) == 1  # thread 1 only, at node 5
    np.testing.assert_array_equal(alive, [1, 1, 0])  # thread 2 went elsewhere: not read again
    _retract(flights[1], 1)  # thread 1's result reached depth 1: no longer in flight there
    o1[:], o2[:] = 0, 0
    assert _gather(flights, 0, np.ones(3, np.int64), 1, 5, 3, o1, o2) == 0
    assert not o1.any() and not o2.any()
    assert _gather(flights, 1, np.ones(3, np.int64), 0, 0, 3, o1, o2) == 1  # itself not counted


@pytest.mark.parametrize("selector", SELECTORS)
@pytest.mark.parametrize("track_average", [False, True])
def test_with_nothing_in_flight_the_selection_is_the_papers(selector, track_average):
    rng = np.random.default_rng(5)
    code = SELECTORS[selector]
    for _ in range(200):
        stat = rng.normal(size=4) * 3
        counts = rng.integers(1, 20, size=4).astype(float)
        u = rng.random()
        probs, plain = np.zeros(4), np.zeros(4)
        o = np.zeros(4)
        a = _select(code, stat, counts, 0.1, 0.5, probs, u, track_average, o, 0, 0.7,
                    np.zeros(4), np.zeros(4))
        b = _plain_select(code, stat, counts, 0.1, 0.5, plain, u, track_average)
        assert a == b
        if track_average or code != 0:
            np.testing.assert_array_equal(probs, plain)


@pytest.mark.parametrize("selector", SELECTORS)
def test_the_virtual_loss_writes_no_stored_statistic_and_the_update_is_the_papers(selector):
    """Stored statistics after a selection with others in flight and the real result's
    Update equal those of the paper's Update of the same sample, bit for bit."""
    code = SELECTORS[selector]
    rng = np.random.default_rng(11)
    for _ in range(100):
        stat = rng.normal(size=3) * 2
        counts = rng.integers(1, 9, size=3).astype(float)
        kept = stat.copy(), counts.copy()
        o = np.array([2.0, 0.0, 1.0])
        probs = np.zeros(3)
        _select(code, stat, counts, 0.1, 0.5, probs, rng.random(), True, o, 3, 0.4,
                np.zeros(3), np.zeros(3))
        np.testing.assert_array_equal(stat, kept[0])
        np.testing.assert_array_equal(counts, kept[1])
        assert not o.any(), "the in-flight counts are reset for the next node"


def sampled(code, stat, counts, o, others, scale=0.5, draws=4000, c=0.5):
    rng = np.random.default_rng(0)
    chosen = np.zeros(len(stat))
    for _ in range(draws):
        a = _select(code, stat, counts, 0.1, c, np.zeros(len(stat)), rng.random(), False,
                    o.copy(), others, scale, np.zeros(len(stat)), np.zeros(len(stat)))
        chosen[a] += 1
    return chosen / draws


@pytest.mark.parametrize("selector, drop", [("rm", 0.2), ("rmb", 0.2), ("exp3", 0.03)])
def test_an_action_in_flight_is_sampled_less(selector, drop):
    """Two samples of action 1 in flight. Regret matching: the other actions' regrets rise
    by one loss each (to 2 against 0: action 1 gets only its exploration); Exp3 moves as
    slowly as its learning rate gamma / |A| lets a real loss move it: weight x exp(-0.2),
    1/3 -> 0.30."""
    code = SELECTORS[selector]
    stat = np.zeros(3)
    counts = np.array([10.0, 10.0, 10.0])
    without = sampled(code, stat, counts, np.zeros(3), 0)
    with_loss = sampled(code, stat, counts, np.array([0.0, 2.0, 0.0]), 2, scale=1.0)
    assert abs(without[1] - 1 / 3) < 0.03
    assert with_loss[1] < without[1] - drop


def test_ucb_counts_in_flight_samples_as_losses():
    """Two threads at a UCB node would both take the best action; the second, seeing the
    first in flight there, takes the runner-up."""
    stat = np.array([6.0, 5.8, 1.0])  # means 0.6, 0.58, 0.1 over 10 plays each
    counts = np.array([10.0, 10.0, 10.0])
    assert sampled(2, stat, counts, np.zeros(3), 0, draws=50)[0] == 1
    assert sampled(2, stat, counts, np.array([1.0, 0.0, 0.0]), 1, draws=50)[1] == 1


def test_loss_scales_are_the_nodes_value_above_each_players_worst():
    config = np.zeros(ta.CONFIG_SIZE)
    config[ta.REWARD_LOW], config[ta.INV_REWARD_RANGE] = -1.0, 0.5  # u1 in [-1, 1]
    config[ta.INV_SCALE] = 1.0
    # mean 0.5: player 1 is 1.5 above its worst (-1), player 2 (utility -0.5) 0.5 above -1
    np.testing.assert_allclose(_loss_scales(0, 0.5, config), (1.5, 0.5))
    np.testing.assert_allclose(_loss_scales(3, 0.5, config), (0.75, 0.25))  # as rewards


def test_statistics_of_the_thread_s_own_have_no_virtual_loss_but_its_path_is_published():
    """The root's statistics are each thread's own during a run: another thread's iteration
    there never updates them, so it is no loss to anticipate. Elsewhere UCB's two threads
    part (the first in flight at the best action, the second takes the runner-up)."""
    stats = np.zeros((ta.COUNT + 1, 6))
    stats[ta.STAT] = [6.0, 5.8, 1.0, 6.0, 5.8, 1.0]  # means 0.6, 0.58, 0.1 over 10 plays
    stats[ta.COUNT] = 10.0
    config = np.zeros(ta.CONFIG_SIZE)
    config[ta.REWARD_LOW], config[ta.INV_REWARD_RANGE], config[ta.INV_SCALE] = -1.0, 0.5, 1.0
    for own_stats, expected in ((False, (1, 1)), (True, (0, 0))):
        flights = in_flight.new_flights(2, 3)
        _publish_path(flights[1], np.array([0]), np.array([[0, 0]]))  # thread 1 at (0, 0)
        kept = stats.copy()
        chosen = _select_joint(stats, flights, np.ones(2, np.int64), config,
                               np.zeros((4, 3)), own_stats)
        assert chosen == expected
        np.testing.assert_array_equal(stats, kept)
        assert list(flights[0, :4]) == [1, 0, *expected], "thread 0's path, published"
