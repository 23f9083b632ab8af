"""Control flow for lower(): `if`, loops, comprehensions, and `break`/`continue`/`return` as flags.

A statement that may jump makes the rest of its block run under `if not flag`; a loop carries every name its body
assigns (block arguments) and leaves through its condition or its `exit` flag, checked at the end of an iteration.
"""
import operator
from collections import Counter
from types import ModuleType

import gast

from .. import runtime as rt
from ..guards_runtime import eager_items, eager_items_done
from ..ir import Assign, Call, Carry, Const, If, Loop, Phi, Var
from .carried_links import carried_items, links_made, stored_items
from .jumps import SCOPES, assigned_names, flat_nodes, has_jumps, plainly_assigned, test_in_body, walk
from .region_links import cut_arm_links, link_sizes, links_after_loop, merge_arm_links
from .scan import augmented_names, mutation_syntax, nodes_no_defs, updating_method_name

_RETURNED, _RETVAL, _BREAK, _CONTINUE = ".returned", ".retval", ".break", ".continue"


class ControlFlow:
    """The control-flow part of the Lowerer (mixed into it)."""

    def jumps(self, node, kinds, body_only=False):
        """`has_jumps`, with what it learns of every node remembered (blocks ask again for every statement); `body_only`
        looks at a loop's body without the loop itself, which would stop the search for break/continue."""
        return has_jumps(node, kinds, self.__dict__.setdefault("_jump_memo", {}), body_only)

    def join(self, cond, then_build, else_build, out_hint=None):
        """Lower an If whose arms are built by the two callables; merges the environments with phis."""
        line = self.line
        sizes = link_sizes(self.parents)
        then, then_env = self.sub_region(then_build)
        then_added = cut_arm_links(self.parents, sizes)  # (the else arm knows none of the then arm's links)
        orelse, else_env = self.sub_region(else_build)
        node = If(cond, then, orelse, [], line)
        merge_arm_links(self.parents, then_added, cut_arm_links(self.parents, sizes))
        self.line = line
        env = self.env
        for name in {**then_env, **else_env}:  # the then arm's names, then the else arm's others, in order
            a, b = then_env.get(name), else_env.get(name)
            if a is b and a is not None and env.get(name) is a:  # neither arm rebound it (most names, in long code)
                continue
            # a name one arm does not bind holds what it held before: a captured variable its cell's value
            before = Var(name) if name in self.freevars else Const(rt.UNBOUND)
            a, b = then_env.get(name, before), else_env.get(name, before)
            if a != b:
                out = self.temp("_" + name[1:]) if name.startswith(".") else self.new_var(name)
                node.phis.append(Phi(out, a, b))
                self.join_link(out, a, b)
                self.note_maybe_unbound(out, a, b)
                self.env[name] = out
            else:  # both arms bound the name to the same value
                self.env[name] = a
        self.emit(node)
        return node

    def expr_ListComp(self, node, hint):
        return self.comprehension(node, [node.elt], rt.append, hint)

    def expr_GeneratorExp(self, node, hint):
        """Materialised as a list, handed out as an iterator over it (`next(v for v in xs)` takes the first item, a
        second walk finds it used up), which holds the list's items (a loop's update of one reaches their holders)."""
        for n in gast.walk(node):
            if isinstance(n, gast.NamedExpr) or isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) \
                    and updating_method_name(n.func.attr) and not isinstance(self.module_of(n.func.value), ModuleType):
                # its items are all computed when it is made: `any((big := v) > 2 for v in xs)` would leave `big`
                # the last item's, `any(seen.append(v) or ...)` append every item, where Python stops at the first
                self.fail("an assignment expression (:=) in a generator expression" if isinstance(n, gast.NamedExpr)
                          else f"calling .{n.func.attr}(...) in a generator expression", n,
                          "zygotepy computes a generator's items when it is made, where Python computes each as it is "
                          "taken; use a list comprehension or a loop")
        eager = self.check_generator_effects(node)
        if eager:  # (an exception one of its items raises may be one Python never meets: not for a handler)
            self.call(Const(eager_items), [Const(self.filename), Const(self.line)], hint="_")
        made = self.expr_ListComp(node, hint)
        if eager:
            self.call(Const(eager_items_done), [], hint="_")
        out = self.call(Const(iter), [made], hint=hint)
        self.note_held(out, [made])
        return out

    def module_of(self, node):
        """The module a global dotted name (`np`, `np.random`) names, or None (`np.add(...)` is no update)."""
        path = self.global_name(node)
        return self.resolve(path) if path is not None else None

    def expr_SetComp(self, node, hint):
        return self.comprehension(node, [node.elt], rt.set_add, hint)

    def expr_DictComp(self, node, hint):
        return self.comprehension(node, [node.key, node.value], rt.dict_put, hint)

    def comprehension(self, node, parts, put, hint):
        """`[elt for t in xs if c]` is lowered as the loop `acc = []; for t in xs: if c: acc = append(acc, elt)`, with
        the comprehension's own scope for `t`."""
        acc = self.namer.fresh("_comp")
        targets = {n.id for g in node.generators for n in gast.walk(g.target) if isinstance(n, gast.Name)}
        added = {acc, *targets} - self.locals
        saved = {n: self.env[n] for n in targets if n in self.env}
        self.locals |= added
        self.special[f"{acc}.put"] = Const(put)
        load = lambda: gast.Name(acc, gast.Load(), None, None)
        body = gast.Assign(targets=[gast.Name(acc, gast.Store(), None, None)],
                           value=gast.Call(gast.Name(f"{acc}.put", gast.Load(), None, None), [load(), *parts], []))
        for g in reversed(node.generators):
            if g.is_async:
                self.fail("an async comprehension", node)
            for cond in reversed(g.ifs):
                body = gast.If(test=cond, body=[body], orelse=[])
            body = gast.For(target=g.target, iter=g.iter, body=[body], orelse=[], type_comment=None)
            body.comprehension = True  # its variables are its own: nothing outside reads them
            body.generator = isinstance(node, gast.GeneratorExp) and g is node.generators[0]
        gast.fix_missing_locations(gast.copy_location(body, node))
        for n in gast.walk(body):
            if not hasattr(n, "lineno") and isinstance(n, (gast.stmt, gast.expr)):
                gast.copy_location(n, node)
        empty = {rt.dict_put: rt.dict_of, rt.set_add: rt.set_of}.get(put, rt.list_of)
        self.bind(acc, self.call(Const(empty), [], hint=acc))
        self.stmt(body)
        result = self.env.pop(acc)  # no name refers to the accumulator after the comprehension: an update of the
        for n in targets:             # result through the name it gets (`vs = [...]`) must find that name's version
            self.env.pop(n, None)
        self.env.update(saved)
        self.locals -= added
        return result

    def block(self, stmts):
        for i, s in enumerate(stmts):
            self.stmt(s)
            kinds = (gast.Return, gast.Break, gast.Continue)
            if i + 1 < len(stmts) and not isinstance(s, SCOPES) and self.jumps(s, kinds):  # (a def's own returns)
                flags = [self.env[f] for f in (_RETURNED, _BREAK, _CONTINUE) if f in self.env]
                go_on = self.call(Const(rt.none_set), flags, hint="_go_on")
                rest = stmts[i + 1:]
                self.join(go_on, lambda rest=rest: self.block(rest), lambda: None)
                return

    def stmt_If(self, node):
        test = self.truth(node.test, self.expr(node.test))
        self.join(test, lambda: self.block(node.body), lambda: self.block(node.orelse))

    def truth(self, node, test):
        """The truth of the value `test` (of the expression `node`) taken once, as Python's `if` takes it, where it
        may be an object whose truth an update in place changes later (`if lst: lst.pop()`): the backward picks the
        arm from the value the forward kept, which would be the object as it is then (an emptied list)."""
        if not isinstance(test, Var) or isinstance(node, (gast.Compare, gast.Constant)) or \
                isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not) or \
                isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id in _TRUTHS:
            return test
        return self.call(Const(bool), [test], hint="_truth")

    def stmt_Return(self, node):
        value = self.expr(node.value) if node.value is not None else Const(None)
        self.env[_RETVAL], self.env[_RETURNED] = value, Const(True)

    def stmt_With(self, node):
        """`with m as v: body` is `v = enter(m)`, the body, `leave(m)`: the manager runs in the forward pass only. A
        return, break or continue in the body only sets flags (the statements after it are skipped by tests), so the
        `leave` after the body runs on every path; an exception is passed to `__exit__` by the API (runtime.unwind)."""
        managers = []
        for item in node.items:
            manager = self.expr(item.context_expr, hint="_manager")
            target = item.optional_vars
            value = self.call(Const(rt.enter), [manager], hint=target.id if isinstance(target, gast.Name) else "_t")
            self.note_held(value, [manager])  # (what `__enter__` gives may be, or view, what the manager keeps)
            if item.optional_vars is not None:
                self.assign_to(item.optional_vars, value)
            managers.append(manager)
        self.block(node.body)
        self.line = getattr(node, "lineno", self.line)
        for manager in reversed(managers):
            self.emit(Assign(Var("_"), Call(Const(rt.leave), (manager,)), self.line))

    def stmt_Break(self, node):
        self.env[_BREAK] = Const(True)

    def stmt_Continue(self, node):
        self.env[_CONTINUE] = Const(True)

    def loop_carries(self, body_nodes, extra=(), linked=False, targets=(), kept=()):
        """The loop's carried names and Carries. `targets`: the names a `for` loop binds each iteration, of which
        `kept` are read after the loop (or in a later iteration of an enclosing one): carried, so that they name the
        last item after it (their own object, not the one the name held before)."""
        flat = flat_nodes(body_nodes)
        # (a def statement in the body: augmented_names and mutation_syntax do not enter it, `flat` does)
        plain = flat if not any(isinstance(s, SCOPES) for s in body_nodes) else nodes_no_defs(body_nodes)
        names = [n for n in assigned_names(body_nodes, flat) if n in self.locals]
        names += [n for n in kept if n not in names and n in self.locals and n not in self.cellvars]
        aug = augmented_names(body_nodes, plain)  # `o = out; o += v` in the body: which object `o` names is not known
        rebound = plainly_assigned(body_nodes, flat) | set(targets)
        # (`x *= 0.5` on an object a view or a holder is linked to gives them new versions: carried, like any update)
        if linked or mutation_syntax(body_nodes, plain) or aug & rebound or self.has_updating_calls(plain) \
                or any(self.linked(n) for n in aug):
            # an update in place (a call for its value into a helper that updates its arguments too) may give any
            # object a new version: carry them all
            listed = set(names)
            names += [n for n, v in self.env.items() if isinstance(v, Var) and n not in listed
                      and (n in self.locals or n.startswith((".param", ".live")))]
            mentioned = {n.id for s in body_nodes for n in walk(s) if isinstance(n, gast.Name)} if self.freevars else ()
            for n in self.freevars:  # captured objects the body mentions too (see mutation.py)
                if n in mentioned and n not in names:
                    names.append(n)
                    if n not in self.used_freevars:
                        self.used_freevars.append(n)
        listed = set(names)
        names += [n for n in self.aliases_of(aug) if n not in listed and n in self.locals
                  and n not in self.cellvars]
        carries = []
        for name in [*names, *extra]:
            var = self.new_var(name) if not name.startswith(".") and name not in self.freevars else \
                self.temp("_" + name[1:] if name.startswith(".") else name)
            init = self.env.get(name, Const(rt.UNBOUND) if name not in self.freevars else Var(name))
            carries.append(Carry(var, init, None))
            self.inherit(var, init)
            self.note_maybe_unbound(var, init)
            self.env[name] = var
        for name in aug:  # `x += v` in the body may have made `x` a new object in an earlier iteration, which a name
            if isinstance(self.env.get(name), Var):  # that named x's object when the loop began no longer shares
                self.split.add(self.lineage_of(self.env[name]))  # (see `split`: numbers, JAX arrays)
        self.carry_rebound(zip(carries, [*names, *extra]), rebound)
        return names, carries

    def loop(self, node, make_header, links=(), linked=False, targets=(), kept=()):
        """Lower a loop; returns the flags (after it) that say a `break` or `return` left it, which an `else` clause
        (`loop_else`) tests."""
        breaks = self.jumps(node, (gast.Break,), body_only=True)
        returns = self.jumps(node, (gast.Return,), body_only=True)
        enclosing_break = self.env.pop(_BREAK, None)  # an enclosing loop's flag: not this loop's to test or reset
        if breaks:
            self.env[_BREAK] = Const(False)
        if returns:
            self.env.setdefault(_RETURNED, Const(False))
            self.env.setdefault(_RETVAL, Const(None))
        extra = [f for f, on in ((_BREAK, breaks), (_RETURNED, returns), (_RETVAL, returns)) if on]
        position = "." + self.namer.fresh("position") if links else None  # (the iteration's index: `refresh_iter`)
        if position is not None:
            self.env[position], extra = Const(0), [*extra, position]
        names, carries = self.loop_carries(node.body, extra, linked, targets, kept)
        loop = Loop(carries, [], line=node.lineno)
        make_header(loop)
        outer_env = dict(self.env)
        refreshes = []

        def body():
            self.env.pop(_CONTINUE, None)
            if self.jumps(node, (gast.Continue,), body_only=True):
                self.env[_CONTINUE] = Const(False)
            if loop.target is not None:
                self.assign_to(node.target, loop.target)
                self.check_copies(node)
                refreshes.extend(self.link_targets(links, node.lineno, position=self.env.get(position)))
                if position is not None:
                    self.env[position] = self.call(Const(operator.add), [self.env[position], Const(1)],
                                                   hint=position[1:])
            self.block(node.body)
        self.loop_depth += 1
        for c in carries:  # (each carry's object has a lineage before the body runs: the links found are kept by it)
            self.lineage_of(c.var)
        newest = dict(self.latest)
        state = self.lowering_state()
        loop.body, body_env = self.sub_region(body)
        augmented = augmented_names(node.body)
        later = links_made(self, state["parents"], carries, [*names, *extra], body_env, node.lineno, augmented)
        later += carried_items(self, carries, [*names, *extra], body_env, outer_env, node.lineno, augmented)
        stored = stored_items(self, state["parents"], outer_env)
        if later or stored:
            # the body linked objects that outlive an iteration (`traj.append(x)`): when a later iteration begins they
            # are linked, so an update then (`x *= c`) must reach the holder too; lowered again, knowing that
            self.restore_state(state)
            for child, link in later:
                self.parents.setdefault(child, []).append(link)
            for holder, held in stored.items():
                self.holds_items_of.setdefault(holder, set()).update(held)
            refreshes.clear()
            loop.body, body_env = self.sub_region(body)
        self.loop_depth -= 1
        self.parents = links_after_loop(self.parents, state["parents"])
        for c, name in zip(carries, [*names, *extra], strict=True):
            c.next = body_env.get(name, c.var)
            if isinstance(c.next, Var) and self.lineage_of(c.next) != self.lineage_of(c.var):  # (for an enclosing
                self.loop_joins.setdefault(self.lineage_of(c.next), []).append(self.lineage_of(c.var))  # loop's links)
                if self.parents_of(self.lineage_of(c.next)):
                    # after the loop the name may be the object the body bound it to (`last = r` of `for r in rows`,
                    # an item of rows): linked as an if's join is to its arms, so an update through it reaches rows
                    self.note_child(c.next, "held", c.var, Const(node.lineno))
        self.drop_refreshes(refreshes, carries)
        flags = [body_env[f] for f, on in ((_BREAK, breaks), (_RETURNED, returns)) if on and f in body_env]
        if flags:
            loop.exit = flags[0] if len(flags) == 1 else self.temp("_exit")
            if len(flags) > 1:
                loop.body.append(Assign(loop.exit, Call(Const(rt.any_set), tuple(flags)), node.lineno))
        self.env = outer_env
        self.env.pop(position, None)
        self.forget_body_versions(newest, carries)
        left = [self.env[f] for f, on in ((_BREAK, breaks), (_RETURNED, returns)) if on]
        self.env.pop(_BREAK, None)
        if enclosing_break is not None:
            self.env[_BREAK] = enclosing_break
        self.emit(loop)
        return left

    def forget_body_versions(self, before, carries):
        """After a loop, an object's newest version is its carried variable's, not one its body made (defined only
        there): else an update after the loop would name a variable the loop's scope never defines."""
        carried = {self.lineage.get(c.var): c.var for c in carries}
        for lin, var in list(self.latest.items()):
            if before.get(lin) is not var:
                if lin in carried:
                    self.latest[lin] = carried[lin]
                else:
                    del self.latest[lin]  # (no name refers to it after the loop: found at run time, as unnamed)

    def lowering_state(self):
        """A copy of what lowering a region changes (lineages and links, names' versions, nested functions' code
        objects taken, ...), for `restore_state`; the namer goes on (names stay unique), `env` and `region` are
        `sub_region`'s."""
        return {k: _copied(v) for k, v in self.__dict__.items() if k not in _OWN_STATE}

    def restore_state(self, state):
        for k in [k for k in self.__dict__ if k not in state and k not in _OWN_STATE]:
            del self.__dict__[k]  # (caches a pass made, of the syntax: made again)
        self.__dict__.update({k: _copied(v) for k, v in state.items()})

    def loop_else(self, node, left):
        """`for ... else` / `while ... else`: the clause runs when the loop ended without `break` (or `return`)."""
        if not node.orelse:
            return
        if not left:
            self.block(node.orelse)
            return
        ran_out = self.call(Const(rt.none_set), left, hint="_no_break")
        self.join(ran_out, lambda: self.block(node.orelse), lambda: None)

    def stmt_While(self, node):
        if any(isinstance(n, gast.NamedExpr) for n in gast.walk(node.test)):
            self.fail("assignment inside a while condition", node.test)
        nodes = nodes_no_defs([node.test])
        if mutation_syntax([node.test], nodes) or self.has_updating_calls(nodes):
            return self.while_updating_test(node)

        def header(loop):
            def test():
                loop.cond = self.expr(node.test)
            loop.test, _ = self.sub_region(test)
        self.loop_else(node, self.loop(node, header))

    def while_updating_test(self, node):
        """A condition that may update an object in place (`while advance(state):`) is a statement of the loop's body
        (`test_in_body`): a loop's test region computes only its flag, and keeps no version of what it updates. The
        `else` clause runs after the loop where the condition ended it (a hidden flag, `_ran_out`)."""
        ran_out = self.namer.fresh("_ran_out") if node.orelse else None
        if ran_out is not None:
            self.locals.add(ran_out)
            self.bind(ran_out, Const(False))
        self.stmt_While(test_in_body(node, ran_out))
        if ran_out is not None:
            self.join(self.env.pop(ran_out), lambda: self.block(node.orelse), lambda: None)
            self.locals.discard(ran_out)

    def read_outside(self, node, names):
        """Those of `names` (the `for` loop `node`'s variables) that code outside its body may read: after the loop,
        or in a later iteration of an enclosing loop (a comprehension's variables are its own)."""
        if getattr(node, "comprehension", False) or not names:
            return []
        if not hasattr(self, "_loads"):
            body = self.source_node.body
            self._loads = Counter(r for s in (body if isinstance(body, list) else [body]) for n in walk(s)
                                  if (r := _read_name(n)))
        inside = Counter(r for s in [*node.body, node.target] for n in walk(s) if (r := _read_name(n)) in names)
        return [n for n in names if self._loads[n] > inside[n]]

    def stmt_For(self, node):
        generator = getattr(node, "generator", False)
        node, it, links, hidden, changing = self.for_iterable(node)
        if generator:  # (an endless iterator is refused: the generator's items are all computed now)
            self.call(Const(rt.bounded_generator), [it, Const(self.filename), Const(self.line)], hint="_")
        seq = self.call(Const(rt.iterate), [it], hint="_seq")

        def header(loop):
            loop.iter = seq
            t = node.target
            loop.target = self.new_var(t.id) if isinstance(t, gast.Name) and t.id not in self.cellvars \
                else self.temp("_item")
        targets = [n.id for n in walk(node.target) if isinstance(n, gast.Name)]
        left = self.loop(node, header, links, changing, targets, self.read_outside(node, targets))
        self.link_targets(links, node.lineno, after=True)
        self.end_for(node, hidden)
        self.loop_else(node, left)


_TRUTHS = frozenset(("isinstance", "issubclass", "hasattr", "callable", "bool", "all", "any"))  # (give a bool)


def _read_name(n):
    """The name `n` reads, or None: a load, or the target of an augmented assignment (`v *= 3` reads `v` first)."""
    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
        return n.id
    return n.target.id if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name) else None


_OWN_STATE = ("namer", "env", "region", "source_node", "code", "globals", "filename")


def _copied(v):
    """A copy of a lowering's state entry: containers one level down (a lineage's list of links)."""
    if type(v) is dict:
        return {k: list(x) if type(x) is list else set(x) if type(x) is set else x for k, x in v.items()}
    return set(v) if type(v) is set else list(v) if type(v) is list else v
