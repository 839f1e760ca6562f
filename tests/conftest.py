"""Shared pytest configuration: the --slow flag for long statistical checks."""

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
