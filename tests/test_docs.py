"""Every code block of README.md, docs/*.md, the experiments' READMEs and benchmarks/RESULTS.md
runs or is checked, so the docs cannot rot; and the docs stay reference pages.

- ```python blocks run, each file's blocks in order in one fresh interpreter (a later block
  may use an earlier one's names), in a scratch folder where ``docs/``, ``experiments/`` and
  ``benchmarks/`` are the repository's.
- ```bash blocks run in bash with every program they start replaced by a recorder: then
  each call of a script (``python scripts/x.py``, ``.venv/bin/python scripts/x.py``, the
  console script ``smmcts-x``) has its flags parsed by that script's absl flags (unknown
  flags and bad values fail, validators included; nothing runs), each file the call reads
  must exist, ``python -c`` code must compile and ``pip install`` may name only our extras.
- ```text blocks (diagrams, output) are not code; a block without a language fails.

A block that cannot run here says so in its first line, visibly: ``# docs-test: skip
(<reason>)``; one that takes long says ``# docs-test: slow`` and runs with ``--slow``.
With ``--slow`` the README's shell commands also run for real, each within minutes.

The pages themselves: at most about 400 lines each (the README about 100), no issue
numbers and no dated run logs in docs/ (dates belong to docs/results.md and the
experiments' notes), every relative link pointing to a file that exists, and the bot-spec
table listing each spec's parameters and defaults as the code has them.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = sorted((ROOT / "docs").glob("*.md"))
#: The pages whose code must run: the README, the reference, each experiment's README and
#: the benchmarks' table (the dated NOTES.md are history: their commands ran when written).
DOCS = [ROOT / "README.md", *REFERENCE, ROOT / "experiments" / "README.md",
        *sorted((ROOT / "experiments").glob("*/README.md")), ROOT / "benchmarks" / "RESULTS.md"]
NOTES = [*sorted((ROOT / "experiments").glob("*/NOTES.md")), ROOT / "benchmarks" / "NOTES.md"]
SHELL = ("bash", "sh", "shell")
LANGUAGES = ("python", *SHELL, "text")
_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
_MARKER = re.compile(r"^#\s*docs-test:\s*(slow|skip\s*\((.+)\))\s*$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    language: str
    code: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def marker(self) -> tuple[str | None, str]:
        """("slow" | "skip" | None, the skip reason) from the block's first line."""
        first = self.code.lstrip("\n").split("\n", 1)[0].strip()
        found = _MARKER.match(first)
        if not found:
            return None, ""
        return ("skip", found.group(2).strip()) if found.group(2) else ("slow", "")


def code_blocks(path: Path) -> list[Block]:
    text = path.read_text()
    return [Block(path, text.count("\n", 0, m.start()) + 1, m.group(1).strip(), m.group(2))
            for m in _FENCE.finditer(text)]


BLOCKS = [block for path in DOCS for block in code_blocks(path)]


def test_the_docs_have_code_blocks_and_every_block_says_its_language():
    assert any(b.language == "python" for b in BLOCKS) and any(b.language in SHELL
                                                               for b in BLOCKS)
    unlabelled = [f"{b.where}: ```{b.language}" for b in BLOCKS if b.language not in LANGUAGES]
    assert not unlabelled, ("label each block ```python, ```bash or ```text (not code):\n"
                            + "\n".join(unlabelled))


def test_skip_markers_give_a_reason():
    for block in BLOCKS:
        kind, reason = block.marker
        assert kind != "skip" or len(reason) > 10, f"{block.where}: say why it cannot run"


# -- python blocks ----------------------------------------------------------------------------


