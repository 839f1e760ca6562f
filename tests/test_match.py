"""Bot specs and matches: parsing, seat alternation, OpenSpiel bots, the results table."""

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import mcts

from smmcts_spiel import bot_specs, match
from smmcts_spiel.bots import BeliefSamplerBot, MMCTSBot, SMMCTSBot
from smmcts_spiel.bots.openspiel_bots import ISMCTSBot, TurnBasedMCTSBot
from smmcts_spiel.imperfect.mmcts_phantom_ttt import PhantomTTTMultipleTreeSearch

ROOT = Path(__file__).resolve().parents[1]
GOOFSPIEL = pyspiel.load_game("goofspiel(num_cards=3,imp_info=False,points_order=descending)")
PHANTOM = pyspiel.load_game("phantom_ttt")


def test_spec_parsing_uses_openspiel_syntax():
    assert bot_specs.parse_bot_spec("smmcts(selector=exp3,gamma=0.1,iterations=5000)") == {
        "name": "smmcts", "selector": "exp3", "gamma": 0.1, "iterations": 5000}
    assert bot_specs.parse_bot_spec(" random ") == {"name": "random"}
    # Integers are accepted where a float is expected.
    assert bot_specs.parse_bot_spec("mcts(uct_c=2)")["uct_c"] == 2.0


@pytest.mark.parametrize("spec, message", [
    ("smmcts(selector=rm", "malformed bot spec"),
    ("alphazero", "unknown bot"),
    ("smmcts(depth=3)", "unknown parameter"),
    ("mcts(iterations=1.5)", "must be an integer"),
    ("mcts(engine=java)", "engine must be one of"),
    ("mcts(time_limit=-1)", "time_limit must be a positive"),
    ("cpp(bot=nope)", "needs bot="),
    ("smmcts(selector=cfr)", "unknown selector"),
    ("mmcts(file=/no/such/tree.npz)", "no such file"),
    ("belief_sampler", "Belief Sampler knows classical Phantom"),
])
def test_bad_specs_are_named(spec, message):
    with pytest.raises(ValueError, match=message):
        bot_specs.make_bot(spec, GOOFSPIEL, 0, seed=0)


def test_make_bot_builds_each_kind(tmp_path):
    make = bot_specs.make_bot
    assert isinstance(make("smmcts(selector=ucb,c=2.0)", GOOFSPIEL, 1, 0), SMMCTSBot)
    assert isinstance(make("mcts(iterations=10)", GOOFSPIEL, 0, 0), TurnBasedMCTSBot)
    assert isinstance(make("mcts(time_limit=0.01,engine=cpp)", GOOFSPIEL, 0, 0),
                      TurnBasedMCTSBot)
    assert isinstance(make("random", GOOFSPIEL, 0, 0), pyspiel.Bot)
    assert isinstance(make("cpp(bot=uniform_random,seed=3)", GOOFSPIEL, 0, 0), pyspiel.Bot)
    assert isinstance(make("mmcts(training_iterations=50)", PHANTOM, 0, 0), MMCTSBot)
    assert isinstance(make("belief_sampler", PHANTOM, 0, 0), BeliefSamplerBot)
    assert isinstance(make("ismcts(iterations=5)", PHANTOM, 1, 0), ISMCTSBot)
    assert isinstance(make("ismcts(time_limit=0.01)", GOOFSPIEL, 1, 0), ISMCTSBot)
    search = PhantomTTTMultipleTreeSearch(PHANTOM, 0.1, 0)
    search.train(200)
    path = str(tmp_path / "tree.npz")
    search.save(path)
    bots = [make(f"mmcts(file={path},final_strategy=exp3_no_exploration)", PHANTOM, p, 0)
            for p in (0, 1)]
    assert bots[0].search is bots[1].search  # loaded once, shared by the read-only bots
    assert bots[0].search.iterations == 200


