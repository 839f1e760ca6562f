"""The compiled searches' tables (smmcts_spiel.imperfect.key_table): rows found by key, added
once, grown between chunks without losing or mixing up a row."""

import numpy as np

from smmcts_spiel.imperfect import key_table


class _Tables(key_table.KeyedRows):
    ROW_TABLES = (("values", np.float64), ("visits", np.int64))

    def __init__(self, width: int):
        self._new_tables(width)


def _add(tables: _Tables, key: int, n: int) -> tuple[int, bool]:
    """(row of ``key``, whether it was added now), as the compiled searches do it."""
    row = key_table.find(key, tables.hash_keys, tables.hash_nodes)
    if row >= 0:
        return int(row), False
    return int(key_table.add(key, n, tables.hash_keys, tables.hash_nodes, tables.node_keys,
                             tables.num_actions, tables.counters)), True


def test_a_key_is_added_once_and_found_after_growing():
    rng = np.random.default_rng(0)
    keys = rng.choice(10**12, size=5_000, replace=False)
    tables = _Tables(width=3)
    for chunk in np.split(keys, 10):  # 500 rows per chunk: the arrays grow past 1,024 rows
        tables._reserve(len(chunk))
        for key in chunk:
            row, added = _add(tables, int(key), int(key % 3) + 1)
            assert added and row == tables.num_nodes - 1
            tables.values[row, 0] = float(key)
            tables.visits[row, :] = 1
    assert tables.num_nodes == len(keys) and tables.node_keys.shape[0] >= len(keys)
    assert 2 * len(keys) <= tables.hash_keys.shape[0]  # at most half full
    for expected_row, key in enumerate(keys):
        row, added = _add(tables, int(key), 1)
        assert (row, added) == (expected_row, False)
        assert tables.values[row, 0] == float(key) and tables.num_actions[row] == key % 3 + 1
    assert tables.num_nodes == len(keys)
    unused = slice(tables.num_nodes, None)  # what add relies on for a new row
    assert not tables.values[unused].any() and not tables.visits[unused].any()


def test_copied_tables_are_independent():
    tables = _Tables(width=2)
    tables._reserve(1)
    row, _ = _add(tables, 42, 2)
    tables.values[row, 1] = 7.0
    other = _Tables.__new__(_Tables)
    tables._copy_tables_to(other)
    other.values[row, 1] = 0.0
    other._reserve(1)
    assert _add(other, 43, 2) == (1, True)
    assert tables.values[row, 1] == 7.0 and tables.num_nodes == 1
    assert _add(tables, 43, 2) == (1, True) and _add(tables, 42, 2) == (0, False)


def test_compiled_searches_load_the_table_functions_when_built(monkeypatch):
    """find / rehash are called from Python between chunks; loading them (numba's cache or a
    compile) must happen when a search is built, not inside its first timed move (dd29561)."""
    import pyspiel

    from smmcts_spiel.imperfect import is_smmcts_kernel, oos_kernel

    game = pyspiel.load_game("kuhn_poker")
    calls = []
    real = key_table.KeyedRows._load_table_code
    monkeypatch.setattr(key_table.KeyedRows, "_load_table_code",
                        lambda self: calls.append(type(self)) or real(self))
    oos_kernel.outcome_sampling(game, engine="kernel", seed=0)
    is_smmcts_kernel.information_set_smmcts(game, engine="kernel", seed=0)
    assert calls == [oos_kernel.KernelOutcomeSampling,
                     is_smmcts_kernel.KernelInformationSetSMMCTS]


def test_loading_the_table_code_leaves_find_and_rehash_ready():
    # In a fresh process (nothing loaded yet): building a search with the loading switched
    # off leaves both dispatchers empty, so the check below can fail; built normally, both
    # have their compiled code.
    import subprocess
    import sys

    script = """
import pyspiel
from smmcts_spiel.imperfect import key_table, oos_kernel
game = pyspiel.load_game("kuhn_poker")
real = key_table.KeyedRows._load_table_code
key_table.KeyedRows._load_table_code = lambda self: None
oos_kernel.outcome_sampling(game, engine="kernel", seed=0)
print(len(key_table.find.signatures), len(key_table.rehash.signatures))
key_table.KeyedRows._load_table_code = real
oos_kernel.outcome_sampling(game, engine="kernel", seed=0)
print(len(key_table.find.signatures), len(key_table.rehash.signatures))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    assert out[0] == "0 0" and out[1] == "1 1"
