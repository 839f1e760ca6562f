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
