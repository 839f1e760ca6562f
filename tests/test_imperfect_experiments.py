"""The exploitability study and the equal-time matches of issue 14 (small runs)."""

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import exploitability
from programs import program

from smmcts_spiel.experiments import imperfect, imperfect_match

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KUHN_UNIFORM_NASH_CONV = exploitability.nash_conv(
    pyspiel.load_game("kuhn_poker"), policy_lib.UniformRandomPolicy(
        pyspiel.load_game("kuhn_poker")))


@pytest.mark.slow
def test_oos_root_and_openspiel_outcome_sampling_converge_alike_on_kuhn():
    # The same estimator, two implementations: both NashConvs fall, and end close.
    ends = {}
    for method in imperfect.ROOT_METHODS:
        curve = imperfect.root_curve("kuhn_poker", method, [300, 30_000], seed=0)
        assert curve["nash_conv"][1] < curve["nash_conv"][0], method
        ends[method] = curve["nash_conv"][1]
    assert max(ends.values()) < 0.1


@pytest.mark.parametrize("method", imperfect.ONLINE_METHODS)
def test_online_strategies_are_scored_on_kuhn(method):
    point = imperfect.online_point("kuhn_poker", method, 30, "iterations", seed=0)
    assert 0.0 <= point["nash_conv"][0] <= 2 * KUHN_UNIFORM_NASH_CONV
    assert point["searches"][0] == 12  # every information set of Kuhn, once
    again = imperfect.online_point("kuhn_poker", method, 30, "iterations", seed=0)
    assert again["nash_conv"][0] == point["nash_conv"][0]


def test_online_strategies_on_a_time_budget_search_about_that_long():
    point = imperfect.online_point("kuhn_poker", "oos", 0.01, "seconds", seed=0)
    # Wall time: at least the budget; the upper bound is loose because a loaded machine
    # may pause the process between two clock checks (a search ignoring its budget would
    # run far longer).
    assert 0.01 * 12 <= point["seconds"][0] < 0.25 * 12
    assert point["iterations_per_search"][0] > 100


def test_forest_links_each_information_set_to_the_players_previous_one():
    game = pyspiel.load_game("kuhn_poker")
    forest = imperfect.InformationSetForest(game)
    assert sorted(forest.roots) == [(0, "0"), (0, "1"), (0, "2"),
                                    (1, "0b"), (1, "0p"), (1, "1b"), (1, "1p"), (1, "2b"),
                                    (1, "2p")]
    assert forest.children[(0, "1")] == [(0, "1pb")]
    assert all(not forest.children[k] for k in forest.roots if k[0] == 1)


def test_stitching_passes_the_memory_of_earlier_moves_down():
    # Player 0's second decision in Kuhn is searched from the tables its first search left.
    searcher = imperfect.OnlineSearcher("kuhn_poker", "oos", 50, None, seed=0)
    forest = imperfect.InformationSetForest(searcher.scored)
    seen = []
    search = searcher.search

    def spy(memory, state, key_seed):
        seen.append((state.information_state_string(), memory.iterations))
        return search(memory, state, key_seed)
    searcher.search = spy
    imperfect.stitched_policy(forest, searcher)
    iterations = dict(seen)
    assert iterations["1"] == 0 and iterations["1pb"] == 50


def test_online_oos_scores_the_thresholded_strategy_the_default_bot_plays():
    # Same seed, same search: "oos" (the default preset) plays what "oos_average" plays
    # without the actions below 0.3, renormalised, as OOSBot does.
    state = pyspiel.load_game("kuhn_poker").new_initial_state()
    for action in (0, 2):
        state.apply_action(action)
    played = {}
    for method in ("oos", "oos_average"):
        searcher = imperfect.OnlineSearcher("kuhn_poker", method, 2000, None, seed=5)
        played[method] = dict(searcher.search(searcher.fresh(), state, key_seed=1))
    kept = {a: p if p >= 0.3 else 0.0 for a, p in played["oos_average"].items()}
    assert min(played["oos_average"].values()) < 0.3  # the threshold removes an action
    assert played["oos"] == pytest.approx({a: p / sum(kept.values()) for a, p in kept.items()})


def test_online_oos_on_goofspiel_searches_the_turn_based_game():
    game = imperfect.scored_game("goofspiel(num_cards=3,imp_info=True)")
    assert game.get_type().dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    point = imperfect.online_point("goofspiel(num_cards=3,imp_info=True)", "oos", 20,
                                   "iterations", 0)
    assert np.isfinite(point["nash_conv"][0])


@pytest.mark.parametrize("name", imperfect_match.BOT_NAMES)
def test_every_bot_plays_phantom_ttt_on_time(name):
    game = pyspiel.load_game("phantom_ttt")
    result = imperfect_match.play_pair(game, name, "random", 2, time_limit=0.01, seed=0,
                                       progress=False)
    assert len(result["returns"]) == 2
    assert all(r in (-1.0, 0.0, 1.0) for r in result["returns"])


def test_unknown_bot_is_refused():
    with pytest.raises(ValueError, match="unknown bot"):
        imperfect_match.make_bot("alphazero", pyspiel.load_game("phantom_ttt"), 0, 0.1, 0)


def run_script(name, *args, check=True):
    return subprocess.run([sys.executable, str(program(name)), *args],
                          capture_output=True, text=True, check=check, cwd=ROOT)


