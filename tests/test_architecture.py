"""The import rule of docs/architecture.md: layers, arrows pointing down, no private names.

{checks, reports} <- trees <- games <- {search, exact} <- imperfect <- bots <- {match,
experiments, ...}.
A module may import from its own subpackage and from lower layers; ``search`` and ``exact``
do not import each other; ``imperfect`` builds on ``search``'s selectors, never the
reverse; nothing imports another module's (or OpenSpiel's) private names.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Source folder -> installed package (the setuptools package-dir mapping of pyproject.toml).
SOURCES = {"smmcts_spiel": "smmcts_spiel", "games": "smmcts_spiel.games",
           "bots": "smmcts_spiel.bots"}
LAYERS = {"checks": 0, "reports": 0, "trees": 1, "games": 2, "search": 3, "exact": 3,
          "imperfect": 4, "bots": 5}
APPLICATION_LAYER = 6  # everything else: match, bot specs, experiments, ...
EXTERNAL_MODULES = ("smmcts_spiel", "open_spiel", "pyspiel")


def modules():
    for folder, package in SOURCES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield path, ".".join((package, *parts))


def component(module: str) -> str | None:
    """``smmcts_spiel.search.smmcts`` -> ``search``; None for the top package itself."""
    parts = module.split(".")
    return parts[1] if parts[0] == "smmcts_spiel" and len(parts) > 1 else None


def layer(name: str | None) -> int:
    return LAYERS.get(name, APPLICATION_LAYER)


def imports(path: pathlib.Path, module: str):
    """Every ``smmcts_spiel`` module imported by the file, with the line number."""
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                # ``from smmcts_spiel import trees`` imports the subpackage ``trees``.
                yield (f"{base}.{alias.name}" if base == "smmcts_spiel" else base), node.lineno


ALL_MODULES = list(modules())


@pytest.mark.parametrize("path,module", ALL_MODULES,
                         ids=[m for _, m in ALL_MODULES])
def test_imports_point_down_the_layers(path, module):
    own = component(module)
    if own is None:  # smmcts_spiel/__init__.py registers the games: it may import them.
        return
    for target, line in imports(path, module):
        if not target.startswith("smmcts_spiel."):
            continue
        other = component(target)
        if other == own:
            continue
        where = f"{path.relative_to(ROOT)}:{line} imports {target}"
        assert layer(other) <= layer(own), f"{where}: an upward import ({own} -> {other})"
        if layer(own) < APPLICATION_LAYER:
            assert layer(other) < layer(own), f"{where}: {own} and {other} are siblings"


@pytest.mark.parametrize("path,module", ALL_MODULES,
                         ids=[m for _, m in ALL_MODULES])
def test_no_module_uses_another_module_s_private_names(path, module):
    tree = ast.parse(path.read_text())
    imported = set()  # local names bound to our modules or OpenSpiel's
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(EXTERNAL_MODULES):
            for alias in node.names:
                assert not alias.name.startswith("_"), (
                    f"{path.relative_to(ROOT)}:{node.lineno} imports private {alias.name}")
                imported.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(EXTERNAL_MODULES):
                    imported.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__") and isinstance(node.value, ast.Name)
                and node.value.id in imported):
            raise AssertionError(f"{path.relative_to(ROOT)}:{node.lineno} uses private "
                                 f"{node.value.id}.{node.attr}")


def test_every_subpackage_is_in_the_layer_table_or_an_application():
    """A new subpackage must be placed deliberately: add it to LAYERS or keep it on top."""
    found = {component(m) for _, m in ALL_MODULES} - {None}
    assert {"checks", "trees", "games", "search", "exact", "imperfect", "bots"} <= found