def _scratch(tmp_path: Path) -> Path:
    """A working folder whose docs/, experiments/ and benchmarks/ are the repository's (read
    by the blocks)."""
    for name in ("docs", "experiments", "benchmarks"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    return tmp_path


def _python_runs() -> list:
    """One run per file: its python blocks in order; slow if any block is."""
    runs = []
    for path in DOCS:
        blocks = [b for b in BLOCKS if b.path == path and b.language == "python"]
        if not blocks:
            continue
        kinds = {b.marker[0] for b in blocks}
        marks = [pytest.mark.slow] if "slow" in kinds else []
        runs.append(pytest.param(blocks, id=str(path.relative_to(ROOT)), marks=marks))
    return runs


@pytest.mark.parametrize("blocks", _python_runs())
def test_python_blocks_run(blocks, tmp_path):
    parts = []
    for block in blocks:
        kind, reason = block.marker
        if kind == "skip":
            continue
        # Each block compiled on its own, named by its place in the docs (for tracebacks).
        parts.append(f"exec(compile({block.code!r}, {block.where!r}, 'exec'))")
    if not parts:
        pytest.skip("every python block of this file is marked skip")
    result = subprocess.run([sys.executable, "-c", "\n".join(parts)], cwd=_scratch(tmp_path),
                            capture_output=True, text=True, timeout=900,
                            env={**os.environ, "TQDM_DISABLE": "1"})
    assert result.returncode == 0, (f"a python block of {blocks[0].path.name} failed:\n"
                                    f"{result.stderr[-4000:]}")


# -- shell blocks -----------------------------------------------------------------------------

_RECORDER = """#!/bin/sh
# Records the block, its name and arguments (NUL-separated; one call per record) instead of
# running.
{ printf '%s\\0' "$DOCS_TEST_BLOCK" "$0" "$@"; printf '\\036'; } >> "$DOCS_TEST_CALLS"
"""
# nice and taskset only change how a program runs: run it (a recorder) without them.
_UNWRAP = {
    "nice": """#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in -n) shift 2 ;; -n*|-[0-9]*|--adjustment=*) shift ;;
  *) break ;; esac; done
exec "$@"
""",
    "taskset": """#!/bin/sh
case "$1" in -c|--cpu-list) shift 2 ;; -*) shift ;; *) shift ;; esac
exec "$@"
""",
}


def _console_scripts() -> list[str]:
    import importlib.metadata

    eps = importlib.metadata.distribution("smmcts-spiel").entry_points
    return [ep.name for ep in eps if ep.group == "console_scripts"]


def _recorders(folder: Path) -> Path:
    """Programs the blocks may start: recorders for python, pip, mypy, the console scripts,
    .venv/bin/python and ./scripts/{demo,test} (relative to the working folder); nice and
    taskset that run their program without changing how."""
    bin_dir = folder / "bin"
    programs = {bin_dir / n: _RECORDER for n in ("python", "python3", "pip", "mypy",
                                                 *_console_scripts())}
    programs.update({folder / ".venv" / "bin" / "python": _RECORDER,
                     folder / "scripts" / "demo": _RECORDER,
                     folder / "scripts" / "test": _RECORDER})
    programs.update({bin_dir / name: text for name, text in _UNWRAP.items()})
    for path, text in programs.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return bin_dir


def _record_calls(blocks: list[Block], folder: Path) -> tuple[list[list[str]], list[str]]:
    """Run one file's shell blocks in order in one bash (a block may use an earlier one's
    variables) with recorders: the calls made, each [block, program, *args], and problems."""
    bin_dir = _recorders(folder)
    log = folder / "calls"
    log.write_bytes(b"")
    script, starts = ["set -eu"], []
    for block in blocks:
        script.append(f"export DOCS_TEST_BLOCK={shlex.quote(block.where)}")
        starts.append((len(script) + 1, block))
        script.append(block.code)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "DOCS_TEST_CALLS": str(log)}
    result = subprocess.run(["bash", "-c", "\n".join(script)], cwd=folder, env=env,
                            capture_output=True, text=True, timeout=60)
    problems = []
    if result.returncode != 0:
        line = re.search(r"line (\d+)", result.stderr)
        failed = [b for first, b in starts if line and first <= int(line.group(1))]
        where = failed[-1].where if failed else blocks[0].path.name
        problems.append(f"{where}: the block does not run as shell (programs other than "
                        f"python, pip and our scripts run for real): {result.stderr[-800:]}")
    calls = [record.split(b"\0")[:-1] for record in log.read_bytes().split(b"\036")[:-1]]
    return [[arg.decode() for arg in call] for call in calls], problems


_OUTPUT_FLAG = re.compile(r"out|results_dir|data_dir|trees_dir|save|checkpoint_dir|publish")
_PATH = re.compile(r"(?<![\w./-])((?:\.{0,2}/)?[\w.-]+(?:/[\w.-]+)*\.(?:json|csv|npz|npy|pkl|"
                   r"txt|md|png))(?![\w/-])")


def _input_paths(args: list[str]) -> list[str]:
    """The files named by a script's arguments that it reads (flags not named as outputs)."""
    paths = []
    for arg in args:
        name, _, value = arg.lstrip("-").partition("=") if arg.startswith("--") else ("", "",
                                                                                       arg)
        if name and _OUTPUT_FLAG.search(name):
            continue
        paths += _PATH.findall(value)
    return paths


