"""The tuple surgery of the twins (adjoints/nesting/cotangents.py), differentiated by an outer level."""


from zygotepy import pullback


def test_a_rule_back_padding_with_a_repeated_tuple_differentiates_with_a_cotangent_in_the_padding():
    # `_drop_rule`'s back returns `(*(None,) * k, *dy)`; an outer level differentiating it may send a cotangent to the
    # padding (a fifth level did): the repetition must go through mul's rule, not the scalar fast path (which computed
    # `d_padding * (None,)`, "can't multiply sequence by non-int of type 'tuple'")
    from zygotepy.adjoints.nesting.cotangents import _drop_rule
    _, back = _drop_rule((None, 1.0, 2.0), 1)
    y, pb = pullback(lambda dy: back(dy)[0], (1.0, 2.0))
    assert y == (None, 1.0, 2.0)
    assert pb((7.0, 1.0, 3.0)) == ((1.0, 3.0),)
