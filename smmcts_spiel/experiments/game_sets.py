"""The sets of game strings that the benchmarks and experiments share, so that "every game"
means the same list in all of them."""

from __future__ import annotations

#: Every two-player zero-sum simultaneous-move game of OpenSpiel with three parameter sets
#: each (the default first): the games of ``bench_bot.py --all_games`` and of the thread
#: experiments (``experiments/threads/``).
ALL_GAMES = (
    "markov_soccer", "markov_soccer(horizon=20)", "markov_soccer(horizon=100)",
    "blotto", "blotto(coins=5,fields=4)", "blotto(coins=8,fields=4)",
    "capture_the_flag", "capture_the_flag(horizon=20)", "capture_the_flag(horizon=100)",
    "laser_tag(zero_sum=true)", "laser_tag(zero_sum=true,horizon=20)",
    "laser_tag(zero_sum=true,horizon=100)",
    "oshi_zumo", "oshi_zumo(coins=10,size=3,horizon=20)", "oshi_zumo(coins=20,size=2,horizon=30)",
    "goofspiel(imp_info=False)", "goofspiel(num_cards=6,imp_info=False)",
    "goofspiel(num_cards=8,imp_info=False,returns_type=point_difference)",
    "goofspiel(imp_info=False,points_order=descending)",
    "goofspiel(num_cards=6,imp_info=False,points_order=descending)",
    "goofspiel(num_cards=8,imp_info=False,points_order=ascending)",
    "matrix_rps", "matrix_mp", "matrix_rpsw", "matrix_brps",
    "repeated_game(stage_game=matrix_rps(),num_repetitions=10)",
    "repeated_game(stage_game=matrix_mp(),num_repetitions=5)",
    "repeated_game(stage_game=matrix_brps(),num_repetitions=3)",
)

#: The four games on which a second thread must make the bot stronger at equal time
#: (markov_soccer, Goofspiel-13, Oshi-Zumo(10, 3, 20), blotto; experiments/threads/).
THREAD_GAMES = (
    "markov_soccer", "goofspiel(imp_info=False)", "oshi_zumo(coins=10,size=3,horizon=20)",
    "blotto",
)
