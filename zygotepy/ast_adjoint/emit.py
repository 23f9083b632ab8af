"""emit(): IR functions -> Python source text, readable and deterministic.

Well-known callees print as the syntax they came from (`operator.mul(a, b)` as `a * b`, `getattr(x, "W")` as `x.W`,
`callmethod(x, "sum")` as `x.sum()`, guards as `type(a) in _SC`), inlinable scalar derivatives are pasted in, and every
other constant becomes a named helper bound by the factory that wraps the generated functions. Simple statements are
printed by `ast.unparse`; this module prints the compound ones itself so that it can put a comment quoting the user's
source line above each block and know which generated line came from which user line.
"""
import ast
import operator

import numpy as np

from ..adjoints import registry
from . import dispatch, inline, items, printer
from . import runtime as rt
from .optimize.records import ARRAY_ARM, FURTHER_ARMS, Derivative, RuleRef
from .ir import Assign, Call, Const, Def, Global, If, Loop, Var
from .naming import const_name, is_literal

_BIN = {operator.add: ast.Add, operator.sub: ast.Sub, operator.mul: ast.Mult, operator.truediv: ast.Div,
        operator.floordiv: ast.FloorDiv, operator.mod: ast.Mod, operator.pow: ast.Pow, operator.matmul: ast.MatMult,
        operator.lshift: ast.LShift, operator.rshift: ast.RShift, operator.or_: ast.BitOr,
        operator.xor: ast.BitXor, operator.and_: ast.BitAnd}
_INPLACE = {operator.iadd: ast.Add, operator.isub: ast.Sub, operator.imul: ast.Mult, operator.itruediv: ast.Div,
            operator.ifloordiv: ast.FloorDiv, operator.imod: ast.Mod, operator.ipow: ast.Pow,
            operator.imatmul: ast.MatMult, operator.ilshift: ast.LShift, operator.irshift: ast.RShift,
            operator.ior: ast.BitOr, operator.ixor: ast.BitXor, operator.iand: ast.BitAnd}
_UNARY = {operator.neg: ast.USub, operator.pos: ast.UAdd, operator.not_: ast.Not, operator.invert: ast.Invert}
_CMP = {operator.lt: ast.Lt, operator.le: ast.LtE, operator.gt: ast.Gt, operator.ge: ast.GtE, operator.eq: ast.Eq,
        operator.ne: ast.NotEq, operator.is_: ast.Is, operator.is_not: ast.IsNot, rt.contained_in: ast.In,
        rt.not_contained_in: ast.NotIn, rt.is_same: ast.Is}
_PREFERRED = {type: "type", reversed: "reversed", tuple: "tuple", dispatch.J: "_J", dispatch.J_kw: "_J_kw",
              dispatch.J_need: "_J_need",
              rt.acc_var: "_acc", rt.SCALARS: "_SC", rt.NATIVE: "_NATIVE", dispatch.J_args: "_J",
              rt.number_value: "_number_value",
              dispatch.J_handing: "_J_handing", __build_class__: "_build_class",
              # the item paths' helpers (items.py)
              items.ItemRun: "_ItemRun", items.add_item: "_add_item", items.item_back: "_item_back",
              items.is_vector: "_is_vector", items.item_grads: "_item_grads", items.REALS: "_REALS",
              items.buffer_grads: "_buffer_grads",
              # the array path's (optimize/array_paths.py)
              ARRAY_ARM: "_ARRAY", **{arm: arm.name for arm in FURTHER_ARMS}, np.ndarray: "_ndarray", np.float64: "_float64"}


_LOAD, _STORE = ast.Load(), ast.Store()
_ARRAY_GUARDS = {rt.is_real_array: ("f", None), rt.is_real_matrix: ("f", 2), rt.is_real_vector: ("f", 1),
                 rt.is_real_data: ("fbiu", None), rt.is_real_value: ("f", None)}  # the kinds, the rank if one
_PLAIN = frozenset((int, float, bool, str, type(None)))  # literals that print as themselves (the common constants)
_LITERALS = frozenset((int, float, str))  # literals Python will not compare by identity without a warning
_IDENTITY = frozenset(map(id, (operator.is_, operator.is_not, rt.is_same, rt.is_none, rt.is_not_none)))


