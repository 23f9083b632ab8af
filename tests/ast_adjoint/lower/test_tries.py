"""`try`/`except` (ast_adjoint/lower/tries.py): the body runs as a function of its own through `runtime.attempt`;
gradients on both paths against central differences, with every optimisation on and off, and the refusals of what a
failed body would leave otherwise than Python does."""
import math
import os
import sys

import numpy as np
import pytest

from zygotepy import UnsupportedSyntax, derivative, gradient, hessian, show_adjoint, value_and_gradient

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from plain_checks import agree_at, central  # noqa: E402


def cholesky_with_jitter(k):
    try:
        low = np.linalg.cholesky(k)
    except np.linalg.LinAlgError:
        low = np.linalg.cholesky(k + 0.1 * np.eye(k.shape[0]))
    return np.sum(low ** 3)


def safe_ratio(a, b):
    try:
        return a / b
    except ZeroDivisionError:
        return a * 0.5


def skip_negative(x):
    total = 0.0
    for v in x:
        try:
            if v < 0:
                raise ValueError("negative")
            total = total + np.sqrt(v) * v
        except ValueError:
            continue
    return total


def with_else(x):
    try:
        y = np.log(x)
        z = y * 2.0
    except ValueError as e:
        raise RuntimeError("no") from e
    else:
        z = z + x
    return np.sum(z * x)


def nested(x, k):
    try:
        try:
            y = x[k]
        except IndexError:
            y = x[-1] * 2.0
        r = y ** 2
    except TypeError:
        r = 0.0
    return r


def returns_inside(x):
    s = x ** 2
    try:
        if s > 1.0:
            return s * 3.0
        t = s + 1.0
    except ValueError:
        return 0.0
    return t * x


def closure_inside(x, w):
    try:
        g = lambda t: np.sum(np.tanh(t * w))  # noqa: E731
        r = g(x) + np.sum(x)
    except ValueError:
        r = 0.0
    return r


def validated(x, symbol="x"):
    try:
        if not symbol.isidentifier():
            raise ValueError("not a name")
    except AttributeError:
        raise TypeError("the symbol must be a string")
    return np.sum(np.sin(x) * x)


def comprehension_variables(x, k):
    total = 0.0
    for _ in range(k):
        total = total + x[0]
    try:
        halves = {k: u * 0.5 for k, u in enumerate(x)}  # (`k` is the comprehension's own: the parameter is untouched)
        total = total + sum(halves.values()) * x[1]
    except ValueError:
        total = total * 0.5
    return total * k


