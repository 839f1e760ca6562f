"""The scripts under hostile command lines: nothing committed overwritten, no traceback, every
refusal naming the flag and the fix, before any work is done (issue 27's script findings)."""

import csv
import json
import logging
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pyspiel
import pytest
from programs import PROGRAMS, program

from smmcts_spiel import bot_specs, match, tournament
from smmcts_spiel.experiments import cli, outputs

ROOT = Path(__file__).resolve().parents[1]
TINY_TOURNAMENT = ["--games=matrix_rps", "--bots=random;cpp(bot=uniform_random)",
                   "--num_games=1", "--chunk=1", "--backend=serial", "--bootstrap=2"]


def run_script(name, *args, cwd=ROOT, timeout=300):
    return subprocess.run([sys.executable, str(program(name)), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=cwd)


def assert_refused(result, *words):
    """Exit status 2, no traceback, a short message (not the whole --help) with ``words``."""
    assert result.returncode == 2, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    message = [line for line in result.stderr.splitlines()
               if not line.startswith("smmcts_spiel: numba is compiling")]
    assert len(message) <= 6, result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


# -- data loss: committed results need --publish ------------------------------------------


@pytest.fixture
def published(tmp_path):
    """A folder laid out like the committed results (``experiments/tournaments/results/x``)
    in a scratch project directory, so that a script that fails to refuse harms only a copy."""
    folder = tmp_path / "experiments" / "tournaments" / "results" / "x"
    folder.mkdir(parents=True)
    for name in ("games.csv", "summary.md", "tournament.md"):
        (folder / name).write_text("committed\n")
    return folder


@pytest.mark.parametrize("script, args", [
    ("tournament.py", TINY_TOURNAMENT),
    ("equilibrium_loss.py", ["--game=matrix_rps", "--bots=random", "--num_games=1",
                             "--chunk=1", "--solutions_dir=solutions"]),
])
def test_runners_need_publish_to_write_into_committed_results(script, args, published):
    project = published.parents[2]
    result = run_script(script, *args, "--results_dir=experiments/tournaments/results/x",
                        cwd=project)
    assert_refused(result, "--publish", "experiments")
    assert sorted(p.name for p in published.iterdir()) == ["games.csv", "summary.md",
                                                          "tournament.md"]
    assert all(p.read_text() == "committed\n" for p in published.iterdir())


@pytest.mark.slow
def test_a_solution_cache_inside_docs_needs_publish(published):
    project = published.parents[2]
    result = run_script("equilibrium_loss.py", "--game=matrix_rps", "--solve_only",
                        "--solutions_dir=docs/solutions", cwd=project)
    assert_refused(result, "--publish", "docs")
    assert not (project / "docs" / "solutions").exists()


@pytest.mark.parametrize("script, args", [
    ("equilibrium_loss.py", ["--solve_only", "--solutions_dir=solutions"]),
    ("tune_exploration.py", ["--solution_dir=solutions", "--random_settings=",
                             "--results_dir=tune"]),
])
def test_a_game_too_large_to_solve_names_the_flag_that_lifts_the_limits(script, args,
                                                                         tmp_path):
    """The library's refusal says ``max_stage_cells=None``, which a script user cannot pass."""
    result = run_script(script, "--game=blotto(coins=20,fields=4)" if script.startswith("eq")
                        else "--games=blotto(coins=20,fields=4)", *args, cwd=tmp_path)
    assert_refused(result, "1771 x 1771", "--nosolver_limits")
    assert not (tmp_path / "solutions").exists()


@pytest.mark.slow
def test_the_solver_benchmark_csv_needs_publish_inside_docs(published):
    project = published.parents[2]
    result = run_script("bench_solver.py", "--output_csv=docs/bench.csv", "--repeats=1",
                        "--openspiel_repeats=1", "--min_cards=3", "--max_cards=3",
                        "--max_seconds=1", cwd=project)
    assert_refused(result, "--publish", "docs")
    assert not (project / "docs" / "bench.csv").exists()


#: Every flag naming a path that a script writes, with the flags it needs to write there.
WRITING_FLAGS = {
    ("aij_convergence.py", "out"): [], ("aij_convergence.py", "results_dir"): [],
    ("aij_exact.py", "out"): [], ("aij_exact.py", "results_dir"): [],
    ("aij_head_to_head.py", "out"): [], ("aij_head_to_head.py", "results_dir"): [],
    ("aij_speed.py", "out"): [], ("aij_speed.py", "results_dir"): [],
    ("aij_ties.py", "out"): [], ("aij_ties.py", "results_dir"): [],
    ("bench_bot.py", "csv"): ["--all_games"], ("bench_nfsp.py", "out"): [],
    ("bench_startup.py", "csv"): [],
    ("bench_exact.py", "output_csv"): [], ("bench_solver.py", "output_csv"): [],
    ("demo.py", "results_dir"): [],
    ("equilibrium_loss.py", "solutions_dir"): [], ("equilibrium_loss.py", "results_dir"): [],
    ("fig2.py", "out"): [], ("fig2.py", "results_dir"): [], ("fig3.py", "data_dir"): [],
    ("fig3.py", "out"): [], ("fig3.py", "results_dir"): [], ("fig3_long.py", "out"): [],
    ("fig3_long.py", "results_dir"): [], ("imperfect_exploitability.py", "results_dir"): [],
    ("imperfect_exploitability.py", "out"): [], ("imperfect_match.py", "results_dir"): [],
    ("imperfect_match.py", "out"): [], ("imperfect_protocol.py", "results_dir"): [],
    ("imperfect_protocol.py", "out"): ["--summarize=runs"], ("nfsp_othello.py", "out"): [],
    ("nfsp_othello.py", "checkpoint_dir"): [], ("nfsp_poker.py", "out"): [],
    ("nfsp_poker.py", "checkpoint_dir"): [], ("olympiad.py", "results_dir"): [],
    ("olympiad.py", "trees_dir"): [], ("online_exploitability.py", "out"): [],
    ("online_exploitability.py", "results_dir"): [], ("oos_parameters.py", "results_dir"): [],
    ("oos_parameters.py", "out"): [], ("oos_targeted_nashconv.py", "out"): [],
    ("regret_against_random.py", "out"): [], ("tournament.py", "results_dir"): [],
    ("tune_exploration.py", "solution_dir"): [], ("tune_exploration.py", "out"): [],
    ("tune_exploration.py", "results_dir"): [], ("scaling.py", "results_dir"): [],
    ("strength_speedup.py", "results_dir"): [],
}
#: Flags whose names look like outputs but that name what a script reads (or no file:
#: gtlibrary_side_by_side's checkpoints are CPU seconds).
READING_FLAGS = {("pool_games.py", "games_csv"), ("imperfect_protocol.py", "summarize"),
                 ("imperfect_exploitability.py", "checkpoints"),
                 ("tune_exploration.py", "checkpoints"),
                 ("aij_convergence.py", "checkpoints"),
                 ("gtlibrary_side_by_side.py", "gtlibrary_classpath"),
                 ("gtlibrary_side_by_side.py", "checkpoints")}


def test_every_flag_naming_a_path_is_known_as_written_or_read():
    """A new output flag must join WRITING_FLAGS, so the sweep below tries it."""
    found = set()
    for path in PROGRAMS.values():
        text = path.read_text()
        for name in re.findall(r'DEFINE_(?:string|list)\(\s*"(\w+)"', text):
            if re.search(r"dir|out|csv|file|path|json|checkpoint|trees|cache|summar", name):
                found.add((path.name, name))
        if "define_runner_flags(" in text:
            found.add((path.name, "results_dir"))
    assert found - READING_FLAGS == set(WRITING_FLAGS)


@pytest.mark.parametrize("script, flag", [
    pytest.param(*key, marks=() if key in {("bench_bot.py", "csv"), ("demo.py", "results_dir")}
                 else pytest.mark.slow) for key in WRITING_FLAGS])
def test_every_writing_flag_needs_publish_to_write_into_committed_results(script, flag,
                                                                        tmp_path):
    result = run_script(script, *WRITING_FLAGS[(script, flag)], f"--{flag}=docs/x", cwd=tmp_path)
    assert_refused(result, "--publish", "docs")
    assert not (tmp_path / "docs").exists()


def _git(folder, *args):
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)


