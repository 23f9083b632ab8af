"""How zygotepy's transform time grows with function length: first call of generated 10-, 100- and 1 000-line functions.

    python benchmarks/transform_cost.py [--quick]    (run.py runs it too, after the workloads)

Two shapes of generated function, each written to a temporary module file and imported, so `inspect.getsource`
reads it like any user code:

- straight: N assignments of scalar `math` expressions, each reading one to three earlier lines;
- looping: a `for` loop whose body holds N lines: the same assignments, with an `if`/`else` block every ten lines.

For each, the cost is the first `zygotepy.gradient` call minus a steady call (the transform, compile and cache fill),
median over fresh modules. Linear growth shows as a flat time per line.
"""
import argparse
import importlib.util
import itertools
import math
import os
import statistics
import sys
import tempfile
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_HERE))
import zygotepy

__all__ = ["LENGTHS", "measure", "report"]

LENGTHS = (10, 100, 1000)
# Assignments to v{k}, reading earlier values; bounded functions (sin, cos, tanh) keep every value finite.
TEMPLATES = ("v{k} = math.sin(v{a}) * x + y",
             "v{k} = v{a} * 0.5 + math.cos(v{b})",
             "v{k} = math.tanh(v{a} * y) - v{b} * 0.25",
             "v{k} = v{a} * v{b} * 0.1 + v{c}")
_MODULES = itertools.count(1)


def _assignment(k):
    return TEMPLATES[k % len(TEMPLATES)].format(k=k, a=k - 1, b=max(k - 2, 0), c=max(k - 3, 0))


def straight_source(n):
    """`def f(x, y)` with n body lines (n - 1 assignments and the return)."""
    lines = ["def f(x, y):", "    v0 = x * y"]
    lines += [f"    {_assignment(k)}" for k in range(1, n - 1)]
    return "\n".join([*lines, f"    return v{n - 2}", ""])


def looping_source(n):
    """`def f(x, y, steps)`: a loop carrying v0 whose body has about n lines, an if/else block every ten lines."""
    lines = ["def f(x, y, steps):", "    v0 = x", "    for i in range(steps):"]
    k = 0
    while len(lines) < n:
        k += 1
        if k % 10 == 0:
            lines += [f"        if v{k - 1} > 0.0:", f"            v{k} = v{k - 1} * 0.5",
                      "        else:", f"            {_assignment(k)}"]
        else:
            lines.append(f"        {_assignment(k)}")
    lines.append(f"        v0 = math.sin(v{k}) * 0.5")
    return "\n".join([*lines, "    return v0", ""])


def load(source, directory):
    """Write `source` to a new module file in `directory`, import it, and return `(its f, body lines)`."""
    name = f"zygotepy_transform_cost_{next(_MODULES)}"
    path = os.path.join(directory, f"{name}.py")
    # a new function name as well as a new file: identical source would hit zygotepy's transform cache
    source = source.replace("def f(", f"def {name}(", 1)
    with open(path, "w") as fh:
        fh.write("import math\n\n\n" + source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name), source.count("\n") - 1


def _call(f, args, kwargs):
    t0 = time.perf_counter()
    zygotepy.gradient(f, *args, **kwargs)
    return time.perf_counter() - t0


def _check(f, args, kwargs, h=1e-6):
    """Assert zygotepy's gradient of a generated function matches central differences."""
    got = zygotepy.gradient(f, *args, **kwargs)
    for i, g in enumerate(got):
        up, down = list(args), list(args)
        up[i] += h
        down[i] -= h
        fd = (f(*up, **kwargs) - f(*down, **kwargs)) / (2 * h)
        if not math.isclose(g, fd, rel_tol=1e-5, abs_tol=1e-7):
            raise AssertionError(f"generated {f.__module__}: gradient {i} is {g}, finite differences give {fd}")


def measure(copies=3, quick=False):
    """`[(shape, lines, seconds of first call - steady call, steady call seconds)]`, medians over fresh modules.

    `quick`: one fresh module per length, and no 1 000-line looping function (~11 s on the dev machine).
    """
    copies = 1 if quick else copies
    shapes = (("straight", straight_source, (0.3, 0.7), {}), ("looping", looping_source, (0.3, 0.7), {"steps": 3}))
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        _check(*load(straight_source(10), directory)[:1], (0.3, 0.7), {})  # also pays one-time costs (lazy imports)
        for (shape, source, args, kwargs), n in itertools.product(shapes, LENGTHS):
            if quick and shape == "looping" and n == LENGTHS[-1]:
                continue
            extra, steady = [], []
            for copy in range(copies):
                f, lines = load(source(n), directory)
                first = _call(f, args, kwargs)
                if copy == 0:
                    _check(f, args, kwargs)
                s = min(_call(f, args, kwargs) for _ in range(3))
                extra.append(first - s)
                steady.append(s)
            rows.append((shape, lines, statistics.median(extra), statistics.median(steady)))
    return rows


def _ms(seconds):
    return f"{seconds * 1e3:,.0f} ms" if seconds >= 1 else f"{seconds * 1e3:.3g} ms"


def report(rows):
    """Markdown table lines: transform time and time per line, with per-line cost relative to the shortest."""
    out = ["| function | lines | first call - steady | per line | per line / shortest's | steady call |",
           "| --- | --- | --- | --- | --- | --- |"]
    base = {}
    for shape, lines, extra, steady in rows:
        per_line = extra / lines
        base.setdefault(shape, per_line)
        out.append(f"| {shape} | {lines} | {_ms(extra)} | {_ms(per_line)} | {per_line / base[shape]:.2f} | "
                   f"{_ms(steady)} |")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one fresh module per length, no 1 000-line loop")
    opts = parser.parse_args(argv)
    print("\n".join(report(measure(quick=opts.quick))))


if __name__ == "__main__":
    main()