def _name(id_, store=False):
    """A Name node; shared between uses (the tree is only unparsed, never compiled or mutated), which saves building
    thousands of nodes per function."""
    key = (id_, store)
    node = _NAMES.get(key)
    if node is None:
        node = _NAMES[key] = ast.Name(id=id_, ctx=_STORE if store else _LOAD)
    return node


_NAMES = {}


class Emitter:
    def __init__(self, namer, source_lines, filename, globals_name):
        self.namer, self.lines, self.filename = namer, source_lines, filename
        self.globals_name = globals_name  # the factory's parameter holding the user's globals (a nested def's)
        self.helpers = {}      # helper name -> value, bound by the factory
        self.by_id = {}        # id(value) -> helper name

    # --- expressions --------------------------------------------------------------------------------------------------
    def helper(self, value, hint=None):
        key = id(value)
        if key not in self.by_id:
            preferred = _PREFERRED.get(value) if type(value).__hash__ is not None else None  # (a dict of defaults)
            name = self.namer.fresh(hint or preferred or const_name(value))
            self.by_id[key], self.helpers[name] = name, value
        return _name(self.by_id[key])

    def atom(self, a, index=False):
        """The expression for an atom; slices print as `a:b` only directly inside a subscript (`index=True`)."""
        kind = type(a)
        if kind is Var:
            return _name(a.name)
        if kind is Const and type(a.value) in _PLAIN:
            if type(a.value) in (int, float) and (a.value < 0 or str(a.value).startswith("-")):
                # `-2.0` as a unary minus: ast.unparse prints a negative Constant bare, so `(-2.0) ** 2` would read
                # back as `-(2.0 ** 2)` (and `(-1.5).__abs__()` as `-(1.5.__abs__())`)
                return ast.UnaryOp(ast.USub(), ast.Constant(-a.value))
            return ast.Constant(a.value)
        if kind is Global:
            head, *rest = a.path.split(".")
            node = _name(head)
            for attr in rest:
                node = ast.Attribute(node, attr, ast.Load())
            return node
        if kind is Call:
            return self.call(a)
        v = a.value
        if isinstance(v, slice) and is_literal(v):
            if not index:
                return ast.Call(self.helper(slice), [ast.Constant(p) for p in (v.start, v.stop, v.step)], [])
            return ast.Slice(*(ast.Constant(p) if p is not None else None for p in (v.start, v.stop, v.step)))
        if isinstance(v, tuple) and is_literal(v):
            return ast.Tuple([self.atom(Const(x), index) for x in v], ast.Load())
        if is_literal(v) and not isinstance(v, (frozenset, slice)):
            return ast.Constant(v)
        if isinstance(v, RuleRef):
            return self.helper(v.rule, const_name(v.target) + "_rule")
        return self.helper(v)

    def call(self, c):
        fn = c.fn.value if type(c.fn) is Const else None
        if id(fn) in _IDENTITY and not c.kwargs and c.star is None:
            if all(type(a) is Const for a in c.args):  # (`axis is None` once a call's shape made axis -1)
                return ast.Constant(bool(fn(*(a.value for a in c.args))))
            # a number or a string compared by identity is named, not written as a literal: Python warns of
            # `x is -1` (a SyntaxError under -W error), and the object is the one the lowering saw
            args = [self.helper(a.value) if type(a) is Const and type(a.value) in _LITERALS else self.atom(a)
                    for a in c.args]
        else:
            args = [self.atom(a) for a in c.args]
        sugar = self.sugar(fn, c, args) if fn is not None and not c.kwargs and c.star is None else None
        if sugar is not None:
            return sugar
        if fn is rt.callmethod:
            return self.plain(ast.Attribute(args[0], c.args[1].value, ast.Load()), c, args[2:])
        if isinstance(fn, Derivative):
            texts = {name: _unparsed(a) for name, a in zip(inline.params(fn.fn), args, strict=True)}
            return inline.element(fn.fn, fn.index, texts, lambda n, v: self.helper(v, n).id)
        return self.plain(self.atom(c.fn), c, args)

    def plain(self, fn_node, c, args):
        if c.star is not None:
            args = [*args, ast.Starred(self.atom(c.star), ast.Load())]
        kws = [ast.keyword(k, self.atom(v)) for k, v in c.kwargs]
        return ast.Call(fn_node, args, kws)

    def sugar(self, fn, c, args):
        """Python syntax for the callees the lowering introduced, or None."""
        try:
            if fn in _BIN:
                return ast.BinOp(args[0], _BIN[fn](), args[1])
            if fn in _UNARY:
                return ast.UnaryOp(_UNARY[fn](), args[0])
            if fn in _CMP:
                return ast.Compare(args[0], [_CMP[fn]()], [args[1]])
        except TypeError:  # an unhashable constant callee
            return None
        if fn is getattr and len(args) == 2 and isinstance(c.args[1], Const) and str(c.args[1].value).isidentifier():
            return ast.Attribute(args[0], c.args[1].value, ast.Load())
        if fn is operator.getitem:
            return ast.Subscript(args[0], self.atom(c.args[1], index=True), ast.Load())
        if fn is rt.tuple_of:
            return ast.Tuple(args, ast.Load())
        if fn is rt.list_of:
            return ast.List(args, ast.Load())
        if fn is rt.dict_of:
            return ast.Dict(args[::2], args[1::2])
        if fn is list.append:
            return ast.Call(ast.Attribute(args[0], "append", ast.Load()), args[1:], [])
        if fn is rt.is_scalar:
            return ast.Compare(ast.Call(self.helper(type), args, []), [ast.In()], [self.helper(rt.SCALARS)])
        if fn is items.is_real:
            return ast.Compare(ast.Call(self.helper(type), args, []), [ast.In()], [self.helper(items.REALS)])
        if fn is items.is_int:
            return ast.Compare(ast.Call(self.helper(type), args, []), [ast.Is()], [self.helper(int)])
        if fn in _ARRAY_GUARDS:  # `type(x) is _ndarray and x.dtype.kind == 'f'`: inline, no call (optimize/array_paths.py)
            x, (kinds, rank) = _unparsed(args[0]), _ARRAY_GUARDS[fn]
            nd, kind = self.helper(np.ndarray).id, f"{x}.dtype.kind {'==' if len(kinds) == 1 else 'in'} {kinds!r}"
            type_ = self.helper(type).id  # (`type` unless the function has a variable of that name: `type_2`)
            test = f"{type_}({x}) is {nd}{f' and {x}.ndim == {rank}' if rank else ''} and {kind}"
            if fn is rt.is_real_data:
                test = f"({type_}({x}) in {self.helper(rt.SCALARS).id} or {test})"
            elif fn is rt.is_real_value:
                test = f"({type_}({x}) is {self.helper(np.float64).id} or {test})"
            return ast.Name(test, _LOAD)  # pasted as text: ast.unparse would bracket the third test of an `and`
        if fn is registry.has_rule:  # `id(f) in _RULED`
            return ast.Compare(ast.Call(self.helper(id), args, []), [ast.In()], [self.helper(registry.RULED, "_RULED")])
        if fn is rt.is_native:
            return ast.Compare(ast.Call(self.helper(type), args, []), [ast.In()], [self.helper(rt.NATIVE)])
        if fn is rt.any_array:  # `(type(a) is _ndarray or type(b) is _ndarray)`
            nd, type_ = self.helper(np.ndarray).id, self.helper(type).id
            return ast.Name(f"({' or '.join(f'{type_}({_unparsed(a)}) is {nd}' for a in args)})", _LOAD)
        if fn is rt.pick:
            return ast.IfExp(args[0], args[1], args[2])
        if fn is rt.all_true:
            return args[0] if len(args) == 1 else ast.BoolOp(ast.And(), args)
        if fn is rt.is_none:
            return ast.Compare(args[0], [ast.Is()], [ast.Constant(None)])
        if fn is rt.is_not_none:
            return ast.Compare(args[0], [ast.IsNot()], [ast.Constant(None)])
        if fn is rt.acc_scalar:
            is_none = ast.Compare(args[0], [ast.Is()], [ast.Constant(None)])
            return ast.IfExp(is_none, args[1], ast.BinOp(args[0], ast.Add(), args[1]))
        return None

    def target(self, out):
        if isinstance(out, tuple):
            return ast.Tuple([self.target(o) for o in out], ast.Store())
        if out.name.startswith("*"):
            return ast.Starred(_name(out.name[1:], True), ast.Store())
        return _name(out.name, True)

    # --- statements ---------------------------------------------------------------------------------------------------
    def comment(self, line, last, call=False):
        """A marker statement that becomes `# line N: <source>` in the text (ast.unparse cannot print comments); a
        `call` marker also tells `_text_and_lines` that the block below is a callee inlined at that line."""
        if line and (line != last[0] or call) and 0 < line <= len(self.lines):
            last[0] = line
            return [ast.Expr(ast.Constant(f"{_MARK}{line}{' call' if call else ''}"))]
        return []

    def region(self, stmts, last):
        out = []
        for s in stmts:
            kind = type(s)
            inlined = kind is If and s.inlined
            line = getattr(s, "line", 0)
            if line and (line != last[0] or inlined):
                out += self.comment(line, last, inlined)
            if kind is Assign:
                out += self.inplace(s) or self.assign(s)
            elif kind is Def:
                code = self.helper(s.code, f"{s.code.co_name.strip('<>')}_code")
                cells = ast.Tuple([self.atom(c) for c in s.cells], ast.Load())
                kwdefaults = self.atom(Const(s.kwdefaults)) if s.kwdefaults else ast.Constant(None)
                defaults = ast.Tuple([self.atom(d) if isinstance(d, (Global, Var)) else ast.Constant(d)
                                      for d in s.defaults], ast.Load()) \
                    if s.defaults and any(isinstance(d, (Global, Var)) for d in s.defaults) else ast.Constant(s.defaults)
                make = ast.Call(self.helper(rt.make_closure),
                                [code, _name(self.globals_name), cells, defaults, kwdefaults, *map(self.atom, s.values)], [])
                out.append(_assign(self.target(s.out), make))
            elif kind is If:
                then, orelse = self.region(s.then, last), self.region(s.orelse, last)
                if then or not orelse:
                    out.append(ast.If(self.atom(s.cond), then or [ast.Pass()], orelse))
                else:  # `if pb is not None: ...`, not `if pb is None: pass else: ...`
                    out.append(ast.If(_negated(self.atom(s.cond)), orelse, []))
                if inlined:
                    last[0] = None  # what follows is the caller's code again: mark its line
            elif kind is Loop:
                out.append(self.loop(s, last))
            else:
                raise TypeError(f"cannot emit {s!r}")
        return out

    def assign(self, s):
        if s.value == s.out:  # (a fast path's `y = x` that tidy made `x = x`)
            return []
        value = self.call(s.value) if type(s.value) is Call else self.atom(s.value)
        if type(s.out) is Var and s.out.name == "_":
            return [ast.Expr(value)]
        return [_assign(self.target(s.out), value)]

    def inplace(self, s):
        """`y = operator.iadd(a, b)` prints as `y = a` then `y += b`: Python's own in-place semantics, at native speed."""
        c = s.value
        if not (type(c) is Call and type(c.fn) is Const and type(s.out) is Var and not c.kwargs and c.star is None):
            return None
        if c.fn.value is items.add_at:  # `_ = add_at(a, i, g)`: `a[i] += g`
            a, i, g = (self.atom(x) for x in c.args)
            return [ast.AugAssign(ast.Subscript(a, i, _STORE), ast.Add(), g)]
        if c.fn.value is items.store:  # `_ = store(x, i, v)`: `x[i] = v`
            x, i, v = (self.atom(a) for a in c.args)
            return [_assign(ast.Subscript(x, i, _STORE), v)]
        try:
            op = _INPLACE.get(c.fn.value)
        except TypeError:
            return None
        if op is None:
            return None
        if s.on_scalars and c.args[0] != s.out:  # Python numbers: `y = a * b` is what `y = a` then `y *= b` does,
            # and an outer level reading this code sees no alias updated maybe in place (followed to all it may reach)
            return [_assign(self.target(s.out), ast.BinOp(self.atom(c.args[0]), op(), self.atom(c.args[1])))]
        copy = [_assign(self.target(s.out), self.atom(c.args[0]))] if c.args[0] != s.out else []
        return copy + [ast.AugAssign(self.target(s.out), op(), self.atom(c.args[1]))]

    def loop(self, s, last):
        if s.target is not None:
            target = self.target(s.target) if s.target != Var("_") else _name("_", True)
            node = ast.For(target, self.atom(s.iter), None, [], lineno=0)
            node.body = self.region(s.body, last)
        elif len(s.test) == 1 and type(s.test[0]) is Assign and s.test[0].out == s.cond:
            node = ast.While(self.call(s.test[0].value), None, [])
            node.body = self.region(s.body, last)
        else:
            node = ast.While(ast.Constant(True), None, [])
            stop = ast.If(ast.UnaryOp(ast.Not(), self.atom(s.cond)), [ast.Break()], [])
            node.body = self.region(s.test, last) + [stop] + self.region(s.body, last)
        if s.exit is not None:
            node.body.append(ast.If(self.atom(s.exit), [ast.Break()], []))
        node.body = node.body or [ast.Pass()]
        node.orelse = []
        return node

    def function(self, fn, name, args):
        last = [fn.line]
        prologue = [Assign(Var(n), Global(f"{n}_cell.cell_contents")) for n in fn.freevars]
        body = self.region(prologue + fn.body, last) + [ast.Return(self.atom(fn.ret))]
        return ast.FunctionDef(name, args, body, [], None, None, lineno=0, type_params=[])


