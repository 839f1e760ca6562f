"""Shared pytest configuration: the --slow flag for long statistical checks."""

import pytest


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
