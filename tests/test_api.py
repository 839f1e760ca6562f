"""The public API, ``smmcts_spiel.__all__``: each name its module's own object, imported
on first use so that ``import smmcts_spiel`` stays light, and documented in the package's
docstring (the front page of the API reference)."""

import re
import subprocess
import sys
import types

import pytest

import smmcts_spiel

#: Modules ``import smmcts_spiel`` must not import: slow to import (numba), or optional.
HEAVY_MODULES = ("numba", "scipy", "tabulate", "tqdm", "matplotlib", "choix", "ray", "jax")


def test_import_smmcts_spiel_imports_no_heavy_module():
    code = ("import sys, smmcts_spiel\n"
            f"print(*[m for m in {HEAVY_MODULES!r} if m in sys.modules])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.split() == []


def test_import_of_the_bots_imports_only_numba_of_the_heavy_modules():
    """The bots are compiled (numba, which imports scipy's bare package to check its version);
    scipy's submodules, the table, progress-bar and plotting libraries wait until used."""
    heavy = (*HEAVY_MODULES, "scipy.stats", "scipy.optimize")
    code = ("import sys, smmcts_spiel.bots\n"
            f"print(*[m for m in {heavy!r} if m in sys.modules])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.split() == ["numba", "scipy"]


def test_a_subpackage_is_imported_on_first_use():
    code = ("import sys, smmcts_spiel\n"
            "assert 'smmcts_spiel.search' not in sys.modules\n"
            "print(smmcts_spiel.search.__name__, smmcts_spiel.game_value.__module__)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.split() == ["smmcts_spiel.search", "smmcts_spiel.exact.solver"]


@pytest.mark.parametrize("name", smmcts_spiel.__all__)
def test_every_public_name_is_a_package_object_and_documented(name):
    """A function or class of the package, named in the package's docstring; or one of its
    subpackages and modules (what the API reference documents besides)."""
    obj = getattr(smmcts_spiel, name)
    if isinstance(obj, types.ModuleType):
        assert obj.__name__ == f"smmcts_spiel.{name}"
        return
    assert obj.__module__.startswith("smmcts_spiel."), obj.__module__
    assert getattr(sys.modules[obj.__module__], obj.__name__) is obj
    assert re.search(rf":(?:func|class):`{name}`", smmcts_spiel.__doc__), (
        f"{name} is not named in smmcts_spiel's docstring")


def test_the_api_is_what_a_user_needs():
    """The bots, bots by name and matches, exact solving and exploitability, kernels."""
    assert {"SMMCTSBot", "OOSBot", "ISSMMCTSBot", "MMCTSBot", "make_bot", "play_match",
            "round_robin", "game_value", "solve", "exploitability", "kernel_for",
            "register_kernel", "check_kernel"} <= set(smmcts_spiel.__all__)
    assert len(set(smmcts_spiel.__all__)) == len(smmcts_spiel.__all__)


def test_the_api_names_are_in_dir_and_an_unknown_name_is_an_attribute_error():
    assert set(smmcts_spiel.__all__) <= set(dir(smmcts_spiel))
    unknown = "no_such_name"
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        getattr(smmcts_spiel, unknown)


def test_the_api_is_the_same_objects_as_the_modules():
    from smmcts_spiel.bot_specs import make_bot
    from smmcts_spiel.bots import SMMCTSBot
    from smmcts_spiel.exact import exploitability, solver
    from smmcts_spiel.games import kernels

    assert smmcts_spiel.SMMCTSBot is SMMCTSBot
    assert smmcts_spiel.make_bot is make_bot
    assert smmcts_spiel.game_value is solver.game_value
    assert smmcts_spiel.exploitability is exploitability.evaluate
    assert smmcts_spiel.kernel_for is kernels.kernel_for
    namespace: dict = {}
    exec("from smmcts_spiel import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(smmcts_spiel.__all__)
