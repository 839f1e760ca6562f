"""Exact game solving and evaluation.

* :mod:`.matrix_game`: the value and an equilibrium of one zero-sum matrix game;
* :mod:`.solver`: backward induction over a game's stages (pyspiel games and matrix trees);
  its parts: :mod:`.stages` (a game's stages and children), :mod:`.transpositions` (one
  entry per position), :mod:`.size_estimate` (states and seconds before solving, the
  limits), :mod:`.solution` (a solved game as a policy, and its check),
  :mod:`.solution_file` (solutions on disk);
* :mod:`.pruned_induction`: the AIJ 2016 study's DO, BIAB and DOAB (``method=`` of the
  solver), built on :mod:`.double_oracle` (one stage) and :mod:`.alpha_beta` (the
  serialized bounds);
* :mod:`.exploitability`: e1, e2 and NashConv of a strategy profile, exactly;
* :mod:`.turn_based`: strategies as ``TabularPolicy`` on ``convert_to_turn_based`` games;
* :mod:`.tic_tac_toe`: perfect play in tic-tac-toe (for the Belief Sampler);
* :mod:`.random_strategies`: seeded random strategies, for tests and benchmarks.
"""
