"""Inline scalar derivatives: the body of a rule-table lambda `lambda dy, y, a, b: (dy * b, dy * a)`, pasted into
generated code with its parameters replaced by the call's atoms. This is what keeps scalar loops within a small factor of
the primal: no call, no closure, no tuple per operation.
"""
import ast
import copy
import functools

import gast

from .source import get_source


@functools.lru_cache(maxsize=None)
def _elements(derivative):
    """(parameter names, [ast expression per cotangent]) of a derivative lambda."""
    node = get_source(derivative).node
    if not isinstance(node, gast.Lambda) or not isinstance(node.body, gast.Tuple):
        raise TypeError(f"a scalar derivative must be `lambda dy, y, *args: (...)`: {derivative}")
    params = [a.id for a in node.args.args]
    body = gast.gast_to_ast(node.body)
    return params, body.elts


@functools.lru_cache(maxsize=None)
def names_used(derivative, index):
    _, elements = _elements(derivative)
    return frozenset(n.id for n in ast.walk(elements[index]) if isinstance(n, ast.Name))


def element(derivative, index, args, free_name):
    """Element `index` of `derivative` with parameter names replaced by the ast expressions in `args` (a dict) and
    other names (module globals such as `math`) replaced by `free_name(name, value)`."""
    _, elements = _elements(derivative)
    expr = copy.deepcopy(elements[index])

    class Substitute(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in args:
                return copy.deepcopy(args[node.id])
            return free_name(node.id, derivative.__globals__[node.id])
    return Substitute().visit(expr)


def params(derivative):
    return _elements(derivative)[0]
