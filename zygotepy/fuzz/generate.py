"""Random valid Python programs for the fuzzer, each with a record of the constructs it uses.

`generate(seed, index)` returns a `Program`: the module source (imports, the helpers it calls, `def program(...)`),
the argument specs, the construct tags, and what the generator knows about it (whether it updates an argument or any
object in place). Values stay bounded (tanh, sin, 0.5 factors) so nothing overflows; branch tests compare values that
vary smoothly, so a kink near the evaluation point is rare (the checker skips those by two finite-difference steps).

Three flavours: `scalar` (float arguments, `math` calls), `array` (a float and a NumPy vector `x`, with views, aliases
and updates in place) and `complex` (complex arguments, NumPy calls, a real result). Int arguments, when present, have
one role each: `m` only arithmetic (its gradient is its derivative), `n` both an index and arithmetic (`L[n] * n`: its
gradient is the arithmetic part only), `k` only data (its gradient is None).
"""
import re
from dataclasses import dataclass, field

import numpy as np

from .arrayops import HELPERS as ARRAYOP_HELPERS, KINDS as ARRAYOP_KINDS, ArrayOpBlocks
from .axes import AxesBlocks
from .exprs import Expressions
from .idioms import DECOY_SHARE, HELPERS as IDIOM_HELPERS, IdiomBlocks

CONSTRUCTS = (
    "arith", "math", "numpy", "if", "elif", "for", "while", "break", "continue", "early_return",
    "helper_none", "helper_rebind", "helper_inplace", "recursion", "lambda_in_loop", "nested_fn_in_loop",
    "higher_order", "closure", "list", "dict", "tuple", "object", "namedtuple", "view", "alias", "inplace_item",
    "inplace_aug", "list_append", "dict_store", "np_r", "int_arith", "int_index", "int_data", "complex", "array",
    "capture_reassigned", "second_order", "foreign", "axes", "lazy_iter", "alias_slots", "seq_operand",
    "method_update", "operator_class", "comprehension", "builtin_reduce", "keyword_call", "tuple_return",
    "zip_enumerate", "try", "decoy") + ARRAYOP_KINDS

HEADER = "import math\nimport numpy as np\nfrom collections import namedtuple\n"

HELPERS = {
    "Pt": 'Pt = namedtuple("Pt", "u w")\n',
    "Box": "class Box:\n    def __init__(self, v):\n        self.v = v\n        self.s = 0.5 * v\n",
    "h_none": "def h_none(acc, v):\n    acc.append(np.sin(v) * 0.5)\n",
    "h_rebind": "def h_rebind(p1, p2):\n    p1 *= 1.0\n    p1 += 0.5 * np.sin(p2)\n    return p1 * 0.9\n",
    "h_inplace": "def h_inplace(arr, s):\n    arr[0] = arr[0] * 0.5 + 0.1 * s\n    arr *= 0.9\n",
    "h_setlist": "def h_setlist(acc, v):\n    acc[0] = acc[0] * 0.5 + 0.2 * v\n",
    "h_rec": "def h_rec(t, j):\n    if j <= 0:\n        return t\n    return h_rec(np.sin(t) * 0.9 + 0.1, j - 1)\n",
    "h_apply": "def h_apply(fn, v):\n    return fn(v) * 0.5\n", **IDIOM_HELPERS, **ARRAYOP_HELPERS}


@dataclass
class Program:
    seed: int
    index: int
    flavour: str
    src: str
    args: list            # [(name, kind, value)]: kind float | complex | array | int_arith | int_index | int_data
    tags: set = field(default_factory=set)
    mutates_arg: bool = False
    mutates_any: bool = False
    second: bool = False  # also check second derivatives
    foreign: bool = False  # also run on array-api-strict, JAX and torch arrays

    @property
    def filename(self):
        return f"<fuzz program {self.seed}:{self.index}>"

    def fd_src(self):
        """The source for finite differences: the index uses of `n` rounded, so `n` can be perturbed as a float."""
        return re.sub(r"\[n\]", "[round(n)]", self.src).replace("range(n)", "range(round(n))")


