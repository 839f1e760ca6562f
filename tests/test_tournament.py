"""Tournaments: jobs and seeds, the Bradley-Terry fit, the equilibrium bot, the script."""

import csv
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyspiel
import pytest

from smmcts_spiel import bot_specs, match, tournament
from smmcts_spiel.bot_specs import make_bot
from smmcts_spiel.bots.equilibrium_bot import EquilibriumBot
from smmcts_spiel.exact import solver

ROOT = Path(__file__).resolve().parents[1]


def test_with_time_limit_adds_a_budget_only_where_none_is_given():
    assert bot_specs.with_time_limit("smmcts", 0.1) == "smmcts(time_limit=0.1)"
    assert bot_specs.with_time_limit("mcts(engine=cpp)", 0.1) == \
        "mcts(engine=cpp,time_limit=0.1)"
    assert bot_specs.with_time_limit("smmcts(iterations=5)", 0.1) == "smmcts(iterations=5)"
    assert bot_specs.with_time_limit("equilibrium", 0.1) == "equilibrium"


def test_jobs_cover_both_seats_and_gauntlets_keep_the_round_robin_seeds():
    full = tournament.tournament_jobs(["matrix_mp"], ["a", "b", "c"], 5, 2, seed=1)
    assert len(full) == 6 * 3  # six ordered pairs, chunks of 2 games
    gauntlet = tournament.tournament_jobs(["matrix_mp"], ["a", "b", "c"], 5, 2, seed=1,
                                          num_opponents=1)
    assert {(j["first"], j["second"]) for j in gauntlet.values()} == {
        ("a", "c"), ("c", "a"), ("b", "c"), ("c", "b")}
    assert all(full[k] == job for k, job in gauntlet.items())
    with pytest.raises(ValueError, match="two distinct bots"):
        tournament.tournament_jobs(["matrix_mp"], ["a", "a"], 5, 2, seed=1)


def test_duplicate_deals_give_both_seats_the_same_chance_outcomes(monkeypatch):
    jobs = tournament.tournament_jobs(["leduc_poker"], ["random", "oos(iterations=20)"], 2, 2,
                                      seed=3, duplicate=True)
    assert len({j["pair_index"] for j in jobs.values()}) == 1  # (A, B) and (B, A): same seeds
    plain = tournament.tournament_jobs(["leduc_poker"], ["random", "oos(iterations=20)"], 2,
                                       2, seed=3)
    assert len({j["pair_index"] for j in plain.values()}) == 2
    # The match runner draws chance from the game's seed alone, whoever plays: the same
    # seed deals the same cards (and the same public card when both games reach it).
    finals = []
    real = match.evaluate_bots

    def recording(state, bots, rng):
        finals.append(state)
        return real(state, bots, rng)

    monkeypatch.setattr(match, "evaluate_bots", recording)
    game = pyspiel.load_game("leduc_poker")
    deals = []
    for seed in range(6):
        for first, second in [("random", "oos(iterations=20)"), ("oos(iterations=20)", "random")]:
            match.play_game(game, first, second, seed)
            deals.append([a.action for a in finals[-1].full_history() if a.player < 0])
    for a, b in zip(deals[::2], deals[1::2]):
        shorter = min(len(a), len(b))
        assert shorter >= 2 and a[:shorter] == b[:shorter]
    assert len({tuple(d[:2]) for d in deals}) > 1  # and other seeds deal other cards


def test_duplicate_intervals_are_over_deals():
    # A (bot 0) wins every deal by 1 on average, but the cards decide each game by +-5.
    luck = np.array([5.0, -5.0, 5.0, -5.0, 3.0])
    a_first = np.stack([luck + 1, -(luck + 1)], axis=1)      # A in seat 0
    a_second = np.stack([luck - 1, -(luck - 1)], axis=1)     # B in seat 0, same cards
    per_pair = {(0, 1): a_first, (1, 0): a_second}
    [plain] = tournament.pair_results("g", ["a", "b"], per_pair, 0.0)
    [dup] = tournament.pair_results("g", ["a", "b"], per_pair, 0.0, duplicate=True)
    assert plain.mean == pytest.approx(1.0) and dup.mean == pytest.approx(1.0)
    np.testing.assert_allclose(dup.deal_returns, np.ones(5))  # the luck cancels per deal
    assert dup.games == 10 and dup.wins + dup.losses + dup.draws == 10
    assert dup.interval.n == 5 and not dup.interval.defined  # every deal the same
    assert plain.interval.half_width > 2
    with pytest.raises(ValueError, match="every deal needs both"):
        tournament.pair_results("g", ["a", "b"], {(0, 1): a_first, (1, 0): a_second[:3]},
                                0.0, duplicate=True)
    rows = [{"game": "g", "first": f, "second": s, "game_index": str(g),
             "return_first": float(r[0]), "return_second": float(r[1])}
            for (f, s), returns in [(("a", "b"), a_first), (("b", "a"), a_second[:3])]
            for g, r in enumerate(returns)]
    [kept] = tournament.pairs_by_game(rows, ["g"], ["a", "b"], {"g": 0.0},
                                      duplicate=True)["g"]
    assert kept.games == 6  # only the deals both seats finished


