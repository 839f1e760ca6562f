"""The AIJ 2016 study's tables (experiments/aij2016): the paper's figures file against the
paper's LaTeX source and the issue's figures, the jobs, and small runs of the programs."""

import csv
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from programs import program

from smmcts_spiel import bot_specs
from smmcts_spiel.bots import SMMCTSBot
from smmcts_spiel.exact import exploitability, solver
from smmcts_spiel.experiments import aij2016

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "experiments" / "aij2016" / "paper_figures.csv"
#: A git directory of the paper's LaTeX source (lanctot/sm-journal), if SM_JOURNAL_GIT_DIR
#: names one (e.g. a bare clone of https://github.com/lanctot/sm-journal).
PAPER_SOURCE = Path(os.environ.get("SM_JOURNAL_GIT_DIR", "no-sm-journal-git-dir-given"))


def run(name, *args, cwd):
    return subprocess.run([sys.executable, str(program(name)), *args], capture_output=True,
                          text=True, timeout=900, cwd=cwd)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


# -- the paper's figures ----------------------------------------------------------------


@pytest.fixture(scope="module")
def figures():
    return aij2016.read_paper_figures(FIGURES)


@pytest.fixture(scope="module")
def evaluation_tex():
    if not (PAPER_SOURCE / "HEAD").exists():
        pytest.skip(f"no git directory of the paper's source at {PAPER_SOURCE} "
                    "(set SM_JOURNAL_GIT_DIR)")
    return subprocess.run(["git", "--git-dir", str(PAPER_SOURCE), "show", "HEAD:evaluation.tex"],
                          capture_output=True, text=True, check=True).stdout


def test_every_quote_of_the_figures_file_is_the_papers_own_words(figures, evaluation_tex):
    text = " ".join(evaluation_tex.split())
    missing = [f"{f['table']} {f['row']} {f['method']}: {f['quote']}" for f in figures
               if f["quote"] not in text]
    assert not missing, "\n".join(missing)


def test_each_head_to_head_row_of_the_file_is_a_row_of_the_papers_table(figures,
                                                                         evaluation_tex):
    """The cells of each (table, row algorithm), in the file's column order, are one line of
    the LaTeX source's cross tables in that order: the file has them in the right places."""
    lines = [re.sub(r"\\textbf\{([^}]*)\}", r"\1", line) for line in evaluation_tex.splitlines()
             if "&" in line]
    groups = {}
    for f in figures:
        if f["table"] == "head_to_head":
            groups.setdefault((f["row"], f["method"]), []).append(f["quote"])
    assert len(groups) == 10 * 6  # ten tables of six rows
    for (row, method), cells in groups.items():
        pattern = re.escape(method) + r"[^&]*&" + "&".join(
            r"(?:\$\\bullet\$&)?" + re.escape(c) for c in cells)
        assert any(re.search(pattern, line.replace("$\\doab$", "DOAB")) for line in lines), \
            (row, method, cells)


