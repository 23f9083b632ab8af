"""Containers made by augmented concatenation (`hist += [u]`, `hist += (u,)`, `d |= {"k": u}`) or by `d | {...}` hold
the arrays themselves, as `append` does: an update of one in place after it (`u *= s`, an SGD step through the
container) reaches the container, and back. They were taken for snapshots: the gradient of `s` came back None, or
parts of it were lost (a heat loop recording its states). Checked against one plain call and central differences."""
import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central, line_of  # noqa: E402


def list_extended_in_place(u, s):
    hist = []
    hist += [u]
    u *= s
    return np.sum(hist[0])


def tuple_added_to_a_list(u, s):
    hist = []
    hist += (u,)
    u *= s
    return np.sum(hist[0] * hist[0])


def dict_merged_in_place(u, s):
    d = {}
    d |= {"k": u}
    u *= s
    return np.sum(d["k"]) * s


def dict_with_entries_merged_in_place(u, s):
    d = {"a": 1.0}
    d |= {"k": u}
    u *= s
    return np.sum(d["k"]) * d["a"]


def dict_merged_into_a_new_one(w, s):
    params = {} | {"w": w}
    for k in params:
        params[k] -= s * params[k] ** 3
    return np.sum(w * w)


def sgd_through_a_list_extended_in_place(w, s):
    b = w * 0.5
    params = []
    params += [w, b]
    for p in params:
        p -= s * p ** 3
    return np.sum(w * w) + np.sum(b)


def heat_loop_recording_its_states(u, s):
    hist = []
    for _ in range(3):
        u[1:-1] += s * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        hist += [u]
        u = u * 1.0
    return sum(np.sum(h * h) for h in hist)


@pytest.mark.parametrize("f", [list_extended_in_place, tuple_added_to_a_list, dict_merged_in_place,
                               dict_with_entries_merged_in_place, dict_merged_into_a_new_one, sgd_through_a_list_extended_in_place,
                               heat_loop_recording_its_states], ids=lambda f: f.__name__)
def test_a_container_made_by_concatenation_holds_the_arrays_themselves(f, mode):
    u, s = np.array([0.3, -0.5, 0.8, 0.2]), 0.3
    plain = u.copy()
    want = f(plain, s)
    given = u.copy()
    value, (du, ds) = value_and_gradient(f, given, s)
    assert value == pytest.approx(want, rel=1e-12) and np.array_equal(given, plain)
    np.testing.assert_allclose(du, central(lambda *a: f(a[0].copy(), a[1]), (u, s), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ds, central(lambda *a: f(a[0].copy(), a[1]), (u, s), 1), rtol=1e-6, atol=1e-8)


def written_through_a_writeable_window(u, s):
    w = np.lib.stride_tricks.sliding_window_view(u, 2, writeable=True)
    w[1, 0] = s
    return np.sum(u * u)


def test_a_writeable_sliding_window_is_refused(mode):
    """A write through it changed `u` unseen: d/du1 was 2.8 for 0, d/ds 0 for 2.8."""
    line = line_of(written_through_a_writeable_window, "sliding_window_view(")
    with pytest.raises(ZygoteError, match=rf"test_concat_aliases\.py:{line}: .*writeable sliding_window_view"):
        value_and_gradient(written_through_a_writeable_window, np.array([0.3, -0.5, 0.8]), 0.7)
