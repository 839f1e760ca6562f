"""Perfect-information SM-MCTS: search engines and their parts.

Imperfect-information searches (OOS, information-set SM-MCTS, MMCTS, the information-set
walks) live in :mod:`smmcts_spiel.imperfect`; they build on the selectors here.

* :mod:`.selectors`: Regret Matching, Exp3 and UCB (numba-compilable arithmetic + objects);
* :mod:`.evaluators`: leaf evaluators with OpenSpiel's evaluator interface;
* :mod:`.smmcts`: SM-MCTS (Alg. 1 of Lisy et al. 2013) over any pyspiel game, in Python
  objects: the reference engine the others are tested against;
* :mod:`.array_engine`: the same over any pyspiel game with the tree statistics in
  compiled arrays, the generic path of ``SMMCTSBot``;
* :mod:`.kernel_engine`: the same algorithm compiled with numba on a game kernel
  (:mod:`smmcts_spiel.games.kernels`), the fast path of ``SMMCTSBot``;
* :mod:`.kernel_arrays`: what a kernel search allocates (its rooms, each thread's arrays);
* :mod:`.tree_arrays`: the array tree the two compiled engines share (a package: layout,
  atomics, compiled operations, memory, node views, the Python base class);
* :mod:`.root_parallel`: several trees searched at once in threads, statistics merged;
* :mod:`.engines`: which engine searches a game, with how many trees (``make_search``);
* :mod:`.matrix_tree_engine`: the same algorithm compiled with numba on explicit trees.
"""