@pytest.mark.parametrize("table, row, method, opponent, unit, figure", [
    # the issue's quotes of the paper, each checked against its source
    ("exact", "gs7_fixed_wtl", "BI", "", "nodes", 3.2e7),
    ("exact", "gs7_fixed_wtl", "BIAB", "", "s", 240),
    ("exact", "gs7_fixed_wtl", "DOAB", "", "s", 180),
    ("exact", "gs5_chance_wtl", "DOAB", "", "s", 23),
    ("exact", "peg5_d6", "BI", "", "s", 13 * 3600),
    ("exact", "oz13_k4_wtl", "BIAB", "", "s", 1.5),
    ("exact", "oz18_k4_wtl", "BIAB", "", "s", 50 * 60),
    ("exact", "oz18_k4_points", "BIAB", "", "s", 191 * 60),
    ("exact", "tron6x6", "DOAB", "", "s", 0.6),
    ("exact", "rg4_d7", "BI", "", "s", 3.5 * 3600),
    ("speed", "gs5_fixed_wtl", "RM", "", "iterations/s", 2.6e5),
    ("speed", "gs5_fixed_wtl", "EXP3", "", "iterations/s", 5.4e4),
    ("convergence", "oz10_k3_wtl", "OOS", "", "NashConv", 0.29),
    ("convergence", "oz10_k3_wtl", "UCT", "", "NashConv", 1.50),
    ("convergence", "gs5_fixed_wtl", "UCT", "", "NashConv", 0.35),
    ("head_to_head", "gs13_chance", "RM", "DOAB", "win %", 74.1),
    ("head_to_head", "gs13_chance", "RM", "EXP3", "win %", 58.9),
    ("head_to_head", "oz50", "DOAB", "UCT", "win %", 77.6),
    ("head_to_head", "oz50_eval", "UCT", "DOAB", "win %", 88.2),
    ("head_to_head", "tron13", "DOAB", "UCT", "win %", 53.8),
    ("head_to_head", "random", "UCT", "DOAB", "win %", 50.4),
])
def test_the_issues_figures_are_in_the_file(figures, table, row, method, opponent, unit,
                                            figure):
    found = aij2016.paper_figure(figures, table, row, method, unit, opponent)
    assert found is not None and found["figure"] == pytest.approx(figure)


def test_every_row_of_the_figures_file_names_a_row_of_the_experiment(figures):
    rows = {"exact": aij2016.EXACT_ROWS, "head_to_head": aij2016.MATCH_GAMES,
            "speed": aij2016.OFFLINE_GAMES, "convergence": aij2016.OFFLINE_GAMES,
            "tie_breaking": {aij2016.TIE_BREAKING_ROW}}
    unknown = {(f["table"], f["row"]) for f in figures if f["row"] not in rows[f["table"]]}
    # offline rows the programs do not run yet (point utilities, random games) are kept
    assert unknown <= {("speed", "rg4_d5"), ("speed", "gs13_chance"),
                       ("convergence", "oz10_k3_points")}, unknown


def test_a_target_below_a_lower_bound_of_the_paper_is_never_missed():
    exact, bound = {"figure": 1.0, "relation": "="}, {"figure": 1.0, "relation": ">"}
    assert aij2016.below_paper_verdict(0.5, 0.9, bound) == "met"
    assert aij2016.below_paper_verdict(1.2, 1.5, exact) == "missed"
    assert aij2016.below_paper_verdict(1.2, 1.5, bound) == "undecided"  # the paper's: > 1
    assert aij2016.below_paper_verdict(0.9, 1.1, exact) == "undecided"


def test_a_malformed_figures_file_is_refused_naming_the_line(tmp_path):
    path = tmp_path / "f.csv"
    lines = FIGURES.read_text().splitlines()
    path.write_text("\n".join([lines[0], lines[1].replace(",9000,", ",many,")]) + "\n")
    with pytest.raises(ValueError, match=r"f.csv:2: figure 'many'"):
        aij2016.read_paper_figures(path)


# -- the jobs ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["bi", "do", "biab", "doab"])
@pytest.mark.parametrize("transpositions", [True, False])
def test_an_exact_job_finds_backward_inductions_value(method, transpositions):
    game = "smmcts_goofspiel(num_cards=4,points_order=shuffled,points_seed=1)"
    result = aij2016.exact_job(game, method, transpositions, max_seconds=120)
    assert result["solved"] == 1
    assert float(result["value"]) == pytest.approx(solver.game_value(pyspiel.load_game(game)),
                                                   abs=1e-9)
    assert result["nodes_evaluated"] >= 0 and result["states"] > 0


def test_an_exact_job_past_its_budget_is_recorded_unsolved():
    result = aij2016.exact_job("smmcts_tron(rows=5,cols=6)", "bi", True, max_seconds=0.01)
    assert result["solved"] == 0 and math.isnan(result["value"])