@pytest.fixture
def repository(tmp_path):
    """A scratch git repository with one committed file (notes.md) and one in a folder."""
    _git(tmp_path, "init", "-q")
    (tmp_path / "notes.md").write_text("committed\n")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "table.csv").write_text("committed\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    return tmp_path


@pytest.mark.parametrize("path, tracked", [
    ("notes.md", "notes.md"), ("notes", "notes.md"), ("runs", "runs/table.csv"),
    ("runs/table", "runs/table.csv"), ("runs/new.csv", None), ("new/folder", None),
    ("note", None)])
def test_a_path_git_tracks_or_a_folder_holding_one_is_committed(repository, path, tracked,
                                                                monkeypatch):
    monkeypatch.chdir(repository)
    found = outputs.tracked_by_git(path)
    assert (found and os.path.relpath(found, repository)) == tracked
    if tracked:
        with pytest.raises(ValueError, match="--publish"):
            outputs.check_output([path], publish=False)
        outputs.check_output([path], publish=True)
    else:
        outputs.check_output([path], publish=False)


def test_the_top_of_a_repository_holds_committed_files(repository, monkeypatch):
    monkeypatch.chdir(repository / "runs")
    assert outputs.tracked_by_git("..") is not None


def test_a_file_git_tracks_is_not_replaced_by_a_benchmark_csv(repository):
    result = run_script("bench_bot.py", "--all_games", "--csv=notes.md", cwd=repository)
    assert_refused(result, "--publish", "git tracks")
    assert (repository / "notes.md").read_text() == "committed\n"


@pytest.mark.parametrize("folder", outputs.PUBLISHED_DIRS)
def test_every_folder_of_committed_results_is_protected_without_git(folder, tmp_path,
                                                                    monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "")  # no git: the published folders alone
    assert outputs.tracked_by_git("anything") is None
    with pytest.raises(ValueError, match="where the committed results live"):
        outputs.check_output([f"{folder}/name/results.csv"], publish=False)


# -- tracebacks ---------------------------------------------------------------------------


def test_bootstrap_zero_is_refused_before_playing(tmp_path):
    result = run_script("tournament.py", *TINY_TOURNAMENT, "--bootstrap=0",
                        f"--results_dir={tmp_path / 'run'}")
    assert_refused(result, "--bootstrap")
    assert not (tmp_path / "run").exists()


def test_a_results_dir_that_cannot_be_created_is_named(tmp_path):
    (tmp_path / "a_file").write_text("")
    result = run_script("tournament.py", *TINY_TOURNAMENT,
                        f"--results_dir={tmp_path / 'a_file' / 'run'}")
    assert_refused(result, "cannot create", str(tmp_path / "a_file" / "run"))


@pytest.mark.parametrize("args, words", [
    ([f"--threads=1,{len(os.sched_getaffinity(0)) + 1}"], ["--threads", "core"]),
    (["--threads=0"], ["--threads"]),
    (["--only=("], ["--only", "regular expression"]),
    (["--only=no_such_game"], ["--only", "matches none"]),
    (["--csv=/nonexistent/dir/x.csv"], ["--csv", "does not exist"]),
])
def test_the_bot_benchmark_refuses_bad_flags_before_timing_anything(args, words):
    result = run_script("bench_bot.py", "--all_games", *args, timeout=60)
    assert_refused(result, *words)
    assert "repeats of" not in result.stdout  # nothing was measured


def test_the_bot_benchmark_csv_needs_all_games(tmp_path):
    result = run_script("bench_bot.py", f"--csv={tmp_path / 'x.csv'}", timeout=60)
    assert_refused(result, "--all_games")


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


GAMES_CSV_HEADER = ["game", "first", "second", "return_first", "return_second"]


@pytest.mark.parametrize("header, rows, message", [
    (GAMES_CSV_HEADER[1:], [["a", "b", 1, -1]], "no column 'game'"),
    (GAMES_CSV_HEADER, [["matrix_rps", "a", "b", "one", -1]], "line 2: return_first 'one' is "
                                                              "not a number"),
    (GAMES_CSV_HEADER, [["matrix_rps", "a", "b", 1, "nan"]], "not finite"),
    (GAMES_CSV_HEADER, [], "holds no games"),
])
def test_a_games_csv_is_refused_with_what_is_wrong(tmp_path, header, rows, message):
    path = write_csv(tmp_path / "games.csv", header, rows)
    with pytest.raises(ValueError, match=message) as refusal:
        tournament.read_games_csv(path)
    assert str(path) in str(refusal.value)


def test_pool_games_names_the_file_and_the_closest_game(tmp_path):
    path = write_csv(tmp_path / "games.csv", GAMES_CSV_HEADER, [["matrix_rpss", "a", "b", 1, -1]])
    result = run_script("pool_games.py", f"--games_csv={path}")
    assert_refused(result, str(path), "did you mean 'matrix_rps'")
    good = write_csv(tmp_path / "good.csv", GAMES_CSV_HEADER, [["matrix_rps", "a", "b", 1, -1]])
    missing = run_script("pool_games.py", f"--games_csv={good};{tmp_path / 'none.csv'}")
    assert_refused(missing, "cannot read", str(tmp_path / "none.csv"))


# -- messages -----------------------------------------------------------------------------


@pytest.mark.parametrize("script", [
    "tournament.py", *(pytest.param(s, marks=pytest.mark.slow) for s in (
        "match.py", "equilibrium_loss.py", "fig2.py", "olympiad.py", "evaluator_accuracy.py"))])
def test_a_negative_seed_names_the_flag(script, tmp_path):
    result = run_script(script, "--seed=-1", cwd=tmp_path)
    assert_refused(result, "--seed")


def test_a_usage_error_is_short_and_says_where_help_is():
    result = run_script("match.py", "--num_games=0")
    assert_refused(result, "--num_games", "run match.py --help")


SWEEP = textwrap.dedent("""
    import json, runpy, sys
    from absl import flags
    from smmcts_spiel.experiments import cli

    FLAGS = flags.FLAGS
    accepted = {}
    for path in sys.argv[1:]:
        before = set(FLAGS)
        runpy.run_path(path, run_name="script_under_test")
        ours = [name for name in sorted(set(FLAGS) - before)
                if FLAGS.find_module_defining_flag(name).startswith(("script_under_test",
                                                                      "smmcts_spiel"))]
        accepted[path] = []
        for name in ours:
            kind = FLAGS[name].flag_type()
            for bad in {"int": ["-1"], "float": ["-1", "nan"]}.get(kind, []):
                try:
                    cli.parse_flags([path, f"--{name}={bad}"])
                    accepted[path].append(f"--{name}={bad}")
                except SystemExit:
                    pass
                FLAGS.unparse_flags()
        for name in set(FLAGS) - before:
            delattr(FLAGS, name)
    print(json.dumps(accepted))
""")


@pytest.mark.slow
def test_no_numeric_flag_of_any_script_takes_a_negative_or_nan_value():
    # One process for every script (about 20 s): each script's flags are defined, tried with
    # values below their range, and removed before the next script is loaded.
    scripts = sorted(str(p) for p in PROGRAMS.values())
    result = subprocess.run([sys.executable, "-c", SWEEP, *scripts], capture_output=True,
                            text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    accepted = json.loads(result.stdout.splitlines()[-1])
    assert len(accepted) == len(scripts)
    assert {path: bad for path, bad in accepted.items() if bad} == {}


# -- equal time for every searching bot ---------------------------------------------------


@pytest.mark.parametrize("spec, timed", [
    ("smmcts", "smmcts(time_limit=0.1)"),
    ("mcts(engine=cpp)", "mcts(engine=cpp,time_limit=0.1)"),
    ("oos(delta=0.9)", "oos(delta=0.9,time_limit=0.1)"),
    ("is_smmcts", "is_smmcts(time_limit=0.1)"),
    ("ismcts(worlds=auto)", "ismcts(worlds=auto,time_limit=0.1)"),
    ("ismcts(iterations=50)", "ismcts(iterations=50)"),  # its own budget: kept
    ("smmcts(iterations=5)", "smmcts(iterations=5)"),
    ("mmcts(training_iterations=1000,iterations=0)", "mmcts(training_iterations=1000,"
                                                     "iterations=0)"),
    ("random", "random"), ("equilibrium", "equilibrium"), ("belief_sampler", "belief_sampler"),
    ("cpp(bot=uniform_random)", "cpp(bot=uniform_random)"),
])
def test_the_time_limit_reaches_every_searching_bot(spec, timed):
    assert bot_specs.with_time_limit(spec, 0.1) == timed
    assert bot_specs.with_time_limit(spec, None) == spec


def test_a_searching_bot_that_cannot_search_by_time_is_named_and_refused():
    with pytest.raises(ValueError, match=r"mmcts\(gamma=0.1\) cannot search by time.*"
                                         r"iterations, training_iterations"):
        bot_specs.with_time_limit("mmcts(gamma=0.1)", 0.1)


@pytest.mark.parametrize("spec", ["oos(engine=generic)", "is_smmcts", "ismcts"])
def test_timed_imperfect_information_bots_are_built_with_the_time_limit(spec):
    bot = bot_specs.make_bot(bot_specs.with_time_limit(spec, 0.01),
                             pyspiel.load_game("kuhn_poker"), 0, seed=0)
    assert bot.time_limit == 0.01
    assert getattr(bot, "iterations", None) is None and getattr(bot, "simulations", None) is None


def test_a_timed_run_warns_about_bots_on_their_own_budget(caplog):
    game = pyspiel.load_game("kuhn_poker")
    with caplog.at_level(logging.WARNING):
        match.warn_about_bots(["ismcts(iterations=50)", "mcts", "random"], [game], 0.1)
    text = caplog.text
    assert "ismcts(iterations=50) plays at its own budget (iterations=50)" in text
    assert "mcts searches the full state of kuhn_poker()" in text and "ismcts" in text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        match.warn_about_bots(["mcts", "smmcts"], [pyspiel.load_game("matrix_rps")], 0.1)
    assert caplog.text == ""
    # The runners give every searcher the match's time limit before they check the specs.
    timed = [bot_specs.with_time_limit(s, 0.1) for s in ("mcts", "smmcts(threads=2)")]
    with caplog.at_level(logging.WARNING):
        match.warn_about_bots(timed + ["smmcts(time_limit=1)"], [pyspiel.load_game("matrix_rps")],
                              0.1)
    assert caplog.text.count("plays at its own budget") == 1
    assert "smmcts(time_limit=1) plays at its own budget (time_limit=1)" in caplog.text


# -- suggestions --------------------------------------------------------------------------


@pytest.mark.parametrize("spec, suggestion", [
    ("smcts", "did you mean 'smmcts'"), ("smmcts(gama=0.1)", "did you mean 'gamma'"),
    ("ismcts(simulation=5)", "did you mean 'simulations'"),
])
def test_misspelt_bots_and_parameters_get_a_suggestion(spec, suggestion):
    with pytest.raises(ValueError, match=suggestion):
        bot_specs.parse_bot_spec(spec)


@pytest.mark.parametrize("text, message", [
    ("goofspeil", "unknown game 'goofspeil' (did you mean 'goofspiel'?)"),
    ("goofspiel(num_card=3)", "has no parameter 'num_card' (did you mean 'num_cards'?)"),
    ("goofspiel(num_cards=3", "malformed game string"),
    ("smmcts_goofspiel(num_cards=0)", "num_cards must be an integer"),
])
def test_misspelt_games_are_named_with_the_flag_and_a_suggestion(text, message):
    with pytest.raises(ValueError, match=re.escape(message)) as refusal:
        cli.load_game(text, "--games")
    assert str(refusal.value).startswith("--games: ")
    assert len(str(refusal.value)) < 300  # not pyspiel's list of every game


@pytest.mark.parametrize("spec, message", [
    ("smmcts(iterations=0)", "iterations must be an integer >= 1"),
    ("smmcts(time_limit=-1)", "time_limit must be a positive"),
    ("oos(epsilon=1.5)", "epsilon must be a probability"),
    ("mcts(uct_c=-2)", "uct_c must be a non-negative"),
    ("smmcts(selector=ucb,tie_tolerance=-0.01)", "tie_tolerance must be a non-negative"),
])
def test_bad_values_in_a_spec_are_refused_before_any_bot_is_built(spec, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        bot_specs.parse_bot_spec(spec)


@pytest.mark.parametrize("spec, message", [
    ("cpp(bot=uniform_random,seed=abc)", "seed='abc' in bot spec .* must be an integer"),
    ("cpp(bot=uniform_random,seed=-3)", "seed must be in 0"),
    ("cpp(bot=uniform_random,policy=x)", "unknown parameter 'policy'.*uniform_random takes: "
                                         "seed"),
    ("cpp(bot=unifrm_random)", "did you mean 'uniform_random'"),
    ("smmcts(iterations=10,iterations=20)", "gives iterations twice; give it once"),
    ("smmcts(iterations=99999999999999999999)", "beyond a 64-bit integer; give a smaller"),
    ("oos(delta=abc)", "must be a number \\(e.g. 0.05 or 1e-3\\)"),
    ("smmcts(selector=1)", "selector=1 .* must be a name"),
])
def test_bot_specs_are_refused_with_what_to_write_instead(spec, message):
    with pytest.raises(ValueError, match=message):
        bot_specs.parse_bot_spec(spec)


@pytest.mark.parametrize("spec, value", [
    ("smmcts(time_limit=1e-3)", ("time_limit", 1e-3)),
    ("oos(gamma=1e-2,delta=.5)", ("gamma", 0.01)),
    ("cpp(bot=fixed_action_preference,actions=2)", ("actions", "2")),
    ("cpp(bot=uniform_random,seed=7)", ("seed", 7)),
])
def test_numbers_in_exponent_form_and_cpp_parameters_are_accepted(spec, value):
    assert bot_specs.parse_bot_spec(spec)[value[0]] == value[1]


def test_a_cpp_bot_plays_with_its_parameters():
    game = pyspiel.load_game("matrix_rps")
    bot = bot_specs.make_bot("cpp(bot=fixed_action_preference,actions=2)", game, 0, seed=0)
    assert bot.step(game.new_initial_state()) == 2


def test_a_text_file_given_as_a_saved_search_is_named_for_what_it_is(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("not a search\n")
    with pytest.raises(ValueError) as refusal:
        bot_specs.make_bot(f"mmcts(file={path})", pyspiel.load_game("phantom_ttt"), 0, seed=0)
    message = str(refusal.value)
    assert "not a .npz file" in message and "PhantomTTTMultipleTreeSearch.save" in message
    assert "pickled" not in message and "delete it" not in message


def test_a_bad_cpp_spec_in_a_match_is_a_usage_error():
    result = run_script("match.py", "--bot_a=cpp(bot=uniform_random,seed=abc)",
                        "--game=matrix_rps", "--num_games=1")
    assert_refused(result, "seed='abc'", "must be an integer")
