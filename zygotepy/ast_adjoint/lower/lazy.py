"""Loops whose items Python reads as it goes while zygotepy takes them when the loop begins, for the Lowerer (mixed
into it).

A lazy iterator (`reversed(y)`, `iter(y)`, `map(f, y)`, `filter(f, y)`, a generator over `y`) reads `y`'s items as the
loop reaches them; zygotepy's rules make lists of them when the loop begins (a generator expression is lowered as
one). The two differ where the loop's body updates `y` in place: written in the body, that is refused before anything
runs (`check_lazy_sources`); done by a call the lowering cannot see into (`for e in reversed(y): bump(y)`), the loop
watches `y` and refuses at the first iteration after an update (`runtime.LazyWatch`). The same holds for a loop over
a name such an iterator was assigned to (`it = iter(y)`, then `for v in it:`).

`enumerate(lst)` and `zip(lst, ...)` read the list's items by position as the loop goes, which zygotepy follows
(`refresh_iter`), but they also run as long as the list is then: a body that inserts into or removes from the list
changes how many iterations there are, which a list taken when the loop began cannot. Where the body passes the list
to a call or deletes from it, the loop watches its length and refuses a change.

A loop over a dict (`d`, `d.items()`, ...) or a set walks zygotepy's list of its items too, where Python's iterator
raises RuntimeError once the body changed the size: where the body may (`d[k] = v`, a call, `del`), the loop watches
the size, at each iteration and, for a loop no `break` or `return` leaves, after the last (`_walked_views`).
"""
import itertools
import random

import gast
import numpy as np

from .. import runtime as rt
from ..call_checks import library
from ..guards_runtime import iterator_taken_in_its_loop, kept_iterator_taken_in_part
from ..ir import Const, Global, Var
from .scan import updated_in_place

_LAZY = {"reversed", "iter", "map", "filter"}  # iterators whose items `runtime.iterate` takes when the loop begins
# itertools' iterators that take their items as they are asked (their rules make lists): kept in a name, they are
# used up and watched as `zip`'s and `map`'s are (`Lowerer.lazy_itertools`); not `tee` (a tuple of them), `groupby`
# (whose groups share its iterator) and the endless ones (`count`, `cycle`, `repeat`: refused where they are listed)
LAZY_ITERTOOLS = frozenset({itertools.chain, itertools.chain.from_iterable, itertools.accumulate, itertools.islice,
                            itertools.compress, itertools.takewhile, itertools.dropwhile, itertools.filterfalse,
                            itertools.zip_longest, itertools.pairwise, itertools.starmap, itertools.product,
                            itertools.combinations, itertools.combinations_with_replacement,
                            itertools.permutations})
_FRESH = {"range", "sorted", "list", "tuple", "set", "frozenset", "dict"}  # builtins making a new object of their items
_WALKERS = {"enumerate", "zip"}
_GENERATOR_ONLY = {"send", "throw", "close"}  # a generator's methods (and its `gi_*` attributes) an iterator lacks
_VIEWS = {"items", "keys", "values"}  # a dict's views, which a loop walks with an iterator of the dict  # what they walk, they walk lazily too
_USED_UP = {"sum", "list", "tuple", "set", "frozenset", "sorted", "min", "max", "dict"}  # (builtins taking every item)
# the draws of random generators (NumPy's Generator and RandomState, `np.random.*`, `random.*`), which update the
# generator's state: items computed ahead draw numbers Python never draws
_DRAWS = frozenset(n for source in (np.random.Generator, np.random.RandomState, random.Random) for n in dir(source)
                   if not n.startswith("_") and callable(getattr(source, n))) - {"seed", "getstate", "setstate"}


def _lazy_parts(expr):
    """The lazy iterators a loop walks through `expr`: itself, or what `enumerate` and `zip` walk (not what a call such
    as `list(...)` takes all at once)."""
    if isinstance(expr, gast.GeneratorExp):
        return [expr]
    if isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name):
        if expr.func.id in _LAZY:
            return [expr]
        if expr.func.id in _WALKERS:
            return [part for a in expr.args for part in _lazy_parts(a)]
    return []


