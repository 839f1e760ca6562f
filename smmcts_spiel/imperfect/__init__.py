"""Search in imperfect-information games: each player searches over its own information.

* :mod:`.information_sets`: the histories of a player's current information set, found from
  its own view (targeting of OOS, worlds of IS-SM-MCTS and ISMCTS); compiled walk in
  :mod:`.compiled_information_sets` over the information kernels
  (:mod:`smmcts_spiel.games.kernels.information`);
* :mod:`.oos`: Online Outcome Sampling (Lisy, Lanctot, Bowling, AAMAS 2015) over pyspiel
  states; :mod:`.oos_kernel`: the same compiled on an information kernel;
* :mod:`.is_smmcts`: information-set SM-MCTS (the selectors of :mod:`smmcts_spiel.search`
  at information sets, determinised worlds);
* :mod:`.mmcts`: multiple-tree MCTS with Exp3 (Auger 2011) over any pyspiel game with
  information states; :mod:`.mmcts_phantom_ttt`: the same compiled for Phantom Tic-Tac-Toe.
"""
