"""The import rule of docs/architecture.md: layers, arrows pointing down, no cycles, no
private names.

{checks, extras} <- {reports, trees} <- games <- {search, exact} <- imperfect <- bots <- {match,
experiments, ...}.
A module may import from its own subpackage and from lower layers; ``search`` and ``exact``
do not import each other; ``imperfect`` builds on ``search``'s selectors, never the
reverse; no two modules import each other, even through others, lazily or for type hints
only; nothing imports another module's (or OpenSpiel's) private names.
"""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Source folder -> installed package (the setuptools package-dir mapping of pyproject.toml).
SOURCES = {"smmcts_spiel": "smmcts_spiel", "games": "smmcts_spiel.games",
           "bots": "smmcts_spiel.bots"}
LAYERS = {"checks": 0, "extras": 0, "compiling": 0, "reports": 1, "trees": 1, "games": 2,
          "search": 3, "exact": 3, "imperfect": 4, "bots": 5}
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
                # ``from smmcts_spiel import trees`` imports the subpackage ``trees``,
                # ``from smmcts_spiel.exact import solver`` the module ``solver``.
                name = f"{base}.{alias.name}"
                named = name if base == "smmcts_spiel" or name in MODULE_NAMES else base
                yield named, node.lineno


ALL_MODULES = list(modules())
MODULE_NAMES = {module for _, module in ALL_MODULES}


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
def test_modules_import_from_modules_not_from_the_public_api(path, module):
    """``smmcts_spiel.__all__`` is for users; the package's own modules import each name from
    the module that defines it (``from smmcts_spiel.bots import SMMCTSBot``), which keeps
    the layers visible here and ``import smmcts_spiel`` free of the rest of the package."""
    for target, line in imports(path, module):
        if target.startswith("smmcts_spiel.") and component(module) is not None:
            assert target in MODULE_NAMES, (
                f"{path.relative_to(ROOT)}:{line} imports {target.rpartition('.')[2]} from "
                "smmcts_spiel's public API; import it from its module")


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


#: Import cycles not yet broken, each as the set of its modules. Remove an entry once its
#: cycle is gone.
KNOWN_CYCLES: list[set[str]] = []


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere in its file (at the top, in a
    function, or for type hints only: each is a dependency of the one on the other)."""
    return {module: {target for target, _ in imports(path, module)
                     if target in MODULE_NAMES and target != module}
            for path, module in ALL_MODULES}


def reachable(graph: dict[str, set[str]], start: str) -> dict[str, list[str]]:
    """Every module ``start`` imports, directly or through others, with the shortest chain
    of imports that leads there (``start`` itself only if the chain comes back)."""
    chains: dict[str, list[str]] = {}
    frontier = [[start]]
    while frontier:
        step = []
        for chain in frontier:
            for target in sorted(graph[chain[-1]]):
                if target not in chains:
                    chains[target] = [*chain, target]
                    step.append(chains[target])
        frontier = step
    return chains


def import_cycles(graph: dict[str, set[str]]) -> list[tuple[set[str], list[str]]]:
    """Each group of modules that import one another (directly or through others), with one
    chain of imports that closes on itself."""
    chains = {module: reachable(graph, module) for module in graph}
    cycles, grouped = [], set()
    for module in sorted(graph):
        if module in chains[module] and module not in grouped:
            group = {other for other in chains[module] if module in chains[other]}
            grouped |= group
            cycles.append((group, chains[module][module]))
    return cycles


def test_import_cycles_finds_each_cycle_and_only_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert import_cycles(graph) == [({"a", "b", "c"}, ["a", "b", "c", "a"]),
                                    ({"d", "e"}, ["d", "e", "d"])]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    """No module imports, directly or through others, a module that imports it back."""
    cycles = import_cycles(import_graph())
    found = [chain for group, chain in cycles if group not in KNOWN_CYCLES]
    assert not found, "import cycles: " + "; ".join(" -> ".join(c) for c in found)
    gone = [known for known in KNOWN_CYCLES if known not in [group for group, _ in cycles]]
    assert not gone, f"no longer a cycle, remove it from KNOWN_CYCLES: {gone}"


def installed_packages() -> set[str]:
    """The packages pyproject.toml's ``[tool.setuptools] packages`` list installs (read as
    text: ``tomllib`` is Python 3.11+)."""
    text = (ROOT / "pyproject.toml").read_text()
    listed = text[text.index("\npackages = [") + 1:]
    return set(re.findall(r'"([\w.]+)"', listed[:listed.index("]")]))


def test_every_package_folder_is_installed():
    """A subpackage (a folder with ``__init__.py``, such as ``search/tree_arrays/``) missing
    from pyproject.toml's explicit package list imports in this editable install but is left
    out of the wheel."""
    folders = {module for path, module in ALL_MODULES if path.name == "__init__.py"}
    assert not folders - installed_packages(), (
        f"add to [tool.setuptools] packages in pyproject.toml: "
        f"{sorted(folders - installed_packages())}")


def test_every_subpackage_is_in_the_layer_table_or_an_application():
    """A new subpackage must be placed deliberately: add it to LAYERS or keep it on top."""
    found = {component(m) for _, m in ALL_MODULES} - {None}
    assert {"checks", "trees", "games", "search", "exact", "imperfect", "bots"} <= found
