"""Rules the code keeps that no linter checks: modules of one concern (short), no dates or
issue numbers in package code (they belong in the experiments' notes), and every dotted
``smmcts_spiel...`` name in code, docstrings, comments and docs pointing to something that
exists (a module, or a name defined in one)."""

from __future__ import annotations

import ast
import functools
import importlib
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Installed package -> source folder (the setuptools package-dir mapping of pyproject.toml).
PACKAGE_DIRS = {"smmcts_spiel.games": "games", "smmcts_spiel.bots": "bots",
                "smmcts_spiel.scripts": "scripts", "smmcts_spiel": "smmcts_spiel"}
PACKAGE_CODE = ("smmcts_spiel", "games", "bots")
SKIPPED_FOLDERS = {"build", "dist", "results", "node_modules", "__pycache__"}


def repository_files(suffix: str, folders: tuple[str, ...] | None = None) -> list[pathlib.Path]:
    """The repository's files ending in ``suffix`` (in ``folders`` only, if given), without
    hidden folders (the venv, .git) and build output."""
    found = []
    for top in (folders or (".",)):
        for path in sorted((ROOT / top).rglob(f"*{suffix}")):
            parts = path.relative_to(ROOT).parts[:-1]
            if not any(p.startswith(".") or p in SKIPPED_FOLDERS for p in parts):
                found.append(path)
    return found


def relative(path: pathlib.Path) -> str:
    return path.relative_to(ROOT).as_posix()


# -- Short modules ------------------------------------------------------------------------------

MAX_LINES = 600
#: Modules still above MAX_LINES, to be split by concern (remove an entry once it is).
LONG_MODULES: set[str] = set()


def test_no_package_module_is_over_600_lines():
    """One concern a module keeps modules short (OpenSpiel's algorithms: about 500 lines)."""
    lengths = {relative(p): len(p.read_text().splitlines())
               for p in repository_files(".py", PACKAGE_CODE)}
    long = {name: n for name, n in lengths.items() if n > MAX_LINES}
    assert not set(long) - LONG_MODULES, (
        f"modules over {MAX_LINES} lines (split them by concern): "
        f"{ {k: v for k, v in long.items() if k not in LONG_MODULES} }")
    assert not LONG_MODULES - set(long), (
        f"no longer over {MAX_LINES} lines, remove from LONG_MODULES: "
        f"{sorted(LONG_MODULES - set(long))}")


# -- No dates, no issue numbers -----------------------------------------------------------------

_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
          r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
_SPACE = r"(?:\s+#:?)?\s+"  # a space, or a line break inside a comment or docstring
DATE_OR_ISSUE = re.compile(
    r"\b20\d\d-\d\d-\d\d\b"  # 2026-11-26
    rf"|\b\d{{1,2}}{_SPACE}{_MONTH}\b"  # 26 Nov, 25 November
    rf"|\b{_MONTH}\.?{_SPACE}\d{{1,2}}(?:st|nd|rd|th)?\b"  # Nov 26
    rf"|\b[Ii]ssues?{_SPACE}#?\d+")  # issue 23, Issue #23, issues 12
#: Package files that still carry a date or an issue number (remove an entry once clean).
DATED_FILES: set[str] = set()


@pytest.mark.parametrize("text,found", [
    ("measured 26 Nov 2026", "26 Nov"), ("fitted (2026-11-26 01:40 UTC)", "2026-11-26"),
    ("see issue 23", "issue 23"), ('"Issue 23: per-game defaults"', "Issue 23"),
    ("on Nov 26th", "Nov 26th"), ("target of issue\n#: 24 (P9)", "issue\n#: 24"),
    ("(Lisy et al., NIPS 2013)", None),
    ("AAMAS 2015, Section 4", None), ("a 3 x 3 stage", None), ("May be None", None)])
def test_the_date_pattern_finds_dates_and_issue_numbers_only(text, found):
    match = DATE_OR_ISSUE.search(text)
    assert (match.group() if match else None) == found


def test_no_dates_or_issue_numbers_in_package_code():
    """A measurement's date and the issue behind a choice are history: the code says the
    reason in a line and points to the notes (experiments/<name>/NOTES.md) or the docs."""
    found: dict[str, list[str]] = {}
    for path in repository_files(".py", PACKAGE_CODE):
        text = path.read_text()
        for match in DATE_OR_ISSUE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.setdefault(relative(path), []).append(f"{line}: {match.group()!r}")
    new = {name: hits for name, hits in found.items() if name not in DATED_FILES}
    assert not new, f"dates or issue numbers in package code: {new}"
    assert not DATED_FILES - set(found), (
        f"clean now, remove from DATED_FILES: {sorted(DATED_FILES - set(found))}")


# -- Names that resolve -------------------------------------------------------------------------

DOTTED_NAME = re.compile(r"(?<![\w.])smmcts_spiel(?:\.[A-Za-z_]\w*)+")
#: (file, name) pairs still naming what no longer exists (remove an entry once fixed).
STALE_NAMES: set[tuple[str, str]] = set()