class _Gen(Expressions, AxesBlocks, IdiomBlocks, ArrayOpBlocks):
    """Statements and whole programs."""

    # -- statements ------------------------------------------------------------------------------------------------
    def block(self, depth, in_loop, lo=1, hi=3):
        lines = []
        for _ in range(int(self.rng.integers(lo, hi + 1))):
            lines += self.stmt(depth, in_loop)
        return lines

    def assign(self):
        t, e = self.pick(self.scalars), self.expr()
        return [self.pick([f"{t} = {self.bounded(e)}", f"{t} += 0.5 * {self.bounded(e)}", f"{t} *= 0.9",
                           f"{t} = 0.5 * {t} + 0.4 * {self.bounded(e)}"])]

    def stmt(self, depth, in_loop):
        block = (self.axes_block() if self.wants_axes_block() else self.idiom_block() if self.wants_idiom_block()
                 else self.arrayop_block() if self.wants_arrayop_block() else None)
        if block:  # (axes.py, idioms.py, arrayops.py)
            return block
        top = depth == 0
        opts = [(6, self.assign), (1, self.swap), (3 if depth < 2 else 0, lambda: self.branch(depth, in_loop)),
                (2 if depth < 2 else 0, lambda: self.loop(depth)), (1, self.early_return),
                (1, lambda: self.call_helper(depth)), (1, self.higher_order)]
        if in_loop:
            opts += [(2, self.brk), (2, lambda: self.nested(depth))]
        if top:
            opts += [(3, self.new_scalar), (1, self.new_container), (1, self.closure)]
            if self.flavour == "array":
                opts += [(2, self.new_array)]
        if self.lists or self.dicts or self.boxes:
            opts.append((2, self.container_update))
        if self.arrays:
            opts.append((3, self.array_update))
        weights = np.array([w for w, _ in opts], float)
        return opts[int(self.rng.choice(len(opts), p=weights / weights.sum()))][1]()

    def swap(self):
        a, b = self.pick(self.scalars), self.pick(self.scalars)
        return [f"{a}, {b} = {b}, {a} * 0.9"]

    def branch(self, depth, in_loop):
        self.tags.add("if")
        lines = [f"if {self.cond()}:"] + ["    " + s for s in self.block(depth + 1, in_loop, 1, 2)]
        for _ in range(int(self.rng.integers(0, 3))):
            self.tags.add("elif")
            lines += [f"elif {self.cond()}:"] + ["    " + s for s in self.block(depth + 1, in_loop, 1, 2)]
        if self.coin(0.6):
            lines += ["else:"] + ["    " + s for s in self.block(depth + 1, in_loop, 1, 2)]
        return lines

    def loop(self, depth):
        if self.coin(0.35):
            self.tags.add("while")
            w = self.fresh("w")
            test = f"{w} < {self.pick(['2', '3', '4'])}"
            if self.coin(0.3):
                test += f" and {self.real(self.pick(self.scalars))} < 1.5"
            self.intloop.append(w)
            body = self.block(depth + 1, True)
            self.intloop.remove(w)
            return [f"{w} = 0", f"while {test}:", f"    {w} += 1"] + ["    " + s for s in body]
        self.tags.add("for")
        iters = [("range", r) for r in ["2", "3"]]
        if "k" in self.ints:
            iters.append(("range", "k"))
        if "n" in self.ints:
            iters.append(("range", "n"))
        iters += [("list", name) for name in self.lists] + [("array", name) for name in self.arrays]
        iters += [("dict", name) for name in self.dicts]
        kind, what = self.pick(iters)
        if what == "k":
            self.tags.add("int_data")
        if what == "n":
            self.tags.add("int_index")
        if kind == "range":
            v = self.fresh("i")
            self.intloop.append(v)
            body = self.block(depth + 1, True)
            self.intloop.remove(v)
            return [f"for {v} in range({what}):"] + ["    " + s for s in body]
        v = self.fresh("e")
        self.loopvars.append(v)
        busy = what in self.busy
        self.busy.add(what)
        body = self.block(depth + 1, True)
        if not busy:
            self.busy.discard(what)
        self.loopvars.remove(v)
        return [f"for {self.walk(v, what, kind)}:"] + ["    " + s for s in body]

    def brk(self):
        word = self.tag(*[self.pick(["break", "continue"])] * 2)
        return [f"if {self.cond()}:", f"    {word}"]

    def early_return(self):
        return [f"if {self.tag('early_return', self.cond())}:", f"    return {self.ret()}"]

    def captured(self):
        """A value a function made here may capture: a frozen one, or (sometimes) one assigned again later."""
        if self.frozen and not self.coin(0.08):
            return self.pick(self.frozen)
        self.tags.add("capture_reassigned")
        return self.pick(self.scalars)

    def nested(self, depth):
        t = self.pick(self.scalars)
        if self.intloop and self.coin(0.5):
            extra, use = f", c={self.pick(self.intloop)}", "0.1 * c"
        else:
            extra, use = "", self.captured()
        f = self.bounded("u")
        if self.coin(0.5):
            self.tags.add("lambda_in_loop")
            g = self.fresh("g")
            lines = [f"{g} = lambda u{extra}: {f} * 0.5 + {use}"]
        else:
            self.tags.add("nested_fn_in_loop")
            g = self.fresh("inner")
            lines = [f"def {g}(u{extra}):", f"    return {f} * 0.5 + {use}"]
        return lines + [f"{t} = 0.5 * {t} + 0.4 * {g}({self.expr(1)})"]

    def higher_order(self):
        self.tags.add("higher_order")
        self.helpers.add("h_apply")
        t = self.pick(self.scalars)
        return [f"{t} = h_apply(lambda u: {self.bounded('u')} * {self.captured()}, {self.expr(1)})"]

    def closure(self):
        if not self.frozen:
            return self.new_scalar(frozen=True)
        self.tags.add("closure")
        c, t = self.fresh("cl"), self.pick(self.scalars)
        return [f"def {c}(u):", f"    return u * {self.captured()} + {self.bounded('u')} * 0.5",
                f"{t} = {self.bounded(f'{c}({self.expr(1)})')}"]

    def call_helper(self, depth):
        t = self.pick(self.scalars)
        free_lists = [name for name in self.lists if name not in self.busy]
        opts = ["rebind", "rec"]
        if free_lists:
            opts += ["none", "setlist"]
        if self.arrays:
            opts += ["inplace"]
        kind = self.pick(opts)
        if kind == "rebind":
            self.tags.add("helper_rebind")
            self.helpers.add("h_rebind")
            return [f"{t} = h_rebind({self.expr(1)}, {self.expr(1)})"]
        if kind == "rec":
            self.tags.add("recursion")
            self.helpers.add("h_rec")
            count = "k" if "k" in self.ints and self.coin(0.5) else self.pick(["1", "2", "3"])
            if count == "k":
                self.tags.add("int_data")
            return [f"{t} = h_rec({self.expr(1)}, {count})"]
        self.mut_any = True
        if kind in ("none", "setlist"):
            self.tags.update({"helper_none", "list_append"} if kind == "none" else {"helper_inplace", "list"})
            self.helpers.add(f"h_{kind}")
            return [f"h_{kind}({self.pick(free_lists)}, {self.expr(1)})"]
        self.tags.add("helper_inplace")
        self.helpers.add("h_inplace")
        name = self.pick(sorted(self.arrays))
        self.mut_arg |= self.arrays[name][1]
        return [f"h_inplace({name}, {self.real(self.expr(1))})"]

    def new_scalar(self, frozen=False):
        if frozen or self.coin(0.25):
            name = self.fresh("f")
            line = f"{name} = {self.bounded(self.expr())}"
            self.frozen.append(name)
            return [line]
        name = self.fresh("s")
        line = f"{name} = {self.bounded(self.expr())}"
        self.scalars.append(name)
        return [line]

    def new_container(self):
        kind = self.pick(["list", "dict", "tuple", "object", "namedtuple"])
        self.tags.add(kind)
        e = lambda: self.bounded(self.expr(1))  # noqa: E731
        if kind == "list":
            name = self.fresh("L")
            line = f"{name} = [{e()}, {e()}, 0.5]"
            self.lists.append(name)
        elif kind == "dict":
            name = self.fresh("D")
            line = f'{name} = {{"k": {e()}, "q": {e()}}}'
            self.dicts.append(name)
        elif kind == "tuple":
            name = self.fresh("T")
            line = f"{name} = ({e()}, {e()})"
            self.tuples.append(name)
        elif kind == "object":
            self.helpers.add("Box")
            name = self.fresh("B")
            line = f"{name} = Box({e()})"
            self.boxes.append(name)
        else:
            self.helpers.add("Pt")
            name = self.fresh("P")
            line = f"{name} = Pt({e()}, {e()})"
            self.pts.append(name)
        return [line]

    def container_update(self):
        opts = []
        free = [name for name in self.lists if name not in self.busy]
        if self.lists:
            opts += ["item", "aug"]
        if free:
            opts.append("append")
        if self.dicts:
            opts += ["dstore", "daug"]
        if self.boxes:
            opts += ["attr", "attraug"]
        kind, e = self.pick(opts), self.bounded(self.expr(1))
        self.mut_any = True
        if kind in ("item", "aug"):
            self.tags.update({"list", "inplace_item"})
            name = self.pick(self.lists)
            idx = "n" if "n" in self.ints and self.coin(0.3) else self.pick(["0", "1", "-1"])
            if idx == "n":
                self.tags.add("int_index")
            return [f"{name}[{idx}] = {e}" if kind == "item" else f"{name}[{idx}] += 0.5 * {e}"]
        if kind == "append":
            self.tags.add("list_append")
            return [f"{self.pick(free)}.append({e})"]
        if kind in ("dstore", "daug"):
            self.tags.add("dict_store")
            name = self.pick(self.dicts)
            return [f'{name}["k"] = {e}' if kind == "dstore" else f'{name}["q"] += 0.5 * {e}']
        self.tags.update({"object", "inplace_item"})
        name = self.pick(self.boxes)
        return [f"{name}.v = {e}" if kind == "attr" else f"{name}.v *= 0.5"]

    def new_array(self):
        self.tags.add("array")
        kind = self.pick(["view", "view", "alias", "fresh", "fresh", "view", "alias", "r_"])
        bases = sorted(self.arrays)
        if kind == "alias" and bases:
            self.tags.add("alias")
            src = self.pick(bases)
            name = self.fresh("z")
            self.arrays[name] = list(self.arrays[src])
            return [f"{name} = {src}"]
        if kind == "view" or kind == "alias":
            self.tags.add("view")
            src = self.pick([b for b in bases if self.arrays[b][0] >= 3] or ["x"])
            length, shared = self.arrays.get(src, [6, True])
            step, start = self.pick([("::2", (length + 1) // 2), ("1:", length - 1), ("1:4", min(3, length - 1))])
            name = self.fresh("y")
            self.arrays[name] = [start, shared]
            return [f"{name} = {src}[{step}]"]
        name = self.fresh("u")
        if kind == "r_":
            self.tags.add("np_r")
            line = f"{name} = np.r_[x * 0.5, {self.bounded(self.expr(1))}]"
            self.arrays[name] = [7, False]
            return [line]
        self.tags.add("numpy")
        self.arrays[name] = [6, False]
        return [f"{name} = {self.pick(['np.tanh(x)', 'x * 0.5', 'x.copy()', 'np.sin(x) + 0.1'])}"]

    def array_update(self):
        name = self.pick(sorted(self.arrays))
        length, shared = self.arrays[name]
        self.mut_any = True
        self.mut_arg |= shared
        e = self.bounded(self.expr(1))
        j = int(self.rng.integers(length))
        if "n" in self.ints and length >= 3 and self.coin(0.2):
            j = "n"
            self.tags.add("int_index")
        self.tags.add("view" if name.startswith("y") else "alias" if name.startswith("z") else "array")
        kind = self.pick(["item", "item", "aug", "scale", "self"])
        self.tags.add("inplace_item" if kind == "item" else "inplace_aug")
        return [{"item": f"{name}[{j}] = {e}", "aug": f"{name}[{j}] += 0.5 * {e}", "scale": f"{name} *= 0.5",
                 "self": f"{name} += 0.1 * np.sin({name})"}[kind]]

    # -- the program -----------------------------------------------------------------------------------------------
    def program(self, seed, index):
        r, fl, args = self.rng, self.flavour, []
        if fl == "array":
            self.tags.update({"array", "numpy"})
            args += [("a", "float", float(r.uniform(-1.2, 1.2))),
                     ("x", "array", r.uniform(-1.0, 1.0, 6)), ("b", "float", float(r.uniform(-1.2, 1.2)))]
            self.arrays["x"] = [6, True]
        elif fl == "complex":
            self.tags.add("complex")
            args += [(v, "complex", complex(*r.uniform(-0.8, 0.8, 2))) for v in "abc"]
        else:
            args += [(v, "float", float(r.uniform(-1.2, 1.2))) for v in "abc"]
        self.scalars, setup = [name for name, kind, _ in args if kind in ("float", "complex")], []
        if self.coin(0.3):
            self.ints["m"] = int(r.integers(1, 3))
            args.append(("m", "int_arith", self.ints["m"]))
            setup.append(self.tag("int_arith", f"s0 = {self.pick(self.scalars)} * m * 0.5"))
            self.scalars.append("s0")
        if self.coin(0.3):
            self.ints["n"] = int(r.integers(1, 3))
            args.append(("n", "int_index", self.ints["n"]))
            self.tags.add("int_index")
            if fl == "array":
                setup.append("sn = 0.3 * n + x[n] * n")
            else:
                setup += [f"Ln = [{self.scalars[0]}, {self.scalars[1]} * 0.5, 0.5]", "sn = Ln[n] * n"]
                self.lists.append("Ln")
            self.scalars.append("sn")
        if self.coin(0.25):
            self.ints["k"] = int(r.integers(0, 4))
            args.append(("k", "int_data", self.ints["k"]))
            self.tags.add("int_data")
            setup.append(f"for ik in range(k):\n    {self.scalars[0]} = 0.9 * {self.scalars[0]} + 0.1")
        setup.insert(0, f"f0 = {self.bounded(self.scalars[0])}")
        self.frozen.append("f0")
        body = setup + self.block(0, False, 4, 10) + [f"return {self.ret()}"]
        if np.random.default_rng([seed, index, 12]).random() < DECOY_SHARE:  # (a stream of its own: see idioms.py)
            self.helpers.add("Decoy")
            self.tags.add("decoy")
        params, helpers = ", ".join(name for name, _, _ in args), "".join(HELPERS[h] + "\n" for h in HELPERS if h in self.helpers)
        src = HEADER + "\n" + helpers + f"\ndef program({params}):\n" + \
            "".join("    " + line + "\n" for part in body for line in part.split("\n"))
        prog = Program(seed, index, fl, src, args, self.tags, self.mut_arg, self.mut_any)
        prog.second = fl == "scalar" and self.coin(0.2)
        prog.foreign = fl == "array" and self.coin(0.2)
        prog.tags.update(tag for tag, on in (("second_order", prog.second), ("foreign", prog.foreign)) if on)
        return prog


def generate(seed, index=0, flavour=None):
    """The `index`-th program of the run with this seed (the same program every time)."""
    gen = _Gen(seed, index, flavour)
    for start in (gen.start_axes, gen.start_idioms, gen.start_arrayops):  # (blocks drawn from streams of their own)
        start(seed, index)
    return gen.program(seed, index)
