"""Derived adjoints of Python functions (zygotepy/ast_adjoint/derived.py): what a library function's own Python
that cannot be differentiated reports."""
import numpy as np
import pytest

from zygotepy import MissingAdjoint, ZygoteError, gradient


def _along_axis(x):
    return np.sum(np.apply_along_axis(np.cumsum, 0, x))  # the line the error names


def _masked_average(x):
    return np.ma.average(x, axis=0) * 2.0  # the line the error names


@pytest.mark.parametrize("f, name", [(_along_axis, "apply_along_axis"), (_masked_average, "average")])
def test_a_library_function_that_cannot_be_differentiated_is_named_at_the_users_line(f, name):
    """The error named NumPy's own lines (`_shape_base_impl.py:384: cannot differentiate try/except`, or the
    `_nanmedian` helper NumPy calls inside; np.nanmedian has a rule since, and np.ma.average's MaskedArray stands in
    for it), not the function the user called, nor where."""
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(MissingAdjoint, match=rf"test_derived.py:{line}: no adjoint rule for \S*\.{name} \(its Python "
                                             rf"source, which zygotepy read, cannot be differentiated: "):
        gradient(f, np.array([[1.5, 2.0], [3.0, 0.5]]))


def _decays_one_reads_the_other(p):
    p["enc"]["w"] *= 0.9
    return np.sum(p["dec"]["w"] ** 2)


def _doubles_the_dict_s(p, w):
    p["w"] *= 2.0
    return np.sum(w ** 3)


def _scales_one_reads_both(x, y):
    x *= 2.0
    return np.sum(x * y)


def _doubles_a_row(p, W):
    p["row"] *= 2.0
    return np.sum(W ** 2)


def test_an_array_two_places_of_the_arguments_reach_updated_in_place_is_refused(mode):
    """Tied weights (`{"enc": {"w": W}, "dec": {"w": W}}`), an array in a dict and as an argument, a view of another
    argument: updated in place through one place and read through the other, the gradient missed the update (1.8 W
    for 1.62 W; None and 14 for 26). Refused at the entry point; the same arrays not shared are differentiated."""
    W = np.array([0.7, -1.3])
    with pytest.raises(ZygoteError, match="both reach"):
        gradient(_decays_one_reads_the_other, {"enc": {"w": W}, "dec": {"w": W}})
    for _ in range(2):  # (the second call takes the entry point's shortcut past J_entry: checked there too)
        with pytest.raises(ZygoteError, match="both reach"):
            gradient(_doubles_the_dict_s, {"w": W}, W)
        with pytest.raises(ZygoteError, match="both reach"):
            gradient(_scales_one_reads_both, W, W)
    M = np.array([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ZygoteError, match="both reach"):
        gradient(_doubles_a_row, {"row": M[0]}, M)
    (g,) = gradient(_decays_one_reads_the_other, {"enc": {"w": W.copy()}, "dec": {"w": W.copy()}})
    np.testing.assert_allclose(g["dec"]["w"], 2 * W)


def _scale_first(buf, holder):
    buf[0] *= 2.0


def _helper_updating_what_another_argument_holds(x):
    a = x * 1.0
    _scale_first(a, {"h": a})
    return np.sum(a * x)


def _sgd_step(p, g, state):
    p -= 0.1 * g
    state["steps"] = state.get("steps", 0) + 1


def _step_with_state_holding_the_parameter(x):
    p = x * 1.0
    state = {"params": p}
    _sgd_step(p, x ** 2, state)
    return np.sum(state["params"] * p)


@pytest.mark.parametrize("f", [_helper_updating_what_another_argument_holds, _step_with_state_holding_the_parameter],
                         ids=lambda f: f.__name__)
def test_a_helper_updating_an_array_another_argument_holds_is_refused(mode, f):
    """`helper(a, {"h": a})` updating `a`: the helper's code takes its two arguments as separate objects (gradient
    0.9 for 1.2); only `h(x, x)` and views were refused."""
    with pytest.raises(ZygoteError, match="both reach"):
        gradient(f, np.array([0.3, -0.5, 1.2]))


class _CallableLayer:
    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return x * self.w


class _Optimizer:
    def __init__(self, params):
        self.params = params

    def step(self, grads):
        for p, g in zip(self.params, grads):
            p -= 0.1 * g


def _train_step(opt, model, x):
    opt.step([model(x)])
    return np.sum(model(x) ** 2)


def _model_and_optimizer_sharing_the_weights(w):
    model = _CallableLayer(w * 1.0)
    opt = _Optimizer([model.w])
    return _train_step(opt, model, np.array([0.5, 1.5]))


def test_a_helper_given_a_callable_model_and_an_optimizer_holding_its_weights_is_refused(mode):
    """A model with `__call__` was left out of the walk of where the arguments' arrays sit (taken for code): the step
    through the optimizer's list, read through the model, gave 0.43 for 0.41, silently."""
    with pytest.raises(ZygoteError, match=r"_train_step .* argument 0\['params'\]\[0\] and argument 1\['w'\] both reach"):
        gradient(_model_and_optimizer_sharing_the_weights, np.array([0.9, -0.7]))