def _lazy_sources(expr):
    """The Names the lazy iterators a loop walks through `expr` take their items from."""
    sources = []
    for part in _lazy_parts(expr):
        if isinstance(part, gast.GeneratorExp):
            sources.append(part.generators[0].iter)
        else:
            sources += part.args[1:] if part.func.id in ("map", "filter") else part.args[:1]
    return [s for s in sources if isinstance(s, gast.Name)]


def _read_as_taken(expr):
    """The names the lazy iterators of a loop's header read as each item is taken, not when they are made: a generator
    expression's (all but its first iterable), and those of the lambdas `map` and `filter` call."""
    parts, params = [], set()
    for part in _lazy_parts(expr):
        if isinstance(part, gast.GeneratorExp):
            parts += [part.elt, *part.generators[0].ifs, *part.generators[1:]]
            params |= {n.id for g in part.generators for n in gast.walk(g.target) if isinstance(n, gast.Name)}
        else:
            for fn in (a for a in part.args if isinstance(a, gast.Lambda)):
                parts.append(fn.body)
                params |= {n.id for n in gast.walk(fn.args) if isinstance(n, gast.Name)}
    return sorted(set(_free_names(parts)) - params)


def _walked_names(expr):
    """The names a loop over `expr` walks: `expr` itself, or what `enumerate` and `zip` walk."""
    if isinstance(expr, gast.Name):
        return [expr.id]
    if isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name) and expr.func.id in _WALKERS:
        return [name for a in expr.args for name in _walked_names(a)]
    return []


def _walked_views(expr, asked=True):
    """(name, asked) for each name whose dict or set a loop over `expr` walks with an iterator of its own: `d`,
    `d.items()`, `d.keys()`, `d.values()`, itself or through `enumerate` or `zip`. `asked`: is that iterator asked for
    one more item after the last iteration (where Python's raises too): walked itself, by enumerate, or first in zip."""
    if isinstance(expr, gast.Name):
        return [(expr.id, asked)]
    if not isinstance(expr, gast.Call) or expr.keywords:
        return []
    func = expr.func
    if isinstance(func, gast.Attribute) and func.attr in _VIEWS and isinstance(func.value, gast.Name) \
            and not expr.args:
        return [(func.value.id, asked)]
    if isinstance(func, gast.Name) and func.id in _WALKERS:
        return [view for k, a in enumerate(expr.args) for view in _walked_views(a, asked and (
            func.id == "enumerate" or k == 0))]
    return []


def _may_resize_view(stmts, name):
    """Could `stmts` change the size of the dict or set `name`: call anything (`d.pop(k)`, a helper given it or holding
    it), delete, store an item of it (`d[k] = v` adds a key), or update it with an operator (`s |= t`)?"""
    for n in (m for s in stmts for m in gast.walk(s)):
        if isinstance(n, (gast.Call, gast.Delete)):
            return True
        targets = n.targets if isinstance(n, gast.Assign) else [n.target] if isinstance(n, gast.AugAssign) else []
        if any(isinstance(t, gast.Name) and t.id == name and isinstance(n, gast.AugAssign)
               or isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name) and t.value.id == name
               for t in targets):
            return True
    return False


def _returns(stmts):
    """Does a `return` occur in `stmts` (not one of a function nested in them)?"""
    work = list(stmts)
    while work:
        n = work.pop()
        if isinstance(n, gast.Return):
            return True
        if not isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)):
            work.extend(gast.iter_child_nodes(n))
    return False


def _free_names(parts):
    """The names the expressions `parts` read (not a generator's own variables)."""
    bound = {n.id for part in parts for n in gast.walk(part) if isinstance(n, gast.Name)
             and isinstance(n.ctx, gast.Store)}
    return sorted({n.id for part in parts for n in gast.walk(part) if isinstance(n, gast.Name)} - bound)


