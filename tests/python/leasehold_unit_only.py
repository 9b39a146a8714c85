"""pytest plugin for the fast tier (`make check`): keeps only the Python
client's unit tests, those that start no process.

A test is a process test when it uses, directly or through another fixture,
a fixture of the client's own test suite (clients/python/tests: each one
starts `leasehold server` or `redis-server` processes); pytest's built-in
fixtures (tmp_path, monkeypatch ...) do not count. The other tests are
deselected. Used as `-p leasehold_unit_only` with tests/python on PYTHONPATH.
"""

from typing import List

import pytest


def _uses_suite_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return True  # not a plain test function: keep it out of the fast tier
    # A fixture of conftest.py or a test module has a non-empty baseid;
    # pytest's own fixtures have "".
    return any(d.baseid for defs in info.name2fixturedefs.values() for d in defs)


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    process_tests = [item for item in items if _uses_suite_fixture(item)]
    if process_tests:
        config.hook.pytest_deselected(items=process_tests)
        items[:] = [item for item in items if not _uses_suite_fixture(item)]
