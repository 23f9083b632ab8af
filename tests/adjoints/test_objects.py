"""The constructor rules of adjoints/objects.py: `p._replace(field=value)` on namedtuples (issue case 9: it raised
MissingAdjoint for dict.pop, which namedtuple's `_replace` maps over its fields as a bound method). Each row is
checked against central finite differences in float64 (zygotepy.testing.check_grads), for namedtuples made inside the
function and passed in as arguments."""
import dataclasses
from collections import namedtuple
from typing import NamedTuple

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient, hessian, hvp, pullback
from zygotepy.testing import check_grads

P = namedtuple("P", "x y")
Q = namedtuple("Q", "a b c", defaults=(0.5,))


class Typed(NamedTuple):
    w: np.ndarray
    b: float = 1.0


def issue_example(a):
    p = P(a, 2.0 * a)
    q = p._replace(y=p.y * a)
    return q.x + q.y


def made_inside_two_fields(a, b):
    p = P(a, b)
    q = p._replace(x=p.y * p.x, y=np.sin(b))
    return q.x * q.y + p.x


def argument(p):
    q = p._replace(x=p.x ** 2)
    return q.x * q.y


def argument_replaced_unused(p):
    return p._replace(x=3.0).x * p.y + p._replace(y=p.x).y


def argument_no_keywords(p):
    q = p._replace()
    return q.x * q.y


def chained_in_a_loop(p):
    for _ in range(3):
        p = p._replace(x=p.x * p.y, y=p.y + 0.1)
    return p.x + p.y


def defaults(q):
    r = q._replace(c=q.a * q.c)
    return r.a * r.b + r.c ** 2


def typed_arrays(t):
    u = t._replace(w=np.tanh(t.w) * t.b)
    return np.sum(u.w ** 2) + u.b


def value_from_argument(p, v):
    return argument(p._replace(y=v * v))


ROWS = [
    ("issue_example", issue_example, (0.7,)),
    ("made_inside_two_fields", made_inside_two_fields, (0.4, -1.3)),
    ("argument", argument, (P(0.6, 1.7),)),
    ("argument_replaced_unused", argument_replaced_unused, (P(0.6, 1.7),)),
    ("argument_no_keywords", argument_no_keywords, (P(-0.2, 0.9),)),
    ("chained_in_a_loop", chained_in_a_loop, (P(0.8, 0.9),)),
    ("defaults", defaults, (Q(0.3, -0.7),)),
    ("typed_arrays", typed_arrays, (Typed(np.array([0.3, -0.5, 1.1]), 0.8),)),
    ("value_from_argument", value_from_argument, (P(0.5, 2.0), 1.3)),
]


@pytest.mark.parametrize("name, f, args", ROWS, ids=[r[0] for r in ROWS])
def test_replace_against_finite_differences(name, f, args):
    check_grads(f, *args)


def test_issue_example_value():
    assert gradient(issue_example, 0.7) == pytest.approx((1 + 4 * 0.7,))


def test_replaced_field_gets_nothing_from_the_new_tuple():
    g, = gradient(lambda p: p._replace(x=3.0).x + p._replace(y=5.0).x, P(0.6, 1.7))
    assert g["x"] == pytest.approx(1.0) and g.get("y") is None


def test_replace_result_returned():
    (y, back) = pullback(lambda a, p: p._replace(y=a * p.x), 2.0, P(0.5, 9.0))
    assert y == P(0.5, 1.0)
    da, dp = back(P(10.0, 100.0))  # dy.y = 100 reaches a (times p.x) and p.x (times a)
    assert da == pytest.approx(50.0)
    assert dp["x"] == pytest.approx(10.0 + 200.0) and dp.get("y") is None


@pytest.mark.dual_route  # the twins refuse a bound method called with keywords (any class's, not only _replace)
def test_second_order():
    g = gradient(lambda a: gradient(issue_example, a)[0], 0.7)
    assert g == pytest.approx((4.0,))


# Found by a probe of ordinary Python programs: each was silently wrong or crashed.
def _splat_read_again(x):
    p = P(x, 3.0)
    q = P(*p)  # (the star's items' cotangents met p.x's, keyed by field: a crash adding a tuple to a dict)
    return q.x * q.y + p.x