def _may_resize(stmts, name):
    """Could `stmts` change the length of `name`'s object: pass it to a call (`lst.insert(...)`, `grow(lst)`) or
    delete from it?"""
    for n in (m for s in stmts for m in gast.walk(s)):
        if isinstance(n, (gast.Call, gast.Delete)) and any(
                isinstance(m, gast.Name) and m.id == name for m in gast.walk(n)):
            return True
    return False


def _breaks(stmts):
    """Does a `break` of this loop occur in `stmts` (not one of a loop or function nested in them)?"""
    for s in stmts:
        if isinstance(s, gast.Break):
            return True
        if isinstance(s, (gast.For, gast.While, gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            if isinstance(s, (gast.For, gast.While)) and _breaks(s.orelse):
                return True
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            if _breaks(getattr(s, field, None) or []):
                return True
        if isinstance(s, getattr(gast, "Match", ())) and any(_breaks(case.body) for case in s.cases):
            return True
    return False


class LazyIterators:
    """The checks of loops over lazy iterators and of lists whose length a loop's body may change."""

    def check_resumed_iterators(self, node):
        """Refuse a loop that may be left by `break` over an iterator kept in a name (`it = iter(xs)`, then
        `for v in it:`) that is taken from again in or after the loop (`next(it)`, another loop over it): zygotepy's
        loop takes all of the iterator's items when it begins, Python only those the loop reached (the value differed
        from Python's)."""
        self.lazy_parts(node)  # (finds the names lazy iterators were assigned to)
        for name in sorted({n for n in _walked_names(node.iter) if n in self.locals}):
            read = next((n for s in node.body for n in gast.walk(s) if isinstance(n, gast.Name) and n.id == name
                         and isinstance(n.ctx, gast.Load) and self.may_take_from(n)), None)
            if read is not None:  # (`for v in it: w = next(it, 1.0)`: refused where `it` is an iterator)
                self.call(Const(iterator_taken_in_its_loop), [self.expr(gast.Name(name, gast.Load(), None, None)),
                                                              Const(name), Const(self.filename),
                                                              Const(node.lineno), Const(read.lineno)], hint="_")
        names = {n for n in _walked_names(node.iter) if self._lazy_assigned.get(n)}
        if not _breaks(node.body):
            return
        header = {id(n) for n in gast.walk(node.iter)}
        for source in _lazy_sources(node.iter):
            # what a lazy iterator of the header walks (`for v in (2 * t for t in it)`, `map(f, it)`), read again:
            # refused at run time where it is an iterator (a list walked so is left as it is)
            if source.id in self.locals and self.read_again(source.id, node.lineno, header) is not None:
                self.call(Const(kept_iterator_taken_in_part), [self.expr(source), Const(source.id),
                                                              Const(self.filename), Const(node.lineno)], hint="_")
        for name in sorted(names):
            n = self.read_again(name, node.lineno, header)
            if n is not None:
                self.fail(f"a loop that may be left by break over the iterator {n.id!r}, which is taken from again "
                          f"(line {n.lineno})", node.iter,
                          hint="zygotepy's loop takes all of the iterator's items when it begins, Python only those "
                               "the loop reached: take the items by index from list(...) of the iterator, or with "
                               "next(...)")

    def read_again(self, name, after, skip=()):
        """The first read of the local `name` after line `after`, or anywhere while a loop is being lowered (its next
        iteration reads again), not counting the nodes whose ids are in `skip`; None where there is none."""
        return next((n for n in gast.walk(self.source_node) if isinstance(n, gast.Name) and n.id == name
                     and isinstance(n.ctx, gast.Load) and id(n) not in skip
                     and (n.lineno > after or self.loop_depth)), None)

    def check_lazy_sources(self, node):
        """Refuse a loop over a lazy iterator of a name its body updates in place (see the module docstring)."""
        names = set(_free_names(self.lazy_parts(node)))
        updated = sorted(set().union(*(updated_in_place(s, names) for s in node.body))) if names else []
        if updated:
            self.fail(f"a loop over a lazy iterator of {updated[0]!r} whose body updates {updated[0]!r} in place",
                      node.iter, hint="zygotepy takes the iterator's items when the loop begins, Python as the loop "
                      "reaches them: loop by index, or over list(...) of the iterator for the items of the start")
        read = set(_read_as_taken(node.iter))
        rebound = sorted(read & {n.id for s in node.body for n in gast.walk(s) if isinstance(n, gast.Name)
                                 and isinstance(n.ctx, gast.Store)}) if read else []
        if rebound:  # (`for t in (s * k for k in ks): s = s + t`: Python's generator reads each new `s`)
            self.fail(f"a loop over a lazy iterator that reads {rebound[0]!r} as it goes, whose body assigns "
                      f"{rebound[0]!r}", node.iter, hint="zygotepy takes the iterator's items when the loop begins, "
                      "Python as the loop reaches them: compute each item in the loop's body instead")

    def check_generator_effects(self, node):
        """Refuse the generator expression `node` where it calls what may update an object (a user's method or helper:
        `a.mul(2.0)` with `self.v = ...` in `mul`) and Python may take its items in part or in turns (`next`, `any`,
        kept in a name, given to zip or a helper, a loop that may stop early): zygotepy computes every item, with its
        update, when it is made, Python each as it is taken. One that `sum`, `list`, ... or a loop without `break`
        uses up at once does the same updates in the same order. True where the items may be taken in part."""
        self.refuse_generator_methods(node)
        if self.taken_whole(node) or library(self.code.co_filename):  # (the standard library's `type(obj)(f(v) for v in obj)`)
            return False
        for n in gast.walk(node):
            if isinstance(n, gast.Call) and (
                    isinstance(n.func, gast.Attribute) and (self.updating_method(n.func.attr)
                                                            or self.object_attribute(n.func.attr)
                                                            or n.func.attr in _DRAWS)
                    or isinstance(n.func, gast.Name) and n.func.id not in self.locals
                    and n.func.id in self.globals and self.updating_helper(Global(n.func.id))):
                self.fail("a call that may update an object in a generator expression whose items may be taken in "
                          "part or in turns", n, "zygotepy computes a generator's items when it is made, Python each "
                          "as it is taken: use a list comprehension, or a loop")
        return True

    def refuse_generator_methods(self, node):
        """Refuse `.send`, `.throw`, `.close` or a `gi_*` attribute of the generator expression `node`, read on it or on
        a name it is assigned to (`g = (...)`, then `g.close()`): zygotepy hands a generator expression out as an
        iterator over the list of its items, which has none of them (the call failed with AttributeError)."""
        parent = self.parent_of(node)
        reads = [parent] if isinstance(parent, gast.Attribute) and parent.value is node else []
        if isinstance(parent, gast.Assign) and parent.value is node:
            names = {t.id for t in parent.targets if isinstance(t, gast.Name)}
            reads += [n for n in gast.walk(self.source_node) if isinstance(n, gast.Attribute)
                      and isinstance(n.value, gast.Name) and n.value.id in names]
        for n in reads:
            if n.attr in _GENERATOR_ONLY or n.attr.startswith("gi_"):
                self.fail(f"the generator method or attribute .{n.attr} of a generator expression", n,
                          "zygotepy computes a generator's items when it is made and hands out an iterator over them, "
                          "which has no generator methods: stop taking items instead of close(), raise with a raise "
                          "statement instead of throw(), or write a generator function")

    def refuse_kept_draws(self, node):
        """An iterator kept in a name (`gen = (mu + rng.normal() for _ in r)`, `map(lambda v: ...)`, then `next(gen)`)
        whose items draw random numbers: computed when it is made, it would draw them all, where Python draws as the
        items are taken (the journal sees no update of a generator's state, which the kept iterator's check reads)."""
        if isinstance(node, gast.GeneratorExp):  # (`g = (...)`, then `g.close()`)
            self.refuse_generator_methods(node)
        if library(self.code.co_filename):
            return
        lazy = [node] if isinstance(node, gast.GeneratorExp) else [n for n in gast.walk(node) if isinstance(n, gast.Lambda)]
        for n in (m for part in lazy for m in gast.walk(part)):  # (`map(lambda v: v + rng.normal(), xs)` too)
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and n.func.attr in _DRAWS:
                self.fail("a draw of random numbers in an iterator kept in a name", n, "zygotepy "
                          "computes a generator's items when it is made, Python each as it is taken: use a list "
                          "comprehension, or a loop")

    def taken_whole(self, node):
        """Is the generator expression `node` used up at once where it stands: the argument of `sum`, `list`, `max`,
        ..., the iterable of a comprehension, or of a loop that neither breaks nor returns?"""
        parent = self.parent_of(node)
        if isinstance(parent, gast.Call):
            func = parent.func
            return node in parent.args and (isinstance(func, gast.Name) and func.id in _USED_UP
                                            and func.id not in self.locals and func.id not in self.globals
                                            or isinstance(func, gast.Attribute) and func.attr == "join")
        if isinstance(parent, gast.comprehension):
            return parent.iter is node
        if isinstance(parent, gast.For) and parent.iter is node:
            return not _breaks(parent.body) and not any(isinstance(n, gast.Return) for s in parent.body
                                                        for n in gast.walk(s))
        return False

    def parent_of(self, node):
        """The node of the function's source that holds `node` (None for the function itself)."""
        parents = self.__dict__.get("_parents")
        if parents is None:
            parents = self._parents = {id(c): p for p in gast.walk(self.source_node) for c in gast.iter_child_nodes(p)}
        return parents.get(id(node))

    def may_take_from(self, name):
        """Could this read of a name take items from the iterator it may hold: an argument of a call (`next(it)`,
        `sum(it)`, `helper(it)`), what a loop or comprehension walks, `*it`? (`xs[0]`, `len(xs)`, `xs.shape` cannot.)"""
        parent = self.parent_of(name)
        return isinstance(parent, (gast.Call, gast.Starred, gast.YieldFrom)) and getattr(parent, "func", None) is not \
            name or isinstance(parent, (gast.For, gast.comprehension)) and parent.iter is name

    def lazy_itertools(self, value):
        """Is `value` a call of one of itertools' lazy iterators (`itertools.chain(...)`, `accumulate(...)` imported)?"""
        func = value.func if isinstance(value, gast.Call) else None
        path = []
        while isinstance(func, gast.Attribute):
            path.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name):
            return False
        try:
            return self.resolve(".".join([func.id, *reversed(path)])) in LAZY_ITERTOOLS
        except TypeError:  # (an unhashable object)
            return False

    def lazy_parts(self, node):
        """The lazy iterators the `for` loop `node` walks: written in its header, or assigned to a name it walks
        (`it = iter(lst)`, `c = itertools.chain(a, b)`, then `for v in it:`)."""
        if not hasattr(self, "_lazy_assigned"):
            self._lazy_assigned = {}
            for n in gast.walk(self.source_node):
                if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name):
                    parts = _lazy_parts(n.value) or ([n.value] if self.lazy_itertools(n.value) else [])
                    self._lazy_assigned.setdefault(n.targets[0].id, []).extend(parts)
        parts = [*_lazy_parts(node.iter), *(p for name in _walked_names(node.iter)
                                            for p in self._lazy_assigned.get(name, ()))]
        return [p for p in parts if not self.walks_fresh(p)]

    def walks_fresh(self, part):
        """Does the lazy iterator `part` walk an object its argument makes when the iterator is made
        (`reversed(range(len(lst)))`, `iter(sorted(lst))`, `reversed(list(lst))`)? The names inside are read then,
        once: a body that deletes from `lst` does not change what the loop walks (the builtin itself, not a name of
        the function's or its module's)."""
        if not (isinstance(part, gast.Call) and isinstance(part.func, gast.Name) and part.func.id in ("reversed", "iter")
                and len(part.args) == 1 and not part.keywords):
            return False
        made = part.args[0]
        return isinstance(made, gast.Call) and isinstance(made.func, gast.Name) and made.func.id in _FRESH \
            and not any(made.func.id in names for names in (self.locals, self.globals, self.code.co_freevars))

    def walked_by_reference(self, parts, name):
        """Do the lazy iterators `parts` read `name` only as `reversed(name)` or `iter(name)` (the builtins)? Those give
        the very objects its slots hold, so an update of one of them (`n.value = ...` in `for n in reversed(nodes)`,
        which the links log as an update of `nodes`) leaves zygotepy's items of the start what Python's iterator
        gives: the watch then refuses only a change of its slots (`rt.LazyWatch.slots`). Not `map`, `filter` or a
        generator, whose items zygotepy computes from the objects' state when the loop begins."""
        reading = [p for p in parts if name in _free_names([p])]
        return bool(reading) and all(
            isinstance(p, gast.Call) and isinstance(p.func, gast.Name) and p.func.id in ("reversed", "iter")
            and len(p.args) == 1 and not p.keywords and isinstance(p.args[0], gast.Name) and p.args[0].id == name
            and not any(p.func.id in names for names in (self.locals, self.globals, self.code.co_freevars))
            for p in reading)

    def watch_lazy_sources(self, node):
        """Before the loop `node`: a `rt.LazyWatch` of the local objects a lazy iterator of it walks, when its body
        calls something (which may update one of them where this lowering cannot see), and of the lists `enumerate`
        or `zip` walk, when its body may change their length; checked at the start of each iteration."""
        self.lazy_watches = getattr(self, "lazy_watches", {})
        if self.code.co_filename.startswith("<zygotepy:"):  # (generated code walks its own tape, which no call updates)
            return
        local = lambda names: [(n, self.env[n]) for n in names if isinstance(self.env.get(n), Var)]  # noqa: E731
        parts = self.lazy_parts(node)
        sources = local(_free_names(parts))
        if not any(isinstance(n, gast.Call) for s in node.body for n in gast.walk(s)):
            sources = []
        by_reference = tuple(self.walked_by_reference(parts, name) for name, _ in sources)
        walkers = isinstance(node.iter, gast.Call) and isinstance(node.iter.func, gast.Name) \
            and node.iter.func.id in _WALKERS and node.iter.func.id not in self.locals
        asked = {}
        for name, ask in _walked_views(node.iter):  # (`zip(d, d)`: asked if either is)
            asked[name] = asked.get(name, False) or ask
        views = local(n for n in asked if _may_resize_view(node.body, n))
        sized = local(n for n in _walked_names(node.iter) if _may_resize(node.body, n)) if walkers else []
        if sources or sized or views:
            counts = (len(sources), len(sized), len(views), by_reference) if views or any(by_reference) \
                else len(sources)
            watch = self.call(Const(rt.watch_lazy), [Const(counts), *(v for _, v in sources + sized + views)],
                              hint="_watch")
            self.lazy_watches[id(node)] = (watch, tuple(n for n, _ in sources + sized + views),
                                           tuple(asked[n] for n, _ in views))

    def check_watches(self, node):
        """At the start of each iteration of the loop `node`: its watch, if it has one."""
        watch = getattr(self, "lazy_watches", {}).get(id(node))
        if watch is not None:
            self.call(Const(rt.lazy_unchanged), [watch[0], Const((self.filename, node.lineno, watch[1]))], hint="_")

    def end_watches(self, node):
        """After the loop `node`: where it walks a dict or a set, and cannot be left by `break` or `return`, Python's
        iterator is asked for one more item, and raises where the body changed the dict's or set's size in the last
        iteration too (the checks at the start of each iteration see the others)."""
        watch = self.lazy_watches.pop(id(node), None)
        if watch is None or not any(watch[2]) or _breaks(node.body) or _returns(node.body):
            return
        line, self.line = self.line, node.lineno
        self.call(Const(rt.lazy_unchanged), [watch[0], Const((self.filename, node.lineno, *watch[1:]))], hint="_")
        self.line = line