def _script_of(program: str, args: list[str]) -> tuple[str, list[str]] | None:
    """(script path relative to the repository, its arguments) for a call of a script."""
    name = Path(program).name
    if name.startswith("smmcts-"):
        return f"scripts/{name.removeprefix('smmcts-').replace('-', '_')}.py", args
    if name in ("python", "python3") and args and args[0].endswith(".py"):
        return args[0], args[1:]
    return None


def _check_call(call: list[str], scripts: list) -> list[str]:
    """Problems of one recorded call [block, program, *args]; a call of a script is queued
    in ``scripts`` for its flags."""
    block, program, args = call[0], Path(call[1]).name, call[2:]
    where = f"{block}: {shlex.join([program, *args])[:160]}"
    script = _script_of(call[1], args)
    if script is not None:
        path, script_args = script
        if not (ROOT / path).is_file():
            return [f"{where}: no such script {path}"]
        scripts.append((block, path, script_args))
        return [f"{where}: no such input file {p}" for p in _input_paths(script_args)
                if not (ROOT / p).exists()]
    if program in ("python", "python3") and args[:1] == ["-c"]:
        try:
            compile(args[1], block, "exec")
        except SyntaxError as error:
            return [f"{where}: python -c code does not compile: {error}"]
        return [f"{where}: no such input file {p}" for a in args[2:] for p in _PATH.findall(a)
                if not (ROOT / p).exists()]
    if program == "pip" or (program.startswith("python") and args[:2] == ["-m", "pip"]):
        return _check_pip(where, args[2:] if program.startswith("python") else args)
    if program.startswith("python") and args[:1] == ["-m"] and len(args) > 1:
        import importlib.util

        found = importlib.util.find_spec(args[1].split(".")[0]) is not None
        return [] if found else [f"{where}: no module {args[1]} (which extra installs it?)"]
    if program in ("demo", "test", "mypy"):
        return []  # ./scripts/demo, ./scripts/test and mypy: run by their own tests
    return [f"{where}: the docs test does not know this call (add it to _check_call)"]


def _check_pip(where: str, args: list[str]) -> list[str]:
    import importlib.metadata

    extras = set(importlib.metadata.metadata("smmcts-spiel").get_all("Provides-Extra") or [])
    problems = []
    for arg in args:
        if arg.startswith((".[", ".")) and "[" in arg:
            wanted = set(arg[arg.index("[") + 1:arg.rindex("]")].split(","))
            problems += [f"{where}: no extra {e!r} (have {sorted(extras)})"
                         for e in wanted - extras]
    return problems


# Parses each script's flags as absl does, without running the script: the script module is
# loaded (defining its flags), the arguments parsed, the flags removed again for the next.
_FLAG_CHECKER = textwrap.dedent("""
    import importlib.util, json, sys
    from absl import flags
    import absl.app  # noqa: F401  (its flags belong to the baseline)

    EXTRAS_MODULES = {"jax", "jaxlib", "flax", "optax", "chex", "orbax", "ray", "matplotlib"}
    FLAGS = flags.FLAGS
    baseline = set(FLAGS)
    problems, loaded = [], {}
    calls = sorted(json.load(sys.stdin), key=lambda call: call[1])  # each script loaded once
    for where, path, args in calls:
        if path not in loaded:
            for name in set(FLAGS) - baseline:
                delattr(FLAGS, name)
            name = "docs_script_" + path.replace("/", "_").removesuffix(".py")
            spec = importlib.util.spec_from_file_location(name, path)
            module = sys.modules[name] = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            except ModuleNotFoundError as error:
                if (error.name or "").split(".")[0] not in EXTRAS_MODULES:
                    raise
                loaded[path] = f"needs an extra: {error}"  # e.g. nfsp without jax
                continue
            loaded[path] = "loaded"
        if loaded[path] != "loaded":
            continue
        FLAGS.unparse_flags()
        try:
            rest = FLAGS([path, *args])
        except flags.Error as error:
            problems.append(f"{where}: {path}: {error}")
            continue
        if rest[1:]:
            problems.append(f"{where}: {path} takes no positional arguments, got {rest[1:]}")
    print(json.dumps({"problems": problems, "loaded": loaded}))
""")