def test_the_exact_rows_that_do_not_fit_say_why_and_the_others_load():
    for key, row in aij2016.EXACT_ROWS.items():
        if row.does_not_fit:
            assert key in ("rg4_d6", "rg4_d7") and "5,000,000" in row.does_not_fit
        else:
            for game in row.games(2):
                pyspiel.load_game(game)
    assert len(aij2016.EXACT_ROWS["gs7_fixed_wtl"].games(10)) == 10
    assert aij2016.EXACT_ROWS["gs7_chance_wtl"].games(10) == [
        aij2016.EXACT_ROWS["gs7_chance_wtl"].game]


@pytest.mark.slow
@pytest.mark.parametrize("sampler", aij2016.SAMPLERS)
def test_a_sampler_job_counts_iterations_and_scores_its_strategy(sampler):
    game = aij2016.OFFLINE_GAMES["gs5_fixed_wtl"]
    value = solver.game_value(pyspiel.load_game(game.game))
    result = aij2016.sampler_job(game.game, sampler, 0, [0.05, 0.2], game.uct_c, value)
    assert result["iterations"][0] > 0 and result["iterations"][1] > result["iterations"][0]
    assert 0.2 <= result["cpu_seconds"][1] < 1.0
    assert all(0 <= nc <= 2 for nc in result["nash_conv"])  # win/tie/lose: at most 2
    unscored = aij2016.sampler_job(game.game, sampler, 0, [0.05], game.uct_c, None)
    assert math.isnan(unscored["nash_conv"][0])


@pytest.mark.parametrize("key", [k for k, g in aij2016.MATCH_GAMES.items()
                                 if not g.does_not_fit])
def test_the_paper_bots_are_specs_of_the_games_with_the_tables_exploration(key):
    game = aij2016.MATCH_GAMES[key]
    loaded = pyspiel.load_game(game.games[0])
    for label in aij2016.MATCH_LABELS:  # built for both seats, at the game's time per move
        spec = aij2016.paper_bot_spec(label, game)
        bot_specs.check_spec(bot_specs.with_time_limit(spec, game.time_limit), loaded)
    oos = bot_specs.parse_bot_spec(aij2016.paper_bot_spec("OOS", game))
    assert (oos["name"], oos["preset"], oos["epsilon"]) == (
        "sm_oos", "paper", game.exploration["OOS"])  # the study's SM-OOS, the table's epsilon
    doab = bot_specs.parse_bot_spec(aij2016.paper_bot_spec("DOAB", game))
    assert doab == {"name": "doab", "evaluator": "heuristic"}  # on every game, as the paper
    evaluated = "heuristic" if game.evaluation else "random_rollout"
    assert all(bot_specs.parse_bot_spec(aij2016.paper_bot_spec(label, game))["evaluator"]
               == evaluated for label in ("OOS", "UCT", "EXP3", "RM"))


def test_the_paper_bot_spec_maps_the_tables_constants():
    game = aij2016.MATCH_GAMES["gs13_chance"]
    assert aij2016.paper_bot_spec("UCT", game) == \
        "smmcts(selector=ucb,c=0.3,tie_tolerance=0.005,evaluator=random_rollout)"  # C 0.6
    # (C and the 0.01 tie gap on [-1, 1]; the spec's bot takes it)
    bot = bot_specs.make_bot(aij2016.paper_bot_spec("UCT", game),
                             pyspiel.load_game("goofspiel(num_cards=4,imp_info=False)"), 0, 0)
    assert (bot.search.c, bot.search.tie_tolerance) == (0.3, 0.005)
    assert aij2016.paper_bot_spec("OOS", game) == \
        "sm_oos(preset=paper,epsilon=0.2,evaluator=random_rollout)"
    with pytest.raises(ValueError, match="no paper's bot 'MCTS'"):
        aij2016.paper_bot_spec("MCTS", game)


