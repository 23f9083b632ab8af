"""Inline scalar derivatives: the body of a rule-table lambda `lambda dy, y, a, b: (dy * b, dy * a)`, pasted into
generated code with its parameters replaced by the call's atoms. This is what keeps scalar loops within a small factor of
the primal: no call, no closure, no tuple per operation.
"""
import ast
import builtins
import copy
import functools
import re

import gast

from .source import SourceUnavailable, get_source


@functools.lru_cache(maxsize=None)
def _elements(derivative):
    """(parameter names, [ast expression per cotangent]) of a derivative lambda."""
    node = get_source(derivative).node
    if not isinstance(node, gast.Lambda) or not isinstance(node.body, gast.Tuple):
        raise TypeError(f"a scalar derivative must be `lambda dy, y, *args: (...)`: {derivative}")
    params = [a.id for a in node.args.args]
    body = gast.gast_to_ast(node.body)
    return params, body.elts


def gives_none(derivative, index):
    """Is element `index` the constant None (no cotangent: `math.copysign`'s sign, `math.ldexp`'s exponent)?"""
    element = _elements(derivative)[1][index]
    return isinstance(element, ast.Constant) and element.value is None


@functools.lru_cache(maxsize=None)
def names_used(derivative, index):
    _, elements = _elements(derivative)
    return frozenset(n.id for n in ast.walk(elements[index]) if isinstance(n, ast.Name))


@functools.lru_cache(maxsize=None)
def _template(derivative, index):
    """Element `index` as a format string: parameters and free names become `{name}` fields."""
    _, elements = _elements(derivative)
    expr = copy.deepcopy(elements[index])
    free = set()

    class Fields(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id not in params(derivative):
                free.add(node.id)
            return ast.Name("{" + node.id + "}", ast.Load())
    text = ast.unparse(Fields().visit(expr))
    return text, frozenset(free)


def element(derivative, index, args, free_name):
    """Element `index` of `derivative` as an expression node, its parameters replaced by the texts in `args` and its
    other names (module globals such as `math`) by `free_name(name, value)`. The node prints as the pasted text."""
    text, free = _template(derivative, index)
    fields = {n: t if _atomic(t) else f"({t})" for n, t in args.items()}
    fields.update({n: free_name(n, derivative.__globals__[n] if n in derivative.__globals__ else getattr(builtins, n))
                   for n in free})  # (a builtin, such as `round`, is not in the module's globals)
    result = text.format(**fields)
    return ast.Name(result if _atomic(result) else f"({result})", ast.Load())


def _atomic(text):
    """A name or a plain number: needs no parentheses wherever it is pasted."""
    return _ATOMIC(text) is not None


_ATOMIC = re.compile(r"[A-Za-z_][\w.]*|\d[\w.]*").fullmatch


def passed(derivative, index, args):
    """The atom among `args` (the call's `(dy, y, *args)`) that element `index` of `derivative` is, when it is a bare
    parameter (`dy` for `+`'s operands), else None."""
    params, elements = _elements(derivative)
    node = elements[index]
    if isinstance(node, ast.Name) and node.id in params:
        return args[params.index(node.id)]
    return None


def usable(derivative, nargs):
    """Can `derivative` be inlined for a call with `nargs` arguments? (False, not an error, if its source changed on
    disk since import: the general rule is as correct, only slower.)"""
    try:
        return len(params(derivative)) == 2 + nargs
    except (SourceUnavailable, TypeError):
        return False


def params(derivative):
    return _elements(derivative)[0]
