"""Shared fixtures: one engine per variant (compiled code is cached on disk by numba).

This folder is on ``sys.path`` (pytest's rootdir conftest), so tests import their shared
helpers as ``from support.x import y``; support/ holds no tests and is never collected."""

import pytest

from tammi_rl.rules.engine import Rules

collect_ignore = ["support"]

SEED_VARIANTS = ["russian", "english", "italian", "turkish", "brazilian"]


@pytest.fixture(scope="session", params=SEED_VARIANTS)
def any_rules(request) -> Rules:
    return Rules.for_variant(request.param)


@pytest.fixture(scope="session")
def russian() -> Rules:
    return Rules.for_variant("russian")


@pytest.fixture(scope="session")
def english() -> Rules:
    return Rules.for_variant("english")


@pytest.fixture(scope="session")
def italian() -> Rules:
    return Rules.for_variant("italian")


@pytest.fixture(scope="session")
def turkish() -> Rules:
    return Rules.for_variant("turkish")


@pytest.fixture(scope="session")
def brazilian() -> Rules:
    return Rules.for_variant("brazilian")
