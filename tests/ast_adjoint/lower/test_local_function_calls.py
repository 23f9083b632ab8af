"""A call of a def or lambda made in the function itself is a function's call, not a callable object's whose
`__call__` may update it, even where a class of the module has such a `__call__` (lower/calls.py): taken as one, it
sent the function's names through links, one of which found the argument's object before its update in place in
another arm of the branch (`x *= 0.5`), so the gradient skipped that update: twice finite differences, silently, in
both settings (the program generator's long run, seed 501, program 4847)."""
import copy

import numpy as np

from plain_checks import central
from zygotepy import gradient


class Decoy:  # (never called: its `__call__` reading an attribute makes the module's calls "may update")
    def __call__(self, v):
        return self.apply(v)


def branch_with_a_local_function(a, x, b):
    f0 = 0.5
    if b > 0.3:
        w1 = 0.5  # noqa: F841
    elif np.mean(x) > 0.8:
        if a > 0.8:
            b = 0.5
        else:
            def wr6(k, t):
                return t * (b * f0)
            wq7 = wr6(2, x)  # noqa: F841
    else:
        x *= 0.5
    b += 0.5
    a += 0.5 * (x[4] / (1.5 + (x[5] - a)))
    return 1.0 * a


def test_the_update_in_the_other_arm_reaches_the_argument(mode):
    args = (-0.7015956782476035, np.array([0.47088, 0.84444, -0.16498, -0.11337, -0.17783, -0.95430]), -0.046149)
    got = gradient(branch_with_a_local_function, *copy.deepcopy(args))[1]
    want = central(lambda x: branch_with_a_local_function(args[0], x.copy(), args[2]), (args[1],), 0)
    assert np.allclose(got, want, atol=1e-6), (got, want)
