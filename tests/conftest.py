"""Shared by every test module.

`ZYGOTEPY_OPTIMIZATIONS=off python -m pytest` runs the whole suite with every optimisation off (the plain form the
adjoint pass emits): every gradient must hold there too. Tests of an optimisation's own mechanics (what its generated
code looks like, that it writes in place) are marked `optimizations` and skipped in that run.
"""
import os
import sys

import pytest

import zygotepy
import zygotepy.adjoints.nesting.deep as nesting_deep

OFF = os.environ.get("ZYGOTEPY_OPTIMIZATIONS", "on").lower() in ("off", "0", "false")


def pytest_configure(config):
    if OFF:
        zygotepy.optimizations(False)


def pytest_collection_modifyitems(config, items):
    if OFF:
        skip = pytest.mark.skip(reason="tests an optimisation's mechanics; ZYGOTEPY_OPTIMIZATIONS=off")
        for item in items:
            if item.get_closest_marker("optimizations") is not None:
                item.add_marker(skip)


@pytest.fixture(autouse=True)
def _transform_route_only(request, monkeypatch):
    """Nested gradients in the tests check the transform route (the twins, adjoints/nesting/): forward-over-reverse,
    which takes over where the twins refuse (nesting/deep.py), would otherwise hide a twin's regression behind a right
    value. A test that the dual route serves is marked `dual_route`."""
    if request.node.get_closest_marker("dual_route") is None:
        def refuse(*args, **kwargs):
            raise AssertionError("a nested gradient took the dual route in a test not marked dual_route")
        monkeypatch.setattr(nesting_deep, "by_dual_numbers", refuse)


@pytest.fixture
def deep_stack():
    """Five and more levels of generated code nest Python frames past the default limit of 1000 under pytest."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 50000))
    yield
    sys.setrecursionlimit(old)


@pytest.fixture(params=[True, False], ids=["optimized", "plain"])
def mode(request):
    """The test once with every optimisation on and once with every one off; the switches are as they were after (in
    the `ZYGOTEPY_OPTIMIZATIONS=off` run, off)."""
    with zygotepy.optimizations(request.param):
        yield request.param