def source_file(module: str) -> pathlib.Path | None:
    """The file of a module of the package (``smmcts_spiel.games.goofspiel`` ->
    games/goofspiel.py), or None if there is none."""
    for package, folder in PACKAGE_DIRS.items():
        if module == package or module.startswith(package + "."):
            base = ROOT / folder / pathlib.Path(*module[len(package) + 1:].split(".")) \
                if module != package else ROOT / folder
            for path in (base.with_suffix(".py"), base / "__init__.py"):
                if path.name != ".py" and path.is_file():
                    return path
            return None
    return None


@functools.cache
def top_level(path: pathlib.Path) -> dict[str, ast.AST]:
    """Names a module binds at its top level (in ``if`` and ``try`` blocks too)."""
    names: dict[str, ast.AST] = {}

    def visit(body):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names[node.name] = node
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            names[name.id] = node
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    names[alias.asname or alias.name.split(".")[0]] = node
            elif isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
    visit(ast.parse(path.read_text()).body)
    return names


def class_members(node: ast.ClassDef) -> set[str]:
    """What a class defines: its body's names and the ``self.x`` its methods assign."""
    members = set()
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            members.add(item.name)
        elif isinstance(item, (ast.Assign, ast.AnnAssign)):
            for target in item.targets if isinstance(item, ast.Assign) else [item.target]:
                members |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    for sub in ast.walk(node):
        if (isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store)
                and isinstance(sub.value, ast.Name) and sub.value.id == "self"):
            members.add(sub.attr)
    return members


def resolves(name: str) -> bool:
    """Whether ``name`` (``smmcts_spiel.x.y...``) is a module of the package or a name one
    defines, read from the source (so the optional extras need not be installed)."""
    parts = name.split(".")
    for split in range(len(parts), 0, -1):
        path = source_file(".".join(parts[:split]))
        if path is not None:
            break
    else:
        return False
    module, rest = ".".join(parts[:split]), parts[split:]
    if not rest:
        return True
    names = top_level(path)
    if rest[0] in ("__name__", "__file__", "__doc__", "__path__", "__spec__"):
        return True
    if "__getattr__" in names:  # names made on demand: ask the module itself
        obj = importlib.import_module(module)
        for attr in rest:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    node = names.get(rest[0])
    if node is None:
        return False
    if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("smmcts_spiel"):
        alias = next(a for a in node.names if (a.asname or a.name) == rest[0])
        return resolves(".".join([node.module, alias.name, *rest[1:]]))
    if isinstance(node, ast.ClassDef) and len(rest) > 1:
        return rest[1] in class_members(node) or bool(node.bases)  # inherited: not followed
    return True  # a function's or a value's attributes are not followed


@pytest.mark.parametrize("name,found", [
    ("smmcts_spiel.exact.solver", True), ("smmcts_spiel.exact.solver.game_value", True),
    ("smmcts_spiel.games.kernels.check_kernel", True), ("smmcts_spiel.bots.SMMCTSBot", True),
    ("smmcts_spiel.search.smmcts.SMMCTS.search", True), ("smmcts_spiel.solver", False),
    ("smmcts_spiel.exact.solver.no_such_name", False), ("smmcts_spiel.matrix_tree", False)])
def test_resolves_finds_modules_and_their_names_only(name, found):
    assert resolves(name) == found


def test_every_dotted_name_in_code_and_docs_exists():
    """``smmcts_spiel.x.y`` in any Python file, README.md or docs/*.md names a module or a
    name defined in one: a module that moved must not leave its old name behind."""
    files = repository_files(".py") + [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    stale = set()
    for path in files:
        if path == pathlib.Path(__file__):  # its examples of stale names
            continue
        for name in DOTTED_NAME.findall(path.read_text()):
            if not resolves(name):
                stale.add((relative(path), name))
    assert not stale - STALE_NAMES, f"names of nothing: {sorted(stale - STALE_NAMES)}"
    assert not STALE_NAMES - stale, (
        f"fixed now, remove from STALE_NAMES: {sorted(STALE_NAMES - stale)}")


# -- Paths that exist ---------------------------------------------------------------------------

REPOSITORY_PATH = re.compile(
    r"(?<![\w/.])(?:scripts|experiments|benchmarks|docs)/[\w/.-]+?\.(?:py|md)\b")


def test_every_repository_path_in_package_code_exists():
    """A program or page that package code names (``experiments/olympiad/olympiad.py`` in an
    error message, ``docs/search_and_bots.md`` in a comment) is where it says: a move of the
    lab must not leave its old path in the library."""
    missing = []
    for path in repository_files(".py", PACKAGE_CODE):
        text = path.read_text()
        for match in REPOSITORY_PATH.finditer(text):
            if not (ROOT / match.group()).exists():
                line = text.count("\n", 0, match.start()) + 1
                missing.append(f"{relative(path)}:{line}: {match.group()}")
    assert not missing, f"paths of nothing: {missing}"
