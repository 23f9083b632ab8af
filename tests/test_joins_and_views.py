"""Objects chosen by a join (if / else, `a if c else b`, `a or b`) and arrays that share memory however they were made
(views held in containers, views of views, `.T`, `reshape`, `np.squeeze(x[None])`), updated in place: each gradient
agrees with central finite differences in float64, the value with one plain call, and the caller's arrays end as one
plain call leaves them. Every case runs both ways through its branch."""
import inspect

import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, value_and_gradient

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plain_checks import agree_at  # noqa: E402

POS = np.array([0.3, -1.2, 2.4, 0.7])
NEG = np.array([-0.3, 1.1, 2.4, -0.7])


def agree(f, *inputs):
    for x in inputs or (POS, NEG):
        agree_at(f, x)


# --- joins ----------------------------------------------------------------------------------------------------------

def j_fresh_arms(x):
    y = np.zeros(4) if x[0] > 0 else np.ones(4)
    y[0] = x[1]
    return np.sum(y * x)


def j_two_objects(x):
    a, b = x * 2.0, x * 3.0
    y = a if x[0] > 0 else b
    y[1] = x[2]
    return np.sum(a * x) + np.sum(b * b)


def j_argument_or_copy_setitem(x):
    if x[0] > 0:
        y = x
    else:
        y = x.copy()
    y[2] = 1.5
    return np.sum(x * x) + np.sum(y)


def j_arm_updated_after_join(x):
    a = x.copy()
    y = a if x[0] > 0 else a * 2.0
    a[3] = x[0] ** 2
    return np.sum(y * x)


def j_views_imul(x):
    a = x * 1.0
    if x[0] > 0:
        v = a[1:]
    else:
        v = a[::2]
    v *= x[3]
    return np.sum(a * x)


def j_number_arms(x):
    y = x[0] if x[0] > 0 else 2.0
    y *= 3.0
    return y * x[1]


def j_or_of_lists(x):
    a = [x[0], x[1]]
    b = [x[2]]
    lst = a if x[0] > 0 else b
    lst.append(x[3] * 2.0)
    return sum(a) * x[0] + sum(b) ** 2


def j_join_read_only(x):
    a = x.copy()
    y = a if x[0] > 0 else x
    s = np.sum(y * y)
    a[0] = 2.0
    return s + np.sum(a * x)


def j_nested_ifexp_iadd(x):
    a, b, c = x.copy(), x * 2.0, x * 3.0
    y = a if x[0] > 0 else (b if x[1] > 0 else c)
    y += x
    return np.sum(a * b * c)


JOINS = [j_fresh_arms, j_two_objects, j_argument_or_copy_setitem, j_arm_updated_after_join, j_views_imul,
         j_number_arms, j_or_of_lists, j_join_read_only, j_nested_ifexp_iadd]


@pytest.mark.parametrize("f", JOINS, ids=lambda f: f.__name__)
def test_join_then_update_in_place(f):
    agree(f)


# --- joins with helpers, loops, containers and objects ---------------------------------------------------------------

def fill(dst, src):
    dst[:] = src * 2

class P:
    def __init__(self, w):
        self.w = w

def m_loop_join(x):
    a, b = x * 1.0, x * 2.0
    for i in range(3):
        y = a if x[i] > 0 else b
        y[i + 1] = x[i] * y[i]
    return np.sum(a * b)

def m_join_helper(x):
    a, b = np.zeros(4), np.ones(4)
    y = a if x[0] > 0 else b
    fill(y, x)
    return np.sum(a * x) + np.sum(b * x)

def m_join_list_of_arrays(x):
    a = [x * 1.0, x * 2.0]
    b = [x * 3.0]
    y = a if x[0] > 0 else b
    y[0][1] = x[3] ** 2
    return np.sum(a[0] * x) + np.sum(b[0] * x)

def m_views_of_argument(x):
    v = x[1:] if x[0] > 0 else x[:2]
    v *= 2.0
    return np.sum(x * x)

def m_objects(x):
    p, q = P(x * 1.0), P(x * 2.0)
    o = p if x[0] > 0 else q
    o.w[2] = x[1]
    return np.sum(p.w * x) + np.sum(q.w * x)

