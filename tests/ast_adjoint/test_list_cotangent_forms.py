"""A list of lists read entry by entry (its cotangent: lists holding None) and given whole to an array function (its
cotangent from the array rule: an array, or a list of rows) meets in one sum (accumulate.acc), which adds them entry
by entry in the list's form: `np.array(L)` after `t = L[0][0]` raised a TypeError (float + None) in the backward.
Checked against central differences in float64."""
import os
import sys

import numpy as np
import pytest

from zygotepy import gradient

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from plain_checks import central  # noqa: E402


def entry_then_array(x):
    L = [[x, 1.0], [2.0, 3.0]]
    t = L[0][0]
    return np.sum(np.array(L) ** 2) + t


def row_then_array(x):
    L = [[x, 2.0], [3.0, x * x]]
    r = L[1]
    return np.sum(np.array(L)) + np.sum(np.array(r)) * r[1]


def entry_then_vstack(x):
    L = [[x, 2.0], [3.0, x * x]]
    t = L[1][1]
    return np.sum(np.vstack(L) ** 2) * t


def entry_then_concatenate(x):
    L = [[x, 2.0], [3.0, x * x]]
    t = L[0][0]
    return np.sum(np.sin(np.concatenate(L))) + t * t


def rows_dot(x):
    L = [[x, 2.0], [3.0, x * x]]
    t = L[1][1]
    return np.dot(L[0], L[1]) + t


def trace_times_entry(x):
    L = [[x, 2.0], [3.0, x * x]]
    t = L[1][1]
    return np.trace(np.array(L)) * t


def tuple_of_lists(x):
    T = ([x, 0.5], [x * 3.0, 1.5])
    t = T[1][0]
    return np.sum(np.asarray(T) ** 3) - t


def three_levels(x):
    L = [[[x, 1.0], [2.0, x]], [[0.5, x * x], [1.0, 2.0]]]
    t = L[0][1][1]
    return np.sum(np.array(L) * np.arange(8.0).reshape(2, 2, 2)) + np.sin(t)


def dp_table(x, a):
    """A recurrence over a list-of-lists table, reading earlier entries, then the table as an array."""
    L = [[0.0] * 3 for _ in range(3)]
    for i in range(3):
        for j in range(3):
            L[i][j] = (L[i - 1][j] if i else x[j]) * a + (L[i][j - 1] if j else 0.0)
    return np.sum(np.array(L) ** 2) + L[2][2]


def rows_appended(x):
    L = []
    for k in range(3):
        L.append([x[k], x[k] * x[(k + 1) % 3]])
    first = L[0][1]
    return np.sum(np.tanh(np.array(L))) * first


CASES = [(entry_then_array, (0.5,)), (row_then_array, (0.7,)), (entry_then_vstack, (0.4,)),
         (entry_then_concatenate, (1.1,)), (rows_dot, (0.6,)), (trace_times_entry, (0.9,)), (tuple_of_lists, (0.3,)),
         (three_levels, (0.8,)), (dp_table, (np.array([0.3, -0.5, 0.9]), 0.7)),
         (rows_appended, (np.array([0.2, -0.4, 0.6]),))]


@pytest.mark.parametrize("f, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_entries_read_beside_the_whole_list(f, args, mode):
    grads = gradient(f, *args)
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, central(f, args, k), rtol=1e-6, atol=1e-8)
