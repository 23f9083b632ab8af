"""A helper called as a statement that updates its arguments or state outside itself (a global, a class attribute,
the module's `globals()`), in code zygotepy cannot differentiate (`try`, `match`, `global`), is refused naming its line:
run as written, its update went unseen, and the gradient through it was silently lost (inactive.py
`as_written_checked`, mutation/calls.py `_refuse_unseen_state`, stores.py's class attributes). A helper that only
prints, in such code, still runs."""
import math

import pytest

from zygotepy import ZygoteError, gradient

G = 0.0


def set_global(v):
    global G
    G = v


def through_a_global(x):
    set_global(math.sin(x))
    return G * x


def fill_in_try(out, v):
    try:
        out.append(v * v)
    except ValueError:
        pass


def through_try(x):
    out = []
    fill_in_try(out, x)
    return out[0]


def fill_in_match(out, v):
    match v:
        case _:
            out.append(v * v)


def through_match(x):
    out = []
    fill_in_match(out, x)
    return out[0]


class Totals:
    total = 0.0
    n = 0.0

    def bump(self, v):
        type(self).n = v * v


def set_class_attribute(v):
    Totals.total = v * 3.0


def through_a_class_attribute(x):
    set_class_attribute(x)
    return Totals.total


def through_type_of_self(x):
    Totals().bump(x)
    return Totals.n


def set_by_globals(v):
    globals()["G"] = v * v


def through_globals(x):
    set_by_globals(x)
    return G


@pytest.mark.parametrize("f, line_of", [
    (through_a_global, set_global), (through_try, fill_in_try), (through_match, fill_in_match),
    (through_a_class_attribute, set_class_attribute), (through_type_of_self, Totals.bump),
    (through_globals, set_by_globals)], ids=lambda v: v.__qualname__)
def test_an_update_of_state_a_statement_call_would_hide_is_refused(f, line_of):
    with pytest.raises(ZygoteError, match="test_unseen_state.py:") as info:
        gradient(f, 1.3)
    first, last = line_of.__code__.co_firstlineno, max(ln for _, _, ln in line_of.__code__.co_lines() if ln)
    line = int(str(info.value).split("test_unseen_state.py:")[1].split(":")[0])
    assert first <= line <= last


def log(v):
    try:
        print(f"{v:.3f}")
    except ValueError:
        pass


def prints_through_a_try(x):
    log(x)
    return x * 2.0


def test_a_helper_that_only_prints_still_runs(capsys):
    assert gradient(prints_through_a_try, 1.3) == (2.0,)
    assert capsys.readouterr().out == "1.300\n"
