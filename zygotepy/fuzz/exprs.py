"""The expressions of the random programs (zygotepy/fuzz/generate.py): atoms of every kind in scope, bounded
unary and binary forms, branch tests and return values. Every value stays in a few units (tanh, sin, 0.5 factors)."""
import itertools

import numpy as np


class Expressions:
    """The generator's state (the names in scope, by kind) and its expressions."""

    def __init__(self, seed, index, flavour=None):
        self.rng = np.random.default_rng([seed, index, 7])
        r = self.rng
        self.flavour = flavour or str(r.choice(["scalar", "array", "complex"], p=[0.45, 0.45, 0.10]))
        self.tags, self.helpers, self.count = set(), set(), itertools.count(1)
        self.scalars, self.frozen, self.loopvars, self.intloop = [], [], [], []
        self.arrays = {}          # name -> [length, shares memory with the argument x]
        self.lists, self.dicts, self.tuples, self.boxes, self.pts, self.busy = [], [], [], [], [], set()
        self.mut_arg = self.mut_any = False
        self.ints = {}

    # -- small helpers ---------------------------------------------------------------------------------------------
    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def coin(self, p):
        return self.rng.random() < p

    def fresh(self, prefix):
        return f"{prefix}{next(self.count)}"

    def walk(self, v, what, kind):
        """`v in what` for a loop over a list or an array (a dict's values); now and then through a lazy iterator,
        `enumerate`, `zip` or a copy of the items (a body or a helper that updates `what` then meets Python's reading
        of it as it goes)."""
        if kind == "dict":
            return self.pick([f"{v} in {what}.values()", f"_, {v} in {what}.items()"])
        if not self.coin(0.3):
            return f"{v} in {what}"
        self.tags.add("lazy_iter")
        return self.pick([f"{v} in reversed({what})", f"{v} in iter({what})", f"{v} in list(reversed({what}))",
                          f"{v} in (0.5 * u for u in {what})", f"_, {v} in enumerate({what})",
                          f"({v}, _) in zip({what}, {what})"])

    def real(self, e):
        return f"({e}).real" if self.flavour == "complex" else e

    def bounded(self, e):
        if self.flavour == "complex":
            return f"({e}) / (1.0 + abs({e}))"
        self.tags.add("math")
        return self.pick(["math.tanh({})", "math.sin({})", "math.cos({})", "np.tanh({})"]).format(e)

    # -- expressions -----------------------------------------------------------------------------------------------
    def atom(self):
        r, opts = self.rng, []
        opts += [(4, lambda: self.pick(self.scalars))]
        if self.frozen:
            opts.append((1, lambda: self.pick(self.frozen)))
        if self.loopvars:
            opts.append((2, lambda: self.pick(self.loopvars)))
        if self.intloop:
            opts.append((1, lambda: f"0.1 * {self.pick(self.intloop)}"))
        opts.append((1, lambda: self.pick(["0.5", "1.3", "-0.7"])))
        if "m" in self.ints:
            opts.append((1, lambda: self.tag("int_arith", self.pick(["0.3 * m", "m * 0.2"]))))
        if "n" in self.ints:
            opts.append((1, lambda: self.tag("int_index", "0.2 * n")))
        if self.lists:
            opts.append((2, lambda: self.tag("list", self.pick([f"{self.pick(self.lists)}[{self.pick(['0', '1', '-1'])}]",
                                                                f"{self.pick(self.lists)}[n] * n" if "n" in self.ints
                                                                else f"{self.pick(self.lists)}[2]"]))))
        if self.dicts:
            opts.append((1, lambda: self.tag("dict", f'{self.pick(self.dicts)}["{self.pick(["k", "q"])}"]')))
        if self.tuples:
            opts.append((1, lambda: self.tag("tuple", f"{self.pick(self.tuples)}[{self.pick(['0', '1'])}]")))
        if self.boxes:
            opts.append((1, lambda: self.tag("object", f"{self.pick(self.boxes)}.{self.pick(['v', 's'])}")))
        if self.pts:
            opts.append((1, lambda: self.tag("namedtuple", f"{self.pick(self.pts)}.{self.pick(['u', 'w'])}")))
        if self.arrays:
            opts.append((3, self.array_read))
        weights = np.array([w for w, _ in opts], float)
        return opts[int(r.choice(len(opts), p=weights / weights.sum()))][1]()

    def tag(self, name, text):
        self.tags.add(name)
        return text

    def array_read(self):
        name = self.pick(sorted(self.arrays))
        length = self.arrays[name][0]
        self.tags.add("numpy")
        forms = [f"{name}[{int(self.rng.integers(length))}]", f"np.sum(np.tanh({name}))", f"np.mean(np.sin({name}))",
                 f"({name} @ {name}) * 0.1", f"np.prod(0.9 + 0.1 * np.tanh({name}))",
                 f"np.sum(np.cumsum({name}) * 0.1)", f"np.dot({name}, np.cos({name})) * 0.2"]
        if length >= 3 and "n" in self.ints:
            forms.append(self.tag("int_index", f"{name}[n] * n"))
        if self.coin(0.03):
            forms = [self.tag("np_r", f"np.sum(np.r_[{name}, 0.5] * 0.3)")]
        return self.pick(forms)

    def expr(self, depth=0):
        x = self.rng.random()
        if depth >= 2 or x < 0.35:
            return self.atom()
        if x < 0.65:
            e = self.expr(depth + 1)
            if self.flavour == "complex":
                self.tags.add("numpy")
                return self.pick(["np.sin({})", "np.exp(0.3 * {})", "({}).conjugate()", "(0.5 * {})",
                                  "np.cos(0.5 * {})"]).format(e)
            form = self.pick(["math.sin({})", "math.cos({})", "math.tanh({})", "(0.5 * {})", "-{}",
                              "math.exp(0.5 * math.tanh({}))", "math.sqrt(1.0 + ({0}) * ({0}))",
                              "math.log(1.5 + math.sin({}))", "np.tanh({})", "np.sin({})"])
            self.tags.add("numpy" if form.startswith("np") else "math")
            return form.format(e)
        self.tags.add("arith")
        a, b = self.expr(depth + 1), self.expr(depth + 1)
        div = "({}) / (2.0 + np.sin({}))" if self.flavour == "complex" else "({}) / (1.5 + math.tanh({}))"
        return self.pick(["{} + {}", "{} - {}", "{} * {}", "{} * 0.3 + {}", div]).format(a, b)

    def cond(self):
        a = self.real(self.atom())
        b = self.real(self.atom()) if self.coin(0.6) else self.pick(["0.3", "-0.2", "0.8"])
        return f"{a} > {b}"

    def ret(self):
        terms = [self.pick(self.scalars)] + [self.atom() for _ in range(int(self.rng.integers(1, 4)))]
        e = " + ".join(f"{self.pick(['0.5', '1.0', '-0.8', '0.3'])} * {t}" for t in terms)
        return f"({e}).real + 0.3 * ({e}).imag" if self.flavour == "complex" else e
