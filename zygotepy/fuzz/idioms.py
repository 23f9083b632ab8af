"""Statements of the random programs in the style of everyday research code: an array kept under two names in a dict,
a list or an object and updated through one (`alias_slots`), a list beside an array in an operator or a store
(`seq_operand`), a method that updates its object with default and keyword arguments (`method_update`), a class with
operators (`operator_class`), comprehensions, `min`/`max`/`sorted`/`abs` (`builtin_reduce`), calls with keywords,
defaults, `*args` and `**kwargs` (`keyword_call`), a helper returning a pair (`tuple_return`) and a loop over
`enumerate(zip(...))` (`zip_enumerate`). Each block folds what it computes into one of the program's scalars.

They draw from a random stream of their own (`[seed, index, 9]`), and only the scalar and array flavours take them,
so a program that has none is the one the generator made before they existed.
"""
import numpy as np

SHARE = 0.07  # of the statements of scalar and array programs
TRY_SHARE = 0.3  # of the blocks: wrapped in try/except (ast_adjoint/lower/tries.py)
DECOY_SHARE = 0.25  # of the programs: with the class `Decoy` beside them, never made

HELPERS = {
    # never made: its methods' names (those the other helpers' calls use) and its `__call__` calling one make the lowering
    # take those calls, and calls of callables, as ones that may update their objects (mutation/calls.py `valuecall`)
    "Decoy": "class Decoy:\n    def __call__(self, v):\n        return self.apply(v)\n\n"
             "    def apply(self, v):\n        self.seen = v\n        return v\n\n"
             "    def dot(self, o):\n        self.seen = o\n        return 0.0\n\n"
             "    def add(self, v, w=0.5):\n        self.items += [v]\n        return self\n",
    "Acc": "class Acc:\n    def __init__(self, v):\n        self.total = v\n\n"
           "    def add(self, v, w=0.5):\n        self.total = self.total * w + v\n        return self\n",
    "V2": "class V2:\n    def __init__(self, p, q):\n        self.p, self.q = p, q\n\n"
          "    def __add__(self, o):\n        return V2(self.p + o.p, self.q + o.q)\n\n"
          "    def __mul__(self, k):\n        return V2(self.p * k, self.q * k)\n\n    __rmul__ = __mul__\n\n"
          "    def dot(self, o):\n        return self.p * o.p + self.q * o.q\n",
    "Two": "class Two:\n    def __init__(self, w):\n        self.w = w\n        self.v = w\n",
    "h_kw": "def h_kw(u, scale=0.5, *, shift=0.1):\n    return math.tanh(u) * scale + shift\n",
    "h_star": 'def h_star(*vs, **kw):\n    return math.tanh(sum(vs)) * kw.get("k", 0.5) + kw["j"]\n',
    "h_pair": "def h_pair(u, w):\n    return u * w, u - w\n",
}

# an array under two places, updated through the first, read through the second: (setup, first, second)
_ALIASES = [
    ('{d} = {{"w": {y}, "v": {y}}}', '{d}["w"]', '{d}["v"]'),
    ('{d} = {{"w": {y}, "v": {y}[1:]}}', '{d}["w"]', '{d}["v"]'),
    ('{d} = {{"w": {y}, "in": [{y}]}}', '{d}["w"]', '{d}["in"][0]'),
    ('{d} = [{y}, {{"v": {y}}}]', "{d}[0]", '{d}[1]["v"]'),
    ("{d} = [{y}, {y}[::2]]", "{d}[0]", "{d}[1]"),
    ("{d} = Two({y})", "{d}.w", "{d}.v"),
    ("{d} = Two({y})\n{d}.inner = Two({d}.w)", "{d}.w", "{d}.inner.v"),
    ("{d} = Two({y})\n{q} = Two({d}.w)", "{d}.w", "{q}.v"),
    ('{d} = [{{"w": {y}}}, {{"w": {y}}}]', '{d}[0]["w"]', '{d}[1]["w"]'),  # (inside two containers the function built)
    ("{d} = [[{y}], [{y}[1:]]]", "{d}[0][0]", "{d}[1][0]"),
    ('{d} = {{"a": Two({y}), "b": Two({y})}}', '{d}["a"].w', '{d}["b"].v'),
    ("{d} = Two(Two({y}))\n{q} = [{d}, Two({y})]", "{q}[0].w.w", "{q}[1].v"),
]
_UPDATES = ["{place} *= {e}", "{place} += 0.3 * np.sin({e})", "{place}[0] = {e}", "{place} -= 0.2 * {place}",
            "{place}[1:3] = [{e}, 0.5]"]


