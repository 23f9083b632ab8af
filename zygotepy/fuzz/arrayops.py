"""Statements of the random programs in the style of array code: selections (`np.where`, `clip`, `maximum`, boolean
masks), gathers and scatters with repeated indices (`x[[0, 0]] += ...`, `np.add.at`), joins and splits, small matrix
algebra (`outer`, `einsum`, `solve`, `inv`, `det`, `norm`), reorderings (`sort`, `roll`, `flip`, `diff`), in-place
updates whose two sides overlap in memory (`z[1:] -= z[:-1]`, `z += z[::-1]`), ufuncs with `out=`, conversions
between arrays, lists and numbers, a helper of the program's that fills an array given by keyword (`out=`), and
iterators kept in a name and walked twice (`it = zip(v, w)`: the second walk finds it used up), a dict's view kept
in a name while the dict changes, and a loop over pairs of an array and a number updating the array in place. Each
block folds what it computes into one of the program's scalars. And a function the program defines in its
body, updating an argument in place, called for its value; a callable object updating itself (`cell(u)`); an array's
method kept in a name (`s = v.sum; s()`); an iterator over a dict's view kept in a name, the dict changed between two
items (`it = iter(d.values())`); a nested function that calls itself; an object a closure captures, updated in place
through another name or its parent; a method of an object kept in a name, called after the object changed; a
lambda whose default value carries a gradient (`lambda t, c=c: ...`), called with and without it, or updating it.

They draw from a random stream of their own (`[seed, index, 10]`), and only the array flavour takes them, so a program
that has none is the one the generator made before they existed.
"""
import numpy as np

SHARE = 0.08  # of the statements of array programs

KINDS = ("select", "mask_store", "gather", "scatter", "join", "matrix", "reorder", "overlap", "ufunc_out", "convert",
         "keyword_update", "kept_iterator", "dict_view", "pair_loop",
         "nested_update", "callable_object", "bound_method", "view_iterator", "recursive_def",
         "captured_alias", "method_after_update", "lambda_default")

HELPERS = {"h_fill": "def h_fill(v, s, out=None):\n    out[:2] = np.sin(v[:2]) * s\n    return out[0]\n",
           "h_put": "def h_put(v, *, buf, w=0.5):\n    buf[1] = v[0] * w + buf[2]\n    return buf[1]\n",
           "HCell": "class HCell:\n    def __init__(self, w):\n        self.w = w\n        self.h = 0.0\n\n"
                    "    def __call__(self, u):\n        self.h = np.tanh(self.w * u + self.h)\n        return self.h\n",
           "HLin": "class HLin:\n    def __init__(self, w):\n        self.w = w\n        self.h = 0.5\n\n"
                   "    def apply(self, u):\n        return np.tanh(self.w * u) + self.h\n"}


