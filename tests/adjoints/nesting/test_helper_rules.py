"""Rules for the helpers generated code calls (adjoints/nesting/helper_rules.py), differentiated by an outer level."""

import pytest

from zygotepy import gradient


def d(f):
    """The derivative of a scalar function, by reverse mode (nests)."""
    return lambda x: gradient(f, x)[0]


def test_the_back_of_structgrads_rule_differentiates_at_second_order():
    # an outer level differentiates this back (a sixth level does): it copies the mapping by a comprehension, not by
    # `dict(dy)`, whose constructor rule the twins do not cover
    from zygotepy.adjoints.nesting.helper_rules import _structgrad_rule
    from zygotepy.structgrad import StructGrad

    def f(v):
        _, back = _structgrad_rule({"a": v})
        return back(StructGrad({"a": v * v * v}))[0]["a"]
    assert d(d(f))(1.5) == pytest.approx(9.0)