def test_the_pursuit_evasion_starts_keep_the_units_within_two_thirds_of_the_depth():
    starts = aij2016.pursuit_evasion_starts(10, 15, 30, seed=3)
    assert starts == aij2016.pursuit_evasion_starts(10, 15, 30, seed=3)
    for evader, *units in starts:
        for unit in units:
            distance = abs(unit // 10 - evader // 10) + abs(unit % 10 - evader % 10)
            assert 1 <= distance <= 10
    for game in aij2016.MATCH_GAMES["peg10"].games:
        pyspiel.load_game(game)


@pytest.mark.parametrize("low, high, verdict", [
    (0.01, 0.2, "ahead"), (-0.2, -0.01, "behind"), (-0.1, 0.1, "level"),
    (0.0, 0.1, "level"), (math.nan, math.nan, "undecided")])
def test_the_decision_rule(low, high, verdict):
    assert aij2016.decision(low, high) == verdict


# -- the programs, small ----------------------------------------------------------------


def test_the_exact_table_solves_its_rows_and_lists_those_that_do_not_fit(tmp_path):
    result = run("aij_exact.py", "--rows=oz10_k3_wtl,rg4_d2,rg4_d7", "--methods=bi,doab",
                 "--instances=2", "--max_seconds=120", "--out=t/exact",
                 "--results_dir=t/solves", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = read_csv(tmp_path / "t" / "exact.csv")
    assert [(r["row"], r["method"]) for r in rows] == [
        ("oz10_k3_wtl", "BI"), ("oz10_k3_wtl", "DOAB"), ("rg4_d2", "BI"), ("rg4_d2", "DOAB"),
        ("rg4_d2", "BI"), ("rg4_d2", "DOAB"), ("rg4_d7", "")]
    assert rows[-1]["status"].startswith("does not fit")
    assert {r["game"] for r in rows if r["row"] == "rg4_d2"} == {
        f"smmcts_random_stacked_matrix(depth=2,branching=4,utilities=edge_sum,seed={s})"
        for s in (0, 1)}
    doab = rows[1]
    assert doab["status"] == "solved" and doab["paper_seconds"] == "0.73"
    assert float(doab["value"]) == pytest.approx(solver.game_value(pyspiel.load_game(
        "oshi_zumo(coins=10,size=3,horizon=12,min_bid=1)")), abs=1e-9)
    assert (tmp_path / "t" / "exact.png").stat().st_size > 0
    assert json.loads((tmp_path / "t" / "exact.json").read_text())["instances"] == 2
    smaller = run("aij_exact.py", "--rows=oz10_k3_wtl", "--max_seconds=60", "--out=t/exact",
                  "--results_dir=t/solves", cwd=tmp_path)
    assert smaller.returncode == 2 and "larger finished run" in smaller.stderr
    other = run("aij_exact.py", "--rows=oz10_k3_wtl", "--max_seconds=60", "--out=t/other",
                "--results_dir=t/solves", cwd=tmp_path)
    assert other.returncode == 2 and "other parameters" in other.stderr


@pytest.mark.parametrize("args, words", [
    (["--rows=gs9_fixed_wtl"], ["--rows", "gs9_fixed_wtl"]),
    (["--methods=ab"], ["method must be one of"]),
    (["--max_seconds=0"], ["--max_seconds"]),
])
def test_the_exact_table_refuses_bad_flags(args, words, tmp_path):
    result = run("aij_exact.py", *args, cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert all(w in result.stderr for w in words), result.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_the_convergence_table_scores_each_sampler_at_each_checkpoint(tmp_path):
    result = run("aij_convergence.py", "--games=gs5_fixed_wtl", "--samplers=RM,OOS",
                 "--checkpoints=0.05,0.1", "--seeds=2", "--workers=1", "--out=c",
                 "--results_dir=runs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = read_csv(tmp_path / "c.csv")
    assert [(r["sampler"], float(r["seconds"])) for r in rows] == [
        ("RM", 0.05), ("RM", 0.1), ("OOS", 0.05), ("OOS", 0.1)]
    assert all(r["seeds"] == "2" and 0 <= float(r["nash_conv"]) <= 2 for r in rows)
    assert (tmp_path / "c.png").exists() and (tmp_path / "c.json").exists()


@pytest.mark.parametrize("args, words", [
    (["--games=gs7"], ["--games", "gs7"]),
    (["--samplers=MCTS"], ["--samplers", "MCTS"]),
    (["--checkpoints=2,1"], ["--checkpoints", "increasing"]),
])
def test_the_convergence_table_refuses_bad_flags(args, words, tmp_path):
    result = run("aij_convergence.py", *args, cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert all(w in result.stderr for w in words), result.stderr


def test_random_tie_breaking_brings_uct_close_to_the_equilibrium_of_biased_rps():
    """The paper's Section 6.3: the lowest maximiser keeps UCT's visit frequencies far from
    the equilibrium, ties within 0.01 drawn at random bring them close; the kernel engine
    with the same tolerance (its own UCB code path) agrees."""
    first = aij2016.tie_breaking_job("UCT-FIRST", 0.2, [100_000], [0, 1, 2])["nash_conv"]
    tied = aij2016.tie_breaking_job("UCT-0.01", 0.2, [100_000], [0, 1, 2])["nash_conv"]
    assert tied.mean() < 0.1 < first.min()
    game = pyspiel.load_game(aij2016.TIE_BREAKING_GAME)
    kernel = []
    for seed in range(3):
        search = SMMCTSBot(game, 0, selector="ucb", c=0.2, tie_tolerance=0.01, engine="kernel",
                           threshold=0.0, iterations=100_000, seed=seed).search
        search.run(game.new_initial_state(), 100_000)
        kernel.append(exploitability.evaluate(game, search.policy(), value=0.0).nash_conv)
    assert np.mean(kernel) < 0.1


def test_the_tie_breaking_table_runs_every_variant(tmp_path):
    result = run("aij_ties.py", "--variants=UCT-FIRST,UCT-0.01,RM", "--iterations=1000",
                 "--seeds=2", "--workers=1", "--out=t", "--results_dir=runs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = read_csv(tmp_path / "t.csv")
    assert {(r["variant"], float(r["exploration"])) for r in rows} == {
        (v, x) for v, xs in (("UCT-FIRST", aij2016.TIE_BREAKING_C),
                             ("UCT-0.01", aij2016.TIE_BREAKING_C),
                             ("RM", aij2016.TIE_BREAKING_GAMMA)) for x in xs}
    assert sorted({int(r["iterations"]) for r in rows}) == [100, 316, 1000]
    last = [r for r in rows if r["iterations"] == "1000"]
    assert {r["paper"] for r in last if r["variant"] == "UCT-0.01"} == {"[0.01, 0.05]"}
    assert all(0 <= float(r["nash_conv"]) <= 1.5 for r in rows)
    assert (tmp_path / "t.png").exists() and (tmp_path / "t.json").exists()


@pytest.mark.slow
def test_the_speed_row_measures_each_sampler(tmp_path):
    result = run("aij_speed.py", "--samplers=RM,UCT", "--seconds=0.1", "--warm_up=0.05",
                 "--repeats=2", "--workers=1", "--out=s", "--results_dir=runs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = read_csv(tmp_path / "s.csv")
    assert [r["sampler"] for r in rows] == ["RM", "UCT"]
    assert rows[0]["paper"] == "> 2.6e+05" and float(rows[0]["iterations_per_second"]) > 0
    assert float(rows[0]["multiple_of_paper"]) == pytest.approx(
        float(rows[0]["iterations_per_second"]) / 2.6e5, rel=1e-2)


def test_the_head_to_head_table_plays_its_pairs_through_the_tournament_runner(tmp_path):
    result = run("aij_head_to_head.py",
                 "--pairs=gs13_chance: RAND vs MCTS=mcts(engine=cpp,iterations=5)",
                 "--num_games=2", "--chunk=1", "--out=h", "--results_dir=runs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    (row,) = read_csv(tmp_path / "h.csv")
    assert (row["game"], row["row"], row["column"], row["row_spec"]) == (
        "gs13_chance", "RAND", "MCTS", "random")
    assert row["games"] == "4" and row["unit"] == "win %" and row["paper"] == ""
    assert float(row["ours"]) == pytest.approx(50 + 50 * float(row["mean_return"]), abs=0.01)
    games = read_csv(next((tmp_path / "runs").glob("*/games.csv")))
    assert {(g["first"], g["second"]) for g in games} == {
        ("random", "mcts(engine=cpp,iterations=5)"), ("mcts(engine=cpp,iterations=5)", "random")}


def test_the_head_to_head_table_plays_the_papers_doab_and_sm_oos(tmp_path):
    """The paper's DOAB (spec doab) and OOS (spec sm_oos) as the table builds them, a few
    games at a tiny time per move: a spec the bots refuse, or a bot that fails in play,
    fails the run."""
    result = run("aij_head_to_head.py", "--pairs=oz50_eval: DOAB vs OOS; gs13_chance: OOS vs DOAB",
                 "--num_games=1", "--chunk=1", "--time_limit=0.02", "--out=h",
                 "--results_dir=runs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = read_csv(tmp_path / "h.csv")
    assert [(r["game"], r["row"], r["column"]) for r in rows] == [
        ("oz50_eval", "DOAB", "OOS"), ("gs13_chance", "OOS", "DOAB")]
    assert rows[0]["column_spec"] == "sm_oos(preset=paper,epsilon=0.3,evaluator=heuristic)"
    assert rows[1]["row_spec"] == "sm_oos(preset=paper,epsilon=0.2,evaluator=random_rollout)"
    for r in rows:
        assert r["row_spec" if r["row"] == "DOAB" else "column_spec"] == \
            "doab(evaluator=heuristic)"
        assert (r["games"], r["time_limit"], r["paper"] != "") == ("2", "0.02", True)
        ours, low, high = (float(r[k]) for k in ("ours", "ours_low", "ours_high"))
        assert 0 <= ours <= 100
        # two games alike give no interval: both ends NaN, never an empty [0, 0]
        assert (math.isnan(low) and math.isnan(high)) or low <= ours <= high
    games = read_csv(next((tmp_path / "runs").glob("oz50_eval*/games.csv")))
    assert {(g["first"], g["second"]) for g in games} == {
        ("doab(evaluator=heuristic,time_limit=0.02)",
         "sm_oos(preset=paper,epsilon=0.3,evaluator=heuristic,time_limit=0.02)"),
        ("sm_oos(preset=paper,epsilon=0.3,evaluator=heuristic,time_limit=0.02)",
         "doab(evaluator=heuristic,time_limit=0.02)")}


def test_the_head_to_head_table_names_the_paper_cell_of_a_labelled_pair(tmp_path):
    result = run("aij_head_to_head.py",
                 "--pairs=gs13_chance: RAND vs RM=cpp(bot=uniform_random,seed=1)",
                 "--num_games=1", "--chunk=1", "--out=h", "--results_dir=runs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    (row,) = read_csv(tmp_path / "h.csv")
    assert float(row["paper"]) == 14.8 and float(row["paper_plus_minus"]) == 2.2  # RAND vs RM


@pytest.mark.parametrize("pairs, words", [
    ("random: UCT vs RM", ["does not fit"]),
    ("gs14: UCT vs RM", ["unknown game 'gs14'"]),
    ("gs13_chance: UCT RM", ["GAME: ROW vs COLUMN"]),
    ("gs13_chance: RM vs RM", ["against itself"]),
    ("gs13_chance: RM vs ALPHA", ["no paper's bot 'ALPHA'"]),
    ("tron13: DOAB=doab(evaluator=goofspiel) vs RM",
     ["evaluates goofspiel states", "smmcts_tron"]),
    ("gs13_chance: DOAB=doab vs OOS=sm_oos(epsilon=0)", ["epsilon must be above 0"]),
])
def test_the_head_to_head_table_refuses_bad_pairs(pairs, words, tmp_path):
    result = run("aij_head_to_head.py", f"--pairs={pairs}", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert all(w in result.stderr for w in words), result.stderr
    assert not (tmp_path / "results").exists()
