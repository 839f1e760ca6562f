"""Per-move losses against an exact equilibrium (smmcts_spiel.experiments.equilibrium_loss)."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest
from scipy import stats

import smmcts_spiel  # noqa: F401
from smmcts_spiel.exact import solver
from smmcts_spiel.experiments import equilibrium_loss as el

RPS = "smmcts_matrix_tree(tree=[[0 -1 1] [1 0 -1] [-1 1 0]])"
# Matching pennies for player 1 plus a third row that loses whatever player 2 does.
PENNIES_AND_BLUNDER = "smmcts_matrix_tree(tree=[[1 0] [0 1] [-1 -1]])"
SMALL_OSHI = "oshi_zumo(coins=4,size=1,horizon=6)"


def losses(game_string, player, strategies):
    game = pyspiel.load_game(game_string)
    return el.move_losses(solver.solve(game), game.new_initial_state(), player, strategies)


def test_any_strategy_in_the_support_loses_nothing_against_the_equilibrium():
    rock, mixed = {0: 1.0}, {0: 0.2, 1: 0.3, 2: 0.5}
    out = losses(RPS, 0, [rock, mixed])
    assert out[:, 0] == pytest.approx([0.0, 0.0], abs=1e-9)
    # ... but a best reply takes from rock what paper wins: 1.
    assert out[0, 1] == pytest.approx(1.0)


def test_a_move_outside_the_support_loses_value_minus_its_payoff():
    # Value 1/2 with player 2 mixing 50/50; the blunder row pays -1 whatever the reply.
    out = losses(PENNIES_AND_BLUNDER, 0, [{2: 1.0}, {0: 0.9, 2: 0.1}])
    assert out[:, 0] == pytest.approx([1.5, 0.15])
    assert out[:, 1] == pytest.approx([1.5, 0.5 - min(0.9 * 1 - 0.1, 0.9 * 0 - 0.1)])


def test_player_two_losses_are_mirrored():
    # Player 2 facing rows (1/2, 1/2, 0): either column gives player 1 exactly 1/2.
    out = losses(PENNIES_AND_BLUNDER, 1, [{0: 1.0}, {1: 1.0}])
    assert out[:, 0] == pytest.approx([0.0, 0.0], abs=1e-9)
    assert out[:, 1] == pytest.approx([0.5, 0.5])  # row 0 against column 0 wins 1


def test_continuation_values_are_exact():
    # The first stage's top-left entry is a matching-pennies subgame worth 1/2.
    out = losses("smmcts_matrix_tree(tree=[[[[1 0] [0 1]] 0] [0 1]])", 0, [{0: 1.0}])
    game = pyspiel.load_game("smmcts_matrix_tree(tree=[[0.5 0] [0 1]])")
    assert out == pytest.approx(el.move_losses(solver.solve(game), game.new_initial_state(), 0,
                                               [{0: 1.0}]))


def test_the_equilibrium_bot_loses_nothing_and_every_loss_is_non_negative():
    game = pyspiel.load_game(SMALL_OSHI)
    for seat in (0, 1):
        result = el.play_scored_game(game, "equilibrium", seat, seed=seat)
        assert len(result["loss"]) > 0
        assert result["loss"] == pytest.approx(0.0, abs=1e-9)
        assert result["gain"] == pytest.approx(0.0, abs=1e-9)
        smmcts = el.play_scored_game(
            game, "smmcts(iterations=200)", seat, seed=seat,
            rules=(("empirical", 0.0), ("empirical", 0.3), ("most_visited", 0.0),
                   ("empirical", 0.1)))
        assert smmcts["rule_loss"].shape == (len(smmcts["move"]), 4)
        assert (smmcts["rule_loss"] >= -1e-9).all()
        assert (smmcts["rule_best_reply_loss"] >= smmcts["rule_loss"] - 1e-9).all()
        # The played rule is the bot's own (empirical, threshold 0.1 by default) ...
        assert smmcts["loss"] == pytest.approx(smmcts["rule_loss"][:, 3])
        # ... and against the equilibrium every gain is a loss.
        assert smmcts["gain"] == pytest.approx(-smmcts["loss"])
        assert smmcts["opponent_loss"] == pytest.approx(0.0, abs=1e-9)


def test_a_forced_move_the_bot_does_not_search_scores_under_every_rule():
    # Player 1 (seat 0) has one action at the root (SMMCTSBot plays it without a search, so
    # its tree has no statistics there), player 2 two; then matching pennies.
    game = pyspiel.load_game("smmcts_matrix_tree(tree=[[ [[1 0] [0 1]] [[0 1] [1 0]] ]])")
    result = el.play_scored_game(game, "smmcts(iterations=200)", 0, seed=0,
                                 rules=(("empirical", 0.0), ("most_visited", 0.0)))
    assert result["rule_loss"].shape == (2, 2)
    assert result["rule_loss"][0] == pytest.approx([0.0, 0.0])  # the forced move loses nothing


def test_against_another_bot_the_gains_weigh_both_strategies():
    game = pyspiel.load_game(SMALL_OSHI)
    result = el.play_scored_game(game, "equilibrium", 0, seed=4, opponent="random")
    # The equilibrium gains exactly what the uniformly random bidder loses against it.
    assert result["gain"] == pytest.approx(result["opponent_loss"])
    assert result["opponent_loss"].sum() > 0


def test_final_move_rules_need_the_statistics_they_read():
    game = pyspiel.load_game(SMALL_OSHI)
    with pytest.raises(ValueError, match="final_strategy=average"):
        el.play_scored_game(game, "smmcts(iterations=50)", 0, seed=0,
                            rules=(("average_no_exploration", 0.0),))
    with pytest.raises(ValueError, match="SMMCTSBot"):
        el.play_scored_game(game, "random", 0, seed=0, rules=(("empirical", 0.0),))


def summed(result, key, games):
    return np.array([result[key][result["game"] == g].sum() for g in range(games)])


@pytest.mark.slow
def test_summed_losses_predict_the_return_against_the_equilibrium():
    """The telescoping identity, against games actually played: a uniformly random player's
    mean return equals the value minus its mean summed loss, up to the noise of play."""
    result = el.play_games(SMALL_OSHI, "random", base_seed=0, start=0, stop=600)
    losses = summed(result, "loss", 600)
    gap = result["game_returns"] - (result["game_values"] - losses)
    assert losses.mean() > 0.3  # random bidding loses a lot
    assert abs(gap.mean()) < 3 * gap.std() / np.sqrt(600)


@pytest.mark.slow
def test_summed_gains_predict_the_return_against_any_bot():
    """The same identity between two non-equilibrium bots (SM-MCTS against random bids)."""
    result = el.play_games(SMALL_OSHI, "smmcts(iterations=100)", base_seed=1, start=0,
                           stop=300, opponent="random")
    estimate = result["game_values"] + summed(result, "gain", 300)
    gap = result["game_returns"] - estimate
    assert estimate.mean() > 0.3
    assert abs(gap.mean()) < 3 * gap.std() / np.sqrt(300)
    # The estimate is far less noisy than the outcomes it predicts.
    assert estimate.std() < 0.7 * result["game_returns"].std()


def test_the_seat_stratified_interval_is_the_mean_of_the_seat_means_with_their_variances():
    # Seat 0 scores 1 and 3 (mean 2, sample variance 2), seat 1 scores 10 and 14 (mean 12,
    # sample variance 8): mean (2 + 12) / 2 = 7, variance (2 / 2 + 8 / 2) / 4 = 1.25.
    mean, half = el.seat_stratified_interval(np.array([1.0, 10.0, 3.0, 14.0]),
                                             np.array([0, 1, 0, 1]))
    assert mean == pytest.approx(7.0)
    assert half == pytest.approx(stats.t.ppf(0.975, 2) * np.sqrt(1.25))  # t, 4 - 2 d.o.f.
    # A seat's value (+c in one seat, -c in the other) shifts the seat means only.
    rng = np.random.default_rng(0)
    x, seats = rng.normal(size=40), np.arange(40) % 2
    shifted = x + np.where(seats == 0, 5.0, -5.0)
    assert el.seat_stratified_interval(shifted, seats) == pytest.approx(
        el.seat_stratified_interval(x, seats))
    with pytest.raises(ValueError, match="two games in each seat"):
        el.seat_stratified_interval(np.array([1.0, 2.0, 3.0]), np.array([0, 0, 1]))


def test_on_played_games_with_unequal_seat_values_the_stratified_interval_is_narrower():
    """Pennies-and-blunder is worth +1/2 to the row player: the seats' values differ by 1,
    which widens the standard interval of the exact-value estimate but not the stratified
    one; with balanced seats both have the same centre."""
    result = el.play_games(PENNIES_AND_BLUNDER, "smmcts(iterations=30)", base_seed=3,
                           start=0, stop=40, opponent="random")
    estimate = result["game_values"] + summed(result, "gain", 40)
    seats = np.arange(40) % 2
    assert set(result["game_values"]) == {0.5, -0.5}
    mean, half = el.seat_stratified_interval(estimate, seats)
    direct = [estimate[seats == s] for s in (0, 1)]
    assert mean == pytest.approx(estimate.mean())
    assert mean == pytest.approx((direct[0].mean() + direct[1].mean()) / 2)
    assert half == pytest.approx(stats.t.ppf(0.975, 38) * np.sqrt(
        (direct[0].var(ddof=1) + direct[1].var(ddof=1)) / 20 / 4))
    assert half < 0.8 * stats.t.ppf(0.975, 39) * estimate.std(ddof=1) / np.sqrt(40)