_MARK = "\x00zygotepy-line "


_NEGATED = {ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}


def _negated(test):
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _NEGATED:
        return ast.Compare(test.left, [_NEGATED[type(test.ops[0])]()], test.comparators)
    return ast.UnaryOp(ast.Not(), test)


def _assign(target, value):
    return ast.Assign([target], value, lineno=0)


def arguments(names, args=None):
    """An ast parameter list: the user's (from a gast `arguments` node, without defaults or annotations: those are
    bound at run time) or plain positional `names`."""
    plain = lambda ns: [ast.arg(n) for n in ns]  # noqa: E731
    if args is None:
        return ast.arguments([], plain(names), None, [], [], None, [])
    return ast.arguments(plain(a.id for a in args.posonlyargs), plain(a.id for a in args.args),
                         ast.arg(args.vararg.id) if args.vararg else None, plain(a.id for a in args.kwonlyargs),
                         [None] * len(args.kwonlyargs), ast.arg(args.kwarg.id) if args.kwarg else None, [])


def _text_and_lines(module, source_lines):
    """Unparse once; turn the line markers into comments quoting the user's line, and record which user line each
    generated line came from."""
    lines, line_map, current = [], {}, 0
    calls, pending = [], None  # (indent, line) of the inlined calls enclosing this line; a call marker's, until its `if`
    for raw in _unparsed_lines(module):
        body = raw.lstrip()
        indent = len(raw) - len(body)
        if body.lstrip("'\"").startswith("\\x00zygotepy-line "):  # a marker (first in a body: docstring quotes)
            text = body.strip("'\"")[len("\\x00zygotepy-line "):]
            current = int(text.split()[0])
            if text.endswith(" call"):
                pending = (indent, current)
            lines.append(f"{raw[:indent]}# line {current}: {source_lines[current - 1].strip()}")
            continue
        while calls and indent <= calls[-1][0]:
            calls.pop()
        if pending is not None:
            calls.append(pending)
            pending = None
        lines.append(raw)
        if current:
            outer = tuple(line for _, line in reversed(calls) if line != current) if calls else ()
            line_map[len(lines)] = (current, *outer) if outer else current
    return "\n".join(lines) + "\n", line_map


