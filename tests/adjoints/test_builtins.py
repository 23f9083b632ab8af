"""Rules of Python's builtins and math functions (adjoints/builtins.py): `complex(x)` of one argument, `math.prod`
and `math.dist`, checked against one plain call and central finite differences (tests/plain_checks.py)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from plain_checks import agree_at  # noqa: E402


X = np.array([0.3, -1.2, 2.4, 0.7])


def agree(f, x=X):
    agree_at(f, x)


def test_complex_of_one_argument():
    """complex(x) of one differentiated float raised a ZygoteError about its own rule (two cotangents)."""
    agree(lambda x: complex(x[0]).real * 2 + abs(complex(x[1])) + (complex(x[2], x[3]) * 1j).real)


def test_math_prod_and_dist():
    """math.prod and math.dist raised MissingAdjoint; a zero among prod's items must not divide anything."""
    import math
    agree(lambda x: math.prod([x[0], x[1], x[2]]) + math.prod([x[0], x[1] * 0.0, x[2]], start=x[3])
          + math.dist([x[0], x[1]], [x[2], x[3]]) + math.dist([x[0]], [x[0]]))
