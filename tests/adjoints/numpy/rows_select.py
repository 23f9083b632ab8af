"""Rows for `zygotepy/adjoints/numpy/select.py`: np.select, np.choose and ndarray.choose (conditions and indices are
constants; the choices, and select's positional default, are perturbed)."""
import numpy as np
from table_base import ANY, Seq, row

CONDS = [np.array([True, False, True, False]), np.array([True, True, False, False])]
INDEX = np.array([0, 2, 1, 2])

SELECT_ROWS = [
    row(np.select, CONDS, Seq(ANY), shapes=[(((4,), (4,)),), ((None, (4,)),)]),
    row(np.select, CONDS, Seq(ANY), ANY, shapes=[(((4,), (4,)), None), (((4,), ()), (4,))],
        label="np.select[default]"),
    row(np.choose, INDEX, Seq(ANY), shapes=[(((4,), (4,), (4,)),), (((4,), None, (1,)),)]),
    row(np.choose, np.array([0, 4, -1, 2]), Seq(ANY, tuple), shapes=[(((4,), (4,), (4,)),)], kw={"mode": "wrap"},
        label="np.choose[wrap]"),
    row(np.choose, np.array([0, 4, -1, 2]), Seq(ANY), shapes=[(((4,), (4,), (4,)),)], kw={"mode": "clip"},
        label="np.choose[clip]"),
    row(np.choose, INDEX, ANY, shapes=[((3, 4),)], label="np.choose[array of choices]"),
    row(np.ndarray.choose, INDEX, Seq(ANY), shapes=[(((4,), (4,), (4,)),)]),
]
