"""`try: ... except ...:` for lower(): the body becomes a function of its own, called through `runtime.attempt`.

The IR has no edge for an exception raised halfway through a block, and the backward must know which statements ran.
So the body runs as one call: the statements of `try` are compiled, at their own lines of the user's file, into a
function `_try_<line>` whose parameters are the function's variables the body reads or assigns, and which returns
`(False, (the assigned variables,))`, or `(True, value)` where the body returns. `attempt(fn, types, named, *args)`
(its rule differentiates `fn` as any call) gives `(True, fn's result)`, or `(False, exception)` where one of the
handlers' types was raised (`named`: which handlers bind it, `except E as e`). What follows is plain Python the lowering already knows:

    _try = attempt(_try_12, (LinAlgError,), (False,), K)
    if _try[0]:
        L, = _try[1][1]            # (`return _try[1][1]` where the body returned)
        <the else clause>
    else:
        <the handler whose type matches _try[1], with `as e` bound; else the exception raised again>

A body that fails leaves the variables it assigned as they were before it (Python keeps what it assigned before the
failing statement): refused where a handler, or code after the `try` a handler may fall through to, reads a variable
that a statement before the body's last one (or a compound last one) assigns (in a loop that retries
the body until it succeeds, only that loop's code can: `_retrying_loop`). Updates in place of the arguments are
refused at run time by the rule. A `break` or `continue` of the body returns `("break", (the assigned variables,))`,
after which the caller breaks (`while True: try: L = cholesky(K + j * I); break / except LinAlgError: j *= 10`).
`finally` is refused.
"""
import copy
import os

import gast

from .. import runtime as rt
from ..ir import Const
from ..source import register_made
from .jumps import LOOPS, SCOPES, _child_nodes, _walk_no_defs, assigned_names, flat_nodes


def _reads(nodes):
    """The names the nodes read, in order, nested functions included (their free variables become parameters)."""
    names = []
    for node in nodes:
        for n in gast.walk(node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id not in names:
                names.append(n.id)
    return names


_OWN = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep  # the package
_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def _assigned(stmts):
    """The names the statements bind in their function's scope, in order: not a comprehension's own variables (its
    scope), but an assignment expression's inside one (`[y := f(v) for v in xs]` binds `y` outside)."""
    flat = flat_nodes(stmts)
    own = {id(t) for m in flat if isinstance(m, _COMPREHENSIONS) for g in m.generators for t in gast.walk(g.target)}
    names = assigned_names(stmts, [m for m in flat if id(m) not in own])
    return names + [m.target.id for m in flat if isinstance(m, gast.NamedExpr) and m.target.id not in names]


def _bound_before_failing(stmt):
    """The names the assignment `stmt` binds before a later part of its storing may fail: Python stores the targets
    left to right, unpacking as it goes (`y = lst[5] = v` binds y, then fails; `y, (p, q) = v, (1.0,)` binds y, then
    fails to unpack the pair). A flat unpacking into names fails, if it does, before it binds any."""
    bound, partial = [], set()

    def store(target):
        if isinstance(target, gast.Starred):
            target = target.value
        if isinstance(target, gast.Name):
            bound.append(target.id)
            return
        partial.update(bound)  # (an unpacking, an item's or an attribute's store may fail)
        for e in getattr(target, "elts", ()) if isinstance(target, (gast.Tuple, gast.List)) else ():
            store(e)
    for t in stmt.targets if isinstance(stmt, gast.Assign) else ():
        store(t)
    return partial


def _returns_tagged(stmts):
    """The body's own `return v` (not a nested function's) made `return (True, v)`."""
    work = list(stmts)
    while work:
        n = work.pop()
        if isinstance(n, SCOPES):
            continue
        if isinstance(n, gast.Return):
            value = n.value if n.value is not None else gast.Constant(None, None)
            n.value = gast.copy_location(gast.Tuple([gast.Constant(True, None), value], gast.Load()), n)
        work.extend(c for c in gast.iter_child_nodes(n))


def _jumps_returned(block, assigned):
    """The body's own `break` and `continue` (not a nested loop's body's, nor a nested function's) made
    `return ("break", (the assigned variables,))`: the caller binds them, then breaks (or continues) its loop."""
    for k, s in enumerate(block):
        if isinstance(s, (gast.Break, gast.Continue)):
            names = gast.Tuple([gast.Name(n, gast.Load(), None, None) for n in assigned], gast.Load())
            kind = gast.Constant("break" if isinstance(s, gast.Break) else "continue", None)
            block[k] = gast.copy_location(gast.Return(gast.Tuple([kind, names], gast.Load())), s)
        elif isinstance(s, SCOPES):
            continue
        elif isinstance(s, LOOPS):
            _jumps_returned(s.orelse, assigned)  # (its body's jumps are its own; its else clause's leave ours)
        else:
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, field, None), list):
                    _jumps_returned(getattr(s, field), assigned)
            for h in getattr(s, "handlers", ()):
                _jumps_returned(h.body, assigned)