@pytest.mark.parametrize("spec, rival", [
    ("belief_sampler", "ismcts(iterations=5)"),
    ("mmcts(training_iterations=100)", "random"),
    ("mcts(iterations=20)", "mcts(iterations=20,engine=cpp)"),
    ("smmcts(iterations=20)", "random"),
])
def test_one_runner_plays_every_bot(spec, rival):
    game = PHANTOM if spec in ("belief_sampler", "mmcts(training_iterations=100)") else GOOFSPIEL
    returns = match.play_games(str(game), spec, rival, base_seed=3, pair_index=0, start=0,
                               stop=2)["returns"]
    assert returns.shape == (2, 2) and np.all(returns.sum(axis=1) == game.utility_sum())
    again = match.play_games(str(game), spec, rival, base_seed=3, pair_index=0, start=1,
                             stop=2)["returns"]
    assert np.array_equal(again, returns[1:])  # a game depends on its indices only


@pytest.mark.parametrize("engine", ["python", "cpp"])
def test_openspiel_mcts_plays_forced_moves_without_searching(engine):
    game = pyspiel.load_game("oshi_zumo(coins=2,size=3)")
    for player in (0, 1):
        state = game.new_initial_state()
        state.apply_actions([2, 0] if player == 0 else [0, 2])  # the player is out of coins
        assert not state.is_terminal() and state.legal_actions(player) == [0]
        # A search of ten million simulations would take minutes: the forced move takes none.
        bot = TurnBasedMCTSBot(game, player, iterations=10**7, engine=engine, seed=0)
        start = time.perf_counter()
        assert bot.step(state) == 0
        assert time.perf_counter() - start < 5


def test_python_mcts_plays_laser_tag_whose_returns_are_its_summed_rewards():
    """The premise of terminal_rewards_view: the returns count every reward paid along the
    way (laser_tag shows a turn's reward again while a tagged player respawns, so rewards
    are summed over the decision turns only)."""
    game = pyspiel.load_game("laser_tag(zero_sum=true,horizon=12)")
    rng = np.random.default_rng(0)
    tagged = 0
    for _ in range(30):
        state, total = game.new_initial_state(), np.zeros(2)
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
                continue
            state.apply_actions([int(rng.choice(state.legal_actions(p))) for p in (0, 1)])
            total += state.rewards()
        assert np.array_equal(total, state.returns())
        tagged += total[0] != 0
    assert tagged > 0  # some games had a tag, so some rewards were paid along the way
    with pytest.raises(ValueError, match="terminal rewards"):
        mcts.MCTSBot(pyspiel.convert_to_turn_based(game), 2.0, 10,
                     mcts.RandomRolloutEvaluator())
    result = match.play_match(game, "mcts(iterations=20)", "random", 2, seed=1,
                              progress=False)
    assert len(result.returns) == 2


@pytest.mark.parametrize("engine", ["python", "cpp"])
def test_openspiel_mcts_plays_simultaneous_games_without_seeing_the_other_move(engine):
    # In matching pennies a bot that saw its opponent's move would win every game as player 1.
    game = pyspiel.load_game("matrix_mp")
    result = match.play_match(game, "random", f"mcts(iterations=50,engine={engine})", 200,
                              seed=2, progress=False)
    assert abs(result.mean) < 0.25


def test_round_robin_and_table():
    results = match.round_robin(GOOFSPIEL, ["smmcts(iterations=50)", "mcts(iterations=50)",
                                            "random"], 2, progress=False)
    assert [(r.bot_a, r.bot_b) for r in results] == [
        ("smmcts(iterations=50)", "mcts(iterations=50)"),
        ("smmcts(iterations=50)", "random"), ("mcts(iterations=50)", "random")]
    table = match.format_table(results)
    assert "wins" in table and len(table.splitlines()) == 5  # header, rule, three matches


