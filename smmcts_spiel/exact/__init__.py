"""Exact game solving and evaluation.

* :mod:`.matrix_game`: the value and an equilibrium of one zero-sum matrix game;
* :mod:`.solver`: backward induction over a game's stages (pyspiel games and matrix trees);
* :mod:`.exploitability`: e1, e2 and NashConv of a strategy profile, exactly;
* :mod:`.turn_based`: strategies as ``TabularPolicy`` on ``convert_to_turn_based`` games;
* :mod:`.tic_tac_toe`: perfect play in tic-tac-toe (for the Belief Sampler);
* :mod:`.random_strategies`: seeded random strategies, for tests and benchmarks.
"""