def test_elo_of_two_bots_is_the_log_odds_of_their_score():
    # One virtual draw is added: the MLE difference is 400 log10(w' / (1 - w')) with
    # w' = (wins + draws / 2 + 1/2) / (games + 1), whatever the order of the games.
    wins, draws, losses = 30, 10, 20
    scores = np.array([1.0] * wins + [0.5] * draws + [0.0] * losses)
    ratings = tournament.fit_elo(2, np.zeros(len(scores), int), np.ones(len(scores), int),
                                 scores)
    w = (wins + draws / 2 + 0.5) / (len(scores) + 1)
    assert ratings[0] - ratings[1] == pytest.approx(400 * math.log10(w / (1 - w)), abs=1e-3)
    assert ratings.sum() == pytest.approx(0, abs=1e-9)


def test_elo_intervals_contain_the_estimate_and_shrink_with_games():
    rng = np.random.default_rng(0)

    def intervals(n):
        a = rng.integers(3, size=n)
        b = (a + 1 + rng.integers(2, size=n)) % 3
        s = (rng.random(n) < np.where(a < b, 0.7, 0.3)).astype(float)  # lower index stronger
        return tournament.elo_with_intervals(3, a, b, s, bootstrap=20, seed=1)

    r, lo, hi = intervals(200)
    assert np.all(lo <= r) and np.all(r <= hi) and r[0] > r[2]
    r2, lo2, hi2 = intervals(1000)
    assert np.all(hi2 - lo2 < hi - lo)


def test_equilibrium_bot_guarantees_the_value_against_any_bot():
    game = pyspiel.load_game("oshi_zumo(coins=3,size=1,horizon=4)")
    value = solver.game_value(game)
    # Against a uniform bot the equilibrium can only gain (its guarantee is the value).
    result = match.play_match(game, "equilibrium", "random", 300, seed=3, progress=False)
    assert result.mean >= value - result.ci95
    bot = make_bot("equilibrium", game, 1, seed=0)
    assert isinstance(bot, EquilibriumBot)
    strategy, action = bot.step_with_policy(game.new_initial_state())
    assert math.isclose(sum(p for _, p in strategy), 1.0) and action in dict(strategy)


def test_equilibrium_bot_refuses_games_the_solver_cannot_solve():
    with pytest.raises(ValueError, match="perfect information"):
        make_bot("equilibrium", pyspiel.load_game("phantom_ttt"), 0, seed=0)


@pytest.mark.slow
def test_tournament_script_writes_tables_ratings_and_resumes(tmp_path):
    # About 40 s: three runs of the script.
    args = [sys.executable, str(ROOT / "scripts" / "tournament.py"),
            f"--results_dir={tmp_path}", "--games=matrix_rps;oshi_zumo(coins=3,size=1,horizon=4)",
            "--bots=smmcts(iterations=20);equilibrium;random", "--num_games=4", "--chunk=2",
            "--backend=serial", "--bootstrap=5"]
    first = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    rows = list(csv.DictReader(open(tmp_path / "games.csv")))
    assert len(rows) == 2 * 6 * 4  # games x ordered pairs x games per pair
    pairs = list(csv.DictReader(open(tmp_path / "pairs.csv")))
    assert len(pairs) == 2 * 3 and all(int(p["games"]) == 8 for p in pairs)
    ratings = list(csv.DictReader(open(tmp_path / "ratings.csv")))
    assert {r["games"] for r in ratings} == {"matrix_rps", "oshi_zumo(coins=3,size=1,horizon=4)",
                                             "all games"}
    assert (tmp_path / "ratings.png").stat().st_size > 0
    assert "Elo over all games" in (tmp_path / "tournament.md").read_text()
    # Every game is reproducible from its seed alone.
    row = rows[-1]
    replay = match.play_game(pyspiel.load_game(row["game"]), row["first"], row["second"],
                             int(row["seed"]))
    assert replay.tolist() == [float(row["return_first"]), float(row["return_second"])]
    # Finished chunks are reused; --no_play writes the tables of those finished so far.
    before = (tmp_path / "games.csv").read_text()
    for chunk in (tmp_path / "games").glob("game1_*"):
        chunk.unlink()  # as if the run had been interrupted during the second game
    partial = subprocess.run(args + ["--no_play"], capture_output=True, text=True, timeout=300)
    assert partial.returncode == 0, partial.stderr
    assert (tmp_path / "games.csv").read_text() == "".join(
        line for line in before.splitlines(keepends=True) if "oshi_zumo" not in line)
    other = subprocess.run(args + ["--seed=5"], capture_output=True, text=True, timeout=300)
    assert other.returncode != 0 and "new --results_dir" in other.stderr
    assert "Traceback" not in other.stderr


def test_pool_games_pools_runs_over_both_seats(tmp_path):
    game = "oshi_zumo(coins=4,size=1,horizon=6)"
    header = ["game", "first", "second", "game_index", "seed", "return_first",
              "return_second", "seconds"]
    runs = [[["a", "b", 1.0, -1.0], ["b", "a", -1.0, 1.0]], [["a", "b", 0.0, 0.0]]]
    paths = []
    for k, run in enumerate(runs):
        paths.append(tmp_path / f"games{k}.csv")
        with open(paths[-1], "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(header)
            for g, (first, second, r1, r2) in enumerate(run):
                writer.writerow([game, first, second, g, g, r1, r2, 0.1])
    script = Path(__file__).resolve().parents[1] / "scripts" / "pool_games.py"
    out = subprocess.run([sys.executable, str(script), "--games_csv=" + ";".join(map(str, paths))],
                         capture_output=True, text=True, check=True).stdout
    # a won both its decisive games (once per seat) and drew one: mean 2/3 over 3 games.
    assert re.search(r"\| a +\| b +\| +3 \| +\+0\.667 \[", out) and "2 / 1 / 0" in out
