"""Shared by every test module."""
import sys

import pytest

import zygotepy.adjoints.nesting_deep as nesting_deep


@pytest.fixture(autouse=True)
def _transform_route_only(request, monkeypatch):
    """Nested gradients in the tests check the transform route (the twins, adjoints/nesting.py): forward-over-reverse,
    which takes over where the twins refuse (nesting_deep.py), would otherwise hide a twin's regression behind a right
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