def _dict_keyword_replaces(d, x):
    e = dict(d, a=x)  # (d["a"] is dropped: it got the cotangent of e["a"] too)
    return e["a"] * 3.0 + e["b"]


def _dict_later_pair_replaces(x, y):
    e = dict([("a", x), ("a", y), ("b", x)])
    return e["a"] * 3.0 + e["b"]


@pytest.mark.parametrize("f, args", [(_splat_read_again, (0.5,)), (_dict_later_pair_replaces, (0.5, 0.25))],
                         ids=["namedtuple-splat", "dict-pairs"])
def test_constructors_found_by_the_probe(f, args):
    check_grads(f, *args)


def test_a_keyword_of_dict_replaces_the_mappings_entry():
    assert gradient(_dict_keyword_replaces, {"a": 0.7, "b": 1.3}, 0.4) == ({"a": None, "b": 1.0}, 3.0)


class _Meta(type):
    def __call__(cls, *args):
        obj = super().__call__(*args)
        obj.scale = 2.0  # (the metaclass post-processes every instance)
        return obj


class _Made(metaclass=_Meta):
    def __init__(self, x):
        self.x = x
        self.scale = 1.0


def test_a_class_whose_metaclass_makes_its_instances_is_refused():
    # (its `__init__` alone ran: value 0.7 and gradient 1.0 where they are 1.4 and 2.0)
    def f(x):
        m = _Made(x)
        return m.x * m.scale
    with pytest.raises(ZygoteError, match="its metaclass _Meta defines __call__"):
        gradient(f, 0.7)
    assert f(0.7) == 1.4 and gradient(lambda x: x * _Made(2.0).scale, 0.7) == (2.0,)  # (made from constants: runs)


@dataclasses.dataclass
class _Scaled:
    a: float
    scale: dataclasses.InitVar[float] = 1.0
    b: float = 2.0

    def __post_init__(self, scale):
        self.a = self.a * scale + self.b


@pytest.mark.parametrize("f", [lambda x: _Scaled(x, x * x, 5.0).a, lambda x: _Scaled(x, scale=3.0, b=x).a,
                               lambda x: _Scaled(2.0, x).a * _Scaled(x).a], ids=["positional", "keywords", "two"])
def test_a_dataclass_with_an_initvar(f):
    # (crashed: `__post_init___forward() missing 1 required positional argument: 'scale'`)
    check_grads(f, 0.7)


# --- a constructor that updates an argument besides the new object ---------------------------------------------------

class _Logs:
    def __init__(self, v, log):
        log.append(v * 2.0)


class _Root:
    def __init__(self):
        self.kids = []


class _Kid:
    def __init__(self, w, root):
        self.w = w
        root.kids.append(self)


class _Registered(_Kid):
    def __init__(self, w, root, scale):
        super().__init__(w * scale, root)


def _logged(a, b):
    log = [b]
    _Logs(a, log)
    return sum(log) * a


def _tree(a, b):
    root = _Root()
    _Kid(a, root)
    kid = _Kid(b, root)
    return root.kids[0].w * root.kids[1].w + kid.w


def _through_super(a, b):
    root = _Root()
    _Registered(a, root, b)
    return root.kids[0].w ** 2


@pytest.mark.parametrize("f", [_logged, _tree, _through_super], ids=lambda f: f.__name__)
def test_a_constructor_updating_an_argument_hands_its_gradient_on(f, mode):
    """`__init__` appending to a list it was given (`parent.children.append(self)`): the later reads of the list got
    None, silently, whether the call was a statement or an assignment."""
    check_grads(f, 0.7, 1.3)


@dataclasses.dataclass
class _WithHistory:
    w: float
    history: list = dataclasses.field(default_factory=list)

    def __post_init__(self):
        self.history.append(self.w * 2.0)


def test_a_dataclass_field_made_by_its_default_factory_reaches_post_init(mode):
    """`__post_init__` got the dataclass module's placeholder for the field: AttributeError."""
    assert gradient(lambda a: _WithHistory(a).history[0] * a, 1.5) == (6.0,)