def m_attr_store(x):
    p, q = P(x * 1.0), P(x * 2.0)
    o = p if x[0] > 0 else q
    o.w = x ** 2
    return np.sum(p.w * x) + np.sum(q.w * x)

def m_join_then_arm_view_write(x):
    a = x * 1.0
    y = a[::-1] if x[0] > 0 else a
    a[1:3] = x[0]
    return np.sum(y * np.arange(4))

def m_join_if_stmt_imul_list(x):
    a = [x[0], x[1]]
    if x[0] > 0:
        b = a
    else:
        b = [x[2]]
    b *= 2
    return sum(a) * x[3] + len(b) * x[1]

def m_join_twice(x):
    a = x * 1.0
    y = a if x[0] > 0 else x * 2.0
    z = y if x[1] > 0 else a
    z[0] = x[2] ** 2
    return np.sum(a * x) + np.sum(y * x)

def m_broadcast_read(x):
    a = x * 1.0
    b = np.broadcast_to(a, (2, 4))
    a[0] = x[1] ** 2
    return np.sum(b * x)

def m_diag_view(x):
    A = np.outer(x, x)
    d = np.diagonal(A)
    A[1, 1] = 3.0
    return np.sum(d * x)

def m_swap_rows(x):
    A = np.outer(x, x)
    A[0], A[1] = A[1], A[0].copy()
    return np.sum(A * np.arange(16).reshape(4, 4))


MORE = [m_loop_join, m_join_helper, m_join_list_of_arrays, m_views_of_argument, m_objects, m_attr_store,
        m_join_then_arm_view_write, m_join_if_stmt_imul_list, m_join_twice, m_broadcast_read, m_diag_view,
        m_swap_rows]


@pytest.mark.parametrize("f", MORE, ids=lambda f: f.__name__)
def test_join_or_view_in_context(f):
    agree(f, POS, NEG, np.array([0.5, 0.6, -2.4, 0.7]))


# --- arrays sharing memory -----------------------------------------------------------------------------------------

def v_view_of_transpose_of_reshape(x):
    y = x.copy()
    z = y.reshape(2, 2).T[1]
    z[0] = x[0] * 3.0
    return np.sum(y * x)


def v_view_in_dict(x):
    y = x * 1.0
    d = {"tail": y[2:]}
    d["tail"][1] = x[0] ** 2
    return np.sum(y * x)


def v_strided_views_interleaved(x):
    y = x.copy()
    evens, odds = y[::2], y[1::2]
    evens *= 2.0
    return np.sum(odds * x[:2]) + np.sum(y * x)


def v_update_through_parent_read_view(x):
    y = x.copy()
    z = y.reshape(2, 2).T
    y[1] = x[3] ** 2
    return np.sum(z * np.arange(4).reshape(2, 2))


def v_ufunc_out_where(x):
    y = x * 2.0
    np.multiply(y, x, out=y, where=np.array([True, False, True, False]))
    return np.sum(y * x)


def v_method_out(x):
    y = x * 1.0
    y.clip(-1.0, 1.0, out=y)
    return np.sum(y * x)


def v_int_destination(x):
    y = np.zeros(4, dtype=int)
    y[1:3] = x[1:3] * 3
    return np.sum(y * x) + y[0]


VIEWS = [v_view_of_transpose_of_reshape, v_view_in_dict, v_strided_views_interleaved,
         v_update_through_parent_read_view, v_ufunc_out_where, v_method_out, v_int_destination]


@pytest.mark.parametrize("f", VIEWS, ids=lambda f: f.__name__)
def test_update_through_shared_memory(f):
    agree(f)


# --- refused: a view whose elements do not line up with its array's ----------------------------------------------

def r_real_of_complex(x):
    z = x.astype(complex)
    r = z.real
    r[0] = x[1] ** 2  # update
    return np.sum(np.abs(z) ** 2)


def test_write_through_real_of_complex_raises_naming_the_line():
    lines, start = inspect.getsourcelines(r_real_of_complex)
    line = start + next(k for k, text in enumerate(lines) if "# update" in text)
    with pytest.raises(ZygoteError, match="writes through a view whose elements do not line up") as info:
        value_and_gradient(r_real_of_complex, POS.copy())
    assert f"test_joins_and_views.py, line {line}" in "\n".join(getattr(info.value, "__notes__", []))
