"""Numbers read back from text made of values that carry gradients (`float(str(x))`, `float(f"{x:.17g}")`,
`np.float64("%r" % x)`): refused before anything runs, naming the line. Text is data to zygotepy, as it is to every
reverse-mode library (JAX and PyTorch fail on `float(str(...))` of a traced value), so the number read back would be a
constant: its gradient silently lost (0 where the round trip is the identity, as it is at full precision). Rounding
is differentiated as `round(x, k)` (piecewise constant); to keep a value, keep the number itself.

Only the text made and read within one function is followed (text handed from or to another function is not)."""
import ast
import decimal
import fractions
import json
import operator

import numpy as np

from ..errors import UnsupportedSyntax
from . import mutate as mt
from . import runtime as rt
from .analysis import callee_object, varied_values
from .ir import Assign, Call, Const, Def, If, Loop, Var, atoms, out_vars, walk

_TEXT_MAKERS = frozenset((str, repr, ascii, format, rt.format_value))
_STORES = frozenset((operator.setitem, mt.setitem))  # (container, key, value)
_FORMAT_METHODS = frozenset(("format", "format_map"))
_LINKS = frozenset((mt.put_item, mt.put_attr, mt.put_held, mt.put_iter, mt.refresh, mt.refresh_held, mt.refresh_iter))
READERS = frozenset((float, complex, np.float64, np.float32, np.float16, np.longdouble, np.complex128, np.complex64,
                      np.array, np.asarray, np.fromstring, decimal.Decimal, fractions.Fraction, json.loads,
                      ast.literal_eval, float.fromhex))


def check_text_round_trips(fn, code, globals_, need=None):
    """Raise UnsupportedSyntax at the first call reading a number out of text that a value with a gradient was
    written into, in IR function `fn`. Text used as a key (`params[f"w{i}"] = w`) makes its dict one whose keys are
    text (`keyed`), not one whose values are: reading a value (`params["w0"]`) is no round trip; anything else done
    with such a dict (its keys listed, iterated) counts as text."""
    varied = None
    flows, texts = {}, set()
    for s in walk(fn.body):
        for source, target, kind in _flows(s):
            flows.setdefault(source, []).append((target, kind))
        if isinstance(s, Assign) and isinstance(s.value, Call) and _writes_text(s.value, globals_):
            varied = varied_values(fn, code, globals_, need) if varied is None else varied
            if any(v in varied for v in _inputs(s.value)):
                texts.update(out_vars(s.out))
    if not texts:
        return
    keyed = set()
    work = [(v, True) for v in texts]
    while work:
        var, is_text = work.pop()
        for nxt, kind in flows.get(var, ()):
            if not is_text and kind == "read":  # (a value read out of a dict whose keys alone are text)
                continue
            to_text = kind != "key" if is_text else kind == "call"
            into = texts if to_text else keyed
            if nxt not in into:
                into.add(nxt)
                work.append((nxt, to_text))
    for s in walk(fn.body):
        if isinstance(s, Assign) and isinstance(s.value, Call) and \
                callee_object(s.value.fn, globals_) in READERS and any(v in texts for v in _inputs(s.value)):
            raise UnsupportedSyntax("a number read back from text that a value carrying a gradient was written into "
                                    "(text carries no gradient: the number's would be lost)", code.co_filename,
                                    s.line, "compute with the number itself; round(x, k) rounds it")


def _inputs(call):
    return [a for a in atoms(call) if isinstance(a, Var)]


def _writes_text(call, globals_):
    """Is this call one that writes its arguments into text: str(x), repr, format, an f-string's field,
    `"...".format(x)`, `"%g" % x`?"""
    target = callee_object(call.fn, globals_)
    if target in _TEXT_MAKERS:
        return True
    if target is rt.callmethod and len(call.args) > 1 and isinstance(call.args[1], Const) and \
            call.args[1].value in _FORMAT_METHODS and isinstance(call.args[0], Const) and \
            isinstance(call.args[0].value, str):
        return True
    return target is operator.mod and isinstance(call.args[0], Const) and isinstance(call.args[0].value, str)


def _flows(s):
    """(source, target, kind) triples along which text (any data) moves in statement `s`: "key" from a key into the
    dict stored into, "read" from a container into the item read, "keep" into a new version of the same value (a
    store's result, a join, a loop's carry), "call" into any other call's result."""
    if isinstance(s, Assign):
        outs = list(out_vars(s.out))
        if not isinstance(s.value, Call):
            return [(a, o, "keep") for a in atoms((s.value,)) if isinstance(a, Var) for o in outs]
        call = s.value
        fn = call.fn.value if isinstance(call.fn, Const) else None
        if fn is operator.getitem and len(call.args) == 2:
            return [(call.args[0], o, "read") for o in outs if isinstance(call.args[0], Var)]
        if fn in _LINKS:  # (a link's new version is its first argument itself, held in the other or holding it: the
            # text it holds, as a read out of the other would be; a dict's text keys stay that dict's)
            return [(a, o, "keep" if k == 0 else "read") for k, a in enumerate(call.args) if isinstance(a, Var)
                    for o in outs]
        if fn is rt.callmethod and len(call.args) in (3, 4) and call.args[1] == Const("get"):
            # `d.get(k, default)`: an item read (a text key looks it up; the value is not made of it), or the default
            return [(a, o, kind) for a, kind in zip((call.args[0], *call.args[3:]), ("read", "call"))
                    if isinstance(a, Var) for o in outs]
        if fn in _STORES and len(call.args) == 3:
            container, key, value = call.args
            return [(a, o, kind) for a, kind in ((container, "keep"), (key, "key"), (value, "call"))
                    if isinstance(a, Var) for o in outs]
        return [(a, o, "call") for a in atoms(call) if isinstance(a, Var) for o in outs]
    if isinstance(s, Def):
        return [(a, s.out, "call") for a in (*s.values, *(s.defaults or ())) if isinstance(a, Var)]
    if isinstance(s, If):
        return [(a, p.out, "keep") for p in s.phis for a in (p.then, p.orelse) if isinstance(a, Var)]
    if isinstance(s, Loop):
        pairs = [(a, c.var, "keep") for c in s.carries for a in (c.init, c.next) if isinstance(a, Var)]
        return pairs + ([(s.iter, s.target, "call")] if isinstance(s.target, Var) and isinstance(s.iter, Var) else [])
    return []
