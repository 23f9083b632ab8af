"""A user's generator function, called where a gradient flows (`for p in model.parameters():`, `for layer in self:`
with `__iter__` yielding, `sum(f(v) for v in pairs(xs))`), differentiated as the function that computes its items
when it is called: each `yield v` adds `v` to a list, `yield from it` the items of `it`, and the call returns an
iterator over that list, which watches what its arguments and captured variables reach (an item taken after one was
updated in place is refused, as Python's generator would read the new value: `next` here, a loop's next iteration in
lower/lazy.py).

Why eagerly: the adjoint of a suspended frame would need a tape per resumption; the items of a generator that only
reads are the same whenever they are computed, and zygotepy already computes generator expressions' items whole
(lower/lazy.py). What this cannot do is refused, never run differently:
- a generator that updates anything in place (a field, a list it was given, a helper's state): its updates would all
  happen before the first item is taken; found at run time, from the journal of updates (`checked_forward`);
- the value of a `yield` expression (`x = yield v`, what `send` gives), a `return` with a value (StopIteration's);
- an endless loop (`while True:` with no `break` or `return`), which would never end here;
- an iterator given to it (consumed whole here, but in part by Python where the caller stops early and reads it
  again): refused at run time.
A generator function called where no gradient flows runs as written, lazily.
"""
import inspect

import gast

from ..errors import UnsupportedSyntax
from ..runtime.context import current
from . import runtime as rt

ITEMS = "_yielded_items"  # the list the rewritten body appends its items to


def is_generator(code):
    return bool(code.co_flags & inspect.CO_GENERATOR)


def eager_body(node, filename, freevars=()):
    """Rewrite the gast FunctionDef `node` of a generator function in place into the function returning an iterator
    over its items (the module docstring says what is refused, naming the line); its items watch what its parameters
    and the variables it captures (`freevars`) reach."""
    args = node.args
    params = [a.id for a in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg)
              if a is not None] + [v for v in freevars if v != "__class__"]
    rewrite = _Eager(filename, params)
    body = [rewrite.visit(s) for s in node.body]
    start = gast.Assign(targets=[gast.Name(ITEMS, gast.Store(), None, None)], value=gast.List([], gast.Load()),
                        type_comment=None)
    node.body = [gast.copy_location(start, node.body[0]), *body,
                 gast.copy_location(_return_items(params), node.body[-1])]
    gast.fix_missing_locations(node)
    return node


def _return_items(params):
    """`return generated_items(_yielded_items, *params)`: an iterator over the items that refuses an item taken after
    something reachable from the parameters was updated in place (Python's generator would read it then)."""
    names = [gast.Name(p, gast.Load(), None, None) for p in params]
    return gast.Return(gast.Call(gast.Constant(rt.generated_items, None),
                                 [gast.Name(ITEMS, gast.Load(), None, None), *names], []))


def _append(value):
    """`_yielded_items = _yielded_items + value`: a new list (an update in place would be one the journal shows)."""
    joined = gast.BinOp(gast.Name(ITEMS, gast.Load(), None, None), gast.Add(), value)
    return gast.Assign(targets=[gast.Name(ITEMS, gast.Store(), None, None)], value=joined, type_comment=None)


class _Eager(gast.NodeTransformer):
    def __init__(self, filename, params):
        self.filename, self.params = filename, params

    def _refuse(self, what, node, hint):
        raise UnsupportedSyntax(what, self.filename, getattr(node, "lineno", 0), hint)

    def visit_FunctionDef(self, node):  # (a nested definition keeps its own yields and returns)
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_Expr(self, node):
        if isinstance(node.value, gast.Yield):
            value = node.value.value or gast.Constant(None, None)
            return gast.copy_location(_append(gast.List([self.visit(value)], gast.Load())), node)
        if isinstance(node.value, gast.YieldFrom):
            items = gast.Call(gast.Name("list", gast.Load(), None, None), [self.visit(node.value.value)], [])
            return gast.copy_location(_append(items), node)
        return self.generic_visit(node)

    def visit_Yield(self, node):
        self._refuse("the value of a yield expression in a generator function", node,
                     "a generator called where a gradient flows computes its items when called: nothing is sent")

    visit_YieldFrom = visit_Yield

    def visit_Return(self, node):
        if node.value is not None and not (isinstance(node.value, gast.Constant) and node.value.value is None):
            self._refuse("a generator function's return value", node, "return without a value")
        return gast.copy_location(_return_items(self.params), node)

    def visit_While(self, node):
        if isinstance(node.test, gast.Constant) and node.test.value and not node.orelse and not _leaves(node.body):
            self._refuse("an endless generator (`while True:` with no break or return)", node,
                         "a generator called where a gradient flows computes its items when called: bound it, "
                         "e.g. `for _ in range(n):`")
        return self.generic_visit(node)


def _leaves(body):
    """Can the loop with this body end: a `break` of its own, or a `return`, anywhere in it?"""
    work = list(body)
    while work:
        s = work.pop()
        if isinstance(s, (gast.Return, gast.Break)):
            return True
        if isinstance(s, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda)):
            continue
        if isinstance(s, (gast.For, gast.While, gast.AsyncFor)):  # (a break there ends that loop only)
            work.extend(n for n in gast.walk(s) if isinstance(n, gast.Return))
            continue
        work.extend(gast.iter_child_nodes(s))
    return False


def checked_forward(fwd, code):
    """The derived forward of a generator function, refusing at run time what its eager items cannot do: an update in
    place while they are computed, an iterator argument."""
    def forward(*args, **kwargs):
        for a in (*args, *kwargs.values()):
            if hasattr(type(a), "__next__"):
                raise UnsupportedSyntax(f"the generator function {code.co_name} given an iterator", code.co_filename,
                                        code.co_firstlineno, "its items are computed when it is called, which takes "
                                        "the iterator whole: pass a list")
        log = current().log
        mark = len(log)
        out = fwd(*args, **kwargs)
        if len(log) > mark:
            raise UnsupportedSyntax(f"the generator function {code.co_name}, which updates an object in place",
                                    code.co_filename, code.co_firstlineno, "its items are computed when it is "
                                    "called, so its updates would all happen before the first item is taken; update "
                                    "outside it")
        return out
    forward.__name__ = getattr(fwd, "__name__", "forward")
    return forward