def _reraising(stmts, exc):
    """A handler's statements with its bare `raise` (not a nested handler's, nor a nested function's) made
    `raise <the caught exception>`: Python's re-raise of the exception being handled."""
    stmts = copy.deepcopy(stmts)
    work = list(stmts)
    while work:
        n = work.pop()
        if isinstance(n, (*SCOPES, gast.Try)):
            continue
        if isinstance(n, gast.Raise) and n.exc is None:
            n.exc = copy.deepcopy(exc)
        work.extend(gast.iter_child_nodes(n))
    return stmts


def _carried_reads(stmts):
    """The names the statements read before (or on the line where) they first assign them: in a loop, what a previous
    iteration left (`s = s + x[i]`), not what this one assigned first (`v = f(x); ... v`)."""
    names = [n for s in stmts for n in _walk_no_defs(s) if isinstance(n, gast.Name) and getattr(n, "lineno", None)]
    first = {}
    for n in names:
        if isinstance(n.ctx, gast.Store):
            first[n.id] = min(first.get(n.id, n.lineno), n.lineno)
    return {n.id for n in names if isinstance(n.ctx, gast.Load) and n.lineno <= first.get(n.id, n.lineno)}


def _retrying_loop(root, node, partial):
    """The loop that retries the `try` `node` until its body succeeds, when the variables `partial` that a failed body
    leaves behind can be seen only inside that loop: it has no normal exit (`while True:`, or an `else:` that raises or
    returns), no `break` but the body's own, and the body assigns each of them in its leading assignments, before any
    jump or compound statement (so every path through it, the `break` that leaves the loop included, assigns them
    again). The line-search idiom: `while True: try: y = f(x * step); check(y); break / except E: step *= 0.5`."""
    loop = _innermost_loop(root.body, node, None)
    if loop is None or loop is _ABSENT or not (isinstance(loop, gast.While) and isinstance(loop.test, gast.Constant) and loop.test.value
                            or _leaves(loop.orelse)):
        return None
    inside = {id(n) for s in node.body for n in gast.walk(s)}
    work = list(loop.body)
    while work:
        n = work.pop()
        if isinstance(n, gast.Break) and id(n) not in inside:
            return None
        work += n.orelse if isinstance(n, LOOPS) else [] if isinstance(n, SCOPES) else _child_nodes(n)
    lead = []
    for s in node.body:
        if not isinstance(s, gast.Assign):
            break
        lead.append(s)
    return loop if partial <= set(_assigned(lead)) else None


def _innermost_loop(stmts, node, loop):
    """The innermost loop of the function (not of a nested one) whose body holds the statement `node` (None where none
    does); `_ABSENT` where `stmts` do not hold it."""
    for s in stmts:
        if s is node:
            return loop
        if isinstance(s, SCOPES):
            continue
        for field in ("body", "orelse", "handlers", "finalbody"):
            inner = getattr(s, field, None)
            if isinstance(inner, list) and inner:
                found = _innermost_loop(inner, node, s if isinstance(s, LOOPS) and field == "body" else loop)
                if found is not _ABSENT:
                    return found
    return _ABSENT


_ABSENT = object()


def _leaves(stmts):
    """Does this block always leave by `raise` or `return` (so nothing after the `try` runs after it)?"""
    return bool(stmts) and isinstance(stmts[-1], (gast.Raise, gast.Return))


