"""Per-call overhead of zygotepy's rules and of `zygotepy.gradient` against bare NumPy, on small and large arrays.

Two tables (run.py's "overhead" section):

- **Rules.** For a few primitives (`np.sin` on 10 and 10^6 elements, `np.tanh` on 10^5, `matmul` 64x64, `x.sum()` on
  10^6): the bare forward call; the hand-written vector-Jacobian product (forward, then the derivative times a cotangent
  `dy`); and the rule found by `zygotepy.adjoints.registry.find_rule`, called directly (`y, back = rule(x); back(dy)`),
  which is what generated code does for a built-in rule. The difference rule - hand-written is the rule's own cost per
  call (closures, type checks, `unbroadcast`); at 10 elements it is nearly all of it.
- **Whole gradients.** `zygotepy.gradient` of `sum(sin(x))` (10 and 10^6 elements) and of the elementwise chain
  `sum(tanh(sin(x) * x))` (10^5 and 10^6 elements) against a hand-written NumPy function computing the same value and
  gradient (forward + derivative: zygotepy's gradient runs the forward too). The chain rows are printed against the
  issue's target: at 10^5 elements or more, zygotepy's gradient of an elementwise chain costs <= 1.2x the hand-written
  gradient.

Every rule result and gradient is checked against the hand-written one before it is timed. Timing is run.py's: median
over batches, the thunks of one row interleaved so machine load hits them alike.
"""
import numpy as np

__all__ = ["CHAIN_TARGET", "measure", "report"]

CHAIN_TARGET = 1.2  # zygotepy / hand-written, elementwise chain on >= 10^5 elements


# --- hand-written vector-Jacobian products: forward, then the derivative times dy -------------------------------------


def sin_vjp(x, dy):
    y = np.sin(x)
    return y, (dy * np.cos(x),)


def tanh_vjp(x, dy):
    y = np.tanh(x)
    return y, (dy * (1.0 - y * y),)


def matmul_vjp(a, b, dy):
    y = a @ b
    return y, (dy @ b.T, a.T @ dy)


def sum_vjp(x, dy):
    y = x.sum()
    return y, (np.broadcast_to(dy, x.shape),)  # a read-only view, as zygotepy's rule returns


# --- whole functions: the math, and a hand-written value and gradient ------------------------------------------------


def sum_sin(x):
    return np.sum(np.sin(x))


def sum_sin_grad(x):
    return np.sum(np.sin(x)), np.cos(x)


def chain(x):
    return np.sum(np.tanh(np.sin(x) * x))


def chain_grad(x):
    s = np.sin(x)
    t = np.tanh(s * x)
    return np.sum(t), (1.0 - t * t) * (np.cos(x) * x + s)


def _cases():
    """`(label, size label, bare forward, hand-written vjp, target, args, dy)` for the rule table."""
    rng = np.random.default_rng(4)
    x10, x5, x6 = (rng.standard_normal(n) for n in (10, 100_000, 1_000_000))
    a, b = rng.standard_normal((64, 64)), rng.standard_normal((64, 64))
    return [
        ("np.sin", "10", np.sin, sin_vjp, np.sin, (x10,), rng.standard_normal(10)),
        ("np.sin", "10^6", np.sin, sin_vjp, np.sin, (x6,), rng.standard_normal(x6.size)),
        ("np.tanh", "10^5", np.tanh, tanh_vjp, np.tanh, (x5,), rng.standard_normal(x5.size)),
        ("a @ b", "64x64 @ 64x64", np.matmul, matmul_vjp, np.matmul, (a, b), rng.standard_normal((64, 64))),
        ("x.sum()", "10^6", np.ndarray.sum, sum_vjp, np.ndarray.sum, (x6,), 1.5),
    ]


def _functions():
    """`(label, size label, f, hand-written value and gradient, x)` for the whole-gradient table."""
    rng = np.random.default_rng(5)
    return [("sum(sin(x))", "10", sum_sin, sum_sin_grad, rng.standard_normal(10)),
            ("sum(sin(x))", "10^6", sum_sin, sum_sin_grad, rng.standard_normal(1_000_000)),
            ("sum(tanh(sin(x) * x))", "10^5", chain, chain_grad, rng.standard_normal(100_000)),
            ("sum(tanh(sin(x) * x))", "10^6", chain, chain_grad, rng.standard_normal(1_000_000))]