def _unparsed(node):
    """`ast.unparse(node)`, by the faster printer when it knows every node kind."""
    try:
        return printer.expression(node)
    except printer.Unsupported:
        return ast.unparse(node)


def _unparsed_lines(module):
    try:
        return printer.lines(module)
    except printer.Unsupported:
        return ast.unparse(module).splitlines()


def emit(adj, namer, source_lines, filename, cells, globals_name="_globals"):
    """Source text of a factory `_make(_globals, helpers..., cells...)` returning `(forward, backward)`, plus its
    helpers and the map from generated lines to user lines. `globals_name` is the namer's name for `_globals`, so
    that a user's local of that name does not hide it."""
    e = Emitter(namer, source_lines, filename, globals_name)
    fname = adj.forward.name
    forward = e.function(adj.forward, f"{fname}_forward", arguments((), adj.forward.signature))
    backward = e.function(adj.backward, f"{fname}_back", arguments([p.name for p in adj.backward.params]))
    ret = ast.Return(ast.Tuple([_name(forward.name), _name(backward.name)], ast.Load()))
    factory = ast.FunctionDef("_make", arguments([globals_name, *e.helpers, *cells]), [forward, backward, ret], [],
                              None, None, lineno=0, type_params=[])
    text, line_map = _text_and_lines(ast.Module([factory], []), source_lines)
    return text, e.helpers, line_map
