"""Shared pytest configuration: the --slow flag for long statistical checks, and a fixture
that walks a game's tree layer by layer (for the AIJ 2016 games' published state counts)."""

import os

import pytest
from hypothesis import settings


def pytest_addoption(parser):
    parser.addoption(
        "--slow", action="store_true", default=False, help="also run tests marked slow"
    )


def pytest_collection_modifyitems(config, items):
    if config.getoption("--slow"):
        return
    skip_slow = pytest.mark.skip(reason="long statistical check: run with --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


# Property tests draw the same examples on every run (CI must not flake); set
# HYPOTHESIS_PROFILE=explore to search new examples locally.
settings.register_profile("deterministic", derandomize=True, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))


def _tree_layers(game):
    """Per depth (joint moves from the start), the non-terminal states as
    ``{transposition_key: (a state, how many tree nodes it stands for)}``."""
    root = game.new_initial_state()
    layer = {root.transposition_key(): (root, 1)}
    while layer:
        yield layer
        below: dict = {}
        for state, count in layer.values():
            for a in state.legal_actions(0):
                for b in state.legal_actions(1):
                    child = state.clone()
                    child.apply_actions([a, b])
                    if not child.is_terminal():
                        key = child.transposition_key()
                        below[key] = (child, below.get(key, (child, 0))[1] + count)
        layer = below


@pytest.fixture
def tree_layers():
    """``tree_layers(game)``: the layers of a simultaneous game whose states have a
    ``transposition_key()``, counted through transpositions (see :func:`_tree_layers`)."""
    return _tree_layers
