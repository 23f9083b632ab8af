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
