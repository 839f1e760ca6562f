"""Games registered with pyspiel on import (one module per game).

* ``smmcts_random_stacked_matrix``: the paper's random games (:mod:`.random_stacked_matrix`);
* ``smmcts_matrix_tree``: any explicit matrix tree, from JSON or inline (:mod:`.matrix_tree`);
* ``smmcts_goofspiel``: Goofspiel as a simultaneous-move game (:mod:`.goofspiel`);
* ``smmcts_phantom_ttt``: Phantom Tic-Tac-Toe (:mod:`.phantom_ttt`);
* ``smmcts_othello``: Othello on an N x N board (:mod:`.othello`);
* ``smmcts_oshi_zumo``: OpenSpiel's Oshi-Zumo with the AIJ 2016 study's position returns
  (:mod:`.oshi_zumo`);
* ``smmcts_pursuit_evasion``, ``smmcts_tron``, ``smmcts_biased_rps``: games of the AIJ 2016
  study of simultaneous-move algorithms (:mod:`.pursuit_evasion`, :mod:`.tron`,
  :mod:`.biased_rps`).

The explicit-tree games share :mod:`.explicit_tree`; the simultaneous games answer flat
joint actions through :mod:`.simultaneous`. Their states deserialise by replaying their
history, never by unpickling (:mod:`.serialization`, installed here).
"""

from smmcts_spiel.games import (  # noqa: F401  (each import registers a game)
    biased_rps,
    goofspiel,
    matrix_tree,
    oshi_zumo,
    othello,
    phantom_ttt,
    pursuit_evasion,
    random_stacked_matrix,
    serialization,
    tron,
)

serialization.install()
