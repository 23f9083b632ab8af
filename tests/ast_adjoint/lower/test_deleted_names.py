"""`del name` unbinds the name: a later read raises Python's UnboundLocalError, as does `del` of a name some path left
unbound. The read got the value from before the `del` (lower/updates.py popped the name from the environment, and the
read fell back to the parameter or the first version). A name deleted in one arm and read after it raises on that
path only; assigned again, it is read as usual."""
import os
import sys

import pytest

from zygotepy import gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402

MESSAGE = "local variable 'y'"


def read_after_del(x):
    y = x * 2.0
    del y
    return y * 3.0  # noqa: F821 (Python raises here)


def read_after_del_in_one_arm(x, c):
    y = x * 2.0
    if c:
        del y
    return y * 3.0


def deleted_twice(x, c):
    y = x * 2.0
    if c:
        del y
    del y
    return x


def assigned_again_after_del(x):
    y = x * 2.0
    del y
    y = x * 5.0
    return y * 3.0


def deleted_in_a_loop_and_assigned_first(x):
    tot = 0.0
    for _ in range(3):
        y = x * 2.0
        tot = tot + y
        del y
    return tot


def test_a_read_after_del_raises(mode):
    with pytest.raises(UnboundLocalError, match=MESSAGE):
        gradient(read_after_del, 1.5)
    with pytest.raises(UnboundLocalError, match=MESSAGE):
        gradient(read_after_del_in_one_arm, 1.5, True)
    with pytest.raises(UnboundLocalError, match=MESSAGE):
        gradient(deleted_twice, 1.5, True)


@pytest.mark.parametrize("f, args", [(read_after_del_in_one_arm, (1.5, False)), (deleted_twice, (1.5, False)),
                                     (assigned_again_after_del, (1.5,)), (deleted_in_a_loop_and_assigned_first, (1.5,))],
                         ids=["the_arm_not_taken", "deleted_once", "assigned_again", "in_a_loop"])
def test_paths_that_keep_the_name_bound(f, args, mode):
    want = central(lambda x: f(x, *args[1:]), args[:1], 0)
    assert gradient(f, *args)[0] == pytest.approx(want, rel=1e-6)
