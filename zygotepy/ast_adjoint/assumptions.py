"""What a derived adjoint assumes of the user's globals (the test that it still holds: assumed_globals.py).

The activity analysis (analysis.py `_edges`) takes a call of a global that names a non-differentiable callable when
the function is transformed (`act = np.floor`, `pick = np.argmax`, `conv = int`) as a constant: no gradient flows
through it, and the adjoint has no term for it. A notebook re-running a cell rebinds the name (`act = np.tanh`), and
the cached adjoint would go on dropping that term: a silently wrong gradient. So each such call whose arguments may
carry a gradient is recorded with the object its global named (`assumed_callees`); the caches of derived code
(compile.py `artefact`, derived.py's per-function cache) use it only while every recorded name still gives the same
object (`checker`: one identity test per recorded name, once per call of the function, not per call in it), and
derive the function again otherwise.
"""
from .analysis import call_inputs, varied_values
from .assumed_globals import resolve_global
from .ir import Assign, Call, Global, walk
from ..adjoints.registry import is_nondifferentiable


def assumed_callees(ir, code, globals_, need):
    """((path, object), ...): the globals called in IR function `ir` that name a non-differentiable callable now, at
    calls given a value that may carry a gradient (`need`: the parameters whose gradients are wanted)."""
    found = {}
    varied = None
    for s in walk(ir.body):
        if not (isinstance(s, Assign) and isinstance(s.value, Call) and isinstance(s.value.fn, Global)):
            continue
        path = s.value.fn.path
        if path in found:
            continue
        target = resolve_global(path, globals_)
        try:
            constant = is_nondifferentiable(target)
        except TypeError:  # (unhashable: the analysis does not take it as constant either)
            continue
        if not constant:
            continue
        if varied is None:
            varied = varied_values(ir, code, globals_, need)
        if any(v in varied for v in call_inputs(s.value)):
            found[path] = target
    return tuple(found.items())