def _close(got, want):
    return len(got) == len(want) and all(
        g is not None and np.shape(g) == np.shape(h) and np.allclose(g, h, rtol=1e-10, atol=1e-12)
        for g, h in zip(got, want))


def _medians(timer, thunks):
    """`{name: median seconds per call}`, or raise the first timing error."""
    out = {}
    for name, (number, samples) in timer(thunks).items():
        if isinstance(samples, Exception):
            raise samples
        out[name] = float(np.median(samples))
    return out


def measure(timer):
    """The two tables' rows, each a dict; `timer(thunks)` is run.py's `time_interleaved` with its mode bound.

    A row whose rule or gradient fails or disagrees with the hand-written one says so in `status` and is not timed.
    """
    import zygotepy
    from zygotepy.adjoints.registry import find_rule

    rules = []
    for label, size, forward, vjp, target, args, dy in _cases():
        row = {"op": label, "size": size, "status": "ok"}
        rule = find_rule(target)
        try:
            if rule is None:
                raise LookupError(f"no rule registered for {label}")
            y, back = rule(*args)
            want_y, want = vjp(*args, dy)
            if not (np.allclose(y, want_y) and _close(back(dy), want)):
                row["status"] = "WRONG: rule differs from the hand-written vjp"
        except Exception as e:  # noqa: BLE001 - reported in the row, the run goes on
            row["status"] = f"ERROR: {type(e).__name__}: {e}"
        if row["status"] == "ok":
            def through_rule(rule=rule, args=args, dy=dy):
                _, back = rule(*args)
                return back(dy)
            row.update(_medians(timer, {"forward": lambda f=forward, a=args: f(*a),
                                        "hand": lambda v=vjp, a=args, d=dy: v(*a, d),
                                        "rule": through_rule}))
        rules.append(row)

    grads = []
    for label, size_label, f, hand, x in _functions():
        row = {"function": label, "size": size_label, "elements": x.size, "status": "ok"}
        try:
            if not _close(zygotepy.gradient(f, x), [hand(x)[1]]):
                row["status"] = "WRONG: gradient differs from the hand-written one"
        except Exception as e:  # noqa: BLE001
            row["status"] = f"ERROR: {type(e).__name__}: {e}"
        if row["status"] == "ok":
            row.update(_medians(timer, {"primal": lambda f=f, x=x: f(x), "hand": lambda h=hand, x=x: h(x),
                                        "zygotepy": lambda f=f, x=x: zygotepy.gradient(f, x)}))
        grads.append(row)
    return rules, grads


def report(rules, grads, fmt_time, fmt_ratio):
    """Markdown lines of the two tables (times formatted by report.py's helpers)."""
    lines = [("| op | size | bare forward | hand-written vjp | rule forward + back | rule / hand-written "
              "| rule - hand-written |"),
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rules:
        if r["status"] != "ok":
            lines.append(f"| {r['op']} | {r['size']} | {r['status']} |  |  |  |  |")
            continue
        lines.append(f"| `{r['op']}` | {r['size']} | {fmt_time(r['forward'])} | {fmt_time(r['hand'])} | "
                     f"{fmt_time(r['rule'])} | {fmt_ratio(r['rule'] / r['hand'])} | "
                     f"{fmt_time(r['rule'] - r['hand'])} |")
    lines += ["",
              ("| function | elements | primal | hand-written value + gradient | zygotepy.gradient "
               "| / hand-written | zygotepy - hand-written | target |"),
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in grads:
        if r["status"] != "ok":
            lines.append(f"| {r['function']} | {r['size']} | {r['status']} |  |  |  |  |  |")
            continue
        q = r["zygotepy"] / r["hand"]
        target = ""
        if r["function"].startswith("sum(tanh") and r["elements"] >= 100_000:
            target = f"≤ {CHAIN_TARGET}×: {'met' if q <= CHAIN_TARGET else 'missed'}"
        lines.append(f"| `{r['function']}` | {r['size']} | {fmt_time(r['primal'])} | {fmt_time(r['hand'])} | "
                     f"{fmt_time(r['zygotepy'])} | {fmt_ratio(q)} | {fmt_time(r['zygotepy'] - r['hand'])} "
                     f"| {target} |")
    return lines