def test_match_script_reports_a_bad_game_clearly():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "match.py"),
                           "--game=no_such_game", "--num_games=1"],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "unknown game 'no_such_game'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_match_script_reports_bad_parameters_of_our_games_clearly():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "match.py"),
                           "--game=smmcts_random_stacked_matrix(depth=0)", "--num_games=1"],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "depth must be an integer >= 1" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_match_script_refuses_a_general_sum_game():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "match.py"),
                           "--game=matrix_pd", "--num_games=1"], capture_output=True, text=True)
    assert proc.returncode != 0 and "zero-sum" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_match_script_plays_phantom_tic_tac_toe():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "match.py"), "--game=phantom_ttt",
         "--bot_a=belief_sampler", "--bot_b=ismcts(iterations=5)", "--num_games=2"],
        capture_output=True, text=True, check=True)
    assert "belief_sampler" in proc.stdout and "mean return A" in proc.stdout


def test_match_script_prints_the_table():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "match.py"),
         "--game=goofspiel(num_cards=3,imp_info=False)", "--bot_a=smmcts(iterations=50)",
         "--bot_b=random", "--num_games=2"], capture_output=True, text=True, check=True)
    assert "smmcts(iterations=50)" in proc.stdout and "mean return A" in proc.stdout


SYMMETRIC = ["goofspiel(num_cards=5,imp_info=False,points_order=random)",
             "goofspiel(num_cards=4,imp_info=False,points_order=descending,"
             "returns_type=point_difference)",
             "blotto(coins=5,fields=3)", "oshi_zumo(coins=6,size=2,horizon=8)",
             "oshi_zumo(coins=5,size=3,horizon=12,min_bid=1)"]


@pytest.mark.parametrize("game_string", SYMMETRIC)
def test_the_mirrored_history_is_the_game_seen_from_the_other_seat(game_string):
    # What seats="first" / "second" rely on, checked on random trajectories: with the two
    # actions of every joint move exchanged, each player has the other's legal actions at
    # every round and the other's return at the end.
    from smmcts_spiel.bots.openspiel_bots import SYMMETRIC_GAMES, turn_based_state
    game = pyspiel.load_game(game_string)
    assert game.get_type().short_name in SYMMETRIC_GAMES
    turn_based = pyspiel.convert_to_turn_based(game)
    rng = np.random.default_rng(0)
    for _ in range(200):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
                continue
            mirrored = turn_based_state(game, turn_based, state, mirrored=True)
            assert mirrored.current_player() == 0
            first = mirrored.legal_actions(0)
            assert first == state.legal_actions(1)
            mirrored.apply_action(first[0])
            assert mirrored.legal_actions(1) == state.legal_actions(0)
            state.apply_actions([int(rng.choice(state.legal_actions(p))) for p in (0, 1)])
        end = turn_based_state(game, turn_based, state, mirrored=True)
        assert end.is_terminal() and end.returns() == state.returns()[::-1]


@pytest.mark.parametrize("engine", ["python", "cpp"])
def test_seat_rules_play_both_seats_by_one_movers_rule(engine):
    # Blotto's first move is the same state from either seat: a player-0 bot reading the
    # search as the second mover plays what the wrapper's player 1 plays, and a player-1
    # bot reading it as the first mover what its player 0 plays (same seed, same search).
    game = pyspiel.load_game("blotto(coins=6,fields=3)")
    state = game.new_initial_state()

    def move(player, seats):
        return TurnBasedMCTSBot(game, player, iterations=300, engine=engine, seed=5,
                                seats=seats).step(state)

    assert move(0, "second") == move(1, "openspiel") == move(1, "second")
    assert move(1, "first") == move(0, "openspiel") == move(0, "first")
    assert move(0, "openspiel") != move(1, "openspiel")  # the two rules differ here


@pytest.mark.parametrize("game_string, seats, message", [
    ("matrix_mp", "second", "treats both players alike"),  # not symmetric
    ("tic_tac_toe", "first", "treats both players alike"),  # not simultaneous
    ("blotto", "last", "seats must be one of"),
])
def test_seat_rules_refuse_games_they_do_not_fit(game_string, seats, message):
    with pytest.raises(ValueError, match=message):
        bot_specs.make_bot(f"mcts(iterations=10,seats={seats})", pyspiel.load_game(game_string),
                           0, seed=0)