class IdiomBlocks:
    """A mixin of the generator (generate._Gen): `idiom_block()` returns the lines of one block."""

    def start_idioms(self, seed, index):
        self.idiom_rng = np.random.default_rng([seed, index, 9])
        self.try_rng = np.random.default_rng([seed, index, 11])  # (its own: programs without a try stay as they were)

    def wants_idiom_block(self):
        return self.flavour != "complex" and self.idiom_rng.random() < SHARE

    def _one(self, seq):
        return seq[int(self.idiom_rng.integers(len(seq)))]

    def idiom_block(self):
        kinds = ["method_update", "operator_class", "comprehension", "builtin_reduce", "keyword_call",
                 "tuple_return", "zip_enumerate"]
        if any(length >= 3 for length, _ in self.arrays.values()):
            kinds += ["alias_slots", "alias_slots", "seq_operand", "seq_operand"]
        kind = self._one(kinds)
        self.tags.add(kind)
        t, e = self._one(self.scalars), lambda: self.bounded(self.expr(1))
        lines = getattr(self, "_" + kind)(t, e)
        if self.try_rng.random() < TRY_SHARE:  # the block as a try body that raises on some inputs
            self.tags.add("try")
            body = [line for s in lines for line in s.split("\n")]
            lines = ["try:", f"    if {self.cond()}:", '        raise ValueError("skip")', *("    " + s for s in body),
                     "except ValueError:", f"    {t} = 0.5 * {t} + 0.1"]
        return lines

    def _alias_slots(self, t, e):
        self.helpers.add("Two")
        self.tags.update({"numpy", "array"})
        self.mut_any = True
        name = self._one(sorted(n for n, (length, _) in self.arrays.items() if length >= 3))
        y, d, q = self.fresh("hy"), self.fresh("hd"), self.fresh("hq")
        if name not in self.busy and self.idiom_rng.random() < 0.25:  # the array itself: an argument's update is
            lines = [f"{y} = {name}"]  # the caller's too
            self.mut_arg |= self.arrays[name][1]
        else:
            lines = [f"{y} = {name} * 1.0"]
        setup, first, second = self._one(_ALIASES)
        lines += setup.format(d=d, y=y, q=q).split("\n")
        lines.append(self._one(_UPDATES).format(place=first.format(d=d, q=q), e=e()))
        return lines + [f"{t} = 0.5 * {t} + 0.3 * np.sum(np.tanh({second.format(d=d, q=q)}))"]

    def _seq_operand(self, t, e):
        self.tags.update({"numpy", "array"})
        name = self._one(sorted(n for n, (length, _) in self.arrays.items() if length >= 3))
        forms = [f"{t} = 0.5 * {t} + 0.3 * np.sum(np.tanh({name}[:2] * [{e()}, {e()}]))",
                 f"{t} = 0.5 * {t} + 0.3 * np.sum(np.sin(({e()}, 0.5) + {name}[:2]))",
                 f"{t} = 0.5 * {t} + 0.2 * math.tanh({name}[:2] @ [{e()}, {e()}])",
                 f"{t} = 0.5 * {t} + 0.3 * np.sum(np.tanh([{e()}, 0.5] - {name}[1:3]))"]
        if self.idiom_rng.random() < 0.4:
            self.mut_any = True
            z = self.fresh("hz")
            store = self._one([f"{z}[1:3] = [{e()}, {e()}]", f"{z} *= [{e()}, 0.5, {e()}]", f"{z}[[0, 2]] = ({e()}, 0.5)"])
            return [f"{z} = {name}[:3] * 1.0", store, f"{t} = 0.5 * {t} + 0.3 * np.sum(np.tanh({z}))"]
        return [self._one(forms)]

    def _method_update(self, t, e):
        self.helpers.add("Acc")
        a = self.fresh("ha")
        return [f"{a} = Acc({e()})", f"{a}.add({e()})", f"{a}.add({e()}, w=0.3)", f"{a}.add({e()}).add(0.5)",
                f"{t} = 0.5 * {t} + 0.3 * math.tanh({a}.total)"]

    def _operator_class(self, t, e):
        self.helpers.add("V2")
        v, w = self.fresh("hv"), self.fresh("hw")
        return [f"{v} = V2({e()}, {e()}) + V2({e()}, 0.5) * {e()}", f"{w} = 0.5 * {v}",
                f"{t} = 0.5 * {t} + 0.3 * math.tanh({v}.dot({w}) + {w}.q)"]

    def _comprehension(self, t, e):
        c, dc = self.fresh("hc"), self.fresh("hk")
        return [f"{c} = [math.sin(u) * {e()} for u in ({e()}, {e()}, 0.5) if u > -0.4]",
                f"{dc} = {{k: u * 0.5 for k, u in enumerate({c})}}",
                f"{t} = 0.5 * {t} + 0.3 * math.tanh(sum({c}) + sum(u * u for u in {c}) + sum({dc}.values()))"]

    def _builtin_reduce(self, t, e):
        return [f"{t} = 0.5 * {t} + 0.3 * math.tanh(max({e()}, {e()}) + min([{e()}, {e()}, 0.1]) + "
                f"sorted([{e()}, {e()}, {e()}])[1] + 0.5 * abs({e()}))"]

    def _keyword_call(self, t, e):
        if self.idiom_rng.random() < 0.5:
            self.helpers.add("h_kw")
            return [f"{t} = 0.5 * {t} + 0.3 * (h_kw({e()}) + h_kw({e()}, {e()}) + h_kw({e()}, shift={e()}) + "
                    f"h_kw(u={e()}, scale={e()}, shift=0.2))"]
        self.helpers.add("h_star")
        return [f'{t} = 0.5 * {t} + 0.3 * (h_star({e()}, {e()}, k={e()}, j={e()}) + '
                f'h_star(*[{e()}, 0.5], **{{"k": {e()}, "j": 0.5}}))']

    def _tuple_return(self, t, e):
        self.helpers.add("h_pair")
        p, q = self.fresh("hp"), self.fresh("hq")
        return [f"{p}, {q} = h_pair({e()}, {e()})", f"{t} = 0.5 * {t} + 0.3 * math.tanh({p} + {q} * {p})"]

    def _zip_enumerate(self, t, e):
        i, u, w = self.fresh("hi"), self.fresh("hu"), self.fresh("hw")
        return [f"for {i}, ({u}, {w}) in enumerate(zip([{e()}, {e()}, 0.5], ({e()}, {e()}))):",
                f"    {t} = {t} * 0.9 + 0.1 * ({i} + 1) * {u} * {w}"]