WELL = np.array([[2.0, 0.5], [0.5, 1.0]])
INDEFINITE = np.array([[1.0, 1.05], [1.05, 1.0]])  # eigenvalue -0.05: cholesky fails, and succeeds with the jitter
CASES = {
    "cholesky, body": (cholesky_with_jitter, (WELL,)),
    "cholesky, handler": (cholesky_with_jitter, (INDEFINITE,)),
    "ratio, body": (safe_ratio, (3.0, 2.0)),
    "loop with continue": (skip_negative, (np.array([0.5, -1.0, 2.0]),)),
    "else clause": (with_else, (np.array([1.0, 2.0]),)),
    "nested, inner body": (nested, (np.array([0.5, 1.5]), 1)),
    "nested, inner handler": (nested, (np.array([0.5, 1.5]), 5)),
    "return in body": (returns_inside, (2.0,)),
    "fall through body": (returns_inside, (0.5,)),
    "closure made in body": (closure_inside, (np.array([0.5, 1.5]), np.array([0.3, -0.7]))),
    "inactive try": (validated, (np.array([0.1, 0.2]),)),
    "comprehension variable": (comprehension_variables, (np.array([0.3, 0.8]), 2)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_gradient_through_try_matches_finite_differences(name, mode):
    f, args = CASES[name]
    got = gradient(f, *args)
    for k, a in enumerate(args):
        if isinstance(a, int):  # (an index or a count: its perturbation would not be a program's)
            continue
        want = central(f, args, k)
        np.testing.assert_allclose(0.0 if got[k] is None else got[k], want, rtol=1e-6, atol=1e-8)


def test_the_handlers_path_where_differences_cannot_tell(mode):
    """At b = 0 the body raises; either side of it, it does not: the gradient is the handler's, a * 0.5."""
    assert gradient(safe_ratio, 3.0, 0.0) == (0.5, None)


@pytest.mark.dual_route  # (the transform route refuses the `try` of the rule's own code: forward over reverse)
def test_second_derivatives_through_try(mode):
    h = hessian(lambda x: nested(x, 1) + skip_negative(x), np.array([0.5, 1.5]))
    np.testing.assert_allclose(h, np.diag([0.75 / np.sqrt(0.5), 0.75 / np.sqrt(1.5) + 2.0]), rtol=1e-10)
    assert gradient(lambda x: gradient(returns_inside, x)[0], 0.5)[0] == pytest.approx(3.0)  # (x^3 + x)'' = 6x
    assert derivative(returns_inside, 0.5) == pytest.approx(1.75)


def test_a_library_class_with_a_try_in_its_constructor(mode):
    """np.polynomial's classes validate their symbol in a try: refused before (MissingAdjoint, naming NumPy)."""
    points = np.array([0.5, 1.5])
    got = gradient(lambda c: np.sum(np.polynomial.Polynomial(c)(points)), np.array([1.0, 2.0, 3.0]))[0]
    np.testing.assert_allclose(got, [2.0, 2.0, 0.5 ** 2 + 1.5 ** 2])


def _reads_partial(x):
    y = x * 1.0
    try:
        y = x * 2.0
        z = np.linalg.inv(np.outer(y, y))
    except np.linalg.LinAlgError:
        return np.sum(y)  # Python's y is the body's x * 2.0 here: zygotepy's would be the one before the try
    return np.sum(z)


def _updates(x):
    try:
        x[0] = x[0] * 3.0
    except ValueError:
        pass
    return np.sum(x)


def _leaves_by_break(x):
    for _ in range(3):
        try:
            x = x * 2.0
            break
        except ValueError:
            pass
    return x


def _finally(x):
    try:
        y = x * 2.0
    except ValueError:
        y = x
    finally:
        y = y + 1.0
    return y


def _deletes(x):
    y = x * 2.0
    try:
        del y
    except NameError:
        pass
    return x


@pytest.mark.parametrize("f, message", [
    (_reads_partial, r"a try whose body assigns 'y' before a statement that may raise"),
    (_updates, r"a try whose body updates (a variable it reads|'x') in place"),
    (_finally, r"try/except with a finally clause"),
    (_deletes, r"deleting a variable inside try"),
], ids=["partial assignment read", "update in place", "finally", "del"])
def test_what_a_try_cannot_do_is_refused_at_the_users_line(f, message, mode):
    with pytest.raises(UnsupportedSyntax, match=r"test_tries.py:\d+: zygotepy cannot differentiate " + message):
        gradient(f, np.array([1.0, 2.0]))


def test_an_update_in_place_is_refused_where_no_gradient_flows_too():
    """The body runs as written (no gradient flows into it): its update of `x` would still be unseen."""
    def f(x, c):
        try:
            c[0] = 1.0
        except ValueError:
            pass
        return np.sum(x * c[0])
    with pytest.raises(UnsupportedSyntax, match="a try whose body updates (a variable it reads|'c') in place"):
        gradient(f, np.array([1.0, 2.0]), [0.0])


def test_the_plain_form_shows_the_body_as_one_call():
    text = show_adjoint(safe_ratio)
    assert "_attempt, _try_" in text and "_isinstance(" in text


_CALLS = [0]


def _counts_calls(x):
    global _CALLS
    _CALLS = [_CALLS[0] + 1]  # (a global statement: zygotepy refuses the helper)
    return x * 3.0


def _swallows_a_refusal(x):
    try:
        y = _counts_calls(x)
    except Exception:
        y = x
    return y


def _stores_into_zeros(x):
    try:
        out = np.zeros(2)
        out[0] = x[0] ** 2
        y = np.sum(out) * x[1]
    except Exception:
        return np.sum(x)
    return y


def test_zygotepys_own_refusal_is_never_the_users_exception(mode):
    """`except Exception:` caught zygotepy's refusal of something in the body and took the handler: the value and
    gradient of the other path, silently (gradient 1.0 for 3.0). In forward mode (hessian) too: a ForwardModeError of
    the body gave a zero Hessian."""
    from zygotepy import ForwardModeError, ZygoteError
    with pytest.raises(ZygoteError):
        gradient(_swallows_a_refusal, 2.0)
    with pytest.raises(ForwardModeError):
        hessian(_stores_into_zeros, np.array([1.5, 0.7]))


class _Stop(Exception):
    def __init__(self, v):
        super().__init__(v)
        self.v = v


def _value_in_the_exception(x):
    try:
        raise _Stop(x * x)
    except _Stop as e:
        return e.v * 3.0


def _walrus_before_the_raise(x):
    a = 0.0
    try:
        (a := x * 2.0) + math.log(x)
    except ValueError:
        pass
    return a


def _read_through_a_closure(x):
    a = 0.0
    get = lambda: a  # noqa: E731
    try:
        a = x * 2.0
        b = math.log(x)
    except ValueError:
        return get()
    return a + b


@pytest.mark.parametrize("f, x, message", [
    (_value_in_the_exception, 2.0, "raised an exception holding a value that may carry a gradient"),
    (_walrus_before_the_raise, -2.0, "assigns 'a' before a statement that may raise"),
    (_read_through_a_closure, -2.0, "assigns 'a' before a statement that may raise"),
], ids=["exception's value", "assignment expression", "closure"])
def test_what_a_failed_body_would_leave_unseen_is_refused(f, x, message, mode):
    """Each gave a silently wrong gradient (None, or the value before the body's assignment)."""
    with pytest.raises(UnsupportedSyntax, match=message):
        gradient(f, x)


def _reraises(x, k):
    try:
        return [x * 2.0, x * 3.0][k]
    except IndexError:
        if k > 5:
            raise
        return x * 5.0


def _chained(x):
    try:
        return math.log(x)
    except ValueError as e:
        raise RuntimeError("negative") from e


def test_a_bare_raise_in_a_handler_and_raise_from(mode):
    """A bare `raise` in a handler was refused ("a bare raise"); `raise B from e` lost its `__cause__`."""
    assert gradient(_reraises, 1.5, 1) == (3.0, None)
    assert gradient(_reraises, 1.5, 3) == (5.0, None)
    with pytest.raises(IndexError):
        gradient(_reraises, 1.5, 7)
    with pytest.raises(RuntimeError) as info:
        gradient(_chained, -1.0)
    assert isinstance(info.value.__cause__, ValueError)


# --- an exception an eagerly computed generator item raises, inside a try ------------------------------------------
# zygotepy computes every item of a generator expression when it is made; Python only those taken. An item Python never
# reaches that raises was caught by the user's handler (value 0.0 for 1.3, gradient None; found by a probe of
# control-flow syntax): refused now where the generator may be taken in part. Taken whole (`sum`), Python raises too.

def _next_past_a_raising_item(x):
    try:
        y = next(math.sqrt(v) * x for v in [1.0, -1.0])
    except ValueError:
        y = 0.0
    return y


def _any_before_a_raising_item(x):
    try:
        big = any(x / v > 1.0 for v in [1.0, 0.0])
    except ZeroDivisionError:
        big = False
    return x if big else -x


@pytest.mark.parametrize("f", [_next_past_a_raising_item, _any_before_a_raising_item], ids=lambda f: f.__name__)
def test_an_item_python_never_takes_raising_inside_a_try_is_refused(f, mode):
    with pytest.raises(UnsupportedSyntax, match=r"an item of a generator expression that may be taken in part raised"):
        value_and_gradient(f, 1.3)


def _sum_over_a_raising_item(x):
    try:
        y = sum(math.sqrt(v) * x for v in [1.0, -1.0])
    except ValueError:
        y = 2.0 * x
    return y


def _next_without_a_raising_item(x):
    try:
        y = next(math.sqrt(v) * x for v in [4.0, 1.0])
    except ValueError:
        y = 0.0
    return y


@pytest.mark.parametrize("f", [_sum_over_a_raising_item, _next_without_a_raising_item], ids=lambda f: f.__name__)
def test_a_generator_inside_a_try_raising_as_python_does_runs(f, mode):
    assert value_and_gradient(f, 1.3) == (pytest.approx(f(1.3)), (2.0,))


def _cholesky_with_jitter(log_ell):
    X = np.array([0.0, 0.3, 1.1, 1.7])
    K = np.exp(-0.5 * (X[:, None] - X[None, :]) ** 2 / np.exp(2 * log_ell[0]))
    jitter = 1e-10
    while True:
        try:
            L = np.linalg.cholesky(K + jitter * np.eye(len(X)))
            break
        except np.linalg.LinAlgError:
            jitter *= 10
    a = np.linalg.solve(L, np.sin(X))
    return 0.5 * a @ a + np.sum(np.log(np.diag(L)))


def _retried_until_it_works(x):
    scale = 100.0
    out = 0.0
    while True:
        try:
            if scale > 1.5:
                raise ArithmeticError
            out = np.sum(np.log(x * scale))
            break
        except ArithmeticError:
            scale = scale / 10.0
    return out


def _break_and_continue_in_the_body(x):
    total = 0.0
    for k in range(4):
        try:
            if x[k] < 0:
                raise ValueError
            v = np.sqrt(x[k])
            if v > 1.0:
                break
            total = total + v
            continue
        except ValueError:
            total = total - x[k] ** 2
    return total + x[0]


def _leaves_by_break_summed(x):
    return np.sum(_leaves_by_break(x) ** 2)


@pytest.mark.parametrize("f, x", [(_leaves_by_break_summed, np.array([1.0, 2.0])),
                                  (_cholesky_with_jitter, np.array([0.2])),
                                  (_retried_until_it_works, np.array([0.4, 0.6, 2.0])),
                                  (_break_and_continue_in_the_body, np.array([0.3, -0.5, 1.9, 0.4]))],
                         ids=["break", "cholesky jitter", "retry", "break and continue"])
def test_break_and_continue_leaving_the_body(f, x, mode):
    """The body returns ("break", its variables) and the caller breaks: `while True: try: ...; break`."""
    agree_at(f, x)


def _risky(v):
    if v > 1.5:
        raise ValueError
    return v * v


def _carried_by_the_body_to_its_next_iteration(x):
    s = 0.0
    t = 0.0
    for i in range(4):
        try:
            s = s + x[i]
            t = t + _risky(s)
        except ValueError:
            pass
    return t


def _a_lambda_made_in_the_body_then_its_name_assigned_again(x):
    k = x[0]
    try:
        h = lambda t: t * k  # noqa: E731
    except ValueError:
        h = None
    k = x[1] * 5.0
    return h(2.0)


@pytest.mark.parametrize("f, message", [
    (_carried_by_the_body_to_its_next_iteration, r"a try whose body assigns 's' before a statement that may raise"),
    (_a_lambda_made_in_the_body_then_its_name_assigned_again, r"a function made inside try that captures 'k'"),
], ids=["next iteration", "stale capture"])
def test_what_the_body_as_one_step_would_get_wrong_is_refused(f, message, mode):
    """A failed iteration left `s` assigned, which the next one reads (Python keeps it: value 3.71, zygotepy's 1.33);
    a lambda made in the body read the body's own copy of `k` after `k` was assigned again (1.8 for 12.0)."""
    with pytest.raises(UnsupportedSyntax, match=r"test_tries.py:\d+: zygotepy cannot differentiate " + message):
        gradient(f, np.array([0.9, 0.7, -0.5, 0.2]))


def _line_search(x):
    step = 1.0
    while True:
        try:
            y = np.sum(np.log(x * step))
            if y < 0:
                raise ValueError("a step too short")
            break
        except ValueError:
            step *= 2.0
    return y * np.sum(x)


def _line_search_for_else(x):
    step = 16.0  # (too long twice: sqrt of a negative number, raised under `errstate(invalid="raise")`)
    for _ in range(10):
        try:
            y = np.sum(x * x) * step
            trial = np.sqrt(1.0 - y)
            break
        except FloatingPointError:
            step *= 0.5
    else:
        raise RuntimeError("no step")
    return trial + y


@pytest.mark.parametrize("f, x", [(_line_search, np.array([0.3, 0.7])), (_line_search_for_else, np.array([0.2, 0.3]))],
                         ids=["while True", "for-else raise"])
def test_a_loop_that_retries_the_body_until_it_succeeds(f, x, mode):
    """A failed body's assignments are seen by nothing: the loop leaves only through the body's own `break`, and every
    path through the body assigns them first (the line-search idiom)."""
    with np.errstate(invalid="raise"):
        agree_at(f, x)


def _retry_that_may_run_out(x):
    step = 1.0
    y = 0.0
    for _ in range(3):
        try:
            y = np.sum(np.log(x * step))
            if y < 0:
                raise ValueError
            break
        except ValueError:
            step *= 2.0
    return y


def _retry_given_up_by_the_handler(x):
    step = 1.0
    y = 0.0
    while True:
        try:
            y = np.sum(np.log(x * step))
            if y < 0:
                raise ValueError
            break
        except ValueError:
            if step > 2.0:
                break
            step *= 2.0
    return y


def _retry_assigning_after_a_test(x):
    step = 1.0
    y = 0.0
    while True:
        try:
            if step > 100.0:
                break
            y = np.sum(np.log(x * step))
            if y < 0:
                raise ValueError
            break
        except ValueError:
            step *= 2.0
    return y


def _retry_reading_it_before_the_try(x):
    step = 1.0
    y = 0.0
    total = 0.0
    while True:
        total = total + y
        try:
            y = np.sum(np.log(x * step))
            if y < 0:
                raise ValueError
            break
        except ValueError:
            step *= 2.0
    return total + y


@pytest.mark.parametrize("f", [_retry_that_may_run_out, _retry_given_up_by_the_handler, _retry_assigning_after_a_test,
                               _retry_reading_it_before_the_try], ids=lambda f: f.__name__)
def test_a_retry_loop_where_a_failed_body_is_seen_is_refused(f, mode):
    """Each reads a failed body's `y` on some path: the loop ran out (Python's `y` is the last failed value), a handler
    left it, a path through the body skipped the assignment, the next iteration read it before the `try`."""
    with pytest.raises(UnsupportedSyntax, match=r"assigns 'y' before a statement that may raise"):
        gradient(f, np.array([0.3, 0.4]))
