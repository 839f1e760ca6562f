"""Solutions on disk: JSON whose keys are Python literals, read back without pickle and
checked against the game (:func:`load_solution`)."""

from __future__ import annotations

import ast
import json
import os

import pyspiel

from smmcts_spiel.exact.size_estimate import MAX_STATES, check_size
from smmcts_spiel.exact.solution import Solution, StateSolution, check_solution
from smmcts_spiel.exact.stages import check_game, children, explicit_tree, state_path
from smmcts_spiel.exact.transpositions import solution_key

SOLUTION_FORMAT = "smmcts_solution"
SOLUTION_VERSION = 1


def save_solution(solution: Solution, path: str | os.PathLike) -> None:
    """Write ``solution`` (of a pyspiel game solved by
    :func:`~smmcts_spiel.exact.solver.solve` with transpositions, or of an explicit-tree
    game) as JSON: keys as Python literals, read back without pickle."""
    key = "path" if solution.key is state_path else "state"
    states = [[repr(k), s.value, [[a, p] for a, p in s.strategies[0].items()],
               [[a, p] for a, p in s.strategies[1].items()]]
              for k, s in solution.table.items()]
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump({"format": SOLUTION_FORMAT, "version": SOLUTION_VERSION,
                   "game": str(solution.game), "value": solution.value, "key": key,
                   "states": states}, f)
    os.replace(tmp, path)


#: Largest solution file :func:`load_solution` reads (bytes).
MAX_SOLUTION_BYTES = 1 << 30


def load_solution(game: pyspiel.Game, path: str | os.PathLike,
                  max_states: int | None = MAX_STATES) -> Solution:
    """The solution of ``game`` that :func:`save_solution` wrote to ``path``, checked.

    Refuses (ValueError, naming the file) a file that is not such a solution, one of another
    game, or one that is not an equilibrium of ``game``: every reachable state must have an
    entry, its strategies must be distributions over the legal actions, a chance node's
    value the expectation of its children's, and a decision node's strategies an
    equilibrium of its stage game (the matrix of its children's values) with its value
    (:func:`~smmcts_spiel.exact.solution.check_solution`); a game above ``max_states`` is
    refused as by :func:`~smmcts_spiel.exact.solver.solve` (the check walks the game without
    solving its stages, so ``max_seconds`` and ``max_stage_cells`` do not apply).
    """
    def refuse(why: str) -> ValueError:
        return ValueError(f"{path}: {why}; write solutions with solver.save_solution (or "
                          "delete the file to solve the game again)")

    try:
        if os.path.getsize(path) > MAX_SOLUTION_BYTES:
            raise refuse(f"larger than {MAX_SOLUTION_BYTES} bytes")
    except OSError as e:
        raise refuse(f"cannot be read ({e})") from None
    try:
        with open(path) as f:
            saved = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise refuse(f"cannot be read as JSON ({e})") from None
    if not isinstance(saved, dict) or saved.get("format") != SOLUTION_FORMAT or saved.get(
            "version") != SOLUTION_VERSION:
        raise refuse(f"not a {SOLUTION_FORMAT} file of version {SOLUTION_VERSION}")
    if saved.get("game") != str(game):
        raise refuse(f"it solves {saved.get('game')!r}, not {str(game)!r}")
    try:
        table = {}
        for k, value, row, col in saved["states"]:
            key = ast.literal_eval(k)
            hash(key)
            table[key] = StateSolution(float(value), ({int(a): float(p) for a, p in row},
                                                      {int(a): float(p) for a, p in col}))
        value = float(saved["value"])
        key = {"path": state_path, "state": None}[saved["key"]] or solution_key(game)
    except (KeyError, TypeError, ValueError, SyntaxError, MemoryError, RecursionError) as e:
        raise refuse(f"malformed ({type(e).__name__}: {e})") from None
    if key is state_path and explicit_tree(game) is None:
        raise refuse("its states are filed by tree path, but the game has no explicit tree")
    root = game.new_initial_state()
    if not root.is_terminal() and key(root) not in table:
        inner = [child for child in children(root) if not child.is_terminal()]
        if not inner or any(key(child) in table for child in inner):
            raise refuse("the root entry (the initial state's value and strategies) is missing: "
                         "the file is incomplete or was edited; compute the solution again with "
                         "solver.solve")
        raise refuse("the root entry (the initial state's) is missing and so are its "
                     "successors': the file was edited, or its states are filed under other "
                     "keys than this game's (written by another version)")
    check_game(game)
    check_size(game, max_states, max_seconds=None, max_stage_cells=None)
    solution = Solution(game, value, table, key)
    try:
        check_solution(solution)
    except ValueError as e:
        raise refuse(f"not an equilibrium of the game: {e}") from None
    return solution