def _check_script_flags(scripts: list) -> tuple[list[str], dict]:
    result = subprocess.run([sys.executable, "-c", _FLAG_CHECKER], input=json.dumps(scripts),
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    return report["problems"], report["loaded"]


def test_shell_blocks_call_scripts_with_flags_they_have(tmp_path):
    problems: list[str] = []
    scripts: list = []
    for k, path in enumerate(DOCS):
        blocks = [b for b in BLOCKS if b.path == path and b.language in SHELL
                  and b.marker[0] != "skip"]
        if not blocks:
            continue
        folder = tmp_path / str(k)
        folder.mkdir()
        calls, problems_here = _record_calls(blocks, folder)
        problems += problems_here
        for call in calls:
            problems += _check_call(call, scripts)
    assert scripts, "no shell block calls a script: the recorder is broken"
    flag_problems, loaded = _check_script_flags(scripts)
    problems += flag_problems
    assert not problems, "\n".join(problems)
    not_loaded = {path: why for path, why in loaded.items() if why != "loaded"}
    if not_loaded:
        pytest.skip(f"flags not checked (optional extra missing): {not_loaded}")


# -- API reference ----------------------------------------------------------------------------


WITHOUT_EXTRAS = textwrap.dedent("""
    import importlib.abc, runpy, sys

    HIDDEN = set(sys.argv[1].split(","))

    class Hide(importlib.abc.MetaPathFinder):
        # Every import of a hidden module fails as if it were not installed.
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in HIDDEN:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    sys.meta_path.insert(0, Hide())
    sys.argv = ["pdoc", *sys.argv[2:]]
    runpy.run_module("pdoc", run_name="__main__")
""")


@pytest.mark.slow
def test_the_readmes_api_reference_command_works_without_the_optional_extras(tmp_path):
    """The README's command as written, with the nfsp, ray and plot extras' modules hidden
    (it failed on ``No module named 'jax'`` from smmcts_spiel.nfsp.anfsp)."""
    pytest.importorskip("pdoc")
    hidden = "jax,jaxlib,flax,optax,chex,orbax,ray,matplotlib"
    result = subprocess.run([sys.executable, "-c", WITHOUT_EXTRAS, hidden, "smmcts_spiel",
                             "smmcts_spiel.bots", "-o", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    pages = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.html")}
    assert "smmcts_spiel/nfsp/buffers.html" in pages
    assert "smmcts_spiel/nfsp/anfsp.html" not in pages


def test_the_api_reference_builds_from_the_docstrings_without_warnings(tmp_path):
    """The README's ``python -m pdoc smmcts_spiel -o build/api``, in a fresh interpreter
    (what pdoc finds depends on what is imported): every module imports and every docstring
    and annotation resolves (pdoc warns otherwise). pdoc documents the modules that
    ``smmcts_spiel.__all__`` names, and theirs."""
    pytest.importorskip("pdoc")
    modules = ["smmcts_spiel"]
    result = subprocess.run([sys.executable, "-m", "pdoc", *modules, "-o", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("Warn")]
    assert result.returncode == 0 and not warnings, result.stderr[-4000:]
    pages = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.html")}
    assert {"smmcts_spiel/bots.html", "smmcts_spiel/games/goofspiel.html",
            "smmcts_spiel/search/selectors.html", "smmcts_spiel/exact/solver.html",
            "smmcts_spiel/match.html", "smmcts_spiel/extras.html"} <= pages


# -- the pages: reference, not logs -----------------------------------------------------------

MAX_PAGE_LINES = 400
MAX_README_LINES = 120
_ISSUE = re.compile(r"\b[Ii]ssues? #?\d+|\bissue-\d+")
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
_DATE = re.compile(rf"\b\d{{1,2}} (?:{_MONTHS})[a-z]*(?: 20\d\d)?\b|\b20\d\d-\d\d-\d\d\b|"
                   rf"\b\d\d:\d\d UTC\b")


def _prose(path: Path) -> list[tuple[int, str]]:
    """(line number, line) of a page, without the targets of its links (anchors repeat the
    headings of the notes they point to)."""
    return [(k, re.sub(r"\]\([^)]*\)", "]()", line))
            for k, line in enumerate(path.read_text().splitlines(), 1)]


def test_every_page_is_short_enough_to_be_a_reference():
    long_pages = [f"{p.relative_to(ROOT)}: {len(p.read_text().splitlines())} lines"
                  for p in DOCS if len(p.read_text().splitlines()) > MAX_PAGE_LINES]
    assert not long_pages, ("a page over ~400 lines is a log: move its dated runs to the "
                            "experiment's NOTES.md\n" + "\n".join(long_pages))
    readme = len((ROOT / "README.md").read_text().splitlines())
    assert readme <= MAX_README_LINES, f"README.md has {readme} lines; keep it about 100"


def test_no_issue_numbers_and_no_dated_runs_in_the_reference():
    found = []
    for path in [ROOT / "README.md", *REFERENCE]:
        for k, line in _prose(path):
            if _ISSUE.search(line) or (path.name != "results.md" and _DATE.search(line)):
                found.append(f"{path.relative_to(ROOT)}:{k}: {line.strip()[:120]}")
    assert not found, ("docs/ says what is, not when: a date goes to docs/results.md or the "
                       "experiment's NOTES.md, an issue number nowhere\n" + "\n".join(found))


def test_the_dating_checks_can_fail():
    assert _ISSUE.search("until issue 24") and _ISSUE.search("Issue 23's runs")
    assert _DATE.search("measured 25 Nov 2026 19:22") and _DATE.search("(2026-11-24)")
    assert _DATE.search("at 04:20 UTC") and not _DATE.search("100 games x 100 runs")


_LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)\s]*)?\)")