# --- objects a library function converts: refused where a gradient would flow through the conversion -----------------
# (found by a probe of user numeric classes: complex(obj) crashed with an AttributeError in the backward, np.sin of a
# class overriding NumPy's ufuncs with a TypeError)

class _Cmpx:
    def __init__(self, re, im):
        self.re, self.im = re, im

    def __complex__(self):
        return complex(self.re, self.im)


class _Wrapped:
    def __init__(self, a):
        self.a = np.asarray(a)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        args = [i.a if isinstance(i, _Wrapped) else i for i in inputs]
        return _Wrapped(getattr(ufunc, method)(*args, **kwargs))


def test_complex_of_an_object_is_refused(mode):
    def f(x, y):
        z = _Cmpx(x, y)
        return abs(complex(z)) + z.re
    with pytest.raises(ZygoteError, match="an object of class _Cmpx reached a NumPy or builtin function"):
        gradient(f, 0.7, -1.3)


def test_a_class_overriding_numpys_ufuncs_is_refused_where_it_carries_a_gradient(mode):
    def f(x):
        return float(np.sum(np.sin(_Wrapped(x)).a))
    with pytest.raises(ZygoteError, match=r"_Wrapped, which overrides NumPy's functions \(__array_ufunc__\)"):
        gradient(f, np.array([0.3, -0.5]))

    def g(x):  # a constant one runs
        return np.sum(x * np.sin(_Wrapped(np.ones(2))).a)
    np.testing.assert_allclose(gradient(g, np.array([0.3, -0.5]))[0], np.sin(1.0))


@dataclasses.dataclass
class _Layer:
    w: np.ndarray
    b: float
    history: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class _Model:
    layers: list
    scale: float
    tag: str = "m"


def _model(x):
    return _Model([_Layer(x * 1.0, x[0] * 2.0), _Layer(np.sin(x), 0.5, [x[1]])], x[2] ** 2)


@pytest.mark.parametrize("f", [
    lambda x: np.sum(dataclasses.asdict(_Layer(x * 2.0, x[1]))["w"] ** 2) * dataclasses.asdict(_Layer(x, x[0]))["b"],
    lambda x: sum(np.sum(d["w"] * d["b"]) for d in dataclasses.asdict(_model(x))["layers"])
    * dataclasses.asdict(_model(x))["scale"],
    lambda x: np.sum(dataclasses.astuple(_Layer(x ** 2, x[2]))[0]) * dataclasses.astuple(_Layer(x, x[1]))[1],
    lambda x: dataclasses.asdict(_model(x))["layers"][1]["history"][0] * np.sum(x),
], ids=["asdict", "nested", "astuple", "a list field"])
def test_asdict_and_astuple(f, mode):
    """dataclasses.asdict of a dataclass with an empty `default_factory=list` field was refused (its source was
    differentiated, and the empty list taken for an argument updated in place)."""
    from plain_checks import agree_at
    agree_at(f, np.array([0.3, -0.7, 1.1]))


class _Base:
    def __init__(self, p):
        self.p = p


class _Child(_Base):
    def __init__(self, p, c):
        super().__init__(p)  # (the object then holds the argument itself)
        self.c = c


def _made_by_a_subclass(p, c):
    m = _Child(p, c)
    return np.sum(m.p ** 3) * m.c


def test_hessian_of_a_subclass_whose_base_keeps_the_argument(mode):
    """hessian's dual array, kept as a field by the base's __init__, was taken for an object the new instance holds
    the items of, and logged as updated: "its __init__ updates an argument in place" (false)."""
    p = np.array([0.5, 0.2])
    assert np.allclose(hessian(_made_by_a_subclass, p, 0.3, argnums=0), np.diag(6 * 0.3 * p))
    hv_p, hv_c = hvp(_made_by_a_subclass, (p, 0.3), (np.array([1.0, 0.0]), 0.0))
    assert np.allclose(hv_p, [6 * 0.3 * p[0], 0.0]) and np.isclose(hv_c, 3 * p[0] ** 2)