def test_a_game_whose_parameters_leave_no_move_is_refused_before_playing():
    """markov_soccer(grid=A.B) loads, but its grid has no ball cell: the first chance node
    has no outcome (it was "not enough values to unpack" in the first game)."""
    game = pyspiel.load_game("markov_soccer(grid=A.B)")
    with pytest.raises(ValueError, match=r"cannot be played: the first node is a chance node "
                                         r"with no outcome; check the game's parameters"):
        match.play_match(game, "random", "random", 1, progress=False)


def test_the_match_script_names_an_unplayable_game():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "match.py"),
                             "--game=markov_soccer(grid=A.B)", "--num_games=1"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "markov_soccer(grid=A.B) cannot be played" in result.stderr


SIMULTANEOUS_IMPERFECT = pyspiel.load_game("goofspiel(num_cards=4,imp_info=True)")


@pytest.mark.parametrize("run", [
    lambda specs: match.round_robin(SIMULTANEOUS_IMPERFECT, specs, 2, progress=False),
    lambda specs: match.play_match(SIMULTANEOUS_IMPERFECT, *specs[1:], 2, progress=False),
])
def test_a_spec_that_cannot_play_the_game_is_refused_before_the_first_game(run, monkeypatch):
    """mmcts needs a sequential game: it failed after 32 s, in the middle of a round robin."""
    played = []
    monkeypatch.setattr(match, "play_game", lambda *args: played.append(args))
    with pytest.raises(ValueError, match=r"mmcts\(training_iterations=1000\) cannot play "
                                         r"goofspiel\(.*needs a sequential game"):
        run(["random", "is_smmcts(iterations=5)", "mmcts(training_iterations=1000)"])
    assert played == []


def test_the_tournament_refuses_a_spec_that_cannot_play_a_game_before_playing(tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "tournament.py"),
         "--games=matrix_rps;goofspiel(num_cards=4,imp_info=True)",
         "--bots=random;mmcts(training_iterations=10,iterations=0)", "--num_games=1",
         "--backend=serial", f"--results_dir={tmp_path / 'run'}"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "cannot play matrix_rps()" in result.stderr
    assert not (tmp_path / "run" / "games").exists()


def test_checking_the_specs_trains_and_solves_nothing(monkeypatch):
    from smmcts_spiel.bots import equilibrium_bot
    work = []
    monkeypatch.setattr(PhantomTTTMultipleTreeSearch, "train",
                        lambda self, n, **kwargs: work.append(n))
    monkeypatch.setattr(equilibrium_bot, "solution_of", lambda *a, **k: work.append("solve"))
    match.check_bots(["mmcts(training_iterations=100000)"], [PHANTOM])
    match.check_bots(["equilibrium"], [GOOFSPIEL])
    assert work == [0, 0]
    with pytest.raises(ValueError, match="equilibrium cannot play phantom_ttt"):
        match.check_bots(["equilibrium"], [PHANTOM])


def test_ismcts_takes_iterations_and_simulations_as_its_old_name(caplog):
    """One vocabulary: every bot's per-move budget is ``iterations``; ISMCTS's old
    ``simulations`` still works, with one deprecation line per process."""
    bot_specs._WARNED.clear()
    new = bot_specs.make_bot("ismcts(iterations=7)", PHANTOM, 0, 0)
    with caplog.at_level("WARNING"):
        old = [bot_specs.make_bot("ismcts(simulations=7)", PHANTOM, 0, 0) for _ in range(3)]
    assert new.simulations == 7 and all(bot.simulations == 7 for bot in old)
    assert caplog.text.count("ismcts(simulations=...) is deprecated: write "
                             "ismcts(iterations=...)") == 1
    with pytest.raises(ValueError, match="gives both simulations and iterations"):
        bot_specs.parse_bot_spec("ismcts(simulations=5,iterations=5)")
    assert bot_specs.with_time_limit("ismcts(iterations=5)", 0.1) == "ismcts(iterations=5)"


def own_random_bot(game, player_id, seed):
    """A user's own bot: OpenSpiel's Python uniform random bot, as a factory."""
    from open_spiel.python.bots.uniform_random import UniformRandomBot
    return UniformRandomBot(player_id, np.random.RandomState(seed))


