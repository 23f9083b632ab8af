"""Indexing (adjoints/structures/indexing.py): fields of structured (record) arrays are refused, naming the line (they
crashed in the backward)."""
import numpy as np
import pytest

from zygotepy import ZygoteError, gradient


def writes_a_field(x):
    r = np.zeros(3, dtype=[("a", "f8"), ("b", "f8")])
    r["a"] = x
    return np.sum(r["a"] ** 2)


def reads_fields(r):
    return np.sum(r["a"] * r["b"])


def test_structured_arrays_are_refused():
    with pytest.raises(ZygoteError, match=r"test_indexing.py:\d+: zygotepy does not differentiate structured"):
        gradient(writes_a_field, np.array([1.0, 2.0, 3.0]))
    rec = np.zeros(3, dtype=[("a", "f8"), ("b", "f8")])
    rec["a"], rec["b"] = [1.0, 2.0, 3.0], [2.0, 4.0, 6.0]
    with pytest.raises(ZygoteError, match=r"test_indexing.py:\d+: zygotepy does not differentiate structured"):
        gradient(reads_fields, rec)


def test_a_torch_tensor_indexed_with_index_tensors_or_lists_matches_torch(mode):
    """`x[torch.tensor([0, 2, 2])]`, `x[torch.argmax(x)]`, `x[[0, 2]]` on a tensor were refused ("no namespace-generic
    gradient"): torch's scatter-add (`index_put_(..., accumulate=True)`) adds repeated positions up."""
    torch = pytest.importorskip("torch")
    x = torch.tensor([1.0, -2.0, 4.0, 0.5], dtype=torch.float64)
    for f in (lambda x: torch.sum(x[torch.tensor([0, 2, 2])] ** 2), lambda x: x[torch.argmax(x)] * 3,
              lambda x: torch.sum(x[[0, 2]] * x[[1, 1]]), lambda x: torch.sum(x[x > 0] ** 2)):
        g, = gradient(f, x)
        reference = x.clone().requires_grad_(True)
        f(reference).backward()
        assert torch.allclose(g, reference.grad)


# --- tuples inside an index, and masks beside repeated positions -------------------------------------------------------
# NumPy reads `x[(0, 0), (1, 1)]` as `x[[0, 0], [1, 1]]`: a fancy index, whose repeated positions add up when read and
# keep the last value written. A tuple there was taken for basic indexing (a read's cotangents at a repeated position
# overwrote each other; a write gave every value written there a gradient), and so was a mask beside a repeated integer
# index (`y[mask, [1, 1]] = v`). Found by a probe of indexing; checked against central differences in float64.

_X = np.array([[0.3, -1.2, 0.8, 0.5], [1.1, 0.4, -0.7, 2.0], [-0.2, 0.9, 1.5, -1.0]])
_V = np.array([2.0, 3.0])


def _read_tuples(x, v):
    rows, cols = zip((0, 1), (0, 1), (1, 2))
    return np.sum(x[rows, cols] * np.array([1.0, 2.0, 3.0])) + np.sum(v)


def _read_tuple_columns(x, v):
    return np.sum(x[:, (1, 1)] ** 2) * v[0]


def _read_one_tuple_part(x, v):
    return np.sum(x[(0, 0, 2),] * v[1])


def _write_tuples(x, v):
    y = x.copy()
    y[(0, 0), (1, 1)] = v
    return np.sum(y ** 2)


def _write_one_tuple_part(x, v):
    y = x.copy()
    y[0, (2, 2)] = v * x[1, 1]
    return np.sum(y ** 2)


def _add_at_tuples(x, v):
    y = x.copy()
    y[(0, 0), (1, 1)] += v
    return np.sum(y ** 2)


def _write_mask_and_repeats(x, v):
    y = x.copy()
    y[np.array([True, False, False]), [1, 1]] = v
    return np.sum(y ** 2)


def _scale_mask_and_repeats(x, v):
    y = x.copy()
    y[[False, True, False], [3, 3]] *= v
    return np.sum(y ** 3)


def _write_repeats_and_mask(x, v):
    y = x.copy()
    y[[2, 2], np.array([False, True, False, False])] = v
    return np.sum(np.sin(y))


@pytest.mark.parametrize("f", [_read_tuples, _read_tuple_columns, _read_one_tuple_part, _write_tuples,
                               _write_one_tuple_part, _add_at_tuples, _write_mask_and_repeats, _scale_mask_and_repeats,
                               _write_repeats_and_mask], ids=lambda f: f.__name__.strip("_"))
def test_tuples_in_an_index_and_masks_beside_repeats(f, mode):
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from plain_checks import central
    from zygotepy import value_and_gradient

    args = (_X.copy(), _V.copy())
    value, grads = value_and_gradient(f, *args)
    assert value == pytest.approx(f(*args), rel=1e-13)
    for k in range(2):
        np.testing.assert_allclose(grads[k], central(f, args, k), rtol=1e-6, atol=1e-8)


def test_hessian_of_a_read_through_tuples():
    from zygotepy import hessian

    def f(x):
        return np.sum(x[(0, 0), (1, 1)] ** 3)

    h = hessian(f, _X.copy())
    expected = np.zeros(_X.shape * 2)
    expected[0, 1, 0, 1] = 2 * 6 * _X[0, 1]
    np.testing.assert_allclose(h, expected)


def _entry_times_a_wider_float(x, w, xp):
    return w * x[0] + xp.sum(x[1:] * w)


def test_an_entry_of_a_float32_array_times_a_float64_one_on_the_array_api(mode):
    """The entry's cotangent is float64; the array API stores no other dtype into x's float32 zeros (TypeError)."""
    xp = pytest.importorskip("array_api_strict")
    x = xp.asarray([1.0, 2.0, 3.0], dtype=xp.float32)
    dx, dw, _ = gradient(_entry_times_a_wider_float, x, xp.asarray(2.0, dtype=xp.float64), xp)
    assert dx.dtype == xp.float32 and dw.dtype == xp.float64
    np.testing.assert_allclose(np.asarray(dx), [2.0, 2.0, 2.0])
    assert float(dw) == pytest.approx(6.0)
