"""The check of a ``threads`` setting and what ``threads="auto"`` picks
(:mod:`smmcts_spiel.search.thread_counts`)."""

import os

import numpy as np
import pyspiel
import pytest

from smmcts_spiel.search import thread_counts
from smmcts_spiel.search.thread_counts import AUTO, auto_threads, check_setting, check_threads

CORES = len(os.sched_getaffinity(0))


@pytest.mark.parametrize("threads", [0, -1, 1.5, 2.0, True, False, "2", "AUTO", " auto", None,
                                     np.int64(0), np.float64(1.0)])
@pytest.mark.parametrize("allow_auto", [False, True])
def test_what_is_not_a_thread_count_is_refused(threads, allow_auto):
    with pytest.raises(ValueError, match="threads must be an integer >= 1"
                       + (' or "auto"' if allow_auto else r" \(")):
        (check_setting if allow_auto else check_threads)(threads)


def test_auto_only_where_allowed():
    assert check_setting(AUTO) == AUTO
    with pytest.raises(ValueError, match="an integer >= 1 \\(the number"):
        check_threads(AUTO)


def test_more_threads_than_usable_cores_are_refused_with_the_fix():
    with pytest.raises(ValueError, match=f"threads={CORES + 1} is more than the {CORES} "
                       f"core.*use threads <= {CORES}"):
        check_threads(CORES + 1)
    assert check_threads(np.int32(CORES)) == CORES
    assert type(check_threads(np.int32(CORES))) is int


def test_auto_takes_the_cores_up_to_its_cap_on_compiled_searches_and_one_elsewhere(monkeypatch):
    game = pyspiel.load_game("blotto")
    assert auto_threads(game, compiled=False) == 1
    assert auto_threads(game, compiled=True) == min(CORES, thread_counts.AUTO_MAX_THREADS)
    monkeypatch.setattr(thread_counts, "usable_cores", lambda: 64)
    assert auto_threads(game, compiled=True) == thread_counts.AUTO_MAX_THREADS
    monkeypatch.setattr(thread_counts, "usable_cores", lambda: 1)
    assert auto_threads(game, compiled=True) == 1
    monkeypatch.setattr(thread_counts, "usable_cores", lambda: 64)
    monkeypatch.setattr(thread_counts, "ONE_THREAD_GAMES", frozenset({"blotto"}))
    assert auto_threads(game, compiled=True) == 1


# -- the bot and its spec ---------------------------------------------------------------------

def test_auto_grows_one_tree_with_the_cores_on_a_kernel_game_and_one_thread_elsewhere():
    from smmcts_spiel.bots import SMMCTSBot
    from smmcts_spiel.search.array_engine import ArraySMMCTS
    from smmcts_spiel.search.kernel_engine import KernelSMMCTS

    bot = SMMCTSBot(pyspiel.load_game("blotto"), 0, threads="auto", iterations=100, seed=1)
    assert isinstance(bot.search, KernelSMMCTS)
    assert bot.search.threads == min(CORES, thread_counts.AUTO_MAX_THREADS)
    generic = SMMCTSBot(pyspiel.load_game("tic_tac_toe"), 0, threads="auto", iterations=50)
    assert isinstance(generic.search, ArraySMMCTS)  # the interpreter lock: one thread
    state = pyspiel.load_game("blotto").new_initial_state()
    assert bot.step(state) in state.legal_actions(0)


@pytest.mark.skipif(CORES < 2, reason="threads=2 needs two usable cores")
def test_the_virtual_loss_needs_one_shared_tree():
    from smmcts_spiel.bots import SMMCTSBot

    game = pyspiel.load_game("blotto")
    with pytest.raises(ValueError, match="virtual_loss=True needs parallel='tree'"):
        SMMCTSBot(game, 0, threads=2, parallel="root", virtual_loss=True)
    assert SMMCTSBot(game, 0, threads=2, parallel="tree", virtual_loss=True).search.virtual_loss
    assert SMMCTSBot(game, 0, threads=1, virtual_loss=True).search.virtual_loss  # no effect
    with pytest.raises(ValueError, match="virtual_loss must be True or False"):
        SMMCTSBot(game, 0, threads=1, virtual_loss="yes")


@pytest.mark.parametrize("spec, message", [
    ("smmcts(threads=many)", "must be an integer or auto"),
    ("smmcts(threads=true)", "must be an integer or auto"),
    ("smmcts(threads=1.5)", "must be an integer or auto"),
    ("smmcts(virtual_loss=2)", "must be true or false"),
])
def test_bad_thread_settings_in_specs_are_refused_before_play(spec, message):
    from smmcts_spiel.bot_specs import parse_bot_spec

    with pytest.raises(ValueError, match=message):
        parse_bot_spec(spec)


def test_specs_take_auto_and_the_virtual_loss():
    from smmcts_spiel.bot_specs import make_bot

    game = pyspiel.load_game("blotto")
    bot = make_bot("smmcts(threads=auto,virtual_loss=true,iterations=50)", game, 0, seed=3)
    assert bot.search.virtual_loss
    assert make_bot("smmcts(threads=1)", game, 0, seed=3).search.threads == 1
