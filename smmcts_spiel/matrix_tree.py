"""Explicit trees of matrix stages: the paper's random and worst-case games as plain data.

One representation serves the registered pyspiel games (``smmcts_random_stacked_matrix``,
``smmcts_matrix_tree``), the exact solver and the fast engine, so a game found by one
experiment can be written to JSON, shared, and loaded by all of them.

A node is one of:

* a leaf: a ``float``, player 1's utility (player 2 gets its negation);
* a :class:`MatrixStage`: both players choose simultaneously, ``children[i][j]`` is the
  subgame after player 1 plays row ``i`` and player 2 plays column ``j``;
* a :class:`ChanceStage`: nature picks ``outcomes[k] = (probability, child)``.

JSON format (version 1)::

    {"format": "smmcts_matrix_tree", "version": 1,
     "root": <node>}

    <node> := <number>                                   leaf utility of player 1
            | {"matrix": [[<node>, ...], ...]}           rows = player 1's actions
            | {"chance": [[<probability>, <node>], ...]}

Extra top-level keys (e.g. ``"name"``, ``"note"``) are kept by :func:`load` in
``MatrixTree.metadata`` and written back by :func:`dump`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

FORMAT_NAME = "smmcts_matrix_tree"
FORMAT_VERSION = 1
UTILITY_DISTRIBUTIONS = ("uniform", "grid3")


@dataclass(frozen=True)
class MatrixStage:
    """A simultaneous-move stage; ``children[i][j]`` follows row ``i`` and column ``j``."""

    children: tuple[tuple[Node, ...], ...]

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.children), len(self.children[0])


@dataclass(frozen=True)
class ChanceStage:
    """A chance stage; ``outcomes[k] = (probability, child)``."""

    outcomes: tuple[tuple[float, Node], ...]


Node = float | MatrixStage | ChanceStage


@dataclass(frozen=True)
class MatrixTree:
    """A whole game: its root node plus free-form metadata (name, provenance)."""

    root: Node
    metadata: dict = field(default_factory=dict, compare=False)


class MatrixTreeError(ValueError):
    """A matrix tree (or its JSON) is malformed; the message says where and why."""


# ----------------------------------------------------------------------------------------
# Construction


def matrix_game(payoffs) -> MatrixStage:
    """A one-stage game from a 2-D array of player 1's utilities."""
    rows = np.asarray(payoffs, dtype=float)
    if rows.ndim != 2 or rows.size == 0:
        raise MatrixTreeError(f"payoffs must be a non-empty 2-D array, got shape {rows.shape}")
    return MatrixStage(tuple(tuple(float(v) for v in row) for row in rows))


def random_stacked_matrix(
    depth: int = 2,
    branching_p1: int = 2,
    branching_p2: int | None = None,
    *,
    chance_branching: int = 0,
    utilities: str = "uniform",
    seed: int = 0,
) -> MatrixStage:
    """The paper's random games: ``depth`` stacked ``branching_p1 x branching_p2`` stages.

    Leaf utilities (player 1) are drawn from U[0, 1] (``"uniform"``) or uniformly from
    {0, 0.5, 1} (``"grid3"``) by ``numpy.random.default_rng(seed)``, depth first, so the
    same parameters always give the same game. With ``chance_branching = c > 0`` every
    joint action leads to a chance stage with ``c`` equally likely outcomes.
    """
    if branching_p2 is None:
        branching_p2 = branching_p1
    _check_int("depth", depth, 1)
    _check_int("branching_p1", branching_p1, 1)
    _check_int("branching_p2", branching_p2, 1)
    _check_int("chance_branching", chance_branching, 0)
    if branching_p1 * branching_p2 < 2:
        raise MatrixTreeError(
            "branching_p1 * branching_p2 must be at least 2 (a 1 x 1 stage is no choice); "
            f"got {branching_p1} x {branching_p2}"
        )
    if chance_branching == 1:
        raise MatrixTreeError("chance_branching must be 0 (no chance) or at least 2, got 1")
    if utilities not in UTILITY_DISTRIBUTIONS:
        raise MatrixTreeError(
            f"utilities must be one of {', '.join(UTILITY_DISTRIBUTIONS)}; got {utilities!r}"
        )
    rng = np.random.default_rng(seed)

    def leaf() -> float:
        if utilities == "uniform":
            return float(rng.random())
        return float(rng.integers(0, 3)) / 2.0

    def after_joint_action(levels_left: int) -> Node:
        def sub() -> Node:
            return stage(levels_left) if levels_left > 0 else leaf()

        if chance_branching:
            p = 1.0 / chance_branching
            return ChanceStage(tuple((p, sub()) for _ in range(chance_branching)))
        return sub()

    def stage(levels: int) -> MatrixStage:
        return MatrixStage(
            tuple(
                tuple(after_joint_action(levels - 1) for _ in range(branching_p2))
                for _ in range(branching_p1)
            )
        )

    return stage(depth)