class Tries:
    """The `try` part of the Lowerer (mixed into it)."""

    def stmt_Try(self, node):
        if not node.handlers:
            self.fail("try/finally", node)
        if self.filename.startswith(_OWN):  # (zygotepy's own code, which nesting transforms: its rules' `try`s
            self.fail("try/except", node)  # stay where an outer level refuses them, as torch's autograd fallback)
        if node.finalbody:
            self.fail("try/except with a finally clause", node.finalbody[0])
        for n in flat_nodes(node.body):  # (what compiling the body outside its class would change)
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == "super" and not n.args:
                self.fail("super() without arguments inside try", n)
            if isinstance(n, gast.Delete) and any(isinstance(t, gast.Name) for t in n.targets):
                self.fail("deleting a variable inside try", n)
            name = n.attr if isinstance(n, gast.Attribute) else n.id if isinstance(n, gast.Name) else ""
            if name.startswith("__") and not name.endswith("__"):
                self.fail(f"the private name {name} inside try", n)
        names = [n for n in _reads(node.body) + _assigned(node.body) if n in self.locals or n in self.freevars]
        params = list(dict.fromkeys(names))
        assigned = [n for n in _assigned(node.body) if n in self.locals]
        self.refuse_partial(node, assigned)
        self.refuse_stale_captures(node, params)
        fn = self.body_function(node, params, assigned)
        kinds = [h.type if h.type is not None else gast.Name("BaseException", gast.Load(), None, None)
                 for h in node.handlers]
        caught = self.expr(gast.copy_location(gast.Tuple(kinds, gast.Load()), node), hint="_caught")
        args = [self.expr_Name(gast.Name(n, gast.Load(), None, None), "_t", checked=False)
                if n in self.env or n in self.freevars else Const(rt.UNBOUND) for n in params]
        named = Const(tuple(h.name is not None for h in node.handlers))
        out = self.call(Const(rt.attempt), [Const(fn), caught, named, *args], hint="_try")
        self.lower_outcome(node, out, caught, assigned)

    def refuse_partial(self, node, assigned):
        """Refuse what the failure of a body after it assigned a variable would let be seen (see the module)."""
        body = node.body
        while len(body) > 1 and isinstance(body[-1], (gast.Break, gast.Continue)):  # (which raise nothing)
            body = body[:-1]
        # (a simple last statement binds its names after all it calls ran; an assignment expression in it, before)
        atomic = isinstance(body[-1], (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.Return, gast.Pass)) \
            and not any(isinstance(n, gast.NamedExpr) for n in gast.walk(body[-1])) or \
            isinstance(body[-1], (gast.Import, gast.ImportFrom)) and len(body[-1].names) == 1  # (binds once found)
        partial = set(_assigned(body[:-1] if atomic else body)) & set(assigned)
        stores = _bound_before_failing(body[-1]) & set(assigned) - partial if atomic else set()
        partial |= stores
        if not partial:
            return
        seen = set(_reads(node.handlers)) | (partial & self.cellvars)  # (a nested function may read it anywhere)
        if self.loop_depth:  # (the body's next iteration reads what a failed one left: `s = s + x[i]`)
            seen |= _carried_reads(node.body)
        if not all(_leaves(h.body) for h in node.handlers):
            inside = {id(n) for s in body + node.orelse for n in gast.walk(s)}
            loop = _retrying_loop(self.source_node, node, partial)
            scope = self.source_node.body if loop is None else \
                [*loop.body, *([loop.test] if isinstance(loop, gast.While) else [])]
            seen |= {n.id for s in scope for n in gast.walk(s) if isinstance(n, gast.Name)
                     and isinstance(n.ctx, gast.Load) and id(n) not in inside}
        read = sorted(partial & seen)
        if read and set(read) <= stores:
            self.fail(f"a try whose last assignment binds {', '.join(map(repr, read))} before a later target that "
                      "may fail, read where the exception is handled", body[-1],
                      "zygotepy runs the body as one step, so a failed body leaves its variables as they were before "
                      "it, where Python binds an assignment's targets one by one; bind them in a statement of their "
                      "own, before the try (y = v, then try: lst[5] = v) or after the targets that may fail")
        if read:
            self.fail(f"a try whose body assigns {', '.join(map(repr, read))} before a statement that may raise, "
                      "read where the exception is handled", node,
                      "zygotepy runs the body as one step, so a failed body leaves its variables as they were before "
                      "it; assign them in the body's last statement, or before the try")

    def refuse_stale_captures(self, node, params):
        """A function the body makes (`h = lambda t: t * k`) captures the body function's own copy of `k`, its
        parameter: where the enclosing function assigns `k` again after the `try` (or the `try` sits in a loop), a call
        would read the old value, where Python's closure reads the new one. Refused."""
        end = getattr(node, "end_lineno", None) or node.lineno
        for n in flat_nodes(node.body):
            if not isinstance(n, (gast.Lambda, gast.FunctionDef)):
                continue
            own = {a.id for a in n.args.args + n.args.kwonlyargs if isinstance(a, gast.Name)}
            captured = {m.id for m in gast.walk(n) if isinstance(m, gast.Name) and isinstance(m.ctx, gast.Load)
                        and m.id in params and m.id not in own}
            later = {m.id for s in self.source_node.body for m in gast.walk(s) if isinstance(m, gast.Name)
                     and isinstance(m.ctx, gast.Store) and (self.loop_depth or (m.lineno or 0) > end)}
            if captured & later:
                self.fail(f"a function made inside try that captures {', '.join(map(repr, sorted(captured & later)))}"
                          f", assigned again after it", n, "make the function before the try, or pass the value "
                          "as an argument (lambda t, k=k: t * k)")

    def body_function(self, node, params, assigned):
        """The body compiled as `def _try_<line>(*params)`, at its lines of the user's file, with the user's globals;
        its source, for zygotepy, is that node (`source.register_made`)."""
        body = copy.deepcopy(node.body)
        _returns_tagged(body)
        _jumps_returned(body, assigned)
        names = gast.Tuple([gast.Name(n, gast.Load(), None, None) for n in assigned], gast.Load())
        end = gast.Return(gast.Tuple([gast.Constant(False, None), names], gast.Load()))
        last = max(getattr(n, "end_lineno", None) or getattr(n, "lineno", node.lineno) for n in gast.walk(body[-1])
                   if hasattr(n, "lineno"))
        gast.copy_location(end, body[-1])
        for n in gast.walk(end):
            n.lineno = n.end_lineno = last
        arguments = gast.arguments([gast.Name(p, gast.Param(), None, None) for p in params], [], None, [], [], None, [])
        name = f"_try_{node.lineno}"
        fdef = gast.FunctionDef(name, arguments, [*body, end], [], None, None)
        gast.copy_location(fdef, node)
        fdef.end_lineno = last
        module = gast.fix_missing_locations(gast.Module([fdef], []))
        scope = {}
        exec(compile(gast.gast_to_ast(module), self.filename, "exec"), self.globals, scope)
        fn = scope[name]
        fn.__qualname__ = f"{self.code.co_name}.<locals>.{name}"
        register_made(fn, copy.deepcopy(fdef), self.filename, self.source_lines)
        return fn

    def lower_outcome(self, node, out, caught, assigned):
        """The `if _try[0]: ... else: <handlers>` after the call, lowered from gast over names bound to the IR atoms."""
        out_name, caught_name, check = self.namer.fresh("_try"), self.namer.fresh("_caught"), self.namer.fresh("_is")
        self.special[out_name], self.special[caught_name], self.special[check] = out, caught, Const(isinstance)
        load = lambda n: gast.Name(n, gast.Load(), None, None)  # noqa: E731
        item = lambda v, k: gast.Subscript(v, gast.Constant(k, None), gast.Load())  # noqa: E731
        value = item(load(out_name), 1)
        success = []
        tag = lambda v: gast.Compare(item(value, 0), [gast.Is()], [gast.Constant(v, None)])  # noqa: E731
        if any(isinstance(n, gast.Return) for n in flat_nodes(node.body)):
            success.append(gast.If(tag(True), [gast.Return(item(value, 1))], []))
        if assigned:
            targets = gast.Tuple([gast.Name(n, gast.Store(), None, None) for n in assigned], gast.Store())
            success.append(gast.Assign([targets], item(value, 1), None))
        for kind, jump in (("break", gast.Break), ("continue", gast.Continue)):
            if self.jumps(node, (jump,), body_only=True):  # (the body's own: `while True: try: ...; break`)
                success.append(gast.If(gast.Compare(item(value, 0), [gast.Eq()], [gast.Constant(kind, None)]),
                                       [jump()], []))
        success += node.orelse
        failure = [gast.Raise(value, None)]
        for k in reversed(range(len(node.handlers))):
            h = node.handlers[k]
            bind = [gast.Assign([gast.Name(h.name.id, gast.Store(), None, None)], value, None)] if h.name else []
            test = gast.Call(load(check), [value, item(load(caught_name), k)], [])
            failure = [gast.If(test, bind + _reraising(h.body, value), failure)]
        outcome = gast.If(item(load(out_name), 0), success or [gast.Pass()], failure)
        for n in gast.walk(outcome):
            if not hasattr(n, "lineno") or getattr(n, "lineno", None) is None:
                gast.copy_location(n, node)
        self.stmt(outcome)
        del self.special[out_name], self.special[caught_name], self.special[check]

