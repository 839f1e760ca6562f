"""Games registered with pyspiel on import (one module per game).

* ``smmcts_random_stacked_matrix``: the paper's random games (:mod:`.random_stacked_matrix`);
* ``smmcts_matrix_tree``: any explicit matrix tree, from JSON or inline (:mod:`.matrix_tree`);
* ``smmcts_goofspiel``: Goofspiel as a simultaneous-move game (:mod:`.goofspiel`);
* ``smmcts_phantom_ttt``: Phantom Tic-Tac-Toe (:mod:`.phantom_ttt`);
* ``smmcts_othello``: Othello on an N x N board (:mod:`.othello`).

The explicit-tree games share :mod:`.explicit_tree`; the simultaneous games answer flat
joint actions through :mod:`.simultaneous`. Their states deserialise by replaying their
history, never by unpickling (:mod:`.serialization`, installed here).
"""

from smmcts_spiel.games import (  # noqa: F401  (each import registers a game)
    goofspiel,
    matrix_tree,
    othello,
    phantom_ttt,
    random_stacked_matrix,
    serialization,
)

serialization.install()