def _check_int(name: str, value, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise MatrixTreeError(f"{name} must be an integer >= {minimum}, got {value!r}")


# ----------------------------------------------------------------------------------------
# Queries


def is_leaf(node: Node) -> bool:
    return not isinstance(node, (MatrixStage, ChanceStage))


def depth(node: Node) -> int:
    """Number of matrix stages on the longest path (chance stages do not count)."""
    if isinstance(node, MatrixStage):
        return 1 + max(depth(c) for row in node.children for c in row)
    if isinstance(node, ChanceStage):
        return max(depth(c) for _, c in node.outcomes)
    return 0


def max_game_length(node: Node) -> int:
    """Longest path in moves, one per matrix stage and one per chance stage."""
    if isinstance(node, MatrixStage):
        return 1 + max(max_game_length(c) for row in node.children for c in row)
    if isinstance(node, ChanceStage):
        return 1 + max(max_game_length(c) for _, c in node.outcomes)
    return 0


def iter_nodes(node: Node) -> Iterator[Node]:
    """All nodes, depth first, parents before children."""
    yield node
    if isinstance(node, MatrixStage):
        for row in node.children:
            for c in row:
                yield from iter_nodes(c)
    elif isinstance(node, ChanceStage):
        for _, c in node.outcomes:
            yield from iter_nodes(c)


def max_actions(node: Node) -> int:
    """Largest number of actions any player has at any stage."""
    return max((max(n.shape) for n in iter_nodes(node) if isinstance(n, MatrixStage)), default=1)


def max_chance_outcomes(node: Node) -> int:
    return max((len(n.outcomes) for n in iter_nodes(node) if isinstance(n, ChanceStage)),
               default=0)


def utility_range(node: Node) -> tuple[float, float]:
    leaves = [float(n) for n in iter_nodes(node) if is_leaf(n)]
    return min(leaves), max(leaves)


# ----------------------------------------------------------------------------------------
# JSON


def to_json(tree: MatrixTree | Node) -> dict:
    """The JSON-ready dict of a tree (see the module docstring for the format)."""
    if not isinstance(tree, MatrixTree):
        tree = MatrixTree(tree)
    out = {"format": FORMAT_NAME, "version": FORMAT_VERSION}
    out.update({k: v for k, v in tree.metadata.items() if k not in ("format", "version", "root")})
    out["root"] = _node_to_json(tree.root)
    return out


def _node_to_json(node: Node):
    if isinstance(node, MatrixStage):
        return {"matrix": [[_node_to_json(c) for c in row] for row in node.children]}
    if isinstance(node, ChanceStage):
        return {"chance": [[p, _node_to_json(c)] for p, c in node.outcomes]}
    return float(node)


def from_json(data: dict) -> MatrixTree:
    """Parse and validate a dict in the JSON format; raises :class:`MatrixTreeError`."""
    if not isinstance(data, dict):
        raise MatrixTreeError(f"a matrix tree must be a JSON object, got {type(data).__name__}")
    if data.get("format") != FORMAT_NAME:
        raise MatrixTreeError(f'missing or wrong "format": expected "{FORMAT_NAME}", '
                              f"got {data.get('format')!r}")
    if data.get("version") != FORMAT_VERSION:
        raise MatrixTreeError(f'unsupported "version" {data.get("version")!r}; '
                              f"this reader supports {FORMAT_VERSION}")
    if "root" not in data:
        raise MatrixTreeError('missing "root"')
    root = _node_from_json(data["root"], "root")
    if not isinstance(root, (MatrixStage, ChanceStage)):
        raise MatrixTreeError("root must be a matrix or chance stage, not a bare leaf")
    metadata = {k: v for k, v in data.items() if k not in ("format", "version", "root")}
    return MatrixTree(root, metadata)


def _node_from_json(obj, where: str) -> Node:
    if isinstance(obj, bool):
        raise MatrixTreeError(f"{where}: expected a number or a stage, got {obj!r}")
    if isinstance(obj, (int, float)):
        if not math.isfinite(obj):
            raise MatrixTreeError(f"{where}: leaf utility must be finite, got {obj!r}")
        return float(obj)
    if isinstance(obj, dict) and set(obj) == {"matrix"}:
        rows = obj["matrix"]
        if not isinstance(rows, list) or not rows or not all(
            isinstance(r, list) and r for r in rows
        ):
            raise MatrixTreeError(f"{where}: \"matrix\" must be a non-empty list of non-empty rows")
        if len({len(r) for r in rows}) != 1:
            raise MatrixTreeError(f"{where}: matrix rows have different lengths "
                                  f"{[len(r) for r in rows]}")
        return MatrixStage(tuple(
            tuple(_node_from_json(c, f"{where}[{i}][{j}]") for j, c in enumerate(r))
            for i, r in enumerate(rows)))
    if isinstance(obj, dict) and set(obj) == {"chance"}:
        outs = obj["chance"]
        if not isinstance(outs, list) or not outs:
            raise MatrixTreeError(f"{where}: \"chance\" must be a non-empty list")
        parsed = []
        for k, pair in enumerate(outs):
            if (not isinstance(pair, list) or len(pair) != 2 or isinstance(pair[0], bool)
                    or not isinstance(pair[0], (int, float)) or not 0 < pair[0] <= 1):
                raise MatrixTreeError(
                    f"{where}.chance[{k}]: expected [probability in (0, 1], node], got {pair!r}")
            parsed.append((float(pair[0]), _node_from_json(pair[1], f"{where}.chance[{k}]")))
        total = sum(p for p, _ in parsed)
        if abs(total - 1.0) > 1e-9:
            raise MatrixTreeError(f"{where}: chance probabilities sum to {total}, not 1")
        return ChanceStage(tuple(parsed))
    raise MatrixTreeError(
        f'{where}: expected a number, {{"matrix": ...}} or {{"chance": ...}}, got {obj!r}')


def dumps(tree: MatrixTree | Node) -> str:
    return json.dumps(to_json(tree))


def loads(text: str) -> MatrixTree:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise MatrixTreeError(f"not valid JSON: {e}") from None
    return from_json(data)


def dump(tree: MatrixTree | Node, path: str | os.PathLike) -> None:
    """Write ``tree`` as JSON, atomically (a reader never sees half a file)."""
    tmp = f"{os.fspath(path)}.tmp"
    with open(tmp, "w") as f:
        json.dump(to_json(tree), f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def load(path: str | os.PathLike) -> MatrixTree:
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise MatrixTreeError(f"cannot read matrix tree file {os.fspath(path)!r}: "
                              f"{e.strerror}") from None
    try:
        return loads(text)
    except MatrixTreeError as e:
        raise MatrixTreeError(f"{os.fspath(path)}: {e}") from None