class ArrayOpBlocks:
    """A mixin of the generator (generate._Gen): `arrayop_block()` returns the lines of one block."""

    def start_arrayops(self, seed, index):
        self.arrayop_rng = np.random.default_rng([seed, index, 10])

    def wants_arrayop_block(self):
        return self.flavour == "array" and self.arrayop_rng.random() < SHARE and \
            any(length >= 3 for length, _ in self.arrays.values())

    def _any(self, seq):
        return seq[int(self.arrayop_rng.integers(len(seq)))]

    def arrayop_block(self):
        kind = self._any(KINDS)
        self.tags.update({kind, "numpy", "array"})
        name = self._any(sorted(n for n, (length, _) in self.arrays.items() if length >= 3))
        t, e = self._any(self.scalars), lambda: self.bounded(self.expr(1))
        lines, value = getattr(self, "_op_" + kind)(name, self.arrays[name][0], e)
        return lines + [f"{t} = 0.5 * {t} + 0.3 * ({value})"]

    def _made(self, forms, fold):
        """`z = ` one of `forms()`, folded into a scalar by `fold(z)`."""
        z = self.fresh("wz")
        return [f"{z} = {self._any(forms())}"], fold(z)

    def _updated(self, v, updates, fold):
        """A copy of `v` (now and then `v` itself) updated in place by one of `updates(z)`, folded by `fold(z)`."""
        lines = []
        z = self._copy(v, lines)
        lines.append(self._any(updates(z)))
        return lines, fold(z)

    def _copy(self, name, lines):
        """A fresh array to update: now and then the array itself (an argument's update is the caller's too)."""
        z = self.fresh("wz")
        self.mut_any = True
        if name not in self.busy and self.arrayop_rng.random() < 0.2:
            self.mut_arg |= self.arrays[name][1]
            lines.append(f"{z} = {name}")
        else:
            lines.append(f"{z} = {name} * 1.0")
        return z

    def _op_select(self, v, n, e):
        return self._made(lambda: [f"np.where({v} > 0.1, np.sin({v}) * {e()}, {v} * 0.5)",
                                   f"np.clip({v} * {e()}, -0.4, 0.6)",
                                   f"{v}.clip(-0.3, None)", f"np.maximum({v}, 0.2 * {e()})",
                                   f"np.minimum({v}, np.cos({v}))",
                                   f"np.abs({v} - 0.2)", f"{v}[{v} > 0.0]", f"{v}[np.abs({v}) < 0.5] * {e()}",
                                   f"np.where({v} < 0.3)[0] * 0.1 + {v}[0]"],
                          lambda z: f"np.sum(np.tanh({z})) + 0.1 * {z}.size")

    def _op_mask_store(self, v, n, e):
        return self._updated(v, lambda z: [f"{z}[{z} < 0.0] = {e()}", f"{z}[{z} > 0.2] *= {e()}",
                                           f"{z}[np.abs({z}) > 0.3] = 0.0", f"{z}[{z} > 0.1] += {z}[{z} > 0.1] * 0.5",
                                           f"{z}[[True] + [False] * {n - 2} + [True]] -= {e()}"],
                             lambda z: f"np.sum(np.sin({z}))")

    def _op_gather(self, v, n, e):
        return self._made(lambda: [f"{v}[[0, 0, {n - 1}]]", f"np.take({v}, [1, 0, 1])",
                                   f"{v}[np.array([2, 0])] * {e()}",
                                   f"{v}[np.argsort({v})]", f"np.sort({v})[::2]", f"{v}[np.argmax({v})] * {v}",
                                   f"{v}[[-1, 1]] * {v}[:2]", f"{v}[{v}.argmin()] + {v}[1:]"],
                          lambda z: f"np.sum(np.tanh({z}) * np.arange({z}.size))")

    def _op_scatter(self, v, n, e):
        return self._updated(v, lambda z: [f"{z}[[0, 0]] += {e()}", f"np.add.at({z}, [0, 0, 1], {e()})",
                                           f"{z}[[2, 0]] = [{e()}, {e()}]", f"{z}[[1, 1]] = [{e()}, 0.5]",
                                           f"np.add.at({z}, [1, {n - 1}, 1], {z}[:3] * 0.5)", f"{z}[[0, 2]] *= {z}[1]",
                                           f"np.put({z}, [0, 2, 0], [{e()}, {z}[1] * 0.5, 0.3])",
                                           f"np.copyto({z}, np.sin({z}) * {e()}, where={z} > 0.1)",
                                           f"np.putmask({z}, {z} < 0.0, np.cos({z})[::-1])"],
                             lambda z: f"np.sum(np.sin({z}) * np.arange(1, {n + 1}))")

    def _op_join(self, v, n, e):
        return self._made(lambda: [f"np.concatenate([{v}, np.sin({v})[:2]])", f"np.stack([{v}, np.cos({v})])",
                                   f"np.hstack(({v}[:2], [{e()}], {v}))", f"np.vstack([{v}, {v} * {e()}])",
                                   f"np.tile({v}, 2)", f"np.repeat({v}, 2)", f"np.pad({v}, 1) * 0.5",
                                   f"np.split({v}[:{n - n % 2}], 2)[1]", f"np.concatenate(([{e()}, 0.5], {v}[::2]))"],
                          lambda z: f"np.sum(np.tanh({z}) * np.cos({z}))")

    def _op_matrix(self, v, n, e):
        m = self.fresh("wm")
        lines = [f"{m} = np.outer({v}, np.cos({v})) * 0.3"]
        value = self._any([f"np.trace({m}) + np.sum(np.diag({m}) * {v})", f"np.sum(np.tril({m}) * {e()})",
                           f"np.sum(np.tanh({m}.T @ {v}))", f'np.sum(np.einsum("i,ij->j", {v}, {m}))',
                           f"np.sum(np.linalg.solve(np.eye({n}) * 2.0 + {m}, {v}))",
                           f"np.sum(np.linalg.inv(np.eye({n}) * 2.0 + {m})) * 0.5",
                           f"np.linalg.det(np.eye({n}) + {m} * {e()})", f"np.linalg.norm({v} + 0.5) * 0.5",
                           f"np.sum({m}[:, 0] * {m}[1])", f'np.einsum("ij,ij->", {m}, {m})'])
        return lines, value

    def _op_reorder(self, v, n, e):
        return self._made(lambda: [f"np.roll({v}, 1) * {v}", f"np.flip({v}) - {v} * {e()}",
                                   f"{v}[::-1] * np.arange({n})",
                                   f"np.cumprod(0.9 + 0.1 * {v})", f"np.diff({v}) * {e()}", f"np.var({v}) + {v}",
                                   f"np.std({v}) * {v}", f"np.cumsum({v}[::-1])[::-1]"],
                          lambda z: f"np.sum(np.sin({z}))")

    def _op_overlap(self, v, n, e):
        return self._updated(v, lambda z: [f"{z}[1:] -= 0.5 * {z}[:-1]", f"{z} += {z}[::-1] * {e()}",
                                           f"{z}[:] = {z}[::-1] * 0.5", f"{z}[1:] = {z}[:-1] * {e()}",
                                           f"{z}[:-1] += {z}[1:]", f"{z}[::2] *= np.sum({z}[1::2]) * 0.5"],
                             lambda z: f"np.sum(np.tanh({z}) * np.arange(1, {n + 1}))")

    def _op_ufunc_out(self, v, n, e):
        return self._updated(v, lambda z: [f"np.multiply({z}, {e()}, out={z})", f"np.sin({z}, out={z})",
                                           f"np.add({z}, {v} * 0.5, out={z})", f"np.maximum({z}, 0.1, out={z})",
                                           f"np.tanh({z}[:-1], out={z}[1:])", f"np.exp({z}[1:] * 0.5, out={z}[:-1])",
                                           f"np.subtract({z}, np.mean({z}), out={z})"],
                             lambda z: f"np.sum(np.cos({z}) * np.arange({n}))")

    def _op_convert(self, v, n, e):
        return self._made(lambda: [f"np.array([{e()}, {e()}]) @ {v}[:2]", f"sum(list({v})) * {e()}",
                                   f"sum({v}.tolist()) + float({v}[0])", f"np.asarray([{v}[0], {e()}]).sum()",
                                   f"{v}.astype(np.float64).dot({v})", f"{v}.sum() * {v}.mean(axis=0)",
                                   f"np.array({v}) * {e()}", f"{v}.item(1) * {e()}", f"np.float64({v}[2]) * {v}[1]"],
                          lambda z: f"np.sum(np.tanh({z}))")

    def _op_keyword_update(self, v, n, e):
        lines = []
        z = self._copy(v, lines)
        q, g = self.fresh("wq"), self.fresh("wg")
        if self.arrayop_rng.random() < 0.4:
            self.helpers.add("h_put")
            lines += self._any([[f"h_put({v}, buf={z})"], [f"{q} = h_put({v}, w={e()}, buf={z}) * {e()}"],
                                [f"for {q} in [{z}]:", f"    {g} = h_put({v} * 0.5, buf={q})"]])
            return lines, f"np.sum(np.sin({z}) * np.arange(1, {n + 1}))"
        self.helpers.add("h_fill")
        lines += self._any([[f"h_fill({v}, {e()}, out={z})"], [f"{q} = h_fill({v}, {e()}, out={z}) * {e()}"],
                            [f"for {q} in [{z}]:", f"    h_fill({v} * 0.5, {e()}, out={q})"],
                            [f"for {q} in [{z}]:", f"    {g} = h_fill({v} * 0.5, {e()}, out={q})"],
                            [f"{g} = h_fill", f"{g}({v}, {e()}, out={z})"]])
        return lines, f"np.sum(np.sin({z}) * np.arange(1, {n + 1}))"

    def _op_kept_iterator(self, v, n, e):
        it, s = self.fresh("wi"), self.fresh("ws")
        made = self._any([f"zip({v}, {v} * {e()})", f"enumerate(np.sin({v}))", f"map(np.tanh, {v} * {e()})",
                          f"reversed({v})", f"({e()} * u for u in {v})", f"filter(lambda u: u > 0.0, {v})"])
        first = self._any([f"{s} = np.sum(next({it}, 0.5))", f"{s} = sum(np.sum(u) for u in {it})",
                           f"{s} = len(list({it})) * 0.1"])
        return [f"{it} = {made}", first], f"{s} + sum(np.sum(u) * 0.5 for u in {it})"

    def _op_dict_view(self, v, n, e):
        d, w = self.fresh("wd"), self.fresh("wv")
        view = self._any(["values", "items"])
        self.mut_any = True
        # the view kept in a name, made by a nested function, or held in a list or a dict (Python's view is live)
        made, read = self._any([(f"{w} = {d}.{view}()", w), (f"{w} = (lambda m: m.{view}())({d})", w),
                                (f"{w} = [{d}.{view}(), {e()}]", f"{w}[0]"), (f"{w} = {{'v': {d}.{view}()}}", f"{w}['v']")])
        lines = [f"{d} = {{'a': {v} * 1.0, 'b': np.sin({v})}}", made]
        total = f"sum(np.sum(u) for u in {read})" if view == "values" else \
            f"sum(np.sum(u) * len(k) for k, u in {read})"
        before = self._any([[], [f"{w}_0 = {total}"]])  # read before the update too
        lines += before + self._any([[f"{d}['b'] = {d}['a'] * {e()}"], [f"{d}['c'] = {v} * {e()}"], [f"del {d}['a']"],
                                     [f"{d}.update(a={v} ** 2)"], [f"{d}['a'] *= {e()}"], [f"{d}.pop('b')"]])
        return lines, f"{total} + {w}_0" if before else total

    def _op_view_iterator(self, v, n, e):
        d, it, s = self.fresh("wd"), self.fresh("wi"), self.fresh("ws")
        self.mut_any = True
        view = self._any(["values", "items"])
        made = self._any([f"iter({d}.{view}())", f"iter(list({d}.{view}()))"])
        item = "u" if view == "values" else "u[1]"
        lines = [f"{d} = {{'a': {v} * 1.0, 'b': np.cos({v})}}", f"{it} = {made}",
                 f"{s} = np.sum(next({it}){'' if view == 'values' else '[1]'})"]
        lines += self._any([[f"{d}['b'] = {d}['a'] * {e()}"], [f"{d}['a'] = {v} * {e()}"], [f"{d}['b'] *= {e()}"],
                            []])
        return lines, f"{s} + sum(np.sum({item}) for u in {it})"

    def _op_recursive_def(self, v, n, e):
        fn, q = self.fresh("wr"), self.fresh("wq")
        step = self._any([f"{fn}(k - 1, np.sin(t) * {e()}) + t * 0.5", f"{fn}(k - 1, t * 0.5) * {e()}",
                          f"{fn}(k - 1, t) + {fn}(k - 2, t * 0.3)"])
        lines = [f"def {fn}(k, t):", "    if k <= 0:", f"        return t * {e()}", f"    return {step}",
                 f"{q} = {fn}({int(self.arrayop_rng.integers(1, 4))}, {v})"]
        return lines, f"np.sum({q})"

    def _op_pair_loop(self, v, n, e):
        ys, q, c = self.fresh("wl"), self.fresh("wq"), self.fresh("wc")
        self.mut_any = True
        pairs = f"[({ys}[0], {e()}), ({ys}[1], {e()})]"
        lines = [f"{ys} = [{v} * 1.0, np.cos({v})]"]
        lines += self._any([[f"for {q}, {c} in {pairs}:"], [f"for {q}, {c} in iter({pairs}):"],
                            [f"for {q}, {c} in zip({ys}, [{e()}, {e()}]):"]])
        lines.append(self._any([f"    {q} *= {c}", f"    {q}[0] = {q}[-1] * {c}", f"    {q} += {c}"]))
        return lines, f"np.sum({ys}[0]) + np.sum({ys}[1] ** 2)"

    def _op_nested_update(self, v, n, e):
        fn, z, q = self.fresh("wn"), self.fresh("wz"), self.fresh("wq")
        self.mut_any = True
        if self.arrayop_rng.random() < 0.5:
            lines = [f"def {fn}(buf, s):", "    buf[0] = buf[-1] * s", "    return buf[0]", f"{z} = {v} * 1.0",
                     f"{q} = {fn}({z}, {e()}) * {e()} + {fn}({z}, {e()})"]
            return lines, f"{q} + np.sum(np.sin({z}))"
        lines = [f"def {fn}(u, acc, s):", "    acc.append(u * s)", "    return len(acc)", f"{z} = []",
                 f"{q} = 0", f"for u in {v}:", f"    {q} = {q} + {fn}(u, {z}, {e()})"]
        return lines, f"sum({z}) * {q} * 0.1"

    def _op_callable_object(self, v, n, e):
        c, q = self.fresh("wc"), self.fresh("wq")
        self.helpers.add("HCell")
        self.mut_any = True
        call = self._any([f"{q} = {q} + {c}(u)", f"{c}(u)", f"{q} = {q} * 0.5 + np.sum({c}(u * {e()}))"])
        return [f"{c} = HCell({e()})", f"{q} = 0.0", f"for u in {v}[:3]:", f"    {call}"], f"{q} + {c}.h"

    def _op_bound_method(self, v, n, e):
        m, q = self.fresh("wb"), self.fresh("wq")
        method = self._any(["sum", "mean", "max", "prod", "cumsum", "copy", "ravel"])
        return [f"{m} = ({v} * {e()}).{method}", f"{q} = np.sum(np.sin({m}()))"], f"{q} * 0.5"

    def _op_captured_alias(self, v, n, e):
        z, w, g, q = self.fresh("wz"), self.fresh("ww"), self.fresh("wg"), self.fresh("wq")
        self.mut_any = True
        held = self._any([(f"{w} = {z}", f"{z}[0] = {e()}"), (f"{w} = {z}", f"{z} *= {e()}"),
                          (f"{w} = {z}[1:]", f"{z}[1] = {e()}"), (f"{w} = [{z}][0]", f"{z}[-1] = {z}[0] * {e()}")])
        lines = [f"{z} = {v} * 1.0", held[0], f"{g} = lambda: np.sum(np.sin({w}))"]
        call = self._any([f"{g}()", f"[{g}][0]()", f"{{'g': {g}}}['g']()"])  # (by name, or out of a container)
        if self.arrayop_rng.random() < 0.2:  # the closure's result is the captured object itself, updated
            return [f"{z} = {v} * 1.0", f"{g} = lambda: {z}", f"{w} = {call.replace('()', '')}()",
                    f"{w}[0] = {e()}"], f"np.sum({z} ** 2)"
        before = self.arrayop_rng.random() < 0.5
        lines += [f"{q} = {call}", held[1]] if before else [held[1], f"{q} = {call}"]
        return lines, f"{q} + np.sum({w} ** 2) * 0.5"

    def _op_method_after_update(self, v, n, e):
        o, m = self.fresh("wo"), self.fresh("wm")
        self.helpers.add("HLin")
        store = self._any([f"{o}.w = {o}.w * {e()}", f"{o}.h = {e()}", f"{o}.w[0] = {e()}"])
        return [f"{o} = HLin({v} * 1.0)", f"{m} = {o}.apply", store], f"np.sum({m}({e()}))"

    def _op_lambda_default(self, v, n, e):
        g, q, c = self.fresh("wg"), self.fresh("wq"), self.fresh("wc")
        form = self.arrayop_rng.integers(4)
        if form == 0:
            return [f"{g} = lambda t, c={e()}: np.sin(t) * c", f"{q} = {g}({v}) + {g}({v} * 0.5, {e()})"], f"np.sum({q})"
        if form == 1:
            return [f"{g} = [lambda t, c={c}: t * c for {c} in ({e()}, {v}[0])]",
                    f"{q} = sum(np.sum(h({v})) for h in {g})"], q
        if form == 2:
            return [f"def {g}(t, w={v} * {e()}, k=2.0):", "    return np.sum(t * w) * k",
                    f"{q} = {g}({v}) + {g}({v}, k={e()})"], q
        self.mut_any = True  # an update of the default: refused naming the call
        return [f"{c} = np.zeros({n})", f"def {g}(t, acc={c}):", f"    acc[0] = np.sum(t) * {e()}", "    return acc",
                f"{q} = np.sum({g}({v}))"], q
