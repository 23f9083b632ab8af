"""Stores into another library's arrays (zygotepy/adjoints/mutation/stores.py `_set_foreign`) at repeated integer
indices: torch and the array API's libraries keep the last write to each position, as NumPy does, so only that write's
value gets the position's cotangent (each write got it: `y[idx] += 1.0` with `idx = [0, 0]` gave 8 for 4). Gradients
against central differences in float64; skipped where torch is not installed."""
import numpy as np
import pytest

from zygotepy import gradient


def _added_at_a_repeated_index(x, lib):
    y = lib.clone(x)
    y[lib.index([0, 0])] += 1.0
    return lib.total(y ** 2)


def _scaled_at_repeated_indices(x, lib):
    y = lib.clone(x)
    y[lib.index([0, 0, 1])] *= x[2]
    return lib.total(y ** 2)


def _written_from_its_own_entries(x, lib):
    y = lib.clone(x)
    y[lib.index([1, 1])] = y[lib.index([1, 1])] * x[0] + lib.index([0.0, 2.0], float)
    return lib.total(y ** 3)


def _rows_at_repeated_indices(x, lib):
    y = lib.reshape(lib.clone(x), (2, 2))
    y[lib.index([1, 1]), 1] += x[0]
    return lib.total(y * y)


class _Torch:
    def __init__(self):
        self.torch = pytest.importorskip("torch")

    def array(self, v):
        return self.torch.tensor(v, dtype=self.torch.float64)

    def index(self, v, kind=int):
        return self.torch.tensor(v, dtype=self.torch.int64 if kind is int else self.torch.float64)

    def clone(self, x):
        return x.clone()

    def reshape(self, x, shape):
        return x.reshape(shape)

    def total(self, y):
        return y.sum()

    def numpy(self, g):
        return g.numpy()


@pytest.mark.parametrize("lib", [_Torch], ids=["torch"])  # (the array API has no integer-array stores)
@pytest.mark.parametrize("f", [_added_at_a_repeated_index, _scaled_at_repeated_indices, _written_from_its_own_entries,
                               _rows_at_repeated_indices], ids=lambda f: f.__name__)
def test_repeated_indices_keep_the_last_write(f, lib, mode):
    lib = lib()
    x0 = np.array([1.0, 2.0, 0.7, -0.4])
    h = 1e-6
    want = [(float(f(lib.array(x0 + h * e), lib)) - float(f(lib.array(x0 - h * e), lib))) / (2 * h) for e in np.eye(4)]
    got = gradient(f, lib.array(x0), lib)[0]
    np.testing.assert_allclose(lib.numpy(got), want, rtol=1e-6, atol=1e-8)
