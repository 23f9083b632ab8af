"""Derived adjoints of Python functions (zygotepy/ast_adjoint/derived.py): what a library function's own Python
that cannot be differentiated reports."""
import numpy as np
import pytest

from zygotepy import MissingAdjoint, gradient


def _along_axis(x):
    return np.sum(np.apply_along_axis(np.cumsum, 0, x))  # the line the error names


def _nan_median(x):
    return np.nanmedian(x) * 2.0  # the line the error names


@pytest.mark.parametrize("f, name", [(_along_axis, "apply_along_axis"), (_nan_median, "nanmedian")])
def test_a_library_function_that_cannot_be_differentiated_is_named_at_the_users_line(f, name):
    """The error named NumPy's own lines (`_shape_base_impl.py:384: cannot differentiate try/except`, or the
    `_nanmedian` helper NumPy calls inside), not the function the user called, nor where."""
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(MissingAdjoint, match=rf"test_derived.py:{line}: no adjoint rule for \S*\.{name} \(its Python "
                                             rf"source, which zygotepy read, cannot be differentiated: "):
        gradient(f, np.array([[1.5, 2.0], [3.0, 0.5]]))