def test_relative_links_point_to_files_that_exist():
    broken = []
    for path in [*DOCS, *NOTES, ROOT / "CHANGELOG.md"]:
        for k, line in enumerate(path.read_text().splitlines(), 1):
            for target in _LINK.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue
                if not (path.parent / target).exists():
                    broken.append(f"{path.relative_to(ROOT)}:{k}: {target}")
    assert not broken, "links to nothing:\n" + "\n".join(broken)


def _spec_table() -> dict[str, str]:
    """{bot kind: its parameters cell} of the bot-spec table of docs/bots_and_matches.md."""
    rows = {}
    for line in (ROOT / "docs" / "bots_and_matches.md").read_text().splitlines():
        found = re.match(r"^\| `(\w+)(?:\([^`]*\))?` \|.*\| (.*) \|$", line)
        if found:
            rows[found.group(1)] = found.group(2)
    return rows


def test_the_bot_spec_table_lists_every_parameter_with_the_codes_defaults():
    import inspect

    from smmcts_spiel import bot_specs
    from smmcts_spiel.bots import DOABBot, ISSMMCTSBot, MMCTSBot, OOSBot, SMMCTSBot, SMOOSBot
    from smmcts_spiel.bots.openspiel_bots import ISMCTSBot
    from smmcts_spiel.imperfect import oos

    rows = _spec_table()
    constructors = {"smmcts": SMMCTSBot, "mmcts": MMCTSBot, "oos": OOSBot,
                    "is_smmcts": ISSMMCTSBot, "ismcts": ISMCTSBot, "doab": DOABBot,
                    "sm_oos": SMOOSBot}
    problems = []
    for kind, params in bot_specs.BOT_PARAMS.items():
        if not params:
            continue
        if kind not in rows:
            problems.append(f"{kind}: no row in the table")
            continue
        named = set(re.findall(r"`(\w+)`(?: \(|,|;| and|$)", rows[kind]))
        missing = sorted(set(params) - named)
        if missing:
            problems.append(f"{kind}: the table does not name {missing}")
        defaults = dict(re.findall(r"`(\w+)` \(`?([\w.-]+)`?[);,:]", rows[kind]))
        if kind in constructors:
            signature = inspect.signature(constructors[kind])
            code = {name: p.default for name, p in signature.parameters.items()}
            if kind == "oos":
                code.update(oos.PRESETS["default"])
            for name, shown in defaults.items():
                value = code.get(name, inspect.Parameter.empty)
                if value in (None, inspect.Parameter.empty):
                    continue
                if str(value).lower() != shown.lower() and not (
                        isinstance(value, (int, float)) and not isinstance(value, bool)
                        and float(shown) == float(value)):
                    problems.append(f"{kind}: the table says {name} ({shown}), the code "
                                    f"{value!r}")
    assert not problems, "\n".join(problems)


def _readme_calls(tmp_path: Path) -> list[list[str]]:
    blocks = [b for b in BLOCKS if b.path == ROOT / "README.md" and b.language in SHELL
              and b.marker[0] != "skip"]
    calls, problems = _record_calls(blocks, tmp_path)
    assert not problems, problems
    return [call[1:] for call in calls if _script_of(call[1], call[2:]) is not None]


@pytest.mark.slow
def test_the_readmes_commands_finish_within_minutes(tmp_path):
    """README promises examples of about a minute: each script call of its shell blocks runs
    for real, in a scratch folder, within 5 minutes (compiling included)."""
    calls = _readme_calls(tmp_path / "record")
    assert calls, "the README calls no script"
    for program, *args in calls:
        path, script_args = _script_of(program, args)
        work = tmp_path / "run"
        work.mkdir(exist_ok=True)
        result = subprocess.run([sys.executable, str(ROOT / path), *script_args], cwd=work,
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, f"{path}: {result.stderr[-2000:]}"