def test_a_factory_plays_like_the_spec_it_stands_for():
    """A factory (game, player_id, seed) -> Bot is built per game and seat, with the seeds a
    spec would get: C++ uniform random bots through a factory give the spec's returns."""
    def cpp_random(game, player_id, seed):
        return pyspiel.make_uniform_random_bot(player_id, seed)

    by_spec = match.play_match(GOOFSPIEL, "random", "mcts(iterations=20)", 6, progress=False)
    by_factory = match.play_match(GOOFSPIEL, cpp_random, "mcts(iterations=20)", 6,
                                  progress=False)
    assert list(by_factory.returns) == list(by_spec.returns)
    assert by_factory.bot_a == "test_a_factory_plays_like_the_spec_it_stands_for.<locals>." \
                               "cpp_random"


def test_a_round_robin_takes_specs_factories_and_bot_objects():
    game = pyspiel.load_game("matrix_rps")
    results = match.round_robin(game, ["random", own_random_bot, own_random_bot(game, 0, 5)],
                                4, progress=False)
    assert [(r.bot_a, r.bot_b) for r in results] == [
        ("random", "own_random_bot"), ("random", "UniformRandomBot"),
        ("own_random_bot", "UniformRandomBot")]
    assert all(r.games == 4 for r in results)


def test_a_factory_that_returns_no_bot_is_refused_before_playing():
    with pytest.raises(ValueError, match="returned None, not a pyspiel.Bot"):
        match.play_match(GOOFSPIEL, lambda game, player_id, seed: None, "random", 2,
                         progress=False)


def test_a_tournament_plays_a_factory_and_refuses_a_bot_object(tmp_path):
    from smmcts_spiel import experiments, tournament

    jobs = tournament.tournament_jobs(["matrix_rps"], ["random", own_random_bot], 2, 1, seed=0)
    results = experiments.run_jobs(match.play_games, jobs, results_dir=tmp_path,
                                   backend="serial", progress=False)
    assert sum(len(r["returns"]) for r in results.values()) == 4
    again = experiments.run_jobs(match.play_games, jobs, results_dir=tmp_path,
                                 backend="serial", progress=False)  # resumed from its files
    assert all(np.array_equal(results[k]["returns"], again[k]["returns"]) for k in jobs)
    with pytest.raises(ValueError, match="is a bot object: a tournament's jobs need specs or "
                                         "factories"):
        tournament.tournament_jobs(["matrix_rps"], ["random", pyspiel.make_uniform_random_bot(
            0, 1)], 2, 1, seed=0)


def test_openspiels_bots_are_public_names():
    from smmcts_spiel import bots
    assert {"TurnBasedMCTSBot", "ISMCTSBot", "terminal_rewards_view"} <= set(bots.__all__)


def test_spec_parameters_are_read_from_the_constructor():
    """A bot's new constructor parameter is a spec parameter of its annotated type (no table
    to retype); the seat, the seed and hidden ones are not; one without a type is refused."""

    class Bot:
        def __init__(self, game, player_id: int, depth: int | None = None, seed: int = 0,
                     label: str = "x", search: object = None):
            pass

    assert bot_specs.spec_parameters(Bot, hidden=("search",)) == {"depth": int, "label": str}
    assert bot_specs.spec_parameters(Bot, ("search",), {"file": str}) == {
        "depth": int, "label": str, "file": str}

    class Untyped:
        def __init__(self, game, player_id: int, depth=None):
            pass

    with pytest.raises(TypeError, match=r"Untyped\(depth=\.\.\.\) needs a type hint"):
        bot_specs.spec_parameters(Untyped)
    # The bots' own: SMMCTSBot's signature gives the spec's parameters (max_memory hidden).
    assert set(bot_specs.BOT_PARAMS["smmcts"]) >= {"selector", "threads", "parallel"}
    assert "max_memory" not in bot_specs.BOT_PARAMS["smmcts"]