@pytest.mark.slow
def test_exploitability_script_small_run(tmp_path):
    out = tmp_path / "exp"
    args = ["--games=kuhn_poker", "--checkpoints=100,1000", "--online_budgets=10",
            "--online_seconds=0.002", "--seeds=1", f"--results_dir={tmp_path / 'jobs'}",
            f"--out={out}"]
    first = run_script("imperfect_exploitability.py", *args, "--max_new_jobs=2")
    assert "jobs left" in first.stdout and not os.path.exists(f"{out}.csv")
    run_script("imperfect_exploitability.py", *args)
    with open(f"{out}.csv") as f:
        rows = list(csv.DictReader(f))
    # The root methods and the script's default online methods (the bots' defaults).
    assert {r["method"] for r in rows} == {"oos_root", "os_mccfr", "oos", "oos_average",
                                           "ismcts", "is_smmcts"}
    assert {r["kind"] for r in rows} == {"root", "iterations", "seconds"}
    assert os.path.getsize(f"{out}.png") > 10_000
    assert json.load(open(f"{out}.json"))["checkpoints"] == [100, 1000]


@pytest.mark.slow
def test_match_script_small_run_and_usage_error(tmp_path):
    out = tmp_path / "match"
    run_script("imperfect_match.py", "--game=kuhn_poker", "--bots=oos,random",
               "--games_per_pair=2", "--time_limit=0.01", f"--results_dir={tmp_path / 'j'}",
               f"--out={out}")
    with open(f"{out}.csv") as f:
        (row,) = list(csv.DictReader(f))
    assert row["bot_a"] == "oos" and int(row["games"]) == 2
    bad = run_script("imperfect_match.py", "--game=kuhn_poker", "--bots=belief_sampler,random",
                     f"--results_dir={tmp_path / 'k'}", f"--out={out}", check=False)
    assert bad.returncode == 2
    assert "Belief Sampler" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("spec, cls", [
    ("oos(delta=0.5,epsilon=0.4,iterations=20)", "OOSBot"),
    ("oos(time_limit=0.01)", "OOSBot"),
    ("is_smmcts(selector=exp3,gamma=0.2,iterations=20)", "ISSMMCTSBot")])
def test_bot_specs_build_and_play_the_imperfect_information_bots(spec, cls):
    from smmcts_spiel import bot_specs, bots, match

    game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=True)")
    assert isinstance(bot_specs.make_bot(spec, game, 1, seed=0), getattr(bots, cls))
    returns = match.play_games(str(game), spec, "random", base_seed=3, pair_index=0, start=0,
                               stop=2)["returns"]
    assert returns.shape == (2, 2)


def test_bot_spec_with_a_bad_delta_is_refused():
    from smmcts_spiel import bot_specs

    with pytest.raises(ValueError, match="delta"):
        bot_specs.make_bot("oos(delta=1.5)", pyspiel.load_game("kuhn_poker"), 0, seed=0)


@pytest.mark.parametrize("spec", ["ismcts(time_limit=0.02)", "ismcts(iterations=20)",
                                  "ismcts(iterations=20,final_policy=normalized_visits)",
                                  "oos(iterations=50,engine=generic)",
                                  "oos(time_limit=0.01,final_strategy=current)",
                                  "oos(time_limit=0.01,threshold=0.1)"])
def test_ismcts_and_oos_specs_play_simultaneous_goofspiel(spec):
    from smmcts_spiel import match

    game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=True)")
    returns = match.play_games(str(game), spec, "random", base_seed=1, pair_index=0, start=0,
                               stop=2)["returns"]
    assert returns.shape == (2, 2)


def test_ismcts_on_a_time_budget_uses_about_its_time():
    import time

    from smmcts_spiel.bots.openspiel_bots import ISMCTSBot

    game = pyspiel.load_game("leduc_poker")
    bot = ISMCTSBot(game, 0, simulations=None, time_limit=0.05, seed=0)
    state = game.new_initial_state()
    state.apply_action(0)
    state.apply_action(3)
    bot.step(state)  # the first move probes the rate
    # CPU time, not wall time: the simulations the rate allows cost about 0.05 s of CPU
    # whatever else the machine runs (a busy machine stretches the wall time, not this).
    start = time.process_time()
    bot.step(state)
    assert time.process_time() - start < 0.2
    assert bot.total_simulations > 25


def test_ismcts_bad_worlds_are_refused():
    from smmcts_spiel.bots.openspiel_bots import ISMCTSBot

    with pytest.raises(ValueError, match="worlds"):
        ISMCTSBot(pyspiel.load_game("kuhn_poker"), 0, worlds="oracle")


def test_ismcts_on_a_time_budget_learns_no_rate_from_a_forced_move():
    # A forced move is answered without a search, so the rate the next move's simulations
    # come from stays that of real searches (timing OpenSpiel's instant answer once made
    # the next move run millions of simulations: minutes instead of 0.05 s).
    from smmcts_spiel.bots.openspiel_bots import ISMCTSBot

    game = pyspiel.load_game("phantom_ttt")
    bot = ISMCTSBot(game, 0, simulations=20_000, time_limit=0.05, seed=0)
    state = game.new_initial_state()
    for action in [0, 1, 2, 6, 8, 2, 8, 4, 4, 7, 3, 1, 6, 3]:  # player 0 has one cell left
        state.apply_action(action)
    assert state.current_player() == 0 and len(state.legal_actions()) == 1
    assert bot.step(state) == state.legal_actions()[0]
    assert bot.total_simulations == 0
    bot.step(game.new_initial_state())  # the next game's first move: probe, then search
    assert 0 < bot.total_simulations < 20_000
