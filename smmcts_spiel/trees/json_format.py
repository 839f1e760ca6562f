"""The JSON file format of matrix trees (version 1).

::

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

from smmcts_spiel.trees.nodes import (
    MAX_FILE_BYTES,
    MAX_NODES,
    MAX_STAGES,
    ChanceStage,
    MatrixStage,
    MatrixTree,
    MatrixTreeError,
    Node,
)

FORMAT_NAME = "smmcts_matrix_tree"
FORMAT_VERSION = 1


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


def _node_from_json(obj, where: str, stages: int = 0, count: list | None = None) -> Node:
    count = [0] if count is None else count
    count[0] += 1
    if count[0] > MAX_NODES:
        raise MatrixTreeError(f"the tree has more than {MAX_NODES} nodes, the limit")
    if isinstance(obj, bool):
        raise MatrixTreeError(f"{where}: expected a number or a stage, got {obj!r}")
    if isinstance(obj, (int, float)):
        if not math.isfinite(obj):
            raise MatrixTreeError(f"{where}: leaf utility must be finite, got {obj!r}")
        return float(obj)
    if isinstance(obj, dict) and stages >= MAX_STAGES:
        raise MatrixTreeError(f"{where[:60]}...: the tree is deeper than {MAX_STAGES} stages, "
                              "the limit")
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
            tuple(_node_from_json(c, f"{where}[{i}][{j}]", stages + 1, count)
                  for j, c in enumerate(r))
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
            parsed.append((float(pair[0]), _node_from_json(pair[1], f"{where}.chance[{k}]",
                                                        stages + 1, count)))
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
    except RecursionError:
        raise MatrixTreeError(f"nested too deeply (more than {MAX_STAGES} stages)") from None
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
            text = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise MatrixTreeError(f"cannot read matrix tree file {os.fspath(path)!r}: "
                              f"{e.strerror}") from None
    try:
        if len(text) > MAX_FILE_BYTES:
            raise MatrixTreeError(f"larger than {MAX_FILE_BYTES} bytes, the limit")
        return loads(text)
    except MatrixTreeError as e:
        raise MatrixTreeError(f"{os.fspath(path)}: {e}") from None
