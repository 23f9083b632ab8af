"""Errors raised while differentiating point at the line that raised them and at the user's line that led there.

A failing rule must show the rule's own file and line in the traceback, and the user's file and line (of the call
into the rule) either in the traceback or in the exception's notes (Zygote.jl's test/compiler.jl, lines 14-37).
An error in the user's own code propagates with its own type.
"""
import inspect
import math
import os
import re
import sys
import traceback

import numpy as np
import pytest

import zygotepy
from zygotepy import adjoint, gradient, pullback

THIS_FILE = __file__


def _line(fn, marker):
    lines, start = inspect.getsourcelines(fn)
    hits = [start + k for k, text in enumerate(lines) if marker in text]
    assert len(hits) == 1, hits
    return hits[0]


def _report(exc):
    """The formatted traceback and the notes (Python 3.11+ prints notes in format_exception too)."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return text + "\n" + "\n".join(getattr(exc, "__notes__", []))


def _mentions(text, filename, line):
    """`filename` and `line` together, as a traceback (`File "f", line N`) or a note (`f, line N`) writes them."""
    return re.search(re.escape(filename) + r'"?,? line ' + str(line) + r"(?!\d)", text) is not None


# --- a rule whose back raises -----------------------------------------------------------------------------------------
def myfun(x):
    return x * 2.0


@adjoint(myfun)
def _myfun_rule(x):
    def back(dy):
        raise ValueError("boom in the rule's back")  # RULE-BACK
    return myfun(x), back


def user_calls_myfun(x):
    a = x + 1.0
    b = myfun(a) * 3.0  # USER-CALL
    return b


def test_error_in_rule_back_points_at_rule_and_user_line():
    rule_line = _line(_myfun_rule, "# RULE-BACK")
    user_line = _line(user_calls_myfun, "# USER-CALL")
    with pytest.raises(ValueError, match="boom in the rule's back") as info:
        gradient(user_calls_myfun, 1.5)
    text = _report(info.value)
    assert _mentions(text, THIS_FILE, rule_line), text
    assert _mentions(text, THIS_FILE, user_line), text


def test_error_in_rule_back_from_pullback():
    rule_line = _line(_myfun_rule, "# RULE-BACK")
    user_line = _line(user_calls_myfun, "# USER-CALL")
    y, back = pullback(user_calls_myfun, 1.5)
    assert y == pytest.approx((1.5 + 1.0) * 2.0 * 3.0)  # the forward pass ran normally
    with pytest.raises(ValueError) as info:
        back(1.0)
    text = _report(info.value)
    assert _mentions(text, THIS_FILE, rule_line), text
    assert _mentions(text, THIS_FILE, user_line), text


# --- a rule whose forward raises -------------------------------------------------------------------------------------
def otherfun(x):
    return x * 3.0


@adjoint(otherfun)
def _otherfun_rule(x):
    if x > 100.0:
        raise ArithmeticError("too large for the rule")  # RULE-FORWARD
    return otherfun(x), lambda dy: (3.0 * dy,)


def user_calls_otherfun(x):
    y = x * 50.0
    z = otherfun(y)  # USER-CALL-2
    return z


def test_error_in_rule_forward_points_at_rule_and_user_line():
    rule_line = _line(_otherfun_rule, "# RULE-FORWARD")
    user_line = _line(user_calls_otherfun, "# USER-CALL-2")
    assert gradient(user_calls_otherfun, 1.0) == (150.0,)  # below the threshold the rule works
    with pytest.raises(ArithmeticError, match="too large") as info:
        gradient(user_calls_otherfun, 3.0)
    text = _report(info.value)
    assert _mentions(text, THIS_FILE, rule_line), text
    assert _mentions(text, THIS_FILE, user_line), text


# --- errors in the user's own code ----------------------------------------------------------------------------------
def divides(x):
    if x == 0.0:
        return 1.0 / x  # USER-DIV
    return math.log(x)


def nested_divides(x):
    y = x * x
    return divides(y) * 2.0  # USER-OUTER


def test_error_in_user_code_keeps_its_type():
    assert gradient(divides, 2.0) == (0.5,)  # d/dx log x = 1/x
    with pytest.raises(ZeroDivisionError):
        gradient(divides, 0.0)
    with pytest.raises(ZeroDivisionError):
        pullback(nested_divides, 0.0)


def test_error_in_user_code_points_at_user_line():
    with pytest.raises(ZeroDivisionError) as info:
        gradient(nested_divides, 0.0)
    text = _report(info.value)
    assert _mentions(text, THIS_FILE, _line(divides, "# USER-DIV")), text
    assert _mentions(text, THIS_FILE, _line(nested_divides, "# USER-OUTER")), text


def test_math_domain_error_in_user_code():
    def f(x):
        return math.sqrt(x - 10.0)
    with pytest.raises(ValueError, match="math domain error"):
        gradient(f, 1.0)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes are Python 3.11+")
def test_notes_are_added_once():
    with pytest.raises(ValueError) as info:
        gradient(user_calls_myfun, 1.5)
    notes = getattr(info.value, "__notes__", [])
    zygote_notes = [n for n in notes if "zygotepy" in n]
    assert len(zygote_notes) <= 1, notes


def _deep(x, n):
    if n == 0:
        return x
    return _deep(x, n - 1) * 1.0001


def test_deep_recursion_says_how_to_go_deeper():
    with pytest.raises(RecursionError) as info:
        gradient(_deep, 1.0, sys.getrecursionlimit())
    note = "\n".join(getattr(info.value, "__notes__", []))
    assert "previous line repeated" in note and "sys.setrecursionlimit" in note
    assert len(note.splitlines()) < 10  # one line per distinct frame, not one per level
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(6 * before)
    try:
        (g, _) = gradient(_deep, 1.0, before - 100)  # deeper than the default limit allowed
    finally:
        sys.setrecursionlimit(before)
    assert g == pytest.approx(1.0001 ** (before - 100), rel=1e-12)


def test_an_interrupted_gradient_leaves_no_state_behind():
    # a KeyboardInterrupt (or a timeout's exception) in the forward left the entry points' depth raised: no later
    # call cleared its per-call records (a key read in one call was still filed in the next)
    import numpy as np

    from zygotepy import gradient
    from zygotepy.runtime.context import current

    def interrupted(x):
        d = {"a": x}
        y = d["a"] * 2.0
        if y > 0:
            raise KeyboardInterrupt
        return y

    with pytest.raises(KeyboardInterrupt):
        gradient(interrupted, 1.5)
    assert current().depth == 0

    def keyed(x):
        d = {x: 1.0, "b": x}
        return d["b"] * 3.0
    assert gradient(keyed, 1.3) == (3.0,)
    assert not current().read_keys
    assert np.isfinite(gradient(lambda x: x * x, 2.0)[0])


# --- tracebacks shown to the user (zygotepy/tracebacks.py) ---------------------------------------------------------------
ZYGOTEPY_DIR = os.path.dirname(zygotepy.__file__) + os.sep


def _frames(exc):
    return [(f.filename, f.lineno, f.name) for f in traceback.extract_tb(exc.__traceback__)]


def _helper_raising(v):
    return v * 2.0 + undefined_in_helper  # noqa: F821  (raises NameError)


def _calls_helper(x):
    y = x * 3.0
    z = _helper_raising(y)
    return z * z


def test_traceback_shows_the_users_lines_not_generated_code():
    with pytest.raises(NameError) as info:
        gradient(_calls_helper, 1.5)
    frames = _frames(info.value)
    call = _line(_calls_helper, "_helper_raising(y)")
    raised = _line(_helper_raising, "undefined_in_helper")
    assert (THIS_FILE, call, "_calls_helper") in frames
    assert (THIS_FILE, raised, "_helper_raising") in frames
    assert frames.index((THIS_FILE, call, "_calls_helper")) < frames.index((THIS_FILE, raised, "_helper_raising"))
    assert not [f for f in frames if f[0].startswith("<zygotepy")]
    internal = [f for f in frames if f[0].startswith(ZYGOTEPY_DIR)]
    assert [f[2] for f in internal] == ["gradient"]  # the entry point alone (IPython and pytest hide it too)
    text = "".join(traceback.format_exception(type(info.value), info.value, info.value.__traceback__))
    assert "undefined_in_helper" in text and "frames of zygotepy's own code are hidden" in text


def test_full_tracebacks_on_request(monkeypatch):
    monkeypatch.setenv("ZYGOTEPY_TRACEBACK", "full")
    with pytest.raises(NameError) as info:
        gradient(_calls_helper, 2.5)
    frames = _frames(info.value)
    assert [f for f in frames if f[0].startswith("<zygotepy")]
    assert len([f for f in frames if f[0].startswith(ZYGOTEPY_DIR)]) >= 2


def _shapes_mismatch(x, w):
    return np.sum(np.tanh(np.dot(w, x)))  # (np.dot's rule computes the product: `w @ x` runs in generated code)


def test_an_error_inside_a_rule_keeps_the_rules_frame():
    # not a zygotepy error (NumPy refusing the shapes): where it was raised is kept, under the user's line
    with pytest.raises(ValueError) as info:
        gradient(_shapes_mismatch, np.ones(3), np.ones((2, 4)))
    frames = _frames(info.value)
    assert frames[-1][0].startswith(ZYGOTEPY_DIR + "adjoints")
    assert (THIS_FILE, _line(_shapes_mismatch, "np.dot(w, x)"), "_shapes_mismatch") in frames


def _unsupported(x):
    while True:
        try:
            return x * 2.0
        finally:
            pass


def test_a_zygotepy_error_shows_no_internal_frame():
    with pytest.raises(zygotepy.ZygoteError) as info:
        gradient(_unsupported, 1.0)
    internal = [f for f in _frames(info.value) if f[0].startswith(ZYGOTEPY_DIR)]
    assert [f[2] for f in internal] == ["gradient"]


def test_a_pullbacks_back_shows_the_users_rule():
    with pytest.raises(ValueError) as info:
        _, back = pullback(user_calls_myfun, 1.5)
        back(1.0)
    frames = _frames(info.value)
    assert not [f for f in frames if f[0].startswith("<zygotepy")]
    assert frames[-1] == (THIS_FILE, _line(_myfun_rule, "# RULE-BACK"), "back")
    assert (THIS_FILE, _line(user_calls_myfun, "# USER-CALL"), "user_calls_myfun") in frames
