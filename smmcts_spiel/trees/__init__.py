"""Explicit trees of matrix stages: the data of the paper's games, with their formats.

``from smmcts_spiel import trees``; then ``trees.random_stacked_matrix(...)``,
``trees.load(path)``, ``trees.flatten(tree)``. Modules:

* :mod:`.nodes`: the node types, queries and the shared pre-order (:func:`iter_paths`);
* :mod:`.json_format`: the JSON file format (:func:`load`, :func:`dump`);
* :mod:`.compact`: the one-line form that fits in a pyspiel game string;
* :mod:`.random_trees`: the paper's random games and the Fig. 3 grid games;
* :mod:`.flat`: a tree as arrays, in the numbering the solver and the engine share.
"""

from smmcts_spiel.trees.compact import format_compact, parse_compact
from smmcts_spiel.trees.flat import CHANCE, LEAF, MATRIX, FlatTree, flatten
from smmcts_spiel.trees.json_format import (
    FORMAT_NAME,
    FORMAT_VERSION,
    dump,
    dumps,
    from_json,
    load,
    loads,
    to_json,
)
from smmcts_spiel.trees.nodes import (
    MAX_FILE_BYTES,
    MAX_NODES,
    MAX_STAGES,
    ChanceStage,
    MatrixStage,
    MatrixTree,
    MatrixTreeError,
    Node,
    Path,
    depth,
    is_leaf,
    iter_nodes,
    iter_paths,
    leaf_value,
    matrix_game,
    max_actions,
    max_chance_outcomes,
    max_game_length,
    utility_range,
)
from smmcts_spiel.trees.random_trees import (
    GRID_UTILITIES,
    UTILITY_DISTRIBUTIONS,
    grid_game,
    grid_game_codes,
    random_stacked_matrix,
)

__all__ = [
    "CHANCE", "FORMAT_NAME", "FORMAT_VERSION", "GRID_UTILITIES", "LEAF", "MATRIX",
    "MAX_FILE_BYTES", "MAX_NODES", "MAX_STAGES",
    "UTILITY_DISTRIBUTIONS", "ChanceStage", "FlatTree", "MatrixStage", "MatrixTree",
    "MatrixTreeError", "Node", "Path", "depth", "dump", "dumps", "flatten", "format_compact",
    "from_json", "grid_game", "grid_game_codes", "is_leaf", "iter_nodes", "iter_paths",
    "leaf_value", "load", "loads", "matrix_game", "max_actions", "max_chance_outcomes",
    "max_game_length", "parse_compact", "random_stacked_matrix", "to_json", "utility_range",
]
