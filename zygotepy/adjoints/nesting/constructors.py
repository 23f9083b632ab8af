"""Nested reverse mode through constructors of plain classes: `__init__` read as a function that returns the fields.

A plain class's constructor rule (objects.plain_new) runs the derived `__init__`, which sets attributes of the new
object in place, and an outer level cannot transform updates in place. But most `__init__`s only set attributes
(`self.w = w`, `self.scale = 2.0 * s`). Such an `__init__` is rewritten, once per function, into a function of the
same parameters that returns the attributes as a dict (`self.w` becomes the local `_self_w`), which an outer level
differentiates like any other function; `object_of`, a rule, makes the object from the dict. An `__init__` that does
anything else with `self` (calls its methods, passes it on, reads an attribute it has not set, `super()`) is refused
with a ZygoteError naming the class and the reason: never a wrong gradient.
"""
import ast
import itertools
import types
import weakref

import gast

from ...ast_adjoint.source import SourceUnavailable, get_source, register_source
from ...errors import ZygoteError
from ...structgrad import StructGrad
from ..objects import as_fields
from ..registry import adjoint

_FIELDS = weakref.WeakKeyDictionary()  # __init__ function -> its fields function
_COUNT = itertools.count()


def init_fields(cls):
    """The function `(*args, **kwargs) -> {attribute: value}` that `cls.__init__` amounts to (a ZygoteError when it
    does more than set attributes of `self`)."""
    init = cls.__init__
    fields = _FIELDS.get(init)
    if fields is None:
        fields = _FIELDS[init] = _rewritten(cls, init)
    return fields


def _refusal(cls, why):
    return ZygoteError(f"nested differentiation (a gradient of a gradient) constructs {cls.__qualname__} by reading "
                       f"its __init__ as a function of its arguments, which it cannot: {why}. Build the object "
                       f"outside the inner gradient, or take second derivatives with zygotepy.hessian")


def _rewritten(cls, init):
    if init.__code__.co_freevars:
        raise _refusal(cls, "__init__ uses a closure (super() or a variable of an enclosing function)")
    try:
        node = gast.gast_to_ast(get_source(init).node)
    except SourceUnavailable as e:
        raise _refusal(cls, f"its source is unavailable ({e.reason})") from None
    params = node.args.posonlyargs + node.args.args
    if not params:
        raise _refusal(cls, "__init__ takes no `self`")
    me = params[0].arg
    body, fields = [], []
    for k, stmt in enumerate(node.body):
        if k == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the docstring
        targets = _own_targets(stmt, me)
        body.append(_Fields(cls, me, set(fields), targets).visit(stmt))
        fields += [t for t in dict.fromkeys(targets) if t not in fields]
    name = f"{cls.__name__}_init_fields"
    node.name, node.decorator_list, node.returns, node.type_comment = name, [], None, None
    if node.args.posonlyargs:
        node.args.posonlyargs = node.args.posonlyargs[1:]
    else:
        node.args.args = node.args.args[1:]
    result = ast.Dict([ast.Constant(f) for f in fields], [ast.Name(f"_self_{f}", ast.Load()) for f in fields])
    node.body = body + [ast.Return(result)]
    text = ast.unparse(ast.fix_missing_locations(ast.Module([node], [])))
    filename = f"<zygotepy-init-fields {next(_COUNT)}: {cls.__qualname__}>"
    code = next(c for c in compile(text, filename, "exec").co_consts if isinstance(c, types.CodeType))
    fn = types.FunctionType(code, init.__globals__, name, init.__defaults__)
    fn.__kwdefaults__ = init.__kwdefaults__
    register_source(fn, text)
    return fn


def _own_targets(stmt, me):
    """The attributes of `me` that the top-level statement `stmt` of `__init__` sets: `self.w = ...`,
    `self.a, self.b = ...`, `self.w += ...`, `self.w: float = ...`."""
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and stmt.value is not None:
        targets = [stmt.target]
    else:
        return []
    found = []
    for t in targets:
        for leaf in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
            if isinstance(leaf, ast.Attribute) and isinstance(leaf.value, ast.Name) and leaf.value.id == me:
                found.append(leaf.attr)
    return found


class _Fields(ast.NodeTransformer):
    """`self.x` as the local `_self_x` in one top-level statement of `__init__`, where `set_before` are the attributes
    set by the statements before it and `targets` those it sets itself; any other use of `self` is refused."""

    def __init__(self, cls, me, set_before, targets):
        self.cls, self.me, self.set_before, self.targets, self.depth = cls, me, set_before, targets, 0

    def visit_Attribute(self, node):
        if not (isinstance(node.value, ast.Name) and node.value.id == self.me):
            return self.generic_visit(node)
        if isinstance(node.ctx, ast.Store):
            if self.depth or node.attr not in self.targets:
                raise _refusal(self.cls, f"it sets self.{node.attr} inside a block or an expression (an if, a loop)")
        elif node.attr not in self.set_before:
            raise _refusal(self.cls, f"it reads self.{node.attr} before setting it (a method, a class attribute)")
        return ast.copy_location(ast.Name(f"_self_{node.attr}", node.ctx), node)

    def visit_AugAssign(self, node):  # `self.w += x` reads self.w first
        if isinstance(node.target, ast.Attribute) and isinstance(node.target.value, ast.Name) \
                and node.target.value.id == self.me and node.target.attr not in self.set_before:
            raise _refusal(self.cls, f"it updates self.{node.target.attr} before setting it")
        return self.generic_visit(node)

    def visit_Name(self, node):
        if node.id == self.me:
            raise _refusal(self.cls, f"it uses `{self.me}` itself, not only its attributes (a method call, passing it)")
        return node

    def visit_Return(self, node):
        raise _refusal(self.cls, "it returns early")

    def visit_Delete(self, node):
        raise _refusal(self.cls, "it deletes an attribute")

    def _nested(self, node):
        self.depth += 1
        try:
            return self.generic_visit(node)
        finally:
            self.depth -= 1

    visit_If = visit_For = visit_While = visit_With = visit_Try = visit_Match = _nested
    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _nested


def object_of(cls, fields):
    """A new object of the plain class `cls` whose attributes are `fields` (no `__init__` runs: `fields` is what it
    would have set)."""
    obj = object.__new__(cls)
    obj.__dict__.update(fields)
    return obj


@adjoint(object_of)
def _object_of_rule(cls, fields):
    obj = object_of(cls, fields)

    def back(dy):  # the object's cotangent, by attribute, is the fields' (a dict's cotangent is a dict)
        dy = as_fields(obj, dy)
        return (None, None if dy is None else {k: dy.get(k) for k in fields})
    return obj, back


def field_cotangents(dy):
    """An object's cotangent (a StructGrad of its attributes, or None) as its fields dict's."""
    return None if dy is None else dict(dy)


@adjoint(field_cotangents)
def _field_cotangents_rule(dy):
    def back(d):
        return (None if d is None else StructGrad({k: v for k, v in d.items()}),)
    return field_cotangents(dy), back
